"""run_smc's default against a long tempering run from the prior on real
data, and its efficiency beside the former default and tempering from the
prior.

For each problem (Pima, d = 8; Sonar, d = 60; N(0, I) prior) and ``lam``
(multiples of n): a long reference run (``start="prior"``,
``--ref-particles`` resampled particles, its tempering estimate of log Z),
then ``--runs`` interleaved rounds of three cells: ``"default"``
(``run_smc``'s default: importance sampling from EP's Gaussian and a
scouting run's fit, checked against the scout), ``"scout=False"`` (the
former default: EP's Gaussian alone, the bridge from it where its Pareto k
is high) and ``"prior"`` (``start="prior"``: tempering from the prior, then
importance sampling around its particles). Printed per cell: the mean z of
log Z against the reference (``(log Z - ref) / sqrt(se^2 + se_ref^2)``),
the share of |z| > 3, spread over runs / mean reported se, mean CPU
seconds, and var(log Z) x time relative to the former default (< 1: the
cell is more efficient), with a 95% F interval.

    PYTHONPATH=. .venv/bin/python diagnostics/smc_reference_check.py --runs 15
"""
import argparse
import sys
import time
import warnings

import numpy as np
from scipy import stats

from pac_particles.problem.datasets import load_dataset
from pac_particles.smc.models import AUCGibbsModel
from pac_particles.smc.posterior import run_smc

CELLS = {"default": {}, "scout=False": {"scout": False},
         "prior": {"start": "prior"}}
BASELINE = "scout=False"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", nargs="+", default=["pima", "sonar"])
    parser.add_argument("--lams", nargs="+", type=float, default=[1, 10])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--ref-particles", type=int, default=2000)
    args = parser.parse_args(argv)
    print("| problem | lam / n | cell | log Z - ref (mean) | mean z | share abs z > 3 "
          "| spread / se | CPU s | var x time / former default |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in args.problems:
        X, y, _ = load_dataset(name)
        for mult in args.lams:
            model = AUCGibbsModel(X, y, lam=mult * len(y))
            ref = run_smc(model, n_particles=args.ref_particles, seed=12345,
                          start="prior", evidence="tempering")
            out = {c: [] for c in CELLS}
            for r in range(args.runs):
                for cell, kw in CELLS.items():   # interleaved
                    clock = time.process_time()
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        post = run_smc(model, seed=r, **kw)
                    out[cell].append((post.log_z, post.log_z_se,
                                      time.process_time() - clock))
            base = np.array(out[BASELINE])
            base_cost = np.var(base[:, 0], ddof=1) * base[:, 2].mean()
            for cell, rows in out.items():
                rows = np.array(rows)
                z = (rows[:, 0] - ref.log_z) / np.hypot(rows[:, 1], ref.log_z_se)
                cost = np.var(rows[:, 0], ddof=1) * rows[:, 2].mean()
                ratio = cost / base_cost
                f = stats.f.ppf([0.975, 0.025], len(rows) - 1, len(base) - 1)
                print(f"| {name} | {mult:g} | {cell} | "
                      f"{np.mean(rows[:, 0] - ref.log_z):+.3f} "
                      f"(ref se {ref.log_z_se:.3f}) | {z.mean():+.2f} | "
                      f"{np.mean(abs(z) > 3):.0%} | "
                      f"{np.std(rows[:, 0], ddof=1) / rows[:, 1].mean():.2f} | "
                      f"{rows[:, 2].mean():.2f} | {ratio:.2f} "
                      f"[{ratio / f[0]:.2f}, {ratio / f[1]:.2f}] |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
