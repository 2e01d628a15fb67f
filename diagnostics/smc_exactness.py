"""Exactness of run_smc against quadrature in d = 2 and d = 3: the z-scores
of log Z and of the posterior mean over seeds, and whether the reported
standard errors match the spread over seeds.

For every design and ``lam`` (multiples of n), ``--seeds`` runs of
``run_smc(AUCGibbsModel(X, y, lam, standardize=False), seed=s, **kwargs)``
are compared with the exact evidence and mean (tests/reference.py: the arc
sum in d = 2, the sphere quadrature in d = 3): ``z = (estimate - truth) /
reported se``. Printed per cell: the mean z of log Z and the share of runs
with |z| > 3, the same for the mean's coordinates, and the spread over seeds
divided by the mean reported standard error (1: honest error bars).

    PYTHONPATH=. .venv/bin/python diagnostics/smc_exactness.py --seeds 20
    PYTHONPATH=. .venv/bin/python diagnostics/smc_exactness.py \
        --kwargs "{'start': 'prior'}"
"""
import argparse
import ast
import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "tests"))
from reference import AngularQuadrature, sphere_quadrature  # noqa: E402

from pac_particles.smc.models import AUCGibbsModel  # noqa: E402
from pac_particles.smc.posterior import run_smc  # noqa: E402

#: name -> (n, positives, shift of the positives, seed); d = len(shift)
DESIGNS = {
    "multi-arc n=100": (100, 40, (0.8, 0.4), 1),
    "n=400": (400, 160, (0.8, 0.4), 2),
    "separated n=60": (60, 30, (1.5, 0.0), 3),
    "weak n=80": (80, 20, (0.3, 0.3), 4),
    "d=3 n=40": (40, 15, (0.8, 0.4, 0.2), 3),
}
LAMS = (1, 10, 50, 100)


def design(n, positives, shift, seed):
    """``X ~ N(0, I) + y shift``, the first ``positives`` rows positive."""
    rng = np.random.default_rng(seed)
    y = (np.arange(n) < positives).astype(int)
    X = rng.standard_normal((n, len(shift))) + y[:, None] * np.asarray(shift)
    return X, y


def truth(X, y, lam):
    if X.shape[1] == 2:
        exact = AngularQuadrature(X, y, lam)
        return exact.log_z, exact.mean
    return sphere_quadrature(X, y, lam, size=800)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--designs", nargs="+", default=list(DESIGNS))
    parser.add_argument("--lams", nargs="+", type=float, default=list(LAMS))
    parser.add_argument("--kwargs", default="{}",
                        help="run_smc's keyword arguments, a Python dict literal")
    args = parser.parse_args(argv)
    kwargs = ast.literal_eval(args.kwargs)
    print("| design | lam / n | log Z: mean z | share abs z > 3 | spread / se "
          "| mean: mean z | share abs z > 3 | spread / se | paths | checks failed |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name in args.designs:
        X, y = design(*DESIGNS[name])
        for mult in args.lams:
            lam = mult * len(y)
            log_z, mean = truth(X, y, lam)
            rows = []
            for s in range(args.seeds):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    post = run_smc(AUCGibbsModel(X, y, lam, standardize=False),
                                   seed=s, **kwargs)
                check = getattr(post, "mass_check", None)
                rows.append((post.log_z, post.log_z_se, post.mean,
                             post.mean_se, post.start,
                             check is not None and not check.passed))
            lz = np.array([r[0] for r in rows])
            lz_se = np.array([r[1] for r in rows])
            mu = np.array([r[2] for r in rows])
            mu_se = np.array([r[3] for r in rows])
            z = (lz - log_z) / lz_se
            zm = ((mu - mean) / mu_se).ravel()
            paths = {p: sum(r[4] == p for r in rows) for p in
                     sorted({r[4] for r in rows})}
            print(f"| {name} | {mult:g} | {z.mean():+.2f} | "
                  f"{np.mean(abs(z) > 3):.0%} | "
                  f"{np.std(lz, ddof=1) / lz_se.mean():.2f} | "
                  f"{zm.mean():+.2f} | {np.mean(abs(zm) > 3):.0%} | "
                  f"{np.mean(np.std(mu, axis=0, ddof=1) / mu_se.mean(axis=0)):.2f} | "
                  f"{' '.join(f'{k} {v}' for k, v in paths.items())} | "
                  f"{sum(r[5] for r in rows)} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
