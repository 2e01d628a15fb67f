"""PAC-Bayes certificates (pac_particles.bounds): normalisation, terms, validity.

References used here: the dissertation's ordered-pair risk computed by a plain
double loop, exact binomial sums, the entropy/cross-entropy form of the
Gaussian KL, the exact d = 2 Gibbs posterior (``reference.AngularQuadrature``),
and population risks known in closed form for Gaussian classes,
``1 - AUC(theta) = Phi(-theta . delta / (sqrt(2) |theta|))``.
"""

import math

import numpy as np
import pytest
from scipy.stats import binom, multivariate_normal, norm

from pac_particles.problem.auc import auc_risk, linear_auc_risk
from pac_particles.bounds import (PACBayesBound, pac_bayes_bound,
                                  pac_bayes_bound_gaussian, pac_bayes_bound_gibbs,
                                  pac_bayes_bound_gp, prevalence_factor_lower,
                                  smc_certificate)
from pac_particles.core.checks import InputError
from pac_particles.core.gaussian import gaussian_kl
from pac_particles.smc.models import AUCGibbsModel, GPAUCModel
from pac_particles.smc.posterior import run_smc
from pac_particles.core.kernels import SquaredExponential
from pac_particles.problem.risks import AUCRisk
from pac_particles.approx.vb import GaussianVB, expected_auc_risk, ordered_pairs_factor
from builders import gaussian_classes
from lab.reference.quadrature import AngularQuadrature


def ordered_pairs_risk(scores, y):
    """Dissertation, Section 5: r_n = 1/(n(n-1)) sum_{i != j}
    1{(Y_i - Y_j) f(X_i, X_j) < 0}, f = 2 * 1{s_i > s_j} - 1."""
    n = len(y)
    bad = 0
    for i in range(n):
        for j in range(n):
            if i != j:
                f = 1 if scores[i] > scores[j] else -1
                bad += (int(y[i]) - int(y[j])) * f < 0
    return bad / (n * (n - 1))


def population_auc_risk(theta, delta):
    """1 - AUC of x . theta for ``gaussian_classes(n, pi, delta)`` (theta: (N, d))."""
    norms = np.linalg.norm(theta, axis=-1)
    return norm.cdf(-(theta @ delta) / (math.sqrt(2) * norms))


# ------------------------------------------------------------ normalisation

def test_ordered_pairs_risk_is_q_n_times_the_pos_neg_fraction_ties_included():
    rng = np.random.default_rng(0)
    y = rng.random(40) < 0.3
    scores = rng.integers(0, 5, size=40).astype(float)      # many ties
    q_n = ordered_pairs_factor(y.sum(), (~y).sum())
    assert q_n == 2 * y.sum() * (~y).sum() / (40 * 39)
    assert ordered_pairs_risk(scores, y) == pytest.approx(q_n * auc_risk(scores, y),
                                                          abs=1e-15)


def test_gibbs_weights_agree_with_lam_pairs_on_the_ordered_pairs_risk():
    rng = np.random.default_rng(1)
    y = rng.random(30) < 0.5
    scores = rng.normal(size=30)
    cert = pac_bayes_bound(0.2, 1.0, lam=12.0, n_pos=y.sum(), n_neg=(~y).sum())
    # exp(-lam R_n) = exp(-lam' r_n)
    assert cert.lam_pairs * ordered_pairs_risk(scores, y) == pytest.approx(
        12.0 * auc_risk(scores, y), rel=1e-12)


@pytest.mark.parametrize("pi", [0.1, 0.35, 0.5])
def test_q_n_is_unbiased_for_two_pi_one_minus_pi(pi):
    n = 25
    k = np.arange(1, n)           # q_n = 0 when a class is empty
    expectation = np.sum(binom.pmf(k, n, pi) * 2 * k * (n - k) / (n * (n - 1)))
    assert expectation == pytest.approx(2 * pi * (1 - pi), abs=1e-14)


@pytest.mark.parametrize("pi", [0.05, 0.3, 0.5])
def test_prevalence_lower_bound_covers_two_pi_one_minus_pi(pi):
    n, eps = 150, 0.1
    k = np.arange(1, n)
    lower = np.array([prevalence_factor_lower(j, n - j, eps) for j in k])
    coverage = np.sum(binom.pmf(k, n, pi) * (lower <= 2 * pi * (1 - pi)))
    coverage += binom.pmf(0, n, pi) + binom.pmf(n, n, pi)   # no certificate there
    assert coverage >= 1 - eps
    assert np.all(lower <= 2 * k * (n - k) / (n * (n - 1)))


