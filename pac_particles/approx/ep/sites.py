"""The AUC pair sites of EP: tilted moments and the fused O(P) site pass.

The risk ``lam R_n`` factorises over the ``P = n_pos n_neg`` positive/negative
pairs, so the Gibbs target has one *site* per pair, a step function of the
margin ``u_ij = s_i - s_j`` [RACL14, section 3.3]::

    t_ij(u) = exp(-kappa 1{u < 0}),       kappa = lam / P

(the paper's EP section calls ``kappa`` ``gamma'``). Under a Gaussian cavity
``N(mu, s^2)`` its tilted moments are closed-form,
``Z = e^-kappa + (1 - e^-kappa) Phi(mu / s)`` (:func:`pair_tilted_moments`).
Each site is approximated by ``q_ij(u) = exp(-site_precision u^2 / 2 +
site_shift u)``.

Fractional (power) EP [Min04; RACL14, Fig. 4] with a fraction ``alpha`` in
(0, 1] refines only the fraction ``alpha`` of each site: cavity
``q / q_ij^alpha`` (natural parameters ``(tau - alpha W, nu - alpha H)``),
tilted ``cavity * t_ij^alpha`` -- for a step site ``t^alpha = exp(-alpha
kappa 1{u < 0})``, the same closed form with ``kappa -> alpha kappa`` -- and
site ``(q_new / cavity)^(1 / alpha)``: the natural parameters of the moment
match minus the cavity's, divided by ``alpha``. Its share of the EP energy
is ``(log Z_alpha + phi(cavity) - phi(marginal)) / alpha`` per site. The
kernels take ``alpha`` and the weights ``(c, a, log a)`` of ``alpha kappa``;
``alpha = 1`` is plain EP, bit for bit (every ``alpha`` enters as a product
or quotient by 1.0).

The numba kernels do one EP pass over every pair at once: from the node
marginals of the scores and the pos x neg block of their covariance (what
:meth:`pac_particles.problem.risks.AUCRisk.cross_block` gives), the pair marginal,
its change since the previous pass, and the undamped site update
(:func:`pair_sweep`); and the sites' share of the EP energy
(:func:`pair_energy`). Both run row by row over the positives, ``prange``
when the pass is large enough (:func:`pac_particles.core.parallel.dispatch`).

Example
-------
::

    from pac_particles.approx.ep.sites import pair_tilted_moments
    log_z, mean, var = pair_tilted_moments(mu=0.3, var=1.0, kappa=0.01)

References
----------
[RACL14] Ridgway, J., Alquier, P., Chopin, N. and Liang, F. (2014).
PAC-Bayesian AUC classification and scoring. NIPS 27, section 3.3 and
appendix B.2.

Minka, T. (2001). Expectation Propagation for approximate Bayesian inference.
UAI 17, 362-369.

[Min04] Minka, T. (2004). Power EP. Technical report MSR-TR-2004-149,
Microsoft Research.
"""

import math

import numba
import numpy as np

from pac_particles.core import parallel
from pac_particles.core.normal import cdf_pdf

__all__ = ["pair_tilted_moments", "pair_sweep", "pair_energy"]


def pair_tilted_moments(mu, var, kappa, alpha=1.0):
    """Moments of a pair site (to the power ``alpha``) times a Gaussian
    cavity, in closed form.

    For ``u ~ N(mu, var)`` and ``t(u) = exp(-kappa 1{u < 0})``::

        Z    = e^-kappa + (1 - e^-kappa) Phi(z),       z = mu / sqrt(var)
        mean = mu + sqrt(var) beta,                    beta = (1 - e^-kappa) phi(z) / Z
        var' = var (1 - beta (beta + z))

    computed in log space where ``Z`` underflows (large ``kappa`` and
    ``z`` far below 0), so that any finite ``kappa`` works. Power EP's
    tilted distribution ``t(u)^alpha N(u; mu, var)`` [Min04] is the same
    with ``kappa -> alpha kappa``.

    Parameters
    ----------
    mu, var : arrays (broadcastable), ``var > 0``
    kappa : float > 0
    alpha : float in (0, 1], the power of the site (1: plain EP).

    Returns
    -------
    log_z, mean, var : arrays of the tilted distribution ``t(u)^alpha
    N(u; mu, var)``.
    """
    mu, var = np.broadcast_arrays(np.asarray(mu, dtype=float),
                                  np.asarray(var, dtype=float))
    s = np.sqrt(var)
    z = np.ravel(mu / s)
    log_z, beta = _tilted_log_z_beta(z, float(alpha) * float(kappa))
    log_z, beta = log_z.reshape(mu.shape), beta.reshape(mu.shape)
    z = z.reshape(mu.shape)
    return log_z, mu + s * beta, var * (1.0 - beta * (beta + z))


