"""The numba kernels of the Gaussian-smoothed AUC pair risk.

The per-pair pieces that :class:`~pac_particles.problem.probit_risk.GaussianPairRisk`
(VB: one ``N(m, S)``) and
:class:`~pac_particles.problem.probit_risk.SmoothedPairRisk` (SVGD: a batch of
particles, ``S = (h ||theta||)^2 I``) share, apart from the classes that
block, cache and sum them (:mod:`pac_particles.problem.probit_risk`): the
pair variance ``d_ij' S d_ij = a_i + a_j - 2 b_ij`` with its cancellation
fallback (near-duplicate pairs recomputed from the difference vector), the
probit terms ``Phi(-t)``, ``phi(t) / sd`` and ``d Phi / d var``, over blocks
of positives or sampled pairs.

Each kernel has a serial and a ``prange`` version; the public functions
choose between them (:func:`pac_particles.core.parallel.dispatch`) and
write into the arrays they are given:

* :func:`gaussian_block` -- the terms of one ``N(m, S)`` on a block of
  positives;
* :func:`inverse_pair_norms` and :func:`sampled_inverse_norms` -- ``1 /
  ||d_ij||`` (SVGD's pair scale, cached between its steps);
* :func:`smoothed_block` and :func:`smoothed_sampled` -- the smoothed terms
  of every particle of a batch.

Their plain-numpy twins are in ``tests/approx/test_svgd.py``.
"""

import math

import numba
import numpy as np

from pac_particles.core import parallel
from pac_particles.core.normal import cdf_pdf
from pac_particles.problem.batch_threads import BATCH_THREADS

__all__ = ["CANCELLATION_RTOL", "difference_quadratic", "gram_terms", "gaussian_block",
           "pair_batch_sums", "BATCH_SUMS_FIXED", "MIN_PARALLEL_BATCH_PAIRS",
           "BATCH_CHUNKS", "inverse_pair_norms", "sampled_inverse_norms",
           "smoothed_block", "smoothed_sampled"]

#: below this fraction of a_i + a_j, a_i + a_j - 2 b_ij has lost most of its
#: digits to cancellation: d_ij' S d_ij is recomputed from the difference
#: vector
CANCELLATION_RTOL = 1e-8
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
# How the kernels read ``cov``: S = I (``cov`` unused), S = diag(cov[0]),
# S = cov.
_IDENTITY, _DIAGONAL, _FULL = 0, 1, 2
_NO_COV = np.zeros((1, 1))
# What _gram_variance returns for a cancelled difference (never a variance).
_CANCELLED = -1.0


def gram_terms(X_pos, X_neg, m, cov):
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


@numba.njit(cache=True, nogil=True, inline="always")
def difference_quadratic(X_pos, i, X_neg, j, S):
    """``d_ij' S d_ij`` for a full matrix ``S``, from the difference vector
    ``d_ij = x_i - x_j`` (O(d^2); exact 0 for equal rows)."""
    return _difference_quadratic(X_pos, i, X_neg, j, S, _FULL)


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
    return cdf_pdf(-t)[0]


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
    # one division per pair: the kernels are bound by it, the square root
    # and the normal cdf (three divisions cost 5% more on 75,000 pairs)
    inv_sd = 1.0 / math.sqrt(var)
    t = mu * inv_sd
    # Phi and phi from one exponential (pac_particles.core.normal)
    tail, phi = cdf_pdf(-t)
    return tail, -phi * inv_sd, 0.5 * phi * t * inv_sd * inv_sd


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


# fastmath "contract" only: fused multiply-adds (the normal cdf's polynomial,
# pac_particles.core.normal: 1.3x on the block), no reordering
@numba.njit(cache=True, nogil=True, fastmath={"contract"})
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


def gaussian_block(s_pos, s_neg, a_pos, a_neg, gid_pos, gid_neg, X_pos,
                   X_neg, m, cov, kind, buf_b, buf_w, f_row, w_row, u_row):
    """Pair terms of one ``N(m, S)`` on a block of positives (rows of
    ``buf_b``), in place: on entry ``buf_b[i, j] = x_i' S x_j``; on exit
    ``buf_w`` holds ``w_ij = dPhi_ij/dmu_ij``, ``buf_b`` holds ``u_ij =
    dPhi_ij/dvar_ij`` and ``f_row``, ``w_row``, ``u_row`` the row sums of
    ``Phi_ij``, ``w_ij``, ``u_ij``. ``cov`` and ``kind`` as
    :func:`gram_terms` returns them; tied pairs (equal ``gid``) give 1/2
    and no gradient."""
    kernel = parallel.dispatch(_gaussian_block_serial,
                               _gaussian_block_parallel,
                               buf_b.size * parallel.NORMAL_CDF_ITEMS)
    kernel(s_pos, s_neg, a_pos, a_neg, gid_pos, gid_neg, X_pos, X_neg, m, cov,
           kind, CANCELLATION_RTOL, buf_b, buf_w, f_row, w_row, u_row)


