"""Tests of pac_particles.approx.ep: Expectation Propagation for AUC Gibbs posteriors.

References used here are independent of the module: numerical quadrature
(scipy.integrate and the exact angular integral in d = 2), dense linear
algebra written out pair by pair, finite differences, and a long SMC run.
"""

import warnings

import numpy as np
import pytest
from scipy import integrate, linalg, stats
from scipy.special import gammaln

from pac_particles.problem.datasets import load_dataset
from pac_particles.approx.ep import (EPConvergenceWarning, EPGP, EPLinear,
                              EPSpikeSlab, KernelJitterWarning,
                              SquaredExponential, pair_tilted_moments)
from lab.reference.pairwise_ep import pairwise_ep


from builders import two_blobs
from lab.reference.quadrature import QUADRATURE_CASES, gibbs_quadrature_2d

# ----------------------------------------------------------------- helpers

def star_removed_moments(features, prior_prec, pos_idx, neg_idx, site_prec,
                         site_shift, i):
    """Dense reference for LOO: remove every site of point i, pair by pair.

    Parameter w with prior precision ``prior_prec`` and scores
    ``s = features @ w``; posterior precision prior_prec + sum_pairs
    k_ab e e', linear term sum_pairs h_ab e, e = features[a] - features[b],
    over the pairs that do not involve point i. Returns the mean and
    variance of s_i.
    """
    prec = np.array(prior_prec, dtype=float)
    lin = np.zeros(prec.shape[0])
    for p, a in enumerate(pos_idx):
        for q, b in enumerate(neg_idx):
            if a == i or b == i:
                continue
            e = features[a] - features[b]
            prec += site_prec[p, q] * np.outer(e, e)
            lin += site_shift[p, q] * e
    cov = np.linalg.inv(prec)
    f = features[i]
    return f @ cov @ lin, f @ cov @ f


def quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", KernelJitterWarning)
        return fn(*args, **kwargs)


# -------------------------------------------------------------- site core

@pytest.mark.parametrize("mu, var, kappa", [(0.3, 2.0, 0.05), (-2.5, 0.7, 1.5),
                                            (4.0, 1.0, 3.0), (-6.0, 1.0, 0.01)])
def test_pair_tilted_moments_match_numerical_integration(mu, var, kappa):
    sd = np.sqrt(var)
    lo, hi = mu - 12 * sd, mu + 12 * sd

    def moment(k):
        # the site is exp(-kappa) below 0 and 1 above: integrate piecewise
        below = integrate.quad(lambda u: u ** k * stats.norm.pdf(u, mu, sd),
                               min(lo, 0.0), 0.0, epsabs=1e-14, limit=200)[0]
        above = integrate.quad(lambda u: u ** k * stats.norm.pdf(u, mu, sd),
                               0.0, max(hi, 0.0), epsabs=1e-14, limit=200)[0]
        return np.exp(-kappa) * below + above

    Z = moment(0)
    m1 = moment(1) / Z
    m2 = moment(2) / Z
    log_z, mean, tilted_var = pair_tilted_moments(mu, var, kappa)
    assert log_z == pytest.approx(np.log(Z), abs=1e-10)
    assert mean == pytest.approx(m1, abs=1e-9)
    assert tilted_var == pytest.approx(m2 - m1 ** 2, rel=1e-8)


def test_single_pair_is_exact():
    # with one site the tilted distribution is the posterior: EP is exact
    X = np.array([[1.0, 0.3], [-0.2, 0.5]])
    lam, prior_var = 2.0, 3.0
    res = EPLinear(X, [1, 0], lam=lam, prior_var=prior_var,
                   standardize=False, tol=1e-10).fit()
    d = X[0] - X[1]
    S = prior_var * np.eye(2)
    s2 = d @ S @ d
    log_z, m, v = pair_tilted_moments(0.0, s2, lam)
    assert res.converged
    assert res.log_z == pytest.approx(np.log(0.5 * (1 + np.exp(-lam))), abs=1e-10)
    np.testing.assert_allclose(res.mean, S @ d * m / s2, atol=1e-9)
    exact_cov = S - np.outer(S @ d, S @ d) * (s2 - v) / s2 ** 2
    np.testing.assert_allclose(res.cov, exact_cov, atol=1e-9)


def test_fixed_point_matches_every_tilted_moment():
    X, y = two_blobs(30, 3, seed=4)
    ep = EPLinear(X, y, lam=30, standardize=False, tol=1e-10, max_sweeps=5000)
    res = ep.fit()
    pos, neg = np.flatnonzero(y == 1), np.flatnonzero(y == 0)
    kappa = 30 / (len(pos) * len(neg))
    for p, i in enumerate(pos):
        for q, j in enumerate(neg):
            dvec = X[i] - X[j]
            mu, var = dvec @ res.mean, dvec @ res.cov @ dvec
            tau_c = 1 / var - res.site_precision[p, q]
            nu_c = mu / var - res.site_shift[p, q]
            _, m_t, v_t = pair_tilted_moments(nu_c / tau_c, 1 / tau_c, kappa)
            assert m_t == pytest.approx(mu, abs=1e-7 * np.sqrt(var))
            assert v_t == pytest.approx(var, rel=1e-6)


