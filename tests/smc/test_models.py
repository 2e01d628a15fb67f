import numpy as np
import particles
import pytest
from particles import distributions as dists
from particles import smc_samplers as ssp

from pac_particles.problem.auc import auc_risk
from pac_particles.core.checks import InputError
from pac_particles.smc.models import AUCGibbsModel, GPAUCModel, linear_score_model
from pac_particles.smc.tempering import RobustAdaptiveTempering
from pac_particles.smc.posterior import run_smc
from pac_particles.problem.priors import gaussian_prior
from pac_particles.smc.single_run_variance import (chain_mean_variance,
                                               lineage_mean_variance)
from builders import noisy_linear, two_d_problem
from lab.reference.quadrature import AngularQuadrature
from reference import assert_smc_matches_quadrature


def _separable(n, seed=0):
    return noisy_linear(n, np.arange(1.0, 6.0), seed, noise=0)


def test_loglik_is_minus_lam_times_risk():
    X, y = two_d_problem()
    model = AUCGibbsModel(X, y, lam=7.5, standardize=False)
    theta = model.prior.rvs(size=30)
    expected = [-7.5 * auc_risk(X @ t, y) for t in theta["theta"]]
    np.testing.assert_allclose(model.loglik(theta), expected, atol=1e-12)
    assert model.n_risk_evaluations == 30


@pytest.mark.parametrize("lam", [0.0, -3.0, np.nan])
def test_model_rejects_non_positive_lam(lam):
    X, y = two_d_problem(n=20)
    with pytest.raises(ValueError, match="lam"):
        AUCGibbsModel(X, y, lam=lam)


def test_model_rejects_prior_of_wrong_dimension():
    X, y = two_d_problem(n=20)
    with pytest.raises(ValueError, match="dimension"):
        AUCGibbsModel(X, y, lam=1.0, prior=gaussian_prior(3))
    with pytest.raises(ValueError, match="field 'theta'"):
        AUCGibbsModel(X, y, lam=1.0,
                      prior=dists.StructDist({"beta": dists.MvNormal(loc=np.zeros(2))}))


def test_run_smc_rejects_too_few_particles():
    X, y = two_d_problem(n=20)
    with pytest.raises(ValueError, match="n_particles"):
        run_smc(AUCGibbsModel(X, y, lam=1.0), n_particles=1)


def test_smc_matches_quadrature_in_two_dimensions():
    """Mean direction and log Z of the exact Gibbs posterior (computed by
    exact integration over the arcs of the piecewise-constant risk) agree with
    independent waste-free SMC runs, within their Monte Carlo error."""
    X, y = two_d_problem()
    lam = float(len(y))
    assert_smc_matches_quadrature(X, y, lam, lambda seed: run_smc(
        AUCGibbsModel(X, y, lam=lam, standardize=False), n_particles=500,
        len_chain=10, seed=seed))


def test_model_runs_unchanged_in_particles_smc_waste_free_and_standard():
    X, y = two_d_problem(n=100)
    for wastefree in (True, False):
        np.random.seed(1)
        fk = ssp.AdaptiveTempering(AUCGibbsModel(X, y, lam=50.0),
                                   wastefree=wastefree, len_chain=5)
        smc = particles.SMC(fk=fk, N=100, verbose=False)
        smc.run()
        assert smc.X.shared["exponents"][-1] == 1.0
        assert smc.X.theta["theta"].shape == (500 if wastefree else 100, 2)


@pytest.mark.parametrize("wastefree", [True, False])
def test_steep_target_reaches_exponent_one(wastefree):
    X, y = _separable(150)
    model = AUCGibbsModel(X, y, lam=1e5)
    post = run_smc(model, n_particles=100, len_chain=5, wastefree=wastefree, seed=0)
    assert post.exponents[-1] == 1.0
    assert np.all(np.diff(post.exponents) > 0)
    assert np.isfinite(post.log_z)


