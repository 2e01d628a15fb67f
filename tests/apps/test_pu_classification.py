"""Positive-unlabelled classification: the ramp loss's PU risk is unbiased,
the hinge loss's is not [du Plessis, Niu & Sugiyama 2014, Sec. 3]."""
import numpy as np
import pytest
from scipy import integrate, optimize, stats

from pac_particles.problem.risks import ClassificationRisk
from lab.study.pu_classification import (bayes_error,
                                                   format_pu_study,
                                                   gaussian_pu_sample,
                                                   pu_study)


def test_bayes_error_matches_quadrature():
    pi, sep = 0.7, 1.3

    def density(x, y):
        return stats.norm.pdf(x, loc=sep if y else -sep)
    # error of the best threshold rule on x_1, by quadrature and a search
    # (the optimal rule is a threshold on x_1: likelihood ratio monotone)
    def error(t):
        return (pi * integrate.quad(density, -np.inf, t, args=(True,))[0]
                + (1 - pi) * integrate.quad(density, t, np.inf,
                                            args=(False,))[0])
    best = optimize.minimize_scalar(error, bounds=(-1, 1), method="bounded",
                                    options={"xatol": 1e-8})
    assert bayes_error(pi, sep) == pytest.approx(best.fun, abs=1e-7)
    assert best.x == pytest.approx(np.log((1 - pi) / pi) / (2 * sep), abs=1e-4)


@pytest.mark.parametrize("loss, unbiased", [("ramp", True), ("hinge", False)])
def test_pu_risk_estimates_the_labelled_risk_only_for_the_ramp(loss, unbiased):
    """On a large sample, the PU risk of a fixed rule against its risk on
    the true labels of the mixture: equal for the ramp loss, larger by
    ``pi E_P[l(s) + l(-s)] - pi`` for the hinge."""
    pi, n = 0.7, 200_000
    X_p, X_u, y_u, _, _ = gaussian_pu_sample(n, pi, np.random.default_rng(0),
                                             n_test=1)
    theta = np.array([1.5, 0.3])
    s_p, s_u = X_p @ theta, X_u @ theta
    pu = ClassificationRisk(np.r_[np.ones(n), np.zeros(n)], loss,
                            pu_prior=pi)(np.r_[s_p, s_u])
    pn = ClassificationRisk(y_u, loss)(s_u)
    if unbiased:
        assert pu == pytest.approx(pn, abs=0.01)
    else:
        # the bias, estimated on the positives
        both = np.maximum(0, 1 - s_p) + np.maximum(0, 1 + s_p)
        bias = pi * both.mean() - pi
        assert bias > 0.5
        assert pu - pn == pytest.approx(bias, abs=0.02)


@pytest.mark.parametrize("method", ["vb", "smc"])
def test_ramp_pu_fit_matches_the_labelled_fit_and_hinge_is_biased(method):
    rows = pu_study(priors=(0.85,), sizes=(200,), n_repeats=1,
                    methods=(method,), n_test=5000, n_particles=100,
                    len_chain=5)
    by_loss = {row["loss"]: row for row in rows}
    ramp, hinge = by_loss["ramp"], by_loss["hinge"]
    bayes = ramp["bayes_error"]
    assert bayes == pytest.approx(0.0146, abs=1e-3)
    # the ramp PU fit does about as well as the fully labelled one and as
    # the Bayes rule
    assert ramp["error_pu"] < ramp["error_pn"] + 0.01
    assert ramp["error_pu"] < bayes + 0.01
    assert hinge["error_pn"] < bayes + 0.01
    # the hinge PU posterior's own cut is biased towards the positive
    # class: close to calling every point positive (error 1 - pi); the
    # deployed cut (Platt's, on the PU log-loss) moves it back
    assert hinge["error_pu_own_cut"] > ramp["error_pu_own_cut"] + 0.05
    assert hinge["error_pu"] < bayes + 0.01
    assert "| 0.85 | 200 |" in format_pu_study(rows)


def test_pu_study_refuses_bad_input():
    with pytest.raises(ValueError, match="pu_prior"):
        pu_study(priors=(1.2,), sizes=(20,), n_repeats=1)
    with pytest.raises(ValueError, match="methods"):
        pu_study(priors=(0.5,), sizes=(20,), n_repeats=1, methods=("ep",))
