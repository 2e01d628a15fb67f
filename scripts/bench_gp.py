"""GP scores against linear scores and logistic regression on one split.

Full waste-free runs of GPAUCModel (squared-exponential kernel, lengthscale
sqrt(d) on standardised inputs) and AUCGibbsModel with lam = n_train, on
Pima (576 training points) and Sonar; prints wall time, tempering steps and
test AUCs, and writes a CSV.

    python scripts/bench_gp.py [--datasets pima sonar] [--n-particles 200]

With ``--scale``: ``PACBayesAUC(kernel="rbf", lam=n)`` (the reduced-rank
prior above 1,000 rows) against HistGradientBoosting and
LogisticRegressionCV on the smooth nonlinear data at each ``--sizes``,
side by side in one run (lab.study.gp_scale), the exact GP beside them up
to ``--exact-max`` rows (``--threads 1``: every fit on one thread); then
on ``--linear-datasets`` against linear scores at the same lam.

    python scripts/bench_gp.py --scale --sizes 1000 3000 10000 100000 \
        --linear-datasets pima breast_cancer students_dropout dna \
        --data-dir /work/shared/datasets

References
----------
[RACL14] Ridgway, Alquier, Chopin & Liang (2014), PAC-Bayesian AUC
classification and scoring (GP scores: their section 5).
"""
import argparse

from sklearn.model_selection import train_test_split

from pac_particles.problem.auc import auc_risk
from pac_particles.sklearn.baselines import logistic_scores
from pac_particles.problem.datasets import load_dataset
from pac_particles.smc.models import AUCGibbsModel, GPAUCModel
from pac_particles.smc.posterior import run_smc
from pac_particles.apps.tables import write_rows
import os
import sys
# lab/ sits beside the package (outside the wheel): found from a checkout
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from lab.study.gp_scale import (bench_gp_datasets, bench_gp_scale,
                                format_dataset_rows, format_scale_rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", nargs="*", default=["pima", "sonar"])
    parser.add_argument("--n-particles", type=int, default=200)
    parser.add_argument("--len-chain", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="results/bench_gp.csv")
    parser.add_argument("--scale", action="store_true")
    parser.add_argument("--sizes", nargs="*", type=int,
                        default=[1000, 3000, 10000, 100000])
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--exact-max", type=int, default=3000)
    parser.add_argument("--threads", type=int, default=None,
                        help="every fit on at most this many threads "
                             "(HGB's OpenMP, BLAS, numba)")
    parser.add_argument("--linear-datasets", nargs="*", default=[])
    parser.add_argument("--data-dir", default=None)
    args = parser.parse_args()
    if args.scale:
        if args.sizes:
            rows = bench_gp_scale(args.sizes, args.repeats, args.seed,
                                  args.exact_max, threads=args.threads)
            print(format_scale_rows(rows), flush=True)
        if args.linear_datasets:
            print(format_dataset_rows(bench_gp_datasets(
                args.linear_datasets, args.data_dir, args.repeats,
                args.seed)))
        return
    rows = []
    print(f"{'dataset':8s} {'model':10s} {'n_train':>7s} {'steps':>5s} "
          f"{'wall s':>7s} {'test AUC':>8s}")
    for name in args.datasets:
        X, y, _ = load_dataset(name)
        X_tr, X_te, y_tr, y_te = train_test_split(
            X, y, test_size=0.25, stratify=y, random_state=args.seed)
        lam = float(len(y_tr))
        for label, model in (("GP", GPAUCModel(X_tr, y_tr, lam, rank=None)),
                             ("linear", AUCGibbsModel(X_tr, y_tr, lam))):
            post = run_smc(model, n_particles=args.n_particles,
                           len_chain=args.len_chain, seed=args.seed)
            auc = 1 - auc_risk(post.score(X_te), y_te)
            rows.append({"dataset": name, "model": label, "n_train": len(y_tr),
                         "tempering_steps": post.n_steps,
                         "wall_seconds": post.wall_time, "test_auc": auc})
            print(f"{name:8s} {label:10s} {len(y_tr):7d} {post.n_steps:5d} "
                  f"{post.wall_time:7.1f} {auc:8.4f}", flush=True)
        auc = 1 - auc_risk(logistic_scores(X_tr, y_tr, X_te, random_state=args.seed),
                           y_te)
        rows.append({"dataset": name, "model": "logistic", "n_train": len(y_tr),
                     "tempering_steps": 0, "wall_seconds": float("nan"),
                     "test_auc": auc})
        print(f"{name:8s} {'logistic':10s} {len(y_tr):7d} {'':5s} {'':7s} {auc:8.4f}")
    print(write_rows(rows, args.out))


if __name__ == "__main__":
    main()
