"""The PU class prior estimated against the true one, on the PU study's
simulated data: penalised L1 distance and Elkan-Noto, with the coverage of
their bootstrap intervals (:func:`lab.study.pu_classification.pu_prior_study`).

Prints a Markdown table (mean estimate, sd, RMSE about the true pi,
coverage and mean width of the intervals) and writes ``rows.csv`` to
``--out``.

Usage::

    python scripts/pu_class_prior.py              # about 6 CPU minutes, mostly
                                                  # Elkan-Noto's 5 x 101 fits per sample
    python scripts/pu_class_prior.py --priors 0.2 0.5 --n 1000 --n-repeats 50
"""

import argparse
import os
import sys

from pac_particles.apps.cli import parent_parsers
from pac_particles.apps.tables import write_rows
# lab/ sits beside the package (outside the wheel): found from a checkout
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from lab.study.pu_classification import (PRIOR_METHODS,
                                                   format_pu_prior_study,
                                                   pu_prior_study)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                     parents=[parent_parsers()["run"]])
    parser.add_argument("--priors", type=float, nargs="*",
                        default=[0.2, 0.4, 0.6, 0.8])
    parser.add_argument("--n", type=int, default=500,
                        help="labelled positives, and unlabelled points")
    parser.add_argument("--n-repeats", type=int, default=20)
    parser.add_argument("--n-bootstrap", type=int, default=100)
    parser.add_argument("--level", type=float, default=0.95)
    parser.add_argument("--methods", nargs="*", default=list(PRIOR_METHODS),
                        choices=list(PRIOR_METHODS))
    parser.add_argument("--sep", type=float, default=2.0,
                        help="class means at +-sep on the first axis")
    args = parser.parse_args(argv)
    rows = pu_prior_study(priors=args.priors, n=args.n,
                          n_repeats=args.n_repeats,
                          n_bootstrap=args.n_bootstrap, level=args.level,
                          methods=args.methods, sep=args.sep, seed=args.seed)
    print(format_pu_prior_study(rows))
    out = args.out or os.path.join("results", "pu_class_prior")
    print("wrote", write_rows(rows, os.path.join(out, "rows.csv")))


if __name__ == "__main__":
    main()
