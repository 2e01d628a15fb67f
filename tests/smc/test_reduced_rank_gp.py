"""The reduced-rank GP prior against the exact GP (every row an inducing
row reproduces its EP posterior; fewer converge to it), against quadrature
with two features, and under ``particles``' own default move."""

import warnings

import numpy as np
import particles
import pytest
from particles import smc_samplers as ssp

from pac_particles.approx.ep import EPGP, EPLinear
from pac_particles.core.feature_maps import NystromFeatures
from pac_particles.core.kernels import SquaredExponential
from pac_particles.problem.problem import GibbsProblem
from pac_particles.problem.reduced_rank import reduced_rank_problem
from pac_particles.smc.models import GPAUCModel
from pac_particles.smc.posterior import run_smc
from pac_particles.smc.reduced_rank_gp import ReducedRankGPAUCModel
from reference import assert_smc_matches_quadrature

KERNEL = SquaredExponential(1.2)


def _circles(n, seed=0, d=2):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = (np.sum(X[:, :2] ** 2, axis=1) + 0.5 * rng.standard_normal(n)
         < 1.4).astype(int)
    return X, y


def _ep_scores(n=40, ranks=(40,)):
    """Exact EPGP's posterior of the training scores, and EPLinear's on
    Nystrom features of the first ``r`` rows of one permutation (nested
    inducing sets), mapped to the training scores ``Phi m``, ``Phi S Phi'``."""
    X, y = _circles(n)
    problem = GibbsProblem.ranking(X, y, lam=float(n), standardize=True)
    exact = EPGP.from_problem(problem, kernel=KERNEL, tol=1e-9).fit()
    order = np.random.default_rng(1).permutation(n)
    reduced = []
    for r in ranks:
        features = reduced_rank_problem(
            problem, NystromFeatures(KERNEL, problem.data.X[order[:r]]))
        fit = EPLinear.from_problem(features, tol=1e-9).fit()
        Phi = features.data.X
        reduced.append((Phi @ fit.mean, Phi @ fit.cov @ Phi.T, fit, features))
    return exact, reduced, X


def test_every_row_as_inducing_row_reproduces_the_exact_gp_posterior():
    exact, [(mean, cov, fit, features)], _ = _ep_scores()
    np.testing.assert_allclose(mean, exact.mean, atol=1e-5)
    np.testing.assert_allclose(cov, exact.cov, atol=1e-5)
    assert fit.log_z == pytest.approx(exact.log_z, abs=1e-5)
    # new rows: phi(x) . m is the GP predictive mean k_*' K^-1 E[s]
    probe = np.random.default_rng(5).standard_normal((7, 2))
    K_star = KERNEL(features.data.design.transform(probe),
                    features.data.design.X)
    reference = K_star @ np.linalg.solve(KERNEL(features.data.design.X),
                                         exact.mean)
    np.testing.assert_allclose(features.data.transform(probe) @ fit.mean,
                               reference, atol=1e-4)


def test_fewer_inducing_rows_converge_to_the_exact_gp_posterior():
    ranks = (5, 15, 40)
    exact, reduced, _ = _ep_scores(ranks=ranks)
    errors = [np.max(np.abs(mean - exact.mean)) for mean, *_ in reduced]
    assert errors[0] > errors[1] > errors[2]
    assert errors[0] > 0.05 and errors[2] < 1e-5


def test_two_features_match_quadrature():
    """With two Nystrom features the posterior of ``w`` is a d = 2 Gibbs
    posterior of the features: SMC on the model agrees with its exact
    integral over the arcs."""
    X, y = _circles(40, seed=2)
    lam = 40.0
    model = ReducedRankGPAUCModel(X, y, lam=lam, kernel=KERNEL, rank=2, seed=0)
    assert model.rank == 2
    assert_smc_matches_quadrature(
        model.data.X, model.data.y, lam,
        lambda seed: run_smc(model, n_particles=300, len_chain=10, seed=seed))


def test_particles_default_move_runs_on_the_reduced_rank_model():
    """``particles.SMC(fk=AdaptiveTempering(model), N=20)`` with its own
    random walk: N * len_chain = 200 particles estimate the covariance of
    w in r = 50 dimensions; on the n = 300 latent scores of the exact GP
    they cannot."""
    X, y = _circles(300, seed=3, d=3)
    np.random.seed(0)
    model = ReducedRankGPAUCModel(X, y, lam=300.0, rank=50, seed=0)
    smc = particles.SMC(fk=ssp.AdaptiveTempering(model), N=20, verbose=False)
    smc.run()
    assert smc.X.shared["exponents"][-1] == 1.0
    assert smc.X.theta["theta"].shape == (200, 50)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # the exact GP's jitter warning
        exact = particles.SMC(fk=ssp.AdaptiveTempering(
            GPAUCModel(X, y, lam=300.0, rank=None)), N=20, verbose=False)
        with pytest.raises(np.linalg.LinAlgError):
            exact.run()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_design_cards_line_runs_with_particles_default_move(seed):
    """``particles.SMC(fk=AdaptiveTempering(GPAUCModel(X, y, lam)), N=20)``
    at n = 300: the default rank (35 Nystrom features) is a parameter
    particles' own random walk calibrates on; the sampler reaches exponent
    1 with a finite log Z, and its scores rank fresh rows of the circles
    (a linear score cannot: AUC about 0.5)."""
    from pac_particles.problem.auc import auc_risk
    from pac_particles.smc.reduced_rank_gp import default_model_rank
    X, y = _circles(300, seed=3 + seed, d=3)
    model = GPAUCModel(X, y, lam=300.0, seed=seed)
    assert isinstance(model, ReducedRankGPAUCModel)
    assert model.rank == default_model_rank(300) == 35
    np.random.seed(seed)
    smc = particles.SMC(fk=ssp.AdaptiveTempering(model), N=20, verbose=False)
    smc.run()
    assert smc.X.shared["exponents"][-1] == 1.0 and np.isfinite(smc.logLt)
    X_test, y_test = _circles(2000, seed=10 + seed, d=3)
    W = smc.W
    mean = W @ smc.X.theta["theta"]
    scores = model.data.transform(X_test) @ mean
    assert 1.0 - auc_risk(scores, y_test) > 0.8


def test_the_rank_of_gp_auc_model():
    """Exact latent scores up to 200 rows, for rank=None and from a problem
    set up already; a reduced rank below n; bad ranks refused."""
    from pac_particles.core.checks import InputError
    X, y = _circles(250, seed=1, d=2)
    assert isinstance(GPAUCModel(X[:200], y[:200], lam=10.0), GPAUCModel)
    assert GPAUCModel(X, y, lam=10.0, rank=None).d == 250
    problem = GibbsProblem.ranking(X, y, lam=10.0, standardize=True)
    assert isinstance(GPAUCModel.from_problem(problem), GPAUCModel)
    reduced = GPAUCModel(X, y, lam=10.0, rank=12, seed=0)
    assert isinstance(reduced, ReducedRankGPAUCModel) and reduced.rank == 12
    assert isinstance(GPAUCModel(X, y, lam=10.0, rank=250), GPAUCModel)
    for bad in ("big", 0, -3):
        with pytest.raises(InputError, match="rank"):
            GPAUCModel(X, y, lam=10.0, rank=bad)
