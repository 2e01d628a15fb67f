import joblib
import numpy as np
import pytest

from pac_particles.problem.auc import auc_risk
from pac_particles.smc.models import AUCGibbsModel
from pac_particles.smc.posterior import run_smc
from pac_particles.problem.priors import gaussian_prior
from pac_particles.sklearn.selection import PathScores, cv_lambda, evidence_grid
from builders import noisy_linear
from lab.reference.quadrature import AngularQuadrature


def _noisy(n=240, seed=0):
    return noisy_linear(n, [1.0, -1.0, 0.5, 0.0], seed)


def test_path_scores_at_the_last_step_are_the_final_point_estimate():
    X, y = _noisy()
    model = AUCGibbsModel(X[:200], y[:200], lam=300.0)
    X_val = model.data.transform(X[200:])
    # the tempering run's own particles (no importance draws pooled in)
    post = run_smc(model, n_particles=50, len_chain=4, seed=0,
                   collect=[PathScores(X_val=X_val, point="mean")],
                   evidence="tempering")
    steps = post.summaries.pathScores
    assert len(steps) == post.n_steps
    assert [e for e, _ in steps] == list(post.exponents[1:])
    np.testing.assert_allclose(steps[-1][1], X_val @ post.mean)


def test_cv_curve_interpolates_each_fold_path_and_picks_its_maximum():
    X, y = _noisy()
    cv = cv_lambda(X, y, lam_max=2000.0, n_folds=3, n_particles=60,
                   len_chain=5, seed=1)
    assert cv.fold_auc.shape == (3, cv.grid.size)
    assert cv.grid[-1] == pytest.approx(2000.0)
    for (gammas, aucs), row in zip(cv.fold_paths, cv.fold_auc):
        assert gammas[-1] == 2000.0
        assert row[-1] == pytest.approx(aucs[-1])
        assert np.all(row >= aucs.min() - 1e-12) and np.all(row <= aucs.max() + 1e-12)
    assert cv.best_lam == cv.grid[np.argmax(cv.mean_auc)]
    assert cv.mean_auc.max() > 0.75
    assert cv.posterior.lam == cv.best_lam
    X_test, y_test = _noisy(seed=5)
    assert 1 - auc_risk(cv.posterior.score(X_test), y_test) > 0.75


def test_folds_sample_a_smaller_population_than_the_refit(monkeypatch):
    """By default each fold's sampler has half the refit's M and half its P
    (a quarter of its particles); ``fold_particles`` and ``fold_len_chain``
    set them; the refit keeps ``n_particles`` and ``len_chain`` and, the
    longest job, is dispatched first."""
    from pac_particles.sklearn.selection import folds, scorers
    sizes = []

    def recording_run_smc(model, **kwargs):
        sizes.append((kwargs["n_particles"], kwargs["len_chain"],
                      kwargs.get("keep_steps", False)))
        return run_smc(model, **kwargs)

    for module in (folds, scorers):       # the refit's, the folds'
        monkeypatch.setattr(module, "run_smc", recording_run_smc)
    X, y = _noisy(n=120)
    kwargs = dict(lam_max=300.0, n_folds=2, seed=0, n_jobs=1,
                  refit_to="path")
    cv_lambda(X, y, n_particles=40, len_chain=6, **kwargs)
    assert sizes == [(40, 6, True), (20, 3, False), (20, 3, False)]
    sizes.clear()
    cv_lambda(X, y, n_particles=40, len_chain=6, fold_particles=30,
              fold_len_chain=2, **kwargs)
    assert sizes == [(40, 6, True), (30, 2, False), (30, 2, False)]
    for bad in (dict(fold_particles=1), dict(fold_len_chain=0.5)):
        with pytest.raises(ValueError, match=next(iter(bad))):
            cv_lambda(X, y, n_particles=40, len_chain=6, **bad, **kwargs)
    # a whole MCMCSequence fixes the chain length of the folds too
    from particles import smc_samplers as ssp
    from pac_particles.smc.moves import CalibratedEllipticalSlice
    sizes.clear()
    move = ssp.MCMCSequenceWF(mcmc=CalibratedEllipticalSlice(), len_chain=6)
    cv_lambda(X, y, n_particles=40, len_chain=6, move=move, **kwargs)
    assert sizes == [(40, 6, True), (20, 6, False), (20, 6, False)]


def test_cv_is_reproducible_across_joblib_backends():
    """Folds run in separate processes under a user-chosen joblib backend and
    give the same curves as a sequential run with the same seed."""
    X, y = _noisy(n=120)
    kwargs = dict(lam_max=500.0, n_folds=2, n_particles=30, len_chain=3, seed=7,
                  refit=False)
    sequential = cv_lambda(X, y, n_jobs=1, **kwargs)
    with joblib.parallel_config(backend="loky"):
        parallel = cv_lambda(X, y, n_jobs=2, **kwargs)
    np.testing.assert_array_equal(sequential.fold_auc, parallel.fold_auc)


