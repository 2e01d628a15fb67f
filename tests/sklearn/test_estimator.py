import numpy as np
import pytest
from sklearn.metrics import roc_auc_score, roc_curve
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import check_estimator

from builders import noisy_linear
from pac_particles.sklearn.binary import certificate_spec
from pac_particles.sklearn.estimator import PACBayesAUC


def _data(n=200, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3)) * [1.0, 5.0, 0.2] + [0.0, 10.0, -3.0]
    y = np.where(X[:, 0] - 0.2 * X[:, 1] + 3 * X[:, 2] + rng.normal(size=n) > -11,
                 "yes", "no")
    return X, y


def test_passes_scikit_learn_estimator_checks():
    """Every check passes; the ones skipped need pandas or the array API."""
    results = check_estimator(
        PACBayesAUC(lam=20.0, n_particles=30, len_chain=3, random_state=0),
        on_fail=None)
    failed = [r["check_name"] for r in results if r["status"] == "failed"]
    assert failed == []


def test_decision_function_replays_the_posterior_score_on_raw_inputs():
    X, y = _data()
    est = PACBayesAUC(lam=200.0, n_particles=50, len_chain=5, random_state=0).fit(X, y)
    assert list(est.classes_) == ["no", "yes"]
    reference = est.posterior_.score(X, point="bayes_point")
    np.testing.assert_allclose(est.decision_function(X) + est.threshold_,
                               reference - reference.mean()
                               + (est.decision_function(X) + est.threshold_).mean(),
                               atol=1e-9)
    assert est.score(X, y) == pytest.approx(roc_auc_score(y == "yes", reference))


def test_smc_reports_the_single_run_errors_of_its_estimates():
    """``log_evidence_se_`` is the run's ``log_z_se`` and ``coef_se_`` the
    point estimate's standard error mapped to the raw inputs like
    ``coef_``; the chosen step of ``lam='cv'`` has them too; EP has none."""
    X, y = _data()
    X = np.column_stack([X, np.ones(len(y))])       # a dropped column
    for point, se in (("bayes_point", "bayes_point_se"), ("mean", "mean_se")):
        est = PACBayesAUC(lam=200.0, n_particles=50, len_chain=5, point=point,
                          random_state=0).fit(X, y)
        post = est.posterior_
        assert est.log_evidence_se_ == post.log_z_se > 0
        expected = np.zeros(X.shape[1])
        expected[est.kept_columns_] = getattr(post, se) / post.data.scale
        np.testing.assert_allclose(est.coef_se_, expected)
        assert est.coef_se_[-1] == 0 and np.all(est.coef_se_[:-1] > 0)
    cv = PACBayesAUC(lam_max=300.0, grid_size=5, n_folds=2, n_particles=30,
                     len_chain=4, random_state=0).fit(X, y)
    assert cv.log_evidence_se_ > 0 and np.all(cv.coef_se_[:-1] > 0)
    ep = PACBayesAUC(method="ep", lam=200.0).fit(X, y)
    assert ep.log_evidence_se_ is None and ep.coef_se_ is None


def test_certificate_is_the_gibbs_bound_of_the_fitted_posterior():
    """Corollary 19 of the exact Gibbs posterior, -log Z from the run's
    lower confidence bound at eps / 10 (never its estimate)."""
    from pac_particles.bounds import pac_bayes_bound_gibbs
    X, y = _data()
    est = PACBayesAUC(lam=60.0, n_particles=50, len_chain=5, eps=0.1,
                      random_state=0).fit(X, y)
    data = est.posterior_.data
    log_z_low, _ = est.posterior_.log_z_lower_bound(0.01)
    assert log_z_low < est.log_evidence_
    expected = pac_bayes_bound_gibbs(log_z_low, 60.0, data.n_pos,
                                     data.n_neg, eps=0.09)
    assert est.bound_.bound == pytest.approx(expected.bound)
    assert est.bound_.grid_size == 1 and est.bound_.eps == 0.1
    assert dict(est.bound_.delta_shares) == pytest.approx(
        {"Corollary 19": 0.09, "log Z": 0.01})
    # the two-sample certificate is at least the posterior's training risk
    assert est.bound_.auc_risk_bound_two_sample > est.posterior_.expected_risk


@pytest.mark.parametrize("kwargs", [dict(method="ep"), dict(method="vb"),
                                    dict(method="ep", kernel="rbf"),
                                    dict(method="ep", prior="spike_slab")])
def test_every_method_reports_a_certificate_in_zero_one(kwargs):
    X, y = _data()
    est = PACBayesAUC(lam=80.0, random_state=0, **kwargs).fit(X, y)
    cert = est.certificate_
    assert 0 <= est.certified_auc_risk_ <= 1
    assert cert.name in ("kl", "held_out") and cert.delta == est.eps
    # B's m is below 100 here: the part-A score alone, at the whole eps
    assert cert.n_candidates == 1 and cert.name == "held_out"
    assert cert.vacuous == (cert.bound >= 0.5)
    deployed = est.deployed_certificate_
    assert (deployed is None) == ("kernel" in kwargs)


