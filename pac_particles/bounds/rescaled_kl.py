"""The KL of a Gaussian posterior rescaled: the same randomised ranking.

Scores scaled by ``c > 0`` rank alike, so ``N(c m, c^2 S)`` is the same
randomised ranking as ``N(m, S)``, with the same ``E[R]`` and ``E[R_n]``;
the PAC-Bayes-kl bound holds for every posterior at once, so choosing ``c``
with the data to make ``KL(rho_c || prior)`` smallest is free
(:func:`rescaled_kl`). The certificates of a fit whose posterior's scale
was set by EP's evidence use it
(:func:`pac_particles.bounds.certify`); :func:`jittered_gram` is
the prior covariance of GP scores those certificates compare with.
"""

import dataclasses
import math

import numpy as np
from scipy import linalg, optimize

from pac_particles.core.gaussian import gaussian_kl, jittered_cholesky
from pac_particles.problem.priors import SpikeSlabPrior

__all__ = ["jittered_gram", "scaled_kl", "rescaled_kl", "rescaled_note",
           "with_note", "RESCALE_LOG_BOUNDS"]


def jittered_gram(kernel, Z):
    """``K + jitter I``, ``K = kernel(Z, Z)`` symmetrised, with the jitter
    its Cholesky factor needs (:func:`pac_particles.core.gaussian.
    jittered_cholesky`, as EP's GP fit): a prior covariance of the scores
    fixed by the kernel and the inputs."""
    K = np.asarray(kernel(Z, Z), dtype=float)
    K = 0.5 * (K + K.T)
    _, jitter = jittered_cholesky(K, label="the certificate's kernel matrix",
                                  warn=False)
    return K + jitter * np.eye(K.shape[0]) if jitter else K


#: Bounds of ``log c`` in :func:`rescaled_kl`'s search under a
#: spike-and-slab prior
RESCALE_LOG_BOUNDS = (-20.0, 20.0)


def scaled_kl(c, mean, cov, prior, prior_mean=None):
    """``KL(N(c mean, c^2 cov) || prior)``, ``prior`` a SpikeSlabPrior or
    the covariance of ``N(prior_mean, prior)`` (default mean 0)."""
    mean, cov = c * np.asarray(mean, float), c * c * np.asarray(cov, float)
    if isinstance(prior, SpikeSlabPrior):
        return float(prior.kl_gaussian(mean, cov))
    shift = mean if prior_mean is None else mean - np.asarray(prior_mean,
                                                               float)
    return max(float(gaussian_kl(shift, cov, prior)), 0.0)


def rescaled_kl(mean, cov, prior, prior_mean=None):
    """``(min_c KL, c)`` over ``c > 0`` of :func:`scaled_kl`. Gaussian
    prior ``N(mu0, S0)``: ``KL(c) = (a c^2 - 2 b c - d log c^2) / 2 +
    const`` with ``a = tr(S0^-1 S) + m' S0^-1 m`` and ``b = m' S0^-1 mu0``,
    convex in ``c``, least at the positive root of ``a c^2 - b c - d``;
    spike-and-slab: a bounded search over ``log c``. ``c = 1`` is kept
    when it is no worse (rounding)."""
    mean = np.asarray(mean, dtype=float)
    d = mean.size
    at_one = scaled_kl(1.0, mean, cov, prior, prior_mean)
    if isinstance(prior, SpikeSlabPrior):
        found = optimize.minimize_scalar(
            lambda t: scaled_kl(math.exp(t), mean, cov, prior),
            bounds=RESCALE_LOG_BOUNDS, method="bounded",
            options=dict(xatol=1e-6))
        c = math.exp(found.x)
    else:
        S0 = np.asarray(prior, dtype=float)
        cov = np.asarray(cov, float)
        mu0 = np.zeros(d) if prior_mean is None else np.asarray(prior_mean,
                                                                float)
        if S0.ndim < 2:
            # a diagonal prior: O(d), where the factor of a d x d S0 is
            # O(d^3) (colon's 2000 features)
            v = np.broadcast_to(S0, (d,))
            var = np.diag(cov) if cov.ndim == 2 else cov
            a = float(np.sum(var / v) + np.sum(mean * mean / v))
            b = float(np.sum(mean * mu0 / v))
        else:
            L = np.linalg.cholesky(S0)
            w = linalg.solve_triangular(L, mean, lower=True)
            cov2d = np.diag(cov) if cov.ndim == 1 else cov
            half = linalg.solve_triangular(L, cov2d, lower=True)
            a = float(np.trace(linalg.solve_triangular(L, half.T, lower=True))
                      + w @ w)
            b = float(w @ linalg.solve_triangular(L, mu0, lower=True))
        c = (b + math.sqrt(b * b + 4.0 * a * d)) / (2.0 * a)
    kl = scaled_kl(c, mean, cov, prior, prior_mean)
    return (kl, c) if kl < at_one else (at_one, 1.0)


def rescaled_note(c):
    """What a certificate on ``rho`` rescaled by ``c`` says
    (:func:`rescaled_kl`)."""
    return (f"KL of the posterior rescaled by c = {c:.3g} (the same "
            f"randomised ranking)")


def with_note(make, note):
    """The candidate ``make`` with ``note`` appended to its prior's
    description."""
    if not note:
        return make

    def candidate(delta_each):
        cert = make(delta_each)
        return dataclasses.replace(cert, prior=cert.prior + note)
    return candidate
