"""Importance weights of directions: the radius integrated out for the
risks that see only the direction of the parameter.

The AUC risk (of linear or GP scores) and the 0-1 classification risk are
invariant to ``theta -> c theta``, ``c > 0`` (:func:`scale_invariant`).
Under the prior ``N(0, L L')`` the whitened ``w = L^-1 theta`` has a chi_d
radius independent of its uniform direction ``u``, and the likelihood sees
``u`` only: the posterior keeps the prior's radius, and an importance
sampler from any ``q`` may weight the directions of its draws alone,

    w(u) = exp(-lam r_n(u)) p_u(u) / q_u(u),
    q_u(u) = int_0^inf r^(d - 1) q(r u) dr,

``p_u`` the uniform density ``1 / area(S^(d-1))``
(:func:`log_sphere_area`) and ``q_u`` the direction density of ``q``
(:func:`log_direction_density`, a one-dimensional integral per draw). The
weight is the conditional expectation of ``prior exp(-lam r_n) / q`` given
the direction, so its variance is no larger (Rao-Blackwellisation [CR96])
and the estimate of ``Z`` stays unbiased;
:func:`~pac_particles.smc.importance_evidence.importance_log_z` uses it by
default where it applies.

References
----------
[CR96] Casella, G. and Robert, C. P. (1996). Rao-Blackwellisation of
sampling schemes. Biometrika 83(1), 81-94.
"""

import math

import numpy as np
from scipy import linalg
from scipy.special import gammaln, logsumexp

from pac_particles.problem.risks import AUCRisk, ClassificationRisk

__all__ = ["scale_invariant", "weigh_directions", "log_direction_density",
           "log_sphere_area", "direction_log_weights", "radially_resolved",
           "RADIAL_POINTS", "RADIAL_SPREAD", "DIRECTION_MAX_DIMENSION"]


#: points of the trapezoid rule in ``log r`` of :func:`log_direction_density`
RADIAL_POINTS = 65

#: weighing directions, each Gaussian of the proposal has a whitened
#: conditional standard deviation along its mean of at least
#: ``RADIAL_SPREAD |m| / d`` (:func:`radially_resolved`; the posterior's
#: radial spread, chi_d's, is about ``|m| / sqrt(2 d)``)
RADIAL_SPREAD = 0.5


def scale_invariant(model):
    """Whether ``model``'s risk sees its parameter only through its
    direction, ``r_n(c theta) = r_n(theta)`` for ``c > 0``: the AUC risk
    (of linear or GP scores) and the 0-1 classification risk (the
    intercept is a coordinate of ``theta`` like the others)."""
    risk = model.empirical_risk
    if isinstance(risk, AUCRisk):
        return True
    return (isinstance(risk, ClassificationRisk)
            and risk.margin_loss.scale_invariant)


#: directions are weighted up to this many parameters: the whitened
#: radius's relative spread, about ``1 / sqrt(2 d)``, and with it what
#: integrating it out gains, shrinks with d, while the prior's share of the
#: draws (the defensive component) is wasted where the posterior is narrow:
#: better than the weights of theta on Sonar (d = 60), worse on the GP
#: problem of the efficiency study (d = 150) (docs/benchmarks.md,
#: "Efficiency of the SMC sampler")
DIRECTION_MAX_DIMENSION = 100


def weigh_directions(model):
    """Whether importance sampling weighs the directions of the draws
    alone: a scale-invariant risk (:func:`scale_invariant`) of at most
    :data:`DIRECTION_MAX_DIMENSION` parameters."""
    return scale_invariant(model) and model.d <= DIRECTION_MAX_DIMENSION


