"""EP on listed margins: the 0-1 classification posterior (one site per
point) and the incomplete AUC U-statistic (sampled pairs).

References independent of the module: the exact d = 2 posterior by angular
quadrature, long SMC runs of ClassificationGibbsModel, the full pair-grid EP
(a different kernel) on the list of every pair, dense star removal written
out site by site, and Monte Carlo for the variance of the incomplete
U-statistic.
"""

import warnings

import numpy as np
import pytest
from scipy import linalg, stats
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import cross_val_score

from pac_particles.core.checks import InputError
from pac_particles.sklearn.classifier import PACBayesClassifier
from pac_particles.approx.ep import EPClassification, EPConvergenceWarning, EPLinear
from pac_particles.approx.ep.base import lam_path_scores
from pac_particles.smc.models import ClassificationGibbsModel
from pac_particles.smc.posterior import run_smc
from pac_particles.problem.risks import SampledAUCRisk
from pac_particles.sklearn.selection import loo_lambda

from builders import two_blobs, two_d_problem, every_pair
from lab.reference.quadrature import AngularQuadrature
from reference import assert_identical, serial_and_parallel


# ------------------------------------------------- 0-1 classification


# (seed, n, lam / n). Measured on 24 designs (seeds 0-3 x n in {40, 120} x
# lam / n in {0.25, 0.5, 1}): mean direction within 2.8 degrees of the exact
# one, mean norm 2-8% too long, log Z off by -0.34 to +0.13 nat, generalised
# eigenvalues of (EP cov, exact cov) in 0.29-1.32 (the radial variance
# 0.42-0.84 of the exact one): the profile of the AUC pair sites (see
# test_ep.py), for the same reason (the sites are scale-free, the radius
# keeps the prior's Rayleigh law). At kappa = lam / n = 1 parallel EP may
# stop short of tol (3 of 8 designs); at kappa >= 2 it collapses, and says so.
POINT_CASES = [(3, 40, 0.25), (3, 40, 1.0), (3, 120, 0.25), (3, 120, 0.5),
               (1, 120, 1.0)]


@pytest.mark.parametrize("seed, n, lam_ratio", POINT_CASES)
def test_classification_matches_quadrature_in_d2(seed, n, lam_ratio):
    """Without intercept nor scaling the 0-1 posterior of d = 2 is exact by
    quadrature [the reference of ClassificationGibbsModel's SMC test]."""
    X, y = two_d_problem(n=n, seed=seed)
    lam = lam_ratio * n
    exact = AngularQuadrature(X, y, lam, margins="points")
    res = EPClassification(X, y, lam=lam, fit_intercept=False,
                           standardize=False, tol=1e-4,
                           max_sweeps=3000).fit()
    assert res.converged and not res.degenerate
    cos = exact.mean @ res.mean / np.linalg.norm(exact.mean) \
        / np.linalg.norm(res.mean)
    assert np.degrees(np.arccos(min(cos, 1.0))) < 3.0
    assert 1.0 < np.linalg.norm(res.mean) / np.linalg.norm(exact.mean) < 1.1
    assert -0.35 < res.log_z - exact.log_z < 0.1
    assert res.scale_identity == pytest.approx(1.0, abs=1e-2)
    ev = linalg.eigh(res.cov, exact.cov, eigvals_only=True)
    assert 0.25 < ev.min() and ev.max() < 1.35


