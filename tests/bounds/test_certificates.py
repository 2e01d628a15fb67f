"""PAC-Bayes-kl, Catoni, test-set and classification certificates
(pac_particles.bounds: kl, certificates, ranking, classification).

References used here: root finding by scipy's brentq on the kl written out
by hand, exact binomial sums, Monte Carlo over simulated samples whose
population AUC is known in closed form (two Gaussian classes), and the
dissertation's formulas typed out term by term.
"""

import math

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.special import logsumexp
from scipy.stats import binom, norm

from pac_particles.problem.auc import auc_risk
from pac_particles.bounds import (AUC_TRIVIAL, CATONI_GRID, Certificate,
                                  auc_certificate, binary_kl, catoni_bound,
                                  classification_certificate,
                                  corollary11_bound, corollary13_hyperparameters,
                                  corollary13_oracle_bound,
                                  corollary15_oracle_bound,
                                  data_dependent_candidate,
                                  data_dependent_prior,
                                  hinge_bound, hinge_hoeffding_function,
                                  kl_bound, kl_inverse_lower, kl_inverse_upper,
                                  lemma10_hoeffding_function, linear_bound,
                                  maurer_constant, pac_bayes_bound,
                                  prior_split, risk_certificate, held_out_bound,
                                  theorem17_iterate_bound, tightest)
from pac_particles.core.checks import InputError
from pac_particles.core.gaussian import gaussian_kl
from pac_particles.problem.probit_risk import expected_auc_risk


def kl_by_hand(q, p):
    total = 0.0
    if q > 0:
        total += q * math.log(q / p)
    if q < 1:
        total += (1 - q) * math.log((1 - q) / (1 - p))
    return total


# ------------------------------------------------------------ kl inversion

@pytest.mark.parametrize("q", [1e-9, 0.01, 0.2, 0.5, 0.93, 1 - 1e-9])
@pytest.mark.parametrize("c", [1e-6, 0.01, 0.3, 5.0])
def test_kl_inverses_agree_with_brentq_on_the_hand_written_kl(q, c):
    up = kl_inverse_upper(q, c)
    lo = kl_inverse_lower(q, c)
    top = 1 - 1e-15
    ref_up = (brentq(lambda p: kl_by_hand(q, p) - c, q, top, xtol=1e-15)
              if kl_by_hand(q, top) > c else 1.0)
    ref_lo = (brentq(lambda p: kl_by_hand(q, p) - c, 1e-300, q, xtol=1e-15)
              if kl_by_hand(q, 1e-300) > c else 0.0)
    assert up == pytest.approx(ref_up, abs=1e-9)
    assert lo == pytest.approx(ref_lo, abs=1e-9)
    assert lo <= q <= up


def test_kl_inverses_are_exact_at_the_edges_and_vectorised():
    c = np.array([0.0, 0.1, 2.0, np.inf])
    assert np.allclose(kl_inverse_upper(0.0, c), 1 - np.exp(-c))
    assert np.allclose(kl_inverse_lower(1.0, c), np.exp(-c))
    assert np.all(kl_inverse_upper(1.0, c) == 1.0)
    assert np.all(kl_inverse_lower(0.0, c) == 0.0)
    q = np.linspace(0, 1, 11)
    assert np.allclose(kl_inverse_upper(q, 0.0), q)
    grid = kl_inverse_upper(q[:, None], c[None, :-1])
    assert grid.shape == (11, 3) and np.all(np.diff(grid, axis=1) >= 0)
    # conservative: never inside the true inverse
    p = kl_inverse_upper(0.3, 0.05)
    assert binary_kl(0.3, p) >= 0.05 - 1e-12


def test_kl_inversion_rejects_bad_input():
    with pytest.raises(InputError, match="q"):
        kl_inverse_upper(1.2, 0.1)
    with pytest.raises(InputError, match="budget"):
        kl_inverse_upper(0.2, -0.1)
    with pytest.raises(InputError, match="budget"):
        kl_inverse_lower(0.2, np.nan)


@pytest.mark.parametrize("m", [1, 8, 57, 400])
def test_maurer_constant_is_the_exponential_moment_of_a_binomial_mean(m):
    k = np.arange(m + 1)
    for p in (0.07, 0.5):
        moment = np.exp(logsumexp(binom.logpmf(k, m, p)
                                  + [m * kl_by_hand(j / m, p) for j in k]))
        assert maurer_constant(m) == pytest.approx(moment, rel=1e-9)
    assert math.sqrt(m) <= maurer_constant(m) <= max(2 * math.sqrt(m), 2.0)
    assert maurer_constant(10 ** 7) == 2 * math.sqrt(10 ** 7)


