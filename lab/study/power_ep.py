"""Fractional (power) EP against long SMC runs and against large ``kappa``.

The EP marginals of [RACL14, Fig. 4] come from fractional EP: every pair
site refined through its power ``alpha`` [Min04] (``alpha=`` of
:class:`~pac_particles.approx.ep.EPLinear`). Two questions, one function each:

* :func:`agreement_rows` -- how far is power EP at each ``alpha`` from the
  Gibbs posterior? The reference is :func:`smc_reference`: independent
  adaptive-tempering SMC runs [RACL14, Alg. 1] whose moments are
  Rao-Blackwellised over the radius (under the isotropic prior ``N(0, I)``
  the risk depends on the direction ``u`` of ``theta = r u`` only, so
  ``r ~ chi_d`` is independent of ``u``: ``E[theta] = E[r] E[u]``,
  ``E[theta theta'] = d E[u u']``, and only the directions carry Monte Carlo
  noise); their spread over seeds gives the standard errors.
* :func:`convergence_rows` -- does a smaller ``alpha`` converge at larger
  ``kappa = lam / P``, where plain EP collapses? One fit from the prior per
  ``(kappa, alpha)``, at the models' default damping, tolerance and sweep
  cap; :func:`largest_converged` summarises the grid, and
  :func:`beyond_plain_ep_rows` asks whether the fits that converge where
  plain EP does not are any good (one SMC run per such ``kappa``).

``scripts/bench_power_ep.py`` prints both tables.

Example
-------
::

    from pac_particles.problem.datasets import load_dataset
    from lab.study.power_ep import (smc_reference, agreement_rows,
                                              format_agreement)
    X, y, _ = load_dataset("pima")
    ref = smc_reference(X, y, lam=len(y), n_particles=1000, seeds=(0, 1))
    print(format_agreement(agreement_rows(X, y, len(y), ref), ref))

References
----------
[RACL14] Ridgway, J., Alquier, P., Chopin, N. and Liang, F. (2014).
PAC-Bayesian AUC classification and scoring. NIPS 27 (Alg. 1, Fig. 4).

[Min04] Minka, T. (2004). Power EP. Technical report MSR-TR-2004-149,
Microsoft Research.
"""

import time
import warnings
from dataclasses import dataclass

import numpy as np
from scipy.special import gammaln

from pac_particles.core.checks import InputError
from pac_particles.approx.ep import EPConvergenceWarning, EPLinear
from pac_particles.smc.models import AUCGibbsModel
from pac_particles.smc.posterior import run_smc
from pac_particles.problem.risks import AUCRisk

__all__ = ["SMCReference", "smc_reference", "agreement_rows",
           "convergence_rows", "largest_converged", "beyond_plain_ep_rows",
           "format_agreement", "format_convergence", "format_beyond"]


@dataclass
class SMCReference:
    """Posterior moments of ``theta`` and ``log Z`` from independent SMC
    runs: means over the runs and the standard errors of those means (their
    spread / sqrt(runs); NaN for one run)."""
    lam: float
    mean: np.ndarray
    var: np.ndarray
    log_z: float
    mean_se: np.ndarray
    var_se: np.ndarray
    log_z_se: float
    n_runs: int
    seconds: float


def _radial_moments(theta, weights):
    """Mean and marginal variances of ``theta`` under ``N(0, I)`` times a
    scale-invariant likelihood, from weighted draws of its direction only
    (see the module docstring)."""
    d = theta.shape[1]
    u = theta / np.linalg.norm(theta, axis=1, keepdims=True)
    mean_u = weights @ u
    mean_r = np.sqrt(2.0) * np.exp(gammaln((d + 1) / 2) - gammaln(d / 2))
    mean = mean_r * mean_u
    second = d * (weights @ (u * u))
    return mean, second - mean * mean


def smc_reference(X, y, lam, n_particles=1000, len_chain=20, seeds=(0, 1)):
    """SMC reference for the linear AUC Gibbs posterior with prior
    ``N(0, I)`` on standardised inputs (the defaults of
    :class:`~pac_particles.smc.models.AUCGibbsModel` and
    :class:`~pac_particles.approx.ep.EPLinear`), one run per seed.

    Returns
    -------
    SMCReference
    """
    seeds = tuple(seeds)
    if not seeds:
        raise InputError("smc_reference needs at least one seed")
    start = time.perf_counter()
    means, variances, log_zs = [], [], []
    for seed in seeds:
        post = run_smc(AUCGibbsModel(X, y, lam=lam), n_particles=n_particles,
                       len_chain=len_chain, seed=seed)
        mean, var = _radial_moments(post.theta, post.weights)
        means.append(mean)
        variances.append(var)
        log_zs.append(post.log_z)
    k = len(seeds)

    def se(values):
        values = np.asarray(values)
        if k < 2:
            return np.full(values.shape[1:], np.nan)
        return values.std(axis=0, ddof=1) / np.sqrt(k)

    return SMCReference(float(lam), np.mean(means, axis=0),
                        np.mean(variances, axis=0), float(np.mean(log_zs)),
                        se(means), se(variances), float(se(log_zs)), k,
                        time.perf_counter() - start)


