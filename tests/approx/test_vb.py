"""Gaussian variational approximations of the AUC Gibbs posterior (pac_particles.approx.vb).

References used here: the O(P) pairwise definition of E_rho[R_n] (a plain loop),
Monte Carlo over rho with the risk kernel, central finite differences, and the
exact d = 2 Gibbs posterior by quadrature over angles
(``reference.AngularQuadrature``).
"""

import math

import numpy as np
import pytest
from scipy.stats import norm

from builders import noisy_linear, tied_data
from pac_particles.problem.auc import linear_auc_risk
from pac_particles.problem.data import validate_xy
from pac_particles.approx.ep import EPLinear
from pac_particles.smc.models import AUCGibbsModel
from pac_particles.smc.posterior import run_smc
from pac_particles.problem.probit_risk import GaussianPairRisk as _PairTerms
from pac_particles.approx.variational import GaussianFamily
from pac_particles.approx.vb import (FAMILIES, GaussianVB, corollary21_lam,
                              expected_auc_risk, ordered_pairs_factor)
from lab.reference.quadrature import AngularQuadrature


def toy_data(n=50, d=4, seed=1):
    return tied_data(n, d, seed)


def pairwise_expected_risk(m, S, X_pos, X_neg):
    """E_rho[R_n] by its definition, one pair at a time."""
    total = 0.0
    for xp in X_pos:
        for xn in X_neg:
            d = xp - xn
            tie = not d.any()
            total += 0.5 if tie else norm.cdf(-(d @ m) / math.sqrt(d @ S @ d))
    return total / (len(X_pos) * len(X_neg))


def cosine(a, b):
    return a @ b / np.linalg.norm(a) / np.linalg.norm(b)


def random_gaussian(d, seed):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(d, d))
    return rng.normal(size=d), A @ A.T / d + 0.1 * np.eye(d)


@pytest.fixture(scope="module")
def pima_fits(pima):
    X, y = pima
    return {fam: GaussianVB(X, y, family=fam).fit() for fam in FAMILIES}


# ---------------------------------------------------------- E_rho[R_n] itself

def test_expected_risk_matches_pairwise_definition_in_any_block_size():
    X, y = toy_data()
    data = validate_xy(X, y)
    m, S = random_gaussian(data.d, seed=2)
    ref = pairwise_expected_risk(m, S, data.X_pos, data.X_neg)
    for block in (None, 7, 37, 10**9):
        risk = expected_auc_risk(m, S, data.X_pos, data.X_neg,
                                 block_entries=block)
        assert risk == pytest.approx(ref, abs=1e-13)
    # a diagonal covariance may be given as its vector of variances
    assert expected_auc_risk(m, np.diag(S), data.X_pos, data.X_neg) == pytest.approx(
        pairwise_expected_risk(m, np.diag(np.diag(S)), data.X_pos, data.X_neg),
        abs=1e-13)


def test_expected_risk_is_the_mean_auc_risk_of_random_scores():
    X, y = toy_data(n=80, d=3, seed=5)
    data = validate_xy(X, y)
    m, S = random_gaussian(data.d, seed=6)
    theta = np.random.default_rng(7).multivariate_normal(m, S, size=40_000)
    risks = linear_auc_risk(theta, data.X_pos, data.X_neg)
    se = risks.std() / math.sqrt(risks.size)
    exact = expected_auc_risk(m, S, data.X_pos, data.X_neg)
    assert abs(risks.mean() - exact) < 4 * se


def test_identical_positive_and_negative_inputs_contribute_one_half():
    X_pos = np.array([[1.0, 2.0]])
    X_neg = np.array([[1.0, 2.0], [0.0, 0.0]])
    m, S = np.array([3.0, -1.0]), np.diag([0.5, 2.0])
    d = X_pos[0] - X_neg[1]
    expected = 0.5 * (0.5 + norm.cdf(-(d @ m) / math.sqrt(d @ S @ d)))
    risk = expected_auc_risk(m, S, X_pos, X_neg)
    assert risk == pytest.approx(expected, abs=1e-15)
    # and whatever rho: only the other pair moves
    assert expected_auc_risk(10 * m, S, X_pos, X_neg) >= 0.25


def test_near_duplicate_pairs_keep_their_precision():
    # a_i + a_j - 2 b_ij cancels catastrophically for nearly equal, large inputs
    base = np.array([1e4, -2e4, 3e4])
    X_pos = np.array([base + [1e-6, 0.0, 0.0], base + [0.0, 3e-6, -1e-6]])
    X_neg = np.array([base, base + [2e-6, 1e-6, 0.0]])
    m, S = random_gaussian(3, seed=3)
    assert expected_auc_risk(m, S, X_pos, X_neg) == pytest.approx(
        pairwise_expected_risk(m, S, X_pos, X_neg), abs=1e-9)


