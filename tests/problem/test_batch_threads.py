"""The choice of threads by measured times (pac_particles.problem.batch_threads),
on kernels whose cost a fake clock counts."""

from pac_particles.problem.batch_threads import BatchThreads


def _runs(serial_cost, parallel_cost, calls):
    """Which version ran at each of ``calls`` calls."""
    clock = [0.0]
    ran = []

    def version(cost, name):
        def kernel():
            clock[0] += cost
            ran.append(name)
        return kernel
    chooser = BatchThreads(clock=lambda: clock[0])
    for _ in range(calls):
        chooser.run(version(serial_cost, "serial"),
                    version(parallel_cost, "parallel"), 1000)
    return ran


def test_the_faster_version_runs_and_the_other_is_tried_at_its_rate():
    # loaded: two threads twenty times slower, tried every 50 x 20 calls
    ran = _runs(1.0, 20.0, 5004)
    assert ran[:4] == ["parallel", "serial", "parallel", "serial"]
    tried = [k + 1 for k, name in enumerate(ran) if name == "parallel"]
    assert tried == [1, 3, 1004, 2004, 3004, 4004, 5004]
    # free: two threads twice as fast, one thread tried every 100 calls
    ran = _runs(1.0, 0.5, 1004)
    assert ran.count("serial") == 2 + 10
    assert ran[-1] == "serial" and ran[-2] == "parallel"
