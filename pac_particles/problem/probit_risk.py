"""The Gaussian-smoothed AUC pair risk and its gradients.

For a Gaussian ``rho = N(m, S)`` over linear scores ``x . theta`` the
expected AUC risk is in closed form [ARC16, Section 5]::

    E_rho[R_n] = (1/P) sum_{i: y_i=1} sum_{j: y_j=0} Phi(-t_ij),
    t_ij = (d_ij . m) / sqrt(d_ij' S d_ij),      d_ij = x_i - x_j,

pairs with ``d_ij = 0`` tying (1/2) whatever ``rho``. Two algorithms need it:

* Gaussian VB (:mod:`pac_particles.approx.vb`) minimises it over one ``N(m, S)`` at a
  time, with its gradients in ``m`` and ``S`` (:class:`GaussianPairRisk`);
* SVGD (:mod:`pac_particles.approx.svgd`) smooths the risk of each particle
  ``theta`` with ``S = (h ||theta||)^2 I`` [LW16]:
  ``R_h(theta) = (1/P) sum Phi(-(d_ij . theta) / (h ||theta|| ||d_ij||))``,
  for a batch of particles at a time (:class:`SmoothedPairRisk`).

They share every per-pair piece, defined once here: the pair variance
``d_ij' S d_ij = a_i + a_j - 2 b_ij`` (``a = diag(X S X')``,
``b = X_pos S X_neg'`` by BLAS, so no difference vector is formed) with its
cancellation fallback -- near-duplicate pairs, where that difference has lost
its digits, are recomputed from ``d_ij`` --, the probit terms ``Phi(-t)``,
``phi(t) / sd`` and ``d Phi / d var``, ties from
:func:`pac_particles.problem.risks.duplicate_groups`, the blocks of positives that
bound the memory, and the incomplete U-statistic on pairs drawn uniformly
with replacement (:meth:`pac_particles.problem.risks.AUCRisk.draw_pairs`; unbiased,
Clemencon, Colin & Bellet 2016). VB's variances change with ``S`` at every
call; SVGD's ``1 / ||d_ij||`` do not and are cached once. Gradients come back
through per-point sums (the bipartite Laplacian of
:class:`pac_particles.problem.risks.AUCRisk`)::

    sum_ij w_ij d_ij       = X_pos' (W 1) - X_neg' (W' 1),
    sum_ij u_ij d_ij d_ij' = X_pos' diag(U 1) X_pos + X_neg' diag(U' 1) X_neg
                             - X_pos' U X_neg - X_neg' U' X_pos,

so one evaluation costs O(P d) time (plus O(n d^2) for a full ``S``) and
O(block) memory whatever ``P``. The numba kernels, each with a serial and a
``prange`` version, are :mod:`pac_particles.problem.probit_kernels`; this
module blocks, caches and sums their terms.

Example
-------
::

    import numpy as np
    from pac_particles.problem.probit_risk import expected_auc_risk, smoothed_auc_risk
    rng = np.random.default_rng(0)
    X_pos, X_neg = rng.normal(1, 1, (30, 3)), rng.normal(0, 1, (40, 3))
    m = np.array([1.0, 0.5, 0.0])
    expected_auc_risk(m, 0.01 * np.eye(3), X_pos, X_neg)
    smoothed_auc_risk(m, X_pos, X_neg, bandwidth=0.1)   # S = (0.1 |m|)^2 I

References
----------
[ARC16] Alquier, P., Ridgway, J. and Chopin, N. (2016). On the properties of
variational approximations of Gibbs posteriors. JMLR 17(239), 1-41.

[LW16] Liu, Q. and Wang, D. (2016). Stein variational gradient descent: a
general purpose Bayesian inference algorithm. NIPS 29.

Clemencon, S., Colin, I. and Bellet, A. (2016). Scaling-up empirical risk
minimization: optimization of incomplete U-statistics. JMLR 17(76), 1-36.
"""

import numpy as np

from pac_particles.core.checks import InputError, check_finite_array, check_positive
from pac_particles.problem.auc import split_risk
from pac_particles.problem.probit_kernels import (
    BATCH_SUMS_FIXED, CANCELLATION_RTOL, gaussian_block, gram_terms,
    inverse_pair_norms, pair_batch_sums, sampled_inverse_norms,
    smoothed_block, smoothed_sampled)
from pac_particles.problem.risks import duplicate_groups

__all__ = ["expected_auc_risk", "check_gaussian_pairs", "smoothed_auc_risk",
           "GaussianPairRisk", "SmoothedPairRisk"]

