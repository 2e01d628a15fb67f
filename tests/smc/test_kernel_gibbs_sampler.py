"""The kernel Gibbs sampler [GH01]: the exact line density against direct
evaluation, the chain against quadrature on the circle (d = 2) and on the
sphere (d = 3) in primal and kernel form, the ArviZ diagnostics against known
answers."""

import numpy as np
import pytest
from scipy import linalg

from pac_particles.core.checks import InputError
from pac_particles.smc.kernel_gibbs_sampler import (KGSChains, KernelGibbsSampler,
                                                sphere_data)
from pac_particles.core.kernels import LinearKernel, SquaredExponential
from pac_particles.smc.label_noise import lam_from_label_noise


# ----------------------------------------------------------- references

def _zero_one(margins):
    """Mean 0-1 loss over the last axis, a zero margin counting 1/2."""
    return np.mean((margins < 0) + 0.5 * (margins == 0), axis=-1)


def _circle_quadrature(X, y, lam, size=50_000):
    """Angles, their posterior probabilities, on a midpoint grid of the
    circle (d = 2): direct evaluation of exp(-lam r_n) at every angle."""
    t = (np.arange(size) + 0.5) * 2 * np.pi / size
    w = np.column_stack([np.cos(t), np.sin(t)])
    log_p = -lam * _zero_one(y * (w @ X.T))
    p = np.exp(log_p - log_p.max())
    return t, p / p.sum()


def _sphere_quadrature(F, y, lam, n_lat=400, n_lon=800):
    """Points ``c`` of the unit sphere S^2 and their posterior probabilities
    under the uniform prior, scores ``F c``: a midpoint rule in latitude and
    longitude, area element cos(lat) (direct evaluation at every node)."""
    lat = -np.pi / 2 + (np.arange(n_lat) + 0.5) * np.pi / n_lat
    lon = -np.pi + (np.arange(n_lon) + 0.5) * 2 * np.pi / n_lon
    lat, lon = np.meshgrid(lat, lon, indexing="ij")
    c = np.stack([np.cos(lat) * np.cos(lon), np.cos(lat) * np.sin(lon),
                  np.sin(lat)], axis=-1).reshape(-1, 3)
    log_p = -lam * _zero_one(y * (c @ F.T)) + np.log(np.cos(lat)).ravel()
    p = np.exp(log_p - log_p.max())
    return c, p / p.sum()


