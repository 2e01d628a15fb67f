"""The estimator's certificate holds on simulated data whose population AUC
is known (pac_particles.study.certificates.coverage), small sizes; the
200-repetition study is ``scripts/certificates_table.py``."""

import numpy as np
import pytest

from pac_particles.auc import linear_auc_risk
from pac_particles.estimator import PACBayesAUC
from pac_particles.study.certificates import (coverage, gaussian_population,
                                              posterior_draws_raw)
from scipy.stats import norm


def test_closed_form_population_risk_matches_a_very_large_sample():
    rng = np.random.default_rng(0)
    shift = np.array([0.6, -0.4, 0.2])
    X, y = gaussian_population(300, 0.3, shift, rng)
    est = PACBayesAUC(method="ep", lam=300.0).fit(X, y)
    theta, weights = posterior_draws_raw(est, rng, size=50)
    X_pop, y_pop = gaussian_population(200_000, 0.3, shift, rng)
    sampled = weights @ linear_auc_risk(theta, X_pop[y_pop], X_pop[~y_pop])
    closed = weights @ norm.cdf(-(theta @ shift)
                                / (np.sqrt(2) * np.linalg.norm(theta, axis=1)))
    assert sampled == pytest.approx(closed, abs=0.004)


def test_certificate_covers_the_population_risk_of_the_randomised_score():
    result = coverage(n=300, repetitions=12, delta=0.1, seed=1,
                      estimator_kwargs=dict(method="ep", grid_size=5))
    assert result["coverage"] >= 1 - result["delta"]
    # not vacuous on these sizes, so the coverage says something
    assert np.all(result["certified"] < 0.5)
    assert np.all(result["population"] < result["certified"])


def test_certificate_of_the_most_certified_step_still_covers():
    """SMC's default ``cv_rule='certified'`` picks the posterior by its
    certificate; the kl/Catoni bounds hold for every posterior at once, so
    the certificate must still cover its population risk."""
    result = coverage(n=300, repetitions=8, delta=0.1, seed=2,
                      estimator_kwargs=dict(method="smc", grid_size=8,
                                            n_folds=3, n_particles=50,
                                            len_chain=4))
    assert result["coverage"] >= 1 - result["delta"]
    assert np.all(result["certified"] < 0.5)
    assert np.all(result["population"] < result["certified"])
