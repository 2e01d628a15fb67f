"""Default fits against a tuned logistic regression: fit-time ratios and
test AUCs side by side in one run.

Each data set is split once (stratified 75/25, ``--seed``);
``PACBayesAUC(method=m)`` at its defaults (``lam="cv"`` included) and
``LogisticRegressionCV(scoring="roc_auc")`` are fitted on the same
training rows (:func:`lab.study.speed.bench_defaults`).

    python scripts/bench_defaults.py --data-dir ../shared/datasets --repeat 5
    python scripts/bench_defaults.py --datasets colon --methods smc ep

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

DEFAULT_DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "shared", "datasets")
#: the built-in data sets and every shared one up to 1,000 rows
DEFAULT_SETS = ["pima", "sonar", "breast_cancer", "liver", "german_credit",
                "german_credit_numeric", "spectf", "spect", "glass", "colon"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-dir", default=DEFAULT_DATA_DIR)
    parser.add_argument("--datasets", nargs="*", default=DEFAULT_SETS)
    parser.add_argument("--methods", nargs="*", default=["smc", "ep", "vb"])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=1,
                        help="rounds per data set (medians over rounds)")
    parser.add_argument("--out", default=None,
                        help="directory for bench_defaults.csv (optional)")
    args = parser.parse_args()
    data = {name: load_benchmark_data(name, args.data_dir)
            for name in args.datasets}
    rows = bench_defaults(data, methods=args.methods, seed=args.seed,
                          repeat=args.repeat, verbose=True)
    print(json.dumps(ratio_summary(rows), indent=1))
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        write_rows(rows, os.path.join(args.out, "bench_defaults.csv"))


if __name__ == "__main__":
    main()
