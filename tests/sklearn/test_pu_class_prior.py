"""The PU class prior estimated from positive and unlabelled data: the
penalised L1 distance's closed form against exact kernel means and a
numerical optimiser, both estimators against the known prior of simulated
data, Elkan-Noto's formula, the seeded bootstrap interval and its use in the
corrected AUC range, bad input.

Tolerances were measured on the PU study's data (two Gaussians
``N(+-2 e_1, I_2)``, 400 labelled + 400 unlabelled, 30 seeds): penalised L1
error mean +0.02 / +0.01 / 0.00 and sd 0.035 / 0.055 / 0.063 at
pi = 0.2 / 0.5 / 0.8; Elkan-Noto +0.036 / +0.026 / +0.021, sd 0.023 / 0.026 /
0.028 (it overestimates where the classes overlap)."""
import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.dummy import DummyClassifier

from pac_particles.problem.auc import pu_corrected_auc_range
from pac_particles.core.checks import InputError
from pac_particles.sklearn.pu_class_prior import (PI_MAX, PriorEstimate,
                                          held_out_gain, elkan_noto_prior,
                                          estimate_pu_prior,
                                          penalised_l1_distance,
                                          penalised_l1_prior)
from lab.study.pu_classification import (format_pu_prior_study,
                                                   gaussian_pu_sample,
                                                   pu_prior_study)


def pu_data(pi, n=400, seed=0):
    """``n`` labelled positives and ``n`` unlabelled points of the PU
    study's generator, PU labels (1 labelled)."""
    X_p, X_u, _, _, _ = gaussian_pu_sample(n, pi, np.random.default_rng(seed),
                                           n_test=1)
    return np.vstack([X_p, X_u]), np.r_[np.ones(n), np.zeros(n)]


def gaussian_kernel_mean(mean, centres, sigma):
    """``E exp(-|x - c|^2 / (2 sigma^2))`` for ``x ~ N(mean, I)``, exactly."""
    d = centres.shape[1]
    v = sigma ** 2 + 1.0
    return (sigma ** 2 / v) ** (d / 2) * np.exp(
        -np.sum((centres - mean) ** 2, axis=1) / (2.0 * v))


def test_population_distance_is_one_minus_theta_up_to_the_prior():
    """With exact kernel means, ``theta h_P <= h_U`` for ``theta <= pi``, so
    the distance is exactly ``1 - theta`` there; above ``pi`` it grows, and
    its minimum lies just above ``pi`` (regularisation pushes it up)."""
    pi, sigma = 0.3, 1.0
    centres = np.c_[np.linspace(-4, 4, 17), np.zeros(17)]
    h_pos = gaussian_kernel_mean(np.array([2.0, 0.0]), centres, sigma)
    h_neg = gaussian_kernel_mean(np.array([-2.0, 0.0]), centres, sigma)
    h_unl = pi * h_pos + (1 - pi) * h_neg
    theta = np.arange(1, 100) / 100.0
    distance, _ = penalised_l1_distance(theta, h_pos, h_unl, 1e-3)
    below = theta <= pi
    np.testing.assert_allclose(distance[below], 1 - theta[below], rtol=0,
                               atol=1e-15)
    assert np.all(distance[~below] > 1 - theta[~below])
    assert pi <= theta[np.argmin(distance)] <= pi + 0.03
    distance_1, _ = penalised_l1_distance(theta, h_pos, h_unl, 1.0)
    assert theta[np.argmin(distance_1)] > pi + 0.1


def test_closed_form_maximises_the_regularised_dual():
    """``alpha = max(0, beta) / lam`` maximises ``alpha' beta - lam/2
    |alpha|^2`` over ``alpha >= 0``, and the distance is ``alpha' beta -
    theta + 1``: against a bounded numerical optimiser."""
    rng = np.random.default_rng(0)
    h_pos, h_unl = rng.random(12), rng.random(12)
    theta, lam = 0.6, 0.05
    distance, alpha = penalised_l1_distance(theta, h_pos, h_unl, lam)
    beta = theta * h_pos - h_unl
    assert np.any(beta > 0) and np.any(beta < 0)
    res = minimize(lambda a: -(a @ beta - 0.5 * lam * a @ a),
                   np.ones(12), jac=lambda a: -(beta - lam * a),
                   bounds=[(0, None)] * 12, method="L-BFGS-B",
                   options=dict(gtol=1e-12, ftol=1e-15))
    np.testing.assert_allclose(alpha, res.x, atol=1e-6)
    assert distance == pytest.approx(res.x @ beta - theta + 1, abs=1e-6)