# ---------------------------------------------------------- objective, gradient

@pytest.mark.parametrize("family", FAMILIES)
def test_objective_gradient_matches_finite_differences(family):
    X, y = toy_data()
    data = validate_xy(X, y)
    terms = _PairTerms(data.X_pos, data.X_neg, block_entries=37)
    fam = GaussianFamily(family, data.d)
    x = np.random.default_rng(4).normal(scale=0.5, size=fam.n_params)
    lam, prior_var = 7.0, 2.0
    value, grad, risk, kl = fam.objective(x, lam, prior_var, terms)
    m, cov, _ = fam.unpack(x)
    S = np.diag(cov) if cov.ndim == 1 else cov
    # the objective is lam E[R_n] + KL(N(m, S) || N(0, prior_var I))
    kl_ref = 0.5 * (np.trace(S) / prior_var + m @ m / prior_var - data.d
                    + data.d * math.log(prior_var) - np.linalg.slogdet(S)[1])
    assert kl == pytest.approx(kl_ref, rel=1e-12)
    reference = pairwise_expected_risk(m, S, data.X_pos, data.X_neg)
    assert risk == pytest.approx(reference, abs=1e-13)
    assert value == pytest.approx(lam * risk + kl, rel=1e-14)
    h = 1e-6
    def f(z):
        return fam.objective(z, lam, prior_var, terms)[0]

    numeric = np.array([(f(x + h * e) - f(x - h * e)) / (2 * h)
                        for e in np.eye(fam.n_params)])
    np.testing.assert_allclose(grad, numeric, atol=1e-7)


def test_diagonal_covariance_gradient_is_the_diagonal_of_the_full_one():
    X, y = toy_data(seed=8)
    data = validate_xy(X, y)
    terms = _PairTerms(data.X_pos, data.X_neg, block_entries=100)
    m = np.random.default_rng(9).normal(size=data.d)
    var = np.array([0.3, 1.2, 0.7, 2.0])
    r_full, g_m_full, G_full = terms(m, np.diag(var))
    r_diag, g_m_diag, G_diag = terms(m, var)
    assert r_diag == pytest.approx(r_full, abs=1e-14)
    np.testing.assert_allclose(g_m_diag, g_m_full, atol=1e-14)
    np.testing.assert_allclose(G_diag, np.diag(G_full), atol=1e-14)


# ---------------------------------------------------------- fitted families

def test_family_optima_are_nested_full_diagonal_isotropic_on_pima(pima_fits):
    iso, diag, full = (pima_fits[f] for f in FAMILIES)
    assert all(r.converged for r in (iso, diag, full))
    assert full.objective <= diag.objective + 1e-9
    assert diag.objective <= iso.objective + 1e-9
    # not a tie: the full family exploits correlations
    assert full.objective < iso.objective - 0.01
    for r in (iso, diag, full):
        assert r.elbo == -r.objective
        assert r.objective == pytest.approx(r.lam * r.expected_risk + r.kl,
                                            rel=1e-12)
        assert r.grad_norm < 1e-4


def test_isotropic_and_diagonal_covariances_have_their_shape(pima_fits):
    iso, diag = pima_fits["isotropic"].cov, pima_fits["diagonal"].cov
    assert np.allclose(iso, iso[0, 0] * np.eye(len(iso)))
    assert np.allclose(diag, np.diag(np.diag(diag)))
    assert not np.allclose(np.diag(diag), diag[0, 0])


def test_diagonal_families_keep_their_variances_and_build_s_on_read(pima,
                                                                     pima_fits):
    import pickle
    X, y = pima
    diag = GaussianVB(X, y, family="diagonal").fit()
    assert diag.compact_cov.shape == (X.shape[1],)
    assert "_dense_cov" not in diag.__dict__
    # a warm start reads the variances, not a d x d S
    again = GaussianVB(X, y, family="diagonal").fit(init=diag)
    assert "_dense_cov" not in diag.__dict__
    assert np.allclose(again.mean, diag.mean, atol=1e-4)
    assert np.array_equal(diag.cov, np.diag(diag.compact_cov))
    assert diag.cov is diag.cov                     # built once
    restored = pickle.loads(pickle.dumps(diag))
    assert "_dense_cov" not in restored.__dict__
    assert np.array_equal(restored.cov, diag.cov)
    full = pima_fits["full"]
    assert full.cov is full.compact_cov and full.cov.shape == (X.shape[1],) * 2


