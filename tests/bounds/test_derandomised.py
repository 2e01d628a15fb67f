"""The numba kernels of the derandomised certificate against their
plain-numpy twins (below), serial and parallel: the pair margins and
scales (every pair and sampled pairs, a singular covariance, a pair of
equal rows), and the grid's mean margin losses."""

import numpy as np
import pytest
from scipy.special import ndtr

from pac_particles.bounds.derandomised import (covariance_root,
                                               margin_losses, margin_rows)
from pac_particles.problem.row_pools import pairs_by_positive
from tests.reference import serial_and_parallel


def margin_rows_numpy(X_pos, X_neg, w, S, max_pairs, rng, block=4096):
    """Plain-numpy twin of :func:`margin_rows`: the same pairs (the same
    draws of ``rng``), ``d' S d`` from the difference vectors in blocks."""
    n_pos, n_neg = len(X_pos), len(X_neg)
    if n_pos * n_neg <= max_pairs:
        i, j = np.divmod(np.arange(n_pos * n_neg), n_neg)
        sampled = False
    else:
        i, j = pairs_by_positive(rng, n_pos, n_neg, max_pairs)
        sampled = True
    u = (X_pos @ w)[i] - (X_neg @ w)[j]
    s2 = np.empty(i.size)
    for lo in range(0, i.size, block):
        D = X_pos[i[lo:lo + block]] - X_neg[j[lo:lo + block]]
        s2[lo:lo + block] = np.einsum("kd,kd->k", D @ S, D)
    return u, np.sqrt(np.maximum(s2, 0.0)), sampled


def margin_loss_numpy(u, s, ratio, gamma):
    """Plain-numpy twin of one grid point of :func:`margin_losses`."""
    out = np.full(u.shape, 0.5)
    live = s > 0
    out[live] = ndtr(gamma - ratio * u[live] / s[live])
    return float(out.mean())


def _rows(d, singular, seed=0):
    rng = np.random.default_rng(seed)
    X_pos, X_neg = rng.normal(size=(60, d)), rng.normal(size=(45, d))
    X_neg[7] = X_pos[11]                        # a pair of equal rows
    F = rng.normal(size=(d, d - 2 if singular else d))
    return X_pos, X_neg, rng.normal(size=d), F @ F.T / d


@pytest.mark.parametrize("d, singular", [(3, True), (12, False),
                                         (12, True)])
@pytest.mark.parametrize("max_pairs", [10 ** 6, 900])
def test_margin_rows_match_their_numpy_twin(d, singular, max_pairs):
    X_pos, X_neg, w, S = _rows(d, singular)
    want_u, want_s, want_sampled = margin_rows_numpy(
        X_pos, X_neg, w, S, max_pairs, np.random.default_rng(5))
    serial, in_parallel = serial_and_parallel(lambda: margin_rows(
        X_pos, X_neg, w, S, max_pairs, np.random.default_rng(5)))
    for u, s, sampled in (serial, in_parallel):
        assert sampled == want_sampled == (max_pairs < 60 * 45)
        assert u.shape == want_u.shape
        np.testing.assert_array_equal(u, want_u)
        np.testing.assert_allclose(s, want_s, rtol=1e-9, atol=1e-7)
    np.testing.assert_array_equal(serial[1], in_parallel[1])
    if not want_sampled:
        # the equal rows' pair (row-major order): scale 0 exactly
        assert serial[1][11 * 45 + 7] == 0.0 == in_parallel[1][11 * 45 + 7]


@pytest.mark.parametrize("singular", [True, False])
def test_covariance_root_squares_to_the_covariance(singular):
    """Singular (the eigendecomposition) and positive definite (the
    Cholesky factor): R R' = S either way."""
    _, _, _, S = _rows(6, singular=singular)
    R = covariance_root(S)
    np.testing.assert_allclose(R @ R.T, S, atol=1e-12)


def test_margin_losses_match_their_numpy_twin():
    rng = np.random.default_rng(2)
    u = rng.normal(size=5000)
    s = np.abs(rng.normal(size=5000))
    s[::37] = 0.0                                # ties: 1/2 each
    ratios = [0.1, 0.7, 3.0, 40.0]
    margins = [1.0, 2.0, 1.0, 0.5]
    want = [margin_loss_numpy(u, s, r, g) for r, g in zip(ratios, margins)]
    serial, in_parallel = serial_and_parallel(
        lambda: margin_losses(u, s, ratios, margins))
    np.testing.assert_allclose(serial, want, rtol=1e-13)
    np.testing.assert_allclose(in_parallel, want, rtol=1e-13)
    # a wrong variant (ties at 0 instead of 1/2) is told apart
    assert margin_losses(u, np.where(s == 0, 1e-300, s), ratios,
                         margins)[0] != pytest.approx(want[0], rel=1e-6)



def _grid_bound_numpy(u, s, sampled, w, mu_a, widths, margins, m, delta):
    """The smallest bound of the grid (identity ``S``), every grid point's
    loss from :func:`margin_loss_numpy`."""
    import math
    from pac_particles.bounds.kl import kl_inverse_upper, maurer_constant
    c = float(w @ mu_a) / float(w @ w)
    shift = c * w - mu_a
    grid = [(t, g) for t in widths for g in margins]
    k = len(grid)
    delta_kl = delta * 0.9 if sampled else delta
    found = []
    for t, g in grid:
        q = margin_loss_numpy(u, s, c / t, g)
        if sampled:
            q = kl_inverse_upper(q, math.log(k / (delta - delta_kl)) / u.size)
        kl = 0.5 * float(shift @ shift) / t ** 2
        found.append(kl_inverse_upper(
            q, (kl + math.log(maurer_constant(m) * k / delta_kl)) / m)
            / ndtr(g))
    return min(found)


def test_pilot_keeps_the_grids_smallest_bound(monkeypatch):
    """The pilot that rules grid points out (module docstring) leaves the
    smallest bound of the whole grid, against every grid point's bound from
    its plain-numpy loss, on sampled and on all pairs, with fewer points
    evaluated on every row; the comparison tells a pilot that misses it
    apart (pilot rows made unlike the others)."""
    import pac_particles.bounds.derandomised as dr
    monkeypatch.setattr(dr, "PILOT_ROWS", 5_000)
    rng = np.random.default_rng(3)
    n, d, m, delta = 60_000, 4, 2_000, 0.05
    u = rng.normal(0.8, 1.0, size=n)
    s = np.abs(rng.normal(1.0, 0.3, size=n))
    w, mu_a, S_inv = np.ones(d), np.full(d, 0.9), np.eye(d)
    widths, margins = (0.5, 1.0, 2.0, 4.0), (1.0, 2.0)
    for sampled in (False, True):
        bound, how = dr.derandomised_bound(u, s, sampled, w, mu_a, S_inv, m,
                                           delta, widths, margins)
        assert bound == pytest.approx(_grid_bound_numpy(
            u, s, sampled, w, mu_a, widths, margins, m, delta), rel=1e-10)
        assert how["grid_size"] == 8 and how["evaluated"] < 8
    # a wrong variant: ties on the pilot's rows alone (every r-th row)
    s_bad = s.copy()
    s_bad[::n // dr.PILOT_ROWS] = 0.0
    bound, how = dr.derandomised_bound(u, s_bad, False, w, mu_a, S_inv, m,
                                       delta, widths, margins)
    assert bound > _grid_bound_numpy(u, s_bad, False, w, mu_a, widths,
                                     margins, m, delta) + 1e-3
