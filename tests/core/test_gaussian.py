"""Shared Gaussian algebra against independent computations."""

import numpy as np
from scipy.linalg import cho_solve
import pytest
from scipy import stats

from pac_particles.core.checks import InputError, check_count, check_positive, resolve_lam
from pac_particles.core.gaussian import (KernelJitterWarning, gaussian_kl,
                                    gp_predictive, jittered_cholesky,
                                    row_variances, span_factor)


def _spd(d, seed):
    A = np.random.default_rng(seed).standard_normal((d, d))
    return A @ A.T + 0.5 * np.eye(d)


@pytest.mark.parametrize("prior", ["scalar", "vector", "matrix"])
def test_gaussian_kl_matches_monte_carlo(prior):
    d = 3
    rng = np.random.default_rng(0)
    m = rng.standard_normal(d)
    S = _spd(d, 1)
    S0 = {"scalar": 2.0, "vector": np.array([0.5, 1.0, 3.0]),
          "matrix": _spd(d, 2)}[prior]
    S0_mat = (np.eye(d) * S0 if np.ndim(S0) == 0
              else np.diag(S0) if np.ndim(S0) == 1 else S0)
    draws = rng.multivariate_normal(m, S, size=400_000)
    log_ratio = (stats.multivariate_normal(m, S).logpdf(draws)
                 - stats.multivariate_normal(np.zeros(d), S0_mat).logpdf(draws))
    se = log_ratio.std() / np.sqrt(draws.shape[0])
    assert gaussian_kl(m, S, S0) == pytest.approx(log_ratio.mean(), abs=5 * se)


@pytest.mark.parametrize("stored", ["vector", "matrix"])
def test_a_diagonal_covariance_under_a_full_prior_matches_monte_carlo(stored):
    """The diagonal path (no factor of ``cov``; ``tr(S0^-1 S)`` from the
    prior's inverse factor) against Monte Carlo, whether the variances come
    as a vector or as a diagonal matrix."""
    d = 4
    rng = np.random.default_rng(5)
    m, var, S0 = rng.standard_normal(d), rng.uniform(0.2, 2.0, d), _spd(d, 6)
    draws = m + rng.standard_normal((400_000, d)) * np.sqrt(var)
    log_ratio = (stats.multivariate_normal(m, np.diag(var)).logpdf(draws)
                 - stats.multivariate_normal(np.zeros(d), S0).logpdf(draws))
    se = log_ratio.std() / np.sqrt(draws.shape[0])
    cov = var if stored == "vector" else np.diag(var)
    assert gaussian_kl(m, cov, S0) == pytest.approx(log_ratio.mean(), abs=5 * se)


def test_gaussian_kl_diagonal_covariance_equals_full_form():
    m, var = np.array([0.3, -1.0]), np.array([0.2, 1.5])
    assert gaussian_kl(m, var, 1.3) == pytest.approx(
        gaussian_kl(m, np.diag(var), 1.3), rel=1e-12)
    assert gaussian_kl(m, var, 1.3) == pytest.approx(
        gaussian_kl(m, var, 1.3 * np.eye(2)), rel=1e-10)


def test_gaussian_kl_rejects_bad_input():
    with pytest.raises(InputError, match="positive definite"):
        gaussian_kl(np.zeros(2), -np.eye(2))
    with pytest.raises(InputError, match="prior_var"):
        gaussian_kl(np.zeros(2), np.eye(2), prior_var=np.array([1.0, -1.0]))


def test_jittered_cholesky_is_exact_when_no_jitter_is_needed():
    K = _spd(4, 3)
    C, jitter = jittered_cholesky(K)
    assert jitter == 0.0
    np.testing.assert_allclose(C @ C.T, K, atol=1e-12)


def test_jittered_cholesky_warns_and_reports_the_jitter_for_a_singular_matrix():
    X = np.array([[0.0], [1.0], [1.0]])      # duplicated input
    K = np.exp(-0.5 * (X - X.T) ** 2)
    with pytest.warns(KernelJitterWarning, match="jitter"):
        C, jitter = jittered_cholesky(K, label="GP kernel")
    assert jitter > 0
    np.testing.assert_allclose(C @ C.T, K + jitter * np.eye(3), atol=1e-12)