def test_certificate_stays_in_zero_one_and_says_vacuous_at_extreme_lam():
    """Separable data, lam = 1e5: the Corollary 19 bound was 284; every
    reported bound is now in [0, 1] and flagged."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(40, 3))
    y = (X[:, 0] > 0).astype(int)
    est = PACBayesAUC(method="ep", lam=1e5, random_state=0).fit(X, y)
    for value in (est.certified_auc_risk_, est.bound_.bound,
                  est.bound_.auc_risk_bound_two_sample,
                  est.bound_.auc_risk_bound_rigorous):
        assert 0 <= value <= 1
    assert est.bound_.vacuous
    small = PACBayesAUC(method="ep", lam=10.0).fit(X[:12], y[:12])
    assert small.certificate_.vacuous and small.certified_auc_risk_ >= 0.5


def test_predict_uses_the_youden_point_of_the_training_roc():
    X, y = _data()
    est = PACBayesAUC(lam=200.0, n_particles=50, len_chain=5, random_state=0).fit(X, y)
    pred = est.predict(X) == "yes"
    positives = y == "yes"
    tpr, fpr = pred[positives].mean(), pred[~positives].mean()
    f, t, _ = roc_curve(positives, est.decision_function(X))
    assert tpr - fpr == pytest.approx(np.max(t - f))


def test_above_calibration_rows_the_cut_and_slope_use_a_row_sample(
        monkeypatch):
    """Above CALIBRATION_ROWS training rows the Youden cut and Platt's
    slope are computed on a sample of each class (a rare class whole),
    weighted by its class's count over its draws: the cut is then the
    Youden point of the sample's ROC curve, near the full one's, and the
    slope the weighted sample's."""
    from pac_particles.sklearn import binary
    monkeypatch.setattr(binary, "CALIBRATION_ROWS", 150)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3))
    y = (X @ [1.0, -1.0, 0.5] + rng.normal(size=400) > 0).astype(int)
    rows, weights = binary.calibration_rows(y == 1, 5)
    assert rows.shape == (150,) and np.all(np.diff(rows) >= 0)
    np.testing.assert_array_equal(rows, binary.calibration_rows(y == 1, 5)[0])
    for label in (0, 1):
        drawn = y[rows] == label
        assert drawn.sum() == 75
        np.testing.assert_allclose(weights[drawn], np.sum(y == label) / 75)
    assert binary.calibration_rows(y[:150] == 1, 5) == (slice(None), None)
    # a rare class keeps every row
    rare = np.zeros(400, dtype=bool)
    rare[[3, 50, 399]] = True
    rows_rare, weights_rare = binary.calibration_rows(rare, 5)
    assert set(np.flatnonzero(rare)) <= set(rows_rare)
    np.testing.assert_allclose(weights_rare[rare[rows_rare]], 1.0)
    est = PACBayesAUC(method="vb", lam=400.0, random_state=5).fit(X, y)
    scores = est.decision_function(X) + est.threshold_
    assert est.threshold_ == pytest.approx(
        binary.youden_cut(y[rows] == 1, scores[rows]), abs=1e-9)
    full = binary.youden_cut(y == 1, scores)
    assert abs(est.threshold_ - full) < 0.5 * scores.std()
    assert est.proba_slope_ == pytest.approx(binary.platt_sigmoid(
        scores[rows], y[rows] == 1, cut=est.threshold_,
        weights=weights)[0], rel=1e-9)


def test_same_random_state_gives_the_same_fit():
    X, y = _data()
    a = PACBayesAUC(lam=100.0, n_particles=40, len_chain=4, random_state=3).fit(X, y)
    b = PACBayesAUC(lam=100.0, n_particles=40, len_chain=4, random_state=3).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert a.log_evidence_ == b.log_evidence_


def test_lam_cv_chooses_lam_on_the_path_and_refits():
    X, y = _data()
    est = PACBayesAUC(lam="cv", cv_rule="best", lam_max=2000.0, n_folds=3,
                      n_particles=40, len_chain=4, random_state=0).fit(X, y)
    assert est.lam_ == est.cv_.best_lam and est.lam_ <= 2000.0
    assert est.posterior_.lam == est.lam_
    assert est.score(X, y) > 0.8
    # the grid is fixed before seeing the data: union bound over its size
    assert est.bound_.grid_size == est.cv_.grid.size == 50
    assert est.cv_.grid[0] == pytest.approx(2.0)


def test_default_lam_cv_fits_data_with_fewer_members_per_class_than_folds():
    """The default ``lam='cv'`` (5 folds) on 10 rows with 3 positives (the
    data of scikit-learn's ``check_fit2d_1feature``) uses 3 folds and says
    so; with one positive it refuses and names the fix."""
    from pac_particles.core.checks import InputError
    from pac_particles.sklearn.selection import FewerFoldsWarning
    X = np.linspace(0.0, 3.0, 10)[:, None]
    y = np.zeros(10, dtype=int)
    y[[1, 4, 8]] = 1
    with pytest.warns(FewerFoldsWarning, match="using 3 folds"):
        est = PACBayesAUC(n_particles=30, len_chain=3, grid_size=5,
                          random_state=0).fit(X, y)
    assert est.cv_.fold_auc.shape == (3, 5)
    y[[1, 4]] = 0
    with pytest.raises(InputError, match="float lam"):
        PACBayesAUC(random_state=0).fit(X, y)


def test_pu_fit_at_a_fixed_lam_with_one_labelled_positive_has_no_heldout_auc():
    """No fold split keeps a class of one member in every part, and a fixed
    ``lam`` needs none: the fit runs and only ``heldout_auc_`` is missing."""
    X = np.linspace(0.0, 3.0, 10)[:, None]
    y = (np.arange(10) == 8).astype(int)
    est = PACBayesAUC(lam=10.0, pu_prior=0.2, n_particles=30, len_chain=3,
                      random_state=0).fit(X, y)
    assert est.heldout_auc_ is None and 0.0 <= est.train_auc_ <= 1.0