# ---------------------------------------------------- truth in dimension 2

# (seed, n, separation, lam / n). Tolerances, measured on 24 such designs
# (seeds 0-5 x n in {40, 80} x lam / n in {0.5, 1}): mean direction within
# 1.3 degrees of the exact one; mean norm 2-8% too long; log Z below the
# exact value by 0.03-0.31 nat; EP / exact variance 0.47-0.89 along the mean
# direction (radial) and 0.68-1.05 across it; generalised eigenvalues of
# (EP cov, exact cov) in 0.46-1.06. Why: EP treats the P pair constraints as
# independent while, along the scale-free radial direction, they are all
# redundant; the Gaussian over-shoots the mean norm and cannot reproduce the
# prior's Rayleigh spread of the radius, and log Z is biased by a few tenths
# of a nat. A formula error (a missing log det, normaliser or tie term)
# moves log Z by a nat or more.
@pytest.mark.parametrize("seed, n, sep, lam_ratio", QUADRATURE_CASES)
def test_d2_mean_direction_and_log_z_match_quadrature(seed, n, sep, lam_ratio):
    X, y = two_blobs(n, 2, seed, shift=sep)
    lam = lam_ratio * n
    log_z, mean, _ = gibbs_quadrature_2d(X, y, lam)
    res = EPLinear(X, y, lam=lam, standardize=False, tol=1e-8,
                   max_sweeps=5000).fit()
    cos = mean @ res.mean / np.linalg.norm(mean) / np.linalg.norm(res.mean)
    assert np.degrees(np.arccos(min(cos, 1.0))) < 3.0
    assert 1.0 < np.linalg.norm(res.mean) / np.linalg.norm(mean) < 1.12
    assert -0.35 < res.log_z - log_z < 0.0


@pytest.mark.parametrize("seed, n, sep, lam_ratio", QUADRATURE_CASES)
def test_d2_covariance_matches_quadrature(seed, n, sep, lam_ratio):
    X, y = two_blobs(n, 2, seed, shift=sep)
    _, mean, cov = gibbs_quadrature_2d(X, y, lam_ratio * n)
    res = EPLinear(X, y, lam=lam_ratio * n, standardize=False, tol=1e-8,
                   max_sweeps=5000).fit()
    radial = mean / np.linalg.norm(mean)
    across = np.array([-radial[1], radial[0]])
    ratio_across = across @ res.cov @ across / (across @ cov @ across)
    ratio_radial = radial @ res.cov @ radial / (radial @ cov @ radial)
    assert 0.65 < ratio_across < 1.1
    assert 0.4 < ratio_radial < ratio_across
    # in every direction: generalised eigenvalues of (EP cov, exact cov)
    ev = linalg.eigh(res.cov, cov, eigvals_only=True)
    assert 0.4 < ev.min() and ev.max() < 1.1


def test_tied_pairs_count_one_half():
    # a positive and a negative with identical inputs: every theta ties them
    X, y = two_blobs(40, 2, seed=2)
    X[1] = X[-1]
    X[2] = X[-2]
    log_z, mean, _ = gibbs_quadrature_2d(X, y, 20.0)
    ep = EPLinear(X, y, lam=20.0, standardize=False, tol=1e-8, max_sweeps=5000)
    res = ep.fit()
    assert ep._sites.n_ties == 2
    # rows: positives, columns: negatives, both in input order
    assert res.site_precision[1, -1] == 0 and res.site_precision[2, -2] == 0
    assert -0.35 < res.log_z - log_z < 0.0
    cos = mean @ res.mean / np.linalg.norm(mean) / np.linalg.norm(res.mean)
    assert np.degrees(np.arccos(cos)) < 3.0


# ------------------------------------------------- equivalent formulations

def test_score_space_equals_primal():
    X, y = two_blobs(40, 60, seed=1)
    kw = dict(lam=40, standardize=False, tol=1e-9, max_sweeps=5000)
    primal = EPLinear(X, y, space="primal", **kw).fit()
    score = EPLinear(X, y, space="score", **kw).fit()
    assert primal.log_z == pytest.approx(score.log_z, abs=1e-8)
    np.testing.assert_allclose(score.mean, primal.mean, atol=1e-8)
    np.testing.assert_allclose(score.cov, primal.cov, atol=1e-8)
    np.testing.assert_allclose(score.site_precision, primal.site_precision,
                               atol=1e-8)


def test_primal_space_runs_on_the_span_of_a_rank_deficient_design():
    # a 4-level factor one-hot encoded: once centred its columns sum to 0,
    # so the 7 columns have rank 6
    rng = np.random.default_rng(11)
    n = 80
    level = rng.integers(0, 4, n)
    X = np.column_stack([rng.normal(size=(n, 3)), np.eye(4)[level]])
    y = (X[:, 0] + 0.8 * (level == 2) + rng.normal(size=n)) > 0.3
    kw = dict(lam=80.0, prior_var=np.linspace(0.5, 2.0, 7), tol=1e-10,
              max_sweeps=5000)
    primal = EPLinear(X, y, space="primal", **kw)
    res = primal.fit()
    assert primal._C.shape == (n, 6)
    score = EPLinear(X, y, space="score", **kw)
    ref = score.fit()
    assert res.log_z == pytest.approx(ref.log_z, abs=1e-8)
    np.testing.assert_allclose(res.mean, ref.mean, atol=1e-8)
    # the direction the sites cannot see keeps its prior variance
    np.testing.assert_allclose(res.cov, ref.cov, atol=1e-8)
    for mine, theirs in zip(primal.loo_scores(return_var=True),
                            score.loo_scores(return_var=True)):
        np.testing.assert_allclose(mine, theirs, atol=1e-7)
    for mine, theirs in zip(primal.predict(X[:9], return_var=True),
                            score.predict(X[:9], return_var=True)):
        np.testing.assert_allclose(mine, theirs, atol=1e-8)