def test_robust_tempering_bracket_handles_tiny_first_increment():
    """A log-likelihood spread so wide that delta = 1e-12 already drops the ESS
    below target makes particles' brentq bracket fail; ours still advances."""
    fk = RobustAdaptiveTempering(model=None)
    x = ssp.ThetaParticles(theta=np.zeros(4))
    x.llik = np.array([0.0, -1e14, -1e14, -1e14])
    x.lpost = np.zeros(4)
    x.shared = {"exponents": [0.0], "path_sampling": [0.0]}
    fk.logG(0, None, x)
    delta = x.shared["exponents"][-1]
    # ESS of weights (1, w, w, w) is 2 when 3 w^2 + 6 w - 1 = 0
    w = (-6 + np.sqrt(48)) / 6
    assert delta == pytest.approx(-np.log(w) / 1e14, rel=1e-4)
    with pytest.raises(ValueError):
        ssp.AdaptiveTempering(model=None).logG(0, None, x.copy())


def test_run_stopping_at_max_iter_is_an_error():
    X, y = _separable(150)
    with pytest.raises(RuntimeError, match="max_iter"):
        run_smc(AUCGibbsModel(X, y, lam=1e4), n_particles=50, len_chain=3,
                max_iter=2, seed=0, start="prior")


def test_separable_data_reaches_near_zero_training_risk_and_optimal_test_auc():
    X, y = _separable(400)
    X_test, y_test = _separable(5000, seed=1)
    model = AUCGibbsModel(X, y, lam=2000.0)
    post = run_smc(model, n_particles=200, len_chain=10, seed=0)
    train_risk = np.average(model.risk(post.theta), weights=post.weights)
    assert train_risk < 0.02
    assert 1 - auc_risk(post.score(X_test), y_test) > 0.98


def test_path_and_point_estimates():
    X, y = two_d_problem()
    # the path of Gibbs posteriors: tempering from the prior
    post = run_smc(AUCGibbsModel(X, y, lam=100.0), n_particles=100, len_chain=5,
                   seed=2, start="prior")
    assert post.exponents[0] == 0 and post.exponents[-1] == 1
    assert post.gammas[-1] == 100.0 and post.log_z_path[-1] == post.log_z_tempering
    assert np.all(np.diff(post.log_z_path) <= 0)  # log-likelihood <= 0
    for point in ("bayes_point", "mean", "componentwise_mode"):
        s = post.score(X, point=point)
        assert s.shape == (len(y),) and 1 - auc_risk(s, y) > 0.75
    assert np.linalg.norm(post.bayes_point) <= 1
    with pytest.raises(ValueError, match="unknown point"):
        post.score(X, point="median")


@pytest.mark.parametrize("kwargs, message", [
    (dict(model="not a model"), "model must be"),
    (dict(max_iter=0), "max_iter"),
    (dict(max_iter=-3), "max_iter"),
    (dict(move="slice"), "move must be"),
    (dict(collect=print), "collect must be"),
    (dict(collect=["x"]), "collect must be"),
    (dict(n_particles="100"), "n_particles"),
    (dict(n_particles=float("nan")), "n_particles"),
    (dict(n_particles=50.7), "n_particles"),
    (dict(len_chain=1), "len_chain"),
    (dict(ESSrmin="half"), "ESSrmin"),
    (dict(ESSrmin=1.0), "ESSrmin"),
    (dict(seed="abc"), "seed"),
    (dict(seed=-1), "seed"),
    (dict(seed=2 ** 40), "seed"),
    (dict(seed=1.5), "seed"),
])
def test_run_smc_names_the_bad_argument(kwargs, message):
    # these used to fail deep inside particles or numpy, or (50.7) be truncated
    X, y = noisy_linear(30, [1.0, -1.0])
    args = dict(model=AUCGibbsModel(X, y, lam=30.0), n_particles=20,
                len_chain=3, seed=0)
    args.update(kwargs)
    with pytest.raises(ValueError, match=message):
        run_smc(**args)


# ------------------------------------------------------------ score space

def _wide(n=14, d=40, seed=2):
    """More columns than rows: the linear model has an exact score-space
    form of dimension n."""
    return noisy_linear(n, np.r_[2.0, -1.0, np.zeros(d - 2)], seed)