def test_sorted_threshold_gain_matches_the_direct_sum():
    """The held-out dual objective of every (bandwidth, prior), summed with
    sorted thresholds, equals ``mean_folds sum_l max(0, beta_train)
    beta_test`` computed term by term (zero training means included)."""
    rng = np.random.default_rng(3)
    train_p, train_u, test_p, test_u = rng.random((4, 3, 5, 40))
    train_p[0, 0, :5] = 0.0
    priors = np.linspace(0.0, 0.99, 34)
    theta = priors[None, :, None, None]
    direct = np.mean(np.sum(
        np.maximum(theta * train_p[:, None] - train_u[:, None], 0.0)
        * (theta * test_p[:, None] - test_u[:, None]), axis=-1), axis=-1)
    np.testing.assert_allclose(
        held_out_gain(train_p, train_u, test_p, test_u, priors), direct,
        rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("pi", [0.2, 0.5, 0.8])
def test_penalised_l1_recovers_the_true_prior(pi):
    """Mean over three samples within 0.1 of pi (its sd there: 0.02-0.036)."""
    estimates = [penalised_l1_prior(*pu_data(pi, seed=s), seed=s).pi
                 for s in range(3)]
    assert np.mean(estimates) == pytest.approx(pi, abs=0.1)


@pytest.mark.parametrize("pi", [0.2, 0.5, 0.8])
def test_elkan_noto_recovers_the_true_prior_up_to_its_overlap_bias(pi):
    """In ``[pi - 0.05, pi + 0.12]``: the estimate runs about 0.03 high
    (0.02-0.03 with the exact ``g``), sd 0.023-0.028; 3 sd either way."""
    estimate = elkan_noto_prior(*pu_data(pi, seed=1), seed=1).pi
    assert pi - 0.05 <= estimate <= pi + 0.12


def test_penalised_l1_intervals_tell_pi_02_from_05():
    for seed in (0, 1):
        low_prior = penalised_l1_prior(*pu_data(0.2, seed=seed),
                                       n_bootstrap=40, seed=seed)
        high_prior = penalised_l1_prior(*pu_data(0.5, seed=seed),
                                        n_bootstrap=40, seed=seed)
        assert low_prior.interval[1] < high_prior.interval[0]


def test_elkan_noto_tells_pi_02_from_05():
    low = [elkan_noto_prior(*pu_data(0.2, seed=s), seed=s).pi for s in (0, 1)]
    high = [elkan_noto_prior(*pu_data(0.5, seed=s), seed=s).pi for s in (0, 1)]
    assert min(high) - max(low) > 0.15


class ConstantProbability(ClassifierMixin, BaseEstimator):
    """Says ``P(s = 1 | x) = q`` everywhere."""

    def __init__(self, q=0.4):
        self.q = q

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        return self

    def predict_proba(self, X):
        return np.tile([1 - self.q, self.q], (len(X), 1))


def test_elkan_noto_turns_c_into_pi_by_the_case_control_formula():
    """``pi = (n_L / n_U) (1 - c) / c``: with ``g = 0.4`` on every held-out
    labelled point (fold sizes divide evenly, so no odds shift), 100
    labelled and 300 unlabelled give ``(1/3) 0.6 / 0.4 = 0.5``."""
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(400, 2)), np.r_[np.ones(100), np.zeros(300)]
    est = elkan_noto_prior(X, y, classifier=ConstantProbability(0.4))
    assert est.details["c"] == pytest.approx(0.4)
    assert est.pi == pytest.approx(0.5)


def test_held_out_probabilities_are_moved_to_the_sample_odds():
    """A classifier that predicts its training proportion of labelled
    points says ``c = n_L / (n_L + n_U)`` of the whole sample once each
    fold's odds are shifted, whatever the fold sizes; then ``pi = 1``
    (nothing tells positives from unlabelled), reported as ``PI_MAX``."""
    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(400, 2)), np.r_[np.ones(103), np.zeros(297)]
    est = elkan_noto_prior(X, y, classifier=DummyClassifier(strategy="prior"))
    assert est.details["c"] == pytest.approx(103 / 400, rel=1e-10)
    assert est.pi == PI_MAX