def test_lbfgs_optimum_is_the_box_optimum_where_the_box_binds():
    """A prior variance of 1e-26 puts the optimal log standard deviations
    near -30, below the box's -25: the fit must stop on the box, at scipy's
    bounded L-BFGS-B optimum (an unclipped extension would leave the box,
    a wrong clip would leave the mean elsewhere)."""
    from scipy import optimize
    X, y = toy_data(40, 3, seed=4)
    vb = GaussianVB(X, y, lam=20.0, family="diagonal", prior_var=1e-26)
    res = vb.fit()
    fam = GaussianFamily("diagonal", vb.data.d)
    lo, hi = fam.bounds()
    x = np.concatenate([res.mean, 0.5 * np.log(res.compact_cov)])
    assert np.all(x[vb.data.d:] == lo[vb.data.d:])      # on the box
    ref = optimize.minimize(
        lambda z: fam.objective(z, vb.lam, vb.prior_var, vb._expected)[:2],
        vb._initial_point(fam, None), jac=True, method="L-BFGS-B",
        bounds=optimize.Bounds(lo, hi),
        options=dict(gtol=1e-6, ftol=1e-12, maxcor=20))
    assert np.allclose(x, ref.x, rtol=1e-4, atol=1e-16)


@pytest.mark.parametrize("family", FAMILIES)
def test_elbo_is_below_quadrature_log_z_in_two_dimensions(family):
    rng = np.random.default_rng(3)
    n, lam = 120, 50.0
    y = rng.random(n) < 0.4
    X = rng.normal(size=(n, 2)) + np.outer(y, [1.0, 0.5])
    exact = AngularQuadrature(X, y, lam)
    res = GaussianVB(X, y, lam=lam, family=family, standardize=False).fit()
    gap = exact.log_z - res.elbo           # = KL(rho || Gibbs posterior) >= 0
    assert 0 < gap < 0.6
    assert cosine(res.mean, exact.mean_u) > 0.999


def test_default_lam_and_prior_variance_follow_corollary_21(pima):
    X, y = pima
    vb = GaussianVB(X, y, family="isotropic")
    n_pos, n_neg, d = vb.data.n_pos, vb.data.n_neg, vb.data.d
    n = n_pos + n_neg
    # Corollary 21: lam' = sqrt(d (n - 1)) / 2 on the all-ordered-pairs risk
    lam_pairs = math.sqrt(d * (n - 1)) / 2
    assert vb.lam == pytest.approx(lam_pairs * 2 * n_pos * n_neg / (n * (n - 1)))
    assert vb.lam == corollary21_lam(n_pos, n_neg, d)
    assert vb.lam / ordered_pairs_factor(n_pos, n_neg) == pytest.approx(lam_pairs)
    assert vb.prior_var == 1.0


def test_predict_scores_new_inputs_with_the_training_preprocessing(pima, pima_fits):
    X, y = pima
    vb = GaussianVB(X, y, family="diagonal")
    with pytest.raises(ValueError, match="not fitted"):
        vb.predict(X)
    res = vb.fit(init=pima_fits["diagonal"])
    np.testing.assert_allclose(vb.predict(X[:10]), vb.data.X[:10] @ res.mean)


# ---------------------------------------------------------- subsampled pairs

def test_subsampled_risk_is_unbiased_with_variance_sigma_f_squared_over_b():
    X, y = toy_data(n=60, d=3, seed=11)
    data = validate_xy(X, y)
    terms = _PairTerms(data.X_pos, data.X_neg)
    m, S = random_gaussian(data.d, seed=12)
    exact = terms(m, S, need_grad=False)[0]
    # sigma_f^2: variance of Phi_ij over the P pairs
    D = (data.X_pos[:, None] - data.X_neg[None]).reshape(-1, data.d)
    tie = ~D.any(axis=1)
    phi = np.where(tie, 0.5, norm.cdf(-(D @ m) / np.sqrt(
        np.maximum(np.einsum("ij,jk,ik->i", D, S, D), 1e-300))))
    B, reps = 50, 4000
    rng = np.random.default_rng(13)
    estimates = np.array([
        terms.sampled(rng.integers(data.n_pos, size=B),
                      rng.integers(data.n_neg, size=B), m, S, False)[0]
        for _ in range(reps)])
    predicted_var = phi.var() / B
    assert abs(estimates.mean() - exact) < 4 * math.sqrt(predicted_var / reps)
    assert estimates.var() / predicted_var == pytest.approx(1.0, abs=0.1)


@pytest.mark.parametrize("options", [dict(n_pairs=2000, max_iter=1000),
                                     dict(n_pairs=20_000, resample=False)])
def test_subsampled_fit_is_reproducible_and_close_to_the_exact_fit(pima, pima_fits,
                                                                   options):
    X, y = pima
    exact = pima_fits["diagonal"]
    runs = [GaussianVB(X, y, family="diagonal", seed=0, **options).fit()
            for _ in range(2)]
    np.testing.assert_array_equal(runs[0].mean, runs[1].mean)
    res = runs[0]
    assert res.risk_sd is not None and 0 < res.risk_sd <= 0.5
    assert cosine(res.mean, exact.mean) > 0.999
    # the reported objective is exact: never below the exact optimum
    assert exact.objective - 1e-9 <= res.objective < exact.objective + 0.01


