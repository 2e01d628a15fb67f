"""The dissertation's Corollary 21, Remark 16 and Figure 1 [ARC16]: each
against the printed formula written out by hand, Theorem 9 evaluated by
hand, Monte Carlo, or the VB fit's own objective."""
import math

import numpy as np
import pytest
from scipy.special import gammaln

from pac_particles.bounds import (SigmaProfile, corollary15_oracle_bound,
                                  corollary21_oracle_bound,
                                  remark16_excess_risks,
                                  remark16_zero_one_excess_bound,
                                  vb_objective_in_sigma)
from pac_particles.core.checks import InputError
from pac_particles.approx.classification_vb import ClassificationVB


# ------------------------------------------------------------ Corollary 21

def test_corollary21_is_the_printed_formula():
    n, d, c, delta = 501, 4, 0.3, 0.05
    a = n - 1
    printed = (0.1 + math.sqrt(2 * d / a) * (1 + 0.5 * math.log(2 * d * a))
               + c * math.sqrt(2) / math.sqrt(a) + 1 / (a ** 1.5 * math.sqrt(2 * d))
               + 2 * math.sqrt(2) * math.log(2 * math.e / delta) / math.sqrt(a * d))
    assert corollary21_oracle_bound(n, d, c, 0.1, delta) == pytest.approx(printed)


@pytest.mark.parametrize("n,d,c", [(101, 3, 0.5), (2000, 10, 0.0)])
def test_corollary21_derived_is_theorem9_at_the_proofs_choice(n, d, c):
    """Theorem 9's ``B = E_rho[R] + 2 (f + KL + log(2/delta)) / lam`` with
    Prop. 18's ``f = lam^2/(n-1)``, ``rho = N(theta_bar, sigma^2 I)``,
    ``|theta_bar| = 1``, prior ``N(0, I)``, ``sigma^2 = 1/(2d(n-1))``,
    ``lam = sqrt(d(n-1)/2)`` and A2's ``E R - R_bar <= 2c E|theta -
    theta_bar|`` (chi mean, exact): the derived rate is B plus the two
    slacks the proof drops, ``(d + 1)/lam`` and Jensen's ``2c (sigma
    sqrt(d) - E|theta - theta_bar|)``; the printed rate has half its log
    term."""
    best, delta = 0.05, 0.1
    a = n - 1
    lam = math.sqrt(d * a / 2)
    var = 1 / (2 * d * a)
    sigma = math.sqrt(var)
    kl = 0.5 * (d * var - d + 1 - d * math.log(var))
    chi_mean = sigma * math.sqrt(2) * math.exp(gammaln((d + 1) / 2) - gammaln(d / 2))
    theorem9 = (best + 2 * c * chi_mean
                + 2 * (lam ** 2 / a + kl + math.log(2 / delta)) / lam)
    derived = corollary21_oracle_bound(n, d, c, best, delta, as_printed=False)
    assert derived == pytest.approx(
        theorem9 + (d + 1) / lam + 2 * c * (sigma * math.sqrt(d) - chi_mean))
    printed = corollary21_oracle_bound(n, d, c, best, delta)
    assert printed == pytest.approx(
        derived - math.sqrt(2 * d / a) * 0.5 * math.log(2 * d * a))


def test_corollary21_refuses_a_single_observation():
    with pytest.raises(InputError, match="n >= 2"):
        corollary21_oracle_bound(1, 3, 0.1)


# ------------------------------------------------------------ Remark 16