def test_certified_cv_rule_takes_the_tightest_step_the_folds_cannot_reject():
    """``cv_rule='certified'``: lam_ is a tempering step of the refit whose
    interpolated mean validation AUC is within one standard error of the
    best, and no other such step has a tighter certificate."""
    X, y = _data()
    est = PACBayesAUC(lam="cv", lam_max=2000.0, n_folds=3, n_particles=40,
                      len_chain=4, random_state=0).fit(X, y)
    cv, refit = est.cv_, est.cv_.posterior
    mean = cv.mean_auc
    best = np.argmax(mean)
    floor = mean[best] - cv.std_auc[best] / np.sqrt(3)
    # the refit tempers to lam_max, alongside the folds
    assert refit.lam == 2000.0 and cv.grid[-1] == 2000.0
    assert est.lam_ in refit.gammas and est.posterior_.lam == est.lam_
    candidates = [t for t in range(1, refit.n_steps + 1)
                  if refit.gammas[t] >= cv.grid[0] and np.interp(
                      np.log(refit.gammas[t]), np.log(cv.grid), mean) >= floor]
    chosen = list(refit.gammas).index(est.lam_)
    assert chosen in candidates
    # compared before the chosen step's importance draws join its particles
    from pac_particles.bounds import certify
    from pac_particles.problem.problem import GibbsProblem
    problem = GibbsProblem.ranking(X, y == "yes", est.lam_)
    spec = certificate_spec(est)
    tightest = certify(refit.at_step(chosen), problem, spec).bound
    for t in candidates:
        other = certify(refit.at_step(t), problem, spec)
        assert other.bound >= tightest - 1e-12


def test_corollary19_of_a_tempering_step_is_evaluated_on_the_grid():
    """SMC's lam_ is a tempering step, off the grid of lam='cv': bound_ pays
    log(grid size) for the grid, so its lam is a grid value (the Gibbs
    posterior at lam_ stays the one certified); EP's lam_ is on the grid."""
    from pac_particles.sklearn.selection import lam_grid
    X, y = _data()
    grid = lam_grid(300.0, 5)
    # a seed whose chosen tempering step falls between grid values
    smc = PACBayesAUC(lam_max=300.0, grid_size=5, n_folds=2, n_particles=30,
                      len_chain=3, random_state=2).fit(X, y)
    assert smc.lam_ not in grid
    assert smc.bound_.lam in grid and smc.bound_.grid_size == 5
    assert smc.bound_.posterior_lam == smc.lam_
    ep = PACBayesAUC(method="ep", lam="cv", lam_max=300.0,
                     grid_size=5).fit(X, y)
    assert ep.lam_ in grid and ep.bound_.lam in grid
    for est in (smc, ep):
        assert 0.0 <= est.bound_.bound <= 1.0
        assert 0.0 <= est.bound_.auc_risk_bound_two_sample <= 1.0


def test_works_in_cross_val_score_grid_search_and_pipeline():
    X, y = _data()
    est = PACBayesAUC(lam=100.0, n_particles=30, len_chain=3, random_state=0)
    scores = cross_val_score(est, X, y, scoring="roc_auc", cv=3)
    assert scores.shape == (3,) and scores.mean() > 0.8
    search = GridSearchCV(est, {"lam": [10.0, 300.0]}, scoring="roc_auc", cv=3)
    assert search.fit(X, y).best_params_["lam"] in (10.0, 300.0)
    pipe = make_pipeline(StandardScaler(), est).fit(X, y)
    assert roc_auc_score(y, pipe.decision_function(X)) > 0.8


@pytest.mark.parametrize("params, message", [
    (dict(method="mcmc"), "method"), (dict(lam=-1.0), "lam"),
    (dict(point="median"), "point"), (dict(eps=1.5), "eps"),
    (dict(vb_family="banded"), "vb_family"), (dict(grid_size=1), "grid_size"),
    (dict(cv_rule="smallest"), "cv_rule"),
])
def test_bad_parameters_are_value_errors(params, message):
    X, y = _data(n=40)
    with pytest.raises(ValueError, match=message):
        PACBayesAUC(**params).fit(X, y)


@pytest.mark.parametrize("method", ["ep", "vb"])
def test_gaussian_methods_score_with_the_approximation_mean(method):
    from pac_particles.approx.ep import EPLinear
    from pac_particles.approx.vb import GaussianVB
    X, y = _data()
    est = PACBayesAUC(method=method, lam=100.0, random_state=0).fit(X, y)
    direct = (EPLinear(X, y == "yes", 100.0) if method == "ep" else
              GaussianVB(X, y == "yes", 100.0, family="diagonal", seed=0)).fit()
    np.testing.assert_allclose(est.posterior_.mean, direct.mean, rtol=1e-8)
    reference = X @ est.coef_
    assert roc_auc_score(y, reference) == pytest.approx(est.score(X, y))
    assert est.log_evidence_ < 0 and est.bound_.grid_size == 1
    assert est.score(X, y) > 0.8


def test_ep_chooses_lam_by_its_leave_one_out_auc():
    from pac_particles.sklearn.selection import lam_grid
    X, y = _data()
    est = PACBayesAUC(method="ep", lam="cv", lam_max=500.0, grid_size=6).fit(X, y)
    # scored coarse then fine (LOO_GRID_STRIDE): a subset of the grid
    assert est.cv_.fold_auc.shape == (1, est.cv_.grid.size)
    assert 4 <= est.cv_.grid.size <= 6
    assert np.all(np.isin(est.cv_.grid, lam_grid(500.0, 6)))
    assert est.lam_ == est.cv_.grid[np.argmax(est.cv_.fold_auc[0])]
    assert est.cv_auc_ == pytest.approx(est.cv_.fold_auc[0].max())
    assert est.bound_.grid_size == 6


