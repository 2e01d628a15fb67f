import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from pac_particles.core import parallel
from pac_particles.problem import auc
from pac_particles.problem.auc import (auc_risk, linear_auc_risk,
                                       merge_count, split_risk)
from pac_particles.problem.data import binary_labels
from lab.reference.quadrature import pairwise_risk


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


@pytest.mark.parametrize("values", [(0, 1), (-1, 1), (2.5, 7), (3, -4),
                                    (False, True)])
def test_binary_labels_match_the_sorted_distinct_values(rng, values):
    """The larger of the two values is the positive class, as np.unique's
    second value says (the reference)."""
    y = np.asarray(values)[rng.integers(0, 2, 50)]
    expected = y == np.unique(y)[1]
    np.testing.assert_array_equal(binary_labels(y), expected)
    np.testing.assert_array_equal(binary_labels(y.tolist()), expected)


@pytest.mark.parametrize("y, match", [([0, 1, 2, 1], "3 distinct"),
                                      ([1, 1, 1], "only one class"),
                                      ([True, True], "only one class"),
                                      ([0.0, np.nan, 1.0], "NaN")])
def test_binary_labels_refuse_anything_but_two_values(y, match):
    with pytest.raises(ValueError, match=match):
        binary_labels(y)


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


# ------------------------------------------- the kernel's two paths (numba / numpy sort)

def numpy_searchsorted_risk(scores_pos, scores_neg):
    """Plain numpy, row by row: sort, then count with searchsorted; a tie
    counts 1/2 (``left`` and ``right`` differ by the tied negatives)."""
    sp, sn = np.atleast_2d(scores_pos), np.atleast_2d(scores_neg)
    n_pos, n_neg = sp.shape[1], sn.shape[1]
    out = []
    for p, q in zip(sp, sn):
        q = np.sort(q)
        twice_bad = (2 * n_pos * n_neg - int(np.searchsorted(q, p, "left").sum())
                     - int(np.searchsorted(q, p, "right").sum()))
        out.append(0.5 * twice_bad / (n_pos * n_neg))
    return np.array(out)


@pytest.fixture(params=["numba_sort", "numpy_sort"])
def kernel_path(request, monkeypatch):
    """Force either path of the kernel whatever the batch size."""
    monkeypatch.setattr(auc, "NUMPY_SORT_MIN_ENTRIES",
                        0 if request.param == "numpy_sort" else 10 ** 12)
    return request.param


def score_batch(rng, kind, n_rows, n_pos, n_neg):
    shape = (n_rows, n_pos + n_neg)
    if kind == "continuous":
        S = rng.normal(size=shape)
    elif kind == "ties":
        S = rng.integers(0, 4, size=shape).astype(float)
    else:  # "signed zeros": -0.0 == 0.0 is a tie
        S = rng.choice([-1.0, -0.0, 0.0, 1.0], size=shape)
    return S[:, :n_pos], S[:, n_pos:]


@pytest.mark.parametrize("mode", ["serial", "parallel"])
@pytest.mark.parametrize("kind", ["continuous", "ties", "signed zeros"])
@pytest.mark.parametrize("n_rows, n_pos, n_neg", [
    (1, 40, 60), (5, 33, 17), (7, 1, 50), (3, 50, 1), (1, 1, 1), (4, 1, 1)])
def test_both_paths_equal_numpy_reference_to_the_last_bit(
        rng, kernel_path, mode, kind, n_rows, n_pos, n_neg):
    sp, sn = score_batch(rng, kind, n_rows, n_pos, n_neg)
    expected = numpy_searchsorted_risk(sp, sn)
    with parallel.forced(mode):
        risks = split_risk(sp, sn)
        single = split_risk(sp[0], sn[0])
    assert np.array_equal(risks, expected)
    assert single == expected[0]
    y = np.r_[np.ones(n_pos), np.zeros(n_neg)]
    if kind == "continuous" and n_pos + n_neg > 2:
        np.testing.assert_allclose(
            risks, [1 - roc_auc_score(y, np.r_[p, q]) for p, q in zip(sp, sn)],
            atol=1e-12, rtol=0)


@pytest.mark.parametrize("n_rows, n", [(1, 100), (1, 1_000), (8, 10), (3, 5_000)])
def test_default_dispatch_on_both_sides_of_the_crossover(rng, n_rows, n):
    """No forcing: tiny batches take the numba sort, the others numpy's."""
    y = rng.integers(0, 2, n)
    y[:2] = [0, 1]
    S = rng.integers(0, n // 4 + 2, size=(n_rows, n)).astype(float)
    assert np.array_equal(auc_risk(S, y),
                          numpy_searchsorted_risk(S[:, y == 1], S[:, y == 0]))
    assert 100 < auc.NUMPY_SORT_MIN_ENTRIES <= 1_000  # the cases straddle it


@pytest.mark.parametrize("threads", [1, 2, 3, 8])
def test_threaded_numpy_sort_splits_rows_exactly(rng, threads):
    """Rows split among more threads than rows, or unevenly: every row sorted."""
    for n_rows in (1, 2, 5):
        blocks = (rng.normal(size=(n_rows, 7)), rng.normal(size=(n_rows, 3)))
        copies = [b.copy() for b in blocks]
        sorted_blocks = auc._sorted_rows(blocks, threads)
        for b, c, s in zip(blocks, copies, sorted_blocks):
            assert np.array_equal(b, c)  # inputs untouched
            assert np.array_equal(s, np.sort(c, axis=1))


def test_linear_risk_equal_on_both_paths(rng, monkeypatch):
    X = rng.integers(0, 3, size=(300, 4)).astype(float)  # ties
    y = rng.integers(0, 2, 300)
    theta = np.round(rng.normal(size=(12, 4)))
    results = []
    for crossover in (0, 10 ** 12):
        monkeypatch.setattr(auc, "NUMPY_SORT_MIN_ENTRIES", crossover)
        results.append(linear_auc_risk(theta, X[y == 1], X[y == 0]))
    assert np.array_equal(results[0], results[1])
    assert np.array_equal(results[0], numpy_searchsorted_risk(
        (X[y == 1] @ theta.T).T, (X[y == 0] @ theta.T).T))
