"""Pairs drawn within each step's own pooled rows are uniform over all pairs,
and their gradient estimate is unbiased."""

import numpy as np
import pytest
from scipy import stats

from pac_particles.problem.probit_risk import GaussianPairRisk
from pac_particles.problem.row_pools import (InMemoryRows, RowPools,
                                            pairs_by_positive, shuffled_rows,
                                            window_order)


def _ids(n):
    """Rows whose column 0 is the row's index in its class."""
    return np.column_stack([np.arange(n, dtype=float), np.zeros(n)])


def _pair_counts(source, n_pos, n_neg, draws, seed=0):
    """How often each (positive, negative) pair is drawn, one pair per step:
    steps have their own rows, so the draws are independent and the counts
    multinomial."""
    pools = RowPools(source, np.random.default_rng(seed), rows=2, reuse=3)
    counts = np.zeros((n_pos, n_neg))
    for _ in range(draws):
        pos, neg, ip, jn = pools.pairs(1)
        counts[int(pos[ip[0], 0]), int(neg[jn[0], 0])] += 1
    return counts


def test_pairs_within_pools_are_uniform_over_all_pairs():
    counts = _pair_counts(InMemoryRows(_ids(7), _ids(5)), 7, 5, 20000)
    assert stats.chisquare(counts.ravel()).pvalue > 1e-3


class _RunRows(InMemoryRows):
    """A wrong variant: rows fetched as a run of consecutive rows from a
    random start (the runs do not wrap, so the end rows are drawn too
    rarely); uniform only if the rows came in random order."""

    def draw(self, rng, k_pos, k_neg):
        a = rng.integers(self.n_pos - k_pos + 1)
        b = rng.integers(self.n_neg - k_neg + 1)
        return self.X_pos[a:a + k_pos], self.X_neg[b:b + k_neg]


def test_the_uniformity_test_rejects_runs_of_consecutive_rows():
    counts = _pair_counts(_RunRows(_ids(9), _ids(8)), 9, 8, 20000)
    assert stats.chisquare(counts.ravel()).pvalue < 1e-6


def test_each_step_has_its_own_rows_and_a_round_one_fetch():
    fetched = []

    class Counting(InMemoryRows):
        def draw(self, rng, k_pos, k_neg):
            rows = super().draw(rng, k_pos, k_neg)
            fetched.append(rows[0][:, 0])
            return rows

    X_pos, X_neg = np.arange(500.0)[:, None], -np.arange(400.0)[:, None]
    pools = RowPools(Counting(X_pos, X_neg), np.random.default_rng(1),
                     rows=4, reuse=5)
    seen = []
    for _ in range(10):
        pos, neg, ip, jn = pools.pairs(6)
        assert pos.shape == (4, 1) and neg.shape == (4, 1)
        assert ip.max() < 4 and jn.max() < 4
        seen.append(pos[:, 0])
    assert len(fetched) == 2 and pools.n_rounds == 2
    # the steps of a round share out its fetched rows: disjoint slots
    for r in range(2):
        np.testing.assert_array_equal(
            np.sort(np.concatenate(seen[5 * r:5 * r + 5])),
            np.sort(fetched[r]))


def _assert_unbiased(source, X_pos, X_neg, m, cov, steps=3000):
    """The pair source's estimate of E_rho[R_n] and its gradient, averaged
    over ``steps`` draws of 20 pairs, is the exact all-pairs value within
    four standard errors."""
    risk, g_m, _ = GaussianPairRisk(X_pos, X_neg)(m, cov)
    draws = []
    for _ in range(steps):
        pos, neg, ip, jn = source.pairs(20)
        r, g, _, _ = GaussianPairRisk(pos, neg).sampled(ip, jn, m, cov)
        draws.append(np.concatenate([[r], g]))
    draws = np.array(draws)
    se = draws.std(axis=0) / np.sqrt(len(draws))
    assert np.all(np.abs(draws.mean(axis=0) - np.concatenate([[risk], g_m]))
                  < 4 * se)


