"""Stein variational gradient descent on the smoothed Gibbs posterior
(pac_particles.approx.svgd).

References used here: plain-numpy twins of every numba kernel, the smoothed
risk and its gradient written from their definition with every difference
vector materialised, central finite differences, the O(n log n) AUC risk
(h -> 0), the Gaussian-VB expected risk, a double loop for the Stein
direction, the prior's moments (lam -> 0) and the exact d = 2 Gibbs posterior
by quadrature over angles (``reference.AngularQuadrature``).
"""

import math

import numpy as np
import pytest
from scipy.stats import norm

from pac_particles.problem.auc import linear_auc_risk
from pac_particles.approx.vb import expected_auc_risk
from pac_particles.problem.probit_risk import SmoothedPairRisk as _SmoothedRisk
from pac_particles.problem.probit_kernels import (
    inverse_pair_norms as _inverse_pair_norms,
    sampled_inverse_norms as _sampled_inverse_norms,
    smoothed_block as _smoothed_block, smoothed_sampled as _smoothed_sampled)
from pac_particles.approx.svgd import (SVGD, SVGDConvergenceWarning,
                                smoothed_auc_risk, stein_direction)
from lab.reference.quadrature import AngularQuadrature


from builders import tied_data


def toy_data(n=40, d=3, seed=1):
    return tied_data(n, d, seed)


def reference_smoothed_risk(theta, X_pos, X_neg, h):
    """R_h and its gradient from the definition, all P x d differences formed.

    t_ij = d_ij . theta / (h |theta| |d_ij|);  dt/dtheta = d_ij / (h r |d_ij|)
    - (d_ij . theta) theta / (h r^3 |d_ij|); pairs with d_ij = 0 count 1/2.
    """
    D = (X_pos[:, None, :] - X_neg[None, :, :]).reshape(-1, X_pos.shape[1])
    nu = np.linalg.norm(D, axis=1)
    tie = nu == 0
    D, nu = D[~tie], nu[~tie]
    risks, grads = [], []
    for th in np.atleast_2d(theta):
        r = np.linalg.norm(th)
        u = D @ th
        t = u / (h * r * nu)
        risks.append((norm.cdf(-t).sum() + 0.5 * tie.sum()) / (len(nu) + tie.sum()))
        dt = D / (h * r * nu[:, None]) - np.outer(u / (h * r ** 3 * nu), th)
        grads.append(-(norm.pdf(t)[:, None] * dt).sum(axis=0)
                     / (len(nu) + tie.sum()))
    return np.array(risks), np.array(grads)


def block_reference(s_pos, s_neg, inv_norm, start, inv_h):
    """Plain-numpy twin of _smoothed_block: (f, w_row, w_col)."""
    rows = inv_norm.shape[0]
    t = ((s_pos[:, start:start + rows, None] - s_neg[:, None, :])
         * inv_norm[None] * inv_h[:, None, None])
    w = norm.pdf(t) * inv_norm[None]
    w_row = np.zeros_like(s_pos)
    w_row[:, start:start + rows] = w.sum(axis=2)
    return norm.cdf(-t).sum(axis=(1, 2)), w_row, w.sum(axis=1)


def sampled_reference(s_pos, s_neg, ip, jn, inv_norm, inv_h):
    """Plain-numpy twin of _smoothed_sampled: (f, w_row, w_col)."""
    t = (s_pos[:, ip] - s_neg[:, jn]) * inv_norm[None] * inv_h[:, None]
    w = norm.pdf(t) * inv_norm[None]
    w_row, w_col = np.zeros_like(s_pos), np.zeros_like(s_neg)
    for a in range(s_pos.shape[0]):
        np.add.at(w_row[a], ip, w[a])
        np.add.at(w_col[a], jn, w[a])
    return norm.cdf(-t).sum(axis=1), w_row, w_col


def pair_inverse_norms_reference(X_pos, X_neg):
    D = X_pos[:, None, :] - X_neg[None, :, :]
    nu = np.linalg.norm(D, axis=2)
    return np.where(nu > 0, 1.0 / np.where(nu > 0, nu, 1.0), 0.0)


# ------------------------------------------------------------ numba kernels

