"""The risk abstraction: AUCRisk against explicit pair-by-pair definitions."""

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from pac_particles.problem.auc import auc_risk
from pac_particles.core.checks import InputError
from pac_particles.problem.risks import AUCRisk, duplicate_groups


def _labelled(seed=0, n=23, d=3):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = (rng.uniform(size=n) < 0.4).astype(int)
    y[:2] = [0, 1]
    return X, y


def _incidence(risk):
    """Dense A (P x n), rows = pairs (i pos, j neg) in row-major order,
    columns in the risk's order: u_ij = s_i - s_j."""
    A = np.zeros((risk.n_terms, risk.n))
    k = 0
    for i in range(risk.n_pos):
        for j in range(risk.n_neg):
            A[k, i] = 1.0
            A[k, risk.n_pos + j] = -1.0
            k += 1
    return A


def test_auc_risk_object_equals_one_minus_sklearn_auc():
    X, y = _labelled()
    risk = AUCRisk(y)
    S = np.random.default_rng(1).standard_normal((5, y.size))
    S[:, 3] = S[:, 4]   # a tie
    expected = [1.0 - roc_auc_score(y, s) for s in S]
    np.testing.assert_allclose(risk(S), expected, rtol=0, atol=1e-12)
    assert risk(S[0]) == pytest.approx(auc_risk(S[0], y), abs=1e-15)


def test_linear_risk_on_ordered_rows_equals_risk_of_scores():
    X, y = _labelled()
    risk = AUCRisk(y)
    theta = np.random.default_rng(2).standard_normal((7, X.shape[1]))
    np.testing.assert_allclose(risk.linear(theta, risk.ordered(X)),
                               risk(theta @ X.T), rtol=0, atol=1e-15)


def test_order_puts_positives_first_and_inverse_restores_input_order():
    _, y = _labelled()
    risk = AUCRisk(y)
    assert np.all(y[risk.order][:risk.n_pos] == 1)
    assert np.all(y[risk.order][risk.n_pos:] == 0)
    v = np.arange(y.size) * 1.5
    np.testing.assert_array_equal(v[risk.order][risk.inverse_order], v)
    assert risk.n_terms == risk.n_pos * risk.n_neg == risk.n_pairs
    assert risk.n_independent == min(risk.n_pos, risk.n_neg)
    assert risk.kappa(10.0) == pytest.approx(10.0 / risk.n_pairs)


def test_margin_operator_matches_the_dense_pair_incidence_matrix():
    _, y = _labelled(n=11)
    risk = AUCRisk(y)
    rng = np.random.default_rng(3)
    A = _incidence(risk)
    W = rng.uniform(size=risk.site_shape)
    H = rng.standard_normal(risk.site_shape)
    C = rng.standard_normal((risk.n, 4))
    dense = A.T @ np.diag(W.ravel()) @ A
    np.testing.assert_allclose(risk.gram(W), dense, atol=1e-12)
    np.testing.assert_allclose(risk.gram_times(W, C), dense @ C, atol=1e-12)
    np.testing.assert_allclose(risk.adjoint(H), A.T @ H.ravel(), atol=1e-12)
    B = rng.standard_normal((5, risk.n))
    cov = B.T @ B
    np.testing.assert_allclose(risk.cross_block(B),
                               cov[:risk.n_pos, risk.n_pos:], atol=1e-12)


def test_tied_sites_are_the_pairs_with_identical_inputs():
    X, y = _labelled(n=12)
    X[np.flatnonzero(y == 1)[0]] = X[np.flatnonzero(y == 0)[0]]
    risk = AUCRisk(y)
    tied = risk.tied_sites(duplicate_groups(risk.ordered(X)))
    Xo = risk.ordered(X)
    expected = np.array([[np.array_equal(Xo[i], Xo[risk.n_pos + j])
                          for j in range(risk.n_neg)]
                         for i in range(risk.n_pos)])
    np.testing.assert_array_equal(tied, expected)
    assert tied.sum() == 1


def test_duplicate_groups_label_equal_rows_alike_and_only_them():
    """Against the pairwise definition: wide rows, repeats, and -0.0 equal
    to 0.0 (equal floats with different bytes)."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(30, 300))
    X[7], X[19], X[25] = X[2], X[2], X[11]
    X[4, :] = 0.0
    X[9, :] = -0.0
    groups = duplicate_groups(X)
    same = np.array([[np.array_equal(a, b) for b in X] for a in X])
    np.testing.assert_array_equal(groups[:, None] == groups[None, :], same)
    assert groups[4] == groups[9] and len(set(groups)) == 30 - 4
    with pytest.raises(ValueError, match="2-D"):
        duplicate_groups(X[0])


def test_draw_pairs_is_uniform_over_the_pair_grid_and_seeded():
    _, y = _labelled()
    risk = AUCRisk(y)
    ip, jn = risk.draw_pairs(np.random.default_rng(0), 60_000)
    assert ip.max() < risk.n_pos and jn.max() < risk.n_neg
    counts = np.bincount(ip * risk.n_neg + jn, minlength=risk.n_pairs)
    expected = 60_000 / risk.n_pairs
    # chi-square with P - 1 degrees of freedom, far tail
    chi2 = np.sum((counts - expected) ** 2 / expected)
    assert chi2 < risk.n_pairs + 6 * np.sqrt(2 * risk.n_pairs)
    again = risk.draw_pairs(np.random.default_rng(0), 60_000)
    np.testing.assert_array_equal(again[0], ip)


def test_auc_risk_needs_both_classes():
    with pytest.raises(InputError, match="one class"):
        AUCRisk(np.ones(5))
