"""Exactness of :func:`~pac_particles.smc.posterior.run_smc` against
quadrature, and honesty of its single-run error bars.

For a design of :data:`DESIGNS` and a ``lam`` (a multiple of n),
:func:`exactness_runs` makes independent runs of
``run_smc(AUCGibbsModel(X, y, lam, standardize=False), seed=s, **kwargs)``
and :func:`exactness_row` compares them with the exact evidence and
posterior mean (:func:`truth`: the arc sum in d = 2, the sphere quadrature
in d = 3, :mod:`lab.reference.quadrature`), as ``z = (estimate - truth) /
reported se``:

* the mean z and the share of runs with ``|z| > 3`` (bias);
* ``spread / se``: the standard deviation over seeds divided by the mean
  reported standard error (1: honest error bars; with S seeds it is known
  to about ``1 / sqrt(2 (S - 1))``, 16% at 20 seeds);
* ``sd of z``: the same question asked run by run, which stays meaningful
  where the runs end on different paths with different standard errors
  (a mixture of small and large error bars has a spread over seeds that
  no single error bar describes).

``diagnostics/smc_exactness.py`` prints the table (docs/benchmarks.md,
"Exactness of the default against quadrature").

On real data no quadrature reaches: :func:`long_reference` is a long
tempering run from the prior, stored in ``lab/reference/long_runs.json``
(:func:`store_reference`, by ``diagnostics/smc_long_reference.py``: minutes
of CPU) and read by the tests (:func:`stored_references`).
"""

import json
import os
import time
import warnings

import numpy as np

from lab.reference.quadrature import AngularQuadrature, sphere_quadrature
from pac_particles.smc.models import AUCGibbsModel
from pac_particles.smc.posterior import run_smc

__all__ = ["DESIGNS", "LAMS", "design", "truth", "exactness_runs",
           "exactness_row", "TABLE_HEADER", "LONG_RUNS", "long_reference",
           "stored_references", "store_reference"]

#: name -> (n, positives, shift of the positives, seed); d = len(shift).
#: "multi-arc": four arcs at 50 n (angles 0.32, 0.36, 0.48, 0.52), a fifth
#: of the mass outside EP's Gaussian
DESIGNS = {
    "multi-arc n=100": (100, 40, (0.8, 0.4), 1),
    "n=400": (400, 160, (0.8, 0.4), 2),
    "separated n=60": (60, 30, (1.5, 0.0), 3),
    "weak n=80": (80, 20, (0.3, 0.3), 4),
    "d=3 n=40": (40, 15, (0.8, 0.4, 0.2), 3),
}
#: the multiples of n tried
LAMS = (1, 10, 50, 100)


def design(n, positives, shift, seed):
    """``(X, y)``: ``X ~ N(0, I) + y shift``, the first ``positives`` rows
    positive."""
    rng = np.random.default_rng(seed)
    y = (np.arange(n) < positives).astype(int)
    X = rng.standard_normal((n, len(shift))) + y[:, None] * np.asarray(shift)
    return X, y


def truth(X, y, lam, sphere_size=800):
    """``(log Z, E[theta])`` of the Gibbs posterior of ``(X, y, lam)`` under
    N(0, I): the arc sum in d = 2, the sphere quadrature in d = 3."""
    if X.shape[1] == 2:
        exact = AngularQuadrature(X, y, lam)
        return exact.log_z, exact.mean
    return sphere_quadrature(X, y, lam, size=sphere_size)


def exactness_runs(X, y, lam, seeds, **kwargs):
    """One record per seed of ``run_smc(AUCGibbsModel(X, y, lam,
    standardize=False), seed=s, **kwargs)``: ``log_z``, ``log_z_se``,
    ``mean``, ``mean_se``, ``start`` (the path the run ended on),
    ``evidence`` (``evidence_method``), ``check_failed``."""
    records = []
    for s in seeds:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            post = run_smc(AUCGibbsModel(X, y, lam, standardize=False),
                           seed=s, **kwargs)
        check = post.mass_check
        records.append(dict(
            log_z=post.log_z, log_z_se=post.log_z_se, mean=post.mean,
            mean_se=post.mean_se, start=post.start,
            evidence=post.evidence_method,
            check_failed=check is not None and not check.passed))
    return records


