"""Averaged EP (tied margin sites, one common cavity) on listed margins.

References independent of the module: the per-pair parallel EP on the list
of every pair, exact d = 2 quadrature, a plain-numpy twin of the numba
common-cavity pass, the direct difference of Gaussian log-normalisers.
"""

import warnings

import numpy as np
import pytest
from scipy import linalg

from pac_particles.core.checks import InputError
from pac_particles.approx.ep import EPConvergenceWarning, EPLinear
from pac_particles.approx.ep.averaged import averaged_pass, tied_cavity_energy
from pac_particles.approx.ep.sites import pair_tilted_moments
from pac_particles.approx.ep.sparse_sites import site_weights

from builders import two_blobs
from lab.reference.quadrature import AngularQuadrature
from builders import every_pair
from reference import assert_identical, serial_and_parallel


def numpy_averaged_pass(first, second, sign, Bt, g, active, kappa):
    """The common-cavity pass written with numpy: cavity marginal of each
    margin, tilted moments, site = tilted / cavity in natural parameters."""
    E = sign[:, None] * Bt[first] - np.where(second[:, None] >= 0,
                                             Bt[np.maximum(second, 0)], 0.0)
    E = E[active]
    v = np.einsum("ij,ij->i", E, E)
    m = E @ g
    log_z, mt, vt = pair_tilted_moments(m, v, kappa)
    W = 1.0 / vt - 1.0 / v
    H = mt / vt - m / v
    return (E.T * W) @ E, E.T @ H, log_z.sum(), W, H


def _pass_problem(seed=0, B=3000, n=200, r=4):
    rng = np.random.default_rng(seed)
    first = rng.integers(0, n // 2, B)
    second = rng.integers(n // 2, n, B)
    second[:50] = -1                      # a few point margins
    sign = np.where(rng.random(B) < 0.5, 1.0, -1.0)
    active = rng.random(B) > 0.05
    Bt = 0.3 * rng.normal(size=(n, r))
    g = rng.normal(size=r)
    return first, second, sign, Bt, g, active


def test_common_cavity_pass_matches_numpy_twin():
    first, second, sign, Bt, g, active = _pass_problem()
    W, H = np.empty(first.size), np.empty(first.size)
    S, s, log_z, bad = averaged_pass(first, second, sign, Bt, g, active,
                                     site_weights(0.3), W, H)
    S0, s0, log_z0, W0, H0 = numpy_averaged_pass(first, second, sign, Bt, g,
                                                 active, 0.3)
    assert bad == 0
    np.testing.assert_allclose(S, S0, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(s, s0, rtol=1e-12, atol=1e-12)
    assert log_z == pytest.approx(log_z0, rel=1e-12)
    np.testing.assert_allclose(W[active], W0, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(H[active], H0, rtol=1e-9, atol=1e-12)
    assert np.all(W[~active] == 0) and np.all(H[~active] == 0)


def test_common_cavity_pass_serial_equals_parallel():
    first, second, sign, Bt, g, active = _pass_problem(seed=1)

    def run():
        W, H = np.empty(first.size), np.empty(first.size)
        S, s, log_z, _ = averaged_pass(first, second, sign, Bt, g, active,
                                       site_weights(0.3), W, H)
        return S, s, log_z, W, H

    assert_identical(*serial_and_parallel(run))


@pytest.mark.parametrize("B", [2, 50, 10 ** 7])
def test_tied_cavity_energy_is_the_direct_difference(B):
    rng = np.random.default_rng(B)
    A = rng.normal(size=(3, 3))
    T = A @ A.T
    t = rng.normal(size=3)
    lam_mat, eta = np.eye(3) + T, 0.2 * rng.normal(size=3) + t

    def phi(P, e):
        return 0.5 * e @ np.linalg.solve(P, e) - 0.5 * np.linalg.slogdet(P)[1]

    direct = B * (phi(lam_mat - T / B, eta - t / B) - phi(lam_mat, eta))
    # the direct difference loses ~1e-16 * B to cancellation
    assert tied_cavity_energy(lam_mat, eta, T, t, B) == pytest.approx(
        direct, rel=1e-9, abs=1e-15 * B * abs(phi(lam_mat, eta)) + 1e-12)


def _listed(X, y, lam, sites):
    ep = EPLinear(X, y, lam=lam, n_pairs=int(np.sum(y) * np.sum(1 - y)),
                  sites=sites, standardize=False, tol=1e-7, max_sweeps=3000)
    every_pair(ep)
    return ep


def test_averaged_ep_agrees_with_per_pair_ep_and_quadrature_in_d2():
    """All P = 1600 pairs listed, lam = n / 2: averaged EP's mean within 1
    degree of per-pair EP's (measured 0.07) and 3 of the exact one (0.54;
    EP's 0.47), log Z within 0.1 nat of EP's (measured 0.021; both 0.2
    below the exact value), in 50 iterations against EP's 48 sweeps."""
    X, y = two_blobs(80, 2, seed=3, shift=0.8)
    exact = AngularQuadrature(X, y, 40.0)
    ep = _listed(X, y, 40.0, "per_pair").fit()
    aep = _listed(X, y, 40.0, "averaged").fit()
    assert aep.converged and not aep.degenerate

    def angle(a, b):
        cos = a @ b / np.linalg.norm(a) / np.linalg.norm(b)
        return np.degrees(np.arccos(min(cos, 1.0)))

    assert angle(aep.mean, ep.mean) < 1.0
    assert angle(aep.mean, exact.mean) < 3.0
    assert abs(aep.log_z - ep.log_z) < 0.1
    assert abs(aep.log_z - exact.log_z) < 0.4


def test_bad_site_layout_is_named():
    X, y = two_blobs(20, 2, seed=14)
    with pytest.raises(InputError, match="sites"):
        EPLinear(X, y, lam=1.0, sites="bogus")
    with pytest.raises(InputError, match="averaged"):
        EPLinear(X, y, lam=1.0, n_pairs="all", sites="averaged")


def test_averaged_ep_direction_on_sampled_pairs_at_lam_n():
    """5000 x 5 non-separable logistic labels, B = 5 n sampled pairs,
    lam = n (kappa = 0.2): the cavity stays proper and the mean direction
    reaches the test AUC of logistic regression within 0.005 (measured
    0.0012 below), but the radial variance still moves after 60
    iterations: the run is reported unconverged (the limitation in
    :mod:`pac_particles.approx.ep.averaged`), not degenerate."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score
    rng = np.random.default_rng(0)
    n, d = 5000, 5
    w = rng.normal(size=d)
    X = rng.normal(size=(2 * n, d))
    y = (X @ w + 2.0 * rng.logistic(size=2 * n) > 0).astype(int)
    ep = EPLinear(X[:n], y[:n], lam=n, n_pairs=5 * n, seed=0,
                  sites="averaged", max_sweeps=60)
    with pytest.warns(EPConvergenceWarning, match="did not converge"):
        res = ep.fit()
    assert not res.degenerate and np.all(np.isfinite(res.mean))
    lr = LogisticRegression().fit(X[:n], y[:n])
    auc_lr = roc_auc_score(y[n:], lr.decision_function(X[n:]))
    assert abs(roc_auc_score(y[n:], ep.predict(X[n:])) - auc_lr) < 0.005
