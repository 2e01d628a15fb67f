"""The numba kernels of the point risks: the weighted loss of the margins of
each row of scores, for any loss of the table.

:class:`~pac_particles.problem.risks.ClassificationRisk` evaluates
``sum_i w_i l(y_i s_i)`` for a batch of score rows (one per particle) with
a serial and a ``prange`` kernel (:func:`pac_particles.core.parallel.dispatch`
picks one). The loss is an argument: numba types a
:class:`~pac_particles.problem.losses.MarginLoss` as one type per loss (its
name and a fingerprint of its ``point`` function's code), so each kernel
is compiled for each loss with the loss inlined, and cached on disk like
the other kernels; a registered loss needs no code here, and a loss whose
``point`` changes is compiled afresh rather than read from a stale cache.
Their plain-numpy twin is in ``tests/problem/test_classification_risk.py``.

The Gaussian margins of a diagonal ``S`` (:func:`margin_moments`) and
their gradients' sums over the rows (:func:`moment_sums`) each read the
design once, its squares formed in registers: the four BLAS products they
replace (``X m``, ``X^2 s``, ``X' a``, ``(X^2)' b``) read it, or a stored
copy of its squares, four times, on one thread (the variational fit runs
BLAS on one). Their plain-numpy twin is in
``tests/problem/test_gaussian_losses.py``.

The classifier's Gaussian point risk of a diagonal ``S``
(:func:`gaussian_point_sums`) fuses both with the loss's closed form: its
``gaussian_point``, inlined like ``point`` (the same compiled function
evaluates arrays, :func:`gaussian_closed_form`), so each row's margin, its
expected loss and its two gradient terms are formed in registers and no
n-sized array is written. Its plain-numpy twin, on each built-in loss's
closed form written with scipy, is in the same test file.
"""

import hashlib
import marshal

import numba
import numpy as np
from numba import types
from numba.extending import (NativeValue, models, overload, register_model,
                             typeof_impl, unbox)

from pac_particles.core import parallel
from pac_particles.core.checks import InputError
from pac_particles.core.normal import cdf_pdf
from pac_particles.problem.losses import (MarginLoss, get_loss,
                                         normal_cdf_pdf)

__all__ = ["point_rows_serial", "point_rows_parallel", "fingerprint",
           "margin_moments", "moment_sums", "gaussian_closed_form",
           "gaussian_point_sums"]

_FINGERPRINTS = {}


def fingerprint(loss: MarginLoss) -> str:
    """A digest of the bytecode of ``loss.point`` and of
    ``loss.gaussian_point``: what the compiled kernels of the loss depend
    on besides its name."""
    digest = _FINGERPRINTS.get(loss)
    if digest is None:
        code = marshal.dumps(loss.point.__code__)
        if loss.gaussian_point is not None:
            code += marshal.dumps(loss.gaussian_point.__code__)
        digest = _FINGERPRINTS[loss] = hashlib.sha1(code).hexdigest()[:16]
    return digest


class MarginLossType(types.Opaque):
    """numba's type of one loss of the table: a kernel taking it is
    compiled (and cached) once per loss."""

    def __init__(self, loss_name, digest):
        self.loss_name = loss_name
        self.digest = digest
        super().__init__(name=f"MarginLoss({loss_name}@{digest})")


@typeof_impl.register(MarginLoss)
def _typeof_loss(loss, context):
    return MarginLossType(loss.name, fingerprint(loss))


# no data travels: the loss is known from its type when the kernel compiles
register_model(MarginLossType)(models.OpaqueModel)


@unbox(MarginLossType)
def _unbox_loss(typ, obj, c):
    return NativeValue(c.context.get_dummy_value())


def _point(u, loss):
    """``loss.point(u)`` inside a kernel (see :func:`_point_overload`)."""
    raise NotImplementedError("called inside numba kernels only")


def _registered(loss):
    """The loss of the table that the numba type ``loss`` stands for."""
    registered = get_loss(loss.loss_name)
    if fingerprint(registered) != loss.digest:
        raise InputError(f"the loss {loss.loss_name!r} was registered again "
                         "with another point function while in use")
    return registered


@overload(_point, inline="always")
def _point_overload(u, loss):
    if not isinstance(loss, MarginLossType):
        return None
    point = numba.njit(inline="always")(_registered(loss).point)
    return lambda u, loss: point(u)


def _gaussian(mu, var, loss):
    """``loss.gaussian_point(mu, var)`` inside a kernel."""
    raise NotImplementedError("called inside numba kernels only")


@overload(_gaussian, inline="always")
def _gaussian_overload(mu, var, loss):
    if not isinstance(loss, MarginLossType):
        return None
    closed_form = _registered(loss).gaussian_point
    if closed_form is None:
        raise InputError(f"the loss {loss.loss_name!r} has no scalar "
                         "Gaussian closed form (MarginLoss.gaussian_point)")
    closed_form = numba.njit(inline="always")(closed_form)
    return lambda mu, var, loss: closed_form(mu, var)