def test_leave_one_out_with_kept_partner_products_is_the_same():
    from pac_particles.approx import loo
    X, y = two_blobs(50, 5, seed=12)
    ep = EPLinear(X, y, lam=50.0)
    ep.fit()
    alone = ep.loo_scores(return_var=True)
    with loo.reused_partner_products():
        first = ep.loo_scores(return_var=True)
        kept = loo._KEPT_PRODUCTS.get()
        assert len(kept) == 2               # the positives' and negatives'
        ep.set_lam(80.0)
        ep.fit(warm_start=True)
        second = ep.loo_scores(return_var=True)
        assert len(kept) == 2               # the same factor: reused
    assert loo._KEPT_PRODUCTS.get() is None
    again = ep.loo_scores(return_var=True)          # products formed anew
    for a, b in zip(alone + second, first + again):
        np.testing.assert_array_equal(a, b)


def test_score_space_is_chosen_when_d_exceeds_n_and_handles_centred_columns():
    X, y = two_blobs(30, 80, seed=2)
    ep = EPLinear(X, y, lam=30)          # standardised: X X' is singular
    assert ep.space_ == "score"
    res = ep.fit()
    ref = EPLinear(X, y, lam=30, space="primal").fit()
    assert res.converged
    assert res.log_z == pytest.approx(ref.log_z, abs=1e-5)
    np.testing.assert_allclose(res.mean, ref.mean, atol=1e-4)


def test_gp_with_linear_kernel_equals_linear():
    X, y = two_blobs(40, 60, seed=3)
    kw = dict(lam=40, standardize=False, tol=1e-9, max_sweeps=5000)
    lin = EPLinear(X, y, prior_var=2.0, **kw)
    res_lin = lin.fit()
    for kernel in (2.0 * X @ X.T, lambda A, B: 2.0 * A @ B.T):
        gp = EPGP(X, y, kernel=kernel, **kw)
        res = gp.fit()
        assert res.log_z == pytest.approx(res_lin.log_z, abs=1e-7)
        np.testing.assert_allclose(res.mean, X @ res_lin.mean, atol=1e-6)
        np.testing.assert_allclose(res.cov, X @ res_lin.cov @ X.T, atol=1e-5)
    X_new = np.random.default_rng(0).standard_normal((5, 60))
    m_gp, v_gp = gp.predict(X_new, return_var=True)
    m_lin, v_lin = lin.predict(X_new, return_var=True)
    np.testing.assert_allclose(m_gp, m_lin, atol=1e-6)
    np.testing.assert_allclose(v_gp, v_lin, rtol=1e-5)


def test_gp_prediction_at_training_inputs_is_the_posterior_marginal():
    X, y = two_blobs(50, 3, seed=5)
    gp = EPGP(X, y, lam=50, kernel=SquaredExponential(1.0), tol=1e-8)
    res = gp.fit()
    mean, var = gp.predict(X, return_var=True)
    np.testing.assert_allclose(mean, res.score_mean, atol=1e-6)
    np.testing.assert_allclose(var, res.score_var, atol=1e-6)
    # a precomputed Gram matrix predicts from cross-kernel matrices
    K = SquaredExponential(1.0)(gp.data.X)
    gp_pre = EPGP(X, y, lam=50, kernel=K, tol=1e-8)
    gp_pre.fit()
    m_pre, v_pre = gp_pre.predict(K, return_var=True, k_diag=np.diag(K))
    np.testing.assert_allclose(m_pre, mean, atol=1e-6)
    np.testing.assert_allclose(v_pre, var, atol=1e-6)


def test_standardize_is_the_default_and_removes_column_units():
    X, y = two_blobs(60, 4, seed=6)
    scaled = X * np.array([1.0, 1000.0, 0.01, 5.0]) + 7.0
    a = EPLinear(X, y, lam=60).fit()
    b = EPLinear(scaled, y, lam=60).fit()
    assert a.log_z == pytest.approx(b.log_z, abs=1e-8)
    np.testing.assert_allclose(a.mean, b.mean, atol=1e-8)


def test_pairwise_formulation_reaches_the_same_fixed_point():
    """The paper's pair-by-pair d x d algebra and the Laplacian core agree."""
    X, y = two_blobs(30, 3, seed=23)
    X[1] = X[-1]                      # one tied pair: no site, constant term
    prior_var = np.array([0.5, 1.0, 2.0])
    kw = dict(lam=30.0, prior_var=prior_var, damping=0.7, tol=1e-10,
              max_sweeps=5000)
    ep = EPLinear(X, y, standardize=False, **kw)
    res = ep.fit()
    ref = pairwise_ep(ep.data.X, ep.data.y, **kw)
    assert res.converged and ref.converged
    np.testing.assert_allclose(ref.mean, res.mean, atol=1e-8)
    np.testing.assert_allclose(ref.cov, res.cov, atol=1e-8)
    assert ref.log_z == pytest.approx(res.log_z, abs=1e-8)


