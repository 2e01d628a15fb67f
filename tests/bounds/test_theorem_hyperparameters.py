"""The hyper-parameters of [RACL14, Thm. 2.3, 2.4, 2.5] and their
conversion to this package's ``lam``, each against the paper's formula
written out by hand (or the paper's own risk, summed pair by pair)."""
import math

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from pac_particles.problem.auc import auc_risk
from pac_particles.core.checks import InputError
from pac_particles.smc.models import AUCGibbsModel
from pac_particles.problem.priors import SpikeSlabPrior
from pac_particles.bounds.theorem_hyperparameters import (gamma_to_lam, lam_to_gamma,
                                                   theorem_2_3, theorem_2_4,
                                                   theorem_2_5)


def racl14_risk(scores, y):
    """[RACL14, Sec. 2.1]: ``1/(n(n-1)) sum_{i != j} 1[(s_i - s_j)(Y_i -
    Y_j) < 0]``, labels in {-1, +1}, by a double loop."""
    y = 2 * np.asarray(y, dtype=int) - 1
    n = len(y)
    wrong = sum((scores[i] - scores[j]) * (y[i] - y[j]) < 0
                for i in range(n) for j in range(n) if i != j)
    return wrong / (n * (n - 1))


def test_lam_times_our_risk_is_gamma_times_the_papers_ordered_pairs_risk():
    rng = np.random.default_rng(0)
    y = np.array([1, 0, 1, 1, 0])                    # n_pos = 3, n_neg = 2
    # by hand: q_n = 2 * 3 * 2 / (5 * 4) = 0.6
    assert gamma_to_lam(1.0, 3, 2) == pytest.approx(0.6)
    assert lam_to_gamma(0.6, 3, 2) == pytest.approx(1.0)
    for _ in range(5):
        scores = rng.normal(size=5)                  # continuous: no ties
        gamma = 2.7
        assert gamma * racl14_risk(scores, y) == pytest.approx(
            gamma_to_lam(gamma, 3, 2) * auc_risk(scores, y), abs=1e-12)


def test_theorem_lam_gives_the_gibbs_posterior_of_the_theorems_gamma():
    """``AUCGibbsModel(lam=hp.lam)`` has log-likelihood ``-gamma
    R_n^RACL``: the posterior the theorem is about."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(9, 2))
    y = np.array([1, 1, 1, 1, 0, 0, 0, 0, 0])
    hp = theorem_2_3(n_pos=4, n_neg=5, d=2)
    model = AUCGibbsModel(X, y, lam=hp.lam, standardize=False)
    theta = model.prior.rvs(size=6)
    expected = [-hp.gamma * racl14_risk(X @ t, y) for t in theta["theta"]]
    np.testing.assert_allclose(model.loglik(theta), expected, atol=1e-12)


def test_theorem_2_3_is_the_printed_choice():
    hp = theorem_2_3(n_pos=3, n_neg=2, d=4)
    # by hand: gamma = (5 - 1)/(8 * 1), vartheta = (2/4)(1 + 1/(25 * 4))
    assert hp.gamma == pytest.approx(0.5)
    assert hp.lam == pytest.approx(0.6 * 0.5)
    assert hp.prior_var == pytest.approx(0.505)
    assert hp.gamma_max == pytest.approx(0.5) and hp.within_lemma_range
    assert theorem_2_3(3, 2, 4, C=2.0).gamma == pytest.approx(0.25)
    prior = hp.prior()
    np.testing.assert_allclose(prior.laws["theta"].variances, [0.505] * 4)


@pytest.mark.parametrize("n,d", [(2, 1), (10, 3), (300, 20)])
def test_theorem_2_3_prior_variance_minimises_the_appendix_kl_bound(n, d):
    """App. A.3: ``KL <= -d log delta + (d/2) log(8 pi vartheta d) +
    1/vartheta + delta^2/(vartheta d)`` with ``delta = 1/n``; the theorem's
    ``vartheta`` is its minimiser (not the appendix's ``n^(1/2)``
    variant)."""
    delta = 1.0 / n

    def kl_bound(v):
        return (-d * math.log(delta) + d / 2 * math.log(8 * math.pi * v * d)
                + 1 / v + delta ** 2 / (v * d))

    best = minimize_scalar(kl_bound, bounds=(1e-6, 100.0), method="bounded",
                           options=dict(xatol=1e-12)).x
    hp = theorem_2_3(n_pos=n // 2 or 1, n_neg=n - (n // 2 or 1), d=d)
    assert hp.n == n
    assert hp.prior_var == pytest.approx(best, rel=1e-6)
    if n == 2:
        appendix = 2 / d * (1 + 1 / (math.sqrt(n) * d))
        assert appendix != pytest.approx(best, rel=1e-2)


def test_theorem_2_4_is_the_printed_choice_and_flags_lemma_2_2s_range():
    hp = theorem_2_4(n_pos=40, n_neg=60, d=3)           # C = 4 by default
    q_n = 2 * 40 * 60 / (100 * 99)
    assert hp.gamma == pytest.approx(4 * math.sqrt(3 * 100 * math.log(100)))
    assert hp.lam == pytest.approx(q_n * hp.gamma)
    assert hp.prior_var == pytest.approx(2 / 3 * (1 + 1 / (100 ** 2 * 3)))
    # Lemma 2.2 needs gamma <= (n - 1)/8 = 12.375: far above here
    assert hp.gamma_max == pytest.approx(99 / 8) and not hp.within_lemma_range
    big = theorem_2_4(n_pos=10 ** 6, n_neg=10 ** 6, d=1, C=1.0)
    assert big.within_lemma_range


def test_theorem_2_5_is_the_printed_choice():
    hp = theorem_2_5(n_pos=100, n_neg=108, d=60, v1=2.0)
    n, d = 208, 60
    assert hp.p == pytest.approx(1 - math.exp(-1 / d))
    # App. A.5's term d log(1/(1 - p)) is 1 at this p
    assert d * math.log(1 / (1 - hp.p)) == pytest.approx(1.0)
    assert hp.v0 == pytest.approx(1 / (2 * n * d * math.log(d)))
    assert hp.v1 == 2.0
    assert hp.gamma == pytest.approx((n - 1) / 8)
    assert hp.lam == pytest.approx(2 * 100 * 108 / (n * (n - 1)) * (n - 1) / 8)
    prior = hp.prior()
    assert isinstance(prior, SpikeSlabPrior)
    assert (float(prior.p), float(prior.v0), float(prior.v1)) == pytest.approx(
        (hp.p, hp.v0, 2.0))


@pytest.mark.parametrize("call,match", [
    (lambda: theorem_2_3(3, 2, 4, C=0.5), "C"),
    (lambda: theorem_2_4(3, 2, 0), "d"),
    (lambda: theorem_2_3(0, 2, 4), "n_pos"),
    (lambda: theorem_2_5(3, 2, 1), "d >= 2"),
    (lambda: gamma_to_lam(-1.0, 3, 2), "gamma")])
def test_bad_input_is_refused_with_its_name(call, match):
    with pytest.raises(InputError, match=match):
        call()
