"""The evidence of the label-noise model [GH01, Sec. 4] from the 0-1 Gibbs
posterior's log Z: the identity against a direct Monte Carlo of the flipped
label likelihood, and the curve over q from one SMC path against the exact
d = 2 quadrature."""

import numpy as np
import pytest
from scipy.special import logsumexp

from pac_particles.core.checks import InputError
from pac_particles.smc.label_noise import (PathLogLik, label_noise_evidence_curve,
                                      label_noise_log_evidence, path_log_z)
from pac_particles.smc.label_noise import lam_from_label_noise
from pac_particles.smc.models import ClassificationGibbsModel
from pac_particles.smc.moves import ExactEllipseGibbs
from pac_particles.smc.posterior import run_smc
from lab.reference.quadrature import AngularQuadrature


def flipped_labels(n, q, seed):
    """X ~ N(0, I_2), y = 1{x . (1, -0.5) > 0} flipped with probability q."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = (X @ [1.0, -0.5] > 0) ^ (rng.uniform(size=n) < q)
    return X, y.astype(int)


def test_log_evidence_is_the_flipped_label_likelihood_averaged_over_the_prior():
    """log E_prior[prod_i q^err_i (1 - q)^(1 - err_i)] by 400 000 prior draws
    equals log Z(lam(q)) + n log(1 - q) with the exact d = 2 log Z."""
    X, y = flipped_labels(40, 0.1, seed=0)
    theta = np.random.default_rng(1).normal(size=(400_000, 2))
    errors = ((np.where(y == 1, 1.0, -1.0) * (theta @ X.T)) < 0).sum(axis=1)
    for q in (0.05, 0.15, 0.3):
        log_lik = errors * np.log(q) + (40 - errors) * np.log1p(-q)
        direct = logsumexp(log_lik) - np.log(theta.shape[0])
        exact = AngularQuadrature(X, y, lam_from_label_noise(q, 40),
                                  margins="points").log_z
        assert label_noise_log_evidence(exact, q, 40) == pytest.approx(direct,
                                                                       abs=0.02)
        # log Z alone is not the evidence (it misses n log(1 - q))
        assert abs(exact - direct) > 1.0


def test_evidence_curve_of_one_smc_run_matches_quadrature_and_finds_the_noise():
    """One waste-free run with the exact move to q = 0.01 (it takes a few
    large tempering steps) gives log p(y | q) on a grid of q, by
    reweighting between steps; it agrees with the quadrature everywhere,
    and peaks near the true flip rate 0.1."""
    n = 150
    X, y = flipped_labels(n, 0.1, seed=2)
    model = ClassificationGibbsModel(X, y, lam=lam_from_label_noise(0.01, n),
                                     fit_intercept=False, standardize=False)
    post = run_smc(model, n_particles=400, len_chain=10, seed=0,
                   move=ExactEllipseGibbs(model), collect=[PathLogLik()])
    q = np.linspace(0.01, 0.4, 40)
    log_ev = label_noise_evidence_curve(post, n, q)
    exact = np.array([label_noise_log_evidence(AngularQuadrature(
        X, y, lam_from_label_noise(v, n), margins="points").log_z, v, n)
        for v in q])
    assert np.max(np.abs(log_ev - exact)) < 0.15
    assert 0.05 < q[np.argmax(exact)] < 0.2
    assert abs(q[np.argmax(log_ev)] - q[np.argmax(exact)]) <= 0.02
    # at the tempering steps the path is SMC's own log Z
    np.testing.assert_allclose(path_log_z(post, post.gammas[1:]),
                               post.log_z_path[1:], atol=1e-12)
    with pytest.raises(InputError, match="reached"):
        label_noise_evidence_curve(post, n, [0.005])


def test_label_noise_evidence_refuses_bad_q():
    with pytest.raises(InputError):
        label_noise_log_evidence(-3.0, 1.5, 10)
