"""What the moves share: the tempering exponent, the Gaussian reference, the
vectorised elliptical slice loop, the evaluation counter.

* :func:`tempering_exponent` -- ``particles``' (adaptive) tempering moves
  particles with the target ``prior * exp(epn * loglik)``, ``epn =
  x.shared['exponents'][-1]``, but does not pass ``epn`` to the move. The
  slice moves never need it: they read the log target ``x.lpost`` and use
  ``lpost(theta) - log N(theta; 0, S)`` as the likelihood, which equals
  ``epn * loglik(theta)`` up to a constant when the prior is ``N(0, S)`` and
  keeps the move exact for any target otherwise. The exact ellipse Gibbs move
  needs ``epn * lam`` explicitly: this function reads it and checks it
  against ``x.lpost - x.lprior = epn * x.llik``.
* :class:`GaussianReference` -- the centred Gaussian ``N(0, S)`` that draws
  the ellipses' directions ``nu`` and gives ``log N(theta; 0, S)``; built
  from a Cholesky factor, a covariance or variances by
  :func:`gaussian_reference`, or fitted to weighted particles by
  :func:`weighted_gaussian_fit`.
* :func:`slice_along_ellipses` -- one elliptical slice step [MAM10, Fig. 2]
  for every particle at once, along ``center + (theta - center) cos phi +
  nu sin phi``; with a centre and a fitted Gaussian it is the generalised
  elliptical slice of [NMA14]. Particles still shrinking their bracket are
  evaluated again together, in one batched call of the target.
* :class:`EvaluationCounter` -- target (risk) evaluations per particle and
  move, the cost unit in which moves are compared.
* :class:`PriorEllipseMove` -- the base of the moves along ellipses of a
  fixed Gaussian prior (:class:`~pac_particles.smc.moves.EllipticalSlice`,
  :class:`~pac_particles.smc.moves.ExactEllipseGibbs`).

Example
-------
::

    import numpy as np
    from pac_particles.smc.moves.base import gaussian_reference, slice_along_ellipses
    reference = gaussian_reference(None, None, np.ones(3))   # N(0, I_3)
    # x: ThetaParticles evaluated by a tempering target `target`
    evaluations, exhausted = slice_along_ellipses(
        x, target, reference.draw(x.N), reference, max_shrinks=200)

References
----------
[MAM10] and [NMA14]: see :mod:`pac_particles.smc.moves`.
"""

import numpy as np
from particles import resampling as rs
from particles import smc_samplers as ssp
from scipy import linalg

from pac_particles.core import parallel
from pac_particles.core.checks import InputError, check_count, check_positive
from pac_particles.core.gaussian import jittered_cholesky
from pac_particles.problem.priors import param_array, param_field

__all__ = ["tempering_exponent", "GaussianReference", "gaussian_reference",
           "weighted_gaussian_fit", "slice_along_ellipses",
           "EvaluationCounter", "PriorEllipseMove", "check_max_shrinks",
           "check_ridge", "set_param_field"]

TWO_PI = 2.0 * np.pi


def set_param_field(arr, values):
    """Write ``values`` into the parameter field (theta or GP scores s) of
    the particle array ``arr``, in place."""
    field = param_field(arr)
    field[...] = np.reshape(values, field.shape)


def check_max_shrinks(max_shrinks):
    """``max_shrinks`` as an int >= 1 (bound on a particle's evaluations in
    one slice move)."""
    return check_count(max_shrinks, "max_shrinks", minimum=1)


def check_ridge(ridge):
    """``ridge`` as a float >= 0 (relative ridge on a particle covariance)."""
    return check_positive(ridge, "ridge", allow_zero=True)


def tempering_exponent(x, rtol=1e-8):
    """Exponent ``epn`` of the tempered target under which ``x`` was evaluated.

    ``particles``' (adaptive) tempering moves particles with the target
    ``prior * exp(epn * loglik)``, ``epn = x.shared['exponents'][-1]``, without
    passing ``epn`` to the move. This reads it and checks it against the
    fields the target wrote, ``x.lpost - x.lprior = epn * x.llik``.

    Raises
    ------
    InputError
        if ``x`` carries no tempering exponent, or its fields contradict it
        (the move is then used with a target it cannot handle).
    """
    exponents = x.shared.get("exponents") if x.shared else None
    if not exponents:
        raise InputError(
            "this move needs the tempering exponent: x.shared['exponents'] is "
            "missing (use it within particles' Tempering/AdaptiveTempering)")
    epn = float(exponents[-1])
    fields = [getattr(x, k, None) for k in ("lpost", "lprior", "llik")]
    if all(f is not None for f in fields):
        lpost, lprior, llik = fields
        ok = np.isfinite(lpost)
        gap = (lpost - lprior - epn * llik)[ok]
        scale = 1.0 + np.abs(lpost[ok]) + np.abs(lprior[ok])
        if np.any(np.abs(gap) > rtol * scale):
            raise InputError(
                f"x.lpost - x.lprior != {epn:.6g} * x.llik: the target is not "
                "prior * exp(exponent * loglik) at the exponent "
                "x.shared['exponents'][-1]")
    return epn


