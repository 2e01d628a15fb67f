"""SVGD on the smoothed Gibbs posterior against tempering SMC, on Pima.

Stratified train/test split (``--test-size``, ``--seed``), ``lam = n_train``,
prior N(0, I) on standardised inputs for both. SVGD
(:class:`pac_particles.approx.svgd.SVGD`, relative bandwidth ``--bandwidth``) and SMC
(:func:`pac_particles.smc.posterior.run_smc` with its defaults) are fitted on the
training part; the script prints the posterior means and Bayes points side by
side, the cosines of the two methods' estimates, the test AUC of each point
estimate and the wall times, and writes ``coefficients.csv`` and
``summary.csv`` to ``--out``.

Usage::

    python scripts/svgd_vs_smc.py                       # ~1 minute
    python scripts/svgd_vs_smc.py --bandwidth 0.05 --n-pairs 20000
"""

import argparse
import os
import sys

import numpy as np
from sklearn.model_selection import train_test_split

from pac_particles.problem.datasets import load_dataset
from pac_particles.smc.models import AUCGibbsModel
from pac_particles.smc.posterior import run_smc
from pac_particles.apps.tables import write_rows
# lab/ sits beside the package (outside the wheel): found from a checkout
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from lab.study import compare_with_smc, format_comparison
from pac_particles.approx.svgd import SVGD


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dataset", default="pima")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--test-size", type=float, default=0.25)
    parser.add_argument("--bandwidth", type=float, default=0.1,
                        help="SVGD relative bandwidth h (default 0.1)")
    parser.add_argument("--n-particles", type=int, default=100,
                        help="SVGD particles (default 100)")
    parser.add_argument("--n-pairs", type=int, default=None,
                        help="SVGD pairs per iteration (default: all)")
    parser.add_argument("--out", default=os.path.join("results", "svgd_vs_smc"),
                        help="output directory")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args(argv)

    X, y, names = load_dataset(args.dataset)
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=args.test_size, stratify=y, random_state=args.seed)
    lam = float(len(y_train))
    print(f"{args.dataset}: {len(y_train)} train / {len(y_test)} test, "
          f"lam = n_train = {lam:g}, prior N(0, I), standardised inputs")

    svgd = SVGD(X_train, y_train, lam=lam, bandwidth=args.bandwidth,
                n_particles=args.n_particles, n_pairs=args.n_pairs,
                seed=args.seed, verbose=100 if args.verbose else False)
    sv = svgd.fit()
    smc = run_smc(AUCGibbsModel(X_train, y_train, lam=lam), seed=args.seed,
                  verbose=args.verbose)
    coefficients, summary = compare_with_smc(sv, smc, X_test, y_test,
                                               feature_names=names)
    summary = dict(dataset=args.dataset, seed=args.seed, lam=lam,
                   bandwidth=args.bandwidth, n_particles=args.n_particles,
                   n_pairs=args.n_pairs or "all",
                   smc_particles=len(smc.weights),
                   svgd_mean_norm=float(np.linalg.norm(sv.mean)),
                   smc_mean_norm=float(np.linalg.norm(smc.mean)), **summary)
    print(f"SVGD: h = {args.bandwidth:g}, {args.n_particles} particles; "
          f"SMC: run_smc defaults ({len(smc.weights)} particles, "
          f"{smc.n_steps} tempering steps)\n")
    print(format_comparison(coefficients, summary))
    print(f"norm of the mean  SVGD {summary['svgd_mean_norm']:.3f}  SMC "
          f"{summary['smc_mean_norm']:.3f}")
    os.makedirs(args.out, exist_ok=True)
    write_rows(coefficients, os.path.join(args.out, "coefficients.csv"))
    write_rows([summary], os.path.join(args.out, "summary.csv"))
    print(f"\nwrote {args.out}/coefficients.csv and summary.csv")


if __name__ == "__main__":
    main()
