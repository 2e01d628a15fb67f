"""Prior distributions for the score parameters, as ``particles`` distributions.

A prior over linear-score coefficients is a ``particles.distributions.StructDist``
with one field ``theta`` of dimension d (spike-and-slab priors add a bool field
``z``). :func:`gaussian_prior` builds the default independent Gaussian prior
``N(0, diag(v))``, where ``v`` is a scalar (isotropic) or one variance per
coordinate (ARD).

Under an isotropic Gaussian prior, neither the posterior of the direction
``theta / ||theta||`` nor the evidence ``Z`` depends on the prior variance: the
AUC risk is invariant to ``theta -> c theta`` for c > 0, so the radial part of
the prior integrates out. Only non-isotropic priors (ARD, spike-and-slab) have
hyper-parameters worth tuning.

Example
-------
::

    from pac_particles.priors import gaussian_prior
    prior = gaussian_prior(d=8)            # iid N(0, 1)
    th = prior.rvs(size=100)               # structured array, th['theta'] is (100, 8)
    prior.logpdf(th)                       # shape (100,)

References
----------
Ridgway, J., Alquier, P., Chopin, N. and Liang, F. (2014). PAC-Bayesian AUC
classification and scoring. NIPS 27, section 2.3.
"""

import numpy as np
from particles import distributions as dists

__all__ = ["DiagonalNormal", "gaussian_prior", "prior_gaussian_factor"]

_HALF_LOG_2PI = 0.5 * np.log(2.0 * np.pi)


class DiagonalNormal(dists.ProbDist):
    """Centred Gaussian ``N(0, diag(variances))`` on R^d.

    Cheaper than ``particles.distributions.MvNormal`` for a diagonal covariance
    (O(N d) log-density, no triangular solve) and exposes ``variances`` so
    that elliptical MCMC moves can draw from the same Gaussian.
    """

    def __init__(self, variances):
        variances = np.asarray(variances, dtype=float)
        if variances.ndim != 1 or variances.size == 0:
            raise ValueError("variances must be a non-empty 1-D array")
        if not np.all(np.isfinite(variances)) or np.any(variances <= 0):
            raise ValueError("prior variances must be finite and > 0")
        self.variances = variances
        self.std = np.sqrt(variances)
        self._log_norm = -np.sum(np.log(self.std)) - variances.size * _HALF_LOG_2PI

    @property
    def dim(self):
        return self.variances.size

    def rvs(self, size=None):
        # shape (N,) when d = 1: StructDist stores a 1-D law as a scalar field
        n = 1 if size is None else size
        return np.random.standard_normal(self.shape(n)) * (
            self.std[0] if self.dim == 1 else self.std)

    def logpdf(self, x):
        if self.dim == 1:
            return self._log_norm - 0.5 * x * x / self.variances[0]
        return self._log_norm - 0.5 * np.sum(x * x / self.variances, axis=-1)


def gaussian_prior(d, var=1.0):
    """Independent Gaussian prior ``N(0, diag(var))`` over a field ``theta``.

    Parameters
    ----------
    d : int
        Dimension of ``theta``.
    var : float or array of shape (d,)
        Prior variance(s); a scalar gives the isotropic prior.

    Returns
    -------
    particles.distributions.StructDist
    """
    d = int(d)
    if d < 1:
        raise ValueError(f"prior dimension must be >= 1, got {d}")
    var = np.asarray(var, dtype=float)
    variances = np.full(d, float(var)) if var.ndim == 0 else var
    if variances.shape != (d,):
        raise ValueError(f"var must be a scalar or have shape ({d},), got "
                         f"{variances.shape}")
    return dists.StructDist({"theta": DiagonalNormal(variances)})


def prior_gaussian_factor(prior):
    """Cholesky factor ``L`` (lower, d x d) of a Gaussian prior on ``theta``.

    Returns None when the ``theta`` field is not a centred Gaussian that we
    know how to sample from (elliptical moves then cannot be used).
    """
    law = getattr(prior, "laws", {}).get("theta")
    if isinstance(law, DiagonalNormal):
        return np.diag(law.std)
    if isinstance(law, dists.MvNormal):
        if np.any(np.asarray(law.loc) != 0) or np.ndim(law.scale) > 0:
            return None
        return law.scale * law.L
    return None
