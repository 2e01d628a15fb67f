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
SMC moves them with :class:`pac_particles.smc.moves.SpikeSlabMove`.

Under an isotropic Gaussian prior, neither the posterior of the direction
``theta / ||theta||`` nor the evidence ``Z`` depends on the prior variance: the
AUC risk is invariant to ``theta -> c theta`` for c > 0, so the radial part of
the prior integrates out. Only non-isotropic priors (ARD, spike-and-slab) have
hyper-parameters worth tuning.

Example
-------
::

    from pac_particles.problem.priors import gaussian_prior
    prior = gaussian_prior(d=8)            # iid N(0, 1)
    th = prior.rvs(size=100)               # structured array, th['theta'] is (100, 8)
    prior.logpdf(th)                       # shape (100,)

    from pac_particles.problem.priors import SpikeSlabPrior
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

from pac_particles.core.checks import InputError
from pac_particles.core.gaussian import KernelJitterWarning, jittered_cholesky
from pac_particles.core.compat import moved_names

__all__ = ["DiagonalNormal", "gaussian_prior", "prior_gaussian_factor",
           "SpikeSlabPrior",
           "KernelJitterWarning",
           "stable_cholesky", "CholeskyNormal",
           "param_array", "param_field"]

#: the GP prior's covariance functions live in core/kernels.py; read from
#: here (as before) they warn
__getattr__ = moved_names(__name__, {
    name: "pac_particles.core.kernels"
    for name in ("SquaredExponential", "LinearKernel", "gram_matrix")})

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
    >>> from pac_particles.problem.priors import SpikeSlabPrior
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

    def kl_gaussian(self, mean, cov):
        """``KL(N(mean, cov) || prior)`` against the mixture prior of theta:
        exact for ``v0 = 0``, an upper bound within 0.002 per coordinate
        otherwise; closed form, no sampling.

        ``KL = -H(q) - sum_k E_q[log m_k(theta_k)]``, ``H(q) = (1/2) log
        det(2 pi e cov)`` and ``m_k`` the prior's marginal on coordinate
        ``k``, which under ``q`` is ``N(mean_k, cov_kk)``.

        * ``v0 = 0``: the prior is ``p N(0, v1)`` plus an atom at 0 that a
          Gaussian ``q`` never visits, so ``dq / dprior = q / prod_k p
          N(theta_k; 0, v1)`` and ``E_q[log m_k] = log p + E_q[log N(theta_k;
          0, v1)]``, in closed form: the KL is exact.
        * ``v0 > 0``: ``log m_k(t) = log(p N(t; 0, v1)) + softplus(u(t))``,
          ``u(t) = log((1 - p) N(t; 0, v0) / (p N(t; 0, v1))) = c - b t^2``
          (``b = (1/v0 - 1/v1) / 2 > 0``). ``softplus`` is convex, so it lies
          above the upper envelope ``g`` of its tangents at 97 points of
          [-12, 12] and its asymptotes 0 and ``u``; ``g(u(t))`` is piecewise
          quadratic in ``t``, and its Gaussian expectation is a sum of
          truncated moments (``Phi``, ``phi``). Replacing ``softplus`` by
          ``g`` makes ``E[log m_k]`` smaller, so the KL larger: an upper
          bound, too large by at most ``max (softplus - g) <= (1/4) (1/4)^2
          / 8 + log(1 + e^-12) < 0.002`` per coordinate (tangent spacing
          1/4, ``softplus'' <= 1/4``).

        This is the KL of the Gaussian that EP's spike-and-slab
        approximation reports for theta (its Bernoulli factor says nothing
        about theta); the joint KL of the Gaussian and the Bernoulli
        inclusions against the augmented prior is larger (chain rule) and
        infinite for ``v0 = 0``, and ``-log Z_EP - lam E_q[R_n]`` falls
        short of it by ``KL(q || Gibbs)``.

        Parameters
        ----------
        mean : (d,) array; cov : (d, d) positive definite array.

        Returns
        -------
        float
        """
        mean = np.asarray(mean, dtype=float)
        cov = np.asarray(cov, dtype=float)
        d = self.d
        if mean.shape != (d,) or cov.shape != (d, d) or not (
                np.all(np.isfinite(mean)) and np.all(np.isfinite(cov))):
            raise InputError(f"mean and cov must be finite with shapes ({d},) "
                             f"and ({d}, {d}), got {mean.shape} and "
                             f"{cov.shape}")
        try:
            chol = np.linalg.cholesky(0.5 * (cov + cov.T))
        except np.linalg.LinAlgError:
            raise InputError("cov is not positive definite")
        neg_entropy = (-0.5 * d * (1.0 + np.log(2.0 * np.pi))
                       - np.sum(np.log(np.diag(chol))))
        p, v0, v1 = (np.broadcast_to(a, (d,)) for a in (self.p, self.v0,
                                                         self.v1))
        var = np.diag(cov)
        second = mean ** 2 + var
        slab = np.log(p) - 0.5 * np.log(2.0 * np.pi * v1) - second / (2.0 * v1)
        expected = np.sum(slab)
        spike = v0 > 0
        if np.any(spike):
            expected += np.sum(_expected_softplus_lower(
                mean[spike], np.sqrt(var[spike]), p[spike], v0[spike],
                v1[spike]))
        return float(neg_entropy - expected)

    def __repr__(self):
        def fmt(a):
            return f"{float(a):.4g}" if np.ndim(a) == 0 else "array"
        return (f"SpikeSlabPrior(d={self.d}, p={fmt(self.p)}, v0={fmt(self.v0)}, "
                f"v1={fmt(self.v1)})")