def test_linear_score_model_samples_scores_when_d_exceeds_n():
    X, y = _wide()
    assert linear_score_model(X, y, 10.0).space == "score"
    assert linear_score_model(X[:, :5], y, 10.0).space == "primal"
    assert linear_score_model(X, y, 10.0, score_space=False).space == "primal"
    with pytest.raises(ValueError, match="score_space"):
        linear_score_model(X, y, 10.0, score_space="yes")


def test_span_coordinates_factor_the_singular_score_prior_exactly():
    """Centred columns give ``X S0 X'`` rank n - 1 (d > n): the span model
    has that many coordinates, and ``B B'`` is the prior covariance of the
    scores itself, with no jitter (numpy's rank and product as reference)."""
    X, y = _wide(n=14, d=40)
    model = linear_score_model(X, y, 10.0, prior_var=0.5)
    design = model.design_data.X
    K = 0.5 * design @ design.T
    assert model.rank == np.linalg.matrix_rank(K, hermitian=True) == 13
    B = model.data.X
    np.testing.assert_allclose(B @ B.T, K, atol=1e-10 * np.abs(K).max())
    # the scores of the coefficients are the coordinates' scores
    w = np.random.default_rng(0).normal(size=(3, model.rank))
    np.testing.assert_allclose(model.linear_coefficients(w) @ design.T,
                               w @ B.T, atol=1e-10)
    X_new, _ = _wide(n=5, seed=7)
    np.testing.assert_allclose(model.data.transform(X_new) @ w.T,
                               model.design_data.transform(X_new)
                               @ model.linear_coefficients(w).T, atol=1e-10)


def test_linear_coefficients_are_the_minimum_norm_preimage_of_the_scores():
    """E[theta | s] under theta ~ N(0, I) is the pseudo-inverse of X applied
    to s (numpy's pinv as the independent reference)."""
    X, y = _wide()
    model = linear_score_model(X, y, 10.0)
    w = np.random.default_rng(0).normal(size=model.rank)
    s = model.data.X @ w
    np.testing.assert_allclose(model.linear_coefficients(w),
                               np.linalg.pinv(model.design_data.X) @ s,
                               atol=1e-8)


def test_score_space_and_theta_space_give_the_same_posterior():
    """Same target in two parametrisations: log Z and the scores of the
    posterior mean on new inputs agree within Monte Carlo error (averages of
    three runs each: one run's scores stray by 0.24-0.40 score sd in d = 40
    with 4000 particles)."""
    X, y = _wide()
    X_new, _ = _wide(n=30, seed=5)
    runs = {}
    for space in (True, False):
        model = linear_score_model(X, y, 20.0, score_space=space)
        log_z, scores = [], []
        for seed in (1, 2, 3):
            post = run_smc(model, n_particles=400, len_chain=10, seed=seed)
            mean = post.mean
            theta = model.linear_coefficients(mean) if space else mean
            log_z.append(post.log_z)
            scores.append(model.design_data.transform(X_new) @ theta)
        runs[space] = (np.mean(log_z), np.mean(scores, axis=0))
    assert runs[True][0] == pytest.approx(runs[False][0], abs=0.15)
    np.testing.assert_allclose(runs[True][1], runs[False][1],
                               atol=0.25 * np.std(runs[False][1]))


