"""Default fits against a tuned logistic regression: fit-time ratios and
test AUCs side by side in one run.

Each data set is split once (stratified 75/25, ``--seed``);
``PACBayesAUC(method=m)`` at its defaults (``lam="cv"`` included) and
``LogisticRegressionCV(scoring="roc_auc")`` are fitted on the same
training rows (:func:`lab.study.speed.bench_defaults`).

With ``--sizes``: the default fit (``method="auto"``) on synthetic logistic
data of each size ``n:d:positive_rate``, each size in a fresh process, its
first fit and the median of ``--repeat`` warm fits beside
``LogisticRegressionCV(scoring="roc_auc")`` and ``LogisticRegression``
(:func:`lab.study.size_grid.bench_sizes`).

    python scripts/bench_defaults.py --data-dir ../shared/datasets --repeat 5
    python scripts/bench_defaults.py --datasets colon --methods smc ep
    python scripts/bench_defaults.py --sizes 1e3:10:0.3 1e4:10:0.3 --repeat 3
    python scripts/bench_defaults.py --sizes 1e3:10:0.3 --methods smc ep vb --seed 1

References
----------
[RACL14] Ridgway, Alquier, Chopin & Liang (2014), PAC-Bayesian AUC
classification and scoring, NIPS 27.
"""
import argparse
import json
import os
import sys

from pac_particles.apps.tables import write_rows
# lab/ sits beside the package (outside the wheel): found from a checkout
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from lab.study.speed import (bench_defaults, load_benchmark_data,
                                       ratio_summary)
from lab.study.size_grid import bench_sizes

DEFAULT_DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "shared", "datasets")
#: the built-in data sets and every shared one up to 1,000 rows
DEFAULT_SETS = ["pima", "sonar", "breast_cancer", "liver", "german_credit",
                "german_credit_numeric", "spectf", "spect", "glass", "colon"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-dir", default=DEFAULT_DATA_DIR)
    parser.add_argument("--datasets", nargs="*", default=DEFAULT_SETS)
    parser.add_argument("--methods", nargs="*", default=None,
                        help="methods of the data sets' runs (default: smc "
                             "ep vb); with --sizes, the estimator's method "
                             "per row (default: auto)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=1,
                        help="rounds per data set (medians over rounds)")
    parser.add_argument("--out", default=None,
                        help="directory for bench_defaults.csv (optional)")
    parser.add_argument("--sizes", nargs="*", default=None,
                        help="n:d:positive_rate, e.g. 1e4:10:0.3 (synthetic "
                             "data; --datasets then unused)")
    parser.add_argument("--estimator", choices=["auc", "classifier"],
                        default="auc", help="with --sizes")
    args = parser.parse_args()
    if args.sizes:
        sizes = [tuple(float(v) for v in size.split(":"))
                 for size in args.sizes]
        rows = bench_sizes(sizes, estimator=args.estimator,
                           rounds=args.repeat, seed=args.seed, verbose=True,
                           methods=args.methods or ["auto"])
        if args.out:
            os.makedirs(args.out, exist_ok=True)
            write_rows(rows, os.path.join(args.out, "bench_sizes.csv"))
        return
    data = {name: load_benchmark_data(name, args.data_dir)
            for name in args.datasets}
    rows = bench_defaults(data, methods=args.methods or ["smc", "ep", "vb"],
                          seed=args.seed,
                          repeat=args.repeat, verbose=True)
    print(json.dumps(ratio_summary(rows), indent=1))
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        write_rows(rows, os.path.join(args.out, "bench_defaults.csv"))


if __name__ == "__main__":
    main()
