"""The closed-form population AUC of the coverage harness, and its power at
the level of the kl formula: in settings where the correct kl bound is nearly
tight it covers while the wrong variants (m = n, KL = 0) fail
(``negative_control_coverage``). The 200-repetition study and the
1000-repetition controls are ``scripts/certificates_table.py``."""

import math

import numpy as np
import pytest

from pac_particles.problem.auc import linear_auc_risk, split_risk
from pac_particles.bounds import kl_bound
from pac_particles.sklearn.estimator import PACBayesAUC
from lab.study.certificates import (
    NEGATIVE_CONTROLS, coordinate_score_sample, coverage, coverage_p_value,
    finite_gibbs_posterior, gaussian_population, kl_bound_variants,
    negative_control_coverage, posterior_draws_raw)
from scipy.stats import binomtest, entropy, norm

# "covers at 1 - delta" is rejected when P(Binomial(reps, delta) >= failures)
# is below this: a correct bound fails the test with probability < 0.001
ALPHA = 1e-3


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


def test_bound_variants_are_the_library_kl_bound_at_their_m_and_kl():
    q, kl = np.array([0.0, 0.12, 0.4]), np.array([0.0, 2.5, 7.0])
    bounds = kl_bound_variants(q, kl, n_pos=20, n_neg=500, delta=0.05)
    for name, m, kl_used in (("correct", 20, kl), ("m = n", 520, kl),
                             ("KL = 0", 20, 0 * kl),
                             ("all pairs", 10_000, kl)):
        expected = [kl_bound(qi, ki, m, 0.05).bound
                    for qi, ki in zip(q, kl_used)]
        np.testing.assert_allclose(bounds[name], expected, atol=1e-12)


@pytest.mark.parametrize("failures", [0, 10, 22, 74])
def test_coverage_p_value_is_the_one_sided_binomial_test(failures):
    expected = binomtest(failures, 200, 0.05, alternative="greater").pvalue
    assert coverage_p_value(failures, 200, 0.05) == pytest.approx(expected)


def test_finite_gibbs_posterior_kl_is_the_relative_entropy_to_uniform():
    risks = np.random.default_rng(0).random((3, 50))
    for lam, exact in ((0.0, 0.0), (1e6, math.log(50))):
        _, kl = finite_gibbs_posterior(risks, lam)
        np.testing.assert_allclose(kl, exact, atol=1e-9)
    weights, kl = finite_gibbs_posterior(risks, 30.0)
    np.testing.assert_allclose(weights.sum(axis=1), 1.0)
    np.testing.assert_allclose(kl, [entropy(w, np.full(50, 1 / 50))
                                    for w in weights])


@pytest.mark.parametrize("negative_scale", [0.0, 1.0])
def test_coordinate_score_population_risk_matches_a_very_large_sample(
        negative_scale):
    shift = np.array([0.5, 1.2])
    pos, neg = coordinate_score_sample(3000, 3000, shift, negative_scale,
                                       np.random.default_rng(1))
    closed = norm.cdf(-shift / math.sqrt(1 + negative_scale ** 2))
    # 9 million pairs per score: standard error below 0.006
    np.testing.assert_allclose(split_risk(pos, neg), closed, atol=0.02)


@pytest.fixture(scope="module")
def fixed_score():
    return negative_control_coverage(repetitions=1000, seed=0,
                                     **NEGATIVE_CONTROLS["fixed score"])


@pytest.fixture(scope="module")
def gibbs_over_scores():
    return negative_control_coverage(
        repetitions=200, seed=0, **NEGATIVE_CONTROLS["Gibbs over 1000 scores"])


def test_correct_bound_covers_in_both_negative_controls(fixed_score,
                                                        gibbs_over_scores):
    """m = min(n_pos, n_neg) with the true KL: 0.999 and 1.000 coverage at
    delta = 0.05 (1000 and 200 repetitions); fails if the bound used a
    larger m or a smaller KL than it may: the binomial test rejects
    coverage 1 - delta at 74 failures of 1000 (22 of 200)."""
    for result in (fixed_score, gibbs_over_scores):
        assert result["p_value"]["correct"] >= ALPHA
        assert result["coverage"]["correct"] >= 1 - result["delta"]


def test_fixed_score_rejects_m_equal_n(fixed_score):
    """A fixed score (KL = 0 exactly) on 20 positives and 2000 negatives
    at one point: R_n is a mean of 20 i.i.d. Bernoulli terms, so the bound
    with m = n = 2020 covers only 0.57 of 1000 repetitions (all pairs,
    m = 40000, the same), far below 1 - delta = 0.95."""
    for wrong in ("m = n", "all pairs"):
        assert fixed_score["p_value"][wrong] < ALPHA
        assert fixed_score["coverage"][wrong] < 0.8


def test_gibbs_posterior_over_scores_rejects_kl_zero(gibbs_over_scores):
    """The Gibbs posterior at lam = 200 over 1000 scores of population risk
    0.3 (uniform prior, KL about 5.9 = 0.86 log 1000) picks scores whose
    empirical risk is noise below 0.3: dropping KL covers only about 0.46
    of 200 repetitions (m = n: 0), far below 1 - delta = 0.95."""
    assert gibbs_over_scores["kl"].mean() > 5.0
    for wrong in ("KL = 0", "m = n"):
        assert gibbs_over_scores["p_value"][wrong] < ALPHA
        assert gibbs_over_scores["coverage"][wrong] < 0.8
