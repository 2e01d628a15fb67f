"""Scaled flips of the spike-and-slab indicators: SMC's inclusion
probabilities and log Z against the exact sum over the 2^d indicator
configurations (each configuration's evidence by Monte Carlo under its
Gaussian prior), where the Gibbs update of z alone is off."""

import itertools

import numpy as np
import pytest

from pac_particles.core.checks import InputError
from pac_particles.problem.priors import SpikeSlabPrior
from pac_particles.smc.models import AUCGibbsModel
from pac_particles.smc.moves import SpikeSlabMove
from pac_particles.smc.moves.spike_slab_flips import SpikeSlabFlipMove
from pac_particles.smc.posterior import run_smc


def _problem(d=8, n=40, v0=1e-4):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, d))
    y = (X[:, :3] @ [1.5, 0.0, -0.7] + rng.normal(size=n) > 0).astype(int)
    return AUCGibbsModel(X, y, lam=float(n),
                         prior=SpikeSlabPrior(d, p=0.3, v0=v0, v1=1.0))


def _exact(model, draws=20_000, seed=1):
    """log Z and inclusion probabilities: the sum over z of
    p(z) E_{theta ~ N(0, diag(v_z))} exp(-lam R_n(theta))."""
    rng, prior = np.random.default_rng(seed), model.prior
    configs = np.array(list(itertools.product([False, True], repeat=prior.d)))
    log_w = np.empty(len(configs))
    for i, z in enumerate(configs):
        theta = rng.normal(size=(draws, prior.d)) * np.sqrt(prior.variances(z))
        risk = np.asarray(model.risk(theta))
        log_w[i] = (np.log(np.mean(np.exp(-model.lam * risk)))
                    + np.sum(np.where(z, np.log(prior.p), np.log1p(-prior.p))))
    log_z = np.logaddexp.reduce(log_w)
    return log_z, np.exp(log_w - log_z) @ configs


def test_flips_give_the_exact_inclusion_probabilities_where_gibbs_does_not():
    model = _problem()
    log_z, inclusion = _exact(model)
    errors = {}
    for name, move in (("flips", SpikeSlabFlipMove), ("gibbs", SpikeSlabMove)):
        runs = [run_smc(model, n_particles=200, len_chain=5,
                        move=move(model.prior), seed=10 + s,
                        evidence="tempering") for s in range(4)]
        errors[name] = [np.abs(r.inclusion_probs - inclusion).max()
                        for r in runs]
        if name == "flips":
            assert np.mean([r.log_z for r in runs]) == pytest.approx(log_z,
                                                                      abs=0.1)
    assert max(errors["flips"]) < 0.06
    # the negative control: without the flips z sticks at v0 / v1 = 1e-4
    assert max(errors["gibbs"]) > 0.06


def test_under_the_prior_a_flip_is_accepted_with_the_prior_odds():
    """lam = 0: the target ratio times the Jacobian is p_new / p_old, so
    flips out of the spike are accepted with probability p / (1 - p) and
    into it always."""
    from particles import smc_samplers as ssp
    model = _problem(d=3)
    move = SpikeSlabFlipMove(model.prior, n_flips=1)
    theta = model.prior.rvs(size=20_000)
    x = ssp.ThetaParticles(theta=theta.copy())

    def target(particles):
        particles.lpost = model.prior.logpdf(particles.theta)

    target(x)
    z_before = x.theta["z"][:, 0].copy()
    accept = move.flip(x, target, 0)
    odds = model.prior.p / (1 - model.prior.p)
    assert np.mean(accept[~z_before]) == pytest.approx(odds, abs=0.02)
    assert np.all(accept[z_before])
    # the standardised coefficient is kept
    v = model.prior.variances(x.theta["z"][:, 0])
    v_old = model.prior.variances(z_before)
    np.testing.assert_allclose(x.theta["theta"][:, 0] / np.sqrt(v),
                               theta["theta"][:, 0] / np.sqrt(v_old))


def test_bad_n_flips_is_refused():
    with pytest.raises(InputError, match="n_flips"):
        SpikeSlabFlipMove(_problem(d=3).prior, n_flips=0)
