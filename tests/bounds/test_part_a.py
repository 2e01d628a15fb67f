"""The part-A prior's covariance by blocks (pac_particles.bounds.part_a):
the Schur complement's inverse, dense or by the Woodbury identity, against
the plain inverse, and the derandomised bound's KL from a Cholesky factor
against the one from the precision matrix."""

import numpy as np
import pytest

from pac_particles.bounds.derandomised import derandomised_bound
from pac_particles.bounds.part_a import schur_covariance


@pytest.mark.parametrize("n, d", [(50, 8), (8, 50), (20, 20)])
def test_schur_covariance_is_the_plain_inverse(n, d):
    """Both forms (rows >= columns: dense; fewer rows: Woodbury) against
    ``np.linalg.inv(I / v + B' B)``; a wrong variant (the Woodbury
    correction's sign flipped) is told apart."""
    rng = np.random.default_rng(n * d)
    B = rng.normal(size=(n, d)) * rng.uniform(0.1, 3.0, size=d)
    v = 0.7
    plain = np.linalg.inv(np.eye(d) / v + B.T @ B)
    got = schur_covariance(B, v)
    np.testing.assert_allclose(got, plain, rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(got, got.T)
    wrong = 2 * v * np.eye(d) - plain          # v I + v^2 B'(.)^-1 B
    assert np.max(np.abs(wrong - plain)) > 1e-2


@pytest.mark.parametrize("n, d", [(2500, 6), (8, 50)])
def test_schur_covariance_of_weighted_centred_rows_is_that_of_their_copy(n, d):
    """``B = diag(r) (Z - c)`` given as ``(Z, c, r)`` (the dense form sums
    its Gram matrix over blocks of rows, here more than two) against the
    plain inverse of ``I / v + B' B`` with ``B`` formed; the rows centred
    but not weighted (a wrong variant) are told apart."""
    from pac_particles.bounds.part_a import GRAM_BLOCK_ROWS
    assert n < d or n > 2 * GRAM_BLOCK_ROWS
    rng = np.random.default_rng(n + d)
    Z = rng.normal(size=(n, d)) + 0.3
    shift = rng.normal(size=d) * 0.2
    root = rng.uniform(0.1, 0.5, size=n)
    B = (Z - shift) * root[:, None]
    plain = np.linalg.inv(np.eye(d) / 0.7 + B.T @ B)
    got = schur_covariance(Z, 0.7, shift, root)
    np.testing.assert_allclose(got, plain, rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(got, got.T)
    unweighted = schur_covariance(Z, 0.7, shift)
    assert np.max(np.abs(unweighted - plain)) > 1e-3 * np.max(np.abs(plain))


def test_part_a_prior_covariance_without_the_intercept_block_is_told_apart():
    """The coefficients' marginal is the inverse of the Schur complement
    (rows centred at their weighted mean); the uncentred block ``(I / v +
    Z' W Z)^-1``, the conditional given the intercept, differs from it by
    far more than the tolerance the covariance is checked at."""
    rng = np.random.default_rng(0)
    n, d, v = 30, 60, 1.0
    Z = rng.normal(size=(n, d)) + 0.5
    weight = rng.uniform(0.05, 0.25, size=n)
    Z1 = np.column_stack([Z, np.ones(n)])
    H = Z1.T @ (Z1 * weight[:, None])
    H[:d, :d] += np.eye(d) / v
    marginal = np.linalg.inv(H)[:d, :d]
    B = (Z - weight @ Z / weight.sum()) * np.sqrt(weight)[:, None]
    np.testing.assert_allclose(schur_covariance(B, v), marginal, rtol=1e-8,
                               atol=1e-12)
    uncentred = schur_covariance(Z * np.sqrt(weight)[:, None], v)
    assert np.max(np.abs(uncentred - marginal)) > 1e-3


def test_derandomised_bound_from_a_cholesky_factor_is_the_one_from_the_precision():
    """``root=L`` (``S = L L'``) gives the bound and KL of ``S_inv =
    S^-1``; the factor of the precision ``S^-1`` in its place does not."""
    rng = np.random.default_rng(5)
    d, n, m = 12, 4_000, 1_000
    A = rng.normal(size=(d, d))
    S = A @ A.T / d + 0.1 * np.eye(d)
    L = np.linalg.cholesky(S)
    w, mu_a = rng.normal(size=d), rng.normal(size=d)
    u = rng.normal(0.5, 1.0, size=n)
    s = np.abs(rng.normal(1.0, 0.3, size=n))
    grid = ((0.5, 1.0, 2.0), (1.0, 2.0))
    plain, how = derandomised_bound(u, s, False, w, mu_a, np.linalg.inv(S),
                                    m, 0.05, *grid)
    fast, how_fast = derandomised_bound(u, s, False, w, mu_a, None, m, 0.05,
                                        *grid, root=L)
    assert fast == pytest.approx(plain, rel=1e-10)
    assert how_fast["kl"] == pytest.approx(how["kl"], rel=1e-9)
    assert how_fast["scale"] == pytest.approx(how["scale"], rel=1e-9)
    _, how_wrong = derandomised_bound(u, s, False, w, mu_a, None, m, 0.05,
                                      *grid, root=np.linalg.cholesky(np.linalg.inv(S)))
    assert abs(how_wrong["kl"] - how["kl"]) > 1e-3 * how["kl"]
