"""The normal cdf and density of the numba pair kernels against scipy."""

import math

import numba
import numpy as np
import pytest
from scipy.special import ndtr
from scipy.stats import norm

from pac_particles.core import normal


@numba.njit
def _both(z):
    cdf = np.empty_like(z)
    pdf = np.empty_like(z)
    for k in range(z.size):
        cdf[k], pdf[k] = normal.cdf_pdf(z[k])
    return cdf, pdf


def _relative_error(value, reference):
    return np.abs(value / reference - 1.0)


# scipy's ndtr is itself off by up to 1e-14 at |z| = 4-8, 4e-14 at 8-16 and
# 2e-13 at 24-37 (the rounding of z / sqrt 2 in its exponent), hence the
# tolerances: each twice the two errors added
@pytest.mark.parametrize("low, high, rtol", [(0.0, 8.0, 3e-14),
                                             (8.0, 20.0, 2e-13),
                                             (20.0, 37.0, 1e-12)])
def test_cdf_and_pdf_match_scipy_in_both_tails(low, high, rtol):
    x = np.linspace(low, high, 20001)
    z = np.concatenate([-x, x])
    cdf, pdf = _both(z)
    assert np.all(_relative_error(cdf, ndtr(z)) < rtol)
    assert np.all(_relative_error(pdf, norm.pdf(z)) < rtol)


def test_the_tolerance_rejects_an_interpolant_of_too_low_a_degree():
    # the table evaluated in numpy, as the kernel does: degree 13 meets the
    # tolerance of the test above near 0, degree 9 does not
    x = np.linspace(0.0, 4.0, 4001)
    exact = normal.mills_ratio(x)

    def evaluate(degree):
        coef, lower, inv_half, index = normal.mills_table(degree=degree)
        k = index[(2 * x).astype(int)]
        y = (x - lower[k]) * inv_half[k] - 1.0
        return np.polynomial.polynomial.polyval(y, coef[k].T, tensor=False)
    assert np.max(_relative_error(evaluate(normal.DEGREE), exact)) < 2e-14
    assert np.max(_relative_error(evaluate(9), exact)) > 1e-12


def test_limits_and_nan():
    z = np.array([0.0, -0.0, math.inf, -math.inf, 40.0, -40.0, 1e300, math.nan])
    cdf, pdf = _both(z)
    # Phi(0) = phi(0) M(0): 1/2 up to the rounding of the fitted M(0)
    assert np.all(np.abs(cdf[:2] - 0.5) < 1e-15)
    assert list(cdf[2:7]) == [1.0, 0.0, 1.0, 0.0, 1.0]
    assert list(pdf[2:7]) == [0.0] * 5
    assert math.isnan(cdf[7]) and math.isnan(pdf[7])


def test_every_integer_part_maps_to_its_interval():
    _, lower, inv_half, index = normal.mills_table()
    for whole in range(int(2 * normal.BREAKS[-1])):
        k = index[whole]
        assert lower[k] <= whole / 2 < lower[k] + 2.0 / inv_half[k]
