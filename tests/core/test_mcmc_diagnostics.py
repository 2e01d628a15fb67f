"""R-hat and bulk / tail ESS in plain numpy [VGSCB21]: against ArviZ's
estimators and against the closed-form ESS of an AR(1) chain."""

import numpy as np
import pytest

from pac_particles.core.checks import InputError
from pac_particles.core.mcmc_diagnostics import ess_bulk, ess_tail, rhat


def _ar1(rho, n_chains, n_draws, seed):
    """Stationary Gaussian AR(1) chains with autocorrelation rho."""
    rng = np.random.default_rng(seed)
    x = np.empty((n_chains, n_draws))
    x[:, 0] = rng.normal(size=n_chains)
    noise = rng.normal(scale=np.sqrt(1 - rho ** 2), size=(n_chains, n_draws))
    for t in range(1, n_draws):
        x[:, t] = rho * x[:, t - 1] + noise[:, t]
    return x


@pytest.mark.parametrize("rho, shift", [(0.0, 0.0), (0.7, 0.0), (0.9, 0.5)])
def test_estimators_match_arviz(rho, shift):
    """Same numbers as arviz.rhat / arviz.ess (rank, bulk, tail) on mixing
    and on non-mixing chains (one chain shifted), odd length included."""
    az = pytest.importorskip("arviz")
    draws = _ar1(rho, 4, 301, seed=1)
    draws[0] += shift
    assert rhat(draws) == pytest.approx(float(az.rhat(draws)), rel=1e-10)
    assert ess_bulk(draws) == pytest.approx(
        float(az.ess(draws, method="bulk")), rel=1e-10)
    assert ess_tail(draws) == pytest.approx(
        float(az.ess(draws, method="tail")), rel=1e-10)


def test_bulk_ess_of_ar1_chains_is_the_closed_form():
    """An AR(1) chain's ESS is S (1 - rho) / (1 + rho)."""
    rho, draws = 0.8, _ar1(0.8, 4, 20000, seed=2)
    expected = draws.size * (1 - rho) / (1 + rho)
    assert ess_bulk(draws) == pytest.approx(expected, rel=0.1)


def test_rhat_separates_mixed_from_unmixed_chains():
    """Chains of one distribution give R-hat near 1; a chain shifted by one
    standard deviation gives R-hat far above 1.01."""
    draws = _ar1(0.5, 4, 2000, seed=3)
    assert rhat(draws) < 1.01
    draws[1] += 1.0
    assert rhat(draws) > 1.05


def test_bad_draws_are_refused():
    with pytest.raises(InputError, match="two chains"):
        rhat(np.zeros((1, 100)))
    with pytest.raises(InputError, match="NaN"):
        ess_bulk(np.full((2, 10), np.nan))
