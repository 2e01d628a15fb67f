"""The classifier's certificate: the right empirical risk and KL, in [0, 1],
and a bound the randomised classifier's population error respects."""

import numpy as np
import pytest

from pac_particles.sklearn.classifier import PACBayesClassifier


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


@pytest.mark.parametrize("method", ["vb", "ep", "smc"])
def test_certificate_is_the_tighter_of_the_part_a_labels_and_the_posterior(
        method):
    """The error certificate: the part-A logistic regression's test-set
    bound on B (m = n_B, at 0.9 eps) or the posterior Gaussian's kl bound
    on B against the part-A prior (0.1 eps), whichever is smaller."""
    from pac_particles.bounds import (CertificateSpec, held_out_bound,
                                      kl_bound)
    from pac_particles.bounds.certification import certificate_candidates
    from pac_particles.problem.problem import GibbsProblem
    X, y = _classes(200, 0)
    est = PACBayesClassifier(method=method, lam=200.0, n_particles=60,
                             len_chain=4, random_state=0).fit(X, y)
    cert = est.certificate_
    problem = GibbsProblem.classification(X, y == 1, 200.0)
    spec = CertificateSpec(seed=0)
    part_a, posterior = certificate_candidates(est.posterior_, problem, spec)
    n_b = part_a.n_rows
    assert part_a.certificate.m == posterior.certificate.m == n_b
    assert part_a.certificate.bound == pytest.approx(held_out_bound(
        part_a.certificate.empirical_randomized_risk, n_b, 0.045).bound)
    assert posterior.certificate.bound == pytest.approx(kl_bound(
        posterior.certificate.empirical_randomized_risk,
        posterior.certificate.kl, n_b, 0.005).bound)
    assert cert.bound == min(part_a.certificate.bound,
                             posterior.certificate.bound)
    assert sum(dict(cert.delta_shares).values()) == pytest.approx(0.05)
    assert est.certified_error_ == cert.bound
    assert 0.0 <= est.deployed_certificate_.bound <= 1.0


def test_certificate_bounds_the_population_error_of_the_randomised_classifier():
    X, y = _classes(300, 1)
    est = PACBayesClassifier(method="vb", lam=300.0, random_state=0).fit(X, y)
    X_pop, y_pop = _classes(20_000, 2)
    population = _randomised_error(est, X_pop, y_pop, n_draws=500)
    assert not est.certificate_.vacuous
    assert population <= est.certified_error_


def test_no_certificate_where_its_assumptions_fail():
    X, y = _classes(120, 4)
    pu = PACBayesClassifier(method="vb", lam=120.0, pu_prior=0.3).fit(X, y)
    assert pu.certificate_ is None and pu.certified_error_ is None
    assert pu.deployed_certificate_ is None


def test_deploy_certified_predicts_with_the_part_a_rule_and_its_test_set_bound():
    """``deploy="certified"``: ``predict_proba`` is scikit-learn's
    standardised logistic regression fitted on part A alone, and
    ``deployed_certificate_`` the kl test-set bound of its labels' error
    on part B (``m = n_B``) at the whole eps."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from pac_particles.bounds import held_out_bound
    from pac_particles.bounds.certification import certificate_split
    from pac_particles.sklearn.binary import certificate_spec
    X, y = _classes(200, 1, shift=0.6)
    est = PACBayesClassifier(method="vb", lam=100.0, random_state=0,
                             deploy="certified").fit(X, y)
    in_a = certificate_split(y == 1, certificate_spec(est), stratified=False)
    user = make_pipeline(StandardScaler(), LogisticRegression(
        max_iter=2000)).fit(X[in_a], y[in_a])
    np.testing.assert_allclose(est.predict_proba(X), user.predict_proba(X),
                               atol=1e-6)
    error = float(np.mean(user.predict(X[~in_a]) != y[~in_a]))
    cert = est.deployed_certificate_
    assert cert.bound == pytest.approx(held_out_bound(
        error, int((~in_a).sum()), est.eps).bound, abs=1e-12)
    np.testing.assert_array_equal(est.predict(X), user.predict(X))


def test_deploy_certified_needs_a_certificate():
    from pac_particles.core.checks import InputError
    X, y = _classes(60, 0)
    with pytest.raises(InputError, match="PU labels"):
        PACBayesClassifier(method="vb", lam=10.0, pu_prior=0.3,
                           deploy="certified").fit(X, y)


def test_the_error_is_certified_on_a_uniform_split_of_the_rows():
    """The error's B is an i.i.d. sample of the population: its split draws
    rows whatever their labels (a stratified B would hold the sample's
    class shares); the AUC's split stays stratified (the AUC is a statement
    about the class-conditional distributions). Across seeds the error's
    split moves the class counts of A, the AUC's never does."""
    from pac_particles.bounds import CertificateSpec
    from pac_particles.bounds.certification import certificate_split
    y = np.arange(200) < 60
    error_counts = {int(certificate_split(y, CertificateSpec(seed=s),
                                          stratified=False)[y].sum())
                    for s in range(10)}
    auc_counts = {int(certificate_split(y, CertificateSpec(seed=s))[y].sum())
                  for s in range(10)}
    assert auc_counts == {30} and len(error_counts) > 2
    assert all(certificate_split(y, CertificateSpec(seed=s),
                                 stratified=False).sum() == 100
               for s in range(10))
