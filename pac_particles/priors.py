"""Prior distributions for the score parameters, as ``particles`` distributions.

A prior over linear-score coefficients is a ``particles.distributions.StructDist``
with one field ``theta`` of dimension d (spike-and-slab priors add a bool field
``z``). :func:`gaussian_prior` builds the default independent Gaussian prior
``N(0, diag(v))``, where ``v`` is a scalar (isotropic) or one variance per
coordinate (ARD).

:class:`SpikeSlabPrior` is the spike-and-slab prior of Ridgway et al. (2014,
section 2.4; George & McCulloch, 1993), augmented with the inclusion
indicators: ``z_k ~ Bernoulli(p)``, ``theta_k | z_k ~ N(0, v1)`` if ``z_k``
else ``N(0, v0)``, so that the marginal of theta is
``prod_k [p N(theta_k; 0, v1) + (1 - p) N(theta_k; 0, v0)]``. Its particles
are structured arrays with fields ``theta`` (float, d) and ``z`` (bool, d);
SMC moves them with :class:`pac_particles.moves.SpikeSlabMove`.

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

    from pac_particles.priors import SpikeSlabPrior
    ss = SpikeSlabPrior(d=60)              # p = 1 - exp(-1/d), v0 = v1 / 100
    th = ss.rvs(size=100)                  # fields th['theta'] (float), th['z'] (bool)

References
----------
Ridgway, J., Alquier, P., Chopin, N. and Liang, F. (2014). PAC-Bayesian AUC
classification and scoring. NIPS 27, sections 2.3-2.4 (Theorem 2.5).

George, E. I. and McCulloch, R. E. (1993). Variable selection via Gibbs
sampling. JASA 88, 881-889.
"""

import numpy as np
from particles import distributions as dists
from scipy import special
from scipy.linalg import solve_triangular

from .checks import InputError
from .gaussian import KernelJitterWarning, jittered_cholesky
# the GP prior's covariance functions, importable from here as before
from .kernels import LinearKernel, SquaredExponential, gram_matrix

__all__ = ["DiagonalNormal", "gaussian_prior", "prior_gaussian_factor",
           "SpikeSlabPrior",
           "SquaredExponential", "LinearKernel", "KernelJitterWarning", "gram_matrix",
           "stable_cholesky", "CholeskyNormal",
           "param_array", "param_field"]

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
            raise InputError("variances must be a non-empty 1-D array")
        if not np.all(np.isfinite(variances)) or np.any(variances <= 0):
            raise InputError("prior variances must be finite and > 0")
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
        raise InputError(f"prior dimension must be >= 1, got {d}")
    var = np.asarray(var, dtype=float)
    variances = np.full(d, float(var)) if var.ndim == 0 else var
    if variances.shape != (d,):
        raise InputError(f"var must be a scalar or have shape ({d},), got "
                         f"{variances.shape}")
    return dists.StructDist({"theta": DiagonalNormal(variances)})


# float fields of a particle array: linear coefficients, or GP latent scores
PARAM_FIELDS = ("theta", "s")


def param_field(particles):
    """The float parameter field (``theta``, or ``s`` for GP latent scores) of
    a structured particle array, or the array itself if it is plain."""
    if not particles.dtype.names:
        return particles
    for name in PARAM_FIELDS:
        if name in particles.dtype.names:
            return particles[name]
    raise InputError(f"particles have no field among {PARAM_FIELDS}: "
                     f"{particles.dtype.names}")


def param_array(particles):
    """(N, d) view of the parameters of N particles. ``particles`` stores a
    one-dimensional field with shape (N,), hence the reshape (d = 1)."""
    return param_field(particles).reshape(particles.shape[0], -1)


def prior_gaussian_factor(prior):
    """Cholesky factor ``L`` (lower, d x d) of a Gaussian prior on ``theta``
    (or on the latent scores ``s`` of a GP model).

    Returns None when the field is not a centred Gaussian that we
    know how to sample from (elliptical moves then cannot be used).
    """
    laws = getattr(prior, "laws", {})
    law = laws.get("theta", laws.get("s"))
    if isinstance(law, CholeskyNormal):
        return law.chol
    if isinstance(law, DiagonalNormal):
        return np.diag(law.std)
    if isinstance(law, dists.MvNormal):
        if np.any(np.asarray(law.loc) != 0) or np.ndim(law.scale) > 0:
            return None
        return law.scale * law.L
    return None