_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
# Below this value c + a Phi(z) is computed in log space (it may underflow).
_TINY = 1e-280


@numba.njit(cache=True, inline="always")
def _log_ndtr(z):
    """``log Phi(z)`` for any z: :func:`~pac_particles.core.normal.cdf_pdf`
    where it does not underflow, the asymptotic series of the Mills ratio
    below z = -37 (relative error below 1e-15 there)."""
    if z > -37.0:
        return math.log(cdf_pdf(z)[0])
    r = 1.0 / (z * z)
    series = 1.0 - r * (1.0 - 3.0 * r * (1.0 - 5.0 * r * (1.0 - 7.0 * r
                                                        * (1.0 - 9.0 * r))))
    return -0.5 * z * z - _LOG_SQRT_2PI - math.log(-z) + math.log(series)


@numba.njit(cache=True, inline="always")
def _log_z_beta(z, c, a, kappa, log_a):
    """``(log Z, beta)`` of a pair site under a cavity at standardised mean
    ``z`` (see :func:`pair_tilted_moments`).

    The direct formula is used while ``Z = c + a Phi(z)`` is a normal
    number (the common case: no log nor extra exp); below that, log-sum-exp
    of ``-kappa`` and ``log a + log Phi(z)``, so that ``lam / P`` as large
    as you like (``c = e^-kappa`` underflows beyond 745) gives finite moments.
    """
    cdf, pdf = cdf_pdf(z)
    zz = c + a * cdf
    if zz > _TINY:
        return math.log(zz), a * pdf / zz
    t = log_a + _log_ndtr(z)
    log_z = max(-kappa, t) + math.log1p(math.exp(-abs(t + kappa)))
    return log_z, math.exp(log_a - 0.5 * z * z - _LOG_SQRT_2PI - log_z)


@numba.njit(cache=True)
def _tilted_log_z_beta(z, kappa):
    c, a = math.exp(-kappa), -math.expm1(-kappa)
    log_a = math.log(a)
    log_z = np.empty(z.size)
    beta = np.empty(z.size)
    for k in range(z.size):
        log_z[k], beta[k] = _log_z_beta(z[k], c, a, kappa, log_a)
    return log_z, beta


@numba.njit(cache=True, inline="always")
def _pair_tilted(tau_c, nu_c, c, a, kappa, log_a):
    """EP update of one pair site from its cavity ``N(nu_c/tau_c, 1/tau_c)``.

    Returns ``(log Z, site_precision, site_shift)`` of the full update, in
    the form ``site_precision = tau_c rho / (1 - rho)``, ``site_shift =
    (z rho + beta) / (s_c (1 - rho))``, ``rho = beta (beta + z)``, which
    avoids the cancellation of ``1/var_tilted - 1/var_cavity`` for weak
    sites (see :func:`pair_tilted_moments` for the notation).
    """
    # 1 / s_c: one square root and one division per pair (the pass is
    # bound by these and the normal cdf; 1/sqrt(1/tau_c) cost 12% more)
    inv_s_c = math.sqrt(tau_c)
    z = nu_c / inv_s_c                   # mu_c / s_c
    log_z, beta = _log_z_beta(z, c, a, kappa, log_a)
    rho = beta * (beta + z)
    if not rho < 1.0:
        # the tilted variance var_c (1 - rho) is positive in exact arithmetic
        return log_z, math.inf, math.inf
    inv = 1.0 / (1.0 - rho)
    return log_z, tau_c * rho * inv, (z * rho + beta) * inv * inv_s_c


@numba.njit(cache=True, inline="always")
def _difference_var(v_i, v_j, cov_ij):
    """``Var(s_i - s_j)``, floored: rounding in a difference of nearly equal
    terms must not give a variance <= 0."""
    both = v_i + v_j
    return max(both - 2.0 * cov_ij, 1e-13 * both)


