"""Efficiency of the MCMC moves in waste-free SMC.

For each dataset (AUC Gibbs posterior, lam = n, iid N(0, 1) prior on
standardised features), R independent waste-free runs per move at an equal
budget of risk evaluations (the random walk's, at --len-chain): variance of
log Z and of the posterior mean of the first coefficient, wall and CPU time,
and variance x time relative to the random walk. Writes a CSV and prints the
table. The logic is lab.study.compare_moves.

    .venv/bin/python diagnostics/compare_moves.py --quick
    .venv/bin/python diagnostics/compare_moves.py --n-jobs 2 --threads 1
"""
import argparse
import csv
import os
import sys

from pac_particles.apps.cli import parent_parsers, progress_argument
from pac_particles.problem.datasets import load_dataset
from pac_particles.smc.models import AUCGibbsModel
# lab/ sits beside the package (outside the wheel): found from a checkout
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from lab.study import compare_moves, format_move_table


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     parents=[parent_parsers()["quiet"]])
    parser.add_argument("--datasets", nargs="+", default=["pima", "sonar"])
    parser.add_argument("--moves", nargs="+",
                        default=["random_walk", "elliptical_slice",
                                 "calibrated_slice", "exact_gibbs"])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--particles", type=int, default=200,
                        help="resampled particles M (all moves)")
    parser.add_argument("--len-chain", type=int, default=50,
                        help="chain length of the random walk; the others "
                             "match its budget of risk evaluations")
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--threads", type=int, default=None,
                        help="numba threads per run (default cores / n-jobs)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="results/compare_moves.csv",
                        help="CSV file, or a folder for compare_moves.csv")
    parser.add_argument("--quick", action="store_true",
                        help="4 runs, M = 50, chain 10: a smoke test")
    args = parser.parse_args(argv)
    if args.quick:
        args.runs, args.particles, args.len_chain = 4, 50, 10

    rows = []
    for name in args.datasets:
        X, y, _ = load_dataset(name)
        model = AUCGibbsModel(X, y, lam=len(y))
        print(f"{name}: n = {len(y)}, d = {model.d}, P = {model.data.n_pairs}, "
              f"lam = {len(y)}", file=sys.stderr, flush=True)
        rows += compare_moves(model, moves=args.moves, n_runs=args.runs,
                              n_particles=args.particles, len_chain=args.len_chain,
                              n_jobs=args.n_jobs, numba_threads=args.threads,
                              seed=args.seed, label=name,
                              verbose=progress_argument(args))
    print(format_move_table(rows))
    if os.path.isdir(args.out) or not args.out.endswith(".csv"):
        args.out = os.path.join(args.out, "compare_moves.csv")
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    fields = sorted({key for row in rows for key in row})
    with open(args.out, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
