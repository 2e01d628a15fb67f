"""Exactness of run_smc against quadrature in d = 2 and d = 3: the z-scores
of log Z and of the posterior mean over seeds, and whether the reported
standard errors match the spread over seeds (lab/study/smc_exactness.py).

    PYTHONPATH=. .venv/bin/python diagnostics/smc_exactness.py --seeds 20
    PYTHONPATH=. .venv/bin/python diagnostics/smc_exactness.py \
        --kwargs "{'start': 'prior'}"
"""
import argparse
import ast
import sys

import os
# lab/ sits beside the package (outside the wheel): found from a checkout
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from lab.study.smc_exactness import (DESIGNS, LAMS, TABLE_HEADER, design,
                                     exactness_row, exactness_runs, truth)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--designs", nargs="+", default=list(DESIGNS))
    parser.add_argument("--lams", nargs="+", type=float, default=list(LAMS))
    parser.add_argument("--kwargs", default="{}",
                        help="run_smc's keyword arguments, a Python dict literal")
    args = parser.parse_args(argv)
    kwargs = ast.literal_eval(args.kwargs)
    print(TABLE_HEADER)
    for name in args.designs:
        X, y = design(*DESIGNS[name])
        for mult in args.lams:
            log_z, mean = truth(X, y, mult * len(y))
            records = exactness_runs(X, y, mult * len(y), range(args.seeds),
                                     **kwargs)
            print(exactness_row(name, mult, records, log_z, mean), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
