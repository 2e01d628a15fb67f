"""Fractional (power) EP [RACL14, Fig. 4; Minka 2004]: agreement with long
SMC runs at each alpha, and convergence against kappa = lam / P.

Prints two tables: (1) on the paper's setting (Pima, prior N(0, I) on
standardised inputs), power EP at each alpha against independent SMC runs
(log Z, largest mean error in SMC posterior sds, EP / SMC marginal
variances); (2) for a grid of kappa, whether EP from the prior converges at
each alpha (sweeps; "collapsed": degenerate along the scale) and the
largest kappa each alpha converges at, then every fit that converged at or
above the edge of plain EP's working range against one SMC run at its kappa
(not on sonar: it is linearly separable, and at large lam SMC does not find
the cone of tiny prior mass the posterior sits on). The logic lives in
:mod:`lab.study.power_ep`.

    python scripts/bench_power_ep.py [--quick]
"""
import argparse
import os
import sys
import time

from pac_particles.problem.datasets import DATASETS, load_dataset
# lab/ sits beside the package (outside the wheel): found from a checkout
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from lab.study.power_ep import (agreement_rows,
                                          beyond_plain_ep_rows,
                                          convergence_rows, format_agreement,
                                          format_beyond, format_convergence,
                                          smc_reference)

KAPPAS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dataset", default="pima", choices=sorted(DATASETS),
                        help="data set of the SMC comparison (default pima)")
    parser.add_argument("--lam-over-n", type=float, nargs="+",
                        default=[1.0, 10.0],
                        help="lam / n of the SMC comparison (default 1 10)")
    parser.add_argument("--alphas", type=float, nargs="+",
                        default=[1.0, 0.5, 0.25])
    parser.add_argument("--n-particles", type=int, default=1000)
    parser.add_argument("--len-chain", type=int, default=20)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3])
    parser.add_argument("--grid-datasets", nargs="+", default=["pima", "liver",
                                                               "sonar"],
                        choices=sorted(DATASETS),
                        help="data sets of the convergence grid")
    parser.add_argument("--kappas", type=float, nargs="+", default=KAPPAS)
    parser.add_argument("--check-particles", type=int, default=500,
                        help="particles of the SMC run checking each fit "
                        "that converged at or beyond plain EP's range "
                        "(len_chain 10); 0: no check")
    parser.add_argument("--check-datasets", nargs="*",
                        default=["pima", "liver"], choices=sorted(DATASETS),
                        help="grid data sets whose fits get that check")
    parser.add_argument("--quick", action="store_true",
                        help="small SMC runs and a short grid (smoke test)")
    args = parser.parse_args()
    if args.quick:
        args.n_particles, args.len_chain, args.seeds = 100, 5, [0]
        args.lam_over_n, args.grid_datasets = [1.0], ["pima"]
        args.kappas = [0.01, 1.0]
    start = time.perf_counter()

    X, y, _ = load_dataset(args.dataset)
    print(f"(1) power EP against SMC: {args.dataset}, n = {len(y)}, "
          f"prior N(0, I) on standardised inputs; SMC {args.n_particles} x "
          f"{args.len_chain} waste-free, seeds {args.seeds}\n")
    for ratio in args.lam_over_n:
        lam = ratio * len(y)
        ref = smc_reference(X, y, lam, args.n_particles, args.len_chain,
                            args.seeds)
        print(format_agreement(agreement_rows(X, y, lam, ref, args.alphas),
                               ref))
        print()

    print("(2) convergence from the prior against kappa = lam / P (damping "
          "0.7, tol 1e-3, at most 500 sweeps)\n")
    for name in args.grid_datasets:
        X, y, _ = load_dataset(name)
        print(f"{name} (n = {len(y)}, d = {X.shape[1]})")
        rows = convergence_rows(X, y, args.kappas, args.alphas)
        print(format_convergence(rows))
        if args.check_particles and name in args.check_datasets:
            print("converged at or beyond the edge of plain EP's range, "
                  f"against SMC ({args.check_particles} x 10, one run):")
            print(format_beyond(beyond_plain_ep_rows(
                X, y, rows, n_particles=args.check_particles)))
        print()
    print(f"total {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