# ------------------------------------------------ evidence and its gradient

def test_log_z_does_not_depend_on_isotropic_prior_variance():
    X, y = two_blobs(50, 5, seed=7)
    fits = {}
    for v in (0.01, 1.0, 100.0):
        ep = EPLinear(X, y, lam=50, prior_var=v, tol=1e-9, max_sweeps=5000)
        fits[v] = (ep.fit(), ep.log_z_grad()["prior_var"])
    ref = fits[1.0][0]
    for v, (res, grad) in fits.items():
        assert res.log_z == pytest.approx(ref.log_z, abs=1e-7)
        np.testing.assert_allclose(res.mean / np.sqrt(v), ref.mean, atol=1e-7)
        # derivative along v -> c v vanishes
        assert abs(v * grad.sum()) < 1e-6


def test_gp_log_z_does_not_depend_on_amplitude():
    X, y = two_blobs(40, 3, seed=8)
    z = [EPGP(X, y, lam=40, kernel=SquaredExponential(1.5, amplitude=a),
              tol=1e-9, max_sweeps=5000).fit().log_z for a in (0.1, 1.0, 30.0)]
    np.testing.assert_allclose(z, z[1], atol=1e-7)


def test_spike_slab_log_z_is_invariant_to_a_common_scaling_of_v0_v1():
    X, y = two_blobs(60, 6, seed=9)
    kw = dict(lam=60, p=0.3, tol=1e-9, max_sweeps=5000)
    a = EPSpikeSlab(X, y, v0=0.01, v1=1.0, **kw).fit().log_z
    b = EPSpikeSlab(X, y, v0=0.5, v1=50.0, **kw).fit().log_z
    c = EPSpikeSlab(X, y, v0=0.0, v1=1.0, **kw).fit().log_z
    d = EPSpikeSlab(X, y, v0=0.0, v1=20.0, **kw).fit().log_z
    assert a == pytest.approx(b, abs=1e-7)
    assert c == pytest.approx(d, abs=1e-7)


def _central_difference(f, x, h=1e-5):
    return (f(x + h) - f(x - h)) / (2 * h)


def test_linear_ard_gradient_matches_finite_differences():
    X, y = two_blobs(60, 4, seed=10)
    pv = np.array([0.5, 1.0, 2.0, 0.8])
    kw = dict(lam=60, tol=1e-10, max_sweeps=5000)
    ep = EPLinear(X, y, prior_var=pv, **kw)
    ep.fit()
    grad = ep.log_z_grad()["prior_var"]
    for k in range(4):
        e = np.eye(4)[k]
        fd = _central_difference(
            lambda t: EPLinear(X, y, prior_var=pv + t * e, **kw).fit().log_z, 0.0)
        assert grad[k] == pytest.approx(fd, rel=1e-4, abs=1e-6)


def test_gp_gradient_matches_finite_differences():
    X, y = two_blobs(50, 3, seed=11)
    kernel = SquaredExponential(lengthscale=[1.0, 2.0, 0.7], amplitude=1.3)
    gp = EPGP(X, y, lam=50, kernel=kernel, tol=1e-10, max_sweeps=5000)
    gp.fit()
    grad = gp.log_z_grad()["log_params"]
    base = kernel.log_params.copy()

    def log_z_at(t, k):
        kernel.log_params = base + t * np.eye(base.size)[k]
        return gp.fit().log_z

    for k in range(base.size):
        assert grad[k] == pytest.approx(_central_difference(
            lambda t: log_z_at(t, k), 0.0), rel=1e-4, abs=1e-6)
    kernel.log_params = base
    # the dense derivative matrices give the same contraction
    gp.fit()
    M = gp._gradient_matrix(gp._run)
    dense = 0.5 * np.einsum("ab,kab->k", M, kernel.gradients(gp._Xs))
    np.testing.assert_allclose(dense, grad, atol=1e-9)


def test_spike_slab_gradient_matches_finite_differences():
    X, y = two_blobs(60, 5, seed=12)
    kw = dict(lam=60, tol=1e-10, max_sweeps=5000)
    base = dict(p=0.3, v0=0.05, v1=1.0)
    ep = EPSpikeSlab(X, y, **base, **kw)
    ep.fit()
    grad = ep.log_z_grad()
    for name in ("p", "v0", "v1"):
        def log_z_at(t):
            params = dict(base)
            params[name] += t
            return EPSpikeSlab(X, y, **params, **kw).fit().log_z
        assert grad[name] == pytest.approx(_central_difference(log_z_at, 0.0),
                                           rel=1e-4, abs=1e-6)


