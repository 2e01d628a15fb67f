"""Pairs drawn within each step's own pooled rows are uniform over all pairs,
and their gradient estimate is unbiased."""

import numpy as np
import pytest
from scipy import stats

from pac_particles.problem.probit_risk import GaussianPairRisk
from pac_particles.problem.row_pools import InMemoryRows, RowPools


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


def test_the_pooled_gradient_is_unbiased():
    """The mean over many steps of the pooled estimate of E_rho[R_n] and
    its gradient at a fixed Gaussian is the exact all-pairs value (within
    four standard errors)."""
    rng = np.random.default_rng(3)
    X_pos = rng.normal(size=(60, 3)) + 0.5
    X_neg = rng.normal(size=(80, 3))
    m, cov = np.array([1.0, -0.5, 0.3]), np.array([0.2, 0.1, 0.3])
    risk, g_m, _ = GaussianPairRisk(X_pos, X_neg)(m, cov)
    pools = RowPools(InMemoryRows(X_pos, X_neg), np.random.default_rng(0),
                     rows=5, reuse=7)
    draws = []
    for _ in range(3000):
        pos, neg, ip, jn = pools.pairs(20)
        r, g, _, _ = GaussianPairRisk(pos, neg).sampled(ip, jn, m, cov)
        draws.append(np.concatenate([[r], g]))
    draws = np.array(draws)
    se = draws.std(axis=0) / np.sqrt(len(draws))
    assert np.all(np.abs(draws.mean(axis=0) - np.concatenate([[risk], g_m]))
                  < 4 * se)


def test_row_pools_check_their_sizes():
    with pytest.raises(ValueError, match="rows"):
        RowPools(InMemoryRows(_ids(3), _ids(3)), np.random.default_rng(0),
                 rows=0)