@numba.njit(cache=True, inline="always")
def _moment_change(m, v, inv_v, old_mean, old_var):
    """Squared moment change of a margin marginal since the previous pass:
    ``max((d mean)^2 / var, (d var / var)^2)``."""
    dm = m - old_mean
    return max(dm * dm * inv_v, ((v - old_var) * inv_v) ** 2)


@numba.njit(cache=True, inline="always")
def _site_update(m, inv_v, prec, shift, c, a, kappa, log_a, alpha):
    """Undamped (power) EP update of one step site from its margin marginal
    ``N(m, 1/inv_v)`` and its current parameters: ``(ok, prec, shift)``,
    ``ok`` False (parameters unchanged) when the cavity is improper or the
    update not finite.

    Cavity ``q / site^alpha``; ``(c, a, kappa, log_a)`` are the weights of
    ``alpha kappa`` (the tilted ``cavity * t^alpha``); the new site is
    ``(q_new / cavity)^(1/alpha)`` [Min04]."""
    tau_c = inv_v - alpha * prec
    nu_c = m * inv_v - alpha * shift
    if not (tau_c > 0.0 and math.isfinite(tau_c) and math.isfinite(nu_c)):
        return False, prec, shift
    _, new_prec, new_shift = _pair_tilted(tau_c, nu_c, c, a, kappa, log_a)
    if not (math.isfinite(new_prec) and math.isfinite(new_shift)):
        return False, prec, shift
    # 1 / alpha is hoisted out of the pass (a division by alpha is not)
    inv_alpha = 1.0 / alpha
    return True, new_prec * inv_alpha, new_shift * inv_alpha


@numba.njit(cache=True, inline="always")
def _site_energy(m, v, prec, shift, c, a, kappa, log_a, alpha):
    """``(ok, (log Z_alpha + phi(cavity) - phi(marginal)) / alpha)`` of one
    site, ``phi(tau, nu) = nu^2 / (2 tau) - log(tau) / 2`` the
    log-normaliser of a 1-D Gaussian in natural parameters (the 2 pi
    cancels), the cavity ``q / site^alpha`` and ``Z_alpha`` the normaliser of
    ``cavity * t^alpha`` (weights of ``alpha kappa``): ``log`` of the site's
    constant ``C`` in ``t^alpha ~ C^alpha site^alpha`` [Min04]; ``ok`` False
    when the cavity is improper."""
    tau = 1.0 / v
    tau_c = tau - alpha * prec
    nu_c = m * tau - alpha * shift
    if not (tau_c > 0.0 and math.isfinite(tau_c)):
        return False, 0.0
    log_z, _, _ = _pair_tilted(tau_c, nu_c, c, a, kappa, log_a)
    return True, (log_z + 0.5 * (nu_c / tau_c) * nu_c - 0.5 * math.log(tau_c)
                  - 0.5 * m * m * tau + 0.5 * math.log(tau)) / alpha


@numba.njit(cache=True, inline="always")
def _pair_row(i, score_mean, score_var, cov_pn, site_prec, site_shift, active,
              c, a, kappa, log_a, alpha, has_previous, pair_mean, pair_var,
              target_prec, target_shift, row_change, row_improper):
    """The pairs (i, .) of positive i: see :func:`pair_sweep`."""
    n_pos, n_neg = site_prec.shape
    worst = 0.0
    bad = 0
    for j in range(n_neg):
        target_prec[i, j] = site_prec[i, j]
        target_shift[i, j] = site_shift[i, j]
        if not active[i, j]:
            continue
        m = score_mean[i] - score_mean[n_pos + j]
        v = _difference_var(score_var[i], score_var[n_pos + j], cov_pn[i, j])
        inv_v = 1.0 / v
        if has_previous:
            ch = _moment_change(m, v, inv_v, pair_mean[i, j], pair_var[i, j])
            if not ch <= worst:       # also catches NaN
                worst = ch
        pair_mean[i, j] = m
        pair_var[i, j] = v
        ok, prec, shift = _site_update(m, inv_v, site_prec[i, j],
                                       site_shift[i, j], c, a, kappa, log_a,
                                       alpha)
        target_prec[i, j] = prec
        target_shift[i, j] = shift
        if not ok:
            bad += 1
    row_change[i] = math.sqrt(worst)
    row_improper[i] = bad


