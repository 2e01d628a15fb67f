"""The one-pass kernels of the Gaussian margins of a diagonal covariance
(:mod:`pac_particles.problem.point_kernels`) against their plain-numpy
twin, serial and parallel, and the point risk that reads them against the
products they replace."""

import numpy as np
import pytest

from pac_particles.core import parallel
from pac_particles.problem.gaussian_losses import (GaussianPointRisk,
                                                   expected_margin_loss)
from pac_particles.problem.point_kernels import margin_moments, moment_sums
from pac_particles.problem.risks import ClassificationRisk


def numpy_moments(X, m, var):
    return X @ m, (X * X) @ var


def numpy_sums(X, a, b):
    return X.T @ a, (X * X).T @ b


@pytest.mark.parametrize("mode", ["serial", "parallel"])
@pytest.mark.parametrize("shape", [(1, 1), (7, 3), (1003, 17)])
def test_one_pass_kernels_match_numpy(mode, shape):
    rng = np.random.default_rng(shape[0])
    X = rng.normal(size=shape)
    m, var = rng.normal(size=shape[1]), rng.gamma(2.0, size=shape[1])
    a, b = rng.normal(size=shape[0]), rng.normal(size=shape[0])
    with parallel.forced(mode):
        got = margin_moments(X, m, var) + moment_sums(X, a, b)
    want = numpy_moments(X, m, var) + numpy_sums(X, a, b)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-10)
    # the squares, not the values, weigh the variances: a kernel reading
    # |x| or x would fail here on the negative entries
    assert not np.allclose(want[1], X @ var)


@pytest.mark.parametrize("loss", ["zero_one", "hinge"])
def test_point_risk_of_a_diagonal_s_is_that_of_the_dense_s(loss):
    """The diagonal path (one-pass kernels) against the dense path (BLAS on
    ``diag(var)``): the same risk and gradients."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(400, 6))
    X[5] = 0.0                                    # an all-zero row is dropped
    risk = ClassificationRisk(rng.integers(0, 2, 400), loss)
    terms = GaussianPointRisk(X, risk)
    m, var = rng.normal(size=6), rng.gamma(2.0, size=6) * 0.1
    value, g_m, g_var = terms(m, var)
    dense_value, dense_g_m, dense_g_cov = terms(m, np.diag(var))
    assert value == pytest.approx(dense_value, rel=1e-12)
    np.testing.assert_allclose(g_m, dense_g_m, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(g_var, np.diag(dense_g_cov), rtol=1e-9,
                               atol=1e-12)
    # and against the closed form summed by hand
    keep = np.any(X != 0, axis=1)
    mu = risk.signs[keep] * (X[keep] @ m)
    v = (X[keep] ** 2) @ var
    want = (risk.weights[keep] * expected_margin_loss(loss, mu, v)[0]).sum()
    assert value == pytest.approx(want + terms.constant, rel=1e-12)