def test_fit_hyperparameters_raises_log_z_and_zeroes_the_gradient():
    rng = np.random.default_rng(13)
    X = rng.standard_normal((80, 3))
    y = (np.sin(2 * X[:, 0]) + 0.2 * rng.standard_normal(80) > 0).astype(int)
    gp = EPGP(X, y, lam=80, kernel=SquaredExponential([2.0, 2.0, 2.0]))
    before = quiet(gp.fit).log_z
    opt = quiet(gp.fit_hyperparameters)
    assert opt.success
    assert gp.result_.log_z > before + 1.0
    # stationary in the lengthscales that are not at a bound
    grad = quiet(gp.log_z_grad)["log_params"][:3]
    inside = (gp.kernel.lengthscale > 1.01e-2) & (gp.kernel.lengthscale < 0.99e3)
    assert inside.any() and np.all(np.abs(grad[inside]) < 1e-2)
    # the irrelevant inputs get the longest lengthscales
    assert gp.kernel.lengthscale[0] < gp.kernel.lengthscale[1:].min()
    ss = EPSpikeSlab(*two_blobs(80, 6, seed=14), lam=80, p=0.5, v0=0.1, v1=1.0)
    before = ss.fit().log_z
    ss.fit_hyperparameters()
    assert ss.result_.log_z >= before
    assert 0 < ss.p < 1 and 0 < ss.v0 < ss.v1


# ------------------------------------------------------------ spike-and-slab

def test_spike_slab_close_to_gaussian_limit_equals_linear():
    # v0 -> v1: the mixture is N(0, v1), EP on its sites must match EPLinear
    X, y = two_blobs(50, 4, seed=15)
    kw = dict(lam=50, tol=1e-10, max_sweeps=5000)
    ss = EPSpikeSlab(X, y, p=0.3, v0=1.0 - 1e-9, v1=1.0, **kw).fit()
    lin = EPLinear(X, y, prior_var=1.0, **kw).fit()
    assert ss.log_z == pytest.approx(lin.log_z, abs=1e-6)
    np.testing.assert_allclose(ss.mean, lin.mean, atol=1e-6)
    np.testing.assert_allclose(ss.cov, lin.cov, atol=1e-6)


@pytest.mark.parametrize("v0", [0.0, 1e-3])
def test_spike_slab_finds_the_active_coordinates(v0):
    rng = np.random.default_rng(16)
    n, d = 200, 50
    X = rng.standard_normal((n, d))
    beta = np.zeros(d)
    beta[:5] = [2.0, -2.0, 1.5, 1.5, -1.5]
    y = (X @ beta + rng.standard_normal(n) > 0).astype(int)
    res = EPSpikeSlab(X, y, lam=n, p=0.1, v0=v0, v1=1.0).fit()
    assert res.converged
    assert np.all(res.inclusion_probs[:5] > 0.5)
    assert np.mean(res.inclusion_probs[5:] < 0.5) >= 0.9
    assert np.all(np.isfinite(res.cov))


# --------------------------------------------------------- leave-one-out

def test_loo_matches_dense_star_removal_primal():
    X, y = two_blobs(24, 3, seed=17)
    ep = EPLinear(X, y, lam=24, prior_var=1.5, standardize=False, tol=1e-9)
    res = ep.fit()
    mean, var = ep.loo_scores(return_var=True)
    pos, neg = np.flatnonzero(y == 1), np.flatnonzero(y == 0)
    for i in (0, 5, 13, 20):
        ref_m, ref_v = star_removed_moments(X, np.eye(3) / 1.5, pos, neg,
                                            res.site_precision,
                                            res.site_shift, i)
        assert mean[i] == pytest.approx(ref_m, abs=1e-9)
        assert var[i] == pytest.approx(ref_v, rel=1e-9)


def test_loo_matches_dense_star_removal_gp_conjugate_gradients():
    # n > 96: the GP path solves the n leave-one-out systems by CG
    X, y = two_blobs(110, 3, seed=18)
    kernel = SquaredExponential(0.5)
    gp = EPGP(X, y, lam=110, kernel=kernel, standardize=False, tol=1e-9)
    res = gp.fit()
    mean, var = gp.loo_scores(return_var=True)
    K = kernel(X)
    pos, neg = np.flatnonzero(y == 1), np.flatnonzero(y == 0)
    for i in (0, 54, 55, 109):
        ref_m, ref_v = star_removed_moments(np.eye(110), np.linalg.inv(K), pos,
                                            neg, res.site_precision,
                                            res.site_shift, i)
        assert mean[i] == pytest.approx(ref_m, abs=1e-6)
        assert var[i] == pytest.approx(ref_v, rel=1e-6)


def test_loo_scores_approximate_refitting_without_the_point():
    X, y = two_blobs(60, 3, seed=19, shift=1.5)
    ep = EPLinear(X, y, lam=60, standardize=False, tol=1e-8)
    full = ep.fit()
    mean, var = ep.loo_scores(return_var=True)
    # the two points whose removal moves their own score the most
    for i in np.argsort(-np.abs(mean - full.score_mean) / np.sqrt(var))[:2]:
        keep = np.arange(60) != i
        n_pos, n_neg = ep.n_pos - y[i], ep.n_neg - (1 - y[i])
        # same per-pair weight kappa = lam / P as in the full fit
        refit = EPLinear(X[keep], y[keep], lam=60 * n_pos * n_neg / (30 * 30),
                         standardize=False, tol=1e-8).fit()
        s_refit = X[i] @ refit.mean
        sd = np.sqrt(X[i] @ refit.cov @ X[i])
        # LOO is much closer to the refit than the full posterior is
        assert abs(mean[i] - s_refit) < 0.05 * sd
        assert abs(mean[i] - s_refit) < 0.2 * abs(full.score_mean[i] - s_refit)
        # the other sites are not refitted: the variance is only close (11%
        # lower than the refit's on the most influential point here)
        assert var[i] == pytest.approx(sd ** 2, rel=0.15)
    assert 0.5 < ep.loo_auc() < 1.0


