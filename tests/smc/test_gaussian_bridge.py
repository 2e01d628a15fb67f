"""Tempering from a Gaussian approximation (the bridge q^(1-t) pi^t) and
the importance draws that replace the run where q is good: exact against
the d = 2 quadrature, in agreement with tempering from the prior, and
refused where they do not apply."""

import numpy as np
import pytest
from scipy import integrate, stats

from pac_particles.problem.auc import auc_risk
from pac_particles.problem.priors import SpikeSlabPrior
from pac_particles.smc.gaussian_bridge import (GaussianBridgeModel,
                                               RadialBridgeStep,
                                               bridge_approximation)
from pac_particles.smc.direction_weights import log_direction_density
from pac_particles.smc.importance_evidence import (gaussian_approximation,
                                                   importance_log_z)
from pac_particles.smc.models import AUCGibbsModel, GPAUCModel
from pac_particles.smc.moves import CalibratedEllipticalSlice
from pac_particles.smc.posterior import run_smc
from builders import noisy_linear, tempered_particles, two_d_problem
from lab.reference.quadrature import AngularQuadrature
from reference import assert_smc_matches_quadrature


def _two_d_model():
    X, y = two_d_problem()
    return X, y, AUCGibbsModel(X, y, lam=float(len(y)), standardize=False)


def test_bridge_loglik_is_the_log_ratio_of_the_gibbs_target_to_q():
    X, y, model = _two_d_model()
    mean, cov = np.array([0.4, -0.2]), np.array([[0.5, 0.1], [0.1, 0.3]])
    bridge = GaussianBridgeModel(model, mean, cov)
    theta = bridge.prior.rvs(size=25)
    t = theta["theta"]
    expected = (stats.multivariate_normal(np.zeros(2), np.eye(2)).logpdf(t)
                - model.lam * np.array([auc_risk(X @ row, y) for row in t])
                - stats.multivariate_normal(mean, cov).logpdf(t))
    np.testing.assert_allclose(bridge.loglik(theta), expected, atol=1e-9)


def _bridge_run(model, bridge_class=GaussianBridgeModel):
    """Tempering estimate only: importance sampling would mask an error of
    the bridge's own log Z."""
    def run(seed):
        post = run_smc(model, n_particles=300, len_chain=10, seed=seed,
                       start="gaussian", evidence="tempering")
        assert post.start == "gaussian" and post.importance is None
        return post
    return run


def _assert_log_z_within_monte_carlo_error(X, y, lam, run, n_runs=6):
    """The mean log Z of ``n_runs`` runs within 4 standard errors of the
    mean (+ 0.01) of the exact d = 2 value: tighter than the 0.2 of
    :func:`assert_smc_matches_quadrature`, which a bridge without its
    ``- log q`` term passes (it is off by 0.13 here)."""
    exact = AngularQuadrature(X, y, lam).log_z
    log_zs = [run(seed).log_z for seed in range(n_runs)]
    se = np.std(log_zs, ddof=1) / np.sqrt(n_runs)
    assert abs(np.mean(log_zs) - exact) < 4 * se + 0.01


def test_bridge_from_ep_matches_quadrature_in_two_dimensions():
    """The bridge's own log Z (product of its incremental weights) and its
    mean direction agree with the exact d = 2 Gibbs posterior."""
    X, y, model = _two_d_model()
    assert_smc_matches_quadrature(X, y, model.lam, _bridge_run(model))
    _assert_log_z_within_monte_carlo_error(X, y, model.lam, _bridge_run(model))


class _BridgeWithoutLogQ(GaussianBridgeModel):
    """The wrong variant: ``log prior - lam r_n`` without ``- log q``,
    whose final target is ``q * prior * exp(-lam r_n)``."""

    def loglik(self, theta, t=None):
        return self.gibbs.prior.logpdf(theta) + self.gibbs.loglik(theta)


