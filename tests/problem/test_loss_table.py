"""The loss table (pac_particles.problem.losses): a loss is declared once,
every backend looks it up there, and an unknown one raises everywhere.

The toy loss below, the squared hinge ``max(0, 1 - u)^2``, is one
declaration and one registration: with nothing else it is computed by the
numba risk kernels, the JAX backend and the Gaussian closed forms, and fits
by SMC and by Gaussian VB.
"""

import math

import numpy as np
import pytest
from scipy.special import ndtr

from pac_particles.apps.cli import build_parser
from pac_particles.approx.classification_vb import ClassificationVB
from pac_particles.core.checks import InputError
from pac_particles.problem.gaussian_losses import (GaussianPointRisk,
                                                   expected_margin_loss)
from pac_particles.problem.losses import LOSSES, MarginLoss, get_loss, register_loss
from pac_particles.problem.problem import GibbsProblem
from pac_particles.problem.risks import ClassificationRisk
from pac_particles.sklearn.classifier import PACBayesClassifier
from pac_particles.smc.models import ClassificationGibbsModel
from pac_particles.smc.posterior import run_smc

from builders import two_d_problem
from lab.reference.quadrature import grid_log_z


# ------------------------------------------------ the toy loss: one declaration

def squared_hinge(u):
    return max(0.0, 1.0 - u) ** 2


def gaussian_squared_hinge(mu, var):
    """``E[(a + s Z)_+^2] = (a^2 + s^2) Phi(a/s) + a s phi(a/s)``, ``a = 1 -
    mu``; ``d/da = 2 h(a, s)``, ``d/dvar = Phi(a/s)``."""
    a, s = 1.0 - mu, np.sqrt(var)
    cdf = ndtr(a / s)
    pdf = np.exp(-0.5 * (a / s) ** 2) / math.sqrt(2 * math.pi)
    return ((a * a + var) * cdf + a * s * pdf, -2.0 * (a * cdf + s * pdf),
            cdf)


SQUARED_HINGE = MarginLoss(
    "squared_hinge", squared_hinge,
    jax_point=lambda xp, u: xp.maximum(0.0, 1.0 - u) ** 2,
    gaussian=gaussian_squared_hinge, bounded=False, convex=True)


def numpy_squared_hinge(u):
    return np.maximum(0.0, 1.0 - u) ** 2


@pytest.fixture
def toy_loss():
    register_loss(SQUARED_HINGE)               # the one registration
    yield SQUARED_HINGE.name
    del LOSSES[SQUARED_HINGE.name]


# ------------------------------------------------------------ every backend

def test_a_registered_loss_is_computed_by_the_numba_kernels(toy_loss):
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 40)
    scores = rng.normal(size=(300, 40))        # parallel and serial sizes
    risk = ClassificationRisk(y, toy_loss, pu_prior=0.3)
    signs = np.where(y == 1, 1.0, -1.0)
    expected = numpy_squared_hinge(signs * scores) @ risk.weights + risk.offset
    np.testing.assert_allclose(risk(scores), expected, rtol=1e-12)
    np.testing.assert_allclose(risk(scores[:2]), expected[:2], rtol=1e-12)
    assert not risk.bounded


def test_a_registered_loss_is_computed_by_the_jax_backend(toy_loss):
    pytest.importorskip("jax")
    from pac_particles.problem.accelerated_risk import DeviceLinearRisk
    rng = np.random.default_rng(1)
    X = rng.normal(size=(50, 3))
    risk = ClassificationRisk(rng.integers(0, 2, 50), toy_loss)
    theta = rng.normal(size=(20, 3))
    device = DeviceLinearRisk(risk, risk.ordered(X), chunk_particles=8)
    np.testing.assert_allclose(device.linear(theta),
                               risk.linear(theta, risk.ordered(X)),
                               rtol=1e-12)