def test_a_factor_of_a_numerically_singular_matrix_is_never_accepted_as_is():
    """Rank 5 of 6 (centred Gram matrix): whether numpy's Cholesky fails or
    returns a factor with a pivot of rounding size depends on the BLAS
    kernel; either way jitter is added, so that the inverse through the
    factor agrees with a direct solve of the jittered matrix (it was off by
    1e15 where the rounding let the factor through)."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(6, 9))
    X -= X.mean(axis=0)
    K = 0.5 * X @ X.T
    # a matrix whose Cholesky succeeds on every processor but whose
    # condition is 1e15: the same rule must refuse it
    U = np.linalg.qr(rng.normal(size=(6, 6)))[0]
    K_bad = U @ np.diag([1.0, 1.0, 1.0, 1.0, 1.0, 1e-15]) @ U.T
    for matrix in (K, K_bad):
        with pytest.warns(KernelJitterWarning, match="condition"):
            C, jitter = jittered_cholesky(matrix)
        assert jitter > 0
        A = matrix + jitter * np.eye(6)
        b = rng.normal(size=6)
        np.testing.assert_allclose(cho_solve((C, True), b),
                                   np.linalg.solve(A, b), rtol=1e-4)


def test_jittered_cholesky_ridge_mode_never_fails_on_identical_particles():
    C, jitter = jittered_cholesky(np.zeros((3, 3)), ridge=1e-6,
                                  max_relative_jitter=np.inf, warn=False)
    assert np.all(np.isfinite(C)) and np.all(np.diag(C) > 0)


def test_jittered_cholesky_refuses_an_indefinite_matrix():
    with pytest.raises(InputError, match="not positive semi-definite"):
        jittered_cholesky(np.array([[1.0, 2.0], [2.0, 1.0]]))


def test_gp_predictive_matches_the_joint_gaussian_conditional():
    rng = np.random.default_rng(4)
    X = rng.standard_normal((6, 2))
    Xn = rng.standard_normal((3, 2))
    Z = np.vstack([X, Xn])
    K_all = np.exp(-0.5 * ((Z[:, None] - Z[None]) ** 2).sum(-1))
    K, Ks, Kss = K_all[:6, :6], K_all[6:, :6], K_all[6:, 6:]
    C = np.linalg.cholesky(K)
    mean_s = rng.standard_normal(6)
    cov_s = _spd(6, 5) * 0.1
    mean, var = gp_predictive(C, Ks, mean_s, cov_s, np.diag(Kss))
    A = np.linalg.solve(K, Ks.T)          # K^-1 k_*
    np.testing.assert_allclose(mean, A.T @ mean_s, atol=1e-10)
    expected = np.diag(Kss - Ks @ A + A.T @ cov_s @ A)
    np.testing.assert_allclose(var, expected, atol=1e-10)
    assert np.allclose(gp_predictive(C, Ks, mean_s), mean)


def test_checks_raise_input_error_naming_the_argument():
    assert issubclass(InputError, ValueError)
    with pytest.raises(InputError, match="lam must be"):
        check_positive(-1.0, "lam")
    with pytest.raises(InputError, match="lam must be"):
        check_positive(True, "lam")
    with pytest.raises(InputError, match="n_folds must be an integer >= 2"):
        check_count(1.5, "n_folds", minimum=2)
    assert check_count(3.0, "n") == 3


def test_resolve_lam_converts_to_the_pu_scale_once():
    assert resolve_lam(10.0) == (10.0, 10.0)
    assert resolve_lam(10.0, 0.2) == pytest.approx((12.5, 10.0))
    with pytest.raises(InputError, match="pu_prior"):
        resolve_lam(10.0, 1.0)


def test_span_factor_keeps_the_score_covariance_in_the_columns_rank():
    rng = np.random.default_rng(3)
    groups = np.eye(5)[rng.integers(0, 5, 60)]
    A = np.column_stack([rng.normal(size=(60, 4)), groups])
    A = A - A.mean(axis=0)               # the 5 one-hot columns sum to 0
    C, Q = span_factor(A)
    assert C.shape == (60, 8) and Q.shape == (9, 8)
    np.testing.assert_allclose(C @ C.T, A @ A.T, atol=1e-10)
    np.testing.assert_allclose(Q.T @ Q, np.eye(8), atol=1e-12)
    np.testing.assert_allclose(C @ Q.T, A, atol=1e-10)
    full = A[:, :8]
    same, none = span_factor(full)
    assert same is full and none is None


def test_row_variances_are_each_rows_score_variance():
    """``diag(X S X')`` against the per-row quadratic form, for a full and a
    diagonal ``S``; a transposed product (``X S' X'`` with ``S``
    non-symmetric read wrongly) would fail on the asymmetric check."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(7, 4))
    A = rng.normal(size=(4, 4))
    S = A @ A.T
    expected = np.array([x @ S @ x for x in X])
    np.testing.assert_allclose(row_variances(X, S), expected, rtol=1e-12)
    v = rng.uniform(0.5, 2.0, 4)
    np.testing.assert_allclose(row_variances(X, v),
                               row_variances(X, np.diag(v)), rtol=1e-12)
    # the order of the product matters for an asymmetric matrix: the rows'
    # x' B x, whatever B, equals x' ((B + B')/2) x -- a check that the
    # function computes the quadratic form and not, e.g., diag(X' B X)
    B = rng.normal(size=(4, 4))
    np.testing.assert_allclose(row_variances(X, B),
                               np.array([x @ B @ x for x in X]), rtol=1e-10)
    # a Monte Carlo check of the meaning: the variance of x . theta
    theta = rng.multivariate_normal(np.zeros(4), S, size=200_000)
    np.testing.assert_allclose(np.var(theta @ X.T, axis=0),
                               row_variances(X, S), rtol=0.02)
