"""Tables 1-5 of the dissertation on Gibbs posteriors for classification:
test misclassification rate, hinge and exponential losses of VB and SMC
Gibbs posteriors (0-1, hinge, exponential losses), logistic regression, a
sigmoid-kernel SVM and a tuned RBF SVM, on repeated stratified splits of
breast cancer, SPECT heart and students dropout
(:mod:`lab.study.classification_tables`).

Writes ``rows.csv`` (one row per data set, split and method),
``summary.csv`` and ``tables.md`` (ours next to the dissertation's) to
``--out``.

Usage::

    python scripts/classification_tables.py --data-dir ../shared/datasets
    python scripts/classification_tables.py --datasets breast_cancer spect \\
        --n-repeats 10 --no-smc
"""

import argparse
import os
import sys

from pac_particles.apps.cli import parent_parsers
from pac_particles.apps.tables import write_rows
# lab/ sits beside the package (outside the wheel): found from a checkout
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from lab.study.classification_tables import (
    DATASETS, classification_tables, format_tables, summarise)


def main(argv=None):
    parents = parent_parsers()
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n")[0],
        parents=[parents["run"], parents["sampler"]])
    parser.add_argument("--data-dir", default=os.path.normpath(os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared",
        "datasets")), help="folder of spect.csv and students_dropout.csv")
    parser.add_argument("--datasets", nargs="*", default=list(DATASETS),
                        choices=list(DATASETS))
    parser.add_argument("--n-repeats", type=int, default=10,
                        help="stratified splits per data set (default 10)")
    parser.add_argument("--test-size", type=float, default=0.3)
    parser.add_argument("--no-smc", action="store_true",
                        help="VB and the baselines only")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args(argv)
    out = args.out or os.path.join("results", "classification_tables")

    rows = classification_tables(
        args.datasets, data_dir=args.data_dir, n_repeats=args.n_repeats,
        test_size=args.test_size, smc=not args.no_smc,
        n_particles=args.n_particles, len_chain=args.len_chain,
        seed=args.seed, verbose=args.verbose)
    summary = summarise(rows)
    text = format_tables(summary)
    print(text)
    write_rows(rows, os.path.join(out, "rows.csv"))
    write_rows([dict(dataset=d, method=m, **v) for (d, m), v in summary.items()],
               os.path.join(out, "summary.csv"))
    with open(os.path.join(out, "tables.md"), "w") as fh:
        fh.write(text + "\n")
    print(f"wrote {out}/rows.csv, summary.csv and tables.md")


if __name__ == "__main__":
    main()
