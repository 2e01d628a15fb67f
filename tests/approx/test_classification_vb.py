"""Gaussian VB of the classification Gibbs posteriors: closed-form
expected losses against Monte Carlo, gradients against finite differences,
the ELBO against exact log Z in d = 2, agreement with long SMC runs."""

import numpy as np
import pytest

from pac_particles.core.checks import InputError
from pac_particles.problem.gaussian_losses import GaussianPointRisk, expected_margin_loss
from pac_particles.smc.models import ClassificationGibbsModel
from pac_particles.smc.posterior import run_smc
from pac_particles.problem.risks import LOSSES, ClassificationRisk
from pac_particles.approx.classification_vb import ClassificationVB
from builders import two_d_problem
from lab.reference.quadrature import (AngularQuadrature, grid_log_z,
                                      numpy_loss)


@pytest.mark.parametrize("loss", LOSSES)
def test_expected_loss_matches_monte_carlo_and_its_derivatives(loss):
    rng = np.random.default_rng(0)
    mu = np.array([-1.5, -0.2, 0.0, 0.4, 1.0, 2.5])
    var = np.array([0.3, 1.0, 0.5, 2.0, 0.1, 0.8])
    z = rng.standard_normal((400_000, 1))
    draws = numpy_loss(loss, mu + np.sqrt(var) * z)
    value, d_mu, d_var = expected_margin_loss(loss, mu, var)
    se = draws.std(axis=0) / np.sqrt(z.shape[0])
    assert np.all(np.abs(value - draws.mean(axis=0)) < 4 * se + 1e-12)
    h = 1e-6
    fd_mu = (expected_margin_loss(loss, mu + h, var)[0]
             - expected_margin_loss(loss, mu - h, var)[0]) / (2 * h)
    fd_var = (expected_margin_loss(loss, mu, var + h)[0]
              - expected_margin_loss(loss, mu, var - h)[0]) / (2 * h)
    np.testing.assert_allclose(d_mu, fd_mu, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(d_var, fd_var, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("loss", LOSSES)
def test_expected_risk_is_the_mean_risk_of_gaussian_parameters(loss):
    """E_rho[r_n] by the closed form against the batched risk kernel
    averaged over draws theta ~ N(m, S) (a zero row included)."""
    rng = np.random.default_rng(1)
    X = rng.standard_normal((25, 3))
    X[4] = 0.0
    y = rng.integers(0, 2, 25)
    risk = ClassificationRisk(y, loss)
    m = np.array([0.5, -0.3, 0.2])
    A = rng.standard_normal((3, 3))
    S = 0.1 * A @ A.T + 0.05 * np.eye(3)
    theta = rng.multivariate_normal(m, S, size=200_000)
    draws = risk.linear(theta, X)
    got = GaussianPointRisk(X, risk)(m, S, need_grad=False)[0]
    assert abs(got - draws.mean()) < 4 * draws.std() / np.sqrt(draws.size)


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("full", [True, False])
def test_gradients_match_finite_differences(loss, full):
    rng = np.random.default_rng(2)
    X = rng.standard_normal((30, 3))
    risk = ClassificationRisk(rng.integers(0, 2, 30), loss, pu_prior=0.3)
    terms = GaussianPointRisk(X, risk)
    m = np.array([0.3, -0.2, 0.6])
    cov = np.diag([0.2, 0.5, 0.3]) + (0.05 if full else 0.0)
    if not full:
        cov = np.diag(cov)
    _, g_m, g_cov = terms(m, cov)
    h = 1e-6
    for k in range(3):
        e = np.zeros(3)
        e[k] = h
        fd = (terms(m + e, cov)[0] - terms(m - e, cov)[0]) / (2 * h)
        assert g_m[k] == pytest.approx(fd, rel=1e-5, abs=1e-8)
        E = np.zeros_like(cov)
        E[(k, k) if full else k] = h
        fd = (terms(m, cov + E)[0] - terms(m, cov - E)[0]) / (2 * h)
        assert g_cov[(k, k) if full else k] == pytest.approx(fd, rel=1e-5,
                                                             abs=1e-8)


def test_zero_one_elbo_is_below_exact_log_z_in_two_dimensions():
    X, y = two_d_problem(n=120)
    lam = 120.0
    exact = AngularQuadrature(X, y, lam, margins="points")
    elbos, res = [], None
    for family in ("isotropic", "diagonal", "full"):
        # warm start at the smaller family's optimum: nested optima
        res = ClassificationVB(X, y, lam=lam, prior_var=1.0, family=family,
                               fit_intercept=False, standardize=False).fit(
            init=res)
        elbos.append(res.elbo)
        assert res.converged and res.elbo < exact.log_z
    assert elbos[0] <= elbos[1] + 1e-9 <= elbos[2] + 2e-9
    assert exact.log_z - elbos[2] < 1.0           # a tight lower bound
    cosine = res.mean @ exact.mean / np.linalg.norm(res.mean) \
        / np.linalg.norm(exact.mean)
    assert cosine > 0.99


@pytest.mark.parametrize("loss", ["hinge", "exponential", "ramp"])
def test_elbo_is_below_grid_log_z_and_means_agree(loss):
    X, y = two_d_problem(n=80)
    lam = 40.0
    log_z, mean = grid_log_z(X, y, lam, loss)
    res = ClassificationVB(X, y, lam=lam, loss=loss, prior_var=1.0,
                           family="full", fit_intercept=False,
                           standardize=False).fit()
    assert res.elbo < log_z
    assert log_z - res.elbo < 0.3
    np.testing.assert_allclose(res.mean, mean, atol=0.05)


def test_vb_agrees_with_a_long_smc_run_for_the_hinge_loss():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((150, 3))
    y = (X @ [1.0, -1.0, 0.5] + 0.3 + 0.7 * rng.standard_normal(150) > 0)
    lam = 150.0
    vb = ClassificationVB(X, y, lam=lam, loss="hinge", prior_var=1.0).fit()
    post = run_smc(ClassificationGibbsModel(X, y, lam=lam, loss="hinge"),
                   n_particles=1000, len_chain=10, seed=0)
    sd = np.sqrt(np.diag(post.cov))
    assert np.all(np.abs(vb.mean - post.mean) < 0.2 * sd)
    np.testing.assert_allclose(np.sqrt(np.diag(vb.cov)), sd, rtol=0.15)
    assert vb.elbo < post.log_z < vb.elbo + 0.5


def test_minibatch_adam_approaches_the_exact_fit():
    X, y = two_d_problem(n=400)
    exact = ClassificationVB(X, y, lam=100.0, loss="hinge",
                             family="diagonal").fit()
    vb = ClassificationVB(X, y, lam=100.0, loss="hinge", family="diagonal",
                          batch_size=64, seed=0, max_iter=3000)
    noisy = vb.fit()
    assert "points" in noisy.message
    assert noisy.objective < exact.objective + 0.05 * abs(exact.objective)
    np.testing.assert_allclose(noisy.mean, exact.mean, atol=0.1)
    again = ClassificationVB(X, y, lam=100.0, loss="hinge", family="diagonal",
                             batch_size=64, seed=0, max_iter=3000).fit()
    np.testing.assert_array_equal(again.mean, noisy.mean)


def test_predictive_probability_is_the_probit_of_the_margin():
    X, y = two_d_problem(n=60)
    vb = ClassificationVB(X, y, lam=60.0)
    res = vb.fit()
    Z = vb.data.transform(X)
    draws = np.random.default_rng(4).multivariate_normal(res.mean, res.cov,
                                                         size=100_000)
    mc = np.mean(draws @ Z.T > 0, axis=0)
    np.testing.assert_allclose(vb.predict_proba(X), mc, atol=0.01)


@pytest.mark.parametrize("kwargs, match", [
    (dict(lam=-1.0), "lam"), (dict(loss="square"), "loss"),
    (dict(family="banded"), "family"), (dict(batch_size=0), "batch_size"),
    (dict(prior_var=0.0), "prior_var")])
def test_bad_input_is_refused(kwargs, match):
    X, y = two_d_problem(n=20)
    with pytest.raises(InputError, match=match):
        ClassificationVB(X, y, **kwargs)
    with pytest.raises(InputError, match="not fitted"):
        ClassificationVB(X, y).predict_proba(X)


def _decrement_case(family="diagonal", n=400, seed=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    y = X @ [1.0, -1.0, 0.5, 0.0] + rng.logistic(size=n) > 0
    return X, y


@pytest.mark.parametrize("family", ["diagonal", "isotropic"])
def test_the_decrement_predicts_the_objective_gap_near_the_optimum(family):
    """``GaussianFamily.decrement`` at points near a tightly converged
    optimum is the objective's excess there, to a factor of 2 (the cross
    terms of the Hessian it leaves out); taking the Hessian's inverse in
    the mean for the Hessian (a wrong variant) is off by orders of
    magnitude."""
    from pac_particles.approx.gaussian_family import GaussianFamily
    X, y = _decrement_case()
    vb = ClassificationVB(X, y, lam=400.0, loss="hinge", family=family,
                          tol=1e-10)
    res = vb.fit()
    fam = GaussianFamily(family, vb.data.d)
    x_star = fam.pack(res.mean, res.compact_cov)

    def objective(x):
        value, grad, _, _ = fam.objective(x, vb.lam, vb.prior_var,
                                          vb._expected)
        return value, grad
    f_star = objective(x_star)[0]
    rng = np.random.default_rng(0)
    sd = np.sqrt(np.broadcast_to(res.compact_cov, (vb.data.d,)))
    for _ in range(5):
        step = np.zeros_like(x_star)
        step[:vb.data.d] = 0.05 * sd * rng.normal(size=vb.data.d)
        step[vb.data.d:] = 0.05 * rng.normal(size=step.size - vb.data.d)
        value, grad = objective(x_star + step)
        gap = fam.decrement(x_star + step, grad)
        assert 0.5 < gap / (value - f_star) < 2.0
        d = vb.data.d
        wrong = 0.5 * float(grad[:d] ** 2 @ (1.0 / sd ** 2))
        assert not 0.1 < wrong / (value - f_star) < 10.0
    assert GaussianFamily("full", 3).decrement(np.zeros(9), np.ones(9)) is None


def test_a_fit_to_a_decrement_stops_within_it_with_fewer_evaluations():
    """``decrement_tol``: L-BFGS stops once the predicted decrease is below
    it, converged, within a few times it of the tight optimum's objective,
    in fewer evaluations than the gradient tolerance alone takes."""
    X, y = _decrement_case(n=3000)
    kw = dict(lam=3000.0, loss="zero_one", family="diagonal")
    tight = ClassificationVB(X, y, tol=1e-9, **kw).fit()
    close = ClassificationVB(X, y, decrement_tol=1e-3, **kw).fit()
    assert close.converged and "decrement_tol" in close.message
    assert close.n_fev < tight.n_fev
    assert 0.0 <= close.objective - tight.objective < 1e-2
    # from a warm start (a part's fit) it runs in the metric there: the
    # optimum of the convex hinge objective, in a fraction of the
    # evaluations
    kw["loss"] = "hinge"
    tight = ClassificationVB(X, y, tol=1e-9, **kw).fit()
    part = ClassificationVB(X[:2400], y[:2400], decrement_tol=1e-3,
                            **kw).fit()
    warm = ClassificationVB(X, y, decrement_tol=1e-3, **kw).fit(init=part)
    plain = ClassificationVB(X, y, tol=1e-9, **kw).fit(init=part)
    assert warm.converged and 3 * warm.n_fev < plain.n_fev
    assert 0.0 <= warm.objective - tight.objective < 1e-2
    with pytest.raises(InputError, match="decrement_tol"):
        ClassificationVB(X, y, decrement_tol=0.0, **kw)


def test_a_cold_fit_of_many_rows_starts_from_a_pilot_on_an_eighth():
    """``pilot_rows``: a cold fit to a decrement of more than 8 times that
    many rows starts from a fit on an eighth of them (seeded): the convex
    hinge objective's optimum, in a few evaluations on all rows; the same
    fit for the same seed; none below the size."""
    from pac_particles.approx.classification_vb import PILOT_FACTOR
    X, y = _decrement_case(n=4000)
    kw = dict(lam=4000.0, loss="hinge", family="diagonal")
    tight = ClassificationVB(X, y, tol=1e-9, **kw).fit()
    cold = ClassificationVB(X, y, decrement_tol=1e-3, **kw).fit()
    piloted = ClassificationVB(X, y, decrement_tol=1e-3, pilot_rows=400,
                               seed=3, **kw).fit()
    assert piloted.converged and 2 * piloted.n_fev < cold.n_fev
    assert 0.0 <= piloted.objective - tight.objective < 1e-2
    again = ClassificationVB(X, y, decrement_tol=1e-3, pilot_rows=400,
                             seed=3, **kw).fit()
    np.testing.assert_array_equal(again.mean, piloted.mean)
    unpiloted = ClassificationVB(X, y, decrement_tol=1e-3,
                                 pilot_rows=4000 // PILOT_FACTOR, **kw).fit()
    assert unpiloted.n_fev == cold.n_fev