# ---------------------------------------------------------- input checks

@pytest.mark.parametrize("kwargs, match", [
    (dict(lam=0.0), "lam"),
    (dict(lam=-1.0), "lam"),
    (dict(prior_var=0.0), "prior_var"),
    (dict(prior_var=np.inf), "prior_var"),
    (dict(family="block"), "unknown family"),
    (dict(n_pairs=0), "n_pairs"),
    (dict(max_iter=0), "max_iter"),
])
def test_bad_arguments_raise_value_error_naming_the_problem(kwargs, match):
    X, y = toy_data()
    with pytest.raises(ValueError, match=match):
        GaussianVB(X, y, **kwargs)


def test_bad_data_is_rejected_by_the_common_validator():
    X, y = toy_data()
    with pytest.raises(ValueError, match="one class"):
        GaussianVB(X, np.ones_like(y))
    X = X.copy()
    X[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        GaussianVB(X, y)


# ---------------------------------------------------------- other methods

def test_vb_mean_direction_agrees_with_ep_and_smc_on_pima(pima):
    X, y = pima
    lam = 100.0
    vb = GaussianVB(X, y, lam=lam, family="full").fit()
    ep_res = EPLinear(X, y, lam, prior_var=1.0).fit()
    smc = run_smc(AUCGibbsModel(X, y, lam), n_particles=200, len_chain=10,
                  seed=1)

    assert cosine(vb.mean, ep_res.mean) > 0.99
    assert cosine(vb.mean, smc.mean) > 0.99
    # VB's lower bound sits below the two log Z approximations, and not far
    # (the SMC estimate of log Z has a Monte Carlo error of about 0.1 here)
    assert vb.elbo < ep_res.log_z < vb.elbo + 1.0
    assert vb.elbo - 0.5 < smc.log_z < vb.elbo + 1.0


@pytest.mark.parametrize("kwargs, fit_kwargs, message", [
    (dict(seed="a"), {}, "seed"),
    (dict(seed=-2), {}, "seed"),
    ({}, dict(init=np.full(3, np.nan)), "init must have mean and cov"),
    ({}, dict(init=type("R", (), {"mean": np.full(3, np.nan),
                                  "cov": np.eye(3)})()), "init.mean"),
    ({}, dict(init=type("R", (), {"mean": np.zeros(3),
                                  "cov": -np.eye(3)})()), "positive variances"),
])
def test_bad_vb_arguments_are_named(kwargs, fit_kwargs, message):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 3))
    y = X[:, 0] + rng.standard_normal(40) > 0
    with pytest.raises(ValueError, match=message):
        GaussianVB(X, y, 40.0, **kwargs).fit(**fit_kwargs)


def test_auto_pairs_keeps_all_pairs_below_the_threshold_and_samples_above():
    from pac_particles.approx.vb import (AUTO_PAIRS_ABOVE, AUTO_PAIRS_PER_POINT,
                                  auto_pairs)
    assert auto_pairs(100, 200) is None
    n_pos = AUTO_PAIRS_ABOVE // 1000 + 1
    assert auto_pairs(n_pos, 1000) == AUTO_PAIRS_PER_POINT * max(n_pos, 1000)
    X, y = noisy_linear(80, [1.0, -1.0, 0.5], 0)
    auto = GaussianVB(X, y, 40.0, family="diagonal", n_pairs="auto")
    assert auto.n_pairs is None
    np.testing.assert_array_equal(
        auto.fit().mean, GaussianVB(X, y, 40.0, family="diagonal").fit().mean)


def test_leave_one_out_scores_follow_exact_refits():
    """GaussianVB.loo_scores (one Newton step, S fixed) against refitting
    without each point (same standardisation, warm-started): the scores
    move the same way and the leave-one-out AUCs agree within 0.01, while
    the training AUC is optimistic."""
    from pac_particles.problem.auc import auc_risk
    rng = np.random.default_rng(0)
    n = 60
    X = rng.normal(size=(n, 3))
    y = X @ [1.0, -1.0, 0.5] + rng.normal(size=n) > 0
    vb = GaussianVB(X, y, lam=60.0, family="diagonal", tol=1e-9)
    fit = vb.fit()
    Xs = vb.data.X
    exact = np.empty(n)
    for i in range(n):
        keep = np.arange(n) != i
        refit = GaussianVB(Xs[keep], y[keep], lam=60.0, family="diagonal",
                           tol=1e-9, standardize=False).fit(init=fit)
        exact[i] = Xs[i] @ refit.mean
    loo, var = vb.loo_scores(return_var=True)
    full = Xs @ fit.mean
    assert np.corrcoef(loo - full, exact - full)[0, 1] > 0.95
    assert abs(vb.loo_auc() - (1 - auc_risk(exact, y))) < 0.01
    assert (1 - auc_risk(full, y)) > vb.loo_auc()
    assert np.all(var > 0)
    with pytest.raises(ValueError, match="all pairs"):
        sampled = GaussianVB(X, y, lam=60.0, n_pairs=500, resample=False,
                             seed=0)
        sampled.fit()
        sampled.loo_scores()