def test_a_bridge_without_the_log_q_term_fails_the_quadrature_check(monkeypatch):
    X, y, model = _two_d_model()
    monkeypatch.setattr("pac_particles.smc.posterior.GaussianBridgeModel",
                        _BridgeWithoutLogQ)
    with pytest.raises(AssertionError):
        _assert_log_z_within_monte_carlo_error(X, y, model.lam,
                                               _bridge_run(model))


def test_bridge_and_prior_tempering_agree_on_log_z_and_mean():
    X, y, model = _two_d_model()
    bridge = [run_smc(model, n_particles=300, len_chain=10, seed=s,
                      start="gaussian", evidence="tempering") for s in range(4)]
    prior = [run_smc(model, n_particles=300, len_chain=10, seed=s,
                     start="prior", evidence="tempering") for s in range(4)]
    assert all(p.start == "prior" for p in prior)
    z_b, z_p = [p.log_z for p in bridge], [p.log_z for p in prior]
    se = np.sqrt(np.var(z_b, ddof=1) / 4 + np.var(z_p, ddof=1) / 4)
    assert abs(np.mean(z_b) - np.mean(z_p)) < 4 * se + 0.02
    np.testing.assert_allclose(np.mean([p.mean for p in bridge], axis=0),
                               np.mean([p.mean for p in prior], axis=0),
                               atol=0.05)
    # from a Gaussian close to the target: fewer steps than from the prior
    assert np.mean([p.n_steps for p in bridge]) < np.mean([p.n_steps for p in prior])


def test_default_run_where_q_is_good_is_importance_sampling_and_exact():
    """On the d = 2 problem EP's weights are light-tailed: the default is
    the importance draws alone, and their log Z and mean are the
    quadrature's."""
    X, y, model = _two_d_model()
    post = run_smc(model, n_particles=100, len_chain=10, seed=0)
    assert post.start == "importance" and post.n_steps == 1
    assert post.importance.pareto_k < 0.5
    exact = AngularQuadrature(X, y, model.lam)
    assert abs(post.log_z - exact.log_z) < 4 * post.log_z_se + 0.005
    np.testing.assert_allclose(post.mean, exact.mean,
                               atol=4 * np.max(post.mean_se) + 0.01)
    assert_smc_matches_quadrature(X, y, model.lam, lambda seed: run_smc(
        model, n_particles=100, len_chain=10, seed=seed))


def test_direction_weights_match_quadrature_and_shrink_the_tail():
    """Weighting the draws' directions (the radius integrated out) is exact
    for the AUC risk and lighter-tailed than weighting ``theta``."""
    X, y, model = _two_d_model()
    mean, cov = gaussian_approximation(model)
    exact = AngularQuadrature(X, y, model.lam).log_z
    both = [importance_log_z(model, mean, cov, 4000, seed=1, directions=d)
            for d in (True, False)]
    assert both[0].pareto_k < both[1].pareto_k
    assert abs(both[0].log_z - exact) < 4 * both[0].log_z_se + 0.005
    # posterior draws: a chi_2 radius, as the prior's (the risk sees the
    # direction only): E|theta|^2 = 2
    radius2 = both[0].weights @ np.sum(both[0].theta ** 2, axis=1)
    assert radius2 == pytest.approx(2.0, abs=0.15)


@pytest.mark.parametrize("d", [2, 5, 60])
def test_direction_density_matches_adaptive_quadrature(d):
    rng = np.random.default_rng(d)
    mean = rng.normal(size=d)
    A = rng.normal(size=(d, d))
    chol = np.linalg.cholesky(A @ A.T / d + 0.3 * np.eye(d))
    law = stats.multivariate_normal(mean, chol @ chol.T)
    u = rng.normal(size=(4, d))
    u[0] = mean          # along the mean, and against it
    u[1] = -mean
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    for row, value in zip(u, log_direction_density(u, mean, chol)):
        log_f = lambda r: (d - 1) * np.log(r) + law.logpdf(r * row)
        # scaled by the integrand's peak: the values reach 1e-40
        peak = max(log_f(r) for r in np.geomspace(1e-3, 1e3, 2001))
        reference = integrate.quad(lambda r: np.exp(log_f(r) - peak), 0,
                                   np.inf, epsabs=0, epsrel=1e-12,
                                   limit=400, points=None)[0]
        assert value == pytest.approx(np.log(reference) + peak, abs=1e-6)