def _fit(X, y, lam, alpha, options):
    """EPLinear at ``alpha``: the result and its wall time (convergence
    warnings are recorded in the result, not printed)."""
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EPConvergenceWarning)
        res = EPLinear(X, y, lam, alpha=alpha, **options).fit()
    return res, time.perf_counter() - start


def _agreement(res, reference):
    """How far an EP fit is from an :class:`SMCReference`: ``log_z_diff``
    (EP - SMC), ``mean_error`` (largest ``|EP mean - SMC mean| / SMC sd``),
    ``cosine`` of the two means, ``var_ratio_min`` / ``var_ratio_max`` (EP /
    SMC marginal variances)."""
    ratio = np.diag(res.cov) / reference.var
    return dict(
        log_z_diff=res.log_z - reference.log_z,
        mean_error=float(np.max(np.abs(res.mean - reference.mean)
                                / np.sqrt(reference.var))),
        cosine=float(res.mean @ reference.mean
                     / (np.linalg.norm(res.mean)
                        * np.linalg.norm(reference.mean))),
        var_ratio_min=float(ratio.min()), var_ratio_max=float(ratio.max()))


def agreement_rows(X, y, lam, reference, alphas=(1.0, 0.5, 0.25), tol=1e-6,
                   **options):
    """Power EP at each ``alpha`` against an :class:`SMCReference` at the
    same ``lam``.

    Each row: ``alpha``, ``converged``, ``n_sweeps``, ``log_z``,
    ``seconds`` and the agreement: ``log_z_diff`` (EP - SMC),
    ``mean_error`` (largest ``|EP mean - SMC mean| / SMC sd`` over the
    coordinates), ``cosine`` of the means, ``var_ratio_min`` /
    ``var_ratio_max`` (EP / SMC marginal variances). ``options`` go to
    :class:`~pac_particles.approx.ep.EPLinear`.
    """
    if float(lam) != reference.lam:
        raise InputError(f"the reference is at lam = {reference.lam}, not "
                         f"{lam}")
    rows = []
    for alpha in alphas:
        res, seconds = _fit(X, y, lam, alpha, dict(options, tol=tol))
        rows.append(dict(alpha=float(alpha), converged=bool(res.converged),
                         n_sweeps=res.n_sweeps, log_z=res.log_z,
                         seconds=seconds, **_agreement(res, reference)))
    return rows


def convergence_rows(X, y, kappas, alphas=(1.0, 0.5, 0.25), **options):
    """One power-EP fit from the prior per ``kappa = lam / P`` and
    ``alpha``.

    Each row: ``kappa``, ``lam``, ``alpha``, ``converged`` (EP's flag: every
    marginal settled within ``tol`` and the fit not degenerate),
    ``degenerate`` (collapsed along the scale), ``n_sweeps``, ``log_z``,
    ``seconds``. ``options`` go to :class:`~pac_particles.approx.ep.EPLinear`
    (defaults: damping 0.7, tol 1e-3, 500 sweeps).
    """
    n_pairs = AUCRisk(np.asarray(y)).n_pairs
    rows = []
    for kappa in kappas:
        lam = float(kappa) * n_pairs
        for alpha in alphas:
            res, seconds = _fit(X, y, lam, alpha, options)
            rows.append(dict(kappa=float(kappa), lam=lam, alpha=float(alpha),
                             converged=bool(res.converged),
                             degenerate=bool(res.degenerate),
                             n_sweeps=res.n_sweeps, log_z=res.log_z,
                             seconds=seconds))
    return rows


def largest_converged(rows):
    """Per ``alpha``: ``(largest kappa that converged, largest kappa up to
    which every smaller grid value converged)``; None where none did."""
    summary = {}
    for alpha in sorted({row["alpha"] for row in rows}, reverse=True):
        mine = sorted((row for row in rows if row["alpha"] == alpha),
                      key=lambda row: row["kappa"])
        ok = [row["kappa"] for row in mine if row["converged"]]
        unbroken = None
        for row in mine:
            if not row["converged"]:
                break
            unbroken = row["kappa"]
        summary[alpha] = (max(ok) if ok else None, unbroken)
    return summary