def test_a_registered_closed_form_matches_monte_carlo_and_its_derivatives(
        toy_loss):
    rng = np.random.default_rng(2)
    mu = np.array([-1.5, 0.0, 0.7, 2.5])
    var = np.array([0.3, 1.0, 2.0, 0.5])
    z = rng.standard_normal((400_000, 1))
    draws = numpy_squared_hinge(mu + np.sqrt(var) * z)
    value, d_mu, d_var = expected_margin_loss(toy_loss, mu, var)
    se = draws.std(axis=0) / np.sqrt(z.shape[0])
    assert np.all(np.abs(value - draws.mean(axis=0)) < 4 * se)
    h = 1e-6
    fd_mu = (expected_margin_loss(toy_loss, mu + h, var)[0]
             - expected_margin_loss(toy_loss, mu - h, var)[0]) / (2 * h)
    fd_var = (expected_margin_loss(toy_loss, mu, var + h)[0]
              - expected_margin_loss(toy_loss, mu, var - h)[0]) / (2 * h)
    np.testing.assert_allclose(d_mu, fd_mu, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(d_var, fd_var, rtol=1e-6, atol=1e-8)


def test_a_registered_loss_fits_by_smc_and_vb_against_quadrature(toy_loss):
    X, y = two_d_problem(n=60)
    lam = 30.0
    log_z, mean = grid_log_z(X, y, lam, numpy_squared_hinge)
    model = ClassificationGibbsModel(X, y, lam=lam, loss=toy_loss,
                                     fit_intercept=False, standardize=False)
    post = run_smc(model, n_particles=400, len_chain=5, seed=0)
    assert abs(post.log_z - log_z) < 0.15
    np.testing.assert_allclose(post.mean, mean, atol=0.1)
    vb = ClassificationVB(X, y, lam=lam, loss=toy_loss, prior_var=1.0,
                          fit_intercept=False, standardize=False).fit()
    assert vb.elbo < log_z < vb.elbo + 0.3
    np.testing.assert_allclose(vb.mean, mean, atol=0.05)


def test_a_registered_loss_is_a_choice_of_the_estimator_and_the_cli(toy_loss):
    X, y = two_d_problem(n=40)
    est = PACBayesClassifier(method="vb", loss=toy_loss, lam=20.0).fit(X, y)
    assert est.score(X, y) > 0.7
    args = build_parser().parse_args(["classify", "data.csv", "--loss",
                                      toy_loss])
    assert args.loss == toy_loss


# ------------------------------------------------------ no silent fall-through

def test_an_unknown_loss_raises_in_every_backend():
    y = np.array([0, 1, 0, 1])
    X = np.arange(8.0).reshape(4, 2)
    for call in (lambda: get_loss("squared"),
                 lambda: ClassificationRisk(y, "squared"),
                 lambda: GibbsProblem.classification(X, y, 1.0, "squared"),
                 lambda: ClassificationGibbsModel(X, y, 1.0, loss="squared"),
                 lambda: expected_margin_loss("squared", np.zeros(2),
                                              np.ones(2)),
                 lambda: PACBayesClassifier(loss="squared", lam=1.0).fit(X, y)):
        with pytest.raises(InputError, match="loss must be one of"):
            call()
    with pytest.raises(SystemExit):
        build_parser().parse_args(["classify", "data.csv", "--loss",
                                   "squared"])


def test_a_loss_without_a_backend_raises_there_instead_of_falling_through():
    """A loss that declares no closed form or no JAX version is refused by
    those backends (once, they fell through to the ramp loss)."""
    bare = register_loss(MarginLoss("bare_hinge", SQUARED_HINGE.point))
    try:
        y = np.array([0, 1, 0, 1])
        risk = ClassificationRisk(y, bare.name)
        assert risk(np.array([0.5, 2.0, -1.0, 0.0])) == pytest.approx(
            np.mean(numpy_squared_hinge(np.array([-0.5, 2.0, 1.0, 0.0]))))
        with pytest.raises(InputError, match="no Gaussian closed form"):
            expected_margin_loss(bare.name, np.zeros(2), np.ones(2))
        try:
            import jax  # noqa: F401
        except ImportError:
            return
        from pac_particles.problem.accelerated_risk import DeviceLinearRisk
        with pytest.raises(InputError, match="no jax_point"):
            DeviceLinearRisk(risk, np.zeros((4, 1)))
    finally:
        del LOSSES[bare.name]


def test_the_built_in_losses_declare_their_properties():
    assert list(LOSSES)[:4] == ["zero_one", "hinge", "exponential", "ramp"]
    assert [n for n in ("zero_one", "hinge", "exponential", "ramp")
            if get_loss(n).bounded] == ["zero_one", "ramp"]
    assert [n for n in ("zero_one", "hinge", "exponential", "ramp")
            if get_loss(n).symmetric] == ["zero_one", "ramp"]
    assert [n for n in ("zero_one", "hinge", "exponential", "ramp")
            if get_loss(n).scale_invariant] == ["zero_one"]
    u = np.linspace(-3, 3, 13)
    for name in ("zero_one", "ramp"):
        point = get_loss(name).point
        assert all(point(v) + point(-v) == 1.0 for v in u)
    # the declared properties hold on a grid, and fail for the others
    for name in ("zero_one", "hinge", "exponential", "ramp"):
        loss = get_loss(name)
        values = np.array([loss.point(v) for v in u])
        scaled = np.array([loss.point(2.5 * v) for v in u])
        assert np.array_equal(values, scaled) == loss.scale_invariant
        assert (values.min() >= 0 and values.max() <= 1) == loss.bounded


def test_a_loss_registered_again_with_another_point_is_compiled_afresh():
    """The kernels are compiled and cached per loss and per point
    function: a name registered again computes its new loss, not the
    kernel compiled for the old one."""
    y = np.array([0, 1, 0, 1])
    scores = np.array([0.5, 2.0, -1.0, 0.0])
    margins = np.array([-0.5, 2.0, 1.0, 0.0])
    try:
        register_loss(MarginLoss("probe", SQUARED_HINGE.point))
        first = ClassificationRisk(y, "probe")(scores)
        register_loss(MarginLoss("probe", get_loss("exponential").point))
        second = ClassificationRisk(y, "probe")(scores)
    finally:
        del LOSSES["probe"]
    assert first == pytest.approx(np.mean(numpy_squared_hinge(margins)))
    assert second == pytest.approx(np.mean(np.exp(-margins)))


def test_a_registered_numpy_closed_form_gives_the_point_risk(toy_loss):
    """A loss with a numpy ``gaussian`` only (no ``gaussian_point``): the
    point risk of a diagonal S takes the n-vector path, its sum by hand."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(200, 4))
    risk = ClassificationRisk(rng.integers(0, 2, 200), toy_loss)
    terms = GaussianPointRisk(X, risk)
    assert not terms.fused
    m, var = rng.normal(size=4), 0.1 * rng.gamma(2.0, size=4)
    value, g_m, _ = terms(m, var)
    mu = risk.signs * (X @ m)
    closed = gaussian_squared_hinge(mu, (X * X) @ var)
    assert value == pytest.approx(risk.weights @ closed[0] + risk.offset,
                                  rel=1e-12)
    np.testing.assert_allclose(g_m, X.T @ (risk.weights * risk.signs
                                           * closed[1]), rtol=1e-10)