def test_classification_matches_long_smc_with_intercept():
    """d = 2 plus an intercept, lam = n / 2: EP's mean within 0.1 of the mean
    of three long SMC runs (posterior sd about 0.5) and log Z within 0.3
    (measured 0.06 and 0.2)."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(100, 2))
    y = (X @ [1.0, -0.7] + 0.3 + 0.8 * rng.normal(size=100) > 0).astype(int)
    res = EPClassification(X, y, lam=50.0).fit()
    model = ClassificationGibbsModel(X, y, lam=50.0)
    posts = [run_smc(model, n_particles=1000, len_chain=10, seed=s)
             for s in range(3)]
    smc_mean = np.mean([p.mean for p in posts], axis=0)
    smc_log_z = np.mean([p.log_z for p in posts])
    assert res.converged
    np.testing.assert_allclose(res.mean, smc_mean, atol=0.1)
    assert abs(res.log_z - smc_log_z) < 0.3


def test_classification_failure_at_large_lam_is_reported():
    """kappa = lam / n = 4 on data no direction separates: EP collapses
    along the scale, and says so."""
    X, y = two_d_problem(n=120)
    with pytest.warns(EPConvergenceWarning, match="degenerate"):
        res = EPClassification(X, y, lam=480.0, fit_intercept=False,
                               standardize=False).fit()
    assert res.degenerate and not res.converged and np.isnan(res.log_z)


def test_point_loo_is_the_cavity_of_the_point_site():
    """Removing point i's one site: the LOO marginal of s_i is its cavity
    ``(1/v - W_i, m/v - y_i H_i)`` in closed form."""
    X, y = two_blobs(50, 3, seed=5)
    ep = EPClassification(X, y, lam=30.0, tol=1e-8)
    res = ep.fit()
    mean, var = ep.loo_scores(return_var=True)
    sign = np.where(y == 1, 1.0, -1.0)
    tau_c = 1.0 / res.score_var - res.site_precision
    nu_c = res.score_mean / res.score_var - sign * res.site_shift
    np.testing.assert_allclose(mean, nu_c / tau_c, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(var, 1.0 / tau_c, rtol=1e-8)
    proba = ep.loo_proba()
    assert ep.loo_accuracy() == pytest.approx(
        np.mean((proba > 0.5) == (y == 1)))


def test_classification_pu_weights_are_per_site_kappa():
    """PU labels: per-point ``kappa_i = lam w_i`` (two values) reach a fixed
    point; with pu_prior the expected accuracy estimate stays in [0, 1]."""
    X, y = two_blobs(80, 2, seed=6)
    ep = EPClassification(X, y, lam=40.0, pu_prior=0.3)
    assert np.unique(ep._sites.kappa).size == 2
    res = ep.fit()
    assert res.converged and np.isfinite(res.log_z)
    assert 0.0 <= ep.loo_accuracy() <= 1.0


def test_classifier_ep_route():
    X, y = load_breast_cancer(return_X_y=True)
    est = PACBayesClassifier(method="ep", grid_size=8)
    scores = cross_val_score(est, X, y, cv=3)
    assert scores.mean() > 0.95
    est.fit(X, y)
    p = est.predict_proba(X[:20])
    assert np.all((p >= 0) & (p <= 1))
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    assert np.isfinite(est.log_evidence_) and est.lam_ in est.cv_.grid
    with pytest.raises(InputError, match="0-1"):
        PACBayesClassifier(method="ep", loss="hinge").fit(X, y)


# -------------------------------------------------------- sampled pairs


def test_listed_pairs_reach_the_pair_grid_fixed_point():
    """The margin-list kernel on the list of all P pairs is the full grid
    kernel on another layout: same mean, log Z and LOO."""
    X, y = two_blobs(40, 3, seed=7)
    X[3] = X[25]                          # a tied pair
    full = EPLinear(X, y, lam=40.0, tol=1e-9, n_pairs="all")
    listed = EPLinear(X, y, lam=40.0, tol=1e-9, n_pairs=full.risk.n_pairs)
    every_pair(listed)
    a, b = full.fit(), listed.fit()
    assert listed._sites.n_ties == full._sites.n_ties == 1
    np.testing.assert_allclose(b.mean, a.mean, rtol=1e-6)
    assert b.log_z == pytest.approx(a.log_z, abs=1e-7)
    np.testing.assert_allclose(b.site_precision,
                               a.site_precision.ravel(), rtol=1e-5, atol=1e-9)
    ma, va = full.loo_scores(return_var=True)
    mb, vb = listed.loo_scores(return_var=True)
    np.testing.assert_allclose(mb, ma, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(vb, va, rtol=1e-6)


def test_sampled_pair_loo_matches_dense_star_removal():
    X, y = two_blobs(30, 3, seed=8)
    ep = EPLinear(X, y, lam=30.0, n_pairs=150, pair_sampling="uniform",
                  seed=2, standardize=False, tol=1e-9)
    res = ep.fit()
    mean, var = ep.loo_scores(return_var=True)
    risk, W, H = ep.risk, res.site_precision, res.site_shift
    Xo = risk.ordered(X)
    E = Xo[risk.first] - Xo[risk.second]
    for node in (0, 7, risk.n_pos, 29):
        keep = (risk.first != node) & (risk.second != node)
        prec = np.eye(3) + (E[keep].T * W[keep]) @ E[keep]
        cov = np.linalg.inv(prec)
        lin = E[keep].T @ H[keep]
        i = risk.order[node]
        assert mean[i] == pytest.approx(Xo[node] @ cov @ lin, abs=1e-9)
        assert var[i] == pytest.approx(Xo[node] @ cov @ Xo[node], rel=1e-9)


def test_sampled_risk_is_the_incomplete_u_statistic():
    rng = np.random.default_rng(9)
    y = rng.random(40) < 0.3
    y[:2] = [True, False]
    s = np.round(rng.normal(size=40), 1)
    risk = SampledAUCRisk(y, 500, "uniform", seed=1)
    pos, neg = np.flatnonzero(y), np.flatnonzero(~y)
    u = s[pos[risk.pair_pos]] - s[neg[risk.pair_neg]]
    assert risk(s) == pytest.approx(np.mean((u < 0) + 0.5 * (u == 0)))
    assert risk.kappa(5.0) == pytest.approx(5.0 / 500)
    strat = SampledAUCRisk(y, 500, "stratified", seed=1)
    for idx, m in ((strat.pair_pos, y.sum()), (strat.pair_neg, (~y).sum())):
        counts = np.bincount(idx, minlength=m)
        assert counts.max() - counts.min() <= 1
    # the margin operator is the incidence of the listed pairs
    A = np.zeros((500, 40))
    A[np.arange(500), strat.first] = 1.0
    A[np.arange(500), strat.second] -= 1.0
    W, C = rng.random(500), rng.normal(size=(40, 3))
    np.testing.assert_allclose(strat.gram_times(W, C), A.T @ (W[:, None]
                                                             * (A @ C)))
    np.testing.assert_allclose(strat.adjoint(W), A.T @ W)
    # listed in tiles of positives, negatives ascending within a tile
    from pac_particles import risks
    key = np.stack([strat.pair_pos // risks.PAIR_TILE_ROWS, strat.pair_neg,
                    strat.pair_pos], axis=1)
    assert all(tuple(a) <= tuple(b) for a, b in zip(key[:-1], key[1:]))


def test_incomplete_u_statistic_variance_by_simulation():
    """``Var(U_B) = (1 - 1/B) Var(U_n) + Var(h) / B`` [CCB16]: scores of
    positives N(1, 1), negatives N(0, 1), so ``h = 1{s_i < s_j}`` has mean
    ``p = Phi(-1 / sqrt 2)``; over 4000 data sets the variance of U_B
    (uniform) matches the formula with Var(U_n) from the same simulation to
    within 4 standard errors; the balanced design is not worse."""
    rng = np.random.default_rng(10)
    n_pos, n_neg, B, reps = 20, 30, 40, 4000
    y = np.r_[np.ones(n_pos, bool), np.zeros(n_neg, bool)]
    u_n, u_uniform, u_strat = (np.empty(reps) for _ in range(3))
    for r in range(reps):
        s = np.r_[rng.normal(1, 1, n_pos), rng.normal(0, 1, n_neg)]
        u_n[r] = np.mean(s[:n_pos, None] < s[None, n_pos:])
        u_uniform[r] = SampledAUCRisk(y, B, "uniform", seed=rng)(s)
        u_strat[r] = SampledAUCRisk(y, B, "stratified", seed=rng)(s)
    p = stats.norm.cdf(-1 / np.sqrt(2))
    predicted = (1 - 1 / B) * u_n.var() + p * (1 - p) / B
    se = predicted * np.sqrt(2 / (reps - 1))
    assert abs(u_uniform.var() - predicted) < 4 * se
    assert abs(u_uniform.mean() - p) < 4 * np.sqrt(predicted / reps)
    assert u_strat.var() < u_uniform.var() + 4 * se


def test_n_pairs_is_automatic_above_the_threshold(monkeypatch):
    from pac_particles.approx.ep import base
    X, y = two_blobs(60, 2, seed=11)
    assert type(EPLinear(X, y, lam=60.0).risk).__name__ == "AUCRisk"
    monkeypatch.setattr(base, "AUTO_MAX_PAIRS", 500)
    ep = EPLinear(X, y, lam=60.0, seed=0)
    assert isinstance(ep.risk, SampledAUCRisk) and ep.risk.n_terms == 500
    res = ep.fit()
    assert res.converged and res.site_precision.shape == (500,)
    assert 0.5 < ep.loo_auc() <= 1.0


def test_sampled_pairs_approach_the_complete_posterior():
    """B = P / 2 balanced pairs: the mean direction within 5 degrees of the
    complete statistic's, and the LOO AUC within 0.01."""
    X, y = two_blobs(200, 4, seed=12, shift=0.7)
    full = EPLinear(X, y, lam=200.0, n_pairs="all")
    part = EPLinear(X, y, lam=200.0, n_pairs=5000, seed=3)
    a, b = full.fit(), part.fit()
    cos = a.mean @ b.mean / np.linalg.norm(a.mean) / np.linalg.norm(b.mean)
    assert np.degrees(np.arccos(min(cos, 1.0))) < 5.0
    assert abs(full.loo_auc() - part.loo_auc()) < 0.01


