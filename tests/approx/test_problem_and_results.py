"""The approximations set up from one GibbsProblem, and their results as
PosteriorResult (pac_particles.core.posterior_result)."""

import math
import warnings

import numpy as np
import pytest

from builders import noisy_linear
from pac_particles.approx.ep import EPClassification, EPGP, EPLinear
from pac_particles.approx.svgd import SVGD
from pac_particles.approx.classification_vb import ClassificationVB
from pac_particles.approx.vb import GaussianVB
from pac_particles.core.checks import InputError
from pac_particles.core.gaussian import gaussian_draws
from pac_particles.core.posterior_result import PosteriorResult
from pac_particles.problem.problem import GibbsProblem


@pytest.fixture(scope="module")
def data():
    return noisy_linear(60, [1.0, -1.0], seed=0, d=3)


def test_from_problem_is_the_constructor_on_the_same_problem(data):
    X, y = data
    problem = GibbsProblem.ranking(X, y, lam=30.0, pu_prior=0.4)
    pairs = [(EPLinear(X, y, 30.0, pu_prior=0.4),
              EPLinear.from_problem(problem)),
             (GaussianVB(X, y, 30.0, family="diagonal", pu_prior=0.4),
              GaussianVB.from_problem(problem, family="diagonal"))]
    for built, given in pairs:
        # PU ranking: lam / (1 - pi) on the observed risk
        assert given.problem is problem and built.lam == given.lam == 50.0
        np.testing.assert_array_equal(built.fit().mean, given.fit().mean)
        assert given.result_.lam == 50.0 and given.result_.data is problem.data
    classification = GibbsProblem.classification(X, y, 30.0, pu_prior=0.4)
    ep = EPClassification.from_problem(classification)
    vb = ClassificationVB.from_problem(classification, family="diagonal")
    # classification reweights its risk: lam as given
    assert ep.lam == vb.lam == 30.0
    np.testing.assert_array_equal(
        ep.fit().mean, EPClassification(X, y, 30.0, pu_prior=0.4).fit().mean)
    with pytest.raises(InputError, match="ranking problem"):
        EPLinear.from_problem(classification)
    with pytest.raises(InputError, match="classification problem"):
        ClassificationVB.from_problem(problem)
    with pytest.raises(InputError, match="ranking problem"):
        SVGD.from_problem((X, y))


def test_set_lam_moves_the_problem(data):
    X, y = data
    ep = EPLinear(X, y, 20.0, pu_prior=0.5)
    ep.set_lam(10.0)
    assert (ep.lam, ep.lam_pn, ep.problem.lam) == (20.0, 10.0, 20.0)
    assert ep.fit().lam == 20.0


def test_results_follow_the_protocol(data):
    X, y = data
    ep = EPLinear(X, y, 60.0).fit()
    vb = GaussianVB(X, y, 60.0).fit()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # a short run need not converge
        svgd = SVGD(X, y, 60.0, n_particles=20, max_iter=40, seed=0).fit()
    gp = EPGP(X, y, 60.0, kernel="rbf").fit()
    for result in (ep, vb, svgd, gp):
        assert isinstance(result, PosteriorResult)
        assert result.lam == 60.0 and result.data.d == 3
        draws = result.sample(7, 1)
        np.testing.assert_array_equal(draws, result.sample(7, 1))
        assert draws.shape == (7, result.mean.size)
    assert ep.log_evidence == ep.log_z and vb.log_evidence == vb.elbo
    assert math.isnan(svgd.log_evidence)
    assert (ep.space, vb.space, svgd.space, gp.space) == ("primal",) * 3 + ("gp",)
    assert gp.is_gp and not ep.is_gp
    # Gaussian draws go through the one sampler, the particles are resampled
    np.testing.assert_array_equal(
        ep.sample(5, 2), gaussian_draws(ep.mean, ep.cov, 5,
                                        np.random.default_rng(2)))
    assert {tuple(row) for row in svgd.sample(50, 0)} <= \
        {tuple(row) for row in svgd.theta}
    assert np.array_equal(vb.sample(4, seed=3), vb.sample(4, 3))
    coef, offset = ep.raw_coefficients()
    np.testing.assert_allclose(X @ coef + offset, ep.data.X @ ep.mean,
                               atol=1e-10)
    assert svgd.point_estimate().shape == (3,)     # the Bayes point
    np.testing.assert_array_equal(ep.point_estimate("bayes_point"), ep.mean)


def test_score_space_ep_gives_coefficients(data):
    X, y = data
    res = EPLinear(X[:5], y[:5], 5.0, space="score").fit()
    assert res.ep_space == "score" and res.space == "primal"
    assert res.linear_coefficients().shape == (3,)