# ------------------------------------------------------------ generic bounds

def test_kl_bound_inverts_its_budget():
    cert = kl_bound(0.12, kl=4.0, m=300, delta=0.05)
    budget = (4.0 + math.log(maurer_constant(300) / 0.05)) / 300
    assert kl_by_hand(0.12, cert.bound) == pytest.approx(budget, rel=1e-9)
    loose = kl_bound(0.12, kl=4.0, m=300, delta=0.05, constant="two_sqrt_m")
    assert loose.bound > cert.bound
    assert kl_by_hand(0.12, loose.bound) == pytest.approx(
        (4.0 + math.log(2 * math.sqrt(300) / 0.05)) / 300, rel=1e-9)
    assert (cert.name, cert.m, cert.delta, cert.vacuous) == ("kl", 300, 0.05, False)


def test_catoni_bound_is_the_best_grid_value_of_its_formula():
    q, kl, m, delta = 0.2, 6.0, 250, 0.1
    cert = catoni_bound(q, kl, m, delta)
    values = [(1 - math.exp(-C * q - (kl + math.log(len(CATONI_GRID) / delta))
                            / m)) / (1 - math.exp(-C)) for C in CATONI_GRID]
    assert cert.bound == pytest.approx(min(values), rel=1e-12)
    assert cert.parameter == CATONI_GRID[int(np.argmin(values))]
    assert cert.grid_size == len(CATONI_GRID)


def test_kl_bound_beats_the_linear_hoeffding_bound_at_every_lam():
    q, kl, m, delta = 0.15, 5.0, 400, 0.05
    cert = kl_bound(q, kl, m, delta)
    for lam in np.geomspace(10, 10_000, 30):
        linear = linear_bound(q, kl, lam, lam ** 2 / (8 * m), delta, m=m)
        assert cert.bound <= linear.bound + 1e-12


def test_bounds_are_clipped_to_zero_one_and_flag_vacuous():
    cert = linear_bound(0.4, kl=500.0, lam=10.0, f=2.0, delta=0.05, m=50)
    assert cert.bound == 1.0 and cert.raw_bound > 1 and cert.vacuous
    assert kl_bound(0.9, 50.0, 20).bound <= 1.0
    auc = auc_certificate(0.45, kl=30.0, n_pos=30, n_neg=40)
    assert 0 <= auc.bound <= 1 and auc.vacuous and auc.trivial == AUC_TRIVIAL
    old = pac_bayes_bound(0.45, 300.0, 5.0, 30, 40)
    assert old.auc_risk_bound_two_sample == 1.0 and old.vacuous
    for value in (old.bound, old.auc_risk_bound, old.auc_risk_bound_rigorous):
        assert 0 <= value <= 1


def test_tightest_splits_delta_and_reports_every_candidate():
    seen = []

    def make(value, name):
        def candidate(delta):
            seen.append(delta)
            return Certificate(name, value, delta, False, 0.1, 1.0, 10)
        return candidate
    best = tightest([make(0.3, "a"), make(0.2, "b"), make(0.4, "c")], 0.06)
    assert seen == pytest.approx([0.02, 0.02, 0.02])
    assert (best.name, best.bound, best.delta, best.n_candidates) == ("b", 0.2,
                                                                      0.06, 3)
    assert best.alternatives == (("a", 0.3), ("b", 0.2), ("c", 0.4))
    assert best.as_dict()["alternatives"] == {"a": 0.3, "b": 0.2, "c": 0.4}


def test_risk_certificate_is_the_smaller_of_kl_and_catoni_at_half_delta():
    best = risk_certificate(0.05, 3.0, 500, 0.1)
    assert best.bound == pytest.approx(min(kl_bound(0.05, 3.0, 500, 0.05).bound,
                                           catoni_bound(0.05, 3.0, 500, 0.05).bound))
    with pytest.raises(InputError, match="unknown bound"):
        risk_certificate(0.05, 3.0, 500, bounds=("mcallester",))