def test_vb_chooses_lam_by_leave_one_out_on_all_pairs(monkeypatch):
    """On all pairs VB's lam maximises the leave-one-out AUC of its fits
    along the grid (one row, no folds), and its final fit is the VB optimum
    there; on sampled pairs with a small class (below
    HOLDOUT_MIN_MINORITY) or above VB_LOO_MAX_FEATURES it falls back on
    K-fold cross-validation."""
    from pac_particles.approx.vb import GaussianVB
    import pac_particles.sklearn.methods.vb as vb_method
    X, y = _data(n=120)
    est = PACBayesAUC(method="vb", lam="cv", lam_max=500.0, grid_size=4,
                      n_folds=3, random_state=0).fit(X, y)
    assert est.cv_.fold_auc.shape == (1, 4)
    assert est.lam_ == est.cv_.grid[np.argmax(est.cv_.mean_auc)]
    cold = GaussianVB(X, y == "yes", est.lam_, family="diagonal", tol=1e-9)
    cold_fit = cold.fit()
    np.testing.assert_allclose(est.posterior_.mean, cold_fit.mean, rtol=1e-3,
                               atol=1e-4)
    assert est.heldout_auc_ == pytest.approx(cold.loo_auc(), abs=1e-3)
    # a grid value without leave-one-out scores (Hessian not positive
    # definite) is left out, and so is the final fit's held-out AUC
    from pac_particles.core.checks import InputError
    real = GaussianVB.loo_auc

    def fails_at_small_lam(vb):
        if vb.lam < 20.0:
            raise InputError("not positive definite")
        return real(vb)

    with monkeypatch.context() as patch:
        patch.setattr(GaussianVB, "loo_auc", fails_at_small_lam)
        some = PACBayesAUC(method="vb", lam="cv", lam_max=500.0, grid_size=4,
                           random_state=0).fit(X, y)
    assert some.cv_.grid.min() >= 20.0 and some.cv_.grid.size < 4
    from pac_particles.sklearn.selection import lam_grid
    grid = lam_grid(500.0, 4)
    # few pairs (below KFOLD_PATH_MIN_PAIRS): the folds score every value
    with monkeypatch.context() as patch:
        patch.setattr(vb_method, "VB_LOO_MAX_FEATURES", 2)
        every = PACBayesAUC(method="vb", lam="cv", lam_max=500.0,
                            grid_size=4, n_folds=3, random_state=0).fit(X, y)
    assert every.cv_.fold_auc.shape == (3, 4)
    np.testing.assert_allclose(every.cv_.grid, grid)
    for name, value in (("auto_pairs", lambda n_pos, n_neg: 1000),
                        ("VB_LOO_MAX_FEATURES", 2)):
        with monkeypatch.context() as patch:
            patch.setattr(vb_method, name, value)
            patch.setattr(vb_method, "KFOLD_PATH_MIN_PAIRS", 0)
            folds = PACBayesAUC(method="vb", lam="cv", lam_max=500.0,
                                grid_size=4, n_folds=3,
                                random_state=0).fit(X, y)
        # the folds climb every other value of the grid (and its last)
        # until their mean curve is flat
        assert folds.cv_.fold_auc.shape == (3, folds.cv_.grid.size)
        assert set(folds.cv_.grid) <= set(grid[[0, 2, 3]])
        assert folds.cv_.grid[0] == grid[0]
        assert folds.lam_ in folds.cv_.grid
        # the folds' mean AUC at lam_ is the held-out AUC: no leave-one-out
        assert not hasattr(folds, "cv_auc_")
        assert folds.heldout_auc_ == pytest.approx(
            folds.cv_.mean_auc[folds.cv_.grid == folds.lam_][0])


def _sparse(n=240, seed=0):
    return noisy_linear(n, [2.0, -2.0, 1.5], seed, d=12)


@pytest.mark.parametrize("method", ["smc", "ep"])
def test_spike_slab_prior_gives_inclusion_probabilities(method):
    X, y = _sparse()
    est = PACBayesAUC(method=method, prior="spike_slab", spike_slab=(0.2, 0.01, 1.0),
                      lam=240.0, n_particles=80, len_chain=5,
                      random_state=0).fit(X, y)
    assert est.inclusion_probs_.shape == (12,)
    assert np.all(est.inclusion_probs_[:3] > 0.5)
    assert np.mean(est.inclusion_probs_[3:] < 0.5) >= 0.8
    assert est.hyperparameters_ == {"p": 0.2, "v0": 0.01, "v1": 1.0}


@pytest.mark.parametrize("method", ["smc", "ep"])
def test_gp_kernel_scores_circles(method):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 2))
    y = (np.sum(X ** 2, axis=1) < 1.3).astype(int)
    est = PACBayesAUC(method=method, kernel="rbf", lam=200.0, n_particles=50,
                      len_chain=5, random_state=0).fit(X, y)
    assert not hasattr(est, "coef_")
    X_test = rng.normal(size=(1000, 2))
    y_test = (np.sum(X_test ** 2, axis=1) < 1.3).astype(int)
    assert est.score(X_test, y_test) > 0.95
    assert np.array_equal(est.predict(X_test), (est.decision_function(X_test) > 0)
                          .astype(int))
    assert 0 < est.bound_.auc_risk_bound_two_sample < 1


def test_evidence_maximisation_moves_the_spike_slab_hyperparameters():
    X, y = _sparse()
    fixed = PACBayesAUC(method="ep", prior="spike_slab", lam=240.0).fit(X, y)
    tuned = PACBayesAUC(method="ep", prior="spike_slab", lam=240.0,
                        hyperparameters="evidence").fit(X, y)
    assert tuned.log_evidence_ >= fixed.log_evidence_ - 1e-6
    assert tuned.hyperparameters_ != fixed.hyperparameters_


