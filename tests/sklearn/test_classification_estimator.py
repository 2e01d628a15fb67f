"""PACBayesClassifier: scikit-learn conformance, posterior predictive,
choice of lam, against logistic regression."""

import numpy as np
import pytest
from scipy.special import ndtr
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import cross_val_score, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import check_estimator

from pac_particles.core.checks import InputError
from pac_particles.sklearn.classifier import PACBayesClassifier
from builders import two_d_problem


def _platt_reference(f, y, fit_intercept=True):
    """scikit-learn's unpenalised logistic regression on the score column
    with Platt's targets ``(N+ + 1) / (N+ + 2)`` and ``1 / (N- + 2)``: each
    row twice, once per label, weighted by its target's share."""
    y = np.asarray(y, dtype=bool)
    n_pos, n_neg = y.sum(), (~y).sum()
    t = np.where(y, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))
    return LogisticRegression(C=np.inf, fit_intercept=fit_intercept,
                              tol=1e-12, max_iter=10_000).fit(
        np.r_[f, f][:, None], np.r_[np.ones(f.size), np.zeros(f.size)],
        sample_weight=np.r_[t, 1.0 - t])


@pytest.mark.parametrize("method", ["smc", "vb"])
def test_passes_scikit_learn_estimator_checks(method):
    results = check_estimator(
        PACBayesClassifier(method=method, lam=30.0, n_particles=30,
                           len_chain=3, random_state=0), on_fail=None)
    failed = [(r["check_name"], str(r["exception"])[:200]) for r in results
              if r["status"] == "failed"]
    assert failed == []


def test_smc_vote_is_the_weighted_vote_of_the_particles():
    X, y = two_d_problem(n=80)
    est = PACBayesClassifier(method="smc", lam=80.0, n_particles=50, len_chain=4,
                             random_state=0).fit(X, np.where(y, "b", "a"))
    post = est.posterior_
    Z = np.column_stack([(X - X.mean(0)) / X.std(0), np.ones(80)])
    vote = np.array([np.sum(post.weights * (post.theta @ z > 0)) for z in Z])
    np.testing.assert_allclose(est.vote_probability(X), vote, atol=1e-12)
    assert set(est.predict(X)) <= {"a", "b"}
    assert est.log_evidence_ == post.log_z
    # coef_ and intercept_ replay the posterior mean on raw inputs, less
    # predict's cut
    np.testing.assert_allclose(X @ est.coef_ + est.intercept_ + est.threshold_,
                               Z @ post.mean, atol=1e-10)


def test_vb_vote_is_the_probit_of_the_gaussian_margin():
    X, y = two_d_problem(n=80)
    est = PACBayesClassifier(method="vb", loss="hinge", lam=80.0).fit(X, y)
    res = est.approximation_.result_
    Z = est.data_.transform(X)
    expected = ndtr(Z @ res.mean / np.sqrt(np.einsum("ij,jk,ik->i", Z,
                                                     res.cov, Z)))
    np.testing.assert_allclose(est.vote_probability(X), expected)
    assert est.log_evidence_ == res.elbo


@pytest.mark.parametrize("method", ["smc", "vb", "ep"])
def test_the_deployed_rule_is_the_mean_with_platt_probabilities(method):
    """decision_function is the posterior mean's score on raw inputs less
    Platt's cut, predict its sign, predict_proba expit(proba_slope_ *
    decision_function): the maximum-likelihood sigmoid of the training
    scores (scikit-learn's unpenalised logistic regression on the one
    score column, Platt's targets); without an intercept the cut stays 0."""
    X, y = two_d_problem(n=90)
    for fit_intercept in (True, False):
        est = PACBayesClassifier(method=method, lam=60.0, n_particles=40,
                                 len_chain=4, random_state=0,
                                 fit_intercept=fit_intercept).fit(X, y)
        mean_score = est.data_.transform(X) @ est.posterior_.mean
        f = est.decision_function(X)
        np.testing.assert_allclose(f, mean_score - est.threshold_, atol=1e-10)
        np.testing.assert_array_equal(est.predict(X), (f > 0).astype(int))
        np.testing.assert_allclose(est.predict_proba(X)[:, 1],
                                   1.0 / (1.0 + np.exp(-est.proba_slope_ * f)),
                                   rtol=1e-12)
        reference = _platt_reference(mean_score, y == 1, fit_intercept)
        slope = reference.coef_[0, 0]
        assert est.proba_slope_ == pytest.approx(slope, rel=1e-4)
        if fit_intercept:
            assert est.threshold_ == pytest.approx(
                -reference.intercept_[0] / slope, abs=1e-4)
        else:
            assert est.threshold_ == 0.0


