"""EP-AUC written pair by pair, as the paper describes it [RACL14, appendix B.2].

The same damped parallel EP as :class:`pac_particles.approx.ep.EPLinear`, in the
paper's formulation: every sweep forms the posterior precision site by site,
``Lambda = S0^-1 + sum_ij W_ij d_ij d_ij'`` with ``d_ij = x_i - x_j``, and
every pair marginal ``N(d_ij' m, d_ij' V d_ij)`` with d x d algebra:
O(P d^2 + d^3) per sweep, against O(P r + n r^2 + r^3) for the Laplacian
formulation of :mod:`pac_particles.approx.ep.core`. The site updates are the same
closed-form tilted moments (:func:`pac_particles.approx.ep.sites.pair_tilted_moments`)
and the same site energies (:func:`pac_particles.approx.ep.sites.pair_energy`); a
site whose cavity is improper keeps its value; tied pairs (``x_i == x_j``)
carry no site. Unlike the models it keeps the damping fixed.

It is the baseline of ``scripts/bench_ep.py`` and an independent check of
the Laplacian / whitened / score-space algebra of the models: both converge
to the same fixed point, hence the same mean, covariance and ``log_z``.

Example
-------
::

    from pac_particles.approx.ep import EPLinear
    from lab.reference.pairwise_ep import pairwise_ep
    ep = EPLinear(X, y, lam=len(y), tol=1e-8)
    res = pairwise_ep(ep.data.X, ep.data.y, lam=len(y), tol=1e-8)
    abs(res.log_z - ep.fit().log_z)            # ~ 1e-8

References
----------
[RACL14] Ridgway, J., Alquier, P., Chopin, N. and Liang, F. (2014).
PAC-Bayesian AUC classification and scoring. NIPS 27, Algorithm 4 and
appendix B.2.
"""

import time
from dataclasses import dataclass

import numpy as np
from scipy import linalg

from pac_particles.core.checks import InputError, check_positive
from pac_particles.problem.data import validate_xy
from pac_particles.problem.risks import AUCRisk, duplicate_groups
from pac_particles.approx.ep.core import check_fit_options
from pac_particles.approx.ep.sites import pair_energy, pair_tilted_moments

__all__ = ["PairwiseEPResult", "pairwise_ep"]


@dataclass
class PairwiseEPResult:
    """Outcome of :func:`pairwise_ep`: posterior ``N(mean, cov)`` of theta,
    the EP energy ``log_z``, the number of sweeps, whether the marginals
    moved by less than ``tol`` in the last one, and the wall time per
    sweep."""
    mean: np.ndarray
    cov: np.ndarray
    log_z: float
    n_sweeps: int
    converged: bool
    seconds_per_sweep: float


def pairwise_ep(X, y, lam, prior_var=1.0, damping=0.7, tol=1e-3,
                max_sweeps=500, chunk=4_000_000):
    """Parallel EP-AUC with per-pair d x d algebra [RACL14, appendix B.2].

    Parameters
    ----------
    X : (n, d) inputs, used as given (no standardisation, no column dropped).
    y : (n,) binary labels.
    lam : float > 0, the inverse temperature on ``R_n``.
    prior_var : float or (d,) array, the prior ``N(0, diag(prior_var))``.
    damping : float in (0, 1], fixed fraction of the EP update per sweep.
    tol, max_sweeps : stopping rule, as :class:`~pac_particles.approx.ep.EPLinear`.
    chunk : int, float64 entries of the pair-difference blocks held at once.

    Returns
    -------
    PairwiseEPResult
    """
    data = validate_xy(X, y, drop_constant=False)
    lam = check_positive(lam, "lam")
    damping, tol, max_sweeps = check_fit_options(damping, tol, max_sweeps)
    d = data.d
    pv = np.asarray(prior_var, dtype=float)
    pv = np.full(d, float(pv)) if pv.ndim == 0 else pv
    if pv.shape != (d,) or not np.all(np.isfinite(pv)) or np.any(pv <= 0):
        raise InputError(f"prior_var must be > 0, scalar or of shape ({d},)")
    risk = AUCRisk(data.y)
    Xo = risk.ordered(data.X)
    X_pos, X_neg = Xo[:risk.n_pos], Xo[risk.n_pos:]
    kappa = risk.kappa(lam)
    tied = risk.tied_sites(duplicate_groups(Xo))
    ii, jj = np.nonzero(~tied)
    K = np.zeros(ii.size)          # site precisions
    h = np.zeros(ii.size)          # site shifts
    step = max(1, chunk // d)
    old = None
    converged = False
    start = time.perf_counter()
    sweep = 0
    for sweep in range(max_sweeps + 1):
        lam_mat = np.diag(1.0 / pv)
        eta = np.zeros(d)
        for s in range(0, ii.size, step):
            D = X_pos[ii[s:s + step]] - X_neg[jj[s:s + step]]
            lam_mat += (D * K[s:s + step, None]).T @ D        # O(c d^2)
            eta += D.T @ h[s:s + step]
        chol = np.linalg.cholesky(lam_mat)
        V = linalg.cho_solve((chol, True), np.eye(d))          # O(d^3)
        m = V @ eta
        mu = np.empty(ii.size)
        var = np.empty(ii.size)
        for s in range(0, ii.size, step):
            D = X_pos[ii[s:s + step]] - X_neg[jj[s:s + step]]
            mu[s:s + step] = D @ m
            var[s:s + step] = np.einsum("ij,ij->i", D @ V, D)  # O(c d^2)
        if old is not None:
            change = np.max(np.maximum(np.abs(mu - old[0]) / np.sqrt(var),
                                       np.abs(var - old[1]) / var))
            if change < tol:
                converged = True
                break
        if sweep == max_sweeps:
            break
        old = (mu, var)
        tau_c = 1 / var - K
        nu_c = mu / var - h
        # an improper cavity defines no tilted distribution: keep the site
        proper = tau_c > 0
        _, m_t, v_t = pair_tilted_moments(nu_c[proper] / tau_c[proper],
                                          1 / tau_c[proper], kappa)
        K[proper] += damping * ((1 / v_t - tau_c[proper]) - K[proper])
        h[proper] += damping * ((m_t / v_t - nu_c[proper]) - h[proper])
    seconds = (time.perf_counter() - start) / max(sweep, 1)
    rows, _ = pair_energy(mu[None], var[None], K[None], h[None],
                          np.ones((1, ii.size), dtype=bool), kappa)
    log_z = (0.5 * float(eta @ m) - np.sum(np.log(np.diag(chol)))
             - 0.5 * np.sum(np.log(pv)) + float(rows.sum())
             - 0.5 * kappa * int(tied.sum()))
    return PairwiseEPResult(m, V, float(log_z), sweep, converged, seconds)
