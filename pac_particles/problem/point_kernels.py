"""The numba kernels of the point risks: the weighted loss of the margins of
each row of scores, one kernel pair per loss of the table.

:class:`~pac_particles.problem.risks.ClassificationRisk` evaluates
``sum_i w_i l(y_i s_i)`` for a batch of score rows (one per particle) with
the loss ``l`` of :mod:`pac_particles.problem.losses` inlined into a serial
and a ``prange`` kernel (:func:`pac_particles.core.parallel.dispatch` picks
one). The kernels are built per loss from its ``point`` function, so a
registered loss needs no code here. Their plain-numpy twin is in
``tests/problem/test_classification_risk.py``.
"""

import numba
import numpy as np

from pac_particles.problem.losses import MarginLoss

__all__ = ["point_kernels"]

#: compiled point kernels per loss (:func:`point_kernels`)
_POINT_KERNELS = {}


def point_kernels(loss: MarginLoss):
    """``(serial, parallel)`` numba kernels of the weighted loss of the
    margins ``signs * scores[r]`` of each row r, ``loss.point`` inlined.

    Compiled on first use per process, not cached on disk: numba caches no
    kernel that closes over a function (the loss), and a loss passed as an
    argument instead would be a call through a pointer in the inner loop,
    several times slower than the inlined loss.
    """
    kernels = _POINT_KERNELS.get(loss)
    if kernels is not None:
        return kernels
    point = numba.njit(inline="always")(loss.point)

    @numba.njit(nogil=True)
    def row(scores, r, signs, weights):
        total = 0.0
        for i in range(signs.shape[0]):
            total += weights[i] * point(signs[i] * scores[r, i])
        return total

    @numba.njit(parallel=True)
    def rows_parallel(scores, signs, weights):
        out = np.empty(scores.shape[0])
        for r in numba.prange(scores.shape[0]):
            out[r] = row(scores, r, signs, weights)
        return out

    @numba.njit
    def rows_serial(scores, signs, weights):
        out = np.empty(scores.shape[0])
        for r in range(scores.shape[0]):
            out[r] = row(scores, r, signs, weights)
        return out

    kernels = _POINT_KERNELS[loss] = (rows_serial, rows_parallel)
    return kernels
