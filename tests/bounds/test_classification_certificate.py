"""The classifier's certificate: the right empirical risk and KL, in [0, 1],
and a bound the randomised classifier's population error respects."""

import numpy as np
import pytest

from pac_particles.bounds import classification_certificate
from pac_particles.sklearn.classifier import PACBayesClassifier
from pac_particles.core.gaussian import gaussian_kl


def _classes(n, seed, shift=1.2):
    rng = np.random.default_rng(seed)
    y = rng.uniform(size=n) < 0.5
    X = rng.standard_normal((n, 2)) + shift * np.where(y[:, None], 1.0, -1.0) \
        * np.array([1.0, 0.5])
    return X, y.astype(int)


def _randomised_error(est, X, y, n_draws=4000, seed=0):
    """Monte Carlo error of the randomised classifier: theta ~ N(m, S) on the
    preprocessed design, one draw per use."""
    rng = np.random.default_rng(seed)
    result = est.approximation_.result_
    cov = result.cov if np.ndim(result.cov) == 2 else np.diag(result.cov)
    theta = rng.multivariate_normal(result.mean, cov, size=n_draws)
    design = est.data_.transform(X)
    wrong = (design @ theta.T > 0) != (y[:, None] == 1)
    return float(wrong.mean())


@pytest.mark.parametrize("method", ["vb", "ep"])
def test_gaussian_certificate_uses_the_randomised_error_and_the_gaussian_kl(method):
    X, y = _classes(200, 0)
    est = PACBayesClassifier(method=method, lam=200.0, random_state=0).fit(X, y)
    cert = est.certificate_
    result = est.approximation_.result_
    assert cert.empirical_randomized_risk == pytest.approx(
        _randomised_error(est, X, y), abs=0.01)
    assert cert.kl == pytest.approx(gaussian_kl(result.mean, result.cov, 1.0),
                                    rel=1e-6)
    again = classification_certificate(cert.empirical_randomized_risk, cert.kl,
                                       200, delta=0.05)
    assert est.certified_error_ == pytest.approx(again.bound)
    assert cert.empirical_randomized_risk <= est.certified_error_ <= 1.0


def test_certificate_bounds_the_population_error_of_the_randomised_classifier():
    X, y = _classes(300, 1)
    est = PACBayesClassifier(method="vb", lam=300.0, random_state=0).fit(X, y)
    X_pop, y_pop = _classes(20_000, 2)
    population = _randomised_error(est, X_pop, y_pop, n_draws=500)
    assert not est.certificate_.vacuous
    assert population <= est.certified_error_


def test_smc_certificate_plugs_in_no_monte_carlo_estimate():
    """The particles' log Z and errors are estimates: the candidates are
    the Gaussian fitted to the particles (exact terms) and the exact Gibbs
    posterior from a lower confidence bound on log Z, at eps / 2 each."""
    from pac_particles.bounds import gibbs_certificate
    from pac_particles.problem.risks import ClassificationRisk
    X, y = _classes(120, 3)
    est = PACBayesClassifier(method="smc", lam=120.0, n_particles=100,
                             len_chain=5, random_state=0).fit(X, y)
    post, cert = est.posterior_, est.certificate_
    zero_one = ClassificationRisk(y == est.classes_[1], "zero_one")
    gibbs = gibbs_certificate(post.log_z_lower_bound(0.0025)[0], 120.0,
                              risk=zero_one, delta=0.0225, trivial=0.5)
    alternatives = dict(cert.alternatives)
    assert alternatives["kl, exact Gibbs posterior"] == pytest.approx(
        gibbs.bound)
    assert cert.bound == min(alternatives.values())
    assert sum(dict(cert.delta_shares).values()) == pytest.approx(0.05)
    assert 0.0 <= est.certified_error_ <= 1.0


def test_no_certificate_where_its_assumptions_fail():
    X, y = _classes(120, 4)
    pu = PACBayesClassifier(method="vb", lam=120.0, pu_prior=0.3).fit(X, y)
    assert pu.certificate_ is None and pu.certified_error_ is None
    hinge = PACBayesClassifier(method="smc", loss="hinge", lam=120.0,
                               n_particles=60, len_chain=4,
                               random_state=0).fit(X, y)
    assert hinge.certificate_ is None
