"""Which threads a small kernel called many times in a row runs on: the
version, serial or parallel, that its own measured times say is the
faster (:class:`BatchThreads`).

Adam's minibatch of 10,000 pairs is faster on two threads than on one
when the machine is free, and far slower when other processes hold the
cores (waking the thread pool then waits a scheduler's time slice; the
figures in docs/benchmarks.md, "By size: the default fit on synthetic
logistic data"): no fixed rule is right on both, so the choice follows the
times of the calls themselves. The two versions must compute the same
numbers (:func:`pac_particles.problem.probit_kernels.pair_batch_sums` sums
the same chunks in the same order either way), so the choice never changes
a result.
"""

import math
import threading
import time

__all__ = ["BatchThreads", "BATCH_THREADS"]


class BatchThreads:
    """Which version of a kernel runs, serial or parallel (computing the
    same sums: the minibatch kernel's
    :data:`~pac_particles.problem.probit_kernels.BATCH_CHUNKS` chunks
    either way): the one whose last
    measured time per pair was the smaller. Each version runs twice first
    (the first call of each pays the thread pool's start); after that the
    other one runs once every :data:`PROBE_CALLS` calls, times the ratio of
    its time to the chosen one's (a version twenty times slower is tried
    twenty times more rarely), to follow the load of the machine. The
    parallel version runs from the main thread only (folds run in threads
    of their own, each on its own cores). ``clock``: the timer (seconds)."""

    #: calls between two tries of the version not chosen, at equal times
    PROBE_CALLS = 50

    def __init__(self, clock=time.perf_counter):
        self.clock = clock
        self.per_pair = [math.inf, math.inf]      # serial, parallel
        self.calls = 0
        self.since_probe = 0

    def run(self, serial, in_parallel, n_pairs, *args):
        """Run one of the two compiled versions on ``args``."""
        if threading.current_thread() is not threading.main_thread():
            return serial(*args)
        self.calls += 1
        if self.calls <= 4:
            pick = self.calls % 2                 # parallel, serial, ...
        else:
            best = int(self.per_pair[1] < self.per_pair[0])
            ratio = self.per_pair[1 - best] / max(self.per_pair[best],
                                                  1e-15)
            self.since_probe += 1
            pick = best
            if self.since_probe >= self.PROBE_CALLS * min(ratio, 1e3):
                pick, self.since_probe = 1 - best, 0
        start = self.clock()
        (in_parallel if pick else serial)(*args)
        if self.calls > 2:
            self.per_pair[pick] = ((self.clock() - start)
                                   / max(n_pairs, 1))


#: the process's choice of threads for the minibatch kernel
BATCH_THREADS = BatchThreads()