class GaussianReference:
    """Centred Gaussian ``N(0, S)`` driving the elliptical moves.

    ``S = L L'`` (``chol``, shared by all particles) or ``diag(std**2)`` with
    ``std`` of shape (d,) (shared) or (N, d) (one prior per particle, as for
    ``theta | z`` under a spike-and-slab prior).
    """

    def __init__(self, chol=None, std=None):
        self.chol, self.std = chol, std
        self._chol_inv = None

    @property
    def dim(self):
        return self.chol.shape[0] if self.chol is not None else self.std.shape[-1]

    def draw(self, n):
        """``n`` draws of ``N(0, S)``, (n, d)."""
        z = np.random.standard_normal((n, self.dim))
        if self.chol is None:
            return z * self.std
        with parallel.one_blas_thread():
            return z @ self.chol.T

    def half_quad(self, theta, rows):
        """``0.5 theta' S^-1 theta`` for the particles ``rows`` (so that
        ``log N(theta; 0, S) = const - half_quad``)."""
        if self.chol is not None:
            if self._chol_inv is None:
                # one inversion per reference; then a plain matmul per call,
                # faster than a triangular solve on small d
                self._chol_inv = linalg.solve_triangular(
                    self.chol, np.eye(self.chol.shape[0]), lower=True)
            with parallel.one_blas_thread():
                w = theta @ self._chol_inv.T
            return 0.5 * np.sum(w * w, axis=1)
        std = self.std if self.std.ndim == 1 else self.std[rows]
        return 0.5 * np.sum((theta / std) ** 2, axis=1)


def gaussian_reference(prior_chol=None, prior_cov=None, prior_var=None):
    """The reference ``N(0, S)`` from exactly one of: the lower Cholesky
    factor of ``S``, ``S`` itself, or diagonal variances (scalar or (d,)).
    A diagonal ``S`` is kept as standard deviations (O(d) per particle)."""
    given = [a is not None for a in (prior_chol, prior_cov, prior_var)]
    if sum(given) != 1:
        raise InputError("give exactly one of prior_chol, prior_cov, "
                         "prior_var (the Gaussian prior N(0, S))")
    if prior_var is not None:
        var = np.atleast_1d(np.asarray(prior_var, dtype=float))
        if var.ndim != 1 or not np.all(np.isfinite(var)) or np.any(var <= 0):
            raise InputError("prior_var must be finite and > 0 (a scalar or a "
                             "1-D array)")
        return GaussianReference(std=np.sqrt(var))
    if prior_cov is not None:
        cov = np.atleast_2d(np.asarray(prior_cov, dtype=float))
        if cov.shape[0] != cov.shape[1] or not np.allclose(cov, cov.T):
            raise InputError("prior_cov must be a symmetric (d, d) matrix")
        try:
            chol = linalg.cholesky(cov, lower=True)
        except linalg.LinAlgError:
            raise InputError("prior_cov is not positive definite")
    else:
        chol = np.atleast_2d(np.asarray(prior_chol, dtype=float))
        if (chol.shape[0] != chol.shape[1]
                or np.any(np.triu(chol, 1) != 0)
                or np.any(np.diag(chol) <= 0)):
            raise InputError("prior_chol must be lower triangular (d, d) with "
                             "a positive diagonal")
    if not np.all(np.isfinite(chol)):
        raise InputError("prior covariance contains NaN or inf")
    if np.all(np.tril(chol, -1) == 0):
        return GaussianReference(std=np.diag(chol).copy())
    return GaussianReference(chol=chol)


