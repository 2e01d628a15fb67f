"""The one-pass kernels of the Gaussian margins of a diagonal covariance
(:mod:`pac_particles.problem.point_kernels`) against their plain-numpy
twin, serial and parallel, the fused point-risk kernel against its
plain-numpy twin on each built-in loss's closed form written with scipy,
and the point risk that reads them against the products they replace."""

import numpy as np
import pytest

from pac_particles.core import parallel
from pac_particles.problem.gaussian_losses import (GaussianPointRisk,
                                                   expected_margin_loss)
from scipy.special import ndtr

from pac_particles.problem.losses import get_loss
from pac_particles.problem.point_kernels import (gaussian_closed_form,
                                                 gaussian_point_sums,
                                                 margin_moments, moment_sums)
from pac_particles.problem.risks import ClassificationRisk

BUILT_IN = ["zero_one", "hinge", "exponential", "ramp"]


def numpy_normal(t):
    return ndtr(t), np.exp(-0.5 * t * t) / np.sqrt(2.0 * np.pi)


def numpy_positive_part(a, s):
    cdf, pdf = numpy_normal(a / s)
    return a * cdf + s * pdf, cdf, pdf


def numpy_closed_form(loss, mu, var):
    """Each built-in loss's ``E[l(u)]``, ``u ~ N(mu, var)``, and its
    derivatives, in numpy and scipy's ``ndtr``: the twin of the compiled
    ``gaussian_point`` functions."""
    s = np.sqrt(var)
    if loss == "zero_one":
        cdf, pdf = numpy_normal(-mu / s)
        return cdf, -pdf / s, 0.5 * pdf * (mu / s) / var
    if loss == "exponential":
        value = np.exp(-mu + 0.5 * var)
        return value, -value, 0.5 * value
    value, cdf, pdf = numpy_positive_part(1.0 - mu, s)
    if loss == "hinge":
        return value, -cdf, 0.5 * pdf / s
    low, cdf_low, pdf_low = numpy_positive_part(-1.0 - mu, s)
    return (0.5 * (value - low), 0.5 * (cdf_low - cdf),
            0.25 * (pdf - pdf_low) / s)


def numpy_point_sums(X, m, var, signs, weights, loss):
    """The fused kernel's twin: the risk and its gradients in ``m`` and in
    ``diag(S)`` through n-vectors."""
    mu = signs * (X @ m)
    value, d_mu, d_var = numpy_closed_form(loss, mu, (X * X) @ var)
    return ((weights * value).sum(), X.T @ (weights * signs * d_mu),
            (X * X).T @ (weights * d_var))


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


@pytest.mark.parametrize("mode", ["serial", "parallel"])
@pytest.mark.parametrize("loss", BUILT_IN)
def test_closed_forms_match_their_numpy_twin(mode, loss):
    """The compiled scalar closed form over arrays against scipy, far into
    both tails of the standardised margin."""
    rng = np.random.default_rng(7)
    mu = rng.normal(scale=4.0, size=2001)
    var = rng.gamma(1.0, size=2001) + 1e-3
    with parallel.forced(mode):
        got = gaussian_closed_form(get_loss(loss), mu, var)
    for g, w in zip(got, numpy_closed_form(loss, mu, var)):
        # atol: the hinge's a Phi + s phi cancels where both are large
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("mode", ["serial", "parallel"])
@pytest.mark.parametrize("loss", BUILT_IN)
@pytest.mark.parametrize("shape", [(1, 1), (9, 3), (1503, 11)])
def test_fused_point_sums_match_their_numpy_twin(mode, loss, shape):
    rng = np.random.default_rng(shape[0] + 1)
    n, d = shape
    X = rng.normal(size=shape)
    m = 0.3 * rng.normal(size=d)
    var = 0.05 * rng.gamma(2.0, size=d)
    signs = rng.choice([-1.0, 1.0], size=n)
    weights = rng.gamma(2.0, size=n)
    with parallel.forced(mode):
        got = gaussian_point_sums(X, m, var, signs, weights, get_loss(loss))
        value_only = gaussian_point_sums(X, m, var, signs, weights,
                                         get_loss(loss), need_grad=False)
    want = numpy_point_sums(X, m, var, signs, weights, loss)
    assert got[0] == pytest.approx(want[0], rel=1e-10)
    assert value_only[0] == pytest.approx(want[0], rel=1e-10)
    for g, w in zip(got[1:], want[1:]):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)
    if n > 1:
        # the twin tells a kernel that drops the weights, or the signs
        for wrong in (numpy_point_sums(X, m, var, signs, np.ones(n), loss),
                      numpy_point_sums(X, m, var, np.ones(n), weights,
                                       loss)):
            assert not np.allclose(np.hstack([wrong[0], *wrong[1:]]),
                                   np.hstack([got[0], *got[1:]]),
                                   rtol=1e-6)


@pytest.mark.parametrize("loss", BUILT_IN)
def test_point_risk_fused_and_numpy_paths_agree(loss):
    """The point risk's fused path against its n-vector path (a minibatch
    of every row once)."""
    rng = np.random.default_rng(11)
    X = rng.normal(size=(300, 5))
    risk = ClassificationRisk(rng.integers(0, 2, 300), loss)
    terms = GaussianPointRisk(X, risk)
    m, var = rng.normal(size=5), 0.1 * rng.gamma(2.0, size=5)
    fused = terms(m, var)
    spread = terms.sampled(np.arange(300), m, var)
    assert spread[3] > 0
    assert fused[0] == pytest.approx(spread[0], rel=1e-10)
    for g, w in zip(fused[1:], spread[1:3]):
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-12)