def test_bootstrap_is_seeded_and_brackets_the_estimate():
    X, y = pu_data(0.4, n=200)
    first = penalised_l1_prior(X, y, n_bootstrap=30, seed=5)
    again = penalised_l1_prior(X, y, n_bootstrap=30, seed=5)
    other = penalised_l1_prior(X, y, n_bootstrap=30, seed=6)
    np.testing.assert_array_equal(first.bootstrap, again.bootstrap)
    assert first.interval == again.interval
    assert not np.array_equal(first.bootstrap, other.bootstrap)
    assert first.bootstrap.shape == (30,)
    assert first.interval[0] <= first.pi <= first.interval[1]
    en = elkan_noto_prior(X, y, n_bootstrap=2, seed=5)
    assert en.bootstrap.shape == (2,)
    np.testing.assert_array_equal(
        en.bootstrap, elkan_noto_prior(X, y, n_bootstrap=2, seed=5).bootstrap)


def test_bootstrap_leaves_the_point_estimate_unchanged():
    """The resamples draw from their own stream of the seed."""
    X, y = pu_data(0.4, n=200)
    for fit, key in ((penalised_l1_prior, "penalised_l1"),
                     (elkan_noto_prior, "c")):
        with_boot = fit(X, y, n_bootstrap=2, seed=3)
        without = fit(X, y, n_bootstrap=0, seed=3)
        assert with_boot.pi == without.pi
        np.testing.assert_array_equal(with_boot.details[key],
                                      without.details[key])


def test_interval_feeds_the_corrected_auc_range():
    X, y = pu_data(0.3, n=200)
    est = estimate_pu_prior(X, y, n_bootstrap=30, seed=0)
    assert isinstance(est, PriorEstimate) and est.method == "penalised_l1"
    assert est.corrected_auc_range(0.8) == pu_corrected_auc_range(
        0.8, est.interval)
    low, high = est.corrected_auc_range(0.8)
    assert low < high
    with pytest.raises(InputError, match="no interval"):
        estimate_pu_prior(X, y, n_bootstrap=0).corrected_auc_range(0.8)


def _bad(**change):
    X, y = pu_data(0.3, n=60)
    args = dict(X=X, y=y)
    args.update(change)
    return args


@pytest.mark.parametrize("args,message", [
    (_bad(y=np.ones(120)), "only one class"),
    (_bad(y=np.r_[np.ones(10), np.zeros(110)]), "too few labelled positives"),
    (_bad(y=np.r_[np.ones(110), np.zeros(10)]), "too few unlabelled"),
    (_bad(priors=[0.2, 0.5, 1.0]), r"\[0, 1\)"),
    (_bad(priors=[-0.1, 0.5]), r"\[0, 1\)"),
    (_bad(priors=[0.5, 0.2]), "increasing"),
    (_bad(level=1.5), "level"),
    (_bad(method="mixture"), "method"),
    (_bad(n_bootstrap=-1), "n_bootstrap"),
    (_bad(X=np.full((120, 2), np.nan)), "NaN"),
    (_bad(method="elkan_noto", classifier=object()), "predict_proba"),
])
def test_bad_input_raises_a_clear_input_error(args, message):
    with pytest.raises(InputError, match=message):
        estimate_pu_prior(args.pop("X"), args.pop("y"), **args)


def test_prior_study_rows_say_whether_the_interval_covers_the_true_prior():
    rows = pu_prior_study(priors=(0.3,), n=100, n_repeats=1, n_bootstrap=5)
    assert [row["method"] for row in rows] == ["penalised_l1", "elkan_noto"]
    for row in rows:
        assert row["low"] <= row["high"]
        assert row["covered"] == (row["low"] <= 0.3 <= row["high"])
    table = format_pu_prior_study(rows)
    assert "| 0.3 | 100 | penalised_l1 |" in table
    with pytest.raises(InputError, match="pu_prior"):
        pu_prior_study(priors=(1.0,), n=100, n_repeats=1)


def test_penalised_l1_interval_covers_the_true_prior_at_its_level():
    """Coverage over repetitions with known truth: the 95% percentile
    bootstrap interval of the penalised L1 prior covers the true pi = 0.35
    in a share of 30 samples that a binomial test does not find below 95%,
    while the central 30% of the same replicates (a deliberately narrow
    interval) is rejected by that test."""
    from scipy.stats import binom
    pi, n_repeats = 0.35, 30
    covered = narrow = 0
    for r in range(n_repeats):
        X, y = pu_data(pi, n=250, seed=200 + r)
        est = penalised_l1_prior(X, y, n_bootstrap=40, level=0.95, seed=r)
        covered += est.interval[0] <= pi <= est.interval[1]
        low, high = np.percentile(est.bootstrap, [35, 65])
        narrow += low <= pi <= high
    assert binom.cdf(covered, n_repeats, 0.95) > 0.01
    assert binom.cdf(narrow, n_repeats, 0.95) < 0.01
