"""Benchmark: the O(n log n) AUC risk kernel against a naive pairwise loop.

Same particles, same machine, one run: evaluations per second of
``pac_particles.problem.auc.linear_auc_risk`` and of a numba O(n_pos n_neg) double loop
(parallel over particles too), on Pima (n = 768) and Eeg (n = 14980); then the
share of a full waste-free Pima SMC run spent inside the likelihood.

    python scripts/bench_kernel.py [--particles 200] [--repeats 3]

References
----------
[DC22] Dau & Chopin (2022), Waste-free sequential Monte Carlo.
"""
import argparse
import time

import numba
import numpy as np

from pac_particles.problem.auc import linear_auc_risk
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
    args = parser.parse_args()
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