def _newton_loo_reference(Xs, y, m, var, lam, prior_var, assume_optimum):
    """Each point's score after one Newton step in ``m`` (``S = diag(var)``
    fixed) on the objective without that point's pairs, from ``m``, in
    plain numpy: ``Phi_ij = Phi(-t_ij)``, ``t_ij = d_ij . m / sd_ij``, each
    remaining pair weighted ``lam / P``. ``assume_optimum``: the step as if
    the whole objective's gradient at ``m`` were zero (the step for a
    converged fit only)."""
    pos, neg = np.flatnonzero(y), np.flatnonzero(~y)
    kappa = lam / (pos.size * neg.size)
    D = Xs[pos][:, None, :] - Xs[neg][None, :, :]
    sd = np.sqrt((D ** 2) @ var)
    t = (D @ m) / sd
    slope = -norm.pdf(t) / sd                 # d Phi(-t) / d mu
    curvature = t * norm.pdf(t) / sd ** 2     # d^2 Phi(-t) / d mu^2

    def grad_hess(keep):
        g = m / prior_var + kappa * np.einsum("ij,ijk->k", slope * keep, D)
        h = np.eye(m.size) / prior_var + kappa * np.einsum(
            "ij,ijk,ijl->kl", curvature * keep, D, D)
        return g, h

    g_all, _ = grad_hess(np.ones_like(t))
    scores = np.empty(len(y))
    for i in range(len(y)):
        keep = np.ones_like(t)
        if y[i]:
            keep[np.flatnonzero(pos == i)[0], :] = 0.0
        else:
            keep[:, np.flatnonzero(neg == i)[0]] = 0.0
        g, h = grad_hess(keep)
        if assume_optimum:
            g = g - g_all
        scores[i] = Xs[i] @ (m - np.linalg.solve(h, g))
    return scores


def test_leave_one_out_is_a_newton_step_from_an_unconverged_fit():
    """GaussianVB.loo_scores from a fit stopped after two L-BFGS iterations
    (gradient far from zero) against the Newton step on each point's
    leave-one-out objective formed in plain numpy; the step that assumes a
    zero gradient (right only at the optimum) is far from it."""
    X, y = noisy_linear(40, [1.0, -1.0, 0.5], 3)
    y = np.asarray(y, dtype=bool)
    vb = GaussianVB(X, y, lam=40.0, family="diagonal", max_iter=2)
    res = vb.fit()
    assert res.grad_norm > 1e-2
    Xs = vb.data.X
    newton = _newton_loo_reference(Xs, y, res.mean, np.diag(res.cov), 40.0,
                                   vb.prior_var, assume_optimum=False)
    at_optimum = _newton_loo_reference(Xs, y, res.mean, np.diag(res.cov),
                                       40.0, vb.prior_var,
                                       assume_optimum=True)
    loo = vb.loo_scores()
    np.testing.assert_allclose(loo, newton, rtol=1e-7, atol=1e-10)
    assert np.max(np.abs(at_optimum - newton)) > 1e-3