def test_smc_evidence_grid_picks_the_best_spike_variance():
    X, y = _sparse(n=150)
    est = PACBayesAUC(method="smc", prior="spike_slab", lam=150.0,
                      hyperparameters="evidence", n_particles=40, len_chain=4,
                      random_state=0).fit(X, y)
    grid = est.evidence_grid_
    assert len(grid.params) == 4
    assert est.hyperparameters_ == grid.params[int(np.argmax(grid.log_z))]


def test_ep_evidence_leaves_the_kernel_parameter_as_given():
    from pac_particles.core.kernels import SquaredExponential
    rng = np.random.default_rng(1)
    X = rng.normal(size=(80, 2))
    y = (np.sum(X ** 2, axis=1) < 1.3).astype(int)
    kernel = SquaredExponential(lengthscale=1.0)
    est = PACBayesAUC(method="ep", kernel=kernel, lam=80.0,
                      hyperparameters="evidence", random_state=0).fit(X, y)
    assert kernel.lengthscale.tolist() == [1.0]
    assert est.hyperparameters_["kernel"].lengthscale[0] != 1.0


@pytest.mark.parametrize("params, message", [
    (dict(method="vb", kernel="rbf"), "vb"),
    (dict(prior="lasso"), "prior"),
    (dict(kernel=3), "kernel"),
    (dict(prior="spike_slab", kernel="rbf"), "spike_slab"),
    (dict(hyperparameters="ml"), "hyperparameters"),
])
def test_incompatible_options_are_value_errors(params, message):
    X, y = _data(n=40)
    with pytest.raises(ValueError, match=message):
        PACBayesAUC(lam=10.0, **params).fit(X, y)


@pytest.mark.parametrize("params", [
    dict(method="smc", lam=50.0), dict(method="smc", lam="cv", n_folds=2),
    dict(method="ep", lam="cv"), dict(method="vb", lam="cv", n_folds=2),
    dict(method="ep", lam=50.0, kernel="rbf"),
])
def test_a_constant_column_is_dropped_with_one_warning_per_fit(params):
    X, y = _data(n=80)
    X = np.column_stack([X[:, :1], np.full(len(X), 3.0), X[:, 1:]])
    est = PACBayesAUC(lam_max=300.0, grid_size=3, n_particles=30, len_chain=3,
                      random_state=0, **params)
    with pytest.warns(UserWarning, match="constant column") as record:
        est.fit(X, y)
    assert sum("constant column" in str(w.message) for w in record) == 1
    scores = est.decision_function(X)
    assert scores.shape == (80,) and est.score(X, y) > 0.5
    if "kernel" not in params:
        assert est.coef_.shape == (4,) and est.coef_[1] == 0.0
        np.testing.assert_allclose(scores, X @ est.coef_ + est.intercept_)


@pytest.mark.parametrize("params, message", [
    (dict(n_folds=1), "n_folds"), (dict(lam_max=-5.0), "lam_max"),
    (dict(pu_prior=1.0), "pu_prior"), (dict(spike_slab=(0.5, 1.0)), "spike_slab"),
    (dict(method="mcmc"), "method"), (dict(grid_size=2.5), "grid_size"),
])
def test_bad_parameters_are_input_errors(params, message):
    from pac_particles.core.checks import InputError
    X, y = _data(n=40)
    with pytest.raises(InputError, match=message):
        PACBayesAUC(**params).fit(X, y)


def test_lam_cv_grids_are_one_grid_for_every_method():
    from pac_particles.sklearn.selection import lam_grid
    X, y = _data(n=120)
    for method in ("ep", "vb"):
        est = PACBayesAUC(method=method, lam="cv", lam_max=400.0, grid_size=5,
                          n_folds=2, random_state=0).fit(X, y)
        # a subset of the one grid: the leave-one-out choices score it
        # coarse then fine (LOO_GRID_STRIDE), the folds all of it
        assert np.all(np.isin(est.cv_.grid, lam_grid(400.0, 5)))
        assert est.cv_.grid[-1] == 400.0
        assert est.cv_.best_lam == est.lam_ and len(est.cv_.fold_paths) \
            == est.cv_.fold_auc.shape[0]


# ------------------------------------------------- pandas: names in, names out

def _frame(n=200, seed=0):
    pd = pytest.importorskip("pandas")
    X, y = noisy_linear(n, [1.0, -0.5, 0.0], seed=seed)
    return pd.DataFrame(X, columns=["glucose", "age", "noise"]), pd.Series(y)


@pytest.mark.parametrize("method", ["smc", "ep"])
def test_a_dataframe_round_trips_feature_names_into_named_coefficients(method):
    X, y = _frame()
    est = PACBayesAUC(method=method, lam=200.0, n_particles=30, len_chain=3,
                      random_state=0).fit(X, y)
    assert list(est.feature_names_in_) == ["glucose", "age", "noise"]
    coefficients = est.coefficients_
    assert list(coefficients.index) == ["glucose", "age", "noise"]
    np.testing.assert_array_equal(coefficients.to_numpy(), est.coef_)
    # the same numbers as a fit on the bare array, and scores of a frame
    bare = PACBayesAUC(method=method, lam=200.0, n_particles=30, len_chain=3,
                       random_state=0).fit(X.to_numpy(), y.to_numpy())
    np.testing.assert_allclose(est.coef_, bare.coef_)
    np.testing.assert_allclose(est.decision_function(X),
                               bare.decision_function(X.to_numpy()))
    with pytest.raises(ValueError, match="feature names"):
        est.decision_function(X[["age", "glucose", "noise"]])