# -------------------------------------------------------------- robustness

def test_damping_decreases_when_the_parallel_iteration_cycles():
    X, y, _ = load_dataset("breast_cancer")
    res = EPLinear(X, y, lam=0.1 * len(y), damping=1.0).fit()
    assert res.converged
    assert res.damping < 1.0


def test_not_converged_warns_and_says_so():
    X, y = two_blobs(40, 3, seed=20)
    with pytest.warns(EPConvergenceWarning, match="did not converge"):
        res = EPLinear(X, y, lam=40, max_sweeps=2).fit()
    assert not res.converged
    assert res.n_sweeps == 2
    assert np.all(np.isfinite(res.mean)) and np.isfinite(res.log_z)


def test_singular_kernel_gets_jitter_with_a_warning():
    X, y = two_blobs(40, 2, seed=21)
    with pytest.warns(KernelJitterWarning, match="jitter"):
        res = EPGP(X, y, lam=40, kernel=X @ X.T, standardize=False).fit()
    assert res.converged and np.isfinite(res.log_z)


@pytest.mark.parametrize("make, match", [
    (lambda X, y: EPLinear(X, y, lam=0.0), "lam"),
    (lambda X, y: EPLinear(X, y, lam=-1.0), "lam"),
    (lambda X, y: EPLinear(X, y, lam=10, prior_var=0.0), "prior_var"),
    (lambda X, y: EPLinear(X, y, lam=10, prior_var=[1.0, 2.0]), "prior_var"),
    (lambda X, y: EPLinear(X, y, lam=10, space="dual"), "space"),
    (lambda X, y: EPLinear(X, y, lam=10, damping=0.0), "damping"),
    (lambda X, y: EPLinear(X, y, lam=10, damping=1.5), "damping"),
    (lambda X, y: EPLinear(X, y, lam=10, max_sweeps=0), "max_sweeps"),
    (lambda X, y: EPLinear(X[:-1], y, lam=10), "rows"),
    (lambda X, y: EPSpikeSlab(X, y, lam=10, p=0.0), "p must"),
    (lambda X, y: EPSpikeSlab(X, y, lam=10, p=1.0), "p must"),
    (lambda X, y: EPSpikeSlab(X, y, lam=10, v0=-0.1), "v0"),
    (lambda X, y: EPSpikeSlab(X, y, lam=10, v0=1.0, v1=1.0), "v1"),
    (lambda X, y: EPGP(X, y, lam=10, kernel=np.eye(3)), "shape"),
    (lambda X, y: EPGP(X, y, lam=10, kernel=np.triu(np.ones((20, 20)))),
     "symmetric"),
    (lambda X, y: SquaredExponential(lengthscale=-1.0), "lengthscale"),
])
def test_bad_input_raises_value_error_naming_the_problem(make, match):
    X, y = two_blobs(20, 3, seed=22)
    with pytest.raises(ValueError, match=match):
        make(X, y)


# ------------------------------------------------ against a long SMC run

@pytest.mark.slow
def test_matches_long_smc_run_on_pima(pima):
    """EP vs adaptive-tempering SMC on Pima, lam = n, prior N(0, I).

    SMC moments are Rao-Blackwellised over the radius: under an isotropic
    prior theta = r u with r ~ chi_d independent of the direction u, so
    E[theta] = E[r] E[u] and E[theta theta'] = d E[u u'] exactly, and only
    the directions carry Monte Carlo noise. With 500 x 20 particles the
    spread over seeds is about 0.03 sd for the means, 0.01 for the variance
    ratios and 0.2 nat for log Z (an importance-sampling reference with an
    effective sample size of 34,000 gives EP - exact = -0.33 nat, means
    within 0.07 sd, variance ratios 0.55-0.90). Tolerances: 0.2 sd, 1 nat,
    ratio >= 0.5.
    """
    from pac_particles.smc.models import AUCGibbsModel
    from pac_particles.smc.posterior import run_smc

    X, y = pima
    lam = len(y)
    ep = EPLinear(X, y, lam=lam).fit()
    post = run_smc(AUCGibbsModel(X, y, lam=lam), n_particles=500,
                   len_chain=20, seed=3)
    d = post.theta.shape[1]
    u = post.theta / np.linalg.norm(post.theta, axis=1, keepdims=True)
    w = post.weights
    mean_r = np.sqrt(2) * np.exp(gammaln((d + 1) / 2) - gammaln(d / 2))
    mean = mean_r * (w @ u)
    cov = d * (u * w[:, None]).T @ u - np.outer(mean, mean)
    sd = np.sqrt(np.diag(cov))
    ratio = np.diag(ep.cov) / np.diag(cov)
    print("\nEP / SMC variance ratios:", np.round(ratio, 3))
    print("EP - SMC mean / sd:", np.round((ep.mean - mean) / sd, 3))
    print("log Z: EP", round(ep.log_z, 3), "SMC", round(post.log_z, 3))
    assert np.all(np.abs(ep.mean - mean) < 0.2 * sd)
    assert abs(ep.log_z - post.log_z) < 1.0
    assert np.all(ratio >= 0.5)
    assert np.all(ratio <= 1.05)