@pytest.mark.parametrize("make", [
    lambda X, y: EPClassification(X, y, lam=30.0),
    lambda X, y: EPLinear(X, y, lam=30.0, n_pairs=300, seed=1)])
def test_margin_sweep_serial_equals_parallel(make):
    X, y = two_blobs(60, 4, seed=13)

    def fit():
        res = make(X, y).fit()
        return res.mean, res.log_z, res.n_sweeps

    assert_identical(*serial_and_parallel(fit))


def test_bad_pair_options_are_named():
    X, y = two_blobs(20, 2, seed=14)
    with pytest.raises(InputError, match="n_pairs"):
        EPLinear(X, y, lam=1.0, n_pairs=0)
    with pytest.raises(InputError, match="sampling"):
        EPLinear(X, y, lam=1.0, n_pairs=10, pair_sampling="random")


# ------------------------------------------------------------ lam path


def test_warm_started_lam_path_gives_the_cold_fits():
    """Continuation along the grid reaches the same fixed points as cold
    starts (LOO AUC to 1e-3) in fewer sweeps."""
    X, y = two_blobs(80, 3, seed=15, shift=0.8)
    grid = np.geomspace(2.0, 400.0, 6)
    model = EPLinear(X, y, lam=grid[0])
    sweeps = []

    def score(m):
        sweeps.append(m.result_.n_sweeps)
        return m.loo_auc()

    warm = loo_lambda(grid, lam_path_scores(model, score))
    cold = []
    for lam in grid:
        ep = EPLinear(X, y, lam=lam)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", EPConvergenceWarning)
            res = ep.fit()
        cold.append((res.n_sweeps, ep.loo_auc()))
    np.testing.assert_allclose(warm.fold_auc.ravel(), [c[1] for c in cold],
                               atol=1e-3)
    assert sum(sweeps) < sum(c[0] for c in cold)