def test_every_kept_tempering_step_is_its_own_gibbs_posterior():
    """``at_step(t)`` of a run to 4 n is the Gibbs posterior at ``gamma_t``:
    its mean angle and log Z agree with the exact d = 2 posterior at that
    ``gamma_t`` (quadrature), step by step, within Monte Carlo error."""
    X, y = two_d_problem()
    lam = 4.0 * len(y)
    post = run_smc(AUCGibbsModel(X, y, lam=lam, standardize=False),
                   n_particles=500, len_chain=10, seed=0, keep_steps=True)
    assert post.at_step(post.n_steps) is post
    for t in range(2, post.n_steps):
        step = post.at_step(t)
        exact = AngularQuadrature(X, y, post.gammas[t])
        assert step.lam == pytest.approx(post.gammas[t])
        assert step.exponents[-1] == 1.0 and step.log_z_path[-1] == step.log_z
        angle = np.arctan2(step.mean[1], step.mean[0])
        assert abs(angle - exact.mean_angle) < 0.05
        assert abs(step.log_z - exact.log_z) < 0.2
        # the risk the model's particles see is that of this step's target
        risk = float(step.weights @ step.predictor.risk(step.theta))
        assert risk > float(post.weights @ post.predictor.risk(post.theta))
        # the risks carried from the run's log-likelihoods are the particles'
        np.testing.assert_allclose(step.risks,
                                   step.predictor.risk(step.theta), atol=1e-12)
        # its error bars: the larger of its chains' and lineage estimates
        groups = post.summaries.lineage[t - 1][1]
        np.testing.assert_allclose(step.mean_se ** 2, np.maximum(
            chain_mean_variance(step.theta, step.weights, post.n_chains),
            lineage_mean_variance(step.theta, step.weights, groups)),
            rtol=1e-12)
        assert np.all(step.bayes_point_se > 0)
        quick = post.at_step(t, standard_errors=False)
        assert quick.mean_se is None and quick.log_z_se == step.log_z_se
        assert step.log_z_se ** 2 >= post.summaries.lineage[t - 1][0] * (1 - 1e-12)
    np.testing.assert_allclose(post.risks, post.predictor.risk(post.theta),
                               atol=1e-12)


def test_at_step_needs_the_kept_steps_and_a_valid_step():
    X, y = two_d_problem(n=60)
    post = run_smc(AUCGibbsModel(X, y, lam=60.0), n_particles=50, seed=0,
                   start="prior")
    with pytest.raises(InputError, match="keep_steps"):
        post.at_step(1)
    # the default run from EP's Gaussian has no path of Gibbs posteriors
    bridge = run_smc(AUCGibbsModel(X, y, lam=60.0), n_particles=50, seed=0)
    with pytest.raises(InputError, match="start='prior'"):
        bridge.at_step(1)
    kept = run_smc(AUCGibbsModel(X, y, lam=60.0), n_particles=50, seed=0,
                   keep_steps=True)
    with pytest.raises(InputError, match="n_steps"):
        kept.at_step(kept.n_steps + 1)


def test_draws_of_theta_given_scores_are_the_gaussian_conditional():
    """The exact conditional of ``theta ~ N(0, v I)`` given the scores
    ``s = X theta`` of a rank-deficient design (6 x 9, centred: rank 5),
    in the span: mean ``S0 X' K^+ s`` and covariance
    ``S0 - S0 X' K^+ X S0`` with ``K^+`` numpy's pseudo-inverse at a
    stated tolerance (Monte Carlo, 40 000 draws); the draws reproduce
    ``s`` to rounding. A jittered inverse of the singular ``K`` made this
    depend on the processor's BLAS kernel."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(6, 9))
    y = np.array([1, 0, 1, 0, 1, 0])
    model = linear_score_model(X, y, lam=6.0, prior_var=0.5, score_space=True)
    Xs = model.design_data.X
    assert model.rank == 5
    w = rng.normal(size=model.rank)
    s = model.data.X @ w
    draws = model.sample_linear_coefficients(np.tile(w, (40_000, 1)), rng)
    K_pinv = np.linalg.pinv(0.5 * Xs @ Xs.T, rcond=1e-10, hermitian=True)
    gain = 0.5 * Xs.T @ K_pinv
    np.testing.assert_allclose(draws.mean(axis=0), gain @ s, atol=0.02)
    np.testing.assert_allclose(model.linear_coefficients(w), gain @ s,
                               atol=1e-10)
    np.testing.assert_allclose(np.cov(draws.T),
                               0.5 * np.eye(9) - gain @ Xs * 0.5, atol=0.02)
    np.testing.assert_allclose(draws[:5] @ Xs.T, np.tile(s, (5, 1)),
                               atol=1e-10)