def test_gaussian_kl_is_cross_entropy_minus_entropy():
    rng = np.random.default_rng(2)
    d, v = 4, 2.5
    A = rng.normal(size=(d, d))
    m, S = rng.normal(size=d), A @ A.T + 0.1 * np.eye(d)
    cross_entropy = 0.5 * (d * math.log(2 * math.pi * v) + (np.trace(S) + m @ m) / v)
    entropy = multivariate_normal(m, S).entropy()
    assert gaussian_kl(m, S, v) == pytest.approx(cross_entropy - entropy, rel=1e-12)
    assert gaussian_kl(m, np.diag(S), v) == pytest.approx(
        gaussian_kl(m, np.diag(np.diag(S)), v), rel=1e-14)
    assert gaussian_kl(np.zeros(d), v * np.eye(d), v) == pytest.approx(0, abs=1e-14)


# ------------------------------------------------------------ the terms

def test_bound_is_the_sum_of_the_corollary_19_terms():
    risk, kl, lam, n_pos, n_neg, eps = 0.12, 4.0, 30.0, 120, 280, 0.05
    cert = pac_bayes_bound(risk, kl, lam, n_pos, n_neg, eps=eps)
    n = n_pos + n_neg
    q_n = 2 * n_pos * n_neg / (n * (n - 1))
    lam_pairs = lam * n * (n - 1) / (2 * n_pos * n_neg)
    expected = (q_n * risk + lam_pairs / (n - 1)
                + (kl + math.log(1 / eps)) / lam_pairs)
    assert isinstance(cert, PACBayesBound)
    assert cert.bound == pytest.approx(expected, rel=1e-14)
    assert cert.lam_pairs == pytest.approx(lam_pairs, rel=1e-14)
    assert cert.empirical_term == pytest.approx(q_n * risk, rel=1e-14)
    assert cert.kl_term == pytest.approx(kl / lam_pairs, rel=1e-14)
    assert cert.complexity_term == pytest.approx(
        lam_pairs / (n - 1) + math.log(1 / eps) / lam_pairs, rel=1e-14)
    total = cert.empirical_term + cert.kl_term + cert.complexity_term
    assert total == pytest.approx(cert.bound, rel=1e-14)
    assert cert.auc_risk_bound == pytest.approx(cert.bound / q_n, rel=1e-14)
    assert cert.auc_risk_bound_rigorous >= cert.auc_risk_bound
    assert (cert.trivial, cert.eps, cert.grid_size, cert.n) == (0.5, eps, 1, n)
    # two-sample Hoeffding given the labels, on our scale: f(lam) = lam^2 / (8 k)
    assert cert.auc_risk_bound_two_sample == pytest.approx(
        risk + lam / (8 * min(n_pos, n_neg)) + (kl + math.log(1 / eps)) / lam,
        rel=1e-14)


def test_grid_size_turns_log_one_over_eps_into_log_grid_over_eps():
    one = pac_bayes_bound(0.1, 3.0, 20.0, 300, 300, eps=0.05)
    grid = pac_bayes_bound(0.1, 3.0, 20.0, 300, 300, eps=0.05, grid_size=10)
    assert grid.bound - one.bound == pytest.approx(math.log(10) / one.lam_pairs,
                                                   rel=1e-12)
    assert grid.grid_size == 10


def test_gibbs_bound_from_log_z_is_the_bound_of_its_free_energy():
    risk, kl, lam, n_pos, n_neg = 0.15, 2.5, 40.0, 200, 300
    log_z = -(lam * risk + kl)           # Gibbs posterior: lam E[R_n] + KL = -log Z
    split = pac_bayes_bound(risk, kl, lam, n_pos, n_neg, grid_size=3)
    gibbs = pac_bayes_bound_gibbs(log_z, lam, n_pos, n_neg, grid_size=3)
    assert gibbs.bound == pytest.approx(split.bound, rel=1e-13)
    lam_pairs = split.lam_pairs
    assert gibbs.bound == pytest.approx(
        -log_z / lam_pairs + lam_pairs / (n_pos + n_neg - 1)
        + math.log(3 / 0.05) / lam_pairs, rel=1e-13)
    assert gibbs.empirical_term is None and gibbs.kl_term is None
    both = pac_bayes_bound_gibbs(log_z, lam, n_pos, n_neg, expected_risk=risk,
                                 grid_size=3)
    assert both.kl == pytest.approx(kl, rel=1e-12)
    assert both.bound == pytest.approx(split.bound, rel=1e-13)
    assert gibbs.auc_risk_bound_two_sample == pytest.approx(
        (-log_z + math.log(3 / 0.05)) / lam + lam / (8 * n_pos), rel=1e-13)