# ------------------------- one Gaussian on a minibatch of pairs (VB, O(B d))

#: the leading entries of :func:`pair_batch_sums`'s result: sum of Phi_b,
#: sum of Phi_b^2, sum of c_b, sum of c_b^2 (c_b = Phi_b - step_b, the
#: control variate), then sum of w_b d_b (d) and sum of u_b d_b d_b' (its
#: diagonal (d) or the d x d matrix)
BATCH_SUMS_FIXED = 4


@numba.njit(cache=True, nogil=True)
def _pair_batch_range(lo, hi, ip, jn, X_pos, X_neg, m, cov, kind, need_grad,
                      full_grad, s_pos, s_neg, acc):
    """Sums of the probit terms of the sampled pairs ``lo..hi-1`` into
    ``acc`` (layout: :data:`BATCH_SUMS_FIXED`). Everything is computed from
    the difference vector ``d_b`` (two rows read, no O(n) work): a pair
    with ``d_b = 0`` (equal rows) is a tie, 1/2 with no gradient. With
    ``s_pos.size > 0`` the step terms ``1{s_i < s_j} + 1{s_i = s_j} / 2``
    of the given scores are subtracted into the control-variate sums."""
    d = X_pos.shape[1]
    diff = np.empty(d)
    # sums in a local array, added to acc once: acc is a row of the
    # per-thread array, and updates through it in the pair loop were 1.3x
    # slower (measured at d = 10)
    local = np.zeros(acc.shape[0])
    control = s_pos.shape[0] > 0
    diagonal = kind == _DIAGONAL
    off = BATCH_SUMS_FIXED
    for b in range(lo, hi):
        i = ip[b]
        j = jn[b]
        mu = 0.0
        var = 0.0
        if diagonal:
            for k in range(d):
                dk = X_pos[i, k] - X_neg[j, k]
                diff[k] = dk
                mu += dk * m[k]
                var += dk * dk * cov[0, k]
        else:
            for k in range(d):
                dk = X_pos[i, k] - X_neg[j, k]
                diff[k] = dk
                mu += dk * m[k]
            for k in range(d):
                row = 0.0
                for l in range(d):
                    row += cov[k, l] * diff[l]
                var += diff[k] * row
        # equal rows give d_b = 0, so mu = var = 0: a tie, 1/2 with no
        # gradient (_probit_terms' deterministic branch)
        f, w, u = _probit_terms(mu, var)
        local[0] += f
        local[1] += f * f
        if control:
            gap = s_pos[i] - s_neg[j]
            step = 1.0 if gap < 0.0 else (0.5 if gap == 0.0 else 0.0)
            c = f - step
            local[2] += c
            local[3] += c * c
        if need_grad and (w != 0.0 or u != 0.0):
            for k in range(d):
                local[off + k] += w * diff[k]
            if full_grad:
                for k in range(d):
                    uk = u * diff[k]
                    for l in range(d):
                        local[off + d + k * d + l] += uk * diff[l]
            else:
                for k in range(d):
                    local[off + d + k] += u * diff[k] * diff[k]
    for k in range(local.shape[0]):
        acc[k] += local[k]


@numba.njit(cache=True, parallel=True)
def _pair_batch_parallel(ip, jn, X_pos, X_neg, m, cov, kind, need_grad,
                         full_grad, s_pos, s_neg, acc):
    n_chunks = acc.shape[0]
    n = ip.shape[0]
    for c in numba.prange(n_chunks):
        _pair_batch_range(c * n // n_chunks, (c + 1) * n // n_chunks, ip, jn,
                          X_pos, X_neg, m, cov, kind, need_grad, full_grad,
                          s_pos, s_neg, acc[c])


@numba.njit(cache=True, nogil=True)
def _pair_batch_serial(ip, jn, X_pos, X_neg, m, cov, kind, need_grad,
                       full_grad, s_pos, s_neg, acc):
    # the parallel version's chunks, one after the other: the same sums
    n_chunks = acc.shape[0]
    n = ip.shape[0]
    for c in range(n_chunks):
        _pair_batch_range(c * n // n_chunks, (c + 1) * n // n_chunks, ip, jn,
                          X_pos, X_neg, m, cov, kind, need_grad, full_grad,
                          s_pos, s_neg, acc[c])


