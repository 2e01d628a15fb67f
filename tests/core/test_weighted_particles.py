"""The weighted-particle summary shared by SMC, SVGD and the path collector."""

import numpy as np
import pytest

from pac_particles.core.checks import InputError
from pac_particles.smc.models import GPAUCModel
from pac_particles.smc.posterior import SMCPosterior
from pac_particles.approx.svgd import SVGDResult
from pac_particles.core.weighted_particles import WeightedParticles


def _cloud(n=40, d=3, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d)) + [2.0, 0.0, -1.0][:d], rng.random(n)


def test_summaries_are_the_weighted_moments_of_the_particles():
    theta, w = _cloud()
    cloud = WeightedParticles(theta, w)
    p = w / w.sum()
    mean = p @ theta
    np.testing.assert_allclose(cloud.weights, p)
    np.testing.assert_allclose(cloud.mean, mean)
    centred = theta - mean
    np.testing.assert_allclose(cloud.cov, centred.T @ (centred * p[:, None]))
    unit = theta / np.linalg.norm(theta, axis=1, keepdims=True)
    np.testing.assert_allclose(cloud.bayes_point, p @ unit)
    assert cloud.ess == pytest.approx(1.0 / np.sum(p ** 2))
    assert cloud.point_estimate("componentwise_mode").shape == (3,)


def test_equal_weights_by_default_and_for_svgd():
    theta, _ = _cloud()
    cloud = WeightedParticles(theta)
    np.testing.assert_allclose(cloud.mean, theta.mean(axis=0))
    assert cloud.ess == pytest.approx(len(theta))
    result = SVGDResult(theta=theta, lam=1.0, bandwidth=0.1, prior_var=1.0,
                        n_iter=1, converged=True, rel_change=0.0, step_size=0.1,
                        kernel_bandwidth=1.0, smoothed_risk=np.zeros(len(theta)),
                        wall_time=0.0)
    for point in ("mean", "bayes_point", "componentwise_mode"):
        np.testing.assert_allclose(result.point_estimate(point),
                                   cloud.point_estimate(point))
    np.testing.assert_allclose(result.cov, np.cov(theta, rowvar=False, ddof=0))


def test_bad_particles_weights_and_point_names_raise_input_error():
    theta, w = _cloud()
    with pytest.raises(InputError, match="2-D"):
        WeightedParticles(theta[0], w)
    with pytest.raises(InputError, match="shape"):
        WeightedParticles(theta, w[:-1])
    with pytest.raises(InputError, match=">= 0"):
        WeightedParticles(theta, -w)
    with pytest.raises(InputError, match="unknown point"):
        WeightedParticles(theta, w).point_estimate("median")


def test_gp_predictive_variance_adds_the_particle_spread_to_the_conditional_variance():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(25, 2))
    y = X[:, 0] + 0.5 * rng.normal(size=25) > 0
    model = GPAUCModel(X, y, lam=10.0)
    s = rng.normal(size=(30, 25))
    post = SMCPosterior(theta=s, weights=np.full(30, 1 / 30), lam=10.0,
                        log_z=0.0, exponents=np.array([0.0, 1.0]),
                        log_z_path=np.zeros(2), data=model.data,
                        predictor=model)
    assert post.is_gp        # the GP model's space
    X_new = model.data.transform(rng.normal(size=(7, 2)))
    K = model.kernel_chol @ model.kernel_chol.T
    K_star = model.kernel(X_new, model.data.X)
    A = np.linalg.solve(K, K_star.T)                     # (n, m)
    draws = s @ A                                        # scores of each particle
    cond = np.diag(model.kernel(X_new, X_new)) - np.einsum("ij,ji->i", K_star, A)
    mean, var = post.predict(X_new, return_var=True, raw=False)
    np.testing.assert_allclose(mean, draws.mean(axis=0), atol=1e-8)
    np.testing.assert_allclose(var, draws.var(axis=0) + cond, rtol=1e-6,
                               atol=1e-8)