@overload(normal_cdf_pdf)
def _normal_cdf_pdf_overload(z):
    # the closed forms' Phi and phi: the same function inside the kernels
    return lambda z: cdf_pdf(z)


@numba.njit(cache=True, nogil=True)
def _point_row(scores, r, signs, weights, loss):
    total = 0.0
    for i in range(signs.shape[0]):
        total += weights[i] * _point(signs[i] * scores[r, i], loss)
    return total


@numba.njit(cache=True, parallel=True)
def point_rows_parallel(scores, signs, weights, loss):
    """Weighted loss of the margins ``signs * scores[r]`` of each row r."""
    out = np.empty(scores.shape[0])
    for r in numba.prange(scores.shape[0]):
        out[r] = _point_row(scores, r, signs, weights, loss)
    return out


@numba.njit(cache=True)
def point_rows_serial(scores, signs, weights, loss):
    """Same as :func:`point_rows_parallel` on one thread."""
    out = np.empty(scores.shape[0])
    for r in range(scores.shape[0]):
        out[r] = _point_row(scores, r, signs, weights, loss)
    return out


# ------------------------- the Gaussian margins of a diagonal S, row by row

#: row chunks of the parallel kernels: a few per thread, each summing into
#: its own slice (no shared accumulator), few enough that their partial
#: sums cost nothing
_CHUNKS = 16


@numba.njit(cache=True, nogil=True, fastmath=True)
def _row_moments(X, m, var, i):
    # the mean and variance of row i's score, the square formed in registers
    a = 0.0
    b = 0.0
    for k in range(X.shape[1]):
        x = X[i, k]
        a += x * m[k]
        b += x * x * var[k]
    return a, b


@numba.njit(cache=True, nogil=True, fastmath=True)
def _add_row(X, i, a, b, out):
    for k in range(X.shape[1]):
        x = X[i, k]
        out[0, k] += a * x
        out[1, k] += b * x * x


@numba.njit(cache=True, nogil=True, fastmath=True)
def _moments_range(X, m, var, lo, hi, mu, v):
    for i in range(lo, hi):
        mu[i], v[i] = _row_moments(X, m, var, i)


@numba.njit(cache=True, parallel=True)
def _moments_parallel(X, m, var, mu, v, chunks):
    n = X.shape[0]
    for c in numba.prange(chunks):
        _moments_range(X, m, var, c * n // chunks, (c + 1) * n // chunks,
                       mu, v)


@numba.njit(cache=True, nogil=True)
def _moments_serial(X, m, var, mu, v, chunks):
    _moments_range(X, m, var, 0, X.shape[0], mu, v)


def margin_moments(X: np.ndarray, m: np.ndarray, var: np.ndarray) -> tuple:
    """``(X m, (X * X) var)``: the scores' means and variances of the rows
    of ``X`` (n, d) under ``N(m, diag(var))``, in one pass over ``X``."""
    n = X.shape[0]
    mu, v = np.empty(n), np.empty(n)
    kernel = parallel.dispatch(_moments_serial, _moments_parallel, X.size)
    kernel(X, m, var, mu, v, _CHUNKS)
    return mu, v


@numba.njit(cache=True, nogil=True, fastmath=True)
def _sums_range(X, a, b, lo, hi, out):
    for i in range(lo, hi):
        _add_row(X, i, a[i], b[i], out)


@numba.njit(cache=True, parallel=True)
def _sums_parallel(X, a, b, chunks):
    n, d = X.shape
    parts = np.zeros((chunks, 2, d))
    for c in numba.prange(chunks):
        _sums_range(X, a, b, c * n // chunks, (c + 1) * n // chunks,
                    parts[c])
    return parts.sum(axis=0)


@numba.njit(cache=True, nogil=True)
def _sums_serial(X, a, b, chunks):
    out = np.zeros((2, X.shape[1]))
    _sums_range(X, a, b, 0, X.shape[0], out)
    return out


def moment_sums(X: np.ndarray, a: np.ndarray, b: np.ndarray) -> tuple:
    """``(X' a, (X * X)' b)`` for (n,) ``a`` and ``b``: the gradients in
    ``m`` and in ``diag(S)`` of a sum of terms of the margins' means and
    variances (:func:`margin_moments`), in one pass over ``X``."""
    kernel = parallel.dispatch(_sums_serial, _sums_parallel, X.size)
    out = kernel(X, a, b, _CHUNKS)
    return out[0], out[1]


# ------------------- a loss's Gaussian closed form, and the fused point risk

@numba.njit(cache=True, nogil=True)
def _closed_form_range(mu, var, loss, lo, hi, value, d_mu, d_var):
    for i in range(lo, hi):
        value[i], d_mu[i], d_var[i] = _gaussian(mu[i], var[i], loss)