def test_gibbs_bound_warns_when_monte_carlo_estimates_imply_negative_kl():
    with pytest.warns(UserWarning, match="KL set to 0"):
        cert = pac_bayes_bound_gibbs(-3.0, 20.0, 100, 100, expected_risk=0.2)
    # and stays conservative: lam E[R_n] = 4 > -log Z = 3
    assert cert.free_energy_term * cert.lam_pairs == pytest.approx(4.0)


def test_gaussian_bound_uses_the_exact_expected_risk_and_kl():
    rng = np.random.default_rng(3)
    X, y = gaussian_classes(200, 0.4, np.array([1.0, -0.5, 0.2]), rng)
    res = GaussianVB(X, y, lam=25.0, family="full", standardize=False).fit()
    cert = pac_bayes_bound_gaussian(res.mean, res.cov, X, y, lam=25.0,
                                    standardize=False)
    assert cert.expected_risk == pytest.approx(res.expected_risk, rel=1e-12)
    assert cert.kl == pytest.approx(res.kl, rel=1e-10)
    # lam E[R_n] + KL is the VB objective
    assert cert.free_energy_term * cert.lam_pairs == pytest.approx(res.objective,
                                                                   rel=1e-10)


# ------------------------------------------------------------ validity

def test_vb_certificate_holds_on_a_large_test_sample_and_is_non_vacuous():
    rng = np.random.default_rng(0)
    d, n, pi = 3, 2500, 0.3
    delta = np.array([1.2, -0.9, 0.6])
    X, y = gaussian_classes(n, pi, delta, rng)
    res = GaussianVB(X, y, family="full", standardize=False).fit()  # Corollary 21
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    q_n = ordered_pairs_factor(n_pos, n_neg)
    # lam' = c sqrt(d (n-1)) / 2 fixed in advance for c in a grid of 3: choose
    # c with the data, pay log(3) in the bound
    grid = [1.0, 2.0, 4.0]
    data_risk = expected_auc_risk(res.mean, res.cov, X[y], X[~y])
    certs = [pac_bayes_bound(data_risk, res.kl, q_n * c * math.sqrt(d * (n - 1)) / 2,
                             n_pos, n_neg, eps=0.05, grid_size=len(grid))
             for c in grid]
    cert = min(certs, key=lambda c: c.bound)
    assert cert.non_vacuous and cert.bound < 0.25
    assert cert.auc_risk_bound_rigorous < 0.5       # better than chance, certified
    # held-out: E_rho of the test risks, over 200 draws of theta ~ rho
    X_test, y_test = gaussian_classes(100_000, pi, delta, rng)
    theta = res.sample(200, seed=1)
    test_auc_risk = linear_auc_risk(theta, X_test[y_test], X_test[~y_test]).mean()
    q_test = ordered_pairs_factor(y_test.sum(), (~y_test).sum())
    assert q_test * test_auc_risk <= cert.bound
    assert test_auc_risk <= cert.auc_risk_bound_rigorous
    best_two_sample = min(c.auc_risk_bound_two_sample for c in certs)
    assert test_auc_risk <= best_two_sample < cert.auc_risk_bound_rigorous
    # the population value agrees with the test sample
    population = 2 * pi * (1 - pi) * population_auc_risk(theta, delta).mean()
    assert q_test * test_auc_risk == pytest.approx(population, abs=3e-3)
    assert population <= cert.bound