def test_inverse_pair_norms_kernel_matches_numpy_including_near_duplicates():
    X, y = toy_data()
    X_pos, X_neg = X[y], X[~y]
    X_pos[0] = X_neg[5] + 1e-9  # |x|^2 + |x'|^2 - 2 x.x' loses every digit
    sq_pos, sq_neg = (X_pos ** 2).sum(1), (X_neg ** 2).sum(1)
    start, stop = 2, 9
    out = np.empty((stop - start, len(X_neg)))
    _inverse_pair_norms(X_pos, X_neg, sq_pos, sq_neg, X_pos[start:stop] @ X_neg.T,
                        start, 1e-8, out)
    np.testing.assert_allclose(out, pair_inverse_norms_reference(X_pos, X_neg)
                               [start:stop], rtol=1e-10)
    full = np.empty((len(X_pos), len(X_neg)))
    _inverse_pair_norms(X_pos, X_neg, sq_pos, sq_neg, X_pos @ X_neg.T, 0, 1e-8,
                        full)
    np.testing.assert_allclose(full[0, 5], 1.0 / (1e-9 * math.sqrt(3)),
                               rtol=1e-6)
    assert np.all(full[pair_inverse_norms_reference(X_pos, X_neg) == 0] == 0)


def test_sampled_inverse_norms_kernel_matches_numpy():
    X, y = toy_data()
    X_pos, X_neg = X[y], X[~y]
    rng = np.random.default_rng(0)
    ip, jn = rng.integers(len(X_pos), size=300), rng.integers(len(X_neg), size=300)
    np.testing.assert_allclose(_sampled_inverse_norms(X_pos, X_neg, ip, jn),
                               pair_inverse_norms_reference(X_pos, X_neg)[ip, jn],
                               rtol=1e-12)


def test_block_kernel_matches_numpy_twin():
    X, y = toy_data()
    X_pos, X_neg = X[y], X[~y]
    rng = np.random.default_rng(2)
    theta = rng.normal(size=(6, 3))
    theta[5] = 0.0  # R_h(0) = 1/2, no gradient: inv_h = 0
    s_pos, s_neg = theta @ X_pos.T, theta @ X_neg.T
    r = np.linalg.norm(theta, axis=1)
    inv_h = np.where(r > 0, 1 / (0.2 * np.where(r > 0, r, 1)), 0.0)
    inv_norm = pair_inverse_norms_reference(X_pos, X_neg)[4:11]
    f = np.zeros(6)
    w_row, w_col = np.zeros_like(s_pos), np.zeros_like(s_neg)
    _smoothed_block(s_pos, s_neg, inv_norm, 4, inv_h, True, True, f, w_row,
                    w_col)
    for got, want in zip((f, w_row, w_col),
                         block_reference(s_pos, s_neg, inv_norm, 4, inv_h)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)
    # Phi(0) is 1/2 to rounding (core.normal's fit), not exactly
    assert f[5] == pytest.approx(0.5 * inv_norm.size, rel=1e-12)


def test_zero_particle_has_risk_half_and_no_gradient():
    X, y = toy_data()
    risk, grad = _SmoothedRisk(X[y], X[~y], 0.1)(np.zeros((2, 3)))
    # Phi(0) is 1/2 to rounding (core.normal's fit), not exactly
    np.testing.assert_allclose(risk, 0.5, rtol=1e-13)
    np.testing.assert_array_equal(grad, 0.0)


