"""The models set their problem up once (GibbsProblem, from_problem), and
run_smc's result follows the protocol of every fitted posterior."""

import numpy as np
import pytest
from particles import distributions as dists
from particles import smc_samplers as ssp

from pac_particles.core.checks import InputError
from pac_particles.core.posterior_result import PosteriorResult
from pac_particles.problem.problem import GibbsProblem
from pac_particles.smc.models import (AUCGibbsModel, ClassificationGibbsModel,
                                      GPAUCModel, GPClassificationModel,
                                      SpanAUCModel, linear_score_model,
                                      linear_score_model_for)
from pac_particles.smc.posterior import run_smc
from pac_particles.smc.result import SMCPosterior
from builders import noisy_linear


def _data(n=40, d=3, seed=0):
    return noisy_linear(n, np.arange(1.0, d + 1.0), seed, d=d)


def _same_model(a, b):
    assert type(a) is type(b)
    assert (a.lam, a.lam_pn, a.pu_prior) == (b.lam, b.lam_pn, b.pu_prior)
    np.testing.assert_array_equal(a.data.X, b.data.X)
    theta = a.prior.rvs(size=20)
    np.testing.assert_array_equal(a.loglik(theta), b.loglik(theta))


@pytest.mark.parametrize("make, from_problem", [
    (lambda X, y: AUCGibbsModel(X, y, 8.0, pu_prior=0.3),
     lambda X, y: AUCGibbsModel.from_problem(
         GibbsProblem.ranking(X, y, 8.0, pu_prior=0.3))),
    (lambda X, y: SpanAUCModel(X, y, 8.0, prior_var=2.0),
     lambda X, y: SpanAUCModel.from_problem(GibbsProblem.ranking(X, y, 8.0),
                                            prior_var=2.0)),
    (lambda X, y: GPAUCModel(X, y, 8.0),
     lambda X, y: GPAUCModel.from_problem(GibbsProblem.ranking(X, y, 8.0))),
    (lambda X, y: ClassificationGibbsModel(X, y, 8.0, loss="hinge",
                                           pu_prior=0.3),
     lambda X, y: ClassificationGibbsModel.from_problem(
         GibbsProblem.classification(X, y, 8.0, loss="hinge", pu_prior=0.3))),
    (lambda X, y: GPClassificationModel(X, y, 8.0, loss="ramp"),
     lambda X, y: GPClassificationModel.from_problem(
         GibbsProblem.classification(X, y, 8.0, loss="ramp",
                                     fit_intercept=False))),
])
def test_from_problem_is_the_constructor_on_a_problem_set_up_once(make,
                                                                  from_problem):
    X, y = _data()
    model = make(X, y)
    _same_model(model, from_problem(X, y))
    assert isinstance(model.problem, GibbsProblem)
    assert model.problem.lam == model.lam


def test_pu_labels_rescale_lam_for_ranking_and_reweight_the_classification_risk():
    X, y = _data()
    ranking = AUCGibbsModel(X, y, 6.0, pu_prior=0.25)
    assert ranking.lam == pytest.approx(6.0 / 0.75) and ranking.lam_pn == 6.0
    classification = ClassificationGibbsModel(X, y, 6.0, pu_prior=0.25)
    assert classification.lam == classification.lam_pn == 6.0
    assert classification.empirical_risk.pu_prior == 0.25


def test_from_problem_refuses_another_task_and_a_gp_intercept():
    X, y = _data()
    with pytest.raises(InputError, match="ranking problem"):
        AUCGibbsModel.from_problem(GibbsProblem.classification(X, y, 5.0))
    with pytest.raises(InputError, match="classification problem"):
        GPClassificationModel.from_problem(GibbsProblem.ranking(X, y, 5.0))
    with pytest.raises(InputError, match="no intercept"):
        GPClassificationModel.from_problem(GibbsProblem.classification(X, y, 5.0))
    with pytest.raises(InputError, match="GibbsProblem"):
        AUCGibbsModel.from_problem((X, y, 5.0))


