"""Gaussian algebra shared by the samplers, the approximations and the bounds.

* :func:`jittered_cholesky` -- lower Cholesky factor of a symmetric matrix
  with jitter added geometrically on the diagonal until it succeeds: GP
  kernel matrices (duplicated inputs make them singular; the caller is
  warned) and the particle covariances the moves calibrate on (a relative
  ridge, no warning).
* :func:`gaussian_kl` -- ``KL(N(m, S) || N(0, S0))`` in closed form, for
  diagonal or full ``S`` and scalar, diagonal or full ``S0`` (the KL term of
  every PAC-Bayes certificate of a Gaussian ``rho``).
* :func:`gaussian_draws` -- independent draws from ``N(mean, cov)``, the one
  sampler of every Gaussian posterior (EP, VB; ``PosteriorResult.sample``).
* :func:`span_factor` -- a factor ``C`` of a linear score's prior
  covariance ``C C'`` cut to its column rank (thin SVD) where it is rank
  deficient: EP and VB's leave-one-out then work in r coordinates.
* :func:`gp_predictive` -- the GP predictive of latent scores at new inputs,
  ``k_*' K^-1 E[s]`` and ``k_** - k_*' K^-1 k_* + k_*' K^-1 Cov[s] K^-1 k_*``,
  for SMC particles, the GP model's point estimates and GP-EP alike.

References
----------
Rasmussen, C. E. and Williams, C. K. I. (2006). Gaussian Processes for
Machine Learning. MIT Press, eqs. (2.25)-(2.26), (3.21)-(3.24).
"""

import warnings

import numpy as np
from scipy.linalg import cho_solve, lapack, solve_triangular
from scipy.special import ndtr

from pac_particles.core.checks import InputError

__all__ = ["KernelJitterWarning", "jittered_cholesky", "gaussian_kl",
           "gaussian_draws", "gp_predictive", "positive_probability",
           "span_factor", "row_variances"]


#: the smallest reciprocal condition number (LAPACK's 1-norm estimate) of
#: a factorised matrix accepted without more jitter: a matrix singular to
#: working precision has one near 1e-16, and whether its Cholesky factor
#: exists at all then depends on rounding
MIN_RCOND = 1e-12


class KernelJitterWarning(RuntimeWarning):
    """A kernel matrix needed jitter on its diagonal to be factorised."""


def jittered_cholesky(K, label="kernel matrix", ridge=0.0,
                      max_relative_jitter=1e-2, warn=True):
    """Lower Cholesky factor of ``K + jitter I``.

    The jitter is ``ridge * s`` first (``s = mean(diag K)``), then grows
    tenfold from ``max(10 ridge, 1e-10) * s`` until the factorisation
    succeeds with a reciprocal condition number of at least
    :data:`MIN_RCOND` (LAPACK ``dpocon``): a matrix singular to working
    precision always gets jitter, whatever the processor's rounding.

    Parameters
    ----------
    K : (n, n) symmetric array
    label : str, names the matrix in messages.
    ridge : float >= 0
        Relative jitter always added (the moves' regularisation of a particle
        covariance); 0 for kernel matrices.
    max_relative_jitter : float
        Raise InputError when the jitter needed exceeds this times ``s``
        (``np.inf``: never; the diagonal may then also be 0, e.g. a
        covariance of identical particles).
    warn : bool
        Issue a :class:`KernelJitterWarning` when jitter beyond ``ridge``
        was needed.

    Returns
    -------
    (C, jitter) : the factor and the absolute jitter added.
    """
    K = np.asarray(K, dtype=float)
    scale = float(np.mean(np.diag(K)))
    if not scale > 0:
        if np.isfinite(max_relative_jitter):
            raise InputError(f"{label}: the diagonal must be positive (mean "
                             f"{scale:.3g})")
        scale = 1e-300
    eye = np.eye(K.shape[0])
    relative = float(ridge)
    while True:
        try:
            A = K + relative * scale * eye if relative else K
            C = np.linalg.cholesky(A)
            # a factor of a matrix singular to working precision may exist
            # or not depending on the processor's BLAS kernel: refuse it
            # by LAPACK's condition estimate, the same everywhere up to
            # rounding far from MIN_RCOND
            rcond, info = lapack.dpocon(C, np.abs(A).sum(axis=0).max(),
                                        uplo="L")
            if info == 0 and rcond >= MIN_RCOND:
                break
        except np.linalg.LinAlgError:
            pass
        relative = max(10.0 * relative, 1e-10)
        if relative > max_relative_jitter:
            raise InputError(f"{label} is not positive semi-definite "
                             f"(Cholesky fails even with jitter "
                             f"{relative * scale / 10:.3g})")
    jitter = relative * scale
    if warn and relative > ridge:
        warnings.warn(f"{label} singular or ill-conditioned (reciprocal "
                      f"condition below {MIN_RCOND:g}: duplicated or very "
                      f"close inputs?); added jitter {jitter:.3g} to its "
                      f"diagonal ({relative:.1e} of its mean)",
                      KernelJitterWarning,
                      stacklevel=3)
    return C, jitter