def test_sampled_kernel_matches_numpy_twin():
    X, y = toy_data()
    X_pos, X_neg = X[y], X[~y]
    rng = np.random.default_rng(3)
    theta = rng.normal(size=(5, 3))
    s_pos, s_neg = theta @ X_pos.T, theta @ X_neg.T
    inv_h = 1 / (0.3 * np.linalg.norm(theta, axis=1))
    ip, jn = rng.integers(len(X_pos), size=500), rng.integers(len(X_neg), size=500)
    inv_norm = pair_inverse_norms_reference(X_pos, X_neg)[ip, jn]
    f = np.zeros(5)
    w_row, w_col = np.zeros_like(s_pos), np.zeros_like(s_neg)
    _smoothed_sampled(s_pos, s_neg, ip, jn, inv_norm, inv_h, True, True, f,
                      w_row, w_col)
    for got, want in zip((f, w_row, w_col),
                         sampled_reference(s_pos, s_neg, ip, jn, inv_norm, inv_h)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("cache_entries, block_entries", [(None, None), (0, 50)])
def test_smoothed_risk_and_gradient_match_definition(cache_entries,
                                                     block_entries):
    """Cached single block, and uncached blocks of 50 pair entries."""
    X, y = toy_data()
    X_pos, X_neg = X[y], X[~y]
    theta = np.random.default_rng(4).normal(size=(7, 3)) * [[1], [3], [0.1],
                                                             [1], [1], [2], [5]]
    terms = _SmoothedRisk(X_pos, X_neg, 0.15, block_entries=block_entries,
                          cache_entries=cache_entries)
    assert (terms._cache is None) == (cache_entries == 0)
    risk, grad = terms(theta)
    want_risk, want_grad = reference_smoothed_risk(theta, X_pos, X_neg, 0.15)
    np.testing.assert_allclose(risk, want_risk, rtol=1e-12)
    np.testing.assert_allclose(grad, want_grad, rtol=1e-9, atol=1e-12)


def test_sampled_pairs_covering_every_pair_give_the_exact_values():
    X, y = toy_data()
    X_pos, X_neg = X[y], X[~y]
    theta = np.random.default_rng(5).normal(size=(4, 3))
    ip, jn = np.divmod(np.arange(len(X_pos) * len(X_neg)), len(X_neg))
    terms = _SmoothedRisk(X_pos, X_neg, 0.2)
    for got, want in zip(terms(theta, pairs=(ip, jn)), terms(theta)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)


# ------------------------------------------------------ the smoothed target

def test_log_target_gradient_matches_finite_differences():
    X, y = toy_data()
    svgd = SVGD(X, y, lam=50.0, prior_var=2.0, bandwidth=0.3)
    theta = np.random.default_rng(6).normal(size=(4, 3))
    _, grad = svgd.log_target(theta)
    eps = 1e-6
    for k in range(3):
        step = np.zeros(3)
        step[k] = eps
        up, _ = svgd.log_target(theta + step)
        down, _ = svgd.log_target(theta - step)
        np.testing.assert_allclose(grad[:, k], (up - down) / (2 * eps),
                                   rtol=1e-5, atol=1e-7)


def test_smoothed_risk_tends_to_empirical_risk_with_ties_as_half():
    rng = np.random.default_rng(7)
    X = rng.integers(0, 3, size=(50, 3)).astype(float)  # many score ties
    y = rng.random(50) < 0.4
    data_pos, data_neg = X[y], X[~y]
    # theta = e_1 ties every pair with equal first feature but d_ij != 0
    theta = np.vstack([[1.0, 0.0, 0.0], rng.normal(size=(5, 3))])
    exact = linear_auc_risk(theta, data_pos, data_neg)
    gaps = [np.abs(smoothed_auc_risk(theta, data_pos, data_neg, h) - exact).max()
            for h in (0.3, 0.03, 1e-9)]
    assert gaps[0] > gaps[1] > gaps[2]
    assert gaps[2] < 1e-12


def test_smoothed_risk_is_vb_expected_risk_of_isotropic_gaussian():
    X, y = toy_data()
    h = 0.25
    for th in np.random.default_rng(8).normal(size=(3, 3)):
        cov = (h * np.linalg.norm(th)) ** 2 * np.eye(3)
        assert smoothed_auc_risk(th, X[y], X[~y], h) == pytest.approx(
            expected_auc_risk(th, cov, X[y], X[~y]), rel=1e-10)


def test_smoothed_risk_is_scale_invariant_with_orthogonal_gradient():
    X, y = toy_data()
    theta = np.random.default_rng(9).normal(size=3)
    r1, g1 = smoothed_auc_risk(theta, X[y], X[~y], 0.1, grad=True)
    r2, g2 = smoothed_auc_risk(4.0 * theta, X[y], X[~y], 0.1, grad=True)
    assert r2 == pytest.approx(r1, rel=1e-12)
    np.testing.assert_allclose(g2, g1 / 4.0, rtol=1e-10)
    assert abs(g1 @ theta) < 1e-12 * np.linalg.norm(g1) * np.linalg.norm(theta)


def test_stein_direction_matches_double_loop():
    rng = np.random.default_rng(10)
    theta, grad = rng.normal(size=(7, 3)), rng.normal(size=(7, 3))
    phi, bw = stein_direction(theta, grad)
    dist2 = [np.sum((a - b) ** 2) for i, a in enumerate(theta)
             for b in theta[i + 1:]]
    assert bw == pytest.approx(np.median(dist2) / math.log(7))
    want = np.zeros_like(theta)
    for a in range(7):
        for b in range(7):
            k = math.exp(-np.sum((theta[b] - theta[a]) ** 2) / bw)
            # grad_{theta_b} k(theta_b, theta_a) = -2 (theta_b - theta_a) k / bw
            want[a] += k * grad[b] - 2.0 * (theta[b] - theta[a]) * k / bw
    np.testing.assert_allclose(phi, want / 7, rtol=1e-12)


# ------------------------------------------------------------ the sampler

def test_particles_match_the_prior_when_lam_is_tiny():
    X, y = toy_data(d=2)
    res = SVGD(X, y, lam=1e-8, prior_var=2.0, n_particles=100, seed=0).fit()
    assert res.converged
    np.testing.assert_allclose(res.mean, 0.0, atol=0.1)
    # SVGD with 100 particles under-disperses by a few per cent in d = 2
    np.testing.assert_allclose(res.theta.var(axis=0), 2.0, rtol=0.15)


@pytest.mark.parametrize("lam", [20.0, 60.0])
def test_mean_direction_matches_exact_gibbs_posterior_in_2d(lam):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 2))
    y = X @ [1.0, 0.6] + rng.normal(size=60) > 0
    quad = AngularQuadrature(X, y, lam)
    res = SVGD(X, y, lam=lam, bandwidth=0.03, standardize=False,
               n_particles=100, seed=0).fit()
    assert res.converged
    angle = math.atan2(res.mean[1], res.mean[0])
    gap = math.degrees(abs(np.angle(np.exp(1j * (angle - quad.mean_angle)))))
    assert gap < 2.0
    # r and the direction are independent under the target: the Bayes point
    # has the direction of the mean
    bp = res.bayes_point
    assert math.degrees(abs(math.atan2(bp[1], bp[0]) - quad.mean_angle)) < 2.0


