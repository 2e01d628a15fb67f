"""The standard normal cdf and density at once, for the numba pair kernels.

EP's pair sites and VB's Gaussian-smoothed AUC need, per pair, both
``Phi(z)`` and ``phi(z)`` at the same ``z``. ``0.5 erfc(-z / sqrt 2)``
computes an exponential of its own in the tails (two, in glibc) besides the
one of the density, and was half of each pair's cost. Here the tail
``Phi(-x) = phi(x) M(x)``, ``x = |z|``, is written with the Mills ratio
``M(x) = sqrt(pi / 2) erfcx(x / sqrt 2)`` [AS64, 26.2.12], an entire,
slowly varying function; so one exponential serves both, and ``M`` is a
polynomial on each of a few intervals of ``x`` (:data:`BREAKS`): least-squares
Chebyshev fits of degree :data:`DEGREE` to scipy's ``erfcx``, built once at
import and evaluated by Estrin's scheme (a short dependency chain: the
pair loops overlap many pairs).

Accuracy, against 40-digit values: relative error of ``Phi`` below 5e-15 for
``|z| < 8``, growing to 2e-13 at ``|z| = 37`` as the rounding of ``z^2`` in
``exp(-z^2 / 2)`` does (scipy's ``ndtr`` and ``0.5 erfc`` lose as much or
more there); ``tests/core/test_normal.py`` checks it against
``scipy.special.ndtr``. Beyond the last break ``phi`` and the tail are 0.

Example
-------
::

    from pac_particles.core.normal import cdf_pdf
    cdf, pdf = cdf_pdf(-1.5)          # inside a numba kernel, or from Python

References
----------
[AS64] Abramowitz, M. and Stegun, I. A. (1964). Handbook of Mathematical
Functions. National Bureau of Standards, section 26.2.

Trefethen, L. N. (2013). Approximation Theory and Approximation Practice.
SIAM, chapters 3-4 (Chebyshev interpolants).
"""

import math

import numba
import numpy as np
from numpy.polynomial import chebyshev
from scipy.special import erfcx

__all__ = ["BREAKS", "DEGREE", "cdf_pdf", "mills_ratio", "mills_table"]

#: The intervals of ``x = |z|`` with a polynomial of their own: half-width
#: near 0, where ``M`` bends most, wider beyond; the last reaches the
#: underflow of ``phi`` (``|z|`` about 38.6). Each break is a multiple of
#: 1/2, so that ``int(2 x)`` finds the interval.
BREAKS = (0.0, 0.5, 1.0, 2.0, 3.0, 4.0, 6.0, 8.0, 10.0, 12.0, 16.0, 20.0,
          24.0, 32.0, 40.0)
#: Degree of each interval's polynomial (measured against 40-digit values:
#: 13 reaches 1e-15, the accuracy of scipy's ``erfcx``, on every interval
#: above; 11 leaves 1e-13 near 0). :func:`cdf_pdf`'s Estrin scheme is
#: written out for it.
DEGREE = 13
#: Fitted to this many Chebyshev points per interval by least squares
#: (interpolation at DEGREE + 1 points carried erfcx's rounding, 4e-15)
FIT_POINTS = 400
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def mills_ratio(x):
    """``M(x) = Phi(-x) / phi(x)`` from scipy's scaled complementary error
    function (the reference the table interpolates)."""
    return math.sqrt(0.5 * math.pi) * erfcx(np.asarray(x, float) / math.sqrt(2.0))


def mills_table(breaks=BREAKS, degree=DEGREE):
    """``(coefficients, lower, inverse half-width, index)``: per interval
    the power-basis coefficients, in ``y = (x - lower) / half - 1`` on
    [-1, 1], of the least-squares Chebyshev fit of :func:`mills_ratio` at
    :data:`FIT_POINTS` Chebyshev points; ``index`` maps ``int(2 x)`` to the
    interval of ``x``."""
    breaks = np.asarray(breaks, dtype=float)
    n = breaks.size - 1
    nodes = np.cos(np.pi * (np.arange(FIT_POINTS) + 0.5) / FIT_POINTS)
    coef = np.empty((n, degree + 1))
    for k in range(n):
        lo, half = breaks[k], 0.5 * (breaks[k + 1] - breaks[k])
        coef[k] = chebyshev.cheb2poly(chebyshev.chebfit(
            nodes, mills_ratio(lo + half * (nodes + 1.0)), degree))
    halves = np.arange(int(2 * breaks[-1])) / 2.0
    index = np.searchsorted(breaks, halves, side="right") - 1
    return (coef, breaks[:-1].copy(), 2.0 / np.diff(breaks),
            index.astype(np.int64))


_COEF, _LOWER, _INV_HALF, _INDEX = mills_table()
_TOP = BREAKS[-1]


@numba.njit(cache=True, nogil=True, inline="always")
def cdf_pdf(z):
    """``(Phi(z), phi(z))`` with one exponential (module docstring)."""
    x = abs(z)
    pdf = _INV_SQRT_2PI * math.exp(-0.5 * z * z)
    if not x < _TOP:
        # phi is 0 there (nan for a nan z, which the product keeps)
        return (pdf if z < 0.0 else 1.0 - pdf), pdf
    k = _INDEX[int(2.0 * x)]
    y = (x - _LOWER[k]) * _INV_HALF[k] - 1.0
    c = _COEF[k]
    # Estrin's scheme for the degree-13 polynomial: depth 4 instead of 13
    y2 = y * y
    y4 = y2 * y2
    low = ((c[0] + c[1] * y) + (c[2] + c[3] * y) * y2
           + ((c[4] + c[5] * y) + (c[6] + c[7] * y) * y2) * y4)
    high = ((c[8] + c[9] * y) + (c[10] + c[11] * y) * y2
            + (c[12] + c[13] * y) * y4)
    tail = pdf * (low + high * (y4 * y4))
    return (tail if z < 0.0 else 1.0 - tail), pdf
