"""Log Z by importance sampling: against quadrature, the Pareto tail shape
against known tails and ArviZ, the pooling of run_smc."""

import numpy as np
import pytest

from scipy import stats
from scipy.special import logsumexp
from scipy.stats import binom

from pac_particles.core.checks import InputError
from pac_particles.smc.importance_evidence import (
    DEFENSIVE_WEIGHT, gaussian_approximation, importance_log_z, log_z_lower_bound,
    mixture_draws, pareto_k, pareto_smooth, refine_log_z, reliable_k, smoothed_log_z_se, weighted_mean_se)
from pac_particles.smc.adaptive_importance import adaptive_importance_log_z
from pac_particles.smc.direction_weights import (RADIAL_SPREAD,
                                                 radially_resolved)
from pac_particles.smc.models import (AUCGibbsModel, ClassificationGibbsModel,
                                      GPAUCModel, linear_score_model)
from pac_particles.smc.posterior import run_smc
from pac_particles.problem.priors import SpikeSlabPrior, gaussian_prior
from lab.reference.quadrature import AngularQuadrature


def _data(n=40, d=2, seed=0, sep=1.0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = X @ np.linspace(1.0, 0.3, d) * sep + rng.standard_normal(n) > 0
    return X, y


@pytest.mark.parametrize("seed, lam", [(0, 40.0), (1, 120.0)])
def test_log_z_matches_quadrature_in_two_dimensions(seed, lam):
    X, y = _data(seed=seed)
    model = AUCGibbsModel(X, y, lam=lam, standardize=False)
    exact = AngularQuadrature(X, y, lam)
    post = run_smc(model, n_particles=100, len_chain=5, seed=seed,
                   evidence="tempering")
    est = refine_log_z(model, post.theta, post.weights, n_draws=4000,
                       seed=seed)
    assert est.reliable and est.proposal == "ep+particles"
    assert abs(est.log_z - exact.log_z) < 4 * est.log_z_se + 1e-3
    # the self-normalised draws are a sample of the posterior
    post_mean = est.weights @ est.theta
    np.testing.assert_allclose(post_mean, exact.mean, atol=0.1)


def test_log_z_is_unbiased_from_a_poor_proposal_and_flagged_when_bad():
    X, y = _data(seed=2)
    model = AUCGibbsModel(X, y, lam=80.0, standardize=False)
    exact = AngularQuadrature(X, y, 80.0)
    # the prior as proposal: valid, a wider error bar
    est = importance_log_z(model, np.zeros(2), np.eye(2), n_draws=20000, seed=0)
    assert abs(est.log_z - exact.log_z) < 4 * est.log_z_se + 1e-3
    # a narrow proposal far from the posterior: its weights' tail says so
    mean, _ = gaussian_approximation(model)
    bad = importance_log_z(model, -3 * mean, 0.01 * np.eye(2), n_draws=2000,
                           seed=0, directions=False)
    assert not bad.reliable and bad.pareto_k > reliable_k(2000)


def test_direction_weights_stay_exact_from_a_proposal_far_from_the_posterior():
    """Weighting directions, the defensive component is the prior: the
    weights are bounded by 1 / a, so a proposal pointing away from the
    posterior still gives log Z, from the prior's share of the draws."""
    X, y = _data(seed=2)
    model = AUCGibbsModel(X, y, lam=80.0, standardize=False)
    exact = AngularQuadrature(X, y, 80.0)
    mean, _ = gaussian_approximation(model)
    bad = importance_log_z(model, -3 * mean, 0.01 * np.eye(2), n_draws=4000,
                           seed=0)
    # w(u) = exp(-lam r_n(u)) p_u(u) / q_u(u) <= 1 / a, as q_u >= a p_u
    assert np.max(bad.log_weights) <= -np.log(DEFENSIVE_WEIGHT) + 1e-9
    assert abs(bad.log_z - exact.log_z) < 4 * bad.log_z_se + 1e-3


def test_zero_one_classification_log_z_matches_quadrature():
    X, y = _data(n=50, seed=3)
    model = ClassificationGibbsModel(X, y, lam=50.0, fit_intercept=False,
                                     standardize=False)
    exact = AngularQuadrature(X, y, 50.0, margins="points")
    mean, cov = gaussian_approximation(model)
    est = importance_log_z(model, mean, cov, n_draws=4000, seed=1)
    assert est.reliable
    assert abs(est.log_z - exact.log_z) < 4 * est.log_z_se + 1e-3


def test_non_isotropic_prior_is_whitened():
    """Under N(0, diag(v)) the AUC posterior of theta is that of
    sqrt(v) * theta' under N(0, I) on the rescaled inputs: same log Z."""
    X, y = _data(seed=4)
    v = np.array([4.0, 0.25])
    model = AUCGibbsModel(X, y, lam=60.0, prior=gaussian_prior(2, v),
                          standardize=False)
    exact = AngularQuadrature(X * np.sqrt(v), y, 60.0)
    mean, cov = gaussian_approximation(model)
    est = importance_log_z(model, mean, cov, n_draws=4000, seed=2)
    assert abs(est.log_z - exact.log_z) < 4 * est.log_z_se + 1e-3


def test_run_smc_reports_the_importance_estimate_and_pools_its_draws():
    X, y = _data(seed=5)
    model = AUCGibbsModel(X, y, lam=60.0, standardize=False)
    exact = AngularQuadrature(X, y, 60.0)
    # tempering from the prior, then importance sampling (the default
    # start goes to the importance draws alone where q is good); 1000
    # draws: the tail of 250 direction weights (bounded, clustered in d = 2)
    # is too short for a stable Pareto fit
    post = run_smc(model, n_particles=50, len_chain=5, seed=0, start="prior",
                   evidence_draws=1000)
    imp = post.importance
    assert imp is not None and imp.reliable and imp.n_draws == 1000
    assert post.log_z == imp.log_z and post.log_z_se == imp.log_z_se
    assert post.log_z_tempering == post.log_z_path[-1]
    assert abs(post.log_z - exact.log_z) < 4 * post.log_z_se + 1e-3
    # pooled: particles then draws, weights a convex combination
    assert post.theta.shape == (1250, 2) and post.risks.shape == (1250,)
    assert np.isclose(post.weights.sum(), 1.0)
    alpha = post.weights[:250].sum()
    assert 0.0 < alpha < 1.0
    np.testing.assert_allclose(post.weights[250:], (1 - alpha) * imp.weights)
    np.testing.assert_allclose(post.risks[250:],
                               model.risk(post.theta[250:]), atol=1e-12)
    np.testing.assert_allclose(post.mean, exact.mean, atol=0.15)
    # the same seed gives the same run, importance draws included
    again = run_smc(model, n_particles=50, len_chain=5, seed=0, start="prior",
                    evidence_draws=1000)
    assert again.log_z == pytest.approx(post.log_z, rel=1e-12)


def test_tempering_evidence_is_the_run_alone():
    X, y = _data(seed=6)
    model = AUCGibbsModel(X, y, lam=60.0, standardize=False)
    post = run_smc(model, n_particles=50, len_chain=5, seed=1,
                   evidence="tempering")
    assert post.importance is None and post.log_z_tempering is None
    assert post.log_z == post.log_z_path[-1]
    assert post.theta.shape == (250, 2)


def test_an_unreliable_estimate_leaves_the_run_alone():
    X, y = _data(seed=7)
    model = AUCGibbsModel(X, y, lam=60.0, standardize=False)
    post = run_smc(model, n_particles=50, len_chain=5, seed=1,
                   evidence="tempering")
    bad = importance_log_z(model, np.array([-5.0, 5.0]), 1e-4 * np.eye(2),
                           n_draws=200, seed=0)
    kept = post.with_importance(bad)
    assert not bad.reliable and kept.importance is bad
    assert kept.log_z == post.log_z and kept.log_z_tempering == post.log_z
    # its draws join with weight 0: every run of a model has N + S rows
    assert kept.theta.shape == (250 + 200, 2)
    assert np.all(kept.weights[250:] == 0)
    np.testing.assert_allclose(kept.mean, post.mean)
    np.testing.assert_allclose(kept.bayes_point_se, post.bayes_point_se)


def test_gp_model_uses_ep_and_agrees_with_a_long_tempering_run():
    X, y = _data(n=30, d=3, seed=8)
    model = GPAUCModel(X, y, lam=30.0)
    long = run_smc(model, n_particles=300, len_chain=10, seed=3,
                   evidence="tempering")
    est = refine_log_z(model, long.theta, long.weights, n_draws=4000, seed=0)
    assert est.proposal == "ep+particles" and est.reliable   # 3000 >= 20 x 30
    few = refine_log_z(model, long.theta[:500], np.full(500, 1 / 500),
                       n_draws=4000, seed=0)
    assert few.proposal == "ep" and few.reliable             # 500 < 20 x 30
    assert abs(few.log_z - est.log_z) < 4 * np.hypot(few.log_z_se,
                                                    est.log_z_se)
    se = np.hypot(est.log_z_se, long.log_z_se)
    assert abs(est.log_z - long.log_z) < 4 * se + 0.05


def test_without_ep_the_particles_fit_is_the_proposal():
    X, y = _data(seed=9)
    model = ClassificationGibbsModel(X, y, lam=40.0, loss="hinge")
    assert gaussian_approximation(model) is None
    post = run_smc(model, n_particles=50, len_chain=5, seed=0)
    assert post.importance is not None
    assert post.importance.proposal == "particles"


def test_spike_and_slab_keeps_the_tempering_estimate():
    X, y = _data(seed=10, d=3)
    model = AUCGibbsModel(X, y, lam=30.0, prior=SpikeSlabPrior(3, p=0.5))
    assert gaussian_approximation(model) is None
    assert refine_log_z(model, None, None, n_draws=100) is None
    post = run_smc(model, n_particles=30, len_chain=4, seed=0)
    assert post.importance is None and post.log_z == post.log_z_path[-1]


@pytest.mark.parametrize("shape", [0.2, 0.5, 0.9])
def test_pareto_k_recovers_the_tail_shape(shape):
    """Weights ``U^-shape`` have a Pareto tail of shape ``shape``."""
    rng = np.random.default_rng(0)
    log_w = -shape * np.log(rng.uniform(size=20000))
    assert abs(pareto_k(log_w) - shape) < 0.1


def test_pareto_smoothing_matches_arviz():
    """Tail shape and smoothed weights against ArviZ's psislw, also with
    ties at the cut and few draws."""
    az = pytest.importorskip("arviz")
    rng = np.random.default_rng(1)
    cases = [sigma * rng.standard_normal(size)
             for sigma in (0.5, 1.5, 3.0) for size in (60, 3000)]
    cases.append(np.round(rng.standard_normal(2000), 1))      # ties
    cases.append(-0.8 * np.log(rng.uniform(size=500)))          # k = 0.8
    for log_w in cases:
        smoothed, k = pareto_smooth(log_w)
        ref, ref_k = az.psislw(log_w.copy(), reff=1.0)
        assert abs(k - float(ref_k)) < 1e-6
        # tied weights may take each other's order statistics: compare
        # the sorted values
        np.testing.assert_allclose(np.sort(smoothed - logsumexp(smoothed)),
                                   np.sort(ref), atol=1e-8)
        assert pareto_k(log_w) == k


def test_pareto_k_of_light_and_short_tails():
    rng = np.random.default_rng(2)
    assert pareto_k(0.1 * rng.standard_normal(2000)) < 0.3
    assert pareto_k(np.zeros(20)) == float("inf")      # flat tail
    assert pareto_k(rng.standard_normal(8)) == float("inf")   # tail of 2
    assert reliable_k(2000) == pytest.approx(1 - 1 / np.log10(2000))
    assert reliable_k(10 ** 6) == 0.7


def test_weighted_mean_se_with_equal_weights_is_the_iid_formula():
    rng = np.random.default_rng(3)
    f = rng.standard_normal((500, 2))
    se = weighted_mean_se(f, np.full(500, 1 / 500))
    np.testing.assert_allclose(se, f.std(axis=0) / np.sqrt(500))


def test_bad_input_is_refused_with_a_named_error():
    X, y = _data(seed=11)
    model = AUCGibbsModel(X, y, lam=10.0)
    with pytest.raises(InputError, match="shape"):
        importance_log_z(model, np.zeros(3), np.eye(2))
    with pytest.raises(InputError, match="positive definite"):
        importance_log_z(model, np.zeros(2), -np.eye(2))
    with pytest.raises(InputError, match="NaN"):
        importance_log_z(model, np.array([np.nan, 0.0]), np.eye(2))
    with pytest.raises(InputError, match="n_draws"):
        importance_log_z(model, np.zeros(2), np.eye(2), n_draws=3)
    with pytest.raises(InputError, match="evidence"):
        run_smc(model, n_particles=10, len_chain=3, evidence="bridge")
    with pytest.raises(InputError, match="evidence_draws"):
        run_smc(model, n_particles=10, len_chain=3, evidence_draws=0)
    with pytest.raises(InputError, match="NaN"):
        pareto_k(np.array([0.0, np.inf, 1.0]))
    w = np.full(5, 0.2)
    with pytest.raises(InputError, match="shape"):
        refine_log_z(model, np.zeros((5, 3)), w, n_draws=100)
    with pytest.raises(InputError, match="match the weights"):
        refine_log_z(model, np.zeros((4, 2)), w, n_draws=100)
    with pytest.raises(InputError, match="sum to 1"):
        weighted_mean_se(np.zeros((5, 2)), np.ones(5))
    with pytest.raises(InputError, match="NaN"):
        weighted_mean_se(np.array([0.0, np.nan, 1, 2, 3]), w)
    ss = AUCGibbsModel(X, y, lam=10.0, prior=SpikeSlabPrior(2, p=0.5))
    with pytest.raises(InputError, match="centred Gaussian prior"):
        importance_log_z(ss, np.zeros(2), np.eye(2))


def test_estimator_refines_the_evidence_at_the_certified_step_only():
    """lam='cv': the path refit keeps its tempering estimate, and the
    chosen step gets the importance-sampling one (log_evidence_)."""
    from pac_particles.sklearn.estimator import PACBayesAUC
    X, y = _data(n=80, d=3, seed=12)
    est = PACBayesAUC(method="smc", lam="cv", n_folds=2, grid_size=6,
                      n_particles=30, len_chain=10, random_state=0,
                      n_jobs=1).fit(X, y)
    post = est.posterior_
    imp = post.importance
    assert imp is not None and imp.n_draws == 300
    assert post.theta.shape[0] == 600 and np.isclose(post.weights.sum(), 1.0)
    assert est.log_evidence_ == post.log_z
    assert post.log_z == (imp.log_z if imp.reliable else post.log_z_tempering)
    assert est.log_evidence_se_ == post.log_z_se
    # the path refit kept its tempering estimate (no draws at lam_max)
    assert est.cv_.posterior.importance is None
    assert est.cv_.posterior.n_particles == est.cv_.posterior.theta.shape[0]


def test_score_space_is_refined_in_the_span_and_small_runs_keep_tempering():
    """A linear model with d > n samples in the span of the design (rank
    n - 1 once the columns are centred): a full-rank linear model there,
    so the importance estimate applies and agrees with the tempering one
    (the earlier score-space form, with a singular prior factorised by
    rounding, gave weights biased by 3-5 standard errors). Below
    MIN_DRAWS draws the tempering estimate is kept."""
    rng = np.random.default_rng(13)
    X = rng.standard_normal((30, 80))
    y = X[:, 0] + rng.standard_normal(30) > 0
    model = linear_score_model(X, y, 30.0)
    assert model.space == "score" and model.rank == 29
    post = run_smc(model, n_particles=400, len_chain=10, seed=1,
                   start="prior")
    assert post.importance is not None and post.importance.reliable
    gap = post.log_z - post.log_z_tempering
    assert abs(gap) < 4 * np.hypot(post.log_z_se, post.log_z_tempering_se)
    # the default (EP's q in the span) agrees with the tempering estimate
    default = run_smc(model, n_particles=400, len_chain=10, seed=1)
    assert default.start in ("importance", "gaussian")
    gap = default.log_z - post.log_z_tempering
    assert abs(gap) < 4 * np.hypot(default.log_z_se, post.log_z_tempering_se)
    X2, y2 = _data(seed=14)
    small = run_smc(AUCGibbsModel(X2, y2, lam=20.0), n_particles=4,
                    len_chain=2, seed=0)
    assert small.importance is None and small.n_particles == 8


def test_an_earlier_step_does_not_carry_the_final_evidence():
    X, y = _data(seed=15)
    model = AUCGibbsModel(X, y, lam=60.0, standardize=False)
    post = run_smc(model, n_particles=50, len_chain=5, seed=0,
                   keep_steps=True)
    assert post.importance is not None
    step = post.at_step(1)
    assert step.importance is None and step.log_z_tempering is None
    assert step.log_z == post.log_z_path[1]
    assert step.n_particles == step.theta.shape[0] == 250


def test_mixture_draws_and_density_against_scipy():
    """The proposal's draws and log density: two Gaussians and a t of
    another scale, against scipy's densities and moments."""
    rng = np.random.default_rng(16)
    m1, m2 = np.array([1.0, -1.0]), np.array([0.5, 0.0])
    S1 = np.array([[1.0, 0.3], [0.3, 0.5]])
    S2, W = 0.3 * np.eye(2), np.array([[3.0, -0.5], [-0.5, 2.0]])
    comps = [(m1, S1, None), (m2, S2, None), (m1, W, 4.0)]
    weights = [0.45, 0.45, 0.1]
    theta, log_q = mixture_draws(comps, weights, 20000, rng)
    ref = np.log(0.45 * stats.multivariate_normal(m1, S1).pdf(theta)
                 + 0.45 * stats.multivariate_normal(m2, S2).pdf(theta)
                 + 0.1 * stats.multivariate_t(m1, W, df=4).pdf(theta))
    np.testing.assert_allclose(log_q, ref, rtol=1e-10)
    mean = 0.45 * m1 + 0.45 * m2 + 0.1 * m1
    np.testing.assert_allclose(theta.mean(axis=0), mean, atol=0.05)


# ------------------------------------------- certificates: raw weights

def test_raw_weights_are_kept_and_unbiased_for_z():
    """The raw log weights of the draws are kept (the smoothed estimate is
    biased: its largest weights shrink); their mean matches quadrature."""
    X, y = _data(seed=2)
    model = AUCGibbsModel(X, y, lam=80.0, standardize=False)
    exact = AngularQuadrature(X, y, 80.0)
    # theta's own weights: those of directions from the prior as proposal
    # are the discrete exp(-lam R_n), whose ties smoothing may raise
    est = importance_log_z(model, np.zeros(2), np.eye(2), n_draws=20000,
                           seed=0, directions=False)
    raw = est.log_weights
    assert raw.shape == (20000,)
    w = np.exp(raw - exact.log_z)
    # E[w] = 1 exactly: the raw mean within 4 of its standard errors
    assert abs(w.mean() - 1.0) < 4 * w.std() / np.sqrt(w.size)
    # smoothing only lowers weights: the reported estimate is at most the raw
    assert est.log_z <= logsumexp(raw) - np.log(raw.size) + 1e-12


@pytest.mark.parametrize("shape", [0.2, 0.9])
def test_log_z_lower_bound_fails_at_most_at_its_level(shape):
    """Markov on products of batch means needs only E[w] = Z: over 2000
    samples of S = 640 weights (Pareto tails of shape 0.2 and 0.9, the
    latter of infinite variance), the bound at delta = 0.1 exceeds log Z in
    at most 10% of them (Clopper-Pearson slack) and is never far below."""
    rng = np.random.default_rng(21)
    log_z = -np.log1p(-shape)        # E[U^-k] = 1 / (1 - k)
    bounds = np.array([log_z_lower_bound(-shape * np.log(rng.uniform(size=640)),
                                         0.1) for _ in range(2000)])
    failures = np.sum(bounds > log_z)
    assert failures <= binom.ppf(0.999, 2000, 0.1)
    assert np.median(log_z - bounds) < (0.3 if shape < 0.5 else 1.5)


def test_log_z_lower_bound_of_run_smc_is_below_quadrature():
    """In d = 2: the run's lower confidence bound on log Z (its raw
    importance weights) is below the exact log Z and close to it. The
    bound's slack is mostly the price log(K / delta) / M of its M batches:
    2000 draws (64 batches) keep it near 0.1-0.15 over seeds, where the
    default 500 (16 batches) left 0.33-0.56 and "within 0.5" to chance."""
    X, y = _data(seed=1)
    model = AUCGibbsModel(X, y, lam=120.0, standardize=False)
    exact = AngularQuadrature(X, y, 120.0)
    post = run_smc(model, n_particles=100, len_chain=5, seed=1,
                   evidence_draws=2000)
    low, how = post.log_z_lower_bound(0.005)
    assert exact.log_z - 0.5 < low < exact.log_z
    assert "raw importance weights" in how
    # the choice among the rounds' draws is paid: delta / 4 on the weights
    from pac_particles.smc.result import IMPORTANCE_CANDIDATES
    assert IMPORTANCE_CANDIDATES == 4 and "union over the 4" in how
    assert low == pytest.approx(max(min(log_z_lower_bound(
        post.importance.log_weights, 0.005 / 4), 0.0), -post.lam))
    # without draws: the tempering estimate's Markov bound, log(1/delta) below
    tempering = run_smc(model, n_particles=100, len_chain=5, seed=1,
                        evidence="tempering")
    low_t, how_t = tempering.log_z_lower_bound(0.005)
    assert low_t == pytest.approx(tempering.log_z - np.log(200.0))
    assert "tempering" in how_t and low_t < exact.log_z


def _widened(se, k, s):
    """The wrong variant: ``se`` widened by ``S^((1 - r) / 2)`` for ``k >
    0.5``, ``r`` the relative convergence rate of [VSGY24, App. B]."""
    if not k > 0.5:
        return se
    r = ((2 * (k - 1) * s ** (2 * k + 1) + (1 - 2 * k) * s ** (2 * k) + s * s)
         / ((s - 1) * (s - s ** (2 * k))))
    return se * s ** ((1 - min(max(r, 0.0), 1.0)) / 2)


def test_standard_errors_match_the_spread_of_smoothed_estimates():
    """Calibration, for weights whose raw variance is infinite (Pareto of
    shape 0.6, 300 samplers of 2000 draws): the spread over samplers of
    the smoothed log Z, and of a self-normalised mean, over the mean
    reported standard error (the delta method on the smoothed weights) is
    within [0.8, 1.25]; the rule that widens it for k > 0.5 by
    S^((1 - r) / 2) gives error bars about four times too wide."""
    rng = np.random.default_rng(0)
    s, shape = 2000, 0.6
    log_z, se, widened, means, mean_se = [], [], [], [], []
    for _ in range(300):
        raw = -shape * np.log(rng.uniform(size=s))
        lw, k = pareto_smooth(raw)
        log_z.append(logsumexp(lw) - np.log(s))
        se.append(smoothed_log_z_se(lw))
        widened.append(_widened(se[-1], k, s))
        w = np.exp(lw - lw.max())
        x = rng.standard_normal(s)
        means.append(w @ x / w.sum())
        mean_se.append(weighted_mean_se(x, w / w.sum()))
    spread = np.std(log_z, ddof=1)
    assert 0.8 <= spread / np.mean(se) <= 1.25
    assert 0.8 <= np.std(means, ddof=1) / np.mean(mean_se) <= 1.25
    assert spread / np.mean(widened) < 0.5
    # light tails: the delta method on weights that smoothing leaves alone
    lw, k = pareto_smooth(rng.normal(size=s) * 0.3)
    w = np.exp(lw - lw.max())
    assert k < 0.5 and smoothed_log_z_se(lw) == pytest.approx(
        np.std(w) / (np.mean(w) * np.sqrt(s)))


# --------------------------------------------- adaptive importance sampling

def _two_d():
    from builders import two_d_problem
    X, y = two_d_problem()
    model = AUCGibbsModel(X, y, lam=float(len(y)), standardize=False)
    return model, AngularQuadrature(X, y, model.lam)


def _poor_q(model, rotation=0.8, variance=0.02):
    """EP's mean rotated by ``rotation`` radians with a narrow isotropic
    covariance: its weights are far too heavy-tailed (k of 6 here)."""
    mean, _ = gaussian_approximation(model)
    angle = np.arctan2(mean[1], mean[0]) + rotation
    return (np.linalg.norm(mean) * np.array([np.cos(angle), np.sin(angle)]),
            variance * np.eye(2))


def _assert_matches(est, exact):
    assert abs(est.log_z - exact.log_z) < 4 * est.log_z_se + 0.005


def test_adaptive_importance_refits_a_poor_q_and_matches_quadrature():
    """A pilot whose tail fails is refitted to its weighted draws, and the
    fresh draws of the refitted Gaussian (alone) give log Z: exact."""
    model, exact = _two_d()
    mean, cov = _poor_q(model)
    for seed in range(3):
        pilot = importance_log_z(model, mean, cov, 2000, seed=seed)
        assert pilot.pareto_k > reliable_k(2000)
        est = adaptive_importance_log_z(model, mean, cov, 2000, seed=seed)
        assert est.rounds == 1 and est.earlier_draws == 2000
        assert est.reliable and est.n_draws == 2000
        assert est.proposal == "ep, refitted"
        _assert_matches(est, exact)
        # the refitted Gaussian points at the posterior
        direction = est.mean / np.linalg.norm(est.mean)
        target = exact.mean / np.linalg.norm(exact.mean)
        assert direction @ target > 0.99
    # a good q is used as it is: the first round is importance_log_z's
    mean, cov = gaussian_approximation(model)
    first = adaptive_importance_log_z(model, mean, cov, 2000, seed=4)
    plain = importance_log_z(model, mean, cov, 2000, seed=4)
    assert first.rounds == 0 and first.log_z == plain.log_z


def test_run_smc_refits_a_poor_start_and_counts_every_round(monkeypatch):
    model, exact = _two_d()
    poor = _poor_q(model)
    monkeypatch.setattr("pac_particles.smc.posterior.bridge_approximation",
                        lambda model, seed=0: (*poor, "vb"))
    # the refit alone (no scouting run from the prior beside it)
    post = run_smc(model, n_particles=100, len_chain=20, seed=0, scout=False)
    assert post.start == "importance" and post.importance.rounds == 1
    # the pilot's draws are paid for, not used
    assert post.n_risk_evaluations == 4000
    assert post.theta.shape == (2000, 2)
    assert abs(post.log_z - exact.log_z) < 4 * post.log_z_se + 0.005


def test_refitted_draws_weighed_against_the_pilots_q_fail_quadrature(
        monkeypatch):
    """The wrong variant: draws from the refitted Gaussian weighed as if
    the pilot's proposal had drawn them (its density kept)."""
    from pac_particles.smc import importance_evidence
    first = []
    weigh = importance_evidence.direction_log_weights

    def with_the_pilots_density(L, theta, loglik, components, shares):
        first.append((components, shares))
        return weigh(L, theta, loglik, *first[0])

    monkeypatch.setattr(importance_evidence, "direction_log_weights",
                        with_the_pilots_density)
    model, exact = _two_d()
    est = adaptive_importance_log_z(model, *_poor_q(model), 2000, seed=0)
    assert est.rounds == 1
    with pytest.raises(AssertionError):
        _assert_matches(est, exact)


def test_a_gaussian_on_the_sphere_is_exact_widened_or_not(
        monkeypatch):
    """VB's Gaussians sit on the sphere ``|m|^2 + tr S = d`` with a tiny
    radial spread, which the one trapezoid rule of the direction density
    did not resolve (log Z 5 nats off while the weights' tail passed):
    widened, and unwidened with the narrow peak's own rule
    (``test_direction_density_of_a_gaussian_narrow_along_its_mean`` in
    test_gaussian_bridge.py rejects the one rule), both are exact."""
    from pac_particles.smc import importance_evidence
    model, exact = _two_d()
    mean, cov = gaussian_approximation(model)
    u = mean / np.linalg.norm(mean)
    t = np.array([-u[1], u[0]])
    sphere_mean = np.sqrt(2.0) * u
    sphere_cov = (2.0 * (t @ cov @ t) / (mean @ mean) * np.outer(t, t)
                  + 1e-6 * np.outer(u, u))
    widened = radially_resolved(sphere_mean, sphere_cov, np.eye(2))
    assert u @ widened @ u == pytest.approx(
        (RADIAL_SPREAD * np.sqrt(2.0) / 2) ** 2)
    assert t @ widened @ t == pytest.approx(t @ sphere_cov @ t)
    # a Gaussian with the prior's radial spread is left as it is
    np.testing.assert_array_equal(radially_resolved(
        sphere_mean, 0.5 * np.eye(2), np.eye(2)), 0.5 * np.eye(2))
    est = importance_log_z(model, sphere_mean, sphere_cov, 2000, seed=0)
    assert est.reliable
    _assert_matches(est, exact)
    monkeypatch.setattr(importance_evidence, "radially_resolved",
                        lambda mean, cov, L: cov)
    unwidened = importance_log_z(model, sphere_mean, sphere_cov, 2000, seed=0)
    assert unwidened.reliable
    _assert_matches(unwidened, exact)