# ------------------------------------------------- large lam and any finite lam

def noisy_labels(n, d, seed):
    """Gaussian inputs, labels from the first coordinate plus heavy noise:
    no direction orders every pair (non-separable)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    return X, (X[:, 0] + 2.0 * rng.standard_normal(n) > 0).astype(int)


def test_ep_against_smc_at_large_lam_agrees_or_reports_failure():
    # a long SMC run is the reference; EP either matches it (direction of
    # the mean, log Z) or says it failed: never a converged, collapsed fit
    from pac_particles.smc.models import AUCGibbsModel
    from pac_particles.smc.posterior import run_smc
    X, y = noisy_labels(60, 3, seed=0)
    n_ok = 0
    for lam in (100.0, 300.0, 1e3, 1e4, 1e5):
        post = run_smc(AUCGibbsModel(X, y, lam=lam), n_particles=400,
                       len_chain=10, seed=1)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            res = EPLinear(X, y, lam).fit()
        if res.converged:
            n_ok += 1
            cos = res.mean @ post.mean / (np.linalg.norm(res.mean)
                                          * np.linalg.norm(post.mean))
            assert cos > 0.995, (lam, cos)
            assert abs(res.log_z - post.log_z) < 0.02 * abs(post.log_z) + 1.0
            assert abs(res.scale_identity - 1) < 0.05
        else:
            assert any(issubclass(w.category, EPConvergenceWarning)
                       for w in caught)
            assert not np.isfinite(res.log_z) or not res.degenerate
    assert n_ok >= 2           # EP's working range (lam / P < ~0.5) is covered


@pytest.mark.parametrize("make", [
    lambda X, y: EPLinear(X, y, 1e5),
    lambda X, y: EPSpikeSlab(X, y, 1e5),
])
def test_ep_collapse_at_large_lam_is_reported_as_failure(make):
    # 100 x 3, noisy labels, lam = 1e5: EP used to return a mean of norm
    # ~1e-53 with converged=True
    X, y = noisy_labels(100, 3, seed=0)
    with pytest.warns(EPConvergenceWarning, match="degenerate|did not converge"):
        res = make(X, y).fit()
    assert not res.converged
    assert res.degenerate or np.linalg.norm(res.mean) > 0.1


def test_scale_identity_is_one_at_converged_fits():
    # E_q ||w||^2 = r at any EP fixed point (the risk is scale-invariant)
    X, y = noisy_labels(80, 4, seed=3)
    for lam in (10.0, 80.0, 400.0):
        res = EPLinear(X, y, lam, tol=1e-5).fit()
        assert res.converged and not res.degenerate
        V, m = res.cov, res.mean                    # prior N(0, I): w = theta
        assert np.trace(V) + m @ m == pytest.approx(4.0, rel=1e-3)


def tilted_reference(mu, var, kappa):
    """Moments of (e^-kappa + (1 - e^-kappa) 1{u > 0}) N(u; mu, var) from
    scipy's truncated normal and log_ndtr, mixed in log space."""
    from scipy.special import log_ndtr, logsumexp
    s = np.sqrt(var)
    z = mu / s
    log_a = np.log(-np.expm1(-kappa))
    log_t = log_a + log_ndtr(z)
    log_z = logsumexp([-kappa, log_t])
    p_c, p_t = np.exp(-kappa - log_z), np.exp(log_t - log_z)
    trunc = stats.truncnorm(-z, np.inf, loc=mu, scale=s)
    m_t, v_t = trunc.mean(), trunc.var()
    mean = p_c * mu + p_t * m_t
    second = p_c * (mu ** 2 + var) + p_t * (v_t + m_t ** 2)
    return log_z, mean, second - mean ** 2


@pytest.mark.parametrize("mu, var, kappa", [
    (-50.0, 1.0, 1e4), (-45.0, 1.0, 1015.0), (-40.0, 4.0, 200.0),
    (-3.0, 0.5, 1e9), (2.0, 1.0, 1e300), (-38.5, 1.0, 1e3)])
def test_pair_tilted_moments_at_extreme_kappa(mu, var, kappa):
    log_z, mean, v = pair_tilted_moments(mu, var, kappa)
    ref = tilted_reference(mu, var, kappa)
    assert np.isfinite(log_z) and np.isfinite(mean) and np.isfinite(v)
    assert log_z == pytest.approx(ref[0], rel=1e-10)
    assert mean == pytest.approx(ref[1], rel=1e-6, abs=1e-12)
    assert v == pytest.approx(ref[2], rel=1e-5, abs=1e-12)