def test_corollary19_of_a_lam_off_the_grid_is_evaluated_on_the_grid():
    """lam = 115.25 (a tempering step) is not on the grid the union bound
    pays for: the bound is the record at the grid value where the
    two-sample bound is tightest, for the same rho; for the Gibbs posterior
    its free energy there, -log Z max(1, g / lam), is at least the exact
    g E[R_n] + KL of quadrature in d = 2."""
    from pac_particles.sklearn.selection import lam_grid
    rng = np.random.default_rng(5)
    X, y = gaussian_classes(300, 0.4, np.array([1.5, 0.8]), rng)
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    grid = lam_grid(500.0, 10)
    lam = 115.25
    exact = AngularQuadrature(X, y, lam)
    weights = np.diff(exact.edges) * np.exp(-lam * (exact.risk
                                                    - exact.risk.min()))
    q = float(weights @ exact.risk / weights.sum())
    kl = -exact.log_z - lam * q
    # any rho: every grid value at grid_size = 10, the best two-sample one
    cert = pac_bayes_bound(q, kl, lam, n_pos, n_neg, lam_grid=grid)
    each = [pac_bayes_bound(q, kl, g, n_pos, n_neg, grid_size=10)
            for g in grid]
    best = min(each, key=lambda c: c.auc_risk_bound_two_sample)
    assert lam not in grid and cert.lam in grid and cert.grid_size == 10
    assert cert.posterior_lam == lam
    assert cert.bound == best.bound and cert.lam == best.lam
    # the Gibbs posterior from log Z alone: conservative at every g
    gibbs = pac_bayes_bound_gibbs(exact.log_z, lam, n_pos, n_neg,
                                  lam_grid=grid)
    assert gibbs.lam in grid and gibbs.posterior_lam == lam
    assert gibbs.free_energy_term * gibbs.lam_pairs >= (
        gibbs.lam * q + kl - 1e-9)
    assert gibbs.auc_risk_bound_two_sample >= cert.auc_risk_bound_two_sample
    for record in (cert, gibbs):
        assert 0.0 <= record.bound <= 1.0
        assert 0.0 <= record.auc_risk_bound_two_sample <= 1.0
    with pytest.raises(InputError, match="grid_size"):
        pac_bayes_bound(q, kl, lam, n_pos, n_neg, grid_size=3, lam_grid=grid)


def test_gibbs_certificate_from_exact_log_z_holds_for_the_population_risk():
    rng = np.random.default_rng(4)
    n, pi = 1200, 0.4
    delta = np.array([1.5, 0.8])
    X, y = gaussian_classes(n, pi, delta, rng)
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    lam = ordered_pairs_factor(n_pos, n_neg) * math.sqrt(2 * (n - 1)) / 2 * 2
    exact = AngularQuadrature(X, y, lam)
    cert = pac_bayes_bound_gibbs(exact.log_z, lam, n_pos, n_neg, eps=0.05)
    # E_Gibbs[R]: the population risk averaged over the exact posterior of phi
    a, b = exact.edges[:-1], exact.edges[1:]
    log_w = np.log(b - a + 1e-300) - lam * exact.risk
    w = np.exp(log_w - log_w.max())
    mid = 0.5 * (a + b)
    u = np.column_stack([np.cos(mid), np.sin(mid)])
    gibbs_auc_risk = np.sum(w * population_auc_risk(u, delta)) / w.sum()
    gibbs_risk = 2 * pi * (1 - pi) * gibbs_auc_risk
    assert gibbs_risk <= cert.bound < cert.trivial
    assert cert.auc_risk_bound_rigorous < 0.5
    assert gibbs_auc_risk <= cert.auc_risk_bound_two_sample < 0.5


# ------------------------------------------------------------ input checks

@pytest.mark.parametrize("kwargs, match", [
    (dict(eps=0.0), "eps"),
    (dict(eps=1.0), "eps"),
    (dict(grid_size=0), "grid_size"),
    (dict(grid_size=2.5), "grid_size"),
    (dict(lam=0.0), "lam"),
    (dict(lam=-2.0), "lam"),
    (dict(n_pos=1, n_neg=0), "at least 2"),
    (dict(n_pos=0, n_neg=5), "positive and one negative"),
    (dict(kl=-0.1), "kl"),
    (dict(expected_risk=1.5), "expected_risk"),
    (dict(eps=0.5, eps_prevalence=0.6), "eps \\+ eps_prevalence"),
])
def test_bad_arguments_raise_value_error_naming_the_problem(kwargs, match):
    args = dict(expected_risk=0.1, kl=1.0, lam=10.0, n_pos=50, n_neg=50)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        pac_bayes_bound(**args)


def test_gibbs_log_z_outside_minus_lam_zero_is_rejected():
    with pytest.raises(ValueError, match="log_z"):
        pac_bayes_bound_gibbs(0.5, 10.0, 50, 50)
    with pytest.raises(ValueError, match="log_z"):
        pac_bayes_bound_gibbs(-11.0, 10.0, 50, 50)