def test_without_a_dataframe_coefficients_are_named_x1_to_xd():
    pytest.importorskip("pandas")
    X, y = noisy_linear(120, [1.0, -0.5], seed=1)
    est = PACBayesAUC(method="ep", lam=120.0).fit(X, y)
    assert not hasattr(est, "feature_names_in_")
    assert list(est.coefficients_.index) == ["x1", "x2"]


def test_inclusion_probabilities_are_named_by_the_kept_features():
    X, y = _frame(seed=2)
    X.insert(1, "constant", 1.0)
    with pytest.warns(UserWarning, match="constant"):
        est = PACBayesAUC(method="ep", prior="spike_slab", lam=200.0).fit(X, y)
    probs = est.inclusion_probabilities_
    assert list(probs.index) == ["glucose", "age", "noise"]
    np.testing.assert_array_equal(probs.to_numpy(), est.inclusion_probs_)
    assert list(est.coefficients_.index) == ["glucose", "constant", "age",
                                             "noise"]
    assert est.coefficients_["constant"] == 0.0


@pytest.mark.parametrize("method", ["smc", "vb"])
def test_to_inference_data_names_the_coordinates_by_feature(method):
    pytest.importorskip("arviz")
    X, y = _frame(seed=3)
    est = PACBayesAUC(method=method, lam=200.0, n_particles=30, len_chain=3,
                      random_state=0).fit(X, y)
    idata = est.to_inference_data(seed=0)
    assert list(idata.posterior.feature.values) == ["glucose", "age", "noise"]
    if method == "smc":
        assert float(idata.sample_stats.log_marginal_likelihood[0]) == \
            est.log_evidence_
    else:
        assert float(idata.sample_stats.elbo[0]) == est.log_evidence_


# ---------------------------------------------- score, probabilities, EP's lam

def _fitted_ep(seed=0):
    X, y = _data(seed=seed)
    return PACBayesAUC(method="ep", lam=200.0).fit(X, y), X, y


@pytest.mark.parametrize("labels, message", [
    (lambda y: np.full(y.size, "yes"), "only one class"),
    (lambda y: np.where(np.arange(y.size) % 3 == 0, "maybe", y), "not seen in fit"),
    (lambda y: np.where(np.arange(y.size) % 2 == 0, "a", "b"), "not seen in fit"),
    (lambda y: np.where(np.arange(y.size) % 7 == 0, np.nan,
                        (y == "yes").astype(float)), "NaN"),
    (lambda y: np.c_[y, y], "1-D"),
])
def test_score_validates_labels_like_fit(labels, message):
    # one class used to give NaN, unknown labels or NaN a number
    est, X, y = _fitted_ep()
    with pytest.raises(ValueError, match=message):
        est.score(X, labels(y))


def test_score_with_numeric_labels_and_errors_before_fit():
    from sklearn.exceptions import NotFittedError
    X, y = _data()
    y01 = (y == "yes").astype(int)
    est = PACBayesAUC(method="ep", lam=200.0)
    with pytest.raises(NotFittedError):
        est.score(X, y01)
    est.fit(X, y01)
    assert est.score(X, y01) == pytest.approx(
        roc_auc_score(y01, est.decision_function(X)))
    with pytest.raises(ValueError, match="not seen in fit"):
        est.score(X, np.where(y01 == 1, 2, 0))          # labels {0, 2}
    with pytest.raises(ValueError, match="rows"):
        est.score(X[:-1], y01)


def test_predict_proba_is_a_calibrated_logistic_map_of_the_score():
    # well-specified logistic data, balanced: the true P(y = 1 | x) is known
    rng = np.random.default_rng(3)
    X = rng.normal(size=(1500, 3))
    w = np.array([1.5, -1.0, 0.5])
    p_true = 1.0 / (1.0 + np.exp(-X @ w))
    y = (rng.random(1500) < p_true).astype(int)
    est = PACBayesAUC(method="ep", lam=1500.0).fit(X, y)
    proba = est.predict_proba(X)
    assert proba.shape == (1500, 2)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert np.array_equal(est.classes_[proba.argmax(axis=1)], est.predict(X))
    assert np.mean(np.abs(proba[:, 1] - p_true)) < 0.04
    assert np.all(np.diff(proba[np.argsort(est.decision_function(X)), 1]) >= 0)


def test_neg_log_loss_scoring_works():
    X, y = _data()
    scores = cross_val_score(PACBayesAUC(method="ep", lam=200.0), X, y,
                             scoring="neg_log_loss", cv=3)
    assert np.all(np.isfinite(scores)) and np.all(scores < 0)
    assert scores.mean() > -np.log(2)          # better than a coin


def test_ep_lam_by_leave_one_out_never_picks_a_collapsed_fit():
    # one positive in 200 rows: EP collapses for lam >= ~300, where the
    # leave-one-out AUC of the collapsed fit used to read 1.0
    import warnings
    from pac_particles.approx.ep import EPConvergenceWarning
    rng = np.random.default_rng(1)
    X = rng.standard_normal((200, 3))
    y = np.zeros(200, int)
    y[0] = 1
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = PACBayesAUC(method="ep", lam="cv", grid_size=8).fit(X, y)
    assert est.posterior_.converged and not est.posterior_.degenerate
    assert np.linalg.norm(est.coef_) > 0.1
    assert est.lam_ < 300
    # issue 31: the collapsed values are recorded; no warning, since none
    # is next to the chosen lam (the curve is flat: one positive)
    assert est.lam_grid_failures_.size and est.lam_grid_failures_.min() > 300
    assert not any(issubclass(w.category, EPConvergenceWarning)
                   for w in caught)


