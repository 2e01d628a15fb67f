import warnings

import numpy as np
import pytest
from scipy.linalg import cho_solve

from builders import noisy_linear
from pac_particles.problem.auc import auc_risk
from pac_particles.smc.models import AUCGibbsModel, GPAUCModel
from pac_particles.smc.moves import RegularizedRandomWalk
from pac_particles.smc.posterior import run_smc
from pac_particles.problem.priors import (CholeskyNormal, KernelJitterWarning,
                                  LinearKernel, SquaredExponential,
                                  stable_cholesky)


def _circles(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = (np.sum(X ** 2, axis=1) + 0.3 * rng.normal(size=n) < 1.4).astype(int)
    return X, y


def _linear(n, seed):
    return noisy_linear(n, [1.0, -1.0, 0.5], seed)


def test_gp_prior_logpdf_matches_scipy():
    from scipy.stats import multivariate_normal
    X, _ = _circles(30, 0)
    K = SquaredExponential(lengthscale=0.3, amplitude=2.0)(X)
    C, _ = stable_cholesky(K)
    law = CholeskyNormal(C)
    s = law.rvs(size=5)
    np.testing.assert_allclose(
        law.logpdf(s), multivariate_normal(np.zeros(30), C @ C.T).logpdf(s),
        rtol=1e-8)


def test_gp_loglik_is_minus_lam_times_risk_of_the_latent_scores():
    X, y = _circles(60, 1)
    model = GPAUCModel(X, y, lam=12.0)
    s = model.prior.rvs(size=7)
    expected = [-12.0 * auc_risk(row, y) for row in s["s"]]
    np.testing.assert_allclose(model.loglik(s), expected, atol=1e-12)


def test_gp_with_linear_kernel_matches_the_linear_model():
    """GP prior N(0, X X') on the scores = linear scores under N(0, I):
    same ranking of test points within Monte Carlo error."""
    X, y = _linear(150, 2)
    X_test, y_test = _linear(3000, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", KernelJitterWarning)  # rank d < n
        gp = GPAUCModel(X, y, lam=150.0, kernel=LinearKernel())
    post_gp = run_smc(gp, n_particles=200, len_chain=10, seed=0)
    post_lin = run_smc(AUCGibbsModel(X, y, lam=150.0), n_particles=200,
                       len_chain=10, seed=0)
    auc_gp = 1 - auc_risk(post_gp.predict(X_test), y_test)
    auc_lin = 1 - auc_risk(post_lin.predict(X_test), y_test)
    assert abs(auc_gp - auc_lin) < 0.01
    assert abs(post_gp.log_z - post_lin.log_z) < 1.0


def test_gp_beats_linear_scores_on_circles():
    X, y = _circles(300, 4)
    X_test, y_test = _circles(2000, 5)
    post_gp = run_smc(GPAUCModel(X, y, lam=300.0), n_particles=60, len_chain=5,
                      seed=0)
    post_lin = run_smc(AUCGibbsModel(X, y, lam=300.0), n_particles=60,
                       len_chain=5, seed=0)
    auc_gp = 1 - auc_risk(post_gp.score(X_test), y_test)
    auc_lin = 1 - auc_risk(post_lin.score(X_test), y_test)
    assert auc_gp > auc_lin + 0.15 and auc_gp > 0.85


def test_prediction_at_training_inputs_returns_the_latent_scores():
    X, y = _circles(80, 6)
    model = GPAUCModel(X, y, lam=50.0, kernel=SquaredExponential(2.0))
    s = model.prior.rvs(size=1)["s"][0]
    mean, var = model.predict_scores(model.data.X, s, return_var=True)
    np.testing.assert_allclose(mean, s - model.jitter * cho_solve(
        (model.kernel_chol, True), s), atol=1e-6)
    assert np.all(var >= 0) and np.all(var < 1e-3)


def test_duplicated_rows_succeed_with_jitter():
    X, y = _circles(100, 7)
    X = np.vstack([X, X[:50]])
    y = np.concatenate([y, y[:50]])
    with pytest.warns(KernelJitterWarning, match="jitter"):
        model = GPAUCModel(X, y, lam=100.0, kernel=SquaredExponential(1.0))
    post = run_smc(model, n_particles=30, len_chain=3, seed=0)
    assert post.theta.shape[1] == 150 and np.isfinite(post.log_z)


def test_the_covariance_calibrated_random_walk_is_refused_for_gp():
    X, y = _circles(40, 8)
    with pytest.raises(ValueError, match="refused for GP"):
        run_smc(GPAUCModel(X, y, lam=10.0), move=RegularizedRandomWalk())


@pytest.mark.parametrize("make_kernel, message", [
    (lambda: SquaredExponential(lengthscale=-1.0), "lengthscale"),
    (lambda: SquaredExponential(amplitude=0.0), "amplitude"),
    (lambda: (lambda A, B: np.ones((3, 3))), "shape"),
    (lambda: (lambda A, B: np.full((len(A), len(B)), np.nan)), "NaN"),
    (lambda: (lambda A, B: -np.eye(len(A))), "positive"),
    (lambda: "rbf", "callable"),
])
def test_invalid_kernels_are_value_errors(make_kernel, message):
    X, y = _circles(20, 9)
    with pytest.raises(ValueError, match=message):
        GPAUCModel(X, y, lam=1.0, kernel=make_kernel())


def test_two_thousand_points_run(recwarn):
    X, y = _circles(2000, 10)
    model = GPAUCModel(X, y, lam=20.0, kernel=SquaredExponential(1.0),
                       rank=None)
    post = run_smc(model, n_particles=10, len_chain=2, seed=0)
    assert post.theta.shape == (20, 2000) and post.exponents[-1] == 1.0


def test_gp_ep_chooses_lam_by_leave_one_out_along_the_grid():
    """``PACBayesAUC(method="ep", kernel="rbf", lam="cv")``: the EP-GP path
    along the grid (whose sites exist only after a first fit) and the final
    fit at the chosen value, which beats linear scores on circles."""
    from sklearn.datasets import make_circles
    from pac_particles.sklearn.estimator import PACBayesAUC
    X, y = make_circles(n_samples=160, noise=0.1, factor=0.5, random_state=0)
    est = PACBayesAUC(method="ep", kernel="rbf", lam="cv", grid_size=5,
                      random_state=0).fit(X, y)
    assert est.lam_ in est.cv_.grid and est.posterior_.converged
    linear = PACBayesAUC(method="ep", lam=160.0).fit(X, y)
    assert est.score(X, y) > linear.score(X, y) + 0.2


def test_gp_scores_run_under_particles_smc_with_the_robust_tempering():
    """``particles.SMC(fk=RobustAdaptiveTempering(GPAUCModel(...)))`` with
    fewer particles than points: the tempering object picks the elliptical
    slice move on the kernel's factor (particles' default random walk
    needs a non-singular 150 x 150 particle covariance and fails with 100
    particles), reaches exponent 1, and refuses the random walk by name."""
    import particles
    from particles import smc_samplers as ssp
    from pac_particles.smc.tempering import RobustAdaptiveTempering
    from pac_particles.smc.moves import EllipticalSlice
    X, y = noisy_linear(150, np.array([1.0, -1.0, 0.5]), 3)
    model = GPAUCModel(X, y, lam=150.0)
    fk = RobustAdaptiveTempering(model, len_chain=5)
    assert isinstance(fk.move.mcmc, EllipticalSlice)
    np.random.seed(0)
    smc = particles.SMC(fk=fk, N=100)
    smc.run()
    assert smc.X.shared["exponents"][-1] == 1.0 and np.isfinite(smc.logLt)
    with pytest.raises(ValueError, match="EllipticalSlice"):
        RobustAdaptiveTempering(model, move=ssp.ArrayRandomWalk())