def beyond_plain_ep_rows(X, y, rows, n_particles=500, len_chain=10, seed=0,
                         **options):
    """The fits of :func:`convergence_rows` that converged at or above the
    edge of plain EP's working range (the largest ``kappa`` up to which
    every ``alpha = 1`` fit converged; the fits at the edge are the
    baseline), refitted and compared with one SMC run per ``kappa``: rows
    of ``kappa``, ``alpha``, ``log_z``, SMC's ``smc_log_z`` and the
    agreement of :func:`agreement_rows`. Converging is not being right: an
    approximation can settle far from the Gibbs posterior. The SMC run is
    only a reference where it finds the posterior's mass: not on separable
    data at large ``lam`` (the posterior sits on a cone of tiny prior
    mass)."""
    summary = largest_converged(rows)
    edge = summary.get(1.0, (None, None))[1] or 0.0
    chosen = sorted((row for row in rows
                     if row["converged"] and row["kappa"] >= edge),
                    key=lambda row: (row["kappa"], -row["alpha"]))
    references, out = {}, []
    for row in chosen:
        lam = row["lam"]
        if lam not in references:
            references[lam] = smc_reference(X, y, lam, n_particles, len_chain,
                                            (seed,))
        ref = references[lam]
        res, _ = _fit(X, y, lam, row["alpha"], options)
        out.append(dict(kappa=row["kappa"], alpha=row["alpha"],
                        log_z=res.log_z, smc_log_z=ref.log_z,
                        **_agreement(res, ref)))
    return out


def format_agreement(rows, reference):
    """Plain-text table of :func:`agreement_rows` with its reference."""
    ref = reference
    lines = [f"lam = {ref.lam:g}: SMC log Z {ref.log_z:.3f} "
             f"(se {ref.log_z_se:.3f}, {ref.n_runs} runs, "
             f"{ref.seconds:.0f} s); SMC se of the means in sd "
             f"<= {np.max(ref.mean_se / np.sqrt(ref.var)):.3f}, of the "
             f"variances <= {np.max(ref.var_se / ref.var):.3f} relative",
             f"{'alpha':>6} {'conv':>5} {'sweeps':>6} {'log Z':>10} "
             f"{'EP-SMC':>8} {'max|dm|/sd':>10} {'var ratio':>13} "
             f"{'time':>6}"]
    for r in rows:
        converged = "yes" if r["converged"] else "no"
        lines.append(f"{r['alpha']:>6.2f} {converged:>5} "
                     f"{r['n_sweeps']:>6d} {r['log_z']:>10.3f} "
                     f"{r['log_z_diff']:>+8.3f} {r['mean_error']:>10.3f} "
                     f"{r['var_ratio_min']:>6.3f}-{r['var_ratio_max']:<6.3f} "
                     f"{r['seconds']:>5.1f}s")
    return "\n".join(lines)


def format_beyond(rows):
    """Plain-text table of :func:`beyond_plain_ep_rows`."""
    if not rows:
        return "no fit converged above plain EP's working range"
    lines = [f"{'kappa':>8} {'alpha':>6} {'EP log Z':>12} {'SMC log Z':>12} "
             f"{'EP-SMC':>10} {'cosine':>7} {'max|dm|/sd':>10} "
             f"{'var ratio':>14}"]
    for r in rows:
        lines.append(f"{r['kappa']:>8g} {r['alpha']:>6.2f} {r['log_z']:>12.2f} "
                     f"{r['smc_log_z']:>12.2f} {r['log_z_diff']:>+10.2f} "
                     f"{r['cosine']:>7.4f} {r['mean_error']:>10.2f} "
                     f"{r['var_ratio_min']:>6.3f}-{r['var_ratio_max']:<7.3f}")
    return "\n".join(lines)


def format_convergence(rows):
    """Plain-text grid of :func:`convergence_rows`: per ``kappa`` and
    ``alpha``, ``yes``/``no`` and the sweeps (``collapsed`` for a
    degenerate fit), then :func:`largest_converged`."""
    alphas = sorted({row["alpha"] for row in rows}, reverse=True)
    kappas = sorted({row["kappa"] for row in rows})
    cell = {(row["kappa"], row["alpha"]): row for row in rows}
    lines = [f"{'kappa':>8} {'lam':>10} "
             + " ".join(f"{'alpha=' + format(a, 'g'):>16}" for a in alphas)]
    for kappa in kappas:
        parts = []
        for alpha in alphas:
            row = cell[(kappa, alpha)]
            state = ("yes" if row["converged"]
                     else "collapsed" if row["degenerate"] else "no")
            parts.append(f"{state + ' ' + str(row['n_sweeps']):>16}")
        lam = cell[(kappa, alphas[0])]["lam"]
        lines.append(f"{kappa:>8g} {lam:>10.4g} "
                     + " ".join(parts))
    for alpha, (largest, unbroken) in largest_converged(rows).items():
        lines.append(f"alpha = {alpha:g}: largest kappa "
                     f"converged {largest if largest is not None else '-'}"
                     f", all converged up to "
                     f"{unbroken if unbroken is not None else '-'}")
    return "\n".join(lines)
