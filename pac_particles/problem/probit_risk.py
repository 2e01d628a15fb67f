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
O(block) memory whatever ``P``. Every numba kernel has a serial and a
``prange`` version chosen by :func:`pac_particles.core.parallel.dispatch`.

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

import math

import numba
import numpy as np

from pac_particles.core import parallel
from pac_particles.core.checks import InputError, check_finite_array, check_positive
from pac_particles.problem.risks import duplicate_groups

__all__ = ["expected_auc_risk", "check_gaussian_pairs", "smoothed_auc_risk",
           "GaussianPairRisk", "SmoothedPairRisk"]

# Pair entries per block of positives (8 MB per float64 buffer).
_BLOCK_ENTRIES = 1_000_000
# SVGD keeps its inverse pair norms between evaluations when P is at most
# this (32 MB); above, it recomputes them block by block.
_CACHE_ENTRIES = 4_000_000
# Below this fraction of a_i + a_j, a_i + a_j - 2 b_ij has lost most of its
# digits to cancellation: recompute d_ij' S d_ij from the difference vector.
_CANCELLATION_RTOL = 1e-8
_SQRT2 = math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
# How the kernels read ``cov``: S = I (``cov`` unused), S = diag(cov[0]),
# S = cov.
_IDENTITY, _DIAGONAL, _FULL = 0, 1, 2
_NO_COV = np.zeros((1, 1))
# What _gram_variance returns for a cancelled difference (never a variance).
_CANCELLED = -1.0