def _two_d_data(n=40, seed=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = np.where(X @ [1.0, 0.5] + 0.8 * rng.normal(size=n) > 0, 1, -1)
    return X, y


# ------------------------------------------------------ the line density

def test_exact_angle_draws_follow_the_directly_evaluated_line_density():
    """One great circle in d = 5: 20000 exact angle draws against the CDF
    of exp(-lam r_n(w cos t + v sin t)) evaluated directly on 200000
    angles (KS distance below 0.012, about the 1% critical value); the
    density of 1.5 lam is 3x farther (the check has power)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 5))
    y = np.where(X[:, 0] + rng.normal(size=30) > 0, 1, -1)
    kgs = KernelGibbsSampler(X, y, q=0.1)
    w, v = linalg.qr(rng.normal(size=(5, 2)), mode="economic")[0].T
    a, b = X @ w, X @ v
    draws = kgs.circle_angle_draws(np.tile(a, (20_000, 1)),
                                   np.tile(b, (20_000, 1)), seed=1)
    empirical = np.sort(draws)

    def ks_distance(lam):
        t = (np.arange(200_000) + 0.5) * 2 * np.pi / 200_000
        margins = y * (np.outer(np.cos(t), a) + np.outer(np.sin(t), b))
        density = np.exp(-lam * _zero_one(margins))
        cdf = np.interp(empirical, t, np.cumsum(density) / density.sum())
        ranks = np.arange(1, empirical.size + 1) / empirical.size
        return np.max(np.abs(cdf - ranks))

    assert ks_distance(kgs.lam) < 0.012
    assert ks_distance(1.5 * kgs.lam) > 0.036


# ------------------------------------------------------- quadrature

def test_chain_in_two_dimensions_matches_circle_quadrature():
    """d = 2: the great circle is the whole sphere, so each step is an
    exact independent draw. Mean direction within 4 standard errors of the
    1-D quadrature; q = 0.3 is told apart; ArviZ's bulk ESS is close to
    the number of draws (independent draws)."""
    X, y = _two_d_data()
    q = 0.15
    chains = KernelGibbsSampler(X, y, q=q).sample(n_draws=2000, n_chains=4,
                                                  seed=0)
    t, p = _circle_quadrature(X, y, lam_from_label_noise(q, len(y)))
    w_grid = np.column_stack([np.cos(t), np.sin(t)])
    mean = p @ w_grid
    se = np.sqrt(p @ (w_grid - mean) ** 2 / chains.draws.shape[0])
    assert np.all(np.abs(chains.bayes_point - mean) < 4 * se)
    t, p_wrong = _circle_quadrature(X, y, lam_from_label_noise(0.3, len(y)))
    assert np.max(np.abs(chains.bayes_point - p_wrong @ w_grid) / se) > 10
    ess = chains.ess(["w"])["w"].values
    assert np.all((0.8 * 8000 < ess) & (ess < 1.25 * 8000))


def _assert_matches_sphere_quadrature(draws, c_grid, p, ess):
    """Means of the draws within 4.5 standard errors (posterior sd over
    sqrt(ESS)) of the quadrature."""
    mean = p @ c_grid
    se = np.sqrt(p @ (c_grid - mean) ** 2 / ess)
    z = np.abs(draws.mean(axis=0) - mean) / se
    assert np.all(z < 4.5), z
    return mean, se


def test_chain_in_three_dimensions_matches_sphere_quadrature():
    """d = 3, m = 30, q = 0.1: mean direction within 4.5 standard errors
    (ArviZ ESS) of the 2-D quadrature on the sphere, the marginal CDF of
    w_3 within 0.05 of it, R-hat below 1.01; q = 0.3 is told apart."""
    X, y = sphere_data(30, q=0.1, seed=2)
    chains = KernelGibbsSampler(X, y, q=0.1).sample(n_draws=3000, n_chains=4,
                                                    seed=1)
    c_grid, p = _sphere_quadrature(X, y, lam_from_label_noise(0.1, 30))
    ess = chains.ess(["w"])["w"].values
    _, se = _assert_matches_sphere_quadrature(chains.draws, c_grid, p, ess)
    levels = np.linspace(-0.6, 0.6, 7)
    cdf_chain = np.mean(chains.draws[:, 2, None] <= levels, axis=0)
    cdf_quad = np.array([p[c_grid[:, 2] <= s].sum() for s in levels])
    assert np.max(np.abs(cdf_chain - cdf_quad)) < 0.05
    assert float(chains.rhat(["w"])["w"].max()) < 1.01
    _, p_wrong = _sphere_quadrature(X, y, lam_from_label_noise(0.3, 30))
    assert np.max(np.abs(chains.bayes_point - p_wrong @ c_grid) / se) > 10


def test_kernel_form_with_a_linear_kernel_matches_the_primal_quadrature():
    """Kernel form, K = X X' of 12 points in R^3 (rank 3 of 12): draws stay
    on the RKHS sphere alpha' K alpha = 1, and w = X' alpha has the mean of
    the primal posterior (2-D quadrature)."""
    X, y = sphere_data(12, q=0.1, seed=5)
    kgs = KernelGibbsSampler(X, y, q=0.1, kernel=LinearKernel())
    assert kgs.dim == 3
    chains = kgs.sample(n_draws=3000, n_chains=4, seed=2)
    alpha = chains.draws
    np.testing.assert_allclose(np.einsum("ij,jk,ik->i", alpha, kgs.gram, alpha),
                               1.0, rtol=1e-9)
    w = alpha @ X
    c_grid, p = _sphere_quadrature(X, y, lam_from_label_noise(0.1, 12))
    ess = chains.ess(["margin"])["margin"].values.min()
    _assert_matches_sphere_quadrature(w, c_grid, p, ess)


def test_kernel_form_with_an_rbf_kernel_matches_quadrature_in_the_rkhs():
    """Kernel form, RBF kernel on 3 points: the RKHS span is 3-D, w has
    coordinates c = K^(1/2) alpha in an orthonormal basis and scores
    K^(1/2) c; the mean of alpha matches K^(-1/2) E[c] by 2-D quadrature
    over c (a symmetric square root, not the sampler's eigenbasis)."""
    X = np.array([[0.0, 0.0], [1.0, 0.2], [-0.3, 0.9]])
    y = np.array([1, -1, 1])
    kernel = SquaredExponential(1.0)
    kgs = KernelGibbsSampler(X, y, q=0.1, kernel=kernel)
    chains = kgs.sample(n_draws=3000, n_chains=4, seed=3)
    root = np.real(linalg.sqrtm(kernel(X, X)))
    c_grid, p = _sphere_quadrature(root, y, lam_from_label_noise(0.1, 3))
    ess = chains.ess(["alpha"])["alpha"].values
    alpha_grid = c_grid @ np.linalg.inv(root)
    _assert_matches_sphere_quadrature(chains.draws, alpha_grid, p, ess)


# ------------------------------------------------------- diagnostics

def test_rhat_flags_chains_that_sample_different_posteriors():
    """Two chains of one posterior and two of another (labels flipped):
    ArviZ's R-hat over the chain axis is far above 1, while four chains of
    one posterior give R-hat near 1."""
    X, y = sphere_data(30, q=0.1, seed=2)
    kgs = KernelGibbsSampler(X, y, q=0.1)
    same = kgs.sample(n_draws=1000, n_chains=4, seed=4)
    other = KernelGibbsSampler(X, -y, q=0.1).sample(n_draws=1000, n_chains=2,
                                                   seed=5)
    mixed = KGSChains(coef=np.concatenate([same.coef[:2], other.coef]),
                      sampler=kgs, wall_time=1.0, burn_in=0, thin=1)
    assert float(same.rhat(["w"])["w"].max()) < 1.02
    assert float(mixed.rhat(["w"])["w"].max()) > 1.5
    summary = same.summary()
    assert summary["rhat_max_w"] < 1.02 and summary["ess_bulk_min_margin"] > 100


def test_summary_needs_no_arviz_and_flags_unmixed_chains(monkeypatch):
    """summary() runs with ArviZ unimportable and its R-hat separates
    chains of one posterior from chains of two."""
    monkeypatch.setitem(__import__("sys").modules, "arviz", None)
    X, y = sphere_data(30, q=0.1, seed=2)
    kgs = KernelGibbsSampler(X, y, q=0.1)
    same = kgs.sample(n_draws=500, n_chains=4, seed=4)
    other = KernelGibbsSampler(X, -y, q=0.1).sample(n_draws=500, n_chains=2,
                                                   seed=5)
    mixed = KGSChains(coef=np.concatenate([same.coef[:2], other.coef]),
                      sampler=kgs, wall_time=1.0, burn_in=0, thin=1)
    assert same.summary()["rhat_max_w"] < 1.02
    assert mixed.summary()["rhat_max_w"] > 1.5
    with pytest.raises(ImportError):
        same.rhat(["w"])


def test_log_likelihood_is_the_label_noise_likelihood_with_ties_half():
    """[GH01, Eq. (3)] by a product over points: 1 - q for a positive
    margin, q for a negative one, and the geometric mean for a zero one."""
    X = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.5], [2.0, 1.0]])
    y = np.array([1, 1, 1, -1])
    q = 0.2
    w = np.array([1.0, 0.0])             # margins 1, 0, -1, -2
    expected = np.log(1 - q) + 0.5 * np.log(q * (1 - q)) + 2 * np.log(q)
    kgs = KernelGibbsSampler(X, y, q=q)
    assert kgs.log_likelihood(w) == pytest.approx(expected)
    assert kgs.log_likelihood(3.0 * w[None])[0] == pytest.approx(expected)


def test_same_seed_gives_the_same_chain_and_progress_is_reported(capsys):
    X, y = _two_d_data(n=20)
    kgs = KernelGibbsSampler(X, y, q=0.2)
    first = kgs.sample(n_draws=50, n_chains=2, seed=7)
    assert capsys.readouterr().err == ""
    again = kgs.sample(n_draws=50, n_chains=2, seed=np.random.default_rng(7),
                       verbose="lines")
    np.testing.assert_array_equal(first.coef, again.coef)
    assert "[pac_particles] KGS step 55/55" in capsys.readouterr().err


def test_bad_input_is_refused_with_a_message():
    X, y = _two_d_data(n=20)
    with pytest.raises(InputError, match="exactly one of q"):
        KernelGibbsSampler(X, y)
    with pytest.raises(InputError, match="below 1/2"):
        KernelGibbsSampler(X, y, q=0.5)
    with pytest.raises(InputError, match="two points"):
        KernelGibbsSampler(X[:, :1], y, q=0.1)
    with pytest.raises(InputError, match="init"):
        KernelGibbsSampler(X, y, q=0.1).sample(10, n_chains=2, init=np.ones(2))
