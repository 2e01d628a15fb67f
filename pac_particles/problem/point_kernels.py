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
from pac_particles.problem.losses import MarginLoss, get_loss

__all__ = ["point_rows_serial", "point_rows_parallel", "fingerprint",
           "margin_moments", "moment_sums"]

_FINGERPRINTS = {}


def fingerprint(loss: MarginLoss) -> str:
    """A digest of the bytecode of ``loss.point``: what the compiled
    kernels of the loss depend on besides its name."""
    digest = _FINGERPRINTS.get(loss)
    if digest is None:
        code = marshal.dumps(loss.point.__code__)
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


@overload(_point, inline="always")
def _point_overload(u, loss):
    if not isinstance(loss, MarginLossType):
        return None
    registered = get_loss(loss.loss_name)
    if fingerprint(registered) != loss.digest:
        raise InputError(f"the loss {loss.loss_name!r} was registered again "
                         "with another point function while in use")
    point = numba.njit(inline="always")(registered.point)
    return lambda u, loss: point(u)


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

@numba.njit(cache=True, nogil=True, fastmath=True)
def _moments_range(X, m, var, lo, hi, mu, v):
    d = X.shape[1]
    for i in range(lo, hi):
        a = 0.0
        b = 0.0
        for k in range(d):
            x = X[i, k]
            a += x * m[k]
            b += x * x * var[k]
        mu[i] = a
        v[i] = b


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
    d = X.shape[1]
    for i in range(lo, hi):
        ai = a[i]
        bi = b[i]
        for k in range(d):
            x = X[i, k]
            out[0, k] += ai * x
            out[1, k] += bi * x * x


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


#: row chunks of the parallel kernels: a few per thread, each summing into
#: its own slice (no shared accumulator), few enough that their partial
#: sums cost nothing
_CHUNKS = 16


def moment_sums(X: np.ndarray, a: np.ndarray, b: np.ndarray) -> tuple:
    """``(X' a, (X * X)' b)`` for (n,) ``a`` and ``b``: the gradients in
    ``m`` and in ``diag(S)`` of a sum of terms of the margins' means and
    variances (:func:`margin_moments`), in one pass over ``X``."""
    kernel = parallel.dispatch(_sums_serial, _sums_parallel, X.size)
    out = kernel(X, a, b, _CHUNKS)
    return out[0], out[1]