def test_ep_fit_at_a_lam_where_ep_collapses_is_an_error():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((100, 3))
    y = (X[:, 0] + 2.0 * rng.standard_normal(100) > 0).astype(int)
    with pytest.warns(Warning):
        with pytest.raises(ValueError, match="EP failed at lam"):
            PACBayesAUC(method="ep", lam=1e5).fit(X, y)


@pytest.mark.parametrize("params, message", [
    (dict(kernel=np.eye(5)), "kernel must be"),
    (dict(random_state="a"), "random_state"),
    (dict(random_state=-1), "random_state"),
    (dict(n_particles=50.7), "n_particles"),
    (dict(len_chain="10"), "len_chain"),
    (dict(fold_particles=1), "fold_particles"),
    (dict(fold_len_chain=2.5), "fold_len_chain"),
    (dict(prior_var="big"), "prior_var"),
    (dict(n_jobs=0), "n_jobs"),
    (dict(n_jobs=1.5), "n_jobs"),
    (dict(spike_slab=(0.5, "x", 1.0), prior="spike_slab"), "v0"),
])
def test_bad_estimator_parameters_are_named(params, message):
    X, y = _data()
    with pytest.raises(ValueError, match=message):
        PACBayesAUC(method="ep", lam=200.0, **params).fit(X, y)


def test_a_refit_does_not_report_the_previous_fits_held_out_auc():
    X, y = _data()
    est = PACBayesAUC(method="ep", lam="cv", grid_size=3).fit(X, y)
    assert est.heldout_auc_ is not None and hasattr(est, "cv_")
    est.set_params(method="vb", lam=200.0).fit(X, y)
    # VB on all pairs has its own leave-one-out AUC, not the previous one
    assert est.heldout_auc_ == pytest.approx(est.approximation_.loo_auc())
    assert not hasattr(est, "cv_")
    est.set_params(method="smc", n_particles=30, len_chain=3).fit(X, y)
    assert est.heldout_auc_ is None and not hasattr(est, "cv_auc_")


@pytest.mark.parametrize("kwargs", [dict(method="ep"), dict(method="vb"),
                                    dict(method="ep", kernel="rbf")])
def test_corollary19_of_a_gaussian_fit_is_the_library_bound(kwargs):
    """``bound_`` reuses the certificate's E_rho[R_n] and KL: the same
    figures as ``pac_bayes_bound_gaussian`` / ``pac_bayes_bound_gp``
    computing them anew from the fitted mean and covariance."""
    from pac_particles.bounds import (pac_bayes_bound_gaussian,
                                      pac_bayes_bound_gp)
    X, y = _data()
    est = PACBayesAUC(lam=80.0, random_state=0, **kwargs).fit(X, y)
    post, data = est.posterior_, est.approximation_.data
    # the fit's BLAS runs on one thread; so does the reference, whose
    # rounding would otherwise differ (GP: in the 7th digit)
    from pac_particles.core.parallel import one_blas_thread
    with one_blas_thread():
        if "kernel" in kwargs:
            ref = pac_bayes_bound_gp(post.mean, post.cov,
                                     est.approximation_.prior_cov(), data.y,
                                     80.0, eps=est.eps)
        else:
            ref = pac_bayes_bound_gaussian(post.mean, post.cov, data.X,
                                           data.y, 80.0, standardize=False,
                                           eps=est.eps)
    assert est.bound_.bound == pytest.approx(ref.bound, rel=1e-9)
    assert est.bound_.auc_risk_bound_two_sample == pytest.approx(
        ref.auc_risk_bound_two_sample, rel=1e-9)


def test_ess_rmin_sets_the_schedule_of_every_smc_run_of_the_fit(monkeypatch):
    """``ess_rmin`` reaches run_smc in the final run, the folds and the
    refit of ``lam='cv'`` and the evidence grid, and a larger target ESS
    ratio makes a denser schedule (more tempering steps, same seed)."""
    from sklearn.base import clone
    from pac_particles.sklearn.methods import smc as smc_method
    from pac_particles.sklearn.selection import evidence, folds, scorers
    from pac_particles.smc import posterior
    X, y = _data(n=60)
    steps = {}
    for ess in (0.3, 0.9):
        # the folds temper from the prior: their paths show the schedule
        est = PACBayesAUC(lam="cv", n_folds=2, grid_size=3, n_particles=10,
                          len_chain=3, ess_rmin=ess, cv_rule="best",
                          random_state=0, n_jobs=1).fit(X, y)
        steps[ess] = est.cv_.fold_paths[0][0].size
    assert steps[0.9] > steps[0.3]
    received = []

    def spy(model, **kwargs):
        received.append(kwargs["ESSrmin"])
        return posterior.run_smc(model, **kwargs)
    for module in (smc_method, folds, scorers, evidence):
        monkeypatch.setattr(module, "run_smc", spy)
    small = dict(n_particles=10, len_chain=3, ess_rmin=0.7, random_state=0,
                 n_jobs=1)
    clone(PACBayesAUC(lam=30.0, **small)).fit(X, y)
    PACBayesAUC(lam="cv", n_folds=2, grid_size=3, **small).fit(X, y)
    PACBayesAUC(lam=30.0, prior="spike_slab", hyperparameters="evidence",
                **small).fit(X, y)
    # 1 run; 2 folds + the path refit; 4 spike variances + the final run
    assert received == [0.7] * (1 + 3 + 5)