def test_held_out_bound_covers_a_binomial_risk_exactly():
    m, delta = 60, 0.1
    k = np.arange(m + 1)
    bounds = np.array([held_out_bound(j / m, m, delta).bound for j in k])
    for risk in (0.02, 0.1, 0.35, 0.7):
        coverage = np.sum(binom.pmf(k, m, risk) * (risk <= bounds + 1e-12))
        assert coverage >= 1 - delta
    # and it is not trivially loose: at risk 0.35 it fails with positive mass
    assert np.sum(binom.pmf(k, m, 0.35) * (0.35 > bounds)) > 0.005


# ------------------------------------------------------------ the AUC

def _fixed_score_risks(n_pos, n_neg, shift, repetitions, rng):
    """Empirical AUC risks of the fixed score x_1 on two Gaussian classes
    whose population 1 - AUC is Phi(-shift / sqrt(2))."""
    risks = np.empty(repetitions)
    for r in range(repetitions):
        pos = rng.normal(size=n_pos) + shift
        neg = rng.normal(size=n_neg)
        risks[r] = auc_risk(np.r_[pos, neg], np.r_[np.ones(n_pos), np.zeros(n_neg)])
    return risks, norm.cdf(-shift / math.sqrt(2))


def test_auc_kl_bound_needs_only_min_class_count_terms_and_no_more():
    """A fixed score (prior = posterior = a point, KL = 0) on 5 positives and
    300 negatives: with m = min(n_pos, n_neg) the bound holds in at least
    1 - delta of the samples; pretending the negatives count (m = n_neg)
    breaks it: the test can fail."""
    rng = np.random.default_rng(0)
    n_pos, n_neg, delta = 5, 300, 0.05
    risks, population = _fixed_score_risks(n_pos, n_neg, 1.0, 2000, rng)
    right = np.array([auc_certificate(r, 0.0, n_pos=n_pos, n_neg=n_neg,
                                      delta=delta, bounds="kl").bound
                      for r in risks])
    wrong = kl_inverse_upper(risks, math.log(maurer_constant(n_neg) / delta)
                             / n_neg)
    assert np.mean(population <= right) >= 1 - delta
    assert np.mean(population <= wrong) < 1 - delta


def test_auc_certificate_uses_the_risks_independent_terms():
    class Risk:
        n_independent = 37
    cert = auc_certificate(0.2, 3.0, risk=Risk(), delta=0.05, bounds="kl")
    assert cert.bound == kl_bound(0.2, 3.0, 37, 0.05).bound
    assert (cert.m, cert.trivial) == (37, 0.5)
    with pytest.raises(InputError, match="either"):
        auc_certificate(0.2, 3.0, risk=Risk(), n_pos=3, n_neg=4)


def test_prior_split_is_stratified_and_seeded():
    y = np.r_[np.ones(30, bool), np.zeros(70, bool)]
    a = prior_split(y, 0.3, seed=1)
    assert a[y].sum() == 9 and a[~y].sum() == 21
    assert np.array_equal(a, prior_split(y, 0.3, seed=1))
    assert not np.array_equal(a, prior_split(y, 0.3, seed=2))
    with pytest.raises(InputError, match="two points"):
        prior_split(np.r_[True, False, False], 0.5)


def test_data_dependent_kl_of_particles_matches_the_gaussian_closed_form():
    """The particle path (KL to the data-free prior plus the Monte Carlo
    cross term) against the closed-form KL of the same Gaussian."""
    rng = np.random.default_rng(3)
    d, n = 3, 160
    y = rng.random(n) < 0.4
    X = rng.normal(size=(n, d)) + np.outer(y, [1.0, -0.5, 0.3])
    mean, cov = np.array([0.8, -0.4, 0.2]), np.diag([0.05, 0.04, 0.06])
    gauss = data_dependent_candidate(X, y, gaussian=(mean, cov), seed=4)(0.05)
    theta = rng.multivariate_normal(mean, cov, size=200_000)
    weights = np.full(len(theta), 1 / len(theta))
    parts = data_dependent_candidate(
        X, y, particles=(theta, weights, gaussian_kl(mean, cov, 1.0)),
        seed=4)(0.05)
    assert parts.kl == pytest.approx(gauss.kl, abs=0.02)
    assert parts.empirical_randomized_risk == pytest.approx(
        gauss.empirical_randomized_risk, abs=0.002)
    in_prior = prior_split(y, 0.3, 4)
    assert gauss.empirical_randomized_risk == pytest.approx(expected_auc_risk(
        mean, cov, X[~in_prior & y], X[~in_prior & ~y]))
    assert gauss.m == min((~in_prior & y).sum(), (~in_prior & ~y).sum())
    assert gauss.prior.startswith("data-dependent")
    # a prior fitted once serves several posteriors with the same result
    prior = data_dependent_prior(X, y, seed=4)
    assert np.array_equal(prior.in_prior, in_prior)
    again = data_dependent_candidate(X, y, gaussian=(mean, cov),
                                     prior=prior)(0.05)
    assert again == gauss