def test_gaussian_bound_rejects_mismatched_shapes():
    rng = np.random.default_rng(5)
    X, y = gaussian_classes(50, 0.5, np.ones(3), rng)
    with pytest.raises(ValueError, match="shapes"):
        pac_bayes_bound_gaussian(np.zeros(2), np.eye(2), X, y, lam=5.0)
    with pytest.raises(ValueError, match="prior_var"):
        pac_bayes_bound_gaussian(np.zeros(3), np.eye(3), X, y, lam=5.0,
                                 prior_var=-1.0)


# ------------------------------------------------------------ the risk's view

class _PointRisk:
    """A risk whose concentration rests on fewer terms than min(n_pos, n_neg)."""
    n_pos, n_neg, n_independent = 40, 60, 10


def test_a_risk_gives_the_same_certificate_as_its_class_counts():
    y = np.r_[np.ones(40), np.zeros(60)]
    risk = AUCRisk(y)
    by_counts = pac_bayes_bound(0.2, 3.0, 25.0, 40, 60, eps=0.1, grid_size=5)
    assert pac_bayes_bound(0.2, 3.0, 25.0, eps=0.1, grid_size=5,
                           risk=risk) == by_counts
    assert (pac_bayes_bound_gibbs(-8.0, 25.0, risk=risk, expected_risk=0.2)
            == pac_bayes_bound_gibbs(-8.0, 25.0, 40, 60, expected_risk=0.2))


def test_the_two_sample_term_uses_the_risks_independent_terms():
    cert = pac_bayes_bound(0.2, 3.0, 25.0, risk=_PointRisk())
    assert cert.auc_risk_bound_two_sample == pytest.approx(
        0.2 + 25.0 / (8 * 10) + (3.0 + math.log(1 / 0.05)) / 25.0)
    assert cert.bound == pac_bayes_bound(0.2, 3.0, 25.0, 40, 60).bound


def test_counts_and_risk_are_exclusive():
    with pytest.raises(InputError, match="either"):
        pac_bayes_bound(0.2, 3.0, 25.0, 40, 60, risk=_PointRisk())
    with pytest.raises(InputError, match="n_pos"):
        pac_bayes_bound(0.2, 3.0, 25.0)


def test_smc_certificate_pays_for_a_lower_confidence_bound_on_log_z():
    """The run's log Z and particle risks are estimates: the certificate
    uses a lower confidence bound on log Z at a tenth of eps (the raw
    importance weights' Markov bound, or the tempering estimate's) and no
    E[R_n] at all, and its record says so."""
    rng = np.random.default_rng(8)
    X, y = gaussian_classes(60, 0.5, np.array([1.5, 0.0]), rng)
    linear = AUCGibbsModel(X, y, lam=30.0)
    gp = GPAUCModel(X, y, lam=30.0, kernel=SquaredExponential(1.0))
    for model, evidence in ((linear, "importance"), (gp, "tempering")):
        post = run_smc(model, n_particles=40, len_chain=3, seed=0,
                       evidence=evidence)
        log_z_low, how = post.log_z_lower_bound(0.01)
        assert log_z_low < post.log_z
        expected = pac_bayes_bound_gibbs(log_z_low, post.lam,
                                         model.data.n_pos, model.data.n_neg,
                                         eps=0.09, grid_size=3)
        cert = smc_certificate(post, eps=0.1, grid_size=3)
        assert cert.bound == pytest.approx(expected.bound, rel=1e-12)
        assert cert.free_energy_term == pytest.approx(
            -log_z_low / cert.lam_pairs)
        assert cert.expected_risk is None and cert.kl is None
        assert cert.eps == 0.1 and cert.delta_shares == (
            ("Corollary 19", pytest.approx(0.09)), ("log Z", pytest.approx(0.01)))
        assert cert.note == how and evidence in how