def test_cv_runs_on_a_dask_cluster_through_joblib():
    """The folds go to a dask cluster through joblib's backend and give the
    sequential run's numbers. One single-threaded worker process: particles
    draws from numpy's global generator, which threads would share."""
    distributed = pytest.importorskip("dask.distributed")
    X, y = _noisy(n=120)
    kwargs = dict(lam_max=500.0, n_folds=2, n_particles=30, len_chain=3, seed=7,
                  refit=False)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1,
                                  processes=True, dashboard_address=None) \
            as cluster, distributed.Client(cluster):
        with joblib.parallel_config(backend="dask"):
            on_dask = cv_lambda(X, y, n_jobs=2, **kwargs)
    np.testing.assert_array_equal(on_dask.fold_auc,
                                  cv_lambda(X, y, n_jobs=1, **kwargs).fold_auc)


@pytest.mark.parametrize("kwargs, message", [
    (dict(lam_max=-1.0), "lam_max"),
    (dict(lam_max=10.0, n_folds=1), "n_folds"),
    (dict(lam_max=10.0, point="median"), "point"),
])
def test_cv_rejects_bad_arguments(kwargs, message):
    X, y = _noisy(n=40)
    with pytest.raises(ValueError, match=message):
        cv_lambda(X, y, **kwargs)


def test_evidence_does_not_depend_on_isotropic_prior_variance():
    """Scale invariance of the risk: log Z is the same for every isotropic
    Gaussian prior (exact value by quadrature in d = 2)."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(150, 2))
    y = (X[:, 0] + 0.7 * rng.normal(size=150) > 0).astype(int)
    exact = AngularQuadrature(X, y, 150.0).log_z

    def make_model(var):
        return AUCGibbsModel(X, y, lam=150.0, prior=gaussian_prior(2, var),
                             standardize=False)

    grid = evidence_grid(make_model, [{"var": 0.01}, {"var": 1.0}, {"var": 100.0}],
                         n_particles=300, len_chain=10, seed=0)
    np.testing.assert_allclose(grid.log_z, exact, atol=0.25)
    ard = evidence_grid(make_model, [{"var": np.array([1.0, 1e-4])}],
                        n_particles=300, len_chain=10, seed=0)
    # shrinking the informative direction's competitor raises the evidence
    assert ard.log_z[0] > exact + 0.5


def test_cv_picks_an_interior_lam_when_large_lam_overfits():
    """Two informative covariates among 60, n = 120: near the prior (small
    lam) the score is diffuse, at large lam the posterior concentrates on
    the cone of directions that order the training pairs, noise covariates
    included; the best lam is inside. (With the covariance fit of the move
    unshrunk, 1000 particles in d = 60 sampled that cone poorly and the drop
    at large lam looked like 0.07; the shrunk fit samples it better and the
    drop is about 0.01-0.02: docs/benchmarks.md, "Efficiency of the SMC sampler".)"""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 60))
    y = (X[:, :2] @ [1.0, 1.0] + rng.normal(size=120) > 0).astype(int)
    cv = cv_lambda(X, y, lam_max=2e4, grid_decades=4, n_folds=4, grid_size=25,
                   n_particles=100, len_chain=5, seed=0, refit=False)
    assert cv.grid[0] < cv.best_lam < cv.grid[-1]
    assert cv.mean_auc.max() > cv.mean_auc[0] + 0.02
    assert cv.mean_auc.max() > cv.mean_auc[-1] + 0.005


def test_warm_started_refits_give_the_cold_validation_curve():
    """Continuation along the grid (each VB fit from the previous optimum)
    lands on the same optima as cold starts: same validation AUCs, in the
    grid's order whatever order the grid is given in."""
    from pac_particles.sklearn.selection import RefitScorer
    from pac_particles.approx.vb import GaussianVB
    X, y = _noisy(n=160)
    grid = np.array([300.0, 3.0, 30.0, 1000.0])

    def make(X, y, lam):
        return GaussianVB(X, y, lam, family="diagonal")

    args = (X[:120], y[:120], X[120:], y[120:], grid, 0)
    _, cold = RefitScorer(make)(*args)
    _, warm = RefitScorer(make, warm_start=True)(*args)
    np.testing.assert_allclose(warm, cold, atol=2e-3)
    assert cold[1] != cold[3]          # the curve does move along the grid


def test_within_one_se_keeps_the_values_within_a_standard_error_of_the_best():
    from pac_particles.sklearn.selection import LamCVResult
    grid = np.array([1.0, 10.0, 100.0, 1000.0])
    fold_auc = np.array([[0.70, 0.81, 0.84, 0.70],
                         [0.72, 0.83, 0.80, 0.72],
                         [0.74, 0.85, 0.88, 0.74],
                         [0.70, 0.83, 0.84, 0.70]])
    cv = LamCVResult(grid=grid, fold_auc=fold_auc, best_lam=100.0)
    se = np.std(fold_auc[:, 2], ddof=1) / 2.0       # 0.0163 at the best
    assert np.mean(fold_auc[:, 2]) - se < np.mean(fold_auc[:, 1])  # 0.83
    assert np.mean(fold_auc[:, 2]) - se > np.mean(fold_auc[:, 0])
    np.testing.assert_array_equal(cv.within_one_se, [False, True, True, False])
    assert cv.one_se_floor == pytest.approx(0.84 - se)
    # the curve between grid values is linear in log gamma
    np.testing.assert_allclose(cv.mean_auc_at(grid), cv.mean_auc)
    assert cv.mean_auc_at(np.sqrt(10.0 * 100.0)) == pytest.approx(0.835)
    # one row (a leave-one-out curve): no spread, the best value alone
    loo = LamCVResult(grid=grid, fold_auc=fold_auc[:1], best_lam=100.0)
    np.testing.assert_array_equal(loo.within_one_se, [False, False, True, False])