class SpikeSlabPrior(dists.ProbDist):
    """Spike-and-slab prior with inclusion indicators, a ``particles``
    distribution over structured arrays with fields ``theta`` (float, d) and
    ``z`` (bool, d).

    ``z_k ~ Bernoulli(p)`` independently, ``theta_k | z_k ~ N(0, v1)`` (slab)
    if ``z_k`` else ``N(0, v0)`` (spike). The log density of the augmented
    prior is ``sum_k [z_k log p + (1 - z_k) log(1 - p) + log N(theta_k; 0,
    v_{z_k})]``; the marginal of ``theta`` is the mixture of Ridgway et al.
    (2014), eq. of section 2.4.

    Parameters
    ----------
    d : int
        Dimension.
    p : float or (d,) array in (0, 1), optional
        Prior inclusion probability. Default ``1 - exp(-1/d)`` (Theorem 2.5:
        about one expected active coefficient whatever d).
    v0 : float or (d,) array, optional
        Spike variance, ``0 <= v0 < v1``. Default ``v1 / 100`` (a ratio of
        standard deviations of 10, in the range George & McCulloch recommend).
        Theorem 2.5 takes ``v0 <= 1 / (2 n d log d)`` (see
        :meth:`theorem_2_5`), which makes ``z`` nearly frozen under MCMC.
        ``v0 = 0`` (a Dirac spike) is accepted here for EP; it has no density,
        so :meth:`logpdf` and SMC refuse it.
    v1 : float or (d,) array
        Slab variance (> 0). The AUC risk is scale invariant: only ``v0 / v1``
        and ``p`` change the posterior of the direction of theta.

    Examples
    --------
    >>> import numpy as np
    >>> from pac_particles.priors import SpikeSlabPrior
    >>> np.random.seed(0)
    >>> prior = SpikeSlabPrior(d=4, p=0.5, v0=0.01, v1=1.0)
    >>> x = prior.rvs(size=3)
    >>> x["theta"].shape, x["z"].dtype
    ((3, 4), dtype('bool'))
    >>> prior.logpdf(x).shape
    (3,)
    """

    def __init__(self, d, p=None, v0=None, v1=1.0):
        d = int(d)
        if d < 1:
            raise InputError(f"prior dimension must be >= 1, got {d}")
        self.d = d
        v1 = self._param(v1, "v1")
        if np.any(v1 <= 0):
            raise InputError(f"slab variance v1 must be > 0, got {v1}")
        p = 1.0 - np.exp(-1.0 / d) if p is None else p
        p = self._param(p, "p")
        if np.any(p <= 0) or np.any(p >= 1):
            raise InputError(f"inclusion probability p must be in (0, 1), got {p}")
        v0 = v1 / 100.0 if v0 is None else self._param(v0, "v0")
        if np.any(v0 < 0) or np.any(v0 >= v1):
            raise InputError(f"spike variance v0 must satisfy 0 <= v0 < v1, got "
                             f"v0 = {v0}, v1 = {v1}")
        self.p, self.v0, self.v1 = p, v0, v1
        self.dtype = np.dtype([("theta", float, (d,)), ("z", bool, (d,))])

    def _param(self, value, name):
        arr = np.asarray(value, dtype=float)
        if arr.ndim > 1 or (arr.ndim == 1 and arr.shape != (self.d,)):
            raise InputError(f"{name} must be a scalar or have shape "
                             f"({self.d},), got {arr.shape}")
        if not np.all(np.isfinite(arr)):
            raise InputError(f"{name} must be finite, got {value}")
        return arr

    @classmethod
    def theorem_2_5(cls, n, d, v1=1.0):
        """The hyper-parameters of Theorem 2.5 of Ridgway et al. (2014):
        ``p = 1 - exp(-1/d)``, ``v0 = 1 / (2 n d log d)`` (d >= 2), capped
        below ``v1``."""
        n, d = int(n), int(d)
        if d < 2:
            raise InputError("Theorem 2.5 needs d >= 2 (v0 involves log d)")
        v0 = min(1.0 / (2.0 * n * d * np.log(d)), 0.5 * float(v1))
        return cls(d, p=1.0 - np.exp(-1.0 / d), v0=v0, v1=v1)

    @property
    def dim(self):
        return self.d

    def variances(self, z):
        """Prior variances ``v_z`` of theta given indicators ``z`` (bool)."""
        return np.where(z, self.v1, self.v0)

    def rvs(self, size=1):
        """``size`` draws (a structured array; default size 1, like
        ``StructDist``)."""
        n = 1 if size is None else int(size)
        out = np.empty(n, dtype=self.dtype)
        out["z"] = np.random.uniform(size=(n, self.d)) < self.p
        out["theta"] = (np.random.standard_normal((n, self.d))
                        * np.sqrt(self.variances(out["z"])))
        return out

    def logpdf(self, x):
        """Log density of the augmented prior at structured array ``x``."""
        if np.any(self.v0 == 0):
            raise InputError("v0 = 0 (a Dirac spike): the spike-and-slab prior "
                             "has no density; use v0 > 0 for SMC")
        theta, z = x["theta"], x["z"]
        var = self.variances(z)
        log_bern = np.where(z, np.log(self.p), np.log1p(-self.p))
        log_norm = -0.5 * (np.log(2.0 * np.pi * var) + theta * theta / var)
        return np.sum(log_bern + log_norm, axis=-1)

    def inclusion_conditional(self, theta):
        """``P(z_k = 1 | theta_k)``, elementwise: the exact Gibbs update of
        the indicators (the likelihood does not involve z)::

            p N(theta; 0, v1) / (p N(theta; 0, v1) + (1 - p) N(theta; 0, v0))
        """
        theta = np.asarray(theta, dtype=float)
        if np.any(self.v0 == 0):
            return np.where(theta != 0, 1.0, 0.0)
        log_odds = (np.log(self.p) - np.log1p(-self.p)
                    + 0.5 * np.log(self.v0 / self.v1)
                    + 0.5 * theta * theta * (1.0 / self.v0 - 1.0 / self.v1))
        return special.expit(log_odds)

    def marginal_logpdf(self, theta):
        """Log density of the mixture prior of theta ((N, d) or (d,))."""
        if np.any(self.v0 == 0):
            raise InputError("v0 = 0: the mixture has no density")
        theta = np.asarray(theta, dtype=float)

        def log_normal(v):
            return -0.5 * (np.log(2.0 * np.pi * v) + theta * theta / v)

        mix = np.logaddexp(np.log(self.p) + log_normal(self.v1),
                           np.log1p(-self.p) + log_normal(self.v0))
        return np.sum(mix, axis=-1)

    def __repr__(self):
        def fmt(a):
            return f"{float(a):.4g}" if np.ndim(a) == 0 else "array"
        return (f"SpikeSlabPrior(d={self.d}, p={fmt(self.p)}, v0={fmt(self.v0)}, "
                f"v1={fmt(self.v1)})")


