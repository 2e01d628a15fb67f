"""Positive-unlabelled classification by simulation: the ramp-loss PU
Gibbs posterior against the fully labelled one, and the hinge loss's bias
(:mod:`lab.study.pu_classification`).

Prints a Markdown table of test errors (Bayes error, fully labelled and PU
fits of the ramp and hinge losses) and writes ``rows.csv`` to ``--out``.

Usage::

    python scripts/pu_classification.py                  # VB, a minute
    python scripts/pu_classification.py --methods vb smc --sizes 200 1000 4000
"""

import argparse
import os
import sys

from pac_particles.apps.cli import parent_parsers
from pac_particles.apps.tables import write_rows
# lab/ sits beside the package (outside the wheel): found from a checkout
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from lab.study.pu_classification import format_pu_study, pu_study


def main(argv=None):
    parents = parent_parsers()
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n")[0],
        parents=[parents["run"], parents["sampler"]])
    parser.add_argument("--priors", type=float, nargs="*",
                        default=[0.5, 0.7, 0.85])
    parser.add_argument("--sizes", type=int, nargs="*", default=[200, 1000])
    parser.add_argument("--n-repeats", type=int, default=5)
    parser.add_argument("--methods", nargs="*", default=["vb"],
                        choices=["vb", "smc"])
    parser.add_argument("--sep", type=float, default=2.0,
                        help="class means at +-sep on the first axis")
    args = parser.parse_args(argv)
    rows = pu_study(priors=args.priors, sizes=args.sizes,
                    n_repeats=args.n_repeats, methods=args.methods,
                    sep=args.sep, seed=args.seed,
                    n_particles=args.n_particles, len_chain=args.len_chain)
    print(format_pu_study(rows))
    out = args.out or os.path.join("results", "pu_classification")
    print("wrote", write_rows(rows, os.path.join(out, "rows.csv")))


if __name__ == "__main__":
    main()