_NO_SCORES = np.zeros(0)
#: sampled pairs from which :func:`pair_batch_sums` runs on every thread;
#: below, a minibatch runs in :data:`BATCH_CHUNKS` chunks on the version
#: :data:`~pac_particles.problem.batch_threads.BATCH_THREADS` measures
#: the faster (docs/benchmarks.md, "By size: the default fit on synthetic
#: logistic data")
MIN_PARALLEL_BATCH_PAIRS = 100_000
#: partial sums of a minibatch below :data:`MIN_PARALLEL_BATCH_PAIRS`,
#: whichever version runs: the serial one adds the same chunks in the same
#: order, so the choice of threads never changes a bit of a fit
BATCH_CHUNKS = 2


def pair_batch_sums(ip, jn, X_pos, X_neg, m, cov, need_grad=True,
                    full_grad=None, scores=None):
    """Sums of one ``N(m, S)``'s probit terms over the sampled pairs
    ``(ip[b], jn[b])``, in one pass of O(B d) (O(B d^2) with the full
    covariance gradient) that reads only the sampled rows: the minibatch
    kernel of the stochastic VB, whose cost does not grow with n.

    ``cov`` is a (d,) vector of variances or a (d, d) matrix; ``full_grad``
    (default: ``cov`` is a matrix) sums ``u_b d_b d_b'`` instead of its
    diagonal. ``scores=(s_pos, s_neg)`` adds the control-variate sums of
    ``Phi_b`` minus the step risk of those scores. Returns a float array:
    :data:`BATCH_SUMS_FIXED` leading sums, then ``sum w_b d_b`` and ``sum
    u_b d_b d_b'`` (flattened (d, d) or its diagonal).
    """
    d = X_pos.shape[1]
    cov = np.asarray(cov, dtype=float)
    diag = cov.ndim == 1
    cov2d = np.ascontiguousarray(cov[None, :] if diag else cov)
    full = (not diag) if full_grad is None else bool(full_grad)
    s_pos, s_neg = (_NO_SCORES, _NO_SCORES) if scores is None else scores
    # a pair costs about d times a typical inner-loop item; a stochastic
    # optimiser's minibatch (a millisecond of work, hundreds of times in a
    # row) runs on the threads BATCH_THREADS finds the faster
    n = ip.shape[0]
    use = parallel.use_parallel(n * d)
    large = n >= MIN_PARALLEL_BATCH_PAIRS
    n_chunks = (numba.get_num_threads() if large and use
                else BATCH_CHUNKS if not large else 1)
    acc = np.zeros((n_chunks, BATCH_SUMS_FIXED + d + (d * d if full else d)))
    args = (ip, jn, X_pos, X_neg, np.ascontiguousarray(m, dtype=float),
            cov2d, _DIAGONAL if diag else _FULL, bool(need_grad), full,
            np.ascontiguousarray(s_pos, dtype=float),
            np.ascontiguousarray(s_neg, dtype=float), acc)
    # use_parallel(0): only parallel.forced("parallel") says yes to no work
    if large or not use or parallel.use_parallel(0):
        (_pair_batch_parallel if use else _pair_batch_serial)(*args)
    else:
        BATCH_THREADS.run(_pair_batch_serial, _pair_batch_parallel, n, *args)
    return acc.sum(axis=0)


# ---------------------------- a batch of particles, S = (h r)^2 I (SVGD)

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


def inverse_pair_norms(X_pos, X_neg, sq_pos, sq_neg, gram, start, rtol, out):
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


def sampled_inverse_norms(X_pos, X_neg, ip, jn):
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


def smoothed_block(s_pos, s_neg, inv_norm, start, inv_h, need_risk,
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
                               s_pos.shape[0] * inv_norm.size
                               * parallel.NORMAL_CDF_ITEMS)
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


def smoothed_sampled(s_pos, s_neg, ip, jn, inv_norm, inv_h, need_risk,
                      need_grad, f, w_row, w_col):
    """:func:`smoothed_block` on the sampled pairs ``(ip[b], jn[b])``."""
    kernel = parallel.dispatch(_smoothed_sampled_serial,
                               _smoothed_sampled_parallel,
                               s_pos.shape[0] * ip.shape[0]
                               * parallel.NORMAL_CDF_ITEMS)
    kernel(s_pos, s_neg, ip, jn, inv_norm, inv_h, need_risk, need_grad, f,
           w_row, w_col)