@pytest.mark.parametrize("lam", [1e7, 1e9, 1e300])
def test_ep_runs_at_any_finite_lam(lam):
    # c = e^-kappa and Phi(z) both underflow: the tilted moments used to
    # divide by zero (ZeroDivisionError)
    X, y = noisy_labels(100, 3, seed=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = EPLinear(X, y, lam).fit()
    assert np.all(np.isfinite(res.mean))
    assert res.converged or any(issubclass(w.category, EPConvergenceWarning)
                                for w in caught)


@pytest.mark.parametrize("make, message", [
    (lambda X, y: EPLinear(X, y, 40, prior_var="a"), "prior_var"),
    (lambda X, y: EPLinear(X, y, 40).fit_hyperparameters(bounds=(0, 10)),
     "bounds"),
    (lambda X, y: EPLinear(X, y, 40).fit_hyperparameters(bounds=(5, 1)),
     "bounds"),
    (lambda X, y: EPSpikeSlab(X, y, 40, v0="a"), "v0"),
    (lambda X, y: EPGP(X, y, 40, kernel="linear"), "kernel"),
    (lambda X, y: EPGP(X, y, 40, kernel=SquaredExponential(1.0))
     .fit_hyperparameters(bounds=(0, 1)), "bounds"),
])
def test_bad_parameters_are_named(make, message):
    X, y = two_blobs(40, 3, seed=30)
    with pytest.raises(ValueError, match=message):
        make(X, y)


def test_epgp_accepts_rbf_as_the_estimator_does():
    X, y = two_blobs(40, 3, seed=31)
    res = EPGP(X, y, 40, kernel="rbf").fit()
    ref = EPGP(X, y, 40, kernel=SquaredExponential(2.0 * np.sqrt(3))).fit()
    np.testing.assert_allclose(res.mean, ref.mean)


def test_weighted_outer_sums_are_the_stars_partner_terms():
    """``sum_j W_bj c_j c_j'`` by GEMMs over the upper triangle, in chunks,
    against the direct sum."""
    from pac_particles.approx import loo
    rng = np.random.default_rng(0)
    W, partners = rng.random((7, 50)), rng.normal(size=(50, 6))
    direct = np.einsum("bj,jk,jl->bkl", W, partners, partners)
    rows, cols = np.triu_indices(6)

    def outer_sums():
        upper = loo._weighted_outer_upper(
            W, loo._partner_products(partners, rows, cols), rows.size)
        out = np.empty((7, 6, 6))
        out[:, rows, cols] = upper
        out[:, cols, rows] = upper
        return out
    np.testing.assert_allclose(outer_sums(), direct, rtol=1e-12, atol=1e-12)
    saved = loo._LOO_BLOCK_ENTRIES
    try:
        loo._LOO_BLOCK_ENTRIES = 21 * 3      # chunks of 3 partners
        np.testing.assert_allclose(outer_sums(), direct, rtol=1e-12,
                                   atol=1e-12)
    finally:
        loo._LOO_BLOCK_ENTRIES = saved


@pytest.mark.parametrize("mode", ["serial", "parallel"])
def test_loo_solve_matches_dense_solves_and_falls_back_on_indefinite(mode):
    """The fused Cholesky kernel of the leave-one-out systems against numpy
    on each dense system; an indefinite system (no Cholesky factor) gets
    the LU solution, as every system did before."""
    from pac_particles.approx import loo
    from pac_particles.core import parallel
    rng = np.random.default_rng(3)
    b, r = 40, 7
    rows, cols = np.triu_indices(r)
    G = rng.normal(size=(30, r))
    lam = G.T @ G + np.eye(r)
    ci, v = rng.normal(size=(b, r)) * 0.3, rng.normal(size=(b, r)) * 0.1
    Ms = rng.normal(size=(b, 5, r))
    M = np.einsum("bjk,bjl->bkl", Ms, Ms) * 0.05
    M[:3] *= 400.0                     # three systems indefinite
    rhs = rng.normal(size=(b, r))
    systems = (lam[None] - M + ci[:, :, None] * v[:, None, :]
               + v[:, :, None] * ci[:, None, :])
    eig = np.linalg.eigvalsh(systems)
    assert np.all(eig[:3, 0] < 0) and np.all(eig[3:, 0] > 0)
    sol = np.linalg.solve(systems, np.stack([rhs, ci], axis=-1))
    with parallel.forced(mode):
        mean, var = loo._loo_solve(lam, M[:, rows, cols], ci, v, rhs)
    np.testing.assert_allclose(mean, np.einsum("bk,bk->b", ci, sol[..., 0]),
                               rtol=1e-10)
    np.testing.assert_allclose(var, np.einsum("bk,bk->b", ci, sol[..., 1]),
                               rtol=1e-10)


def test_the_damped_step_kernel_is_the_numpy_expression():
    """EP's one-pass damped step against ``old + step (target - old)``, on
    2-D site arrays and on a non-contiguous view (numpy's path)."""
    from pac_particles.approx.ep import core
    _damped = core._damped
    rng = np.random.default_rng(4)
    old, target = rng.normal(size=(6, 9)), rng.normal(size=(6, 9))
    out = np.empty_like(old)
    assert _damped(old, target, 0.3, out) is out
    np.testing.assert_allclose(out, old + 0.3 * (target - old), rtol=1e-15)
    view = np.empty((6, 18))[:, ::2]
    _damped(old, target, 0.7, view)
    np.testing.assert_allclose(view, old + 0.7 * (target - old), rtol=1e-15)