@pytest.mark.parametrize("d", [2, 10, 60])
def test_direction_density_of_a_gaussian_narrow_along_its_mean(d):
    """A Gaussian whose spread along its mean is far below its distance
    from 0 (VB's fits at a million rows): the radial integrand is a narrow
    peak, which one trapezoid rule over the tail and the peak missed."""
    rng = np.random.default_rng(d)
    direction = rng.normal(size=d)
    direction /= np.linalg.norm(direction)
    mean = 10.0 * direction
    # sd 0.002 along the mean, 0.05 across it
    cov = 0.05 ** 2 * np.eye(d) + (0.002 ** 2 - 0.05 ** 2) * np.outer(
        direction, direction)
    chol = np.linalg.cholesky(cov)
    law = stats.multivariate_normal(mean, cov)
    u = np.vstack([direction, direction + 0.003 * rng.normal(size=d)])
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    for row, value in zip(u, log_direction_density(u, mean, chol)):
        log_f = lambda r: (d - 1) * np.log(r) + law.logpdf(r * row)
        mode = 10.0 * (row @ direction)
        peak = log_f(mode)
        reference = integrate.quad(lambda r: np.exp(log_f(r) - peak),
                                   mode - 0.05, mode + 0.05, points=[mode],
                                   epsabs=0, epsrel=1e-12, limit=400)[0]
        assert value == pytest.approx(np.log(reference) + peak, abs=1e-6)


def test_gp_default_agrees_with_prior_tempering():
    X, y = noisy_linear(40, np.array([1.0, -0.5]), seed=2)
    model = GPAUCModel(X, y, lam=40.0)
    new = [run_smc(model, n_particles=100, len_chain=10, seed=s) for s in range(3)]
    old = [run_smc(model, n_particles=100, len_chain=10, seed=s,
                   start="prior") for s in range(3)]
    assert all(p.start in ("importance", "gaussian") for p in new)
    se = np.sqrt(np.mean([p.log_z_se ** 2 for p in new + old]) / 1.5)
    assert abs(np.mean([p.log_z for p in new])
               - np.mean([p.log_z for p in old])) < 4 * se + 0.02


def test_auto_keeps_the_prior_path_where_q_does_not_apply():
    X, y = noisy_linear(60, np.array([1.0, -0.5, 0.0]), seed=1)
    slab = AUCGibbsModel(X, y, lam=60.0,
                         prior=SpikeSlabPrior(d=3, p=0.3, v0=0.02, v1=2.0))
    assert bridge_approximation(slab) is None
    assert run_smc(slab, n_particles=50, len_chain=5, seed=0).start == "prior"
    with pytest.raises(ValueError, match="no Gaussian approximation"):
        run_smc(slab, n_particles=50, len_chain=5, seed=0, start="gaussian")
    model = AUCGibbsModel(X, y, lam=60.0)
    # the Gibbs path that keep_steps reads exists from the prior only
    kept = run_smc(model, n_particles=50, len_chain=5, seed=0, keep_steps=True)
    assert kept.start == "prior"
    with pytest.raises(ValueError, match="start='prior'"):
        run_smc(model, n_particles=50, len_chain=5, seed=0, start="gaussian",
                keep_steps=True)


@pytest.mark.parametrize("start, path", [("auto", "prior"),
                                         ("gaussian", "gaussian")])