#: tangent points of softplus for SpikeSlabPrior.kl_gaussian (spacing 1/4)
_SOFTPLUS_TANGENTS = np.linspace(-12.0, 12.0, 97)


def _truncated_moments(mu, s, lo, hi):
    """``P(lo <= t < hi)`` and ``E[t^2 1{lo <= t < hi}]`` for ``t ~ N(mu,
    s^2)``, elementwise (``lo``, ``hi`` may be infinite)."""
    z_lo, z_hi = (lo - mu) / s, (hi - mu) / s
    upper = z_lo > 0      # both in the upper tail: difference of survivals
    m0 = np.where(upper, special.ndtr(-z_lo) - special.ndtr(-z_hi),
                  special.ndtr(z_hi) - special.ndtr(z_lo))
    phi_lo = np.exp(-0.5 * z_lo ** 2) / np.sqrt(2.0 * np.pi)
    phi_hi = np.exp(-0.5 * z_hi ** 2) / np.sqrt(2.0 * np.pi)
    # z phi(z) -> 0 at infinite z
    zphi_lo = np.where(np.isfinite(z_lo), z_lo, 0.0) * phi_lo
    zphi_hi = np.where(np.isfinite(z_hi), z_hi, 0.0) * phi_hi
    m1 = phi_lo - phi_hi
    m2 = m0 + zphi_lo - zphi_hi
    return m0, mu ** 2 * m0 + 2.0 * mu * s * m1 + s ** 2 * m2


def _expected_softplus_lower(mu, s, p, v0, v1):
    """A lower bound on ``E[softplus(c - b t^2)]``, ``t ~ N(mu, s^2)``, per
    coordinate: ``softplus`` replaced by the upper envelope of its tangents
    (:meth:`SpikeSlabPrior.kl_gaussian`). ``c = log((1 - p)/p) + log(v1 /
    v0) / 2``, ``b = (1/v0 - 1/v1) / 2``."""
    mu, s, p, v0, v1 = (np.asarray(a, dtype=float)[:, None]
                        for a in (mu, s, p, v0, v1))
    c = np.log1p(-p) - np.log(p) + 0.5 * np.log(v1 / v0)
    b = 0.5 * (1.0 / v0 - 1.0 / v1)
    u = _SOFTPLUS_TANGENTS
    slopes = np.concatenate([[0.0], special.expit(u), [1.0]])
    intercepts = np.concatenate([[0.0], np.logaddexp(0.0, u)
                                 - special.expit(u) * u, [0.0]])
    # line j is the envelope on [knots[j], knots[j + 1]] of u
    knots = np.concatenate([[-np.inf], (intercepts[:-1] - intercepts[1:])
                            / (slopes[1:] - slopes[:-1]), [np.inf]])
    # u = c - b t^2 falls as |t| grows: u in [k_j, k_j+1] <=> t^2 in
    # [(c - k_j+1) / b, (c - k_j) / b]
    t2_lo = np.maximum((c - knots[1:]) / b, 0.0)
    t2_hi = np.maximum((c - knots[:-1]) / b, 0.0)
    r_lo, r_hi = np.sqrt(t2_lo), np.sqrt(t2_hi)
    p_right, m2_right = _truncated_moments(mu, s, r_lo, r_hi)
    p_left, m2_left = _truncated_moments(mu, s, -r_hi, -r_lo)
    mass, second = p_right + p_left, m2_right + m2_left
    return np.sum((intercepts + slopes * c) * mass - slopes * b * second,
                  axis=1)


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
