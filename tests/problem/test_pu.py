"""Positive-unlabelled data: R_PU = pi/2 + (1 - pi) R_PN and its use."""
import numpy as np
import pytest

from pac_particles.problem.auc import auc_risk, pu_corrected_risk, pu_lam
from pac_particles.approx.ep import EPLinear
from pac_particles.sklearn.estimator import PACBayesAUC
from pac_particles.smc.models import AUCGibbsModel
from pac_particles.approx.vb import GaussianVB


def _pu_sample(n, labelled_fraction=0.5, seed=0, d=3):
    """True labels, PU labels (a random half of the positives labelled) and
    pi, the fraction of positives among the unlabelled."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y_true = (X @ np.array([1.5, -1.0, 0.5])[:d] + rng.normal(size=n) > 0.3).astype(int)
    labelled = (y_true == 1) & (rng.random(n) < labelled_fraction)
    y_pu = labelled.astype(int)
    pi = y_true[~labelled].mean()
    return X, y_true, y_pu, pi


def test_pu_risk_is_affine_in_the_true_risk_by_simulation():
    X, y_true, y_pu, pi = _pu_sample(40_000, seed=1)
    for w in ([1.0, 0.0, 0.0], [0.2, 1.0, -1.0], [-1.0, 0.3, 0.0]):
        s = X @ np.array(w)
        r_pn, r_pu = auc_risk(s, y_true), auc_risk(s, y_pu)
        # sampling sd of a two-sample U-statistic with ~10^4 x 3 10^4 pairs
        assert r_pu == pytest.approx(0.5 * pi + (1 - pi) * r_pn, abs=0.01)
        assert pu_corrected_risk(r_pu, pi) == pytest.approx(r_pn, abs=0.015)


def test_ties_keep_the_identity_exact_in_expectation():
    """Binary features: many tied scores, still R_PU = pi/2 + (1-pi) R_PN."""
    rng = np.random.default_rng(2)
    n = 60_000
    y_true = rng.random(n) < 0.4
    x = np.where(y_true, rng.random(n) < 0.7, rng.random(n) < 0.3).astype(float)
    labelled = y_true & (rng.random(n) < 0.5)
    pi = y_true[~labelled].mean()
    r_pn, r_pu = auc_risk(x, y_true), auc_risk(x, labelled)
    assert r_pu == pytest.approx(0.5 * pi + (1 - pi) * r_pn, abs=0.006)


def test_pu_lam_rescales_and_validates():
    assert pu_lam(10.0, 0.5) == 20.0 and pu_lam(10.0, None) == 10.0
    assert pu_corrected_risk(0.25, 0.0) == 0.25
    for bad in (1.0, -0.1, "x"):
        with pytest.raises(ValueError, match="pu_prior"):
            pu_lam(1.0, bad)


def test_entry_points_use_lam_over_one_minus_pi():
    X, _, y_pu, _ = _pu_sample(200)
    assert AUCGibbsModel(X, y_pu, 30.0, pu_prior=0.4).lam == pytest.approx(50.0)
    assert EPLinear(X, y_pu, 30.0, pu_prior=0.4).lam == pytest.approx(50.0)
    assert GaussianVB(X, y_pu, 30.0, pu_prior=0.4).lam == pytest.approx(50.0)


@pytest.mark.parametrize("method", ["ep", "smc"])
def test_pu_fit_ranks_like_the_fully_labelled_fit(method):
    X, y_true, y_pu, pi = _pu_sample(600, seed=3)
    X_test, y_test, _, _ = _pu_sample(5000, seed=4)
    kwargs = dict(method=method, lam=600.0, n_particles=100, len_chain=5,
                  random_state=0)
    full = PACBayesAUC(**kwargs).fit(X, y_true)
    pu = PACBayesAUC(pu_prior=pi, **kwargs).fit(X, y_pu)
    auc_full = 1 - auc_risk(full.decision_function(X_test), y_test)
    auc_pu = 1 - auc_risk(pu.decision_function(X_test), y_test)
    assert auc_pu > auc_full - 0.02
    # the corrected training AUC estimates the true one on the same scores
    true_train_auc = 1 - auc_risk(pu.decision_function(X), y_true)
    assert pu.train_auc_ == pytest.approx(true_train_auc, abs=0.04)
    assert pu.score(X, y_pu) == pytest.approx(pu.train_auc_)
    # the certificate is on the positive-vs-negative scale
    assert pu.certified_auc_risk_ == pytest.approx(float(pu_corrected_risk(
        pu.certificate_.bound, pi)))


def test_corrected_auc_range_over_an_interval_of_pi():
    from pac_particles.problem.auc import pu_corrected_auc_range
    X, y_true, y_pu, pi = _pu_sample(40_000, seed=4)
    s = X @ np.array([1.0, -0.5, 0.2])
    auc_pu = 1.0 - auc_risk(s, y_pu)
    auc_pn = 1.0 - auc_risk(s, y_true)
    low, high = pu_corrected_auc_range(auc_pu, (pi - 0.05, pi + 0.05))
    assert low - 0.01 <= auc_pn <= high + 0.01
    # the correction grows with pi: an overestimated pi inflates the AUC
    assert low == pytest.approx(1 - pu_corrected_risk(1 - auc_pu, pi - 0.05))
    assert high == pytest.approx(1 - pu_corrected_risk(1 - auc_pu, pi + 0.05))
    assert high > auc_pn + 0.01
    assert pu_corrected_auc_range(auc_pu, (pi, pi))[0] == pytest.approx(
        1 - pu_corrected_risk(1 - auc_pu, pi))
    for bad in [(0.3, 0.1), (0.1, 1.0), (-0.1, 0.2), 0.3, (0.1, "x")]:
        with pytest.raises(ValueError, match="pu_prior"):
            pu_corrected_auc_range(0.8, bad)
    with pytest.raises(ValueError, match="auc_pu"):
        pu_corrected_auc_range(1.2, (0.1, 0.2))


def test_corrected_auc_range_is_clipped_where_the_prior_is_too_large():
    """A PU AUC above 1 - pi/2 is impossible for prior pi: the corrected AUC
    of such a pi exceeds 1, is clipped to 1 and a warning names the largest
    compatible prior 2 (1 - AUC_PU); the achievable end is left as it is."""
    from pac_particles.problem.auc import (PUPriorRangeWarning,
                                           pu_corrected_auc_range)
    auc_pu, interval = 0.9, (0.1, 0.4)
    unclipped_low = (auc_pu - 0.05) / 0.9
    assert (auc_pu - 0.2) / 0.6 > 1      # the high end left the range
    with pytest.warns(PUPriorRangeWarning, match=r"pi <= .* = 0\.2"):
        low, high = pu_corrected_auc_range(auc_pu, interval)
    assert high == 1.0 and low == pytest.approx(unclipped_low)
    # below 1/2 the low end leaves [0, 1] at pi > 2 AUC_PU
    with pytest.warns(PUPriorRangeWarning):
        low, high = pu_corrected_auc_range([0.05, 0.5], interval)
    assert np.all(low >= 0) and np.all(high <= 1) and low[0] == 0.0


def test_pu_estimator_reports_a_held_out_corrected_auc():
    from sklearn.metrics import roc_auc_score
    X, _, y_pu, pi = _pu_sample(240, seed=5)
    # EP: the leave-one-out scores, corrected
    est = PACBayesAUC(method="ep", lam=240.0, pu_prior=pi).fit(X, y_pu)
    loo = est.approximation_.loo_scores()
    expected = 1 - pu_corrected_risk(1 - roc_auc_score(y_pu, loo), pi)
    assert est.heldout_auc_ == pytest.approx(expected)
    # VB on all pairs: its leave-one-out scores (one Newton step), corrected
    est = PACBayesAUC(method="vb", lam=240.0, pu_prior=pi).fit(X, y_pu)
    loo = est.approximation_.loo_scores()
    expected = 1 - pu_corrected_risk(1 - roc_auc_score(y_pu, loo), pi)
    assert est.heldout_auc_ == pytest.approx(expected)
    # SMC at a fixed lam: n_folds refits, each scored on its held-out fold
    smc = dict(method="smc", lam=240.0, n_particles=30, len_chain=3,
               random_state=0)
    est = PACBayesAUC(pu_prior=pi, n_folds=3, **smc).fit(X, y_pu)
    assert est.heldout_auc_ is not None and 0.5 < est.heldout_auc_ < 1.1
    assert est.heldout_auc_ != pytest.approx(est.train_auc_)
    # without PU labels and without a cheap held-out figure: none
    assert PACBayesAUC(**smc).fit(X, y_pu).heldout_auc_ is None


def test_smc_lam_cv_with_pu_labels_keeps_lam_on_the_scale_given():
    """SMC's ``lam='cv'`` with PU labels: the folds, the certified step and
    ``lam_`` are on the positive-vs-negative scale of ``lam`` (a float
    ``lam`` is), and the chosen step's evidence is refined under its own
    target, ``lam_ / (1 - pi)`` on the observed risk -- not divided by
    ``1 - pi`` twice, which would put the importance estimate of ``log Z``
    far from the step's tempering one."""
    X, _, y, pi = _pu_sample(300, seed=3)
    est = PACBayesAUC(lam="cv", lam_max=600.0, pu_prior=pi, n_folds=2,
                      grid_size=8, n_particles=40, len_chain=5,
                      random_state=0, n_jobs=1).fit(X, y)
    post = est.posterior_
    assert est.lam_ <= 600.0 * (1 + 1e-9) and est.lam_ >= est.cv_.grid[0] * (1 - 1e-9)
    assert post.lam == pytest.approx(est.lam_ / (1.0 - pi))
    assert post.lam_pn == pytest.approx(est.lam_)
    estimate = post.importance
    assert estimate is not None and estimate.reliable
    assert estimate.log_z == pytest.approx(post.log_z_tempering, abs=1.0)