def test_a_pilot_judged_poor_sends_the_run_to_tempering_and_stays_exact(
        monkeypatch, start, path):
    """Where q's weights are too heavy-tailed (forced here: no tail shape
    is accepted) the default tempers from the prior (``start="gaussian"``:
    along the bridge from q) and refines log Z by importance sampling from
    EP and the particles: exact against the d = 2 quadrature."""
    X, y, model = _two_d_model()
    monkeypatch.setattr("pac_particles.smc.posterior.IMPORTANCE_ALONE_K", -1.0)
    runs = [run_smc(model, n_particles=200, len_chain=10, seed=s, start=start)
            for s in range(4)]
    assert all(p.start == path and p.importance is not None for p in runs)
    exact = AngularQuadrature(X, y, model.lam)
    se = np.sqrt(np.mean([p.log_z_se ** 2 for p in runs]) / len(runs))
    assert abs(np.mean([p.log_z for p in runs]) - exact.log_z) < 4 * se + 0.01
    np.testing.assert_allclose(np.mean([p.mean for p in runs], axis=0),
                               exact.mean, atol=0.05)


def _radial_setup(t=0.5, n=4000):
    """A d = 3 AUC model, a bridge from a radially narrow q, and ``n``
    copies of one particle at exponent ``t``."""
    X, y = noisy_linear(60, [1.0, 0.5, 0.0], seed=4)
    model = AUCGibbsModel(X, y, lam=float(len(y)), standardize=False)
    mean = np.array([1.5, 0.8, 0.1])
    cov = 0.05 * np.eye(3) + 0.02
    bridge = GaussianBridgeModel(model, mean, cov)
    x, target = tempered_particles(bridge, np.tile(mean, (n, 1)), t)
    return bridge, x, target


def test_radial_step_writes_the_fields_the_target_writes():
    """Moved radii carry the risk term over without evaluating it: the
    fields equal the bridge target's own evaluation."""
    np.random.seed(0)
    bridge, x, target = _radial_setup(n=200)
    step = RadialBridgeStep(CalibratedEllipticalSlice(), bridge)
    step.move_radii(x)
    assert 0.5 < step.acceptance[-1] < 1.0
    fresh = x.copy()
    target(fresh)
    for field in ("lprior", "llik", "lpost"):
        np.testing.assert_allclose(getattr(x, field), getattr(fresh, field),
                                   rtol=1e-10, atol=1e-8)


class _NoJacobian(RadialBridgeStep):
    """The wrong variant: the Metropolis ratio of a density in theta, not
    in r (the Jacobian ``r^(d - 1)`` left out)."""

    @staticmethod
    def log_radial(radius, a, b, d):
        return RadialBridgeStep.log_radial(radius, a, b, 1)


@pytest.mark.parametrize("step_class, right", [(RadialBridgeStep, True),
                                               (_NoJacobian, False)])
def test_radial_step_draws_the_radius_of_the_bridge_target(step_class, right):
    """Along a fixed direction the radius's law is ``r^(d - 1) exp(-a r^2
    / 2 + b r)``: the mean of 4,000 chains' radii after 8 steps matches it
    by quadrature (within 5 standard errors); the step without the
    Jacobian fails."""
    np.random.seed(1)
    t = 0.5
    bridge, x, _ = _radial_setup(t)
    step = step_class(CalibratedEllipticalSlice(), bridge)
    u = bridge.mean / np.linalg.norm(bridge.mean)
    for _ in range(8):
        step.move_radii(x)
    r = np.linalg.norm(x.theta["theta"], axis=1)
    np.testing.assert_allclose(x.theta["theta"] / r[:, None],
                               np.broadcast_to(u, (r.size, 3)), atol=1e-12)
    q_inv = np.linalg.inv(bridge.chol @ bridge.chol.T)
    a = (1 - t) * u @ q_inv @ u + t * u @ u
    b = (1 - t) * u @ q_inv @ bridge.mean
    mode = (b + np.sqrt(b * b + 8 * a)) / (2 * a)

    def moment(power):
        return integrate.quad(lambda s: s ** power * np.exp(
            -0.5 * a * (s ** 2 - mode ** 2) + b * (s - mode)), 0, np.inf)[0]
    mean_r = moment(3) / moment(2)
    sd_r = np.sqrt(moment(4) / moment(2) - mean_r ** 2)
    assert (abs(r.mean() - mean_r) < 5 * sd_r / np.sqrt(r.size)) == right