# the kernel-matrix factorisation of the GP models (kept under its old name)
stable_cholesky = jittered_cholesky


class CholeskyNormal(dists.ProbDist):
    """Centred Gaussian ``N(0, C C')`` given its lower Cholesky factor ``C``.

    The prior of the latent training scores of a GP (``C`` from
    :func:`stable_cholesky`). ``rvs`` costs one (N, n) x (n, n) matmul,
    ``logpdf`` one batched triangular solve.
    """

    def __init__(self, chol):
        chol = np.asarray(chol, dtype=float)
        if chol.ndim != 2 or chol.shape[0] != chol.shape[1]:
            raise InputError("chol must be a square matrix")
        diag = np.diag(chol)
        if np.any(diag <= 0) or not np.all(np.isfinite(chol)):
            raise InputError("chol must be a lower Cholesky factor (positive "
                             "diagonal, finite)")
        self.chol = np.tril(chol)
        self._log_norm = -np.sum(np.log(diag)) - chol.shape[0] * _HALF_LOG_2PI

    @property
    def dim(self):
        return self.chol.shape[0]

    def rvs(self, size=None):
        n = 1 if size is None else size
        return np.random.standard_normal((n, self.dim)) @ self.chol.T

    def logpdf(self, x):
        x = np.atleast_2d(x)
        z = solve_triangular(self.chol, x.T, lower=True, check_finite=False)
        return self._log_norm - 0.5 * np.sum(z * z, axis=0)
