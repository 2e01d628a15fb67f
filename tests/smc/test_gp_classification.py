"""GPClassificationModel: the kernel (dual) form of the classification Gibbs
posterior [GH01], against the exact d = 2 posterior through a linear kernel,
and the moves it accepts and refuses."""

import warnings

import numpy as np
import pytest

from pac_particles.core.checks import InputError
from pac_particles.core.kernels import LinearKernel, SquaredExponential
from pac_particles.smc.models import GPClassificationModel
from pac_particles.smc.moves import (CalibratedEllipticalSlice, EllipticalSlice,
                                 ExactEllipseGibbs, RegularizedRandomWalk,
                                 check_move_fits, default_move)
from pac_particles.core.gaussian import KernelJitterWarning
from pac_particles.smc.posterior import run_smc
from builders import two_d_problem
from lab.reference.quadrature import (AngularQuadrature, arc_weights,
                                      numpy_loss)


def exact_vote(quad, X_new):
    """P(x . theta > 0) under the exact d = 2 posterior of ``quad``: the
    mass of the half-circle of directions u with x . u > 0, arc by arc
    (the density of the angle is uniform within each arc)."""
    probs = arc_weights(quad)
    lo, hi = quad.edges[:-1], quad.edges[1:]
    out = []
    for x in X_new:
        start = np.mod(np.arctan2(x[1], x[0]) - np.pi / 2, 2 * np.pi)
        mass = 0.0
        for shift in (-2 * np.pi, 0.0, 2 * np.pi):   # the half-circle may wrap
            a, b = start + shift, start + shift + np.pi
            overlap = np.clip(np.minimum(hi, b) - np.maximum(lo, a), 0.0, None)
            mass += np.sum(probs * overlap / np.where(hi > lo, hi - lo, 1.0))
        out.append(mass)
    return np.array(out)


def _linear_kernel_model(X, y, lam):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", KernelJitterWarning)   # rank 2 < n
        return GPClassificationModel(X, y, lam=lam, kernel=LinearKernel(),
                                     standardize=False)


@pytest.mark.parametrize("loss", ["zero_one", "hinge"])
def test_loglik_is_minus_lam_times_the_mean_loss_of_the_latent_margins(loss):
    X, y = two_d_problem(n=50)
    model = GPClassificationModel(X, y, lam=9.0, loss=loss,
                                  kernel=SquaredExponential(0.7))
    s = model.prior.rvs(size=6)
    margins = np.where(y == 1, 1.0, -1.0) * s["s"]
    np.testing.assert_allclose(model.loglik(s),
                               -9.0 * numpy_loss(loss, margins).mean(axis=1),
                               rtol=1e-12)
    assert model.is_gp and model.d == 50


@pytest.mark.parametrize("move", ["exact", "slice"])
def test_linear_kernel_reproduces_the_exact_two_dimensional_posterior(move):
    """A GP with kernel x . x' on the latent scores is the linear classifier
    under theta ~ N(0, I): SMC on the n = 60 latent scores (exact Gibbs or
    the default elliptical slice) gives the exact d = 2 log Z and vote
    fractions of new points (quadrature on the point margins)."""
    X, y = two_d_problem(n=60)
    lam = 60.0
    exact = AngularQuadrature(X, y, lam, margins="points")
    # directions around the posterior boundary, where the vote is uncertain
    angles = exact.mean_angle + np.pi / 2 + np.linspace(-0.3, 0.3, 7)
    X_new = np.column_stack([np.cos(angles), np.sin(angles)])
    truth = exact_vote(exact, X_new)
    assert np.sum((truth > 0.1) & (truth < 0.9)) >= 3
    log_zs, votes = [], []
    for seed in range(3):
        model = _linear_kernel_model(X, y, lam)
        chosen = ExactEllipseGibbs(model) if move == "exact" else None
        post = run_smc(model, n_particles=300, len_chain=10, seed=seed,
                       move=chosen)
        latent = model.predict_scores(X_new, post.theta.T)     # (8, N)
        votes.append(((latent > 0) @ post.weights))
        log_zs.append(post.log_z)
    assert abs(np.mean(log_zs) - exact.log_z) < 0.15
    np.testing.assert_allclose(np.mean(votes, axis=0), truth, atol=0.03)
    # the check has power: the posterior at twice the lam differs
    sharper = exact_vote(AngularQuadrature(X, y, 2 * lam, margins="points"),
                         X_new)
    assert np.max(np.abs(sharper - truth)) > 0.1


def test_moves_for_gp_classification():
    """Elliptical slice on the kernel factor by default, the exact move for
    the 0-1 loss, the covariance-calibrated moves refused with the reason."""
    X, y = two_d_problem(n=40)
    model = GPClassificationModel(X, y, lam=10.0)
    assert isinstance(default_move(model), EllipticalSlice)
    check_move_fits(ExactEllipseGibbs(model), model)
    for move in (RegularizedRandomWalk(), CalibratedEllipticalSlice()):
        with pytest.raises(InputError, match="refused for GP latent scores"):
            check_move_fits(move, model)
    hinge = GPClassificationModel(X, y, lam=10.0, loss="hinge")
    with pytest.raises(InputError, match="piecewise-constant"):
        ExactEllipseGibbs(hinge)
    with pytest.raises(InputError, match="callable"):
        GPClassificationModel(X, y, lam=10.0, kernel=3.0)