def test_the_pooled_gradient_is_unbiased():
    """The mean over many steps of the pooled estimate of E_rho[R_n] and
    its gradient at a fixed Gaussian is the exact all-pairs value (within
    four standard errors)."""
    rng = np.random.default_rng(3)
    X_pos = rng.normal(size=(60, 3)) + 0.5
    X_neg = rng.normal(size=(80, 3))
    m, cov = np.array([1.0, -0.5, 0.3]), np.array([0.2, 0.1, 0.3])
    pools = RowPools(InMemoryRows(X_pos, X_neg), np.random.default_rng(0),
                     rows=5, reuse=7)
    _assert_unbiased(pools, X_pos, X_neg, m, cov)


def test_row_pools_check_their_sizes():
    with pytest.raises(ValueError, match="rows"):
        RowPools(InMemoryRows(_ids(3), _ids(3)), np.random.default_rng(0),
                 rows=0)


def _window_counts(n_pos, n_neg, n_pairs, draws, source=None, seed=0,
                   wrap=0):
    """How often each (positive, negative) pair is a step's ``b``-th pair
    (every ``b``), reading both classes in windows of their shuffled
    copies (the positives' with its first ``wrap`` rows repeated): one pair
    position per step, so the counts are multinomial."""
    rng = np.random.default_rng(seed)
    X_pos, X_neg = _ids(n_pos), _ids(n_neg)
    source = source or InMemoryRows(
        X_pos, X_neg, rng, (shuffled_rows(X_pos, wrap), shuffled_rows(X_neg)))
    counts = np.zeros((n_pairs, n_pos, n_neg))
    for _ in range(draws):
        pos, neg, ip, jn = source.pairs(n_pairs)
        for b in range(n_pairs):
            counts[b, int(pos[ip[b], 0]), int(neg[jn[b], 0])] += 1
    return counts


def test_pairs_in_windows_are_uniform_over_all_pairs():
    # every pair position b of a step, both classes windowed (wrapping
    # around the end of the copy included: 7 and 5 rows, windows of 3)
    for wrap in (0, 3):
        counts = _window_counts(7, 5, 3, 12000, wrap=wrap)
        for b in range(3):
            assert stats.chisquare(counts[b].ravel()).pvalue > 1e-3


def test_a_class_too_small_for_windows_is_drawn_by_index():
    X_pos, X_neg = _ids(2), _ids(9)
    rng = np.random.default_rng(1)
    source = InMemoryRows(X_pos, X_neg, rng,
                          (shuffled_rows(X_pos), shuffled_rows(X_neg)))
    pos, neg, ip, jn = source.pairs(4)
    assert pos is X_pos and neg.shape == (4, 2)
    np.testing.assert_array_equal(jn, np.arange(4))
    counts = _window_counts(2, 9, 4, 8000, source=source)
    for b in range(4):
        assert stats.chisquare(counts[b].ravel()).pvalue > 1e-3


class _UnwrappedWindows(InMemoryRows):
    """A wrong variant: windows that start where they fit in the copy (no
    wrapping around its end), so its first and last rows are read too
    rarely."""

    def _side(self, X, shuffled, n_pairs):
        start = int(self.rng.integers(X.shape[0] - n_pairs + 1))
        return shuffled[start:start + n_pairs], np.arange(n_pairs)


def test_the_window_uniformity_test_rejects_windows_that_do_not_wrap():
    X_pos, X_neg = _ids(7), _ids(5)
    source = _UnwrappedWindows(X_pos, X_neg, np.random.default_rng(0),
                               (shuffled_rows(X_pos), shuffled_rows(X_neg)))
    counts = _window_counts(7, 5, 3, 12000, source=source)
    assert stats.chisquare(counts[0].ravel()).pvalue < 1e-6