def gaussian_draws(mean, cov, n_draws, rng):
    """``n_draws`` independent draws from ``N(mean, cov)``, shape
    (n_draws, d): ``mean + L z`` with ``z`` standard normal from the
    ``numpy.random.Generator`` ``rng`` and ``L`` a jittered Cholesky factor
    of ``cov`` (:func:`jittered_cholesky`, no warning), so that a singular
    ``cov`` is accepted -- EP's covariance of tied scores is one. A scalar
    ``cov`` is an isotropic covariance."""
    mean = np.atleast_1d(np.asarray(mean, dtype=float))
    cov = np.atleast_2d(np.asarray(cov, dtype=float))
    if cov.shape == (1, 1) and mean.size > 1:  # isotropic, stored as a scalar
        cov = cov[0, 0] * np.eye(mean.size)
    factor, _ = jittered_cholesky(cov, label="posterior covariance",
                                  max_relative_jitter=np.inf, warn=False)
    return mean + rng.standard_normal((n_draws, mean.size)) @ factor.T


def gaussian_kl(mean, cov, prior_var=1.0):
    """``KL(N(mean, cov) || N(0, S0))`` in closed form.

    ``0.5 * (tr(S0^-1 S) + m' S0^-1 m - d + log det S0 - log det S)`` (proof
    of Corollary 11 of the dissertation [ARC16]).

    Parameters
    ----------
    mean : (d,) array
    cov : (d, d) covariance, or (d,) variances of a diagonal covariance.
    prior_var : float, (d,) array or (d, d) array
        ``S0``: isotropic ``prior_var I``, ARD ``diag(prior_var)``, or a full
        covariance (e.g. a GP kernel matrix).
    """
    m = np.asarray(mean, dtype=float)
    if m.ndim != 1:
        raise InputError(f"mean must be 1-D, got shape {m.shape}")
    d = m.shape[0]
    cov = _diagonal_if_diagonal(np.asarray(cov, dtype=float))
    prior = np.asarray(prior_var, dtype=float)
    if not np.all(np.isfinite(prior)):
        raise InputError("prior_var must be finite")
    if prior.ndim == 2:
        if prior.shape != (d, d):
            raise InputError(f"a full prior covariance must be ({d}, {d}), got "
                             f"{prior.shape}")
        return _kl_full_prior(m, cov, prior)
    v = np.full(d, float(prior)) if prior.ndim == 0 else prior
    if v.shape != (d,) or np.any(v <= 0):
        raise InputError(f"prior_var must be positive, scalar or of shape "
                         f"({d},), got {prior_var!r}")
    if cov.shape == (d,):
        if np.any(cov <= 0) or not np.all(np.isfinite(cov)):
            raise InputError("diagonal covariance must be positive and finite")
        scaled_trace, logdet = np.sum(cov / v), np.log(cov).sum()
    elif cov.shape == (d, d):
        try:
            chol = np.linalg.cholesky(cov)
        except np.linalg.LinAlgError:
            raise InputError("cov is not positive definite")
        scaled_trace = np.sum(np.diag(cov) / v)
        logdet = 2.0 * np.log(np.diag(chol)).sum()
    else:
        raise InputError(f"cov must have shape ({d},) or ({d}, {d}), got "
                         f"{cov.shape}")
    return float(0.5 * (scaled_trace + np.sum(m * m / v) - d
                        + np.sum(np.log(v)) - logdet))


def _diagonal_if_diagonal(cov):
    """The variances of a (d, d) covariance that is diagonal with a positive
    diagonal (a diagonal VB family's, stored full), else ``cov``: the
    diagonal KL is O(d), the full one O(d^3) (a fifth of a second at
    d = 2000)."""
    if cov.ndim == 2 and cov.shape[0] == cov.shape[1]:
        diag = np.diag(cov)
        # no off-diagonal entry is nonzero: two counts, no d x d mask
        if np.all(diag > 0) and np.count_nonzero(cov) == diag.size:
            return diag.copy()
    return cov