#: the columns of :func:`exactness_row`, a markdown header
TABLE_HEADER = (
    "| design | lam / n | log Z: mean z | abs z > 3 | spread / se | sd of z "
    "| mean: mean z | abs z > 3 | spread / se | sd of z | paths | checks failed |\n"
    "|---|---|---|---|---|---|---|---|---|---|---|---|")


def exactness_row(name, mult, records, log_z, mean):
    """A markdown row of the records of one cell against the truth
    ``(log_z, mean)``: the columns of :data:`TABLE_HEADER` (the mean's
    columns pool its coordinates; its spread / se is their average)."""
    lz = np.array([r["log_z"] for r in records])
    lz_se = np.array([r["log_z_se"] for r in records])
    mu = np.array([r["mean"] for r in records])
    mu_se = np.array([r["mean_se"] for r in records])
    z = (lz - log_z) / lz_se
    zm = ((mu - mean) / mu_se).ravel()
    spread = np.std(lz, ddof=1) / lz_se.mean()
    spread_mean = np.mean(np.std(mu, axis=0, ddof=1) / mu_se.mean(axis=0))
    paths = {}
    for r in records:
        paths[r["start"]] = paths.get(r["start"], 0) + 1
    return (f"| {name} | {mult:g} | {z.mean():+.2f} | "
            f"{np.mean(abs(z) > 3):.0%} | {spread:.2f} | "
            f"{np.std(z, ddof=1):.2f} | {zm.mean():+.2f} | "
            f"{np.mean(abs(zm) > 3):.0%} | {spread_mean:.2f} | "
            f"{np.std(zm, ddof=1):.2f} | "
            f"{' '.join(f'{k} {v}' for k, v in sorted(paths.items()))} | "
            f"{sum(r['check_failed'] for r in records)} |")


# ------------------------------------------------- long runs on real data

#: where the long reference runs are stored (one JSON object, keyed by
#: ``"problem@lam/n"``), read by the tests and by
#: ``diagnostics/smc_long_reference.py``
LONG_RUNS = os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "reference", "long_runs.json")


def long_reference(model, n_particles, len_chain, ESSrmin=0.5, seed=12345):
    """A long tempering run from the prior (``run_smc(start="prior",
    evidence="tempering")``, ``n_particles`` resampled particles, chains of
    ``len_chain``): its ``log_z``, ``log_z_se``, ``bayes_point`` and
    ``bayes_point_se``, the settings and the CPU
    seconds, a JSON-ready dict. The reference where no quadrature
    reaches: its estimate needs no Gaussian approximation, only long
    enough chains to equilibrate at every step (a run too short falls
    below ``log Z``: docs/benchmarks.md, "Exactness of the default against
    quadrature")."""
    clock = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        post = run_smc(model, n_particles=n_particles, len_chain=len_chain,
                       ESSrmin=ESSrmin, seed=seed, start="prior",
                       evidence="tempering")
    return dict(log_z=float(post.log_z), log_z_se=float(post.log_z_se),
                bayes_point=[float(v) for v in post.bayes_point],
                bayes_point_se=[float(v) for v in post.bayes_point_se],
                n_particles=int(n_particles), len_chain=int(len_chain),
                ESSrmin=float(ESSrmin), seed=int(seed),
                n_steps=int(post.n_steps),
                cpu_seconds=round(time.process_time() - clock, 1))


def stored_references(path=LONG_RUNS):
    """``{"problem@lam/n": record}`` of :func:`long_reference` runs stored
    in ``path`` (empty where there is none)."""
    if not os.path.exists(path):
        return {}
    with open(path) as fh:
        return json.load(fh)


def store_reference(key, record, path=LONG_RUNS):
    """Add (or replace) ``record`` under ``key`` in ``path``."""
    runs = stored_references(path)
    runs[key] = record
    with open(path, "w") as fh:
        json.dump(runs, fh, indent=1, sort_keys=True)
        fh.write("\n")