def test_linear_score_model_for_a_problem_picks_the_span_when_d_exceeds_n():
    wide = np.random.default_rng(1).standard_normal((12, 30))
    y = wide[:, 0] > 0
    assert isinstance(linear_score_model_for(GibbsProblem.ranking(wide, y, 5.0)),
                      SpanAUCModel)
    X, y2 = _data()
    model = linear_score_model_for(GibbsProblem.ranking(X, y2, 5.0),
                                   prior_var=4.0)
    assert type(model) is AUCGibbsModel
    _same_model(model, linear_score_model(X, y2, 5.0, prior_var=4.0))
    assert np.var(model.prior.rvs(size=4000)["theta"]) == pytest.approx(4.0,
                                                                     rel=0.1)


def test_run_smc_takes_the_gibbs_models_only():
    prior = dists.StructDist({"theta": dists.MvNormal(cov=np.eye(2))})
    with pytest.raises(InputError, match="Gibbs model"):
        run_smc(ssp.StaticModel(data=None, prior=prior), n_particles=10)


@pytest.fixture(scope="module")
def linear_run():
    X, y = _data(60)
    return X, run_smc(AUCGibbsModel(X, y, 60.0), n_particles=40, len_chain=4,
                      seed=0, keep_steps=True)


def test_smc_posterior_follows_the_protocol(linear_run):
    X, post = linear_run
    assert isinstance(post, PosteriorResult) and isinstance(post, SMCPosterior)
    assert post.log_evidence == post.log_z and post.space == "primal"
    assert post.evidence_method in ("importance sampling", "tempering")
    assert post.log_evidence_se == post.log_z_se
    assert post.data is post.predictor.data and post.lam == 60.0
    draws = post.sample(50, rng=0)
    assert draws.shape == (50, 3)
    assert all((post.theta == row).all(axis=1).any() for row in draws)
    np.testing.assert_array_equal(post.sample(50, rng=0), draws)
    np.testing.assert_array_equal(post.linear_coefficients(), post.mean)
    coef, offset = post.raw_coefficients()
    np.testing.assert_allclose(X @ coef + offset, post.score(X, point="mean"),
                               atol=1e-10)
    path = post.tempering_path
    np.testing.assert_array_equal(path["beta"], post.exponents)
    assert len(path["ess"]) == post.n_steps + 1
    assert path["ess"][0] == post.n_particles


def test_each_tempering_step_follows_the_protocol(linear_run):
    _, post = linear_run
    step = post.at_step(1)
    assert isinstance(step, SMCPosterior)
    assert step.log_evidence == post.log_z_path[1]
    assert step.evidence_method == "tempering" and step.space == "primal"
    assert step.lam == pytest.approx(post.gammas[1])
    assert len(step.tempering_path["log_z"]) == 2
    assert step.sample(10, rng=1).shape == (10, 3)


def test_score_space_coefficients_go_through_the_model():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((14, 30))
    y = X[:, 0] + 0.3 * rng.standard_normal(14) > 0
    model = linear_score_model(X, y, 14.0)
    post = run_smc(model, n_particles=30, len_chain=3, seed=0)
    assert post.space == "score" and not post.is_gp
    w = post.theta[:5]
    np.testing.assert_allclose(post.linear_coefficients(w),
                               model.linear_coefficients(w))
    coef, offset = post.raw_coefficients(w)
    np.testing.assert_allclose(X @ coef.T + offset,
                               model.data.transform(X) @ w.T, atol=1e-9)


def test_gp_posterior_is_in_gp_space_and_has_no_coefficients():
    X, y = _data(30)
    post = run_smc(GPAUCModel(X, y, 30.0), n_particles=20, len_chain=3, seed=0)
    assert post.space == "gp" and post.is_gp
    assert post.sample(7, rng=0).shape == (7, 30)
    with pytest.raises(InputError, match="GP"):
        post.linear_coefficients()