def test_the_windowed_gradient_is_unbiased():
    """The windows' estimate of E_rho[R_n] and its gradient, averaged over
    many steps, is the exact all-pairs value (within four standard
    errors); rows given sorted by their score, the order the shuffled copy
    is for."""
    rng = np.random.default_rng(4)
    X_pos = rng.normal(size=(60, 3)) + 0.5
    X_neg = rng.normal(size=(80, 3))
    m, cov = np.array([1.0, -0.5, 0.3]), np.array([0.2, 0.1, 0.3])
    X_pos, X_neg = X_pos[np.argsort(X_pos @ m)], X_neg[np.argsort(X_neg @ m)]
    source = InMemoryRows(X_pos, X_neg, np.random.default_rng(0),
                          (shuffled_rows(X_pos), shuffled_rows(X_neg)))
    _assert_unbiased(source, X_pos, X_neg, m, cov)


def test_the_data_reads_a_large_class_in_windows_of_one_shuffled_copy():
    from pac_particles.problem.data import validate_xy
    rng = np.random.default_rng(2)
    X = rng.normal(size=(60, 2))
    y = np.r_[np.ones(10), np.zeros(50)]
    data = validate_xy(X, y)
    source = data.pair_source(np.random.default_rng(0), 20)
    assert source.shuffled[0] is None
    copy = source.shuffled[1]
    # the negatives in the windows' fixed order, no rows repeated
    np.testing.assert_array_equal(copy, data.X_neg[window_order(50)])
    # made once for these rows, shared by every later source, whatever
    # the windows' length
    assert data.pair_source(np.random.default_rng(1),
                            20).shuffled[1] is copy
    assert data.pair_source(np.random.default_rng(1),
                            30).shuffled[1] is copy


def test_a_window_that_wraps_reads_the_rows_of_the_repeated_copy():
    """A window past the end of the copy is read through indices modulo
    the class size: row for row the window of a copy whose first rows are
    repeated after its last (the one slice of before), with no copy."""
    X_pos, X_neg = _ids(7), _ids(5)
    wrapped = shuffled_rows(X_neg, wrap=5)
    np.testing.assert_array_equal(wrapped[5:], wrapped[:5])
    for seed in range(20):
        plain = InMemoryRows(X_pos, X_neg, np.random.default_rng(seed),
                             (None, shuffled_rows(X_neg)))
        slices = InMemoryRows(X_pos, X_neg, np.random.default_rng(seed),
                              (None, wrapped))
        _, neg, _, jn = plain.pairs(4)
        _, neg_slice, _, jn_slice = slices.pairs(4)
        np.testing.assert_array_equal(neg[jn], neg_slice[jn_slice])
        assert np.may_share_memory(neg, plain.shuffled[1])


def test_window_order_is_one_fixed_permutation():
    for n in (1, 7, 1000):
        order = window_order(n)
        np.testing.assert_array_equal(np.sort(order), np.arange(n))
        np.testing.assert_array_equal(order, window_order(n))
    assert not np.array_equal(window_order(1000), np.arange(1000))


def test_pairs_by_positive_are_uniform_in_the_order_of_their_positives():
    """The pairs of one draw, the positives sorted, have multinomial counts
    over all pairs (uniform by a chi-square test) as independent uniform
    pairs do; the test rejects a wrong variant that sorts the negatives as
    well (pairs then run along the diagonal)."""
    rng = np.random.default_rng(0)
    i, j = pairs_by_positive(rng, 7, 5, 20000)
    assert np.all(np.diff(i) >= 0) and i.size == j.size == 20000
    counts = np.zeros((7, 5))
    np.add.at(counts, (i, j), 1)
    assert stats.chisquare(counts.ravel()).pvalue > 1e-3
    wrong = np.zeros((7, 5))
    np.add.at(wrong, (i, np.sort(j)), 1)
    assert stats.chisquare(wrong.ravel()).pvalue < 1e-6