@pytest.mark.parametrize("ess_rmin", [0.0, 1.0, 1.5, "half"])
def test_ess_rmin_outside_zero_one_is_refused(ess_rmin):
    X, y = _data(n=40)
    with pytest.raises(ValueError, match="ess_rmin"):
        PACBayesAUC(lam=20.0, ess_rmin=ess_rmin).fit(X, y)


def test_auto_chooses_the_method_from_the_size_and_records_it(monkeypatch):
    """``method="auto"``: SMC up to its ``auto_max_rows`` rows, VB above
    (EP for a GP kernel or a spike-and-slab prior, and below the limit
    where SMC refuses lam='cv' for them); ``method_`` says which ran, and
    the fit is the one of that method."""
    from pac_particles.sklearn.methods import FitOptions, choose_method
    from pac_particles.sklearn.methods.smc import SMC
    limit = SMC.auto_max_rows
    fixed = dict(lam=10.0)
    assert choose_method("auto", FitOptions(**fixed), limit).name == "smc"
    assert choose_method("auto", FitOptions(**fixed), limit + 1).name == "vb"
    for prior in (dict(kernel="rbf"), dict(prior="spike_slab")):
        assert choose_method("auto", FitOptions(**fixed, **prior),
                             limit + 1).name == "ep"
        assert choose_method("auto", FitOptions(**fixed, **prior),
                             limit).name == "smc"
        assert choose_method("auto", FitOptions(**prior), limit).name == "ep"
    assert choose_method("ep", FitOptions(), 10).name == "ep"
    assert choose_method("auto", FitOptions(), 10,
                         in_memory=False).name == "vb"
    X, y = _data(n=80)
    small = PACBayesAUC(lam=40.0, n_particles=20, len_chain=3,
                        random_state=0).fit(X, y)
    assert small.method == "auto" and small.method_ == "smc"
    assert small.posterior_.evidence_method in ("importance sampling",
                                                "tempering")
    monkeypatch.setattr(SMC, "auto_max_rows", 50)
    large = PACBayesAUC(lam=40.0, random_state=0).fit(X, y)
    assert large.method_ == "vb" and large.posterior_.evidence_method == "ELBO"
    vb = PACBayesAUC(method="vb", lam=40.0, random_state=0).fit(X, y)
    np.testing.assert_allclose(large.coef_, vb.coef_)


def test_vb_lam_cv_at_scale_scores_one_held_out_split(monkeypatch):
    """Above HOLDOUT_ABOVE_ROWS rows VB's lam='cv' refits on one stratified
    held-out split (one row of validation AUCs, on the grid values its path
    scored), not n_folds folds."""
    from pac_particles.sklearn.methods import vb as vb_method
    from pac_particles.sklearn.selection import holdout_split, lam_grid
    X, y = _data(n=120)
    monkeypatch.setattr(vb_method, "HOLDOUT_ABOVE_ROWS", 100)
    monkeypatch.setattr(vb_method, "HOLDOUT_MIN_MINORITY", 10)
    monkeypatch.setattr(vb_method, "VB_LOO_MAX_FEATURES", 0)   # folds, not LOO
    est = PACBayesAUC(method="vb", lam="cv", lam_max=500.0, grid_size=4,
                      n_folds=3, random_state=0).fit(X, y)
    assert est.cv_.fold_auc.shape[0] == 1
    assert set(est.cv_.grid) <= set(lam_grid(500.0, 4))
    positives = y == "yes"
    train, val = holdout_split(positives, vb_method.HOLDOUT_FRACTION, 0)
    assert len(val) == pytest.approx(0.2 * len(y), abs=2)
    assert not set(train) & set(val) and len(train) + len(val) == len(y)
    assert abs(np.mean(positives[val]) - np.mean(positives)) < 0.02


def test_ep_says_in_one_line_before_it_samples_pairs(monkeypatch):
    """Where EP would sample pairs (more than AUTO_MAX_PAIRS), the fit warns
    before it starts and points to VB; below, it does not."""
    import warnings
    from pac_particles.sklearn.methods import ep as ep_method
    X, y = _data(n=60)
    monkeypatch.setattr(ep_method, "AUTO_MAX_PAIRS", 100)
    with pytest.warns(ep_method.SampledPairsWarning, match="method='vb'"):
        PACBayesAUC(method="ep", lam=30.0).fit(X, y)
    monkeypatch.setattr(ep_method, "AUTO_MAX_PAIRS", 10 ** 9)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ep_method.SampledPairsWarning)
        PACBayesAUC(method="ep", lam=30.0).fit(X, y)


def test_the_reference_bound_is_evaluated_when_first_read(monkeypatch):
    """Corollary 19 (``bound_``) is no part of the certificate: a fit
    defers it, the first read evaluates it once, and a pickled fit
    evaluates the same bound."""
    import pickle

    import pac_particles.sklearn.estimator as module
    X, y = noisy_linear(200, [1.0, -0.5, 0.3], seed=0)
    kept = pickle.dumps(PACBayesAUC(method="vb", random_state=0).fit(X, y))
    calls = []
    original = module.fitted_gaussian_bound

    def counting(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)
    monkeypatch.setattr(module, "fitted_gaussian_bound", counting)
    est = PACBayesAUC(method="vb", random_state=0).fit(X, y)
    assert calls == [] and est.certificate_ is not None
    first = est.bound_.auc_risk_bound_rigorous
    assert est.bound_.auc_risk_bound_rigorous == first and calls == [1]
    assert 0.0 <= first <= 1.0
    assert pickle.loads(kept).bound_.auc_risk_bound_rigorous == first
    with pytest.raises(AttributeError):
        PACBayesAUC().bound_
