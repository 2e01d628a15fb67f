"""EP sites on a list of margins: points ``u_k = y_k s_i`` or sampled pairs ``u_k = s_i - s_j``.

The full AUC pair grid (:mod:`pac_particles.approx.ep.sites`) is one risk among
others: a risk whose margins are an explicit *list* -- one node per margin
(classification, ``u_i = y_i s_i`` [ARC16, Sec. 3]) or two (a sample of B
positive/negative pairs, the incomplete U-statistic of [CCB16]) -- has one
step site ``t_k(u) = exp(-kappa_k 1{u < 0})`` per listed margin, with its own
weight ``kappa_k`` (``lam w_k`` for the weighted positive-unlabelled risk,
``lam / B`` for sampled pairs). The tilted moments are those of the pair
sites (the same inline function, ``pac_particles.approx.ep.sites._pair_tilted``),
and so is the power-EP update of a fraction ``alpha`` [Min04]: the kernels
take ``alpha`` and the :func:`site_weights` of ``alpha kappa``.

A margin ``k`` reads node ``first[k]`` with sign ``sign[k]`` and, for a
pair, subtracts node ``second[k]`` (``-1`` for a point margin). Its
marginal under the score covariance ``B' B`` (``B`` r x n) is::

    mean = sign_k m_i - m_j,     var = v_i + v_j - 2 (B' B)_ij,

the cross term read from ``Bt = B'`` (n x r) inside the kernel, O(r) per
pair: no pos x neg block. :func:`margin_sweep` does one EP pass over the
list in chunks (``prange`` on large lists, :func:`pac_particles.core.parallel.dispatch`),
:func:`margin_energy` the sites' share of the EP energy.

Example
-------
::

    import numpy as np
    from pac_particles.approx.ep.sparse_sites import site_weights
    c, a, kappa, log_a = site_weights(np.full(4, 0.2))   # per-site kappa

References
----------
[ARC16] Alquier, P., Ridgway, J. and Chopin, N. (2016). On the properties of
variational approximations of Gibbs posteriors. JMLR 17(239), 1-41.

[CCB16] Clemencon, S., Colin, I. and Bellet, A. (2016). Scaling-up empirical
risk minimization: optimization of incomplete U-statistics. JMLR 17(76),
1-36.

Minka, T. (2001). Expectation Propagation for approximate Bayesian inference.
UAI 17, 362-369.

[Min04] Minka, T. (2004). Power EP. Technical report MSR-TR-2004-149,
Microsoft Research.
"""

import math

import numba
import numpy as np

from pac_particles.core import parallel
from pac_particles.approx.ep.sites import (_difference_var, _moment_change, _site_energy,
                    _site_update)

__all__ = ["site_weights", "margin_sweep", "margin_energy", "CHUNK"]

#: Margins per chunk of the pass (one change / improper count per chunk).
CHUNK = 4096


def site_weights(kappa):
    """``(c, a, kappa, log a)`` arrays, ``c = e^-kappa``, ``a = 1 - c``,
    for a scalar ``kappa`` (arrays of length 1: shared by every site) or
    one per site."""
    kappa = np.atleast_1d(np.asarray(kappa, dtype=float)).copy()
    a = -np.expm1(-kappa)
    return np.exp(-kappa), a, kappa, np.log(a)


@numba.njit(cache=True, inline="always")
def _margin_moments(k, first, second, sign, score_mean, score_var, Bt):
    """Marginal ``(mean, var)`` of margin ``k`` (see the module docstring)."""
    i = first[k]
    j = second[k]
    if j < 0:
        return sign[k] * score_mean[i], score_var[i]
    cov = 0.0
    for l in range(Bt.shape[1]):
        cov += Bt[i, l] * Bt[j, l]
    return (score_mean[i] - score_mean[j],
            _difference_var(score_var[i], score_var[j], cov))


