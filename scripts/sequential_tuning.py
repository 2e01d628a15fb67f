"""The student report's sequential tuning: K-fold CV AUC over one parameter
at a time (chain length, particles, lam, ESSrmin, prior scale), the others
held at their current best.

Prints each stage's choice and its CV AUC (mean over the folds, +/- its
standard error, and the values within one standard error of it), then the
test AUC of the tuned estimator and of logistic regression on the held-out
part (``--test-size``; the report kept 25%). Writes the table of every
stage (one row per grid value) as CSV. The logic is
``lab.study.sequential_tuning``.

    python scripts/sequential_tuning.py --dataset pima
    python scripts/sequential_tuning.py --csv data.csv --target y \\
        --grid lam=100,500,2000 --grid ess_rmin=0.3,0.5,0.8 --rounds 2

A ``--grid NAME=V1,V2,...`` is one stage (in the order given; repeat the
option) over any ``PACBayesAUC`` parameter; without one, the report's five
stages (``REPORT_ORDER``) on small grids.
"""
import argparse
import os
import sys

from sklearn.model_selection import train_test_split

from pac_particles.problem.auc import auc_risk
from pac_particles.problem.data import binary_labels
from pac_particles.sklearn.baselines import logistic_scores
from pac_particles.apps.cli import parent_parsers, progress_argument
from pac_particles.problem.datasets import DATASETS, load_csv, load_dataset
from pac_particles.sklearn.estimator import PACBayesAUC
from pac_particles.smc.posterior import POINT_ESTIMATES
from pac_particles.apps.tables import write_rows
# lab/ sits beside the package (outside the wheel): found from a checkout
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from lab.study.sequential_tuning import sequential_tuning

#: The report's stages, in its order, on small grids (the report gives none)
DEFAULT_GRIDS = ("len_chain=5,10,15", "n_particles=50,100,200",
                 "lam=100,500,2000", "ess_rmin=0.3,0.5,0.8",
                 "prior_var=0.01,1,100")


def _grid(text):
    """``NAME=V1,V2,...`` as ``(name, values)``: ints, floats or strings."""
    name, _, values = text.partition("=")
    if not name or not values:
        raise argparse.ArgumentTypeError(f"a grid is NAME=V1,V2,..., got {text!r}")

    def parse(value):
        for kind in (int, float):
            try:
                return kind(value)
            except ValueError:
                pass
        return value
    return name.strip(), [parse(v.strip()) for v in values.split(",")]


def main(argv=None):
    parents = parent_parsers()
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n")[0],
        parents=[parents[k] for k in ("run", "quiet", "split", "jobs")])
    parser.add_argument("--dataset", default="pima", choices=sorted(DATASETS))
    parser.add_argument("--csv", help="a CSV file instead (header row)")
    parser.add_argument("--target", help="label column of --csv (default: last)")
    parser.add_argument("--grid", type=_grid, action="append", default=None,
                        help="a stage NAME=V1,V2,... (repeat; default: the "
                             "report's five stages on small grids)")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=1,
                        help="sweeps over the stages at most (stops when one "
                             "changes nothing)")
    parser.add_argument("--lam", type=float, default=500.0,
                        help="starting lam (the end of the tempering path)")
    parser.add_argument("--n-particles", type=int, default=100)
    parser.add_argument("--len-chain", type=int, default=10)
    parser.add_argument("--point", default="bayes_point", choices=POINT_ESTIMATES,
                        help="point estimate scored (the report: "
                             "componentwise_mode)")
    args = parser.parse_args(argv)
    out = args.out or "results/sequential_tuning"
    X, y, _ = (load_csv(args.csv, target=args.target) if args.csv
               else load_dataset(args.dataset))
    y = binary_labels(y).astype(int)
    if args.test_size > 0:
        X, X_test, y, y_test = train_test_split(
            X, y, test_size=args.test_size, stratify=y, random_state=args.seed)
    grids = args.grid or [_grid(g) for g in DEFAULT_GRIDS]
    est = PACBayesAUC(lam=args.lam, n_particles=args.n_particles,
                      len_chain=args.len_chain, point=args.point)
    tuning = sequential_tuning(est, X, y, grids, n_folds=args.folds,
                               seed=args.seed, n_rounds=args.rounds,
                               n_jobs=args.n_jobs,
                               verbose=progress_argument(args))
    print(f"{len(y)} training rows, {tuning.n_folds}-fold CV AUC, seed "
          f"{tuning.seed}")
    for stage in tuning.stages:
        tried = ", ".join(f"{v!r}: {m:.4f}" for v, m in zip(stage.grid,
                                                            stage.mean_auc))
        print(f"round {stage.round + 1}  {stage.name:12s} -> "
              f"{stage.best_value!r:6}  CV AUC {stage.best_auc:.4f} +/- "
              f"{stage.best_se:.4f}  (within 1 se: "
              f"{', '.join(map(repr, stage.within_one_se))}; tried {tried}; "
              f"{stage.wall_time:.0f} s)")
    rounds = tuning.stages[-1].round + 1
    print(f"chosen: {tuning.best_params}" + (
        "" if args.rounds == 1 else
        f" (round {rounds} changed nothing)" if tuning.converged else
        f" (still changing after {rounds} rounds)"))
    if args.test_size > 0:
        best = tuning.best_estimator(est).set_params(random_state=args.seed)
        test_auc = best.fit(X, y).score(X_test, y_test)
        logit = 1.0 - auc_risk(logistic_scores(X, y, X_test,
                                               random_state=args.seed), y_test)
        print(f"test AUC ({len(y_test)} rows): tuned {test_auc:.4f}, "
              f"logistic regression {logit:.4f}")
    path = os.path.join(out, "sequential_tuning.csv")
    write_rows(tuning.rows(), path)
    print(f"table: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
