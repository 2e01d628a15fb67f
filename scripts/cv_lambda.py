"""Cross-validation of lam along the tempering path.

Prints the chosen lam and writes the CV curve (mean and spread over folds vs
gamma) as a PNG and a CSV.

    python scripts/cv_lambda.py --dataset pima --lam-max 10000 --folds 5

References
----------
[RACL14] Ridgway, Alquier, Chopin & Liang (2014), PAC-Bayesian AUC
classification and scoring.
"""
import argparse
import os

import numpy as np

from pac_particles.apps.cli import parent_parsers, progress_argument
from pac_particles.problem.datasets import DATASETS, load_csv, load_dataset
from pac_particles.apps.plots import plot_cv_curve, save
from pac_particles.apps.tables import write_rows
from pac_particles.sklearn.selection import cv_lambda, default_lam_max


def main():
    parents = parent_parsers()
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n")[0],
        parents=[parents[k] for k in ("run", "quiet", "sampler", "jobs")])
    parser.add_argument("--dataset", default="pima", choices=sorted(DATASETS))
    parser.add_argument("--csv", help="a CSV file instead (header row)")
    parser.add_argument("--target", help="label column of --csv (default: last)")
    parser.add_argument("--lam-max", type=float, default=None,
                        help="end of the path (default: 5 x n)")
    parser.add_argument("--folds", type=int, default=5)
    args = parser.parse_args()
    out = args.out or "results/cv_lambda"
    X, y, _ = (load_csv(args.csv, target=args.target) if args.csv
               else load_dataset(args.dataset))
    lam_max = args.lam_max or default_lam_max(len(y))
    cv = cv_lambda(X, y, lam_max=lam_max, n_folds=args.folds,
                   n_particles=args.n_particles, len_chain=args.len_chain,
                   seed=args.seed, n_jobs=args.n_jobs, verbose=progress_argument(args))
    write_rows(cv.rows(), os.path.join(out, "cv_curve.csv"))
    png = save(plot_cv_curve(cv).figure, os.path.join(out, "cv_curve.png"))
    print(f"chosen lam = {cv.best_lam:.5g} (mean validation AUC "
          f"{cv.mean_auc.max():.4f} +/- {cv.std_auc[np.argmax(cv.mean_auc)]:.4f}); "
          f"refit log Z = {cv.posterior.log_z:.3f}")
    print(f"curve: {png}")


if __name__ == "__main__":
    main()