def test_data_dependent_prior_is_preprocessed_on_its_own_part():
    """Given the raw inputs or the inputs standardised with every row's
    moments, the prior is the same distribution of the score function: EP
    runs on the prior part centred and scaled with that part's moments,
    and its Gaussian is mapped exactly (``theta = w * scale``). A column
    constant on the prior part keeps the prior ``N(0, prior_var)`` in the
    coordinates given (the part says nothing about it)."""
    rng = np.random.default_rng(5)
    n = 120
    y = rng.random(n) < 0.4
    X = (rng.normal(size=(n, 3)) + np.outer(y, [1.0, -0.5, 0.0])) \
        * [1.0, 4.0, 0.5] + [0.0, 10.0, -3.0]
    in_prior = prior_split(y, 0.3, seed=2)
    X[in_prior, 2] = 1.5           # constant on the prior part only
    center, scale = X.mean(axis=0), X.std(axis=0)
    raw = data_dependent_prior(X, y, seed=2)
    std = data_dependent_prior((X - center) / scale, y, seed=2)
    varies = slice(0, 2)
    np.testing.assert_allclose((std.mean / scale)[varies], raw.mean[varies],
                               rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose((std.cov / np.outer(scale, scale))[varies,
                                                                  varies],
                               raw.cov[varies, varies], rtol=1e-9, atol=1e-12)
    # the constant column: untouched by EP, independent of the others
    for prior in (raw, std):
        assert prior.mean[2] == 0.0 and prior.cov[2, 2] == 1.0
        assert np.all(prior.cov[2, :2] == 0.0)


def test_tightest_records_each_candidates_share_of_delta():
    import json
    cert = risk_certificate(0.1, kl=5.0, m=1000, delta=0.05)
    assert dict(cert.delta_shares) == {"kl": 0.025, "catoni": 0.025}
    assert sum(share for _, share in cert.delta_shares) == cert.delta
    fields = json.loads(json.dumps(cert.as_dict()))
    assert fields["delta_shares"] == {"kl": 0.025, "catoni": 0.025}
    assert fields["hyperparameters_tuned_on"] == "none"
    assert fields["prior_fraction"] is None


# ------------------------------------------------------------ classification

def test_classification_certificate_is_the_generic_one_with_m_equal_n():
    cert = classification_certificate(0.1, 4.0, 500, delta=0.05)
    assert cert == risk_certificate(0.1, 4.0, 500, 0.05, trivial=0.5)
    assert cert.m == 500 and not cert.vacuous


def test_corollary11_is_theorem8_with_lemma10():
    rng = np.random.default_rng(5)
    d, n, lam, nu2 = 4, 300, math.sqrt(1200), 0.25
    m = rng.normal(size=d)
    A = rng.normal(size=(d, d))
    S = A @ A.T / 10 + 0.05 * np.eye(d)
    cert = corollary11_bound(0.2, m, S, lam, n, prior_var=nu2, delta=0.05)
    kl = 0.5 * (d * math.log(nu2) - math.log(np.linalg.det(S))
                + np.trace(S) / nu2 + m @ m / nu2 - d)
    assert cert.raw_bound == pytest.approx(
        0.2 + lam / (2 * n) + (kl + math.log(1 / 0.05)) / lam, rel=1e-10)
    assert lemma10_hoeffding_function(lam, n) == lam ** 2 / (2 * n)


def test_oracle_rates_are_the_printed_formulas():
    n, d, c, delta = 1000, 5, 0.3, 0.05
    assert corollary13_hyperparameters(n, d) == (math.sqrt(n * d), 1 / math.sqrt(d))
    assert corollary13_oracle_bound(n, d, c, 0.1, delta) == pytest.approx(
        0.1 + math.sqrt(d / n) * math.log(4 * n * math.e) + c / math.sqrt(n)
        + math.sqrt(d / n) / (4 * n) + 2 * math.log(2 / delta) / math.sqrt(n * d))
    cx = 2.0
    tail = ((2 * cx ** 2 + 1) / (2 * cx) + 2 * cx * math.log(2 / delta)) \
        / math.sqrt(n * d)
    assert corollary15_oracle_bound(n, d, cx, 0.2, delta) == pytest.approx(
        0.2 + cx / 2 * math.sqrt(d / n) * math.log(n / d)
        + cx * (d / n) * math.sqrt(d / n) + tail)
    k = np.array([0, 3, 99])
    thm17 = [theorem17_iterate_bound(j, n, d, cx, 1.5, 2.0, 0.2, delta) for j in k]
    assert thm17 == pytest.approx(
        0.2 + 3.0 / np.sqrt(1 + k) + cx / 2 * (d / n) * math.log(n / d)
        + cx * (d / n) * math.sqrt(d / n) + tail)


def test_hinge_hoeffding_function_and_its_domain():
    n, nu, cx = 200, 0.5, 1.0
    lam = 10.0
    assert hinge_hoeffding_function(lam, n, nu, cx) == pytest.approx(
        lam ** 2 / (4 * n) - 0.5 * math.log(1 - nu ** 2 * lam ** 2 * cx ** 2
                                            / (2 * n)))
    with pytest.raises(InputError, match="Lemma 14"):
        hinge_hoeffding_function(math.sqrt(2 * n) / (nu * cx), n, nu, cx)
    # hinge risks are unbounded: not clipped at 1
    cert = hinge_bound(1.5, 2.0, lam, n, nu, cx)
    assert cert.bound > 1.5 and cert.bound == cert.raw_bound


def test_classification_certificate_row_bounds_lie_above_the_training_error():
    """The classification rows of the certificates table: every bound in
    [0, 1] and above the randomised classifier's training error it
    certifies; the dissertation's Corollary 11 is the linear bound of the
    same VB posterior, looser than its kl/Catoni certificate here."""
    from lab.study.certificates import (
        classification_certificate_row, format_classification_table)
    rng = np.random.default_rng(5)
    X = rng.normal(size=(150, 3))
    y = (X @ [1.5, -1.0, 0.5] + 0.5 * rng.normal(size=150) > 0).astype(int)
    row = classification_certificate_row(X, y, name="toy", seed=0)
    for label in ("vb", "default"):
        bound = row[f"{label}_certified_error"]
        assert 0.0 <= row[f"{label}_randomized_error"] < bound <= 1.0
        assert 0.0 <= row[f"{label}_test_error"] <= 1.0
    assert row["vb_certified_error"] < row["vb_corollary11"] <= 1.0
    assert row["n_train"] == 105 and "| toy | 105 | 3 |" in \
        format_classification_table([row])


def test_sampled_expected_risk_bound_covers_the_exact_risk():
    """The upper confidence bound from sampled pairs lies above the exact
    ``E_rho[R_n]`` in at least 1 - delta of the draws (here 0.1, 200
    draws), its estimate is unbiased, and with all pairs it is exact."""
    from pac_particles.bounds import sampled_expected_risk_bound
    rng = np.random.default_rng(8)
    X_pos = rng.normal(size=(150, 3)) + [0.6, -0.3, 0.0]
    X_neg = rng.normal(size=(250, 3))
    mean, cov = np.array([1.0, -0.5, 0.2]), np.diag([0.3, 0.2, 0.4])
    exact = expected_auc_risk(mean, cov, X_pos, X_neg)
    draws = [sampled_expected_risk_bound(mean, cov, X_pos, X_neg, 0.1,
                                         n_pairs=500, seed=s)
             for s in range(200)]
    upper, estimate = np.array(draws).T
    assert np.mean(upper >= exact) >= 0.9
    assert np.mean(estimate) == pytest.approx(exact, abs=3 * np.std(estimate)
                                              / np.sqrt(200))
    assert np.all(upper >= estimate)
    whole = sampled_expected_risk_bound(mean, cov, X_pos, X_neg, 0.1,
                                        n_pairs=150 * 250)
    assert whole == pytest.approx((exact, exact))
    with pytest.raises(InputError, match="delta"):
        sampled_expected_risk_bound(mean, cov, X_pos, X_neg, 1.5)
    with pytest.raises(InputError, match="mean"):
        sampled_expected_risk_bound(np.r_[np.nan, 0.0, 0.0], cov, X_pos,
                                    X_neg, 0.1)
    with pytest.raises(InputError, match="cov"):
        sampled_expected_risk_bound(mean, np.eye(2), X_pos, X_neg, 0.1)


@pytest.mark.parametrize("variance", [0.3, 0.01])
def test_control_variate_risk_bound_covers_and_needs_its_allowance(variance):
    """The bound from the mean's exact step risk and sampled corrections
    covers the exact E_rho[R_n] in at least 1 - delta of 200 draws, its
    estimate is unbiased, the estimate alone (a wrong variant: no
    allowance) covers it in about half of them; once rho concentrates it
    lies below Chernoff's bound from as many pairs."""
    from pac_particles.bounds import sampled_expected_risk_bound
    from pac_particles.bounds.corollary19_posteriors import (
        control_variate_risk_bound)
    rng = np.random.default_rng(8)
    X_pos = rng.normal(size=(150, 3)) + [0.6, -0.3, 0.0]
    X_neg = rng.normal(size=(250, 3))
    mean, cov = np.array([1.0, -0.5, 0.2]), np.full(3, variance)
    exact = expected_auc_risk(mean, cov, X_pos, X_neg)
    upper, estimate = np.array([
        control_variate_risk_bound(mean, cov, X_pos, X_neg, 0.1,
                                   n_pairs=500, seed=s)
        for s in range(200)]).T
    assert np.mean(upper >= exact) >= 0.9
    assert np.mean(estimate >= exact) < 0.7
    assert np.mean(estimate) == pytest.approx(exact, abs=3 * np.std(estimate)
                                              / np.sqrt(200))
    assert np.all(upper >= estimate)
    if variance < 0.1:
        chernoff = [sampled_expected_risk_bound(mean, cov, X_pos, X_neg, 0.1,
                                                n_pairs=500, seed=s)[0]
                    for s in range(20)]
        assert np.mean(upper) < np.mean(chernoff)
    with pytest.raises(InputError, match="delta"):
        control_variate_risk_bound(mean, cov, X_pos, X_neg, 1.5)
    with pytest.raises(InputError, match="n_pairs"):
        control_variate_risk_bound(mean, cov, X_pos, X_neg, 0.1, n_pairs=1)


def test_fitted_gaussian_bound_above_the_exact_limit_pays_its_sample(
        monkeypatch):
    """Above EXACT_RISK_MAX_PAIRS pairs (lowered here) Corollary 19 for a
    fitted Gaussian reads E_rho[R_n] from control_variate_risk_bound at
    sample_share of eps and runs at the rest; at or below, exactly at the
    whole eps."""
    import pac_particles.bounds.ranking as ranking
    from pac_particles.approx.vb import GaussianVB
    from pac_particles.bounds.corollary19_posteriors import (
        control_variate_risk_bound, fitted_gaussian_bound)
    rng = np.random.default_rng(3)
    X = rng.normal(size=(200, 3))
    y = X[:, 0] + rng.normal(size=200) > 0
    post = GaussianVB(X, y, lam=50.0, family="diagonal").fit()
    prior = np.ones(3)
    mean, cov = post.gaussian_summary()
    data = post.data
    exact = fitted_gaussian_bound(post, prior, eps=0.05, seed=4)
    assert exact.eps == pytest.approx(0.05)
    assert exact.expected_risk == pytest.approx(expected_auc_risk(
        mean, cov, data.X[data.y], data.X[~data.y]))
    monkeypatch.setattr(ranking, "EXACT_RISK_MAX_PAIRS", 100)
    sampled = fitted_gaussian_bound(post, prior, eps=0.05, seed=4,
                                    sample_share=0.2)
    assert sampled.eps == pytest.approx(0.04)
    assert sampled.expected_risk == pytest.approx(control_variate_risk_bound(
        mean, cov, data.X[data.y], data.X[~data.y], 0.01, seed=4)[0])
    assert sampled.expected_risk > exact.expected_risk
    assert sampled.bound > exact.bound


def test_paired_expected_risk_bound_covers_and_needs_its_allowance():
    """From pairs already drawn (rows of P and N, as a cluster returns
    them): the upper bound covers the exact E_rho[R_n] in at least 1 - delta
    of 200 draws, while the estimate alone (a wrong variant: no kl
    allowance) covers it in about half of them."""
    from pac_particles.bounds import paired_expected_risk_bound
    rng = np.random.default_rng(9)
    X_pos = rng.normal(size=(150, 3)) + [0.6, -0.3, 0.0]
    X_neg = rng.normal(size=(250, 3))
    mean, cov = np.array([1.0, -0.5, 0.2]), np.diag([0.3, 0.2, 0.4])
    exact = expected_auc_risk(mean, cov, X_pos, X_neg)
    draws = []
    for _ in range(200):
        ip, jn = rng.integers(150, size=500), rng.integers(250, size=500)
        draws.append(paired_expected_risk_bound(mean, cov, X_pos[ip],
                                                X_neg[jn], 0.1))
    upper, estimate = np.array(draws).T
    assert np.mean(upper >= exact) >= 0.9
    assert np.mean(estimate >= exact) < 0.7
    with pytest.raises(InputError, match="same number of pairs"):
        paired_expected_risk_bound(mean, cov, X_pos, X_neg, 0.1)


# -------------------------------------------- the exact Gibbs posterior

def _exact_gibbs(lam, n=300, seed=5):
    """log Z, E_G[R_n] and the class counts of the exact d = 2 Gibbs
    posterior (quadrature over the angle)."""
    from builders import gaussian_classes
    from lab.reference.quadrature import AngularQuadrature
    rng = np.random.default_rng(seed)
    X, y = gaussian_classes(n, 0.4, np.array([1.5, 0.8]), rng)
    exact = AngularQuadrature(X, y, lam)
    weights = np.diff(exact.edges) * np.exp(-lam * (exact.risk
                                                    - exact.risk.min()))
    q = float(weights @ exact.risk / weights.sum())
    return exact.log_z, q, int(y.sum()), int((~y).sum())


@pytest.mark.parametrize("lam", [20.0, 115.25, 600.0])
def test_gibbs_certificate_needs_log_z_only_and_covers_every_risk(lam):
    """From log Z alone: at least the kl bound at the exact (E_G[R_n], KL)
    of quadrature (the worst case covers the true value), at most
    Catoni's form at C = lam / m (the worst case over every q), in [0, 1];
    a smaller log Z (a lower confidence bound) only loosens it."""
    from pac_particles.bounds import gibbs_certificate, maurer_constant
    log_z, q, n_pos, n_neg = _exact_gibbs(lam)
    m = min(n_pos, n_neg)
    cert = gibbs_certificate(log_z, lam, n_pos=n_pos, n_neg=n_neg,
                             delta=0.05)
    exact = kl_bound(q, -log_z - lam * q, m, 0.05, trivial=AUC_TRIVIAL)
    c = math.log(maurer_constant(m) / 0.05)
    catoni = -math.expm1((log_z - c) / m) / -math.expm1(-lam / m)
    assert exact.bound <= cert.bound <= min(catoni, 1.0) + 1e-12
    assert 0.0 <= cert.bound <= 1.0 and cert.kl is None
    assert cert.posterior == "exact Gibbs posterior"
    assert 0.0 <= cert.parameter <= -log_z / lam + 1e-12
    looser = gibbs_certificate(log_z - 0.5, lam, n_pos=n_pos, n_neg=n_neg,
                               delta=0.05)
    assert looser.bound >= cert.bound


def test_gibbs_candidate_shares_are_reported_under_its_label():
    """A candidate that splits its share (kl bound and log Z) reports both
    parts in tightest's delta_shares; the others their share."""
    from pac_particles.bounds import gibbs_certificate
    import dataclasses
    def gibbs(d):
        cert = gibbs_certificate(-20.0, 100.0, n_pos=200, n_neg=300,
                                 delta=0.9 * d)
        return dataclasses.replace(cert, delta=d, delta_shares=(
            ("kl", 0.9 * d), ("log Z", 0.1 * d)))
    cert = tightest([gibbs, lambda d: kl_bound(0.2, 5.0, 200, d)], 0.06)
    assert dict(cert.delta_shares) == pytest.approx({
        "kl, exact Gibbs posterior: kl": 0.027,
        "kl, exact Gibbs posterior: log Z": 0.003, "kl": 0.03})
    assert [name for name, _ in cert.alternatives] == [
        "kl, exact Gibbs posterior", "kl"]
