"""Benchmark: the O(n log n) AUC risk kernel against a naive pairwise loop.

Same particles, same machine, one run: evaluations per second of
``pac_particles.problem.auc.linear_auc_risk`` and of a numba O(n_pos n_neg) double loop
(parallel over particles too), on Pima (n = 768) and Eeg (n = 14980); then the
share of a full waste-free Pima SMC run spent inside the likelihood.
With ``--scale``, instead: the kernel's two sorting paths at n = 1e3-1e6
(balanced and 1% positives, 1/8/64 particles, 1 and 2 threads), in ns per
row and particle, against plain numpy sort + searchsorted (docs/benchmarks.md,
"The AUC risk kernel").

    python scripts/bench_kernel.py [--particles 200] [--repeats 3]
    python scripts/bench_kernel.py --scale [--threads 1,2] [--max-entries 8e6]

References
----------
[DC22] Dau & Chopin (2022), Waste-free sequential Monte Carlo.
"""
import argparse
import contextlib
import time

import numba
import numpy as np

from pac_particles.problem import auc
from pac_particles.problem.auc import linear_auc_risk, merge_count, split_risk
from pac_particles.problem.data import validate_xy
from pac_particles.problem.datasets import load_dataset
from pac_particles.smc.models import AUCGibbsModel
from pac_particles.smc.posterior import run_smc


@numba.njit(parallel=True, cache=True)
def naive_pairwise_risk(theta, X_pos, X_neg):
    """The definition, pair by pair: O(n_pos n_neg) per particle."""
    out = np.empty(theta.shape[0])
    for r in numba.prange(theta.shape[0]):
        s_pos = X_pos @ theta[r]
        s_neg = X_neg @ theta[r]
        bad = 0.0
        for i in range(s_pos.shape[0]):
            for j in range(s_neg.shape[0]):
                if s_pos[i] < s_neg[j]:
                    bad += 1.0
                elif s_pos[i] == s_neg[j]:
                    bad += 0.5
        out[r] = bad / (s_pos.shape[0] * s_neg.shape[0])
    return out


@numba.njit(parallel=True, cache=True)
def numba_sort_risk(scores_pos, scores_neg):
    """The kernel before numpy sorted for it: numba sorts each row (prange
    over particles), then :func:`merge_count`."""
    out = np.empty(scores_pos.shape[0])
    for r in numba.prange(scores_pos.shape[0]):
        twice_bad, _ = merge_count(np.sort(scores_pos[r]), np.sort(scores_neg[r]))
        out[r] = 0.5 * twice_bad / (scores_pos.shape[1] * scores_neg.shape[1])
    return out


def numpy_searchsorted_risk(scores_pos, scores_neg):
    """Plain numpy per particle: sort, searchsorted left/right (ties 1/2)."""
    n_pos, n_neg = scores_pos.shape[1], scores_neg.shape[1]
    out = np.empty(scores_pos.shape[0])
    for r in range(scores_pos.shape[0]):
        p, q = np.sort(scores_pos[r]), np.sort(scores_neg[r])
        twice_bad = (2 * n_pos * n_neg - int(np.searchsorted(q, p, "left").sum())
                     - int(np.searchsorted(q, p, "right").sum()))
        out[r] = 0.5 * twice_bad / (n_pos * n_neg)
    return out


@contextlib.contextmanager
def crossover(entries):
    """Force the kernel's path: 0 numpy's sort, a huge number numba's."""
    before, auc.NUMPY_SORT_MIN_ENTRIES = auc.NUMPY_SORT_MIN_ENTRIES, entries
    try:
        yield
    finally:
        auc.NUMPY_SORT_MIN_ENTRIES = before


def forced_path(entries):
    def risk(scores_pos, scores_neg):
        with crossover(entries):
            return split_risk(scores_pos, scores_neg)
    return risk