@numba.njit(cache=True, parallel=True)
def _closed_form_parallel(mu, var, loss, value, d_mu, d_var, chunks):
    n = mu.shape[0]
    for c in numba.prange(chunks):
        _closed_form_range(mu, var, loss, c * n // chunks,
                           (c + 1) * n // chunks, value, d_mu, d_var)


@numba.njit(cache=True, nogil=True)
def _closed_form_serial(mu, var, loss, value, d_mu, d_var, chunks):
    _closed_form_range(mu, var, loss, 0, mu.shape[0], value, d_mu, d_var)


def gaussian_closed_form(loss: MarginLoss, mu: np.ndarray,
                         var: np.ndarray) -> tuple:
    """``loss.gaussian_point`` over arrays ``mu`` and ``var`` (one shape):
    ``(E[l(u)], dE/dmu, dE/dvar)`` for ``u ~ N(mu, var)``, elementwise,
    compiled once per loss like the fused kernel that inlines it."""
    shape = np.broadcast(mu, var).shape
    mu = np.ascontiguousarray(np.broadcast_to(mu, shape), float).reshape(-1)
    var = np.ascontiguousarray(np.broadcast_to(var, shape),
                               float).reshape(-1)
    out = [np.empty(mu.size) for _ in range(3)]
    kernel = parallel.dispatch(_closed_form_serial, _closed_form_parallel,
                               mu.size * parallel.NORMAL_CDF_ITEMS)
    kernel(mu, var, loss, *out, _CHUNKS)
    return tuple(o.reshape(shape) for o in out)


#: rows per block of the fused kernel: its rows stay in cache from the
#: margins' pass to the gradients', and the closed form runs over the block
#: as an independent loop (the rows' exponentials and divisions overlap;
#: one row at a time waited on each row's dot product)
_BLOCK = 256


@numba.njit(cache=True, nogil=True)
def _fused_range(X, m, var, signs, weights, loss, need_grad, lo, hi, out):
    risk = 0.0
    mu = np.empty(_BLOCK)
    v = np.empty(_BLOCK)
    # the chunk's own sums, away from its neighbours' cache lines
    acc = np.zeros_like(out)
    for start in range(lo, hi, _BLOCK):
        stop = min(start + _BLOCK, hi)
        for i in range(start, stop):
            mu[i - start], v[i - start] = _row_moments(X, m, var, i)
        for i in range(start, stop):
            j = i - start
            value, d_mu, d_var = _gaussian(signs[i] * mu[j], v[j], loss)
            risk += weights[i] * value
            mu[j] = weights[i] * signs[i] * d_mu
            v[j] = weights[i] * d_var
        if need_grad:
            for i in range(start, stop):
                _add_row(X, i, mu[i - start], v[i - start], acc)
    out += acc
    return risk


@numba.njit(cache=True, parallel=True)
def _fused_parallel(X, m, var, signs, weights, loss, need_grad, chunks):
    n, d = X.shape
    parts = np.zeros((chunks, 2, d))
    risks = np.zeros(chunks)
    for c in numba.prange(chunks):
        risks[c] = _fused_range(X, m, var, signs, weights, loss, need_grad,
                                c * n // chunks, (c + 1) * n // chunks,
                                parts[c])
    return risks.sum(), parts.sum(axis=0)


@numba.njit(cache=True, nogil=True)
def _fused_serial(X, m, var, signs, weights, loss, need_grad, chunks):
    out = np.zeros((2, X.shape[1]))
    risk = _fused_range(X, m, var, signs, weights, loss, need_grad, 0,
                        X.shape[0], out)
    return risk, out


def gaussian_point_sums(X: np.ndarray, m: np.ndarray, var: np.ndarray,
                        signs: np.ndarray, weights: np.ndarray,
                        loss: MarginLoss, need_grad: bool = True) -> tuple:
    """The Gaussian point risk of a diagonal ``S`` in one pass over ``X``.

    With ``mu_i = signs_i x_i . m``, ``v_i = sum_k x_ik^2 var_k`` and
    ``(E_i, dE/dmu_i, dE/dv_i)`` the loss's ``gaussian_point``, returns
    ``(sum_i w_i E_i, sum_i w_i signs_i dE/dmu_i x_i,
    sum_i w_i dE/dv_i x_i^2)`` (the last two zero without ``need_grad``):
    no n-sized array is formed; each chunk of rows sums into its own
    partial sums. ``v_i > 0`` is the caller's (``var > 0``, no zero row).
    """
    kernel = parallel.dispatch(_fused_serial, _fused_parallel,
                               X.size + X.shape[0]
                               * parallel.NORMAL_CDF_ITEMS)
    risk, out = kernel(X, m, var, signs, weights, loss, bool(need_grad),
                       _CHUNKS)
    return float(risk), out[0], out[1]