def test_pair_subsampling_is_seeded_and_close_to_full_pairs():
    X, y = toy_data(n=80, d=3)
    kw = dict(lam=80.0, n_particles=30, seed=4)
    a = SVGD(X, y, n_pairs=200, **kw).fit()
    b = SVGD(X, y, n_pairs=200, **kw).fit()
    full = SVGD(X, y, **kw).fit()
    np.testing.assert_allclose(a.theta, b.theta, rtol=1e-9, atol=1e-12)
    cos = a.bayes_point @ full.bayes_point / (np.linalg.norm(a.bayes_point)
                                              * np.linalg.norm(full.bayes_point))
    assert cos > 0.99


def test_score_and_predict_apply_training_preprocessing():
    X, y = toy_data()
    svgd = SVGD(X, y, lam=40.0, n_particles=20, seed=1)
    res = svgd.fit()
    X_new = np.random.default_rng(11).normal(size=(5, 3)) * 10 + 3
    np.testing.assert_allclose(res.score(X_new),
                               svgd.data.transform(X_new) @ res.bayes_point)
    np.testing.assert_allclose(svgd.predict(X_new, point="mean"),
                               svgd.data.transform(X_new) @ res.mean)
    assert res.theta.shape == (20, 3) and res.n_iter >= 1 and res.wall_time > 0
    np.testing.assert_allclose(
        res.smoothed_risk, smoothed_auc_risk(res.theta, svgd.data.X_pos,
                                             svgd.data.X_neg, 0.1))


def test_init_is_used_and_max_iter_without_convergence_warns():
    X, y = toy_data()
    init = np.random.default_rng(12).normal(size=(10, 3))
    with pytest.warns(SVGDConvergenceWarning, match="max_iter=3"):
        res = SVGD(X, y, lam=40.0, n_particles=10, max_iter=3).fit(init=init)
    assert not res.converged and res.n_iter == 3
    # |phi| / sqrt(v) <= sqrt(1 / 0.1) once v is a moving average
    assert np.abs(res.theta - init).max() < 3 * 0.05 * math.sqrt(10)


