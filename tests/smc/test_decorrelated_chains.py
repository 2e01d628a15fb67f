"""Waste-free chains doubled until they forget their start: the start
correlation against numpy's, the length reached by a move that never mixes
and by one that mixes at once, the population's layout, and what a run
along the bridge reports of them."""

import warnings

import numpy as np
import pytest
from particles import smc_samplers as ssp

from builders import two_d_problem
from pac_particles.core.checks import InputError
from pac_particles.smc.models import AUCGibbsModel
from pac_particles.smc.moves.decorrelated_chains import (
    ChainsRememberStartWarning, DecorrelatedChainsWF, start_correlation)
from pac_particles.smc.posterior import run_smc


def test_start_correlation_is_the_mean_of_numpys_column_correlations():
    rng = np.random.default_rng(0)
    a = rng.normal(size=(300, 3))
    b = 0.5 * a + rng.normal(size=(300, 3))
    b[:, 2] = rng.normal(size=300)
    expected = np.mean([np.corrcoef(a[:, j], b[:, j])[0, 1] for j in range(3)])
    assert start_correlation(a, b) == pytest.approx(expected, rel=1e-12)
    assert start_correlation(a, a) == pytest.approx(1.0)


def test_constant_columns_are_left_out():
    rng = np.random.default_rng(1)
    a = np.column_stack([rng.normal(size=50), np.ones(50)])
    assert start_correlation(a, a) == pytest.approx(1.0)
    assert start_correlation(np.ones((5, 2)), np.ones((5, 2))) == 0.0


class _Draw(ssp.ArrayMCMC):
    """A step that draws afresh from N(0, 1) (``mix=True``) or one that
    moves nothing (``mix=False``)."""

    def __init__(self, mix):
        self.mix = mix

    def step(self, x, target=None):
        if self.mix:
            x.theta["theta"] = np.random.normal(size=x.theta["theta"].shape)
        target(x)
        return 1.0


def _particles(m, d, seed=0):
    rng = np.random.default_rng(seed)
    theta = np.zeros(m, dtype=[("theta", float, (d,))])
    theta["theta"] = rng.normal(size=(m, d))
    x = ssp.ThetaParticles(theta=theta)
    _target(x)
    return x


def _target(x):
    x.lprior = -0.5 * np.sum(x.theta["theta"] ** 2, axis=1)
    x.llik = np.zeros(x.N) + x.theta["theta"][:, 0]
    x.lpost = x.lprior + x.llik


@pytest.mark.parametrize("mix, length", [(True, 5), (False, 5 * 8)])
def test_length_reached(mix, length):
    """Fresh draws forget their start within the P states; a move that
    never moves doubles the chains up to the cap (8 x P here), and the
    population is M chains of that length, states of a chain M apart.
    Chains stopped by the cap still remembering their start warn, once
    per move; chains that forgot it do not."""
    np.random.seed(0)
    m = 200
    x = _particles(m, 3)
    seq = DecorrelatedChainsWF(_Draw(mix), len_chain=5, max_growth=8)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = seq(x, _target)
        seq(x, _target)
    capped = [w for w in caught
              if issubclass(w.category, ChainsRememberStartWarning)]
    assert len(capped) == (0 if mix else 1)
    assert out.shared["chain_lengths"] == [length]
    assert out.N == m * length
    assert len(out.shared["acc_rates"][-1]) == length - 1
    if not mix:   # every state of chain j is chain j's start
        states = out.theta["theta"].reshape(length, m, 3)
        np.testing.assert_array_equal(states, np.broadcast_to(
            x.theta["theta"], states.shape))
        assert out.shared["start_correlations"] == [pytest.approx(1.0)]
    else:
        assert abs(out.shared["start_correlations"][0]) < 0.1


def test_population_cap_bounds_the_length():
    np.random.seed(0)
    seq = DecorrelatedChainsWF(_Draw(False), len_chain=4, max_growth=32,
                               max_entries=50 * 3 * 10)
    with pytest.warns(ChainsRememberStartWarning):
        out = seq(_particles(50, 3), _target)
    assert out.shared["chain_lengths"] == [10]


def test_bad_correlation_threshold_is_refused():
    with pytest.raises(InputError, match="max_correlation"):
        DecorrelatedChainsWF(_Draw(True), max_correlation=1.5)


def test_a_bridge_run_reports_its_chains_and_a_prior_run_does_not():
    """run_smc's waste-free bridge runs DecorrelatedChainsWF: the result
    holds each move's chain length (at least len_chain, the last one that
    of the final population, M chains) and start correlation; a run from
    the prior holds neither."""
    X, y = two_d_problem()
    model = AUCGibbsModel(X, y, lam=5.0 * len(y), standardize=False)
    post = run_smc(model, n_particles=100, seed=0, start="gaussian",
                   evidence="tempering", ESSrmin=0.9)
    assert post.n_steps >= 2
    assert len(post.chain_lengths) == len(post.start_correlations)
    assert len(post.chain_lengths) == post.n_steps - 1
    assert np.all(post.chain_lengths >= 10)
    assert post.theta.shape[0] == 100 * post.chain_lengths[-1]
    prior = run_smc(model, n_particles=100, seed=0, start="prior",
                    evidence="tempering")
    assert prior.chain_lengths is None and prior.start_correlations is None
