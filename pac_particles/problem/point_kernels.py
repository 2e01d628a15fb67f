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
"""

import hashlib
import marshal

import numba
import numpy as np
from numba import types
from numba.extending import (NativeValue, models, overload, register_model,
                             typeof_impl, unbox)

from pac_particles.core.checks import InputError
from pac_particles.problem.losses import MarginLoss, get_loss

__all__ = ["point_rows_serial", "point_rows_parallel", "fingerprint"]

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