def test_gp_bound_is_the_gaussian_bound_with_identity_features():
    """Latent scores s ~ N(m, S) under N(0, K): with K = L L' the scores are
    the linear scores of theta = L^-1 s ~ N(L^-1 m, L^-1 S L^-T) under a
    standard normal prior on inputs L."""
    rng = np.random.default_rng(9)
    n = 30
    y = np.r_[np.ones(12, bool), np.zeros(18, bool)]
    B = rng.normal(size=(n, n))
    K = B @ B.T / n + 0.5 * np.eye(n)
    A = rng.normal(size=(n, n))
    m, S = rng.normal(size=n), A @ A.T / n + 0.1 * np.eye(n)
    cert = pac_bayes_bound_gp(m, S, K, y, lam=20.0, eps=0.1)
    L = np.linalg.cholesky(K)
    Li = np.linalg.inv(L)
    risk = expected_auc_risk(Li @ m, Li @ S @ Li.T, L[y], L[~y])
    kl = gaussian_kl(Li @ m, Li @ S @ Li.T, 1.0)
    expected = pac_bayes_bound(risk, kl, 20.0, 12, 18, eps=0.1)
    assert cert.bound == pytest.approx(expected.bound, rel=1e-8)
    assert cert.kl == pytest.approx(kl, rel=1e-8)
    with pytest.raises(InputError, match="shapes"):
        pac_bayes_bound_gp(m[:-1], S, K, y, lam=20.0)


@pytest.mark.parametrize("prior", ["scalar", "vector", "matrix"])
@pytest.mark.parametrize("shifted", [False, True])
def test_rescaled_kl_finds_the_minimum_over_the_scale(prior, shifted):
    """The closed-form minimiser over ``c`` against a numerical search of
    ``scaled_kl``, for every form of the Gaussian prior, with and without a
    prior mean, the covariance full or diagonal."""
    from scipy import optimize
    from pac_particles.bounds.rescaled_kl import rescaled_kl, scaled_kl
    rng = np.random.default_rng(11)
    d = 4
    A = rng.standard_normal((d, d))
    S0 = {"scalar": 0.7, "vector": rng.uniform(0.3, 2.0, d),
          "matrix": A @ A.T + 0.5 * np.eye(d)}[prior]
    mean = 3.0 * rng.standard_normal(d)
    mu0 = rng.standard_normal(d) if shifted else None
    for cov in (np.diag(rng.uniform(0.01, 0.1, d)), rng.uniform(0.01, 0.1, d)):
        kl, c = rescaled_kl(mean, cov, S0, mu0)
        found = optimize.minimize_scalar(
            lambda t: scaled_kl(np.exp(t), mean, cov, S0, mu0),
            bounds=(-10, 10), method="bounded", options=dict(xatol=1e-10))
        assert kl == pytest.approx(min(found.fun, scaled_kl(1.0, mean, cov,
                                                             S0, mu0)),
                                   rel=1e-7, abs=1e-9)
        assert kl <= scaled_kl(1.0, mean, cov, S0, mu0) + 1e-12


def test_a_diagonal_covariance_matrix_is_read_as_its_variances():
    """A diagonal family's summary comes as a (d, d) matrix: the risks of
    the certificates read it as its variances (O(d) a pair), the same
    values as from the variances and as from the matrix summed in full
    (a plain double loop over pairs); a covariance with an entry off its
    diagonal stays a matrix."""
    from pac_particles.bounds.ranking import sampled_expected_risk_bound
    from pac_particles.problem.probit_risk import check_gaussian_pairs
    rng = np.random.default_rng(4)
    X_pos, X_neg = rng.normal(size=(30, 5)), rng.normal(size=(40, 5))
    m, variances = rng.normal(size=5), rng.uniform(0.1, 2.0, size=5)
    S = np.diag(variances)
    assert check_gaussian_pairs(m, S, X_pos, X_neg)[1].shape == (5,)
    full = S.copy()
    full[0, 1] = full[1, 0] = 0.05
    assert check_gaussian_pairs(m, full, X_pos, X_neg)[1].shape == (5, 5)
    loop = np.mean([norm.cdf(-((a - b) @ m) / math.sqrt((a - b) @ S @ (a - b)))
                    for a in X_pos for b in X_neg])
    assert expected_auc_risk(m, S, X_pos, X_neg) == pytest.approx(loop,
                                                                  abs=1e-14)
    for pairs in (500, 10 ** 6):
        from_matrix = sampled_expected_risk_bound(m, S, X_pos, X_neg, 0.05,
                                                  n_pairs=pairs, seed=1)
        from_vector = sampled_expected_risk_bound(m, variances, X_pos, X_neg,
                                                  0.05, n_pairs=pairs, seed=1)
        np.testing.assert_allclose(from_matrix, from_vector, rtol=1e-14)