@pytest.mark.parametrize("kwargs, message", [
    (dict(lam=0.0), "lam"), (dict(lam=-1.0), "lam"), (dict(lam=np.nan), "lam"),
    (dict(bandwidth=0.0), "bandwidth"), (dict(bandwidth=-0.1), "bandwidth"),
    (dict(prior_var=0.0), "prior_var"), (dict(n_particles=1), "n_particles"),
    (dict(n_particles=2.5), "n_particles"), (dict(n_pairs=0), "n_pairs"),
    (dict(step_size=0.0), "step_size"), (dict(max_iter=0), "max_iter"),
    (dict(tol=0.0), "tol"), (dict(verbose=-1), "verbose"),
])
def test_bad_parameters_raise_value_error_naming_them(kwargs, message):
    X, y = toy_data()
    params = dict(lam=10.0)
    params.update(kwargs)
    with pytest.raises(ValueError, match=message):
        SVGD(X, y, **params)


def test_bad_data_init_and_unfitted_use_raise_value_error():
    X, y = toy_data()
    X_nan = X.copy()
    X_nan[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        SVGD(X_nan, y, lam=10.0)
    with pytest.raises(ValueError, match="one class"):
        SVGD(X, np.ones(len(y)), lam=10.0)
    svgd = SVGD(X, y, lam=10.0, n_particles=5)
    with pytest.raises(ValueError, match="shape"):
        svgd.fit(init=np.zeros((4, 3)))
    with pytest.raises(ValueError, match="fit"):
        svgd.predict(X)
    with pytest.raises(ValueError, match="bandwidth"):
        smoothed_auc_risk(np.ones(3), X[y], X[~y], bandwidth=0.0)


@pytest.mark.parametrize("kwargs, init, message", [
    (dict(seed="a"), None, "seed"),
    (dict(lam=1e308, seed=1), None, "lam"),
    (dict(lam=1e200, seed=2), None, "lam"),
    ({}, "zeros", "theta = 0"),
    ({}, "equal", "all particles equal"),
    (dict(lam=1e308), None, "lam"),
])
def test_bad_svgd_arguments_are_named(kwargs, init, message):
    # zeros used to stay at 0 for ever, lam = 1e308 to return NaN particles
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 3))
    y = X[:, 0] + rng.standard_normal(40) > 0
    args = dict(lam=40.0, n_particles=10, max_iter=20, seed=0)
    args.update(kwargs)
    start = {None: None, "zeros": np.zeros((10, 3)),
             "equal": np.ones((10, 3))}[init]
    with pytest.raises(ValueError, match=message):
        SVGD(X, y, **args).fit(init=start)


def test_svgd_mean_direction_agrees_with_smc_but_its_directions_under_spread():
    # what the module docstring and the user guide state: the mean direction is
    # reliable, the spread of theta / ||theta|| is too narrow (reference: SMC)
    from pac_particles.smc.models import AUCGibbsModel
    from pac_particles.smc.posterior import run_smc
    rng = np.random.default_rng(2)
    X = rng.standard_normal((120, 4))
    y = X @ np.array([1.0, -0.5, 0.5, 0.0]) + rng.standard_normal(120) > 0
    post = run_smc(AUCGibbsModel(X, y, lam=120.0), n_particles=500,
                   len_chain=10, seed=3)
    res = SVGD(X, y, lam=120.0, n_particles=50, seed=3).fit()

    def directions(theta, w):
        u = theta / np.linalg.norm(theta, axis=1, keepdims=True)
        m = w @ u
        return m, np.sqrt(w @ (u - m) ** 2)

    m_smc, sd_smc = directions(post.theta, post.weights)
    m_svgd, sd_svgd = directions(res.theta, np.full(50, 1 / 50))
    cos = m_smc @ m_svgd / np.linalg.norm(m_smc) / np.linalg.norm(m_svgd)
    assert cos > 0.99
    assert np.median(sd_svgd / sd_smc) < 0.95