# fastmath "contract" only: fused multiply-adds (the normal cdf's polynomial,
# pac_particles.core.normal), no reordering; serial and parallel alike
@numba.njit(cache=True, fastmath={"contract"})
def _pair_sweep_serial(score_mean, score_var, cov_pn, site_prec, site_shift,
                       active, c, a, kappa, log_a, alpha, has_previous,
                       pair_mean, pair_var, target_prec, target_shift,
                       row_change, row_improper):
    for i in range(site_prec.shape[0]):
        _pair_row(i, score_mean, score_var, cov_pn, site_prec, site_shift,
                  active, c, a, kappa, log_a, alpha, has_previous, pair_mean,
                  pair_var, target_prec, target_shift, row_change,
                  row_improper)


@numba.njit(cache=True, parallel=True, fastmath={"contract"})
def _pair_sweep_parallel(score_mean, score_var, cov_pn, site_prec, site_shift,
                         active, c, a, kappa, log_a, alpha, has_previous,
                         pair_mean, pair_var, target_prec, target_shift,
                         row_change, row_improper):
    for i in numba.prange(site_prec.shape[0]):
        _pair_row(i, score_mean, score_var, cov_pn, site_prec, site_shift,
                  active, c, a, kappa, log_a, alpha, has_previous, pair_mean,
                  pair_var, target_prec, target_shift, row_change,
                  row_improper)


def pair_sweep(score_mean, score_var, cov_pn, site_prec, site_shift, active,
               kappa, has_previous, pair_mean, pair_var, target_prec,
               target_shift, row_change, row_improper, alpha=1.0):
    """One fused O(P) pass over the pairs (writes into the last six arrays).

    From the node marginals (``score_mean``, ``score_var``, positives first)
    and the pos x neg block ``cov_pn`` of the score covariance it computes
    every pair marginal ``u_ij ~ N(pair_mean, pair_var)``, its change since
    the previous pass (``|d mean| / sd`` and ``|d var| / var``, per row of
    positives in ``row_change``; the buffers hold the previous values on
    entry) and the undamped EP update of each site (``target_*``). A site
    whose cavity is improper keeps its value (removing it would not define a
    tilted distribution) and is counted in ``row_improper``. Sites outside
    ``active`` (tied pairs) are skipped. ``alpha`` < 1: the power-EP update
    (see the module docstring).
    """
    # the tilted distribution is cavity * t^alpha: a site of weight alpha kappa
    kappa = float(alpha) * float(kappa)
    a = -math.expm1(-kappa)
    kernel = parallel.dispatch(_pair_sweep_serial, _pair_sweep_parallel,
                               work=site_prec.size * parallel.NORMAL_CDF_ITEMS)
    kernel(score_mean, score_var, cov_pn, site_prec, site_shift, active,
           math.exp(-kappa), a, kappa, math.log(a), float(alpha),
           has_previous, pair_mean, pair_var, target_prec, target_shift,
           row_change, row_improper)


def pair_energy(pair_mean, pair_var, site_prec, site_shift, active, kappa,
                alpha=1.0):
    """Per-row sums of ``log Z_ij + phi(cavity) - phi(posterior)``; for
    power EP (``alpha`` < 1) ``(log Z_alpha + phi(cavity) - phi(posterior))
    / alpha`` with the cavity ``q / site^alpha`` [Min04].

    ``phi(tau, nu) = nu^2 / (2 tau) - log(tau) / 2`` is the log-normaliser of
    a 1-D Gaussian in natural parameters (the 2 pi cancels). Returns
    ``(row energies, row counts of improper cavities)``.
    """
    return _pair_energy(pair_mean, pair_var, site_prec, site_shift, active,
                        float(kappa), float(alpha))


@numba.njit(cache=True)
def _pair_energy(pair_mean, pair_var, site_prec, site_shift, active, kappa,
                 alpha):
    kappa = alpha * kappa
    c = math.exp(-kappa)
    a = -math.expm1(-kappa)
    log_a = math.log(a)
    n_pos, n_neg = site_prec.shape
    energy = np.zeros(n_pos)
    improper = np.zeros(n_pos, dtype=np.int64)
    for i in range(n_pos):
        total = 0.0
        bad = 0
        for j in range(n_neg):
            if not active[i, j]:
                continue
            ok, e = _site_energy(pair_mean[i, j], pair_var[i, j],
                                 site_prec[i, j], site_shift[i, j], c, a,
                                 kappa, log_a, alpha)
            total += e
            bad += not ok
        energy[i] = total
        improper[i] = bad
    return energy, improper