def scale_table(threads_list, max_entries, seed=0):
    """ns per row and particle of each method on fresh scores each call
    (the same data twice lets the branch predictor learn a small sort)."""
    methods = {"numba sort": numba_sort_risk, "np+ss": numpy_searchsorted_risk,
               "np sort": forced_path(0), "default": split_risk}
    rng = np.random.default_rng(seed)
    tiny = (rng.normal(size=(2, 300)), rng.normal(size=(2, 200)))
    for f in methods.values():
        f(*tiny)  # compile / load cache
    for threads in threads_list:
        numba.set_num_threads(threads)
        print(f"\n{threads} thread(s), ns per row and particle; ratio = numba "
              "sort / default")
        print(f"{'n':>8s} {'pos':>5s} {'N':>3s} "
              + " ".join(f"{m:>10s}" for m in methods) + f" {'ratio':>6s}")
        for n in (1_000, 10_000, 100_000, 1_000_000):
            for frac in (0.5, 0.01):
                for N in (1, 8, 64):
                    if N * n > max_entries:
                        continue
                    n_pos = max(1, int(frac * n))
                    calls = max(2, min(10, int(2e7 // (N * n))))
                    data = [rng.normal(size=(N, n)) for _ in range(calls)]
                    data = [(np.ascontiguousarray(S[:, :n_pos]),
                             np.ascontiguousarray(S[:, n_pos:])) for S in data]
                    best = dict.fromkeys(methods, np.inf)
                    for sp, sn in data:
                        results = []
                        for name, f in methods.items():
                            start = time.perf_counter()
                            results.append(f(sp, sn))
                            best[name] = min(best[name], time.perf_counter() - start)
                        assert all(np.array_equal(results[0], r) for r in results), \
                            "kernels disagree"
                    ns = {k: 1e9 * v / (N * n) for k, v in best.items()}
                    print(f"{n:8d} {frac:5.2f} {N:3d} "
                          + " ".join(f"{ns[m]:10.1f}" for m in methods)
                          + f" {ns['numba sort'] / ns['default']:5.1f}x", flush=True)


def evaluations_per_second(func, theta, data, repeats):
    func(theta[:2], data.X_pos, data.X_neg)  # compile / load cache
    best = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        risks = func(theta, data.X_pos, data.X_neg)
        best = min(best, time.perf_counter() - start)
    return theta.shape[0] / best, risks


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--particles", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--scale", action="store_true",
                        help="the kernel's paths at n = 1e3-1e6 instead")
    parser.add_argument("--threads", default="1,2",
                        help="numba thread counts of --scale")
    parser.add_argument("--max-entries", type=float, default=8e6,
                        help="largest particles x n of --scale")
    args = parser.parse_args()
    if args.scale:
        scale_table([int(t) for t in args.threads.split(",")], args.max_entries)
        return
    rng = np.random.default_rng(0)
    print(f"{'dataset':8s} {'n':>6s} {'d':>3s} {'kernel eval/s':>14s} "
          f"{'naive eval/s':>13s} {'ratio':>7s}")
    for name in ("pima", "eeg"):
        X, y, _ = load_dataset(name)
        data = validate_xy(X, y, standardize=True)
        theta = rng.normal(size=(args.particles, data.d))
        fast, r_fast = evaluations_per_second(linear_auc_risk, theta, data, args.repeats)
        slow, r_slow = evaluations_per_second(naive_pairwise_risk, theta, data,
                                              args.repeats)
        assert np.allclose(r_fast, r_slow, atol=1e-12), "kernels disagree"
        print(f"{name:8s} {data.n:6d} {data.d:3d} {fast:14.0f} {slow:13.1f} "
              f"{fast / slow:6.1f}x")

    X, y, _ = load_dataset("pima")
    run_smc(AUCGibbsModel(X, y, lam=len(y)), n_particles=20, len_chain=3, seed=0)
    model = AUCGibbsModel(X, y, lam=len(y))
    post = run_smc(model, n_particles=200, len_chain=10, seed=0)
    print(f"Pima waste-free SMC (200 x 10 particles, lam = n): {post.wall_time:.2f} s, "
          f"{post.n_steps} tempering steps, "
          f"{100 * model.loglik_seconds / post.wall_time:.0f}% of the wall time "
          "inside the likelihood")


if __name__ == "__main__":
    main()