# Pair entries per block of positives (8 MB per float64 buffer).
_BLOCK_ENTRIES = 1_000_000
# SVGD keeps its inverse pair norms between evaluations when P is at most
# this (32 MB); above, it recomputes them block by block.
_CACHE_ENTRIES = 4_000_000


def _block_rows(n_pos, n_neg, block_entries):
    """Positives per block of at most ``block_entries`` pair entries."""
    entries = _BLOCK_ENTRIES if block_entries is None else int(block_entries)
    return max(1, min(n_pos, entries // max(n_neg, 1)))


def _batch_sums(X_pos, X_neg, ip, jn, m, cov, need_grad=True, full_grad=None,
                scores=None):
    ip = np.ascontiguousarray(ip, dtype=np.int64)
    jn = np.ascontiguousarray(jn, dtype=np.int64)
    return pair_batch_sums(ip, jn, X_pos, X_neg, m, cov, need_grad,
                           full_grad, scores)


def _pair_terms_sampled(X_pos, X_neg, ip, jn, m, cov, need_grad=True,
                        full_grad=None):
    """:class:`GaussianPairRisk` on the pairs ``(ip[b], jn[b])`` only (an
    incomplete U-statistic): ``(risk, grad_m, grad_cov, risk_sd)``, the last
    the standard deviation of the per-pair terms. One pass over the sampled
    pairs' rows (:func:`~pac_particles.problem.probit_kernels.pair_batch_sums`),
    O(B d) whatever n; ties are the pairs of equal rows."""
    n = len(ip)
    d = X_pos.shape[1]
    sums = _batch_sums(X_pos, X_neg, ip, jn, m, cov, need_grad, full_grad)
    risk = sums[0] / n
    risk_sd = float(np.sqrt(max(sums[1] / n - risk * risk, 0.0)))
    if not need_grad:
        return risk, None, None, risk_sd
    k = BATCH_SUMS_FIXED
    grad_m = sums[k:k + d] / n
    grad_cov = sums[k + d:] / n
    if grad_cov.size == d * d:
        grad_cov = grad_cov.reshape(d, d)
        grad_cov = 0.5 * (grad_cov + grad_cov.T)
    return risk, grad_m, grad_cov, risk_sd


class GaussianPairRisk:
    """``E_rho[R_n]`` and its gradients for one Gaussian ``rho = N(m, S)``.

    ``cov`` is a (d, d) matrix or, for diagonal covariances, a (d,) vector of
    variances; with a vector only the diagonal of the covariance gradient is
    formed (no d x d work anywhere).

    Parameters
    ----------
    X_pos, X_neg : (n_pos, d), (n_neg, d) arrays.
    block_entries : int, optional
        Pair entries per block (memory: two float64 buffers of this size).
    """

    def __init__(self, X_pos, X_neg, block_entries=None):
        self.X_pos = np.ascontiguousarray(X_pos, dtype=float)
        self.X_neg = np.ascontiguousarray(X_neg, dtype=float)
        self.n_pos, self.d = self.X_pos.shape
        self.n_neg = self.X_neg.shape[0]
        self.n_pairs = self.n_pos * self.n_neg
        self._groups = None
        self.block_rows = _block_rows(self.n_pos, self.n_neg, block_entries)

    def _duplicate_groups(self):
        # the exact blocks' tie labels, computed on first use: np.unique
        # over the rows costs seconds at 10^6 rows, and the sampled pairs
        # find their ties from the difference vector instead
        if self._groups is None:
            groups = duplicate_groups(np.vstack([self.X_pos, self.X_neg]))
            self._groups = (np.ascontiguousarray(groups[:self.n_pos]),
                            np.ascontiguousarray(groups[self.n_pos:]))
        return self._groups

    @property
    def gid_pos(self):
        return self._duplicate_groups()[0]

    @property
    def gid_neg(self):
        return self._duplicate_groups()[1]

    def __call__(self, m, cov, need_grad=True):
        """Return ``(E_rho[R_n], grad_m, grad_cov)``.

        ``grad_cov`` is ``dE/dS`` (symmetric, (d, d)) for a matrix ``cov`` and
        its diagonal for a vector ``cov``; both gradients are None when
        ``need_grad`` is False.
        """
        Xp, Xn = self.X_pos, self.X_neg
        diag = cov.ndim == 1
        XS_pos, s_pos, s_neg, a_pos, a_neg, cov2d, kind = gram_terms(
            Xp, Xn, m, cov)
        rows = self.block_rows
        buf_b = np.empty((rows, self.n_neg))
        buf_w = np.empty((rows, self.n_neg))
        f_row = np.empty(self.n_pos)
        w_row = np.empty(self.n_pos)
        u_row = np.empty(self.n_pos)
        w_col = np.zeros(self.n_neg)
        u_col = np.zeros(self.n_neg)
        cross = np.zeros(self.d if diag else (self.d, self.d))
        for start in range(0, self.n_pos, rows):
            stop = min(start + rows, self.n_pos)
            nb = stop - start
            bb, bw = buf_b[:nb], buf_w[:nb]
            np.matmul(XS_pos[start:stop], Xn.T, out=bb)
            gaussian_block(s_pos[start:stop], s_neg, a_pos[start:stop], a_neg,
                           self.gid_pos[start:stop], self.gid_neg,
                           Xp[start:stop], Xn, m, cov2d, kind, bb, bw,
                           f_row[start:stop], w_row[start:stop],
                           u_row[start:stop])
            if need_grad:
                w_col += bw.sum(axis=0)
                u_col += bb.sum(axis=0)
                UXn = bb @ Xn                          # (nb, d)
                if diag:
                    cross += np.einsum("ij,ij->j", Xp[start:stop], UXn)
                else:
                    cross += Xp[start:stop].T @ UXn
        P = float(self.n_pairs)
        risk = f_row.sum() / P
        if not need_grad:
            return risk, None, None
        grad_m = (Xp.T @ w_row - Xn.T @ w_col) / P
        if diag:
            grad_cov = (u_row @ Xp**2 + u_col @ Xn**2 - 2.0 * cross) / P
        else:
            grad_cov = ((Xp * u_row[:, None]).T @ Xp
                        + (Xn * u_col[:, None]).T @ Xn - cross - cross.T) / P
        return risk, grad_m, grad_cov

    def pair_terms(self, m, cov):
        """Every pair's ``(w, u) = (dPhi_ij / dmu_ij, dPhi_ij / dvar_ij)``
        as two (n_pos, n_neg) arrays (the kernel of :meth:`__call__`, in one
        block: O(P) memory), and the pairs' ``mu_ij``. Gaussian smoothing
        gives ``d^2 Phi_ij / dmu_ij^2 = 2 u`` (heat equation); tied pairs
        have ``w = u = 0``."""
        Xp, Xn = self.X_pos, self.X_neg
        m = np.ascontiguousarray(m, dtype=float)
        XS_pos, s_pos, s_neg, a_pos, a_neg, cov2d, kind = gram_terms(
            Xp, Xn, m, cov)
        u = XS_pos @ Xn.T                 # x_i' S x_j on entry, u on exit
        w = np.empty_like(u)
        gaussian_block(s_pos, s_neg, a_pos, a_neg, self.gid_pos, self.gid_neg,
                       Xp, Xn, m, cov2d, kind, u, w, np.empty(self.n_pos),
                       np.empty(self.n_pos), np.empty(self.n_pos))
        return w, u, s_pos[:, None] - s_neg[None, :]

    def sampled(self, ip, jn, m, cov, need_grad=True):
        """The same on the pairs ``(ip[b], jn[b])``; also returns the
        standard deviation of the per-pair terms."""
        return _pair_terms_sampled(self.X_pos, self.X_neg, ip, jn, m, cov,
                                   need_grad)

    def sampled_full(self, ip, jn, m, cov):
        """:meth:`sampled` with the full (d, d) ``dE/dS`` whatever ``cov``
        (its diagonal is the diagonal family's gradient; the whole matrix is
        the Hessian in ``m``, ``2 dE/dS`` by Price's theorem)."""
        return _pair_terms_sampled(self.X_pos, self.X_neg, ip, jn, m, cov,
                                   True, True)

    def estimate(self, m, cov, rng, n_pairs):
        """``(E_rho[R_n], its standard error)`` from ``n_pairs`` pairs drawn
        uniformly with replacement, without an O(P) sum.

        The step risk of the mean scores ``R_n(x . m)`` is exact in
        O(n log n) (:func:`~pac_particles.problem.auc.split_risk`); the
        sampled pairs estimate only the smoothing's correction ``Phi_b -
        step_b``, which vanishes outside the pairs that ``rho`` may
        reorder (a control variate: unbiased, with a far smaller variance
        than ``Phi_b`` itself once ``S`` is small)."""
        m = np.ascontiguousarray(m, dtype=float)
        s_pos, s_neg = self.X_pos @ m, self.X_neg @ m
        step = float(split_risk(s_pos, s_neg))
        ip = rng.integers(self.n_pos, size=n_pairs)
        jn = rng.integers(self.n_neg, size=n_pairs)
        sums = _batch_sums(self.X_pos, self.X_neg, ip, jn, m, cov, False,
                           False, (s_pos, s_neg))
        mean = sums[2] / n_pairs
        var = max(sums[3] / n_pairs - mean * mean, 0.0)
        return step + mean, float(np.sqrt(var / n_pairs))


def _check_pairs_data(X_pos, X_neg, d, what):
    """``X_pos``, ``X_neg`` as float arrays with ``d`` columns and a row
    each at least, or InputError."""
    X_pos = check_finite_array(X_pos, "X_pos")
    X_neg = check_finite_array(X_neg, "X_neg")
    if X_pos.ndim != 2 or X_neg.ndim != 2 or X_pos.shape[1] != d \
            or X_neg.shape[1] != d:
        raise InputError(f"{what} and X_pos, X_neg (n, d); got "
                         f"{X_pos.shape}, {X_neg.shape} with d = {d}")
    if X_pos.shape[0] == 0 or X_neg.shape[0] == 0:
        raise InputError("need at least one positive and one negative")
    return X_pos, X_neg


def expected_auc_risk(mean, cov, X_pos, X_neg, block_entries=None):
    """``E_rho[R_n]`` for ``rho = N(mean, cov)``, exactly, over all pairs.

    Parameters
    ----------
    mean : (d,) array
    cov : (d, d) array, or (d,) array of variances for a diagonal covariance
    X_pos, X_neg : (n_pos, d), (n_neg, d) arrays on the scale of ``mean``
        (e.g. ``AUCData.X_pos``, ``AUCData.X_neg``).
    block_entries : int, optional
        Pair entries per block (memory is two float64 buffers of this size).

    Returns
    -------
    float
        ``(1/P) sum_ij Phi(-(d_ij . m)/sqrt(d_ij' S d_ij))``, pairs with
        ``d_ij = 0`` counting 1/2: the expected fraction of mis-ordered pairs
        of a score ``x . theta``, ``theta ~ rho``.
    """
    m, cov, X_pos, X_neg = check_gaussian_pairs(mean, cov, X_pos, X_neg)
    risk, _, _ = GaussianPairRisk(X_pos, X_neg, block_entries)(
        m, cov, need_grad=False)
    return risk


def check_gaussian_pairs(mean, cov, X_pos, X_neg):
    """``(mean, cov, X_pos, X_neg)`` as contiguous float arrays of matching
    shapes (``mean`` (d,), ``cov`` (d,) or (d, d), the inputs (n, d) with a
    row each at least), or InputError naming the problem (NaN, inf,
    shapes). A (d, d) ``cov`` with no entry off its diagonal comes back as
    its (d,) variances: the same risk, whose pair kernels then read a pair's
    variance in O(d) instead of O(d^2) (a diagonal family's summary)."""
    m = np.ascontiguousarray(check_finite_array(mean, "mean"))
    cov = np.ascontiguousarray(check_finite_array(cov, "cov"))
    if m.ndim != 1:
        raise InputError(f"mean must be (d,), got {m.shape}")
    d = m.shape[0]
    X_pos, X_neg = _check_pairs_data(X_pos, X_neg, d, "mean must be (d,)")
    if cov.shape not in ((d,), (d, d)):
        raise InputError(f"cov must have shape ({d},) or ({d}, {d}), got "
                         f"{cov.shape}")
    if cov.ndim == 2 and np.count_nonzero(cov) == np.count_nonzero(
            np.diagonal(cov)):
        cov = np.ascontiguousarray(np.diagonal(cov))
    return m, cov, X_pos, X_neg




class SmoothedPairRisk:
    """``R_h`` and its gradient for a batch of particles.

    ``R_h(theta)`` is ``E_rho[R_n]`` at ``rho = N(theta, (h ||theta||)^2 I)``;
    ``grad R_h(theta) = -(I - u u') g / (P h ||theta||)`` with
    ``u = theta / ||theta||`` and ``g = sum_ij phi(t_ij) d_ij / ||d_ij||``
    (``R_h`` is scale-invariant, so its gradient is orthogonal to ``theta``).
    ``R_h(0)`` is 1/2 with a zero gradient (every score ties). The inverse
    pair norms are kept between calls when ``P <= cache_entries``.
    """

    def __init__(self, X_pos, X_neg, bandwidth, block_entries=None,
                 cache_entries=None):
        self.X_pos = np.ascontiguousarray(X_pos, dtype=float)
        self.X_neg = np.ascontiguousarray(X_neg, dtype=float)
        self.bandwidth = float(bandwidth)
        self.n_pos, self.d = self.X_pos.shape
        self.n_neg = self.X_neg.shape[0]
        self.n_pairs = self.n_pos * self.n_neg
        self.sq_pos = np.einsum("ij,ij->i", self.X_pos, self.X_pos)
        self.sq_neg = np.einsum("ij,ij->i", self.X_neg, self.X_neg)
        self.block_rows = _block_rows(self.n_pos, self.n_neg, block_entries)
        limit = _CACHE_ENTRIES if cache_entries is None else int(cache_entries)
        self._cache = None
        if self.n_pairs <= limit:
            self._cache = [block for _, block in self._blocks()]

    def _blocks(self):
        """Yield ``(start, inverse pair norms of positives start..)``."""
        for k, start in enumerate(range(0, self.n_pos, self.block_rows)):
            if self._cache is not None:
                yield start, self._cache[k]
                continue
            stop = min(start + self.block_rows, self.n_pos)
            gram = self.X_pos[start:stop] @ self.X_neg.T
            out = np.empty_like(gram)
            inverse_pair_norms(self.X_pos, self.X_neg, self.sq_pos,
                               self.sq_neg, gram, start, CANCELLATION_RTOL,
                               out)
            yield start, out

    def __call__(self, theta, pairs=None, need_risk=True, need_grad=True):
        """Return ``(R_h, grad R_h)``: arrays (N,) and (N, d) (or None).

        ``pairs=(ip, jn)``: use these pairs (indices into ``X_pos``,
        ``X_neg``) instead of all ``P``.
        """
        theta = np.ascontiguousarray(theta, dtype=float)
        n_particles = theta.shape[0]
        radius = np.sqrt(np.einsum("ij,ij->i", theta, theta))
        safe = np.where(radius > 0, radius, 1.0)
        # R_h(0) = 1/2 with zero gradient: every score ties
        inv_h = np.where(radius > 0, 1.0 / (self.bandwidth * safe), 0.0)
        s_pos = theta @ self.X_pos.T
        s_neg = theta @ self.X_neg.T
        f = np.zeros(n_particles)
        w_row = np.zeros((n_particles, self.n_pos))
        w_col = np.zeros((n_particles, self.n_neg))
        if pairs is None:
            n_used = self.n_pairs
            for start, inv_norm in self._blocks():
                smoothed_block(s_pos, s_neg, inv_norm, start, inv_h, need_risk,
                               need_grad, f, w_row, w_col)
        else:
            ip, jn = (np.ascontiguousarray(p, dtype=np.int64) for p in pairs)
            n_used = ip.shape[0]
            inv_norm = sampled_inverse_norms(self.X_pos, self.X_neg, ip, jn)
            smoothed_sampled(s_pos, s_neg, ip, jn, inv_norm, inv_h, need_risk,
                             need_grad, f, w_row, w_col)
        risk = f / n_used if need_risk else None
        if not need_grad:
            return risk, None
        g = w_row @ self.X_pos - w_col @ self.X_neg
        unit = theta / safe[:, None]
        g -= np.einsum("ij,ij->i", g, unit)[:, None] * unit
        return risk, -(inv_h / n_used)[:, None] * g


def smoothed_auc_risk(theta, X_pos, X_neg, bandwidth=0.1, grad=False):
    """Smoothed AUC risk ``R_h`` of linear scores, for a batch of particles.

    ``R_h(theta) = (1/P) sum_ij Phi(-(d_ij . theta) / (h ||theta|| ||d_ij||))``:
    the expected risk of ``N(theta, (h ||theta||)^2 I)``; ``-> R_n`` (ties
    1/2) as ``h -> 0``.

    Parameters
    ----------
    theta : (N, d) or (d,) array
    X_pos, X_neg : (n_pos, d), (n_neg, d) arrays on the scale of ``theta``.
    bandwidth : float > 0
        Relative bandwidth ``h`` (radians of angular smoothing, roughly).
    grad : bool
        Also return the gradient with respect to ``theta``.

    Returns
    -------
    risk : (N,) array (float for 1-D ``theta``); and ``grad`` (N, d) or (d,)
    when ``grad=True``.
    """
    h = check_positive(bandwidth, "bandwidth")
    th = check_finite_array(theta, "theta")
    one = th.ndim == 1
    th = np.atleast_2d(th)
    if th.ndim != 2:
        raise InputError(f"theta must be (N, d) or (d,), got {th.shape}")
    X_pos, X_neg = _check_pairs_data(X_pos, X_neg, th.shape[1],
                                     "theta must be (N, d) or (d,)")
    risk, g = SmoothedPairRisk(X_pos, X_neg, h)(th, need_grad=grad)
    if one:
        risk, g = float(risk[0]), (None if g is None else g[0])
    return (risk, g) if grad else risk