def test_remark16_excess_risks_are_the_hand_values():
    # eta = 0.8: Bayes 0-1 risk 0.2, smallest hinge risk 0.4
    zero_one, hinge = remark16_excess_risks([-0.5, 0.0, 0.5, 2.0], 0.8)
    # f = -0.5: 0-1 risk 0.8 -> 0.6; hinge 0.8 * 1.5 + 0.2 * 0.5 = 1.3 -> 0.9
    # f = 0: 0-1 risk 1/2 -> 0.3; hinge 1 -> 0.6
    # f = 0.5: 0-1 risk 0.2 -> 0; hinge 0.8 * 0.5 + 0.2 * 1.5 = 0.7 -> 0.3
    # f = 2: 0-1 -> 0; hinge 0.2 * 3 = 0.6 -> 0.2
    np.testing.assert_allclose(zero_one, [0.6, 0.3, 0.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(hinge, [0.9, 0.6, 0.3, 0.2], atol=1e-12)


def test_remark16_excess_risks_match_monte_carlo_of_the_losses():
    rng = np.random.default_rng(0)
    f = np.array([-1.3, -0.2, 0.4, 1.7])
    eta = np.array([0.9, 0.35, 0.6, 0.05])
    draws = 400_000
    y = np.where(rng.uniform(size=(draws, 4)) < eta, 1.0, -1.0)
    bayes = np.where(eta > 0.5, 1.0, -1.0)
    mc_zero_one = np.mean((y * f < 0).astype(float) - (y * bayes < 0), axis=0)
    mc_hinge = np.mean(np.maximum(0, 1 - y * f) - np.maximum(0, 1 - y * bayes),
                       axis=0)
    zero_one, hinge = remark16_excess_risks(f, eta)
    np.testing.assert_allclose(zero_one, mc_zero_one, atol=0.005)
    np.testing.assert_allclose(hinge, mc_hinge, atol=0.01)


def test_remark16_zero_one_excess_never_exceeds_hinge_and_is_tight_near_zero():
    f, eta = np.meshgrid(np.linspace(-3, 3, 121), np.linspace(0, 1, 41))
    zero_one, hinge = remark16_excess_risks(f, eta)
    assert np.all(zero_one >= -1e-12) and np.all(zero_one <= hinge + 1e-12)
    # a small score on the wrong side: the hinge excess is (2 eta - 1)(1 - f)
    eta = np.array([0.6, 0.75, 0.99])
    zero_one, hinge = remark16_excess_risks(-1e-9, eta)
    np.testing.assert_allclose(hinge, zero_one, rtol=1e-8)
    np.testing.assert_allclose(zero_one, 2 * eta - 1)


def test_remark16_bound_is_corollary15_rate_plus_the_hinge_approximation_error():
    n, d, cx, delta = 1000, 5, 2.0, 0.05
    rate = (cx / 2 * math.sqrt(d / n) * math.log(n / d)
            + cx * (d / n) * math.sqrt(d / n)
            + ((2 * cx ** 2 + 1) / (2 * cx) + 2 * cx * math.log(2 / delta))
            / math.sqrt(n * d))
    assert remark16_zero_one_excess_bound(n, d, cx, 0.03, delta) == pytest.approx(
        0.03 + rate)
    assert remark16_zero_one_excess_bound(n, d, cx) == pytest.approx(
        corollary15_oracle_bound(n, d, cx, 0.0))


def test_remark16_refuses_eta_outside_zero_one():
    with pytest.raises(InputError, match="eta"):
        remark16_excess_risks([0.0], [1.2])


# ------------------------------------------------------------ Figure 1

def _hinge_vb(n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = (X @ [1.0, -0.7] + 0.6 * rng.normal(size=n) > 0).astype(int)
    vb = ClassificationVB(X, y, loss="hinge", family="isotropic",
                          standardize=False, fit_intercept=False)
    return X, y, vb


def test_objective_in_sigma_matches_monte_carlo_and_the_hand_kl():
    X, y, vb = _hinge_vb()
    m, sigma = np.array([0.8, -0.5]), 0.3
    prof = vb_objective_in_sigma(vb, [sigma], mean=m)
    rng = np.random.default_rng(1)
    theta = m + sigma * rng.standard_normal((40_000, 2))
    # the mean hinge loss of each draw, then their mean and standard error
    per_draw = np.maximum(0.0, 1.0 - (2 * y - 1) * (theta @ X.T)).mean(axis=1)
    mc_risk, mc_se = per_draw.mean(), per_draw.std() / math.sqrt(per_draw.size)
    nu2, d = vb.prior_var, 2
    kl = m @ m / (2 * nu2) + d / 2 * (sigma ** 2 / nu2 - 1 - math.log(sigma ** 2 / nu2))
    assert abs(prof.expected_risk[0] - mc_risk) < 4 * mc_se
    assert prof.kl[0] == pytest.approx(kl)
    assert prof.objective[0] == pytest.approx(vb.lam * prof.expected_risk[0] + kl)


def test_hinge_objective_is_convex_in_sigma_with_its_minimum_at_the_fit():
    _, _, vb = _hinge_vb()
    fit = vb.fit()
    sigma_hat = math.sqrt(fit.cov[0, 0])
    grid = np.linspace(0.05, 3.0, 400) * sigma_hat
    prof = vb_objective_in_sigma(vb, grid)
    assert prof.is_convex()
    assert prof.argmin == pytest.approx(sigma_hat, abs=2 * (grid[1] - grid[0]))
    at_fit = vb_objective_in_sigma(vb, [sigma_hat])
    assert at_fit.objective[0] == pytest.approx(fit.objective, rel=1e-10)


def test_is_convex_flags_a_concave_profile():
    sigma = np.linspace(0.1, 1.0, 10)
    concave = SigmaProfile(sigma=sigma, objective=np.sqrt(sigma),
                           expected_risk=sigma, kl=sigma, lam=1.0,
                           prior_var=1.0, loss="hinge")
    assert not concave.is_convex()
    convex = SigmaProfile(sigma=sigma, objective=sigma ** 2 - np.log(sigma),
                          expected_risk=sigma, kl=sigma, lam=1.0,
                          prior_var=1.0, loss="hinge")
    assert convex.is_convex()


def test_objective_in_sigma_refuses_a_bad_grid():
    _, _, vb = _hinge_vb()
    with pytest.raises(InputError, match="sigmas"):
        vb_objective_in_sigma(vb, [0.2, 0.1], mean=np.zeros(2))
    with pytest.raises(InputError, match="fit"):
        vb_objective_in_sigma(vb, [0.1])