@numba.njit(cache=True, inline="always")
def _chunk(b, first, second, sign, score_mean, score_var, Bt, site_prec,
           site_shift, active, c, a, kappa, log_a, alpha, has_previous,
           margin_mean, margin_var, target_prec, target_shift, change,
           improper):
    """Margins ``[b CHUNK, (b + 1) CHUNK)``: see :func:`margin_sweep`."""
    shared = kappa.size == 1
    worst = 0.0
    bad = 0
    for k in range(b * CHUNK, min(first.size, (b + 1) * CHUNK)):
        target_prec[k] = site_prec[k]
        target_shift[k] = site_shift[k]
        if not active[k]:
            continue
        m, v = _margin_moments(k, first, second, sign, score_mean, score_var,
                               Bt)
        inv_v = 1.0 / v
        if has_previous:
            ch = _moment_change(m, v, inv_v, margin_mean[k], margin_var[k])
            if not ch <= worst:       # also catches NaN
                worst = ch
        margin_mean[k] = m
        margin_var[k] = v
        w = 0 if shared else k
        ok, prec, shift = _site_update(m, inv_v, site_prec[k], site_shift[k],
                                       c[w], a[w], kappa[w], log_a[w], alpha)
        target_prec[k] = prec
        target_shift[k] = shift
        if not ok:
            bad += 1
    change[b] = math.sqrt(worst)
    improper[b] = bad


@numba.njit(cache=True)
def _margin_sweep_serial(first, second, sign, score_mean, score_var, Bt,
                         site_prec, site_shift, active, c, a, kappa, log_a,
                         alpha, has_previous, margin_mean, margin_var,
                         target_prec, target_shift, change, improper):
    for b in range(change.size):
        _chunk(b, first, second, sign, score_mean, score_var, Bt, site_prec,
               site_shift, active, c, a, kappa, log_a, alpha, has_previous,
               margin_mean, margin_var, target_prec, target_shift, change,
               improper)


@numba.njit(cache=True, parallel=True)
def _margin_sweep_parallel(first, second, sign, score_mean, score_var, Bt,
                           site_prec, site_shift, active, c, a, kappa, log_a,
                           alpha, has_previous, margin_mean, margin_var,
                           target_prec, target_shift, change, improper):
    for b in numba.prange(change.size):
        _chunk(b, first, second, sign, score_mean, score_var, Bt, site_prec,
               site_shift, active, c, a, kappa, log_a, alpha, has_previous,
               margin_mean, margin_var, target_prec, target_shift, change,
               improper)


def n_chunks(n_sites):
    """Number of chunks of a list of ``n_sites`` margins."""
    return max(1, -(-n_sites // CHUNK))


def margin_sweep(first, second, sign, score_mean, score_var, Bt, site_prec,
                 site_shift, active, weights, has_previous, margin_mean,
                 margin_var, target_prec, target_shift, change, improper,
                 alpha=1.0):
    """One O(K) EP pass over a list of K margins (writes into the last six
    arrays), the analogue of :func:`pac_particles.approx.ep.sites.pair_sweep`.

    ``weights`` is :func:`site_weights` of the sites' kappa; ``Bt`` the
    (n, r) transpose of the score covariance factor (read for pair margins
    only; any (0, r) array for point margins). ``change`` and ``improper``
    have one entry per chunk (:func:`n_chunks`): the largest moment change
    since the previous pass (``|d mean| / sd``, ``|d var| / var``) and the
    number of sites left unchanged because their cavity was improper.
    Power EP: ``alpha`` < 1 with ``weights`` of ``alpha kappa``.
    """
    kernel = parallel.dispatch(_margin_sweep_serial, _margin_sweep_parallel,
                               work=first.size * max(1, Bt.shape[1] // 4))
    kernel(first, second, sign, score_mean, score_var, Bt, site_prec,
           site_shift, active, *weights, float(alpha), has_previous,
           margin_mean, margin_var, target_prec, target_shift, change,
           improper)


@numba.njit(cache=True)
def _margin_energy(margin_mean, margin_var, site_prec, site_shift, active, c,
                   a, kappa, log_a, alpha):
    shared = kappa.size == 1
    total = 0.0
    bad = 0
    for k in range(site_prec.size):
        if not active[k]:
            continue
        w = 0 if shared else k
        ok, e = _site_energy(margin_mean[k], margin_var[k], site_prec[k],
                             site_shift[k], c[w], a[w], kappa[w], log_a[w],
                             alpha)
        total += e
        bad += not ok
    return total, bad


def margin_energy(margin_mean, margin_var, site_prec, site_shift, active,
                  weights, alpha=1.0):
    """Sum over the listed sites of ``log Z_k + phi(cavity) -
    phi(marginal)`` (power EP: divided by ``alpha``, ``weights`` of ``alpha
    kappa``; see :func:`pac_particles.approx.ep.sites.pair_energy`), and the number
    of improper cavities."""
    return _margin_energy(margin_mean, margin_var, site_prec, site_shift,
                          active, *weights, float(alpha))
