"""``PACBayesAUC(kernel=...)`` with the reduced-rank GP prior: the rank by
size, a linear fit in the features with its certificate, and a feature map
that never sees the certificate's certifying part."""

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from pac_particles.bounds.certification import CertificateSpec, certificate_split
from pac_particles.core.checks import InputError
from pac_particles.problem.problem import GibbsProblem
from pac_particles.problem.reduced_rank import FeatureData
from pac_particles.sklearn.estimator import PACBayesAUC
from pac_particles.sklearn.reduced_rank_gp import gp_rank, reduced_rank_features


def _circles(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    y = (np.sum(X[:, :2] ** 2, axis=1) + 0.3 * rng.standard_normal(n)
         > 1.4).astype(int)
    return X, y


def test_a_reduced_rank_fit_scores_a_nonlinear_ranking_and_certifies_it():
    X, y = _circles(400, 0)
    X_test, y_test = _circles(2000, 1)
    est = PACBayesAUC(kernel="rbf", rank=40, lam=400.0, method="vb",
                      random_state=0).fit(X, y)
    assert est.rank_ == 40
    assert isinstance(est.posterior_.data, FeatureData)
    gp_auc = roc_auc_score(y_test, est.decision_function(X_test))
    linear = PACBayesAUC(lam=400.0, method="vb", random_state=0).fit(X, y)
    assert gp_auc > roc_auc_score(y_test, linear.decision_function(X_test)) + 0.2
    assert 0.0 <= est.certified_auc_risk_ <= 1.0
    assert est.deployed_certificate_ is not None
    # a score of features has no coefficients on the raw inputs
    assert est.certified_coef_ is None and "coef_" not in est.__dict__
    assert est.bound_ is None          # no prior fixed before every row
    assert np.array_equal(est.predict(X_test[:5]) == 1,
                          est.decision_function(X_test[:5]) > 0)


def test_the_rank_is_every_row_for_small_data_and_a_given_count_else():
    assert gp_rank("auto", 300) == 300
    assert gp_rank(50, 300) == 50 and gp_rank(500, 300) == 300
    assert gp_rank("auto", 10**5) < 10**5
    with pytest.raises(InputError, match="rank"):
        gp_rank("all", 10)
    X, y = _circles(60, 2)
    est = PACBayesAUC(kernel="rbf", lam=60.0, method="ep").fit(X, y)
    assert est.rank_ == 60 and est.posterior_.is_gp


def test_the_feature_map_never_sees_the_certifying_part():
    """Rows of the certificate's part B changed arbitrarily (labels kept,
    so the split is the same) leave the map, and its lengthscale chosen on
    A's labels, unchanged."""
    X, y = _circles(600, 3)
    spec = CertificateSpec(seed=0)
    problem = GibbsProblem.ranking(X, y, lam=1.0, standardize=True)
    in_b = ~certificate_split(problem.data.y, spec)
    moved = X.copy()
    moved[in_b] = 5.0 * moved[in_b] ** 3 + 2.0
    probe = np.random.default_rng(4).standard_normal((6, 3))
    maps = [reduced_rank_features(
        GibbsProblem.ranking(Z, y, lam=1.0, standardize=True), "rbf", 30,
        spec, seed=0).data for Z in (X, moved)]
    np.testing.assert_allclose(maps[0].transform(probe),
                               maps[1].transform(probe), atol=1e-8)
    # a change within A moves it: the comparison can fail
    moved[~in_b] *= 1.5
    other = reduced_rank_features(
        GibbsProblem.ranking(moved, y, lam=1.0, standardize=True), "rbf", 30,
        spec, seed=0).data
    assert not np.allclose(maps[0].transform(probe), other.transform(probe),
                           atol=1e-3)


def test_fisher_direction_is_the_discriminant_of_the_pooled_covariance():
    """Against scikit-learn's linear discriminant (least squares, no
    shrinkage): the same direction up to scale, on correlated features of
    unequal scales; a direction of the raw mean difference is not."""
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
    from pac_particles.sklearn.reduced_rank_gp import fisher_direction
    rng = np.random.default_rng(4)
    Phi = rng.standard_normal((3000, 6)) @ rng.standard_normal((6, 6))
    y = Phi @ rng.standard_normal(6) + rng.standard_normal(3000) > 0
    ours = fisher_direction(Phi, y)
    ref = LinearDiscriminantAnalysis(solver="lsqr").fit(Phi, y).coef_[0]
    cosine = ours @ ref / np.linalg.norm(ours) / np.linalg.norm(ref)
    assert cosine == pytest.approx(1.0, abs=1e-6)
    raw = Phi[y].mean(axis=0) - Phi[~y].mean(axis=0)
    assert raw @ ref / np.linalg.norm(raw) / np.linalg.norm(ref) < 0.99


def test_auc_standard_error_against_monte_carlo():
    """Hanley and McNeil's standard error against the spread of 2,000 AUCs
    of binormal scores (60 positives, 90 negatives; measured 0.0384
    against 0.0363); the spread of the pairs alone (as if the 5,400 pairs
    were independent) is far below it."""
    from pac_particles.sklearn.reduced_rank_gp import auc_standard_error
    rng = np.random.default_rng(0)
    labels = np.r_[np.ones(60), np.zeros(90)]
    aucs = [roc_auc_score(labels, np.r_[rng.normal(1.2, 1.0, 60),
                                        rng.normal(0.0, 1.0, 90)])
            for _ in range(2000)]
    spread, auc = np.std(aucs), np.mean(aucs)
    assert auc_standard_error(auc, 60, 90) == pytest.approx(spread, rel=0.1)
    assert np.sqrt(auc * (1 - auc) / (60 * 90)) < 0.2 * spread


def test_auto_rank_halves_where_the_held_out_auc_allows_it():
    """``rank='auto'`` weighs half its rank on ``A``: circles in d = 3 keep
    at most 100 of 200 features, EEG (whose score needs them: 0.05 of test
    AUC) keeps all 200."""
    from pac_particles.problem.datasets import load_dataset
    X, y = _circles(3000, 5)
    spec = CertificateSpec(seed=0)
    circles = reduced_rank_features(
        GibbsProblem.ranking(X, y, lam=1.0, standardize=True), "rbf", 200,
        spec, seed=0, weigh_half=True)
    assert circles.data.d <= 100
    X, y, _ = load_dataset("eeg")
    eeg = reduced_rank_features(
        GibbsProblem.ranking(X, y, lam=1.0, standardize=True), "rbf", 200,
        spec, seed=0, weigh_half=True)
    assert eeg.data.d == 200