def test_folds_fall_back_to_the_size_of_the_smallest_class_with_a_warning():
    """3 positives cannot fill 5 stratified folds: 3 folds, each validation
    part holding a positive and a negative (its AUC is defined), together
    covering every row once."""
    from pac_particles.sklearn.selection import FewerFoldsWarning, stratified_folds
    positives = np.arange(10) < 3
    with pytest.warns(FewerFoldsWarning, match="using 3 folds"):
        folds = stratified_folds(positives, n_folds=5, seed=0)
    assert len(folds) == 3
    for train, val in folds:
        assert positives[val].any() and not positives[val].all()
        assert positives[train].any() and not positives[train].all()
    np.testing.assert_array_equal(np.sort(np.concatenate([v for _, v in folds])),
                                  np.arange(10))


def test_folds_keep_n_folds_without_a_warning_when_every_class_fills_them():
    import warnings
    from pac_particles.sklearn.selection import fold_count
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert fold_count(np.arange(10) < 5, 5) == 5


def test_folds_refuse_a_class_of_one_member_and_say_what_to_do():
    from pac_particles.core.checks import InputError
    from pac_particles.sklearn.selection import stratified_folds
    with pytest.raises(InputError, match="at least 2 members.*float lam"):
        stratified_folds(np.arange(10) < 1, n_folds=5)


# ------------------------------------------ one path for every task


def test_the_top_of_the_grid_is_set_per_task():
    from pac_particles.sklearn.selection import default_lam_max
    assert default_lam_max(40) == 200.0
    assert default_lam_max(40, "classification") == 400.0
    with pytest.raises(Exception, match="task"):
        default_lam_max(40, "regression")


def test_smc_path_scorer_scores_the_vote_accuracy_for_classification():
    """``metric="accuracy"``: the held-out accuracy of the particles' vote
    at every tempering step; at the last step, that of the final
    particles' vote computed by hand."""
    from pac_particles.sklearn.committee import vote_probability
    from pac_particles.sklearn.selection import SMCPathScorer
    from pac_particles.smc.models import ClassificationGibbsModel
    X, y = noisy_linear(120, [1.0, -1.0], seed=4, noise=0.5)
    tr, va = np.arange(80), np.arange(80, 120)
    scorer = SMCPathScorer(60.0, metric="accuracy",
                           make_model=ClassificationGibbsModel,
                           smc_kwargs=dict(n_particles=30, len_chain=4))
    gammas, accuracy = scorer(X[tr], y[tr], X[va], y[va], None, 0)
    assert gammas[-1] == pytest.approx(60.0)
    assert np.all((accuracy >= 0) & (accuracy <= 1))
    model = ClassificationGibbsModel(X[tr], y[tr], 60.0)
    post = run_smc(model, seed=0, n_particles=30, len_chain=4,
                   evidence="tempering")
    vote = vote_probability(post.theta[:post.n_particles],
                            post.weights[:post.n_particles],
                            model.data.transform(X[va]))
    assert accuracy[-1] == pytest.approx(np.mean((vote > 0.5) == y[va]))
    assert accuracy[-1] > 0.8


def test_refit_scorer_scores_probabilities_by_accuracy():
    from pac_particles.approx.classification_vb import ClassificationVB
    from pac_particles.sklearn.selection import RefitScorer
    X, y = noisy_linear(100, [1.0, 0.5], seed=5)
    tr, va = np.arange(70), np.arange(70, 100)
    grid = np.array([5.0, 50.0])
    scorer = RefitScorer(lambda X_, y_, lam: ClassificationVB(X_, y_, lam=lam),
                         warm_start=True, metric="accuracy")
    _, accuracy = scorer(X[tr], y[tr], X[va], y[va], grid, 0)
    cold = ClassificationVB(X[tr], y[tr], lam=50.0)
    cold.fit()
    expected = np.mean((cold.predict_proba(X[va]) > 0.5) == y[va])
    assert accuracy[1] == pytest.approx(expected, abs=1.0 / 30)


def test_heldout_score_averages_refits_on_stratified_folds():
    from pac_particles.sklearn.selection import heldout_score, stratified_folds
    y = np.array([0, 1] * 10)
    seen = []

    def fit_and_score(train, val):
        seen.append((train, val))
        return float(y[val].mean())
    assert heldout_score(fit_and_score, y, n_folds=4, seed=0) == pytest.approx(0.5)
    folds = stratified_folds(y, 4, 0)
    assert [v.tolist() for _, v in seen] == [v.tolist() for _, v in folds]
    assert heldout_score(fit_and_score, np.array([1] + [0] * 9), 3) is None
