"""The point risk of classification against plain-numpy definitions."""

import numpy as np
import pytest

from lab.reference.quadrature import numpy_loss
from pac_particles import parallel
from pac_particles.core.checks import InputError
from pac_particles.problem.risks import LOSSES, AUCRisk, ClassificationRisk, Risk


def _data(n=31, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)).round(1)
    y = rng.integers(0, 2, size=n)
    y[:2] = [0, 1]
    return X, y


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("mode", ["serial", "parallel"])
def test_batched_risk_equals_numpy_mean_loss_of_margins(loss, mode):
    X, y = _data()
    risk = ClassificationRisk(y, loss)
    theta = np.random.default_rng(1).standard_normal((9, 3))
    theta[0] = 0.0                                    # every margin 0: ties
    signs = np.where(y == 1, 1.0, -1.0)
    expected = numpy_loss(loss, signs * (theta @ X.T)).mean(axis=1)
    with parallel.forced(mode):
        got = risk.linear(theta, risk.ordered(X))
        np.testing.assert_allclose(got, expected, rtol=1e-13, atol=0)
        assert risk(theta[3] @ X.T) == pytest.approx(expected[3], rel=1e-13)
    if loss in ("zero_one", "ramp"):
        assert got[0] == pytest.approx(0.5, abs=1e-14)                          # ties count 1/2


def test_zero_one_risk_is_the_misclassification_rate():
    X, y = _data(n=200, seed=2)
    risk = ClassificationRisk(2 * y - 1)               # labels in {-1, 1}
    theta = np.random.default_rng(3).standard_normal(3)
    s = X @ theta
    s[s == 0] = 1e-3
    assert risk(s) == pytest.approx(np.mean((s > 0) != (y == 1)), abs=1e-15)


def test_ramp_loss_is_symmetric():
    # l(u) + l(-u) = 1 for every margin, so the risks of s and -s sum to 1
    X, y = _data(n=61)
    risk = ClassificationRisk(y, "ramp")
    s = np.linspace(-3, 3, 61)
    assert risk(s) + risk(-s) == pytest.approx(1.0, abs=1e-14)
    assert ClassificationRisk(y, "hinge")(s) + \
        ClassificationRisk(y, "hinge")(-s) > 1.5


def test_margin_operator_matches_the_dense_signed_diagonal():
    X, y = _data(n=12)
    risk = ClassificationRisk(y, "hinge")
    A = np.diag(np.where(y == 1, 1.0, -1.0))
    rng = np.random.default_rng(4)
    W, C, H = rng.uniform(size=12), rng.standard_normal((12, 3)), \
        rng.standard_normal(12)
    np.testing.assert_allclose(risk.gram_times(W, C), A.T @ np.diag(W) @ A @ C,
                               atol=1e-14)
    np.testing.assert_allclose(risk.gram(W), A.T @ np.diag(W) @ A, atol=1e-14)
    np.testing.assert_allclose(risk.adjoint(H), A.T @ H, atol=1e-14)
    assert risk.cross_block(rng.standard_normal((3, 12))) is None
    assert risk.n_terms == risk.n_independent == 12
    assert risk.kappa(6.0) == pytest.approx(0.5)
    assert not risk.tied_sites(np.arange(12)).any()
    X[5] = 0.0
    assert np.flatnonzero(risk.zero_margins(X)).tolist() == [5]
    np.testing.assert_array_equal(risk.ordered(X), X)


def test_point_and_pair_risks_share_the_base_class():
    _, y = _data()
    assert isinstance(ClassificationRisk(y), Risk)
    assert isinstance(AUCRisk(y), Risk)
    assert ClassificationRisk.linear is Risk.linear


def test_bad_loss_and_labels_are_refused():
    with pytest.raises(InputError, match="loss"):
        ClassificationRisk([0, 1], "logistic")
    with pytest.raises(InputError, match="binary"):
        ClassificationRisk([0, 1, 2])


@pytest.mark.parametrize("loss", ["zero_one", "ramp", "hinge"])
def test_pu_risk_is_the_cost_sensitive_risk_of_du_plessis(loss):
    X, y = _data(n=40, seed=5)
    pi = 0.3
    risk = ClassificationRisk(y, loss, pu_prior=pi)
    s = np.random.default_rng(6).standard_normal(40)
    labelled, unlabelled = s[y == 1], s[y == 0]
    expected = (2 * pi * numpy_loss(loss, labelled).mean()
                + numpy_loss(loss, -unlabelled).mean() - pi)
    assert risk(s) == pytest.approx(expected, abs=1e-13)
    np.testing.assert_allclose(risk.kappa(10.0), 10.0 * risk.weights)