def log_direction_density(u, mean, chol):
    """Log density on the unit sphere of the direction ``theta / |theta|``
    of ``theta ~ N(mean, S)``, ``S = chol chol'``, at unit rows ``u``
    (S, d):

        q_u(u) = int_0^inf r^(d - 1) N(r u; mean, S) dr    (surface measure).

    In ``s = log r`` the integrand ``exp(d s - (a r^2 - 2 b r + c) / 2)``,
    ``a = u'S^-1 u``, ``b = u'S^-1 mean``, ``c = mean'S^-1 mean``, has its
    mode at ``r* = (b + sqrt(b^2 + 4 a d)) / (2 a)`` and curvature
    ``a r*^2 + d = 1 / sd^2`` there. The trapezoid rule over
    :data:`RADIAL_POINTS` points from ``6 sd + 20 / d`` below the mode
    (the left tail decays as ``exp(d s)`` only) to ``6 sd`` above it;
    where ``sd < 1 / d`` (a Gaussian narrow along its mean: VB's fits at
    1e5-1e6 rows) that step would leave the peak between two points (off
    by a constant the Pareto k cannot see; docs/gpu.md), and the tail and
    the peak (``10 sd`` below the mode to ``6 sd`` above) get a rule each.
    Accurate to 1e-6 (``tests/smc/test_gaussian_bridge.py``: adaptive
    quadrature)."""
    d = mean.size
    v = linalg.solve_triangular(chol, u.T, lower=True)          # S^-1/2 u
    w = linalg.solve_triangular(chol, mean, lower=True)         # S^-1/2 m
    a = np.einsum("ij,ij->j", v, v)
    b = w @ v
    c = float(w @ w)
    mode = (b + np.sqrt(b * b + 4.0 * a * d)) / (2.0 * a)
    sd = 1.0 / np.sqrt(a * mode * mode + d)
    centre = np.log(mode)
    ends = np.zeros(RADIAL_POINTS)
    ends[[0, -1]] = np.log(0.5)

    def trapezoid(rows, low, high):
        step = (high - low) / (RADIAL_POINTS - 1)
        log_r = low[:, None] + step[:, None] * np.arange(RADIAL_POINTS)
        r = np.exp(log_r)
        log_kernel = (-0.5 * (a[rows, None] * r * r
                              - 2.0 * b[rows, None] * r + c)
                      - 0.5 * d * np.log(2 * np.pi)
                      - np.log(np.diag(chol)).sum())
        # dr = r d(log r): the integrand in log r is r^d N(r u)
        return (logsumexp(d * log_r + log_kernel + ends, axis=1)
                + np.log(step))

    # the one rule's step (12 sd + 20 / d) / 64 resolves the peak (at most
    # sd / 2) where sd >= 1 / d; below, the peak is a Gaussian in log r
    # with a rule of its own, from 10 sd below the mode (where the tail
    # rule's coarse step times the integrand, e^-50 of the peak's, is
    # negligible against the peak's area) to 6 sd above it; each row gets
    # the rules it needs only
    narrow = sd < 1.0 / d
    out = np.empty(a.shape)
    wide = ~narrow
    out[wide] = trapezoid(wide, centre[wide] - 6.0 * sd[wide] - 20.0 / d,
                          centre[wide] + 6.0 * sd[wide])
    if np.any(narrow):
        edge = centre[narrow] - 10.0 * sd[narrow]
        out[narrow] = np.logaddexp(
            trapezoid(narrow, edge - 20.0 / d, edge),
            trapezoid(narrow, edge, centre[narrow] + 6.0 * sd[narrow]))
    return out


def log_sphere_area(d):
    """``log`` of the area of the unit sphere in R^d, ``2 pi^(d/2) /
    Gamma(d/2)``: the uniform direction of ``N(0, I)`` has density 1 /
    area."""
    return math.log(2.0) + 0.5 * d * math.log(math.pi) - gammaln(0.5 * d)


def direction_log_weights(L, theta, loglik, components, weights):
    """``(log w, u)``: importance log weights of the directions of the
    draws ``theta`` (rows) in the prior's whitened coordinates ``L^-1
    theta``, where the prior's direction is uniform, and the unit rows
    ``u``. ``components``: ``(mean, cov, df)`` of the proposal's
    Gaussians (``df`` None, as :func:`~pac_particles.smc.importance_evidence.
    mixture_draws` takes them), ``weights`` their shares. The proposal's
    direction density is its mixture's
    (:func:`log_direction_density` of each Gaussian component, mapped by
    ``L^-1``: the Jacobians of the map cancel in the ratio)."""
    white = linalg.solve_triangular(L, theta.T, lower=True).T
    u = white / np.linalg.norm(white, axis=1, keepdims=True)
    log_q = logsumexp([
        np.log(w) + log_direction_density(
            u, linalg.solve_triangular(L, mean, lower=True),
            linalg.solve_triangular(
                L, linalg.cholesky(0.5 * (cov + cov.T), lower=True),
                lower=True))
        for (mean, cov, _), w in zip(components, weights)], axis=0)
    return -log_sphere_area(theta.shape[1]) + loglik - log_q, u


def radially_resolved(mean, cov, L):
    """``cov`` plus ``c (L v)(L v)'``, ``v`` the unit whitened mean
    ``L^-1 mean``, ``c >= 0`` the least that makes ``1 / (v' S^-1 v)``
    (``S`` the whitened covariance) at least ``(RADIAL_SPREAD |L^-1 mean| /
    d)^2``: a Gaussian whose direction density the one trapezoid rule in
    ``log r`` of :func:`log_direction_density` resolves (below about ``0.4
    / d`` relative spread its step misses the peak, by a near-constant in
    ``log Z`` that the Pareto ``k`` cannot see; docs/benchmarks.md, "The
    risk on an accelerator"). The directions barely change and the draws
    are the widened Gaussian's (exact). :func:`log_direction_density` now
    gives such peaks a rule of their own, so the widening is no longer
    needed for accuracy; it stays as the proposal of
    :func:`~pac_particles.smc.importance_evidence.importance_log_z` that
    the figures at a million rows were measured with (docs/gpu.md). EP's
    Gaussians, particle fits (the prior's spread, ``|m| / sqrt(2 d)``) and a
    mean at the origin are left as they are."""
    d = mean.size
    white = linalg.solve_triangular(L, mean, lower=True)
    norm = float(np.linalg.norm(white))
    if not norm > 0:
        return cov
    v = white / norm
    Lv = L @ v
    # v' S^-1 v with S = L^-1 cov L^-T: |chol(cov)^-1 L v|^2
    z = linalg.solve_triangular(
        linalg.cholesky(0.5 * (cov + cov.T), lower=True), Lv, lower=True)
    radial = 1.0 / float(z @ z)
    target = (RADIAL_SPREAD * norm / d) ** 2
    if radial >= target:
        return cov
    return cov + (target - radial) * np.outer(Lv, Lv)
