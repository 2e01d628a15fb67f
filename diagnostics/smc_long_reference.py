"""Long tempering runs from the prior on real data, stored as the references
that the tests read (lab/reference/long_runs.json; lab/study/smc_exactness.py).

For each problem (N(0, I) prior, ``lam`` a multiple of n): one
``run_smc(start="prior", evidence="tempering")`` of ``--particles``
resampled particles and chains of ``--len-chain`` (minutes of CPU), its
log Z, Bayes point and their single-run standard errors stored under
``"problem@lam/n"``.

    PYTHONPATH=. .venv/bin/python diagnostics/smc_long_reference.py \
        --problems sonar --lams 10 --particles 1000 --len-chain 100
"""
import argparse
import sys

import os
# lab/ sits beside the package (outside the wheel): found from a checkout
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from lab.study.smc_exactness import long_reference, store_reference
from pac_particles.problem.datasets import load_dataset
from pac_particles.smc.models import AUCGibbsModel


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", nargs="+", default=["sonar"])
    parser.add_argument("--lams", nargs="+", type=float, default=[10])
    parser.add_argument("--particles", type=int, default=1000)
    parser.add_argument("--len-chain", type=int, default=100)
    parser.add_argument("--ess-min", type=float, default=0.5)
    parser.add_argument("--seed", type=int, default=12345)
    args = parser.parse_args(argv)
    for name in args.problems:
        X, y, _ = load_dataset(name)
        for mult in args.lams:
            record = long_reference(AUCGibbsModel(X, y, lam=mult * len(y)),
                                    args.particles, args.len_chain,
                                    args.ess_min, args.seed)
            store_reference(f"{name}@{mult:g}", record)
            print(name, mult, record, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