def test_final_fit_polished_from_the_path_is_the_cold_fit():
    """``lam_path_scores(..., best)`` keeps the run of the best score; the
    final fit warm-started from it (``refit_from_path``) at a tighter
    tolerance reaches the cold fit's fixed point in fewer sweeps."""
    from pac_particles.approx.ep.base import refit_from_path
    X, y = two_blobs(80, 3, seed=15, shift=0.8)
    grid = np.geomspace(2.0, 400.0, 6)
    model = EPLinear(X, y, lam=grid[0], tol=1e-2)
    best = {}
    cv = loo_lambda(grid, lam_path_scores(model, lambda m: m.loo_auc(), best))
    assert best["lam"] == cv.best_lam and best["score"] == cv.mean_auc.max()
    polished = refit_from_path(model, cv.best_lam, best, tol=1e-4)
    cold = EPLinear(X, y, lam=cv.best_lam, tol=1e-4).fit()
    np.testing.assert_allclose(polished.mean, cold.mean, rtol=1e-3, atol=1e-4)
    assert polished.converged and polished.n_sweeps < cold.n_sweeps
    # the path's fits skip the energy; the final fit has EP's log Z
    assert np.isnan(best["run"].log_z) and model.compute_log_z
    assert polished.log_z == pytest.approx(cold.log_z, abs=1e-3)


