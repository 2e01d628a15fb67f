"""Efficiency of the tempering SMC sampler: variance x time of log Z and of
the Bayes point over ESSrmin, the chain length at a fixed population and the
calibrated slice move's options, relative to run_smc's defaults.

The study's cells (lab.study.smc_efficiency.default_cells):
the grid, run from the prior (its ``"default"`` is ``run_smc(start=
"prior")``), and three cells from the Gaussian approximation: ``"EP +
importance sampling"``, EP's Gaussian and ``importance_log_z`` with M P
draws and nothing else, ``"new default"``, ``run_smc``'s default (a
scouting run from the prior checks the importance draws), and ``"former
default"`` (``scout=False``). Ratios are printed with 95% intervals
relative to ``"default"``, ``"EP + importance sampling"``, ``"former
default"``, ``"tempering"``
and ``"unshrunk tempering"``.

Problems: Pima, Sonar, German credit (numeric version, from
/work/shared/datasets or --datasets-dir) with lam = n and an N(0, I) prior,
a GP problem (GPAUCModel, squared-exponential kernel, on the first
--gp-rows rows of Pima), and "label_noise", where EP is poor: a 0-1
classification posterior with label noise (label_noise_problem). One CSV
row per run, written after every run, the seeds outermost (every cell's
run of a seed before the next seed): interrupt and rerun to resume. The logic is
lab.study.smc_efficiency.

    nice .venv/bin/python diagnostics/smc_efficiency.py --out /tmp/smc_eff.csv
    .venv/bin/python diagnostics/smc_efficiency.py --quick
"""
import argparse
import os
import sys

from pac_particles.problem.datasets import load_csv, load_dataset
import numpy as np

from pac_particles.smc.label_noise import lam_from_label_noise
from pac_particles.smc.models import (AUCGibbsModel, ClassificationGibbsModel,
                                      GPAUCModel)
# lab/ sits beside the package (outside the wheel): found from a checkout
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from lab.study.smc_efficiency import (GAUSSIAN_CELLS,
                                                     coverage_table,
                                                     default_cells,
                                                     efficiency_runs,
                                                     efficiency_table,
                                                     format_table)
from pac_particles.apps.tables import write_rows

PROBLEMS = ("pima", "sonar", "german", "gp_pima", "label_noise")
#: the baselines of the printed ratios: the prior path's default, importance
#: sampling alone, and the earlier defaults of the sampler (tempering log Z
#: and, for linear models, no covariance shrinkage either)
BASELINES = ("default", GAUSSIAN_CELLS[0], GAUSSIAN_CELLS[2], "tempering",
             "unshrunk tempering")


def label_noise_problem(n=100, flipped=0.2, q=0.05, seed=1):
    """Where EP is poor (its Pareto k 0.81): the 0-1 Gibbs posterior of a
    linear classifier with an intercept on ``n`` standard normal rows (d =
    3), labels ``1{x . (1, 0.65, 0.3) > 0}`` of which ``flipped`` are
    flipped, at the ``lam`` of the label-noise posterior with probability
    ``q`` (a posterior with the 0-1 loss's flat regions and corners)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = (X @ np.array([1.0, 0.65, 0.3]) > 0).astype(int)
    flip = rng.random(n) < flipped
    y[flip] = 1 - y[flip]
    return ClassificationGibbsModel(X, y, lam=lam_from_label_noise(q, n))


def build_problem(name, datasets_dir, gp_rows):
    if name == "label_noise":
        return label_noise_problem()
    if name == "german":
        X, y, _ = load_csv(os.path.join(datasets_dir,
                                        "german_credit_numeric.csv"), "y")
    else:
        X, y, _ = load_dataset("pima" if name == "gp_pima" else name)
    if name == "gp_pima":
        X, y = X[:gp_rows], y[:gp_rows]
        return GPAUCModel(X, y, lam=len(y), rank=None)
    return AUCGibbsModel(X, y, lam=len(y))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", nargs="+", default=list(PROBLEMS),
                        choices=PROBLEMS)
    parser.add_argument("--cells", nargs="+", default=None,
                        help="names of the cells to run (default: all)")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--particles", type=int, default=100,
                        help="resampled particles M of the default cell")
    parser.add_argument("--len-chain", type=int, default=10)
    parser.add_argument("--gp-rows", type=int, default=150)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--datasets-dir", default="/work/shared/datasets")
    parser.add_argument("--out", default="results/smc_efficiency.csv",
                        help="CSV of the runs (resumed if it exists), or a "
                             "folder for smc_efficiency.csv; the tables go "
                             "next to it (*_table.csv, *_coverage.csv)")
    parser.add_argument("--quick", action="store_true",
                        help="3 runs, M = 20, P = 4, three cells of the grid "
                             "and the two from the Gaussian approximation, "
                             "Pima and a 60-row GP: a smoke test")
    args = parser.parse_args(argv)
    if args.quick:
        args.runs, args.particles, args.len_chain, args.gp_rows = 3, 20, 4, 60
        args.problems = [p for p in args.problems if p in ("pima", "gp_pima")]
        args.cells = args.cells or ["default", "ESSrmin=0.8", "n_slices=2",
                                    *GAUSSIAN_CELLS]

    if os.path.isdir(args.out) or not args.out.endswith(".csv"):
        args.out = os.path.join(args.out, "smc_efficiency.csv")
    models, cells = {}, {}
    for name in args.problems:
        models[name] = build_problem(name, args.datasets_dir, args.gp_rows)
        grid = default_cells(args.particles, args.len_chain,
                             gp=name.startswith("gp"))
        cells[name] = [c for c in grid if args.cells is None
                       or c.name in args.cells]
        print(f"{name}: n = {models[name].data.n}, d = {models[name].d}, "
              f"{len(cells[name])} cells", file=sys.stderr, flush=True)

    def log(line):
        print(line, file=sys.stderr, flush=True)

    rows = efficiency_runs(models, cells, n_runs=args.runs, seed=args.seed,
                           csv_path=args.out, numba_threads=args.threads,
                           log=log)
    table, coverage = efficiency_table(rows), coverage_table(rows)
    print(format_table(table, coverage))
    for base in BASELINES[1:]:
        against = efficiency_table(rows, baseline=base)
        if against:
            print(f"\nrelative to the cell {base!r}:")
            print(format_table(against))
    stem = os.path.splitext(args.out)[0]
    write_rows(table, stem + "_table.csv")
    write_rows(coverage, stem + "_coverage.csv")
    print(f"wrote {args.out}, {stem}_table.csv, {stem}_coverage.csv",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