def test_leave_one_out_on_a_rank_deficient_design_equals_the_full_step():
    """The Newton step in the span of the inputs (a one-hot factor: 6 of 7
    columns) against the same step in all d coordinates, formed here."""
    from pac_particles.approx.loo import star_removal_scores
    rng = np.random.default_rng(5)
    n = 70
    level = rng.integers(0, 4, n)
    X = np.column_stack([rng.normal(size=(n, 3)), np.eye(4)[level]])
    y = X[:, 0] + 0.7 * (level == 1) + rng.normal(size=n) > 0
    for family in ("diagonal", "full"):
        vb = GaussianVB(X, y, lam=70.0, family=family, tol=1e-9)
        res = vb.fit()
        risk = vb._risk
        C = risk.ordered(vb.data.X)
        cov = res.cov if family == "full" else np.diag(res.cov)
        w, u, mu = vb._pairs.pair_terms(res.mean, cov)
        kappa = vb.lam / risk.n_pairs
        W = 2.0 * kappa * u
        H = W * mu - kappa * w
        lam_mat = C.T @ risk.gram_times(W, C) + np.eye(7) / vb.prior_var
        lam_mat = 0.5 * (lam_mat + lam_mat.T)
        mean, var = star_removal_scores(C, risk, W, H,
                                        np.linalg.cholesky(lam_mat),
                                        C.T @ risk.adjoint(H))
        loo_mean, loo_var = vb.loo_scores(return_var=True)
        np.testing.assert_allclose(loo_mean, mean[risk.inverse_order],
                                   rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(loo_var, var[risk.inverse_order],
                                   rtol=1e-9)


def test_pair_terms_are_the_probit_derivatives_of_each_pair():
    from pac_particles.problem.probit_risk import GaussianPairRisk
    rng = np.random.default_rng(1)
    Xp, Xn = rng.normal(size=(5, 3)), rng.normal(size=(7, 3))
    m, var = rng.normal(size=3), rng.random(3) + 0.1
    w, u, mu = GaussianPairRisk(Xp, Xn).pair_terms(m, var)
    D = Xp[:, None, :] - Xn[None, :, :]
    mean, v = D @ m, (D ** 2) @ var
    t = mean / np.sqrt(v)
    np.testing.assert_allclose(mu, mean, rtol=1e-12)
    np.testing.assert_allclose(w, -norm.pdf(t) / np.sqrt(v), rtol=1e-10)
    np.testing.assert_allclose(u, norm.pdf(t) * t / (2 * v), rtol=1e-10,
                               atol=1e-15)


def _logistic_rows(n, d=10, seed=0):
    from scipy.special import expit
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = rng.random(n) < expit(X @ rng.normal(size=d))
    return X, y


def test_stochastic_fit_on_fresh_pairs_reaches_the_all_pairs_optimum():
    """Adam on fresh pairs with the stopping rule (no max_iter) against
    L-BFGS on all P = n_pos n_neg pairs, lam = n = 2000, d = 10. The
    scores' direction is the U-statistic optimum's: the mean over three
    seeds is within 0.3 posterior standard deviations of the exact mean
    orthogonally to it (measured: about 0.1). Along the mean (the slow
    direction of the scale-invariant risk, where |m| and S trade off and
    only the KL pins them) it agrees within 10% in norm and standard
    deviations (measured: 4-5%), the objective within 0.1 nats."""
    X, y = _logistic_rows(2000)
    exact = GaussianVB(X, y, lam=2000.0, family="diagonal").fit()
    sd = np.sqrt(np.diag(exact.cov))
    unit = exact.mean / np.linalg.norm(exact.mean)
    fits = [GaussianVB(X, y, lam=2000.0, family="diagonal", n_pairs=10_000,
                       seed=seed).fit() for seed in range(3)]
    for fit in fits:
        assert fit.converged and "stopping rule" in fit.message
        assert fit.objective_se is None       # P = 1e6: exact objective
        assert exact.objective - 1e-9 <= fit.objective < exact.objective + 0.1
        np.testing.assert_allclose(np.sqrt(np.diag(fit.cov)), sd, rtol=0.1)
        assert np.linalg.norm(fit.mean) == pytest.approx(
            np.linalg.norm(exact.mean), rel=0.1)
    dm = np.mean([fit.mean for fit in fits], axis=0) - exact.mean
    assert np.linalg.norm(dm - (dm @ unit) * unit) < 0.3 * sd.min()


def test_auto_pairs_above_the_threshold_runs_adam_on_fresh_pairs():
    from pac_particles.approx.vb import AUTO_BATCH_PAIRS
    X, y = _logistic_rows(2100)       # P > AUTO_PAIRS_ABOVE
    vb = GaussianVB(X, y, lam=2100.0, family="diagonal", n_pairs="auto",
                    seed=0)
    assert vb.n_pairs == AUTO_BATCH_PAIRS and vb.resample
    fixed = GaussianVB(X, y, lam=2100.0, family="diagonal", n_pairs="auto",
                       resample=False)
    assert fixed.n_pairs == auto_pairs_of(fixed) and not fixed.resample


def test_the_auto_batch_grows_as_the_root_of_lam_above_a_million():
    from pac_particles.approx.vb import (AUTO_BATCH_LAM, AUTO_BATCH_PAIRS,
                                         auto_batch)
    assert auto_batch(10.0) == auto_batch(AUTO_BATCH_LAM) == AUTO_BATCH_PAIRS
    assert auto_batch(100 * AUTO_BATCH_LAM) == 10 * AUTO_BATCH_PAIRS
    X, y = _logistic_rows(2100)
    vb = GaussianVB(X, y, lam=4 * AUTO_BATCH_LAM, family="diagonal",
                    n_pairs="auto", seed=0)
    assert vb.n_pairs == 2 * AUTO_BATCH_PAIRS


def auto_pairs_of(vb):
    from pac_particles.approx.vb import auto_pairs
    return auto_pairs(vb.data.n_pos, vb.data.n_neg)


def test_estimated_objective_matches_the_exact_sum(monkeypatch):
    """Above EXACT_OBJECTIVE_PAIRS the objective is estimated (exact step
    risk of the mean plus sampled smoothing corrections): within four
    standard errors of the exact O(P) sum."""
    import pac_particles.approx.vb as vb_module
    from pac_particles.approx.variational import GaussianFamily
    monkeypatch.setattr(vb_module, "EXACT_OBJECTIVE_PAIRS", 100_000)
    X, y = _logistic_rows(2000)
    vb = GaussianVB(X, y, lam=2000.0, family="diagonal", n_pairs=10_000,
                    seed=1)
    res = vb.fit()
    assert res.objective_se is not None and res.objective_se > 0
    fam = GaussianFamily("diagonal", vb.data.d)
    x = fam.pack(res.mean, res.cov)
    exact, _, _, _ = fam.objective(x, vb.lam, vb.prior_var, vb._expected)
    assert abs(res.objective - exact) < 4 * res.objective_se


def test_minibatch_kernel_matches_the_pairs_formulas():
    from pac_particles.problem.probit_risk import GaussianPairRisk
    rng = np.random.default_rng(2)
    Xp, Xn = rng.normal(size=(6, 3)), rng.normal(size=(5, 3))
    Xn[0] = Xp[0]                                   # a tie
    m, var = rng.normal(size=3), rng.random(3) + 0.1
    ip, jn = rng.integers(6, size=400), rng.integers(5, size=400)
    ip[:3], jn[:3] = 0, 0
    D = Xp[ip] - Xn[jn]
    mu, v = D @ m, (D ** 2) @ var
    tie = np.all(D == 0, axis=1)
    t = np.where(tie, 0.0, mu / np.sqrt(np.where(tie, 1.0, v)))
    f = np.where(tie, 0.5, norm.cdf(-t))
    w = np.where(tie, 0.0, -norm.pdf(t) / np.sqrt(np.where(tie, 1.0, v)))
    u = np.where(tie, 0.0, norm.pdf(t) * t / (2 * np.where(tie, 1.0, v)))
    pairs = GaussianPairRisk(Xp, Xn)
    risk, g_m, g_cov, sd = pairs.sampled(ip, jn, m, var)
    np.testing.assert_allclose([risk, sd], [f.mean(), f.std()], rtol=1e-12)
    np.testing.assert_allclose(g_m, D.T @ w / 400, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(g_cov, u @ D ** 2 / 400, rtol=1e-10,
                               atol=1e-14)
    _, _, full, _ = pairs.sampled_full(ip, jn, m, var)
    np.testing.assert_allclose(full, (D * u[:, None]).T @ D / 400,
                               rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("family", ["isotropic", "diagonal", "full"])
def test_joint_rescaling_keeps_the_pair_risk_and_minimises_the_kl(family):
    """GaussianFamily.rescale: the pair risk depends on the normalised
    margins only, so scaling (m, S^(1/2)) jointly leaves it unchanged; the
    rescaled point minimises the KL along that ray (|m|^2 + tr S = d v)."""
    from pac_particles.approx.variational import GaussianFamily
    X, y = _logistic_rows(300)
    vb = GaussianVB(X, y, lam=300.0, family=family, prior_var=2.0)
    fam = GaussianFamily(family, vb.data.d)
    rng = np.random.default_rng(3)
    x = rng.normal(scale=0.3, size=fam.n_params)
    out = fam.rescale(x, 2.0)
    m, cov, _ = fam.unpack(out)
    trace = np.trace(cov) if cov.ndim == 2 else cov.sum()
    assert m @ m + trace == pytest.approx(vb.data.d * 2.0, rel=1e-12)
    value, _, risk, kl = fam.objective(x, vb.lam, 2.0, vb._expected)
    value_r, _, risk_r, kl_r = fam.objective(out, vb.lam, 2.0, vb._expected)
    assert risk_r == pytest.approx(risk, abs=1e-12)
    assert kl_r <= kl
    for c in (0.9, 1.1):                  # a minimum along the ray
        shifted = fam.rescale(out, 2.0 * c**2)   # scales by c
        _, _, _, kl_c = fam.objective(shifted, vb.lam, 2.0, vb._expected)
        assert kl_c > kl_r


def test_adam_with_max_iter_runs_exactly_that_many_steps():
    X, y = _logistic_rows(2000)
    res = GaussianVB(X, y, lam=2000.0, family="diagonal", n_pairs=10_000,
                     seed=0, max_iter=300).fit()
    assert res.n_iter == 300 and "last 150 iterates" in res.message



def test_estimated_gradient_in_windows_is_unbiased(monkeypatch):
    """Above EXACT_OBJECTIVE_PAIRS the reported gradient comes from batches
    of the data's source of pairs (here every class read in windows of its
    shuffled copy): over twenty seeds its mean is the exact O(P) gradient
    within four standard errors, at a fixed Gaussian."""
    import pac_particles.approx.vb as vb_module
    from pac_particles.approx.variational import GaussianFamily
    monkeypatch.setattr(vb_module, "EXACT_OBJECTIVE_PAIRS", 100_000)
    monkeypatch.setattr(vb_module, "AUTO_BATCH_PAIRS", 500)
    X, y = _logistic_rows(2000)
    vb = GaussianVB(X, y, lam=50.0, family="diagonal", n_pairs=500)
    fam = GaussianFamily("diagonal", vb.data.d)
    x = fam.pack(vb.data.mean_difference, np.full(vb.data.d, 0.05))
    _, exact, _, _ = fam.objective(x, vb.lam, vb.prior_var, vb._expected)
    draws = []
    for seed in range(20):
        vb.seed = seed
        draws.append(vb._final_objective(fam, x, vb.lam, vb.prior_var)[1])
    assert vb.data.__dict__["_shuffled"]          # windows were read
    draws = np.array(draws)
    se = draws.std(axis=0, ddof=1) / np.sqrt(len(draws))
    assert np.all(np.abs(draws.mean(axis=0) - exact) < 4 * se + 1e-12)


def test_reported_objective_is_computed_on_first_read_at_the_fits_lam():
    """The reported objective is left to its first read (a warm start reads
    only the mean and covariance): unread, the result still holds its
    ``report``; read after the fitter moved to another ``lam``, it is the
    objective at the fit's ``lam`` on all pairs (against the family's
    objective evaluated here directly); a pickle holds the values."""
    import pickle
    X, y = _logistic_rows(300, d=4)
    vb = GaussianVB(X, y, lam=40.0, family="diagonal")
    res = vb.fit()
    assert res.report is not None              # not computed yet
    fam = GaussianFamily("diagonal", vb.data.d)
    x = fam.pack(res.mean, np.diag(res.cov))
    want, grad, risk, kl = fam.objective(x, 40.0, vb.prior_var, vb._expected)
    vb.lam = 400.0                             # a later change of the fitter
    assert res.objective == pytest.approx(want, rel=1e-12)
    assert res.objective != pytest.approx(
        fam.objective(x, 400.0, vb.prior_var, vb._expected)[0], rel=1e-3)
    assert res.report is None                  # read once, the fitter let go
    assert (res.elbo, res.expected_risk, res.kl) == pytest.approx(
        (-want, risk, kl), rel=1e-12)
    assert res.grad_norm == pytest.approx(np.max(np.abs(grad)), rel=1e-9)
    unread = GaussianVB(X, y, lam=40.0, family="diagonal").fit()
    copy = pickle.loads(pickle.dumps(unread))
    assert copy.report is None and copy.objective == unread.objective


def test_minibatch_sums_are_the_same_bits_on_either_threads():
    """A minibatch below MIN_PARALLEL_BATCH_PAIRS is summed in
    BATCH_CHUNKS chunks whichever version runs, so the serial and the
    parallel version (and BatchThreads' choice between them) give the same
    bits; against a plain-numpy sum of the probit terms."""
    from scipy.special import ndtr
    from pac_particles.problem import probit_kernels as pk
    from pac_particles.problem.batch_threads import BatchThreads
    from tests.reference import assert_identical, serial_and_parallel
    rng = np.random.default_rng(4)
    X_pos, X_neg = rng.normal(size=(300, 6)), rng.normal(size=(500, 6))
    ip, jn = rng.integers(300, size=9000), rng.integers(500, size=9000)
    m, var = rng.normal(size=6), rng.uniform(0.1, 1.0, size=6)
    serial, in_parallel = serial_and_parallel(
        lambda: (pk.pair_batch_sums(ip, jn, X_pos, X_neg, m, var),))
    assert_identical(serial, in_parallel)
    chooser = BatchThreads()
    chosen = []
    for _ in range(8):           # both versions tried, then the faster
        acc = np.zeros((pk.BATCH_CHUNKS, serial[0].size))
        chooser.run(pk._pair_batch_serial, pk._pair_batch_parallel, ip.size,
                    ip, jn, X_pos, X_neg, m, var[None, :], pk._DIAGONAL,
                    True, False, pk._NO_SCORES, pk._NO_SCORES, acc)
        chosen.append(acc.sum(axis=0))
    assert np.all(np.isfinite(chooser.per_pair))
    assert_identical(tuple(chosen), (serial[0],) * len(chosen))
    D = X_pos[ip] - X_neg[jn]
    want = ndtr(-(D @ m) / np.sqrt((D * D) @ var)).sum()
    assert serial[0][0] == pytest.approx(want, rel=1e-12)