def _kl_full_prior(m, cov, prior_cov):
    """KL to ``N(0, prior_cov)`` through Cholesky factors of both (of the
    prior alone for a diagonal ``cov``: ``tr(S0^-1 S) = sum_k S_kk
    (S0^-1)_kk``)."""
    d = m.size
    try:
        Lp = np.linalg.cholesky(prior_cov)
    except np.linalg.LinAlgError:
        raise InputError("the prior covariance is not positive definite")
    b = solve_triangular(Lp, m, lower=True)
    if cov.ndim == 1:
        if np.any(cov <= 0) or not np.all(np.isfinite(cov)):
            raise InputError("diagonal covariance must be positive and finite")
        inv_lp, info = lapack.dtrtri(Lp, lower=1)
        if info != 0:
            raise InputError("the prior covariance is not positive definite")
        trace = float(np.sum(inv_lp * inv_lp, axis=0) @ cov)
        half_logdet_q = 0.5 * np.sum(np.log(cov))
    else:
        # a relative 1e-12 ridge: EP covariances of tied scores are singular
        Lq = np.linalg.cholesky(cov + 1e-12 * np.trace(cov) / d * np.eye(d))
        A = solve_triangular(Lp, Lq, lower=True)
        trace = float(np.sum(A * A))
        half_logdet_q = np.sum(np.log(np.diag(Lq)))
    return float(0.5 * (trace + b @ b - d)
                 + np.sum(np.log(np.diag(Lp))) - half_logdet_q)


def span_factor(A):
    """``(A, None)`` for an (n, d) matrix ``A`` of full column rank; else
    ``(U_r Sigma_r, V_r)`` of its thin SVD ``A = U Sigma V'``, r its
    numerical rank (singular values above ``sigma_max max(n, d) eps``,
    numpy's ``matrix_rank`` rule).

    For scores ``s = A w`` under ``w ~ N(0, I)``: ``A A'`` is the same, a
    likelihood of the scores sees only ``V_r' w``, and the other directions
    keep their prior exactly. One-hot groups make a design rank deficient
    once its columns are centred (German credit: rank 48 of 61 columns).
    """
    U, sigma, Vt = np.linalg.svd(A, full_matrices=False)
    tol = (sigma[0] if sigma.size else 0.0) * max(A.shape) * np.finfo(float).eps
    rank = int(np.sum(sigma > tol))
    if rank == A.shape[1]:
        return A, None
    return U[:, :rank] * sigma[:rank], Vt[:rank].T


def gp_predictive(kernel_chol, K_star, latent_mean, latent_cov=None,
                  k_diag=None):
    """GP predictive of the scores at new inputs from the latent training
    scores ``s ~ N(latent_mean, latent_cov)``.

    ``mean = k_*' K^-1 E[s]``; with ``k_diag`` (the prior variances
    ``k(x, x)`` of the new inputs), also
    ``var = k_** - k_*' K^-1 k_* + k_*' K^-1 Cov[s] K^-1 k_*``
    (the last term only when ``latent_cov`` is given) [RW06, eq. 3.24].

    Parameters
    ----------
    kernel_chol : (n, n) lower Cholesky factor of ``K`` (plus jitter).
    K_star : (m, n) cross-kernel matrix ``k(X_new, X_train)``.
    latent_mean : (n,) array.
    latent_cov : (n, n) array, optional.
    k_diag : (m,) array, optional.

    Returns
    -------
    mean, or ``(mean, var)`` when ``k_diag`` is given.
    """
    K_star = np.asarray(K_star, dtype=float)
    mean = K_star @ cho_solve((kernel_chol, True), latent_mean)
    if k_diag is None:
        return mean
    V = solve_triangular(kernel_chol, K_star.T, lower=True, check_finite=False)
    var = np.asarray(k_diag, dtype=float) - np.einsum("ij,ij->j", V, V)
    if latent_cov is not None:
        A = cho_solve((kernel_chol, True), K_star.T)
        var = var + np.einsum("ji,jk,ki->i", A, latent_cov, A)
    return mean, np.maximum(var, 0.0)


def row_variances(X: np.ndarray, cov: np.ndarray) -> np.ndarray:
    """``diag(X S X')``: the variance of each row's score ``x . theta`` for
    ``theta`` of covariance ``S`` ((d, d), or (d,) variances of a diagonal
    ``S``). By one matrix product and a row-wise dot: the three-operand
    ``einsum`` it replaces runs an unblocked loop, ten times slower at
    d = 100."""
    X = np.asarray(X, dtype=float)
    cov = np.asarray(cov, dtype=float)
    if cov.ndim == 1:
        return (X * X) @ cov
    return np.einsum("ij,ij->i", X @ cov, X)


def positive_probability(mean, var):
    """``P(u > 0)`` for ``u ~ N(mean, var)``: ``Phi(mean / sqrt(var))``,
    elementwise; a point mass (``var = 0``) gives 1, 0, or 1/2 at 0 (ties
    count 1/2). The predictive probability of the positive class of a
    randomised linear classifier with a Gaussian ``theta`` (VB, EP)."""
    sd = np.sqrt(np.maximum(var, 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(sd > 0, mean / np.where(sd > 0, sd, 1.0),
                     np.sign(mean) * np.inf)
    return np.where((sd == 0) & (mean == 0), 0.5, ndtr(t))