def weighted_gaussian_fit(W, arr, ridge, shrinkage=0.0):
    """Weighted mean and lower Cholesky factor of the weighted covariance
    plus ``ridge * mean(diag) I`` of the particles ``arr`` (N, d); the ridge
    grows tenfold until the factorisation succeeds, so the fit never fails
    with fewer (or collinear) particles than dimensions. ``shrinkage`` in
    [0, 1] pulls the off-diagonal covariances towards 0 first:
    ``(1 - shrinkage) Sigma + shrinkage diag(Sigma)``."""
    with parallel.one_blas_thread():
        mean, cov = rs.wmean_and_cov(W, arr)
        if shrinkage:
            cov = np.atleast_2d(cov)
            cov = (1.0 - shrinkage) * cov + shrinkage * np.diag(np.diag(cov))
        chol = jittered_cholesky(np.atleast_2d(cov),
                                 label="weighted particle covariance",
                                 ridge=ridge, max_relative_jitter=np.inf,
                                 warn=False)[0]
    return np.atleast_1d(mean), chol


def slice_along_ellipses(x, target, nu, reference, max_shrinks, center=None):
    """One elliptical slice step [MAM10, Fig. 2] for every particle of ``x``,
    in place, along the ellipses ``center + (theta - center) cos + nu sin``.

    The likelihood is ``x.lpost - log N(theta; center, S)`` (S of
    ``reference``): the tempered log-likelihood of the target when its prior
    is N(0, S) and ``center`` is 0; for any other Gaussian the step is the
    generalised elliptical slice of [NMA14], still exact. Rejected particles
    shrink their bracket and are evaluated again, in one batch. Returns the
    number of target evaluations of each particle and the mask of particles
    that ran out of shrinks (they keep their position).
    """
    n = x.N
    theta0 = np.array(param_array(x.theta), dtype=float)
    if center is not None:
        theta0 -= center
    all_rows = np.arange(n)
    log_level = (x.lpost + reference.half_quad(theta0, all_rows)
                 + np.log(np.random.uniform(size=n)))
    phi = np.random.uniform(0.0, TWO_PI, size=n)
    lo, hi = phi - TWO_PI, phi.copy()
    evaluations = np.zeros(n, dtype=np.int64)
    active = all_rows
    for _ in range(max_shrinks):
        if active.size == 0:
            break
        c, s = np.cos(phi[active])[:, None], np.sin(phi[active])[:, None]
        proposal = theta0[active] * c + nu[active] * s
        prop_arr = x.theta[active]  # fancy indexing: a copy
        set_param_field(prop_arr, proposal if center is None else proposal + center)
        xprop = x.__class__(theta=prop_arr)
        target(xprop)
        evaluations[active] += 1
        log_lik = xprop.lpost + reference.half_quad(proposal, active)
        accept = log_lik > log_level[active]
        done = active[accept]
        for key, value in xprop.dict_fields.items():
            getattr(x, key)[done] = value[accept]
        active = active[~accept]
        below = phi[active] < 0.0
        lo[active] = np.where(below, phi[active], lo[active])
        hi[active] = np.where(below, hi[active], phi[active])
        phi[active] = np.random.uniform(lo[active], hi[active])
    exhausted = np.zeros(n, dtype=bool)
    exhausted[active] = True
    return evaluations, exhausted


class EvaluationCounter:
    """Bookkeeping shared by the moves: target evaluations per move.

    Attributes: ``n_moves`` (particle moves), ``n_evaluations``,
    ``n_exhausted`` (slice moves that ran out of shrinks), ``history`` (mean
    evaluations per particle of each step).
    """

    def _reset_counts(self):
        self.n_moves = 0
        self.n_evaluations = 0
        self.n_exhausted = 0
        self.history = []

    def _record(self, evaluations, exhausted=None):
        self.n_moves += evaluations.size
        self.n_evaluations += int(evaluations.sum())
        if exhausted is not None:
            self.n_exhausted += int(exhausted.sum())
        mean = float(evaluations.mean())
        self.history.append(mean)
        return mean

    def _slice_step(self, x, target, nu, reference, center=None):
        """A slice step of all particles, recorded; returns ``1 / mean
        evaluations``, which ``particles`` records as the acceptance rate
        (``x.shared['acc_rates']``)."""
        evaluations, exhausted = slice_along_ellipses(
            x, target, nu, reference, self.max_shrinks, center=center)
        return 1.0 / self._record(evaluations, exhausted)

    @property
    def evaluations_per_move(self):
        """Mean number of target (risk) evaluations per particle and move."""
        return self.n_evaluations / self.n_moves if self.n_moves else float("nan")


class PriorEllipseMove(ssp.ArrayMCMC, EvaluationCounter):
    """A move along ellipses of the fixed Gaussian ``self.reference``."""

    @property
    def dim(self):
        return self.reference.dim

    def calibrate(self, W, x):
        d = param_array(x.theta).shape[1]
        if d != self.dim:
            raise InputError(f"particles have dimension {d}, the move's "
                             f"Gaussian prior {self.dim}")
