import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from pac_particles.problem.auc import (auc_risk, binary_labels,
                                       linear_auc_risk, merge_count,
                                       split_risk)
from reference import pairwise_risk


def test_risk_equals_one_minus_sklearn_auc_on_continuous_scores(rng):
    y = rng.integers(0, 2, 300)
    s = rng.normal(size=300) + y
    assert abs(auc_risk(s, y) - (1 - roc_auc_score(y, s))) < 1e-12


def test_risk_counts_ties_as_half(rng):
    y = np.array([1, 0, 1, 0])
    s = np.array([0.9, 0.1, 0.4, 0.4])
    assert auc_risk(s, y) == 0.125
    y = rng.integers(0, 2, 500)
    s = rng.integers(0, 4, 500).astype(float)  # heavy ties
    assert abs(auc_risk(s, y) - (1 - roc_auc_score(y, s))) < 1e-12
    assert abs(auc_risk(s, y) - pairwise_risk(s, y)) < 1e-12


def test_all_tied_scores_give_one_half(rng):
    y = rng.integers(0, 2, 50)
    y[:2] = [0, 1]
    assert auc_risk(np.zeros(50), y) == 0.5


def test_linear_risk_on_binary_features_matches_sklearn(rng):
    X = rng.integers(0, 2, size=(250, 6)).astype(float)  # SPECT-like
    y = (X[:, 0] + X[:, 1] + rng.random(250) > 1.5).astype(int)
    theta = rng.normal(size=(40, 6))
    theta[:5] = np.round(theta[:5])  # integer weights: many exact ties
    risks = linear_auc_risk(theta, X[y == 1], X[y == 0])
    expected = [1 - roc_auc_score(y, X @ t) for t in theta]
    np.testing.assert_allclose(risks, expected, atol=1e-12, rtol=0)


def test_batched_risk_matches_row_by_row_reference(rng):
    y = rng.integers(0, 2, 120)
    S = rng.normal(size=(25, 120)).round(1)
    np.testing.assert_allclose(auc_risk(S, y), pairwise_risk(S, y), atol=1e-12)
    np.testing.assert_allclose(split_risk(S[:, y == 1], S[:, y == 0]),
                               pairwise_risk(S, y), atol=1e-12)


def test_labels_minus_one_one_and_bool_are_accepted(rng):
    y01 = rng.integers(0, 2, 80)
    s = rng.normal(size=80)
    r = auc_risk(s, y01)
    assert auc_risk(s, 2 * y01 - 1) == r
    assert auc_risk(s, y01.astype(bool)) == r
    assert np.array_equal(binary_labels(2 * y01 - 1), y01 == 1)


def test_risk_of_reversed_scores_is_one_minus_risk(rng):
    y = rng.integers(0, 2, 200)
    s = rng.normal(size=200)
    assert abs(auc_risk(-s, y) - (1 - auc_risk(s, y))) < 1e-12


@pytest.mark.parametrize("n", [1_000, 4_000, 16_000])
def test_merge_step_is_linear_not_quadratic(rng, n):
    """The kernel = two sorts (O(n log n), numpy) + this merge: its loop count
    is at most n_pos + 2 n_neg, where a pairwise loop needs n_pos * n_neg."""
    values = rng.integers(0, n // 10, n).astype(float)  # ties included
    pos = np.sort(values[: n // 3])
    neg = np.sort(values[n // 3:])
    twice_bad, steps = merge_count(pos, neg)
    assert steps <= len(pos) + 2 * len(neg)
    bad = (pos[:, None] < neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    assert twice_bad == 2 * bad


@pytest.mark.parametrize("bad_scores, message", [
    (np.array([0.1, np.nan, 0.3, 0.4]), "NaN"),
    (np.array([0.1, np.inf, 0.3, 0.4]), "NaN or infinite"),
    (np.zeros(3), "shape"),
])
def test_auc_risk_rejects_bad_scores(bad_scores, message):
    with pytest.raises(ValueError, match=message):
        auc_risk(bad_scores, [0, 1, 0, 1])


@pytest.mark.parametrize("labels, message", [
    ([1, 1, 1, 1], "one class"),
    ([0, 1, 2, 1], "binary"),
    ([0, 1, np.nan, 1], "NaN"),
    (["a", "b", "a", "b"], "numeric"),
])
def test_auc_risk_rejects_bad_labels(labels, message):
    with pytest.raises(ValueError, match=message):
        auc_risk(np.arange(4.0), labels)