@pytest.mark.parametrize("peak", [0, 3, 6, 11, 12])
def test_coarse_then_fine_grid_finds_the_peak_of_a_unimodal_score(peak):
    """stride 2: every other value and the last, then the neighbours of the
    best -- the maximum of a unimodal score whatever its position, with
    9 or fewer of 13 values scored."""
    grid = np.geomspace(1.0, 1000.0, 13)
    calls = []

    def score(lam):
        calls.append(lam)
        return -abs(np.log(lam) - np.log(grid[peak]))

    cv = loo_lambda(grid, score, stride=2)
    scored, calls[:] = list(calls), []
    full = loo_lambda(grid, score)
    assert cv.best_lam == full.best_lam == grid[peak]
    assert len(scored) <= 9 and len(set(scored)) == len(scored)
    # the coarse pass runs from small to large lam (a continuation path)
    coarse = scored[:7]
    assert coarse == sorted(coarse) and coarse[-1] == grid[-1]
    assert set(cv.grid) == set(scored)


def test_coarse_then_fine_path_warm_starts_from_the_best_value():
    """The EP path scored with a stride returns to the neighbours of the
    best value from its sites, and their leave-one-out AUCs are those of
    the full path."""
    X, y = two_blobs(80, 3, seed=16, shift=0.8)
    grid = np.geomspace(2.0, 400.0, 7)
    full = loo_lambda(grid, lam_path_scores(EPLinear(X, y, lam=grid[0]),
                                            lambda m: m.loo_auc()))
    best, sweeps = {}, []

    def score(m):
        sweeps.append((m.lam, m.result_.n_sweeps))
        return m.loo_auc()

    coarse = loo_lambda(grid, lam_path_scores(EPLinear(X, y, lam=grid[0]),
                                              score, best), stride=2)
    assert coarse.best_lam == full.best_lam == best["lam"]
    # the fine values start from the best coarse value's sites: fewer
    # sweeps than a cold fit at the same lam
    assert len(sweeps) > 4
    for lam, n in sweeps[4:]:
        assert n < EPLinear(X, y, lam=lam).fit().n_sweeps
    on_both = np.isin(full.grid, coarse.grid)
    np.testing.assert_allclose(coarse.mean_auc, full.mean_auc[on_both],
                               atol=1e-3)
    with pytest.raises(ValueError, match="stride"):
        loo_lambda(grid, lambda lam: 0.5, stride=0)
