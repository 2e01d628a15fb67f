"""ClassificationGibbsModel: likelihood, intercept, SMC against the exact
d = 2 posterior, label-noise conversion, bad input."""

import numpy as np
import pytest

from pac_particles.core.checks import InputError
from pac_particles.smc.label_noise import (label_noise_from_lam,
                                           lam_from_label_noise)
from pac_particles.smc.models import ClassificationGibbsModel
from pac_particles.smc.moves import CalibratedEllipticalSlice, default_move
from pac_particles.smc.posterior import run_smc
from pac_particles.problem.priors import gaussian_prior
from builders import two_d_problem
from lab.reference.quadrature import AngularQuadrature, numpy_loss
from reference import assert_smc_matches_quadrature


@pytest.mark.parametrize("loss", ["zero_one", "hinge", "exponential", "ramp"])
def test_loglik_is_minus_lam_times_mean_loss_with_intercept(loss):
    X, y = two_d_problem(n=60)
    model = ClassificationGibbsModel(X, y, lam=7.5, loss=loss)
    assert model.d == 3
    theta = model.prior.rvs(size=20)["theta"]
    Z = np.column_stack([(X - X.mean(0)) / X.std(0), np.ones(60)])
    margins = np.where(y == 1, 1.0, -1.0) * (theta @ Z.T)
    expected = -7.5 * numpy_loss(loss, margins).mean(axis=1)
    np.testing.assert_allclose(model.loglik(theta), expected, rtol=1e-12)
    assert model.n_risk_evaluations == 20


def test_intercept_column_is_kept_unscaled_and_appended_to_new_inputs():
    X, y = two_d_problem(n=40)
    X[:, 1] = 3.0                                     # a constant column
    model = ClassificationGibbsModel(X, y, lam=1.0)
    assert model.data.d == 3
    np.testing.assert_array_equal(model.data.X[:, 2], 1.0)
    np.testing.assert_array_equal(model.data.X[:, 1], 0.0)   # kept
    assert model.data.feature_names[-1] == "intercept"
    new = model.data.transform(X[:5] + 1.0)
    assert new.shape == (5, 3) and np.all(new[:, 2] == 1.0)
    plain = ClassificationGibbsModel(X[:, :1], y, lam=1.0,
                                     fit_intercept=False, standardize=False)
    np.testing.assert_array_equal(plain.data.X, X[:, :1])


def test_intercept_moves_the_posterior_when_classes_are_shifted():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(150, 1))
    y = (X[:, 0] + 1.0 + 0.3 * rng.normal(size=150) > 0).astype(int)
    post = run_smc(ClassificationGibbsModel(X, y, lam=150.0), n_particles=200,
                   len_chain=5, seed=0)
    # positives where x > -1, i.e. x_std > -(1 + mean) / sd: a positive
    # intercept; the 0-1 risk of the posterior mean is small
    assert post.mean[1] > 0.3
    assert post.lam == 150.0


def test_default_move_is_the_calibrated_elliptical_slice():
    X, y = two_d_problem(n=30)
    assert isinstance(default_move(ClassificationGibbsModel(X, y, lam=3.0)),
                      CalibratedEllipticalSlice)


def test_smc_matches_quadrature_in_two_dimensions_for_the_zero_one_risk():
    """Without intercept or scaling the 0-1 risk is scale-invariant: the
    exact posterior of the direction by quadrature against independent
    waste-free SMC runs (default move)."""
    X, y = two_d_problem(n=120)
    lam = 120.0
    exact = AngularQuadrature(X, y, lam, margins="points")
    model = ClassificationGibbsModel(X, y, lam=lam, fit_intercept=False,
                                     standardize=False)
    # the quadrature and the model agree on the risk of a direction
    phi = np.linspace(0.01, 2 * np.pi - 0.01, 50)
    arcs = np.searchsorted(exact.edges, phi, side="right") - 1
    np.testing.assert_allclose(model.risk(np.column_stack([np.cos(phi),
                                                           np.sin(phi)])),
                               exact.risk[arcs], atol=1e-12)
    assert_smc_matches_quadrature(
        X, y, lam, lambda seed: run_smc(model, n_particles=300, len_chain=10,
                                        seed=seed), margins="points")


def test_label_noise_conversion_both_ways():
    n, q = 50, 0.1
    lam = lam_from_label_noise(q, n)
    assert lam == pytest.approx(n * np.log(9.0))
    assert label_noise_from_lam(lam, n) == pytest.approx(q, rel=1e-12)
    # the likelihood q^k (1 - q)^(n - k) is exp(-lam k / n) up to a constant
    k = np.arange(n + 1)
    log_lik = k * np.log(q) + (n - k) * np.log1p(-q)
    np.testing.assert_allclose(np.diff(log_lik), np.diff(-lam * k / n))
    assert label_noise_from_lam(1e6, 10) == pytest.approx(0.0, abs=1e-300)
    with pytest.raises(InputError, match="below 1/2"):
        lam_from_label_noise(0.6, n)


@pytest.mark.parametrize("kwargs, match", [
    (dict(lam=0.0), "lam"), (dict(lam=1.0, loss="logistic"), "loss"),
    (dict(lam=1.0, prior=gaussian_prior(2)), "dimension")])
def test_bad_input_is_refused(kwargs, match):
    X, y = two_d_problem(n=20)
    with pytest.raises(InputError, match=match):
        ClassificationGibbsModel(X, y, **kwargs)
    with pytest.raises(InputError, match="binary"):
        ClassificationGibbsModel(X, np.arange(20) % 3, lam=1.0)
    X[0, 0] = np.nan
    with pytest.raises(InputError, match="NaN"):
        ClassificationGibbsModel(X, y, lam=1.0)