def test_the_cut_makes_the_hinge_rule_as_accurate_as_logistic_regression():
    """On logistic data the hinge loss's own cut (0) is offset from the
    most accurate one: the deployed cut recovers logistic regression's test
    accuracy, where the loss's cut is rejected by the same check."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(60_000, 3))
    y = (rng.uniform(size=60_000) < 1.0 / (1.0 + np.exp(
        -(X @ [1.0, -0.5, 0.25] - 1.5)))).astype(int)
    X_te, y_te = X[30_000:], y[30_000:]
    est = PACBayesClassifier(loss="hinge", method="vb", lam=30_000.0,
                             random_state=0).fit(X[:30_000], y[:30_000])
    lr = LogisticRegression().fit(X[:30_000], y[:30_000])
    baseline = np.mean(lr.predict(X_te) == y_te)
    ours = np.mean(est.predict(X_te) == y_te)
    own_cut = np.mean((est.decision_function(X_te) + est.threshold_ > 0)
                      == y_te)
    assert abs(ours - baseline) < 0.002
    assert own_cut < baseline - 0.01


def test_platt_probabilities_are_calibrated_and_the_vote_is_not():
    """On logistic data the deployed probabilities' test log-loss is the
    logistic regression's to a few percent and they rank as the score does;
    the randomised classifier's vote, taken as a probability, is rejected by
    the same check (its log-loss is far above)."""
    from sklearn.metrics import log_loss, roc_auc_score
    rng = np.random.default_rng(3)
    X = rng.normal(size=(6000, 4))
    y = (rng.uniform(size=6000) < 1.0 / (1.0 + np.exp(
        -(X @ [1.0, -0.5, 0.25, 0.0] - 0.8)))).astype(int)
    X_te, y_te = X[3000:], y[3000:]
    est = PACBayesClassifier(method="vb", lam=3000.0, random_state=0).fit(
        X[:3000], y[:3000])
    lr = LogisticRegression().fit(X[:3000], y[:3000])
    ours = log_loss(y_te, est.predict_proba(X_te)[:, 1])
    baseline = log_loss(y_te, lr.predict_proba(X_te)[:, 1])
    vote = np.clip(est.vote_probability(X_te), 1e-15, 1 - 1e-15)
    assert ours < 1.03 * baseline
    assert log_loss(y_te, vote) > 1.2 * baseline
    assert roc_auc_score(y_te, est.predict_proba(X_te)[:, 1]) == \
        pytest.approx(roc_auc_score(y_te, est.decision_function(X_te)),
                      abs=1e-12)


def test_platt_sigmoid_is_the_maximum_likelihood_sigmoid():
    """Against scikit-learn's unpenalised logistic regression on the one
    score column with Platt's targets: slope and cut, or the slope alone
    with the cut held; separable scores keep a finite slope, one class has
    nothing to fit."""
    from pac_particles.sklearn.binary import platt_sigmoid
    rng = np.random.default_rng(1)
    f = rng.normal(2.0, 3.0, size=4000)
    y = rng.uniform(size=4000) < 1.0 / (1.0 + np.exp(-1.7 * (f - 0.4)))
    slope, cut = platt_sigmoid(f, y)
    ref = _platt_reference(f, y)
    assert slope == pytest.approx(ref.coef_[0, 0], rel=1e-6)
    assert cut == pytest.approx(-ref.intercept_[0] / ref.coef_[0, 0],
                                abs=1e-6)
    held_slope, held = platt_sigmoid(f, y, cut=1.0)
    ref = _platt_reference(f - 1.0, y, fit_intercept=False)
    assert held == 1.0
    assert held_slope == pytest.approx(ref.coef_[0, 0], rel=1e-6)
    # integer weights are repeated rows, the class counts included
    k = rng.integers(1, 4, size=4000)
    np.testing.assert_allclose(
        platt_sigmoid(f, y, weights=k),
        platt_sigmoid(np.repeat(f, k), np.repeat(y, k)), rtol=1e-6)
    np.testing.assert_allclose(
        platt_sigmoid(f, y, pu_prior=0.4, weights=k),
        platt_sigmoid(np.repeat(f, k), np.repeat(y, k), pu_prior=0.4),
        rtol=1e-6)
    # separable scores: Platt's targets keep the slope finite
    separable, _ = platt_sigmoid(f, f > 2.0)
    assert 1.0 / np.std(f) < separable < 1e3 / np.std(f)
    # one class: nothing to fit, the score's own sign (or the held cut)
    assert platt_sigmoid(f, np.zeros(4000, bool)) == (1.0 / np.std(f), 0.0)
    assert platt_sigmoid(f, np.ones(4000, bool), cut=1.5)[1] == 1.5


def test_the_pu_sigmoid_stays_finite_on_a_fits_own_scores():
    """A PU fit's own scores rank its labelled rows above the unlabelled
    positives: the case-control likelihood keeps a slope near the one the
    true classes give, where the unbiased rewrite of the log-loss (the
    wrong variant) runs to its bound on the same scores."""
    from scipy import optimize
    from pac_particles.sklearn.binary import platt_sigmoid
    rng = np.random.default_rng(10)
    X = rng.normal(size=(300, 30))
    truth = rng.uniform(size=300) < 1.0 / (1.0 + np.exp(
        -(X[:, :3] @ [2.0, -1.0, 1.0])))
    labelled = truth & (rng.uniform(size=300) < 0.5)
    pi = float(truth[~labelled].mean())
    est = PACBayesClassifier(method="vb", lam=300.0, pu_prior=pi,
                             random_state=0).fit(X, labelled.astype(int))
    f = est.decision_function(X) + est.threshold_
    oracle, _ = platt_sigmoid(f[~labelled], truth[~labelled])
    assert oracle / 3.0 < est.proba_slope_ < 3.0 * oracle
    u = f / np.std(f)

    def rewrite(beta):
        z = beta[0] * u + beta[1]
        return (np.mean(np.logaddexp(0.0, z[~labelled]))
                - pi * np.mean(z[labelled]))
    wrong = optimize.minimize(rewrite, [1.0, 0.0], method="L-BFGS-B",
                              bounds=[(np.exp(-10), np.exp(10)), (None, None)])
    assert wrong.x[0] > 100.0 * est.proba_slope_ * np.std(f)


def test_the_pu_slope_is_the_slope_of_the_unlabelled_rows_classes():
    """With PU labels the slope minimises the unbiased log-loss of the
    unlabelled population: it matches the slope fitted on their true classes
    (known here), and the slope of the labels themselves does not."""
    from pac_particles.sklearn.binary import platt_sigmoid
    rng = np.random.default_rng(0)
    # classes N(+-1, 1) in equal parts: P(y = 1 | x) = expit(2 x)
    labelled = rng.normal(1.0, 1.0, size=5000)
    truth = rng.uniform(size=20000) < 0.5
    unlabelled = np.where(truth, 1.0, -1.0) + rng.normal(size=20000)
    f = np.concatenate([labelled, unlabelled])
    marks = np.arange(f.size) < labelled.size
    pu = platt_sigmoid(f, marks, pu_prior=0.5)
    oracle = platt_sigmoid(unlabelled, truth)
    assert oracle[0] == pytest.approx(2.0, abs=0.1)
    assert abs(oracle[1]) < 0.05
    assert pu[0] == pytest.approx(oracle[0], abs=0.15)
    assert pu[1] == pytest.approx(oracle[1], abs=0.05)
    naive = platt_sigmoid(f, marks)
    assert abs(naive[0] - oracle[0]) > 0.5 or abs(naive[1]) > 0.3
    # the slope alone, the cut held at 0
    assert platt_sigmoid(f, marks, pu_prior=0.5, cut=0.0)[0] == \
        pytest.approx(oracle[0], abs=0.15)
    X, y = two_d_problem(n=120)
    est = PACBayesClassifier(method="vb", lam=60.0, pu_prior=0.3).fit(X, y)
    mean_score = est.data_.transform(X) @ est.posterior_.mean
    assert (est.proba_slope_, est.threshold_) == pytest.approx(
        platt_sigmoid(mean_score, y == 1, 0.3), rel=1e-9)


@pytest.mark.parametrize("method", ["smc", "vb"])
def test_cv_picks_the_grid_value_of_best_mean_accuracy(method):
    X, y = two_d_problem(n=120)
    est = PACBayesClassifier(method=method, lam="cv", grid_size=6, n_folds=3,
                             n_particles=40, len_chain=4,
                             random_state=0).fit(X, y)
    cv = est.cv_
    assert cv.grid.size == 6 and cv.fold_auc.shape == (3, 6)
    assert est.lam_ == cv.grid[np.argmax(cv.fold_auc.mean(axis=0))]
    assert np.all((cv.fold_auc >= 0) & (cv.fold_auc <= 1))
    assert cv.mean_auc.max() > 0.75


@pytest.mark.parametrize("method", ["smc", "vb"])
def test_default_lam_cv_fits_data_with_fewer_members_per_class_than_folds(
        method):
    """The default ``lam='cv'`` (5 folds) on 10 rows with 3 positives (the
    data of scikit-learn's ``check_fit2d_1feature``) uses 3 folds and says
    so; with one positive it refuses and names the fix."""
    from pac_particles.sklearn.selection import FewerFoldsWarning
    X = np.linspace(0.0, 3.0, 10)[:, None]
    y = np.zeros(10, dtype=int)
    y[[1, 4, 8]] = 1
    with pytest.warns(FewerFoldsWarning, match="using 3 folds"):
        est = PACBayesClassifier(method=method, grid_size=5, n_particles=30,
                                 len_chain=3, random_state=0).fit(X, y)
    assert est.cv_.fold_auc.shape == (3, 5)
    y[[1, 4]] = 0
    with pytest.raises(InputError, match="float lam"):
        PACBayesClassifier(method=method, random_state=0).fit(X, y)


def test_breast_cancer_accuracy_is_close_to_logistic_regression():
    X, y = load_breast_cancer(return_X_y=True)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.3,
                                              stratify=y, random_state=0)
    lr = make_pipeline(StandardScaler(), LogisticRegression()).fit(X_tr, y_tr)
    for est in (PACBayesClassifier(method="vb", loss="hinge", lam=400.0),
                PACBayesClassifier(method="smc", lam=400.0, n_particles=100, len_chain=5,
                                   random_state=0)):
        est.fit(X_tr, y_tr)
        assert est.score(X_te, y_te) > lr.score(X_te, y_te) - 0.04


def test_works_in_cross_val_score():
    X, y = two_d_problem(n=90)
    scores = cross_val_score(PACBayesClassifier(method="vb", lam=50.0), X, y,
                             cv=3, scoring="roc_auc")
    assert scores.mean() > 0.8


@pytest.mark.parametrize("kwargs, match", [
    (dict(method="mcmc"), "method"), (dict(loss="square"), "loss"),
    (dict(lam=-1.0), "lam"), (dict(lam="auto"), "lam"),
    (dict(vb_family="banded"), "vb_family")])
def test_bad_parameters_are_refused(kwargs, match):
    X, y = two_d_problem(n=30)
    with pytest.raises(InputError, match=match):
        PACBayesClassifier(**kwargs).fit(X, y)
    with pytest.raises(InputError, match="binary"):
        PACBayesClassifier(lam=1.0).fit(X, np.arange(30) % 3)


@pytest.mark.parametrize("verbose, expect", [("lines", True), (False, False)])
def test_the_choice_of_lam_reports_each_grid_value(capsys, verbose, expect):
    """``verbose`` reaches the classifier's folds: one line per fold and
    grid value scored, none when quiet."""
    X, y = two_d_problem(n=120)
    est = PACBayesClassifier(method="vb", grid_size=4, n_folds=3,
                             random_state=0, verbose=verbose).fit(X, y)
    lines = [line for line in capsys.readouterr().err.splitlines()
             if "accuracy" in line and "lam " in line]
    assert len(lines) == (3 * len(est.cv_.grid) if expect else 0)
    assert all(f"fold (seed {k})" in "".join(lines) for k in range(3)
               if expect)


def test_the_deployed_certificate_is_computed_when_first_read(monkeypatch):
    """As for ranking: the fit leaves the derandomised certificate to its
    first read, which (and a pickled copy's) equals the certificate
    computed on its own; ``deploy='certified'`` computes the part-A rule's
    in the fit, whose coefficients it deploys."""
    import pickle
    from pac_particles.bounds import certification, certify
    from pac_particles.problem.problem import GibbsProblem
    from pac_particles.sklearn.binary import certificate_spec
    X, y = two_d_problem(n=300, seed=3)[:2]
    reads = []
    real = certification.margin_rows
    monkeypatch.setattr(certification, "margin_rows", lambda *a, **k:
                        reads.append(1) or real(*a, **k))
    real_deployed = certification._deployed
    monkeypatch.setattr(certification, "_deployed", lambda *a, **k:
                        reads.append(2) or real_deployed(*a, **k))
    est = PACBayesClassifier(method="vb", lam=50.0, random_state=0).fit(X, y)
    assert 2 not in reads
    copied = pickle.loads(pickle.dumps(est))
    problem = GibbsProblem.classification(X, y, 50.0)
    alone = certify(est.posterior_, problem,
                    certificate_spec(est, "deployed", est.threshold_))
    first = est.deployed_certificate_
    assert reads.count(2) == 2              # computed alone, then read
    for got in (first, copied.deployed_certificate_):
        assert got.bound == pytest.approx(alone.bound, rel=1e-12)
        assert 0.0 <= got.bound <= 1.0
    assert est.deployed_certificate_ is first and reads.count(2) == 3
    # it certifies predict's labels: its empirical term is their error on
    # part B, which the cut 0's differs from
    from pac_particles.bounds.certification import certificate_split
    in_b = ~certificate_split(y, certificate_spec(est), stratified=False)
    assert first.empirical_randomized_risk == pytest.approx(
        np.mean(est.predict(X[in_b]) != y[in_b]), abs=1e-12)
    uncut = certify(est.posterior_, problem, certificate_spec(est, "deployed"))
    assert uncut.empirical_randomized_risk != pytest.approx(
        first.empirical_randomized_risk, abs=1e-12)
    eager = PACBayesClassifier(method="vb", lam=50.0, random_state=0,
                               deploy="certified").fit(X, y)
    assert eager.__dict__["_deployed_certificate"].name == "held_out"