def _block_rows(n_pos, n_neg, block_entries):
    """Positives per block of at most ``block_entries`` pair entries."""
    entries = _BLOCK_ENTRIES if block_entries is None else int(block_entries)
    return max(1, min(n_pos, entries // max(n_neg, 1)))


# ------------------------------------------------------ per-pair kernels

@numba.njit(cache=True, nogil=True, inline="always")
def _difference_dot(X_pos, i, X_neg, j, m):
    """``d_ij . m`` from the difference vector."""
    mu = 0.0
    for k in range(m.shape[0]):
        mu += (X_pos[i, k] - X_neg[j, k]) * m[k]
    return mu


@numba.njit(cache=True, nogil=True, inline="always")
def _difference_quadratic(X_pos, i, X_neg, j, cov, kind):
    """``d_ij' S d_ij`` from the difference vector (``kind``: how ``S`` is
    read from ``cov``)."""
    d = X_pos.shape[1]
    var = 0.0
    for k in range(d):
        dk = X_pos[i, k] - X_neg[j, k]
        if kind == _IDENTITY:
            var += dk * dk
        elif kind == _DIAGONAL:
            var += dk * dk * cov[0, k]
        else:
            row = 0.0
            for l in range(d):
                row += cov[k, l] * (X_pos[i, l] - X_neg[j, l])
            var += dk * row
    return var


@numba.njit(cache=True, nogil=True)
def _gram_variance(a_i, a_j, b_ij, rtol):
    """``d_ij' S d_ij = a_i + a_j - 2 b_ij``, or :data:`_CANCELLED` where
    that difference has lost its digits (below ``rtol (a_i + a_j)``): the
    caller then recomputes it from the difference vector
    (:func:`_difference_quadratic`)."""
    scale = a_i + a_j
    var = scale - 2.0 * b_ij
    return _CANCELLED if var <= rtol * scale else var


@numba.njit(cache=True, nogil=True, inline="always")
def _tail(t):
    """``Phi(-t)``."""
    return 0.5 * math.erfc(t / _SQRT2)


@numba.njit(cache=True, nogil=True, inline="always")
def _density(t):
    """``phi(t)``."""
    return _INV_SQRT_2PI * math.exp(-0.5 * t * t)


@numba.njit(cache=True, nogil=True, inline="always")
def _probit_terms(mu, var):
    """``(Phi(-t), dPhi/dmu = -phi(t)/sd, dPhi/dvar = phi(t) t / (2 var))``
    with ``t = mu / sd``, ``sd = sqrt(var)``. A pair with ``var <= 0`` (``S``
    degenerate along ``d_ij``) has a deterministic score difference."""
    if var <= 0.0:
        f = 1.0 if mu < 0.0 else (0.5 if mu == 0.0 else 0.0)
        return f, 0.0, 0.0
    sd = math.sqrt(var)
    t = mu / sd
    phi = _density(t)
    return _tail(t), -phi / sd, 0.5 * phi * t / var


# ---------------------------------------------- one Gaussian (VB)

# The per-pair helpers of the hot loops take scalars only and are inlined:
# passing arrays, even to an inlined function, costs reference counting per
# pair (measured 2x on the block kernel). Arrays go only to the fallback.

@numba.njit(cache=True, nogil=True, inline="always")
def _gaussian_terms(tie, mu, a_i, a_j, b_ij, rtol):
    """:func:`_probit_terms` of a pair from ``mu = s_i - s_j`` and
    ``a_i + a_j - 2 b_ij``; ``(_CANCELLED, 0, 0)`` when that variance has
    cancelled (then :func:`_difference_terms`). A tie gives ``(1/2, 0, 0)``.
    """
    if tie:
        # identical inputs: a sure tie, constant 1/2
        return 0.5, 0.0, 0.0
    var = _gram_variance(a_i, a_j, b_ij, rtol)
    if var == _CANCELLED:
        return _CANCELLED, 0.0, 0.0
    return _probit_terms(mu, var)


@numba.njit(cache=True, nogil=True)
def _difference_terms(X_pos, i, X_neg, j, m, cov, kind):
    """:func:`_probit_terms` with ``d_ij . m`` and ``d_ij' S d_ij`` from the
    difference vector (``s_i - s_j`` cancels where ``a_i + a_j - 2 b_ij``
    does)."""
    return _probit_terms(_difference_dot(X_pos, i, X_neg, j, m),
                         _difference_quadratic(X_pos, i, X_neg, j, cov, kind))


@numba.njit(cache=True, nogil=True)
def _gaussian_row(i, s_pos, s_neg, a_pos, a_neg, gid_pos, gid_neg, X_pos,
                  X_neg, m, cov, kind, rtol, buf_b, buf_w, f_row, w_row,
                  u_row):
    """Pair terms of row ``i`` (one positive) of a block.

    On entry ``buf_b[i, j] = x_i' S x_j``. On exit ``buf_w[i, j]`` holds
    ``w_ij = dPhi_ij/dmu_ij`` and ``buf_b[i, j]`` holds
    ``u_ij = dPhi_ij/dvar_ij``; ``f_row[i]``, ``w_row[i]``, ``u_row[i]`` get
    the row sums of ``Phi_ij``, ``w_ij``, ``u_ij``.
    """
    f_sum = 0.0
    w_sum = 0.0
    u_sum = 0.0
    for j in range(buf_b.shape[1]):
        f, w, u = _gaussian_terms(gid_pos[i] == gid_neg[j],
                                  s_pos[i] - s_neg[j], a_pos[i], a_neg[j],
                                  buf_b[i, j], rtol)
        if f == _CANCELLED:
            f, w, u = _difference_terms(X_pos, i, X_neg, j, m, cov, kind)
        f_sum += f
        w_sum += w
        u_sum += u
        buf_w[i, j] = w
        buf_b[i, j] = u
    f_row[i] = f_sum
    w_row[i] = w_sum
    u_row[i] = u_sum


@numba.njit(cache=True, parallel=True)
def _gaussian_block_parallel(s_pos, s_neg, a_pos, a_neg, gid_pos, gid_neg,
                             X_pos, X_neg, m, cov, kind, rtol, buf_b, buf_w,
                             f_row, w_row, u_row):
    for i in numba.prange(buf_b.shape[0]):
        _gaussian_row(i, s_pos, s_neg, a_pos, a_neg, gid_pos, gid_neg, X_pos,
                      X_neg, m, cov, kind, rtol, buf_b, buf_w, f_row, w_row,
                      u_row)


@numba.njit(cache=True, nogil=True)
def _gaussian_block_serial(s_pos, s_neg, a_pos, a_neg, gid_pos, gid_neg,
                           X_pos, X_neg, m, cov, kind, rtol, buf_b, buf_w,
                           f_row, w_row, u_row):
    for i in range(buf_b.shape[0]):
        _gaussian_row(i, s_pos, s_neg, a_pos, a_neg, gid_pos, gid_neg, X_pos,
                      X_neg, m, cov, kind, rtol, buf_b, buf_w, f_row, w_row,
                      u_row)


@numba.njit(cache=True, nogil=True)
def _sampled_gaussian_range(lo, hi, ip, jn, XS_pos, s_pos, s_neg, a_pos,
                            a_neg, gid_pos, gid_neg, X_pos, X_neg, m, cov,
                            kind, rtol, f, w, u):
    """The exact kernel's pair terms for the sampled pairs ``lo..hi-1``."""
    for b in range(lo, hi):
        i = ip[b]
        j = jn[b]
        b_ij = 0.0
        for k in range(X_neg.shape[1]):
            b_ij += XS_pos[i, k] * X_neg[j, k]
        fb, wb, ub = _gaussian_terms(gid_pos[i] == gid_neg[j],
                                     s_pos[i] - s_neg[j], a_pos[i], a_neg[j],
                                     b_ij, rtol)
        if fb == _CANCELLED:
            fb, wb, ub = _difference_terms(X_pos, i, X_neg, j, m, cov, kind)
        f[b] = fb
        w[b] = wb
        u[b] = ub


@numba.njit(cache=True, parallel=True)
def _sampled_gaussian_parallel(n_chunks, ip, jn, XS_pos, s_pos, s_neg, a_pos,
                               a_neg, gid_pos, gid_neg, X_pos, X_neg, m, cov,
                               kind, rtol, f, w, u):
    n = ip.shape[0]
    for c in numba.prange(n_chunks):
        _sampled_gaussian_range(c * n // n_chunks, (c + 1) * n // n_chunks,
                                ip, jn, XS_pos, s_pos, s_neg, a_pos, a_neg,
                                gid_pos, gid_neg, X_pos, X_neg, m, cov, kind,
                                rtol, f, w, u)


@numba.njit(cache=True, nogil=True)
def _sampled_gaussian_serial(n_chunks, ip, jn, XS_pos, s_pos, s_neg, a_pos,
                             a_neg, gid_pos, gid_neg, X_pos, X_neg, m, cov,
                             kind, rtol, f, w, u):
    n = ip.shape[0]
    for c in range(n_chunks):
        _sampled_gaussian_range(c * n // n_chunks, (c + 1) * n // n_chunks,
                                ip, jn, XS_pos, s_pos, s_neg, a_pos, a_neg,
                                gid_pos, gid_neg, X_pos, X_neg, m, cov, kind,
                                rtol, f, w, u)


def _gram_terms(X_pos, X_neg, m, cov):
    """``(X_pos S, s_pos, s_neg, a_pos, a_neg, cov as the kernels read it,
    kind)`` for ``S`` a (d,) vector of variances or a (d, d) matrix."""
    diag = cov.ndim == 1
    XS_pos = X_pos * cov if diag else X_pos @ cov
    XS_neg = X_neg * cov if diag else X_neg @ cov
    a_pos = np.einsum("ij,ij->i", XS_pos, X_pos)
    a_neg = np.einsum("ij,ij->i", XS_neg, X_neg)
    cov2d = np.ascontiguousarray(cov[None, :] if diag else cov)
    return (XS_pos, X_pos @ m, X_neg @ m, a_pos, a_neg, cov2d,
            _DIAGONAL if diag else _FULL)


def _pair_terms_sampled(X_pos, X_neg, gid_pos, gid_neg, ip, jn, m, cov,
                        need_grad=True):
    """:class:`GaussianPairRisk` on the pairs ``(ip[b], jn[b])`` only (an
    incomplete U-statistic): ``(risk, grad_m, grad_cov, risk_sd)``, the last
    the standard deviation of the per-pair terms."""
    ip = np.ascontiguousarray(ip, dtype=np.int64)
    jn = np.ascontiguousarray(jn, dtype=np.int64)
    m = np.ascontiguousarray(m, dtype=float)
    XS_pos, s_pos, s_neg, a_pos, a_neg, cov2d, kind = _gram_terms(
        X_pos, X_neg, m, cov)
    n = ip.shape[0]
    f, w, u = np.empty(n), np.empty(n), np.empty(n)
    kernel = parallel.dispatch(_sampled_gaussian_serial,
                               _sampled_gaussian_parallel, n)
    # one chunk of pairs per thread: a call per pair would count references
    kernel(numba.get_num_threads(), ip, jn, XS_pos, s_pos, s_neg, a_pos,
           a_neg, gid_pos, gid_neg, X_pos, X_neg, m, cov2d, kind,
           _CANCELLATION_RTOL, f, w, u)
    risk, risk_sd = f.mean(), f.std()
    if not need_grad:
        return risk, None, None, risk_sd
    D = X_pos[ip] - X_neg[jn]
    grad_m = D.T @ w / n
    if cov.ndim == 1:
        grad_cov = u @ D**2 / n
    else:
        grad_cov = (D * u[:, None]).T @ D / n
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
        groups = duplicate_groups(np.vstack([self.X_pos, self.X_neg]))
        self.gid_pos = np.ascontiguousarray(groups[:self.n_pos])
        self.gid_neg = np.ascontiguousarray(groups[self.n_pos:])
        self.block_rows = _block_rows(self.n_pos, self.n_neg, block_entries)

    def __call__(self, m, cov, need_grad=True):
        """Return ``(E_rho[R_n], grad_m, grad_cov)``.

        ``grad_cov`` is ``dE/dS`` (symmetric, (d, d)) for a matrix ``cov`` and
        its diagonal for a vector ``cov``; both gradients are None when
        ``need_grad`` is False.
        """
        Xp, Xn = self.X_pos, self.X_neg
        diag = cov.ndim == 1
        XS_pos, s_pos, s_neg, a_pos, a_neg, cov2d, kind = _gram_terms(
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
            kernel = parallel.dispatch(_gaussian_block_serial,
                                       _gaussian_block_parallel,
                                       nb * self.n_neg)
            kernel(s_pos[start:stop], s_neg, a_pos[start:stop], a_neg,
                   self.gid_pos[start:stop], self.gid_neg, Xp[start:stop], Xn,
                   m, cov2d, kind, _CANCELLATION_RTOL, bb, bw,
                   f_row[start:stop], w_row[start:stop], u_row[start:stop])
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
        XS_pos, s_pos, s_neg, a_pos, a_neg, cov2d, kind = _gram_terms(
            Xp, Xn, m, cov)
        u = XS_pos @ Xn.T                 # x_i' S x_j on entry, u on exit
        w = np.empty_like(u)
        kernel = parallel.dispatch(_gaussian_block_serial,
                                   _gaussian_block_parallel, u.size)
        kernel(s_pos, s_neg, a_pos, a_neg, self.gid_pos, self.gid_neg, Xp, Xn,
               m, cov2d, kind, _CANCELLATION_RTOL, u, w,
               np.empty(self.n_pos), np.empty(self.n_pos),
               np.empty(self.n_pos))
        return w, u, s_pos[:, None] - s_neg[None, :]

    def sampled(self, ip, jn, m, cov, need_grad=True):
        """The same on the pairs ``(ip[b], jn[b])``; also returns the
        standard deviation of the per-pair terms."""
        return _pair_terms_sampled(self.X_pos, self.X_neg, self.gid_pos,
                                   self.gid_neg, ip, jn, m, cov, need_grad)


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
    shapes)."""
    m = np.ascontiguousarray(check_finite_array(mean, "mean"))
    cov = np.ascontiguousarray(check_finite_array(cov, "cov"))
    if m.ndim != 1:
        raise InputError(f"mean must be (d,), got {m.shape}")
    d = m.shape[0]
    X_pos, X_neg = _check_pairs_data(X_pos, X_neg, d, "mean must be (d,)")
    if cov.shape not in ((d,), (d, d)):
        raise InputError(f"cov must have shape ({d},) or ({d}, {d}), got "
                         f"{cov.shape}")
    return m, cov, X_pos, X_neg


# ----------------------------------- a batch of particles, S = (h r)^2 I (SVGD)

@numba.njit(cache=True, nogil=True)
def _inverse_norms_row(i, X_pos, X_neg, sq_pos, sq_neg, gram, start, rtol,
                       out):
    p = start + i
    for j in range(out.shape[1]):
        nu2 = _gram_variance(sq_pos[p], sq_neg[j], gram[i, j], rtol)
        if nu2 == _CANCELLED:
            nu2 = _difference_quadratic(X_pos, p, X_neg, j, _NO_COV,
                                        _IDENTITY)
        out[i, j] = 1.0 / math.sqrt(nu2) if nu2 > 0.0 else 0.0


@numba.njit(cache=True, parallel=True)
def _inverse_norms_parallel(X_pos, X_neg, sq_pos, sq_neg, gram, start, rtol,
                            out):
    for i in numba.prange(out.shape[0]):
        _inverse_norms_row(i, X_pos, X_neg, sq_pos, sq_neg, gram, start, rtol,
                           out)


@numba.njit(cache=True, nogil=True)
def _inverse_norms_serial(X_pos, X_neg, sq_pos, sq_neg, gram, start, rtol,
                          out):
    for i in range(out.shape[0]):
        _inverse_norms_row(i, X_pos, X_neg, sq_pos, sq_neg, gram, start, rtol,
                           out)


def _inverse_pair_norms(X_pos, X_neg, sq_pos, sq_neg, gram, start, rtol, out):
    """``out[i, j] = 1 / ||x_{start+i} - x_j||`` (0 where the rows are equal).

    On entry ``gram[i, j] = x_{start+i} . x_j`` (positives ``start..``,
    negatives ``0..n_neg-1``); ``sq_*`` are squared row norms: the pair
    variance with ``S = I``.
    """
    kernel = parallel.dispatch(_inverse_norms_serial, _inverse_norms_parallel,
                               out.size)
    kernel(X_pos, X_neg, sq_pos, sq_neg, gram, start, rtol, out)


@numba.njit(cache=True, nogil=True)
def _sampled_quadratic_serial(X_pos, X_neg, ip, jn, cov, kind, out):
    for b in range(ip.shape[0]):
        out[b] = _difference_quadratic(X_pos, ip[b], X_neg, jn[b], cov, kind)


@numba.njit(cache=True, parallel=True)
def _sampled_quadratic_parallel(X_pos, X_neg, ip, jn, cov, kind, out):
    for b in numba.prange(ip.shape[0]):
        out[b] = _difference_quadratic(X_pos, ip[b], X_neg, jn[b], cov, kind)


def _sampled_inverse_norms(X_pos, X_neg, ip, jn):
    """``1 / ||x_ip[b] - x_jn[b]||`` for sampled pairs (0 for equal rows)."""
    ip = np.ascontiguousarray(ip, dtype=np.int64)
    jn = np.ascontiguousarray(jn, dtype=np.int64)
    nu2 = np.empty(ip.shape[0])
    kernel = parallel.dispatch(_sampled_quadratic_serial,
                               _sampled_quadratic_parallel, nu2.size)
    kernel(np.ascontiguousarray(X_pos, dtype=float),
           np.ascontiguousarray(X_neg, dtype=float), ip, jn, _NO_COV,
           _IDENTITY, nu2)
    positive = nu2 > 0.0
    return np.where(positive, 1.0 / np.sqrt(np.where(positive, nu2, 1.0)), 0.0)


@numba.njit(cache=True, nogil=True)
def _smoothed_particle(a, s_pos, s_neg, inv_norm, start, inv_h, need_risk,
                       need_grad, f, w_row, w_col):
    """Pair terms of particle ``a`` over the positives of one block."""
    rows, n_neg = inv_norm.shape
    c = inv_h[a]
    f_a = 0.0
    for i in range(rows):
        sp = s_pos[a, start + i]
        w_sum = 0.0
        for j in range(n_neg):
            t = (sp - s_neg[a, j]) * inv_norm[i, j] * c
            if need_risk:
                f_a += _tail(t)
            if need_grad:
                w = _density(t) * inv_norm[i, j]
                w_sum += w
                w_col[a, j] += w
        w_row[a, start + i] += w_sum
    f[a] += f_a


@numba.njit(cache=True, parallel=True)
def _smoothed_block_parallel(s_pos, s_neg, inv_norm, start, inv_h, need_risk,
                             need_grad, f, w_row, w_col):
    # each particle writes only its own row of the outputs: no races
    for a in numba.prange(s_pos.shape[0]):
        _smoothed_particle(a, s_pos, s_neg, inv_norm, start, inv_h, need_risk,
                           need_grad, f, w_row, w_col)


@numba.njit(cache=True, nogil=True)
def _smoothed_block_serial(s_pos, s_neg, inv_norm, start, inv_h, need_risk,
                           need_grad, f, w_row, w_col):
    for a in range(s_pos.shape[0]):
        _smoothed_particle(a, s_pos, s_neg, inv_norm, start, inv_h, need_risk,
                           need_grad, f, w_row, w_col)


def _smoothed_block(s_pos, s_neg, inv_norm, start, inv_h, need_risk,
                    need_grad, f, w_row, w_col):
    """Pair terms of positives ``start..start+rows`` for every particle.

    ``s_pos`` (N, n_pos), ``s_neg`` (N, n_neg): scores ``x . theta_a``;
    ``inv_norm`` (rows, n_neg): ``1/||d_ij||``; ``inv_h`` (N,):
    ``1 / (h ||theta_a||)``. With ``t = (s_i - s_j) inv_norm_ij inv_h_a``,
    adds ``Phi(-t)`` to ``f[a]`` and ``w = phi(t) inv_norm_ij`` (``phi / sd``
    up to the factor ``inv_h_a``) to ``w_row[a, i]`` and ``w_col[a, j]``. A
    pair with ``inv_norm = 0`` (equal rows) gives ``t = 0``: ``Phi = 1/2``,
    ``w = 0``.
    """
    kernel = parallel.dispatch(_smoothed_block_serial,
                               _smoothed_block_parallel,
                               s_pos.shape[0] * inv_norm.size)
    kernel(s_pos, s_neg, inv_norm, start, inv_h, need_risk, need_grad, f,
           w_row, w_col)


@numba.njit(cache=True, nogil=True)
def _smoothed_sampled_particle(a, s_pos, s_neg, ip, jn, inv_norm, inv_h,
                               need_risk, need_grad, f, w_row, w_col):
    c = inv_h[a]
    f_a = 0.0
    for b in range(ip.shape[0]):
        i = ip[b]
        j = jn[b]
        t = (s_pos[a, i] - s_neg[a, j]) * inv_norm[b] * c
        if need_risk:
            f_a += _tail(t)
        if need_grad:
            w = _density(t) * inv_norm[b]
            w_row[a, i] += w
            w_col[a, j] += w
    f[a] += f_a


@numba.njit(cache=True, parallel=True)
def _smoothed_sampled_parallel(s_pos, s_neg, ip, jn, inv_norm, inv_h,
                               need_risk, need_grad, f, w_row, w_col):
    for a in numba.prange(s_pos.shape[0]):
        _smoothed_sampled_particle(a, s_pos, s_neg, ip, jn, inv_norm, inv_h,
                                   need_risk, need_grad, f, w_row, w_col)


@numba.njit(cache=True, nogil=True)
def _smoothed_sampled_serial(s_pos, s_neg, ip, jn, inv_norm, inv_h, need_risk,
                             need_grad, f, w_row, w_col):
    for a in range(s_pos.shape[0]):
        _smoothed_sampled_particle(a, s_pos, s_neg, ip, jn, inv_norm, inv_h,
                                   need_risk, need_grad, f, w_row, w_col)


def _smoothed_sampled(s_pos, s_neg, ip, jn, inv_norm, inv_h, need_risk,
                      need_grad, f, w_row, w_col):
    """:func:`_smoothed_block` on the sampled pairs ``(ip[b], jn[b])``."""
    kernel = parallel.dispatch(_smoothed_sampled_serial,
                               _smoothed_sampled_parallel,
                               s_pos.shape[0] * ip.shape[0])
    kernel(s_pos, s_neg, ip, jn, inv_norm, inv_h, need_risk, need_grad, f,
           w_row, w_col)


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
            _inverse_pair_norms(self.X_pos, self.X_neg, self.sq_pos,
                                self.sq_neg, gram, start, _CANCELLATION_RTOL,
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
                _smoothed_block(s_pos, s_neg, inv_norm, start, inv_h, need_risk,
                                need_grad, f, w_row, w_col)
        else:
            ip, jn = (np.ascontiguousarray(p, dtype=np.int64) for p in pairs)
            n_used = ip.shape[0]
            inv_norm = _sampled_inverse_norms(self.X_pos, self.X_neg, ip, jn)
            _smoothed_sampled(s_pos, s_neg, ip, jn, inv_norm, inv_h, need_risk,
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
