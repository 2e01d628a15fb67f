"""Benchmark: the default ``run_smc`` at scale, before and after adaptive
importance sampling (the Gaussian start refitted to its weighted draws).

On ``scripts/bench_accelerator.py``'s data (``bench_scale.make_data(n,
1)``, d = 10, ``lam = n``) and the numba risk: the default run's start,
steps, risk evaluations, seconds, Pareto ``k`` and ``log Z`` (se), and
with ``--reference`` a reference ``log Z``: importance sampling from the
Gaussian fitted to the run's weighted draws (``refined_proposal``, two
rounds of ``--reference-draws`` draws; the last round's estimate).
Run it under another checkout (``PYTHONPATH=...``) for the "before" row.

    python scripts/bench_adaptive_importance.py --n 1e5,3e5 --reference
"""
import argparse
import time

import numpy as np

from bench_scale import make_data
from pac_particles.smc.models import AUCGibbsModel
from pac_particles.smc.posterior import run_smc


def reference(model, post, draws, seed):
    """Two rounds of importance sampling, each from the Gaussian fitted to
    the previous draws (the run's first): the last round's estimate."""
    from pac_particles.smc.adaptive_importance import refined_proposal
    from pac_particles.smc.importance_evidence import importance_log_z
    est = post.importance
    for r in range(2):
        mean, cov, _ = refined_proposal(est, 10 * model.d)
        est = importance_log_z(model, mean, cov, draws, seed=seed + 100 + r)
    return est


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", default="1e5")
    parser.add_argument("--seeds", default="0")
    parser.add_argument("--reference", action="store_true")
    parser.add_argument("--reference-draws", type=int, default=4000)
    args = parser.parse_args()
    print("| n | seed | start | steps | rounds | risk evaluations | s | "
          "Pareto k | log Z (se) | reference log Z (se, k) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for n in [int(float(v)) for v in args.n.split(",")]:
        X, y = make_data(n, 1)
        model = AUCGibbsModel(X, y, lam=float(n))
        model.loglik(np.zeros((2, X.shape[1])))          # compile
        for seed in [int(s) for s in args.seeds.split(",")]:
            begin = time.perf_counter()
            post = run_smc(model, seed=seed)
            seconds = time.perf_counter() - begin
            imp = post.importance
            rounds = getattr(imp, "rounds", 0) if imp is not None else "—"
            k = f"{imp.pareto_k:.2f}" if imp is not None else "—"
            ref = ""
            if args.reference and imp is not None and post.start == "importance":
                est = reference(model, post, args.reference_draws, seed)
                ref = (f"{est.log_z:.3f} ({est.log_z_se:.3f}, "
                       f"{est.pareto_k:.2f})")
            print(f"| {n:,} | {seed} | {post.start} | {post.n_steps} | "
                  f"{rounds} | {post.n_risk_evaluations:,} | {seconds:.1f} | "
                  f"{k} | {post.log_z:.3f} ({post.log_z_se:.3f}) | {ref} |",
                  flush=True)


if __name__ == "__main__":
    main()
