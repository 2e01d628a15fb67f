"""Elliptical slice sampling, around the prior or around a fitted Gaussian.

* :class:`EllipticalSlice` [MAM10]: for a target ``N(0, S) * L(theta)``,
  draw ``nu ~ N(0, S)``, a level under the current tempered likelihood, and
  shrink a bracket of angles on the ellipse ``theta cos phi + nu sin phi``
  until the level is met. Never rejects, no step size to tune.
* :class:`CalibratedEllipticalSlice` (the generalised elliptical slice of
  [NMA14]): the ellipse is centred on a Gaussian ``N(m, Sigma)`` fitted to
  the weighted particles at each tempering step, and the slice likelihood is
  ``lpost - log N(theta; m, Sigma)``. Exact for any continuous prior; when
  the target is close to the fitted Gaussian it accepts the first angle and
  makes nearly independent moves. The default move of
  :func:`pac_particles.smc.posterior.run_smc` for Gaussian priors.

All particles advance together; each extra shrink costs one batched risk
evaluation, only for the particles still shrinking
(:func:`~pac_particles.smc.moves.base.slice_along_ellipses`).

Example
-------
::

    from particles import smc_samplers as ssp
    from pac_particles.problem.datasets import load_dataset
    from pac_particles.smc.models import AUCGibbsModel
    from pac_particles.smc.moves import CalibratedEllipticalSlice, EllipticalSlice

    X, y, _ = load_dataset("sonar")
    model = AUCGibbsModel(X, y, lam=len(y))
    prior_slice = ssp.MCMCSequenceWF(mcmc=EllipticalSlice.for_model(model),
                                     len_chain=10)
    calibrated = ssp.MCMCSequenceWF(mcmc=CalibratedEllipticalSlice(),
                                    len_chain=10)

References
----------
[MAM10] and [NMA14]: see :mod:`pac_particles.smc.moves`.
"""

import numpy as np
from particles import smc_samplers as ssp

from pac_particles.core.checks import (InputError, check_choice, check_count,
                      check_fraction)
from pac_particles.problem.priors import param_array, prior_gaussian_factor
from pac_particles.smc.moves.base import (EvaluationCounter, GaussianReference, PriorEllipseMove,
                   check_max_shrinks, check_ridge, gaussian_reference,
                   slice_along_ellipses, weighted_gaussian_fit)

__all__ = ["EllipticalSlice", "CalibratedEllipticalSlice"]


class EllipticalSlice(PriorEllipseMove):
    """Elliptical slice sampling for a target ``N(0, S) * L(theta)`` [MAM10].

    Give the prior covariance ``S`` in exactly one form: its lower Cholesky
    factor, the full matrix, or diagonal variances (scalar or (d,)). For an
    AUC model use :meth:`for_model`.

    Parameters
    ----------
    prior_chol : (d, d) array, optional
        Lower-triangular ``L`` with ``S = L L'``.
    prior_cov : (d, d) array, optional
        Positive definite ``S``.
    prior_var : float or (d,) array, optional
        ``S = diag(prior_var)``.
    max_shrinks : int
        Bound on the target evaluations of one particle in one move. A
        particle that reaches it keeps its position (counted in
        ``n_exhausted``); on these targets the bracket reaches machine
        precision within about 60 shrinks, so this never happens in practice.
    center : (d,) array, optional
        Centre ``m`` of the ellipses ``m + (theta - m) cos + nu sin`` and of
        the reference ``N(m, S)`` (default 0): the Gaussian approximation
        ``q`` a bridge run starts from
        (:mod:`pac_particles.smc.gaussian_bridge`).

    Notes
    -----
    ``step`` returns ``1 / (mean evaluations per particle)``, which
    ``particles`` records as the acceptance rate of the step
    (``x.shared['acc_rates']``); ``evaluations_per_move`` and ``history`` hold
    the counts. The likelihood used on the slice is
    ``x.lpost - log N(theta; 0, S)``, read from the target: the move is exact
    for whatever exponent the tempering target uses, and remains exact (but
    less efficient) if ``S`` is not the model's prior.

    Examples
    --------
    >>> import numpy as np
    >>> from particles import smc_samplers as ssp
    >>> from pac_particles.smc.moves import EllipticalSlice
    >>> move = EllipticalSlice(prior_var=np.ones(3))
    >>> seq = ssp.MCMCSequenceWF(mcmc=move, len_chain=5)
    """

    def __init__(self, prior_chol=None, prior_cov=None, prior_var=None,
                 max_shrinks=200, center=None):
        self.max_shrinks = check_max_shrinks(max_shrinks)
        self.reference = gaussian_reference(prior_chol, prior_cov, prior_var)
        if center is not None:
            center = np.asarray(center, dtype=float)
            if center.shape != (self.reference.dim,):
                raise InputError(f"center must have shape "
                                 f"({self.reference.dim},), got {center.shape}")
        self.center = center
        self._reset_counts()

    @classmethod
    def for_model(cls, model, **kwargs):
        """Elliptical slice under the Gaussian prior of ``model.prior``."""
        chol = prior_gaussian_factor(model.prior)
        if chol is None:
            raise InputError(
                "EllipticalSlice needs a centred Gaussian prior on theta "
                "(pac_particles.problem.priors.gaussian_prior or MvNormal); use "
                "SpikeSlabMove for a SpikeSlabPrior, RegularizedRandomWalk "
                "otherwise")
        return cls(prior_chol=chol, **kwargs)

    def move_along(self, x, target, nu):
        """Slice step along the given ellipses ``theta cos + nu sin`` (one
        ``nu`` per particle); returns the evaluations of each particle."""
        evaluations, exhausted = slice_along_ellipses(
            x, target, nu, self.reference, self.max_shrinks,
            center=self.center)
        self._record(evaluations, exhausted)
        return evaluations

    def step(self, x, target=None):
        """One elliptical slice step for all particles (in place); returns
        ``1 / mean evaluations``."""
        return self._slice_step(x, target, self.reference.draw(x.N),
                                self.reference, center=self.center)


class CalibratedEllipticalSlice(ssp.ArrayMCMC, EvaluationCounter):
    """Elliptical slice sampling around a Gaussian fitted to the particles.

    At each ``calibrate`` (before resampling, on the weighted particles of
    the new target) the move fits ``N(m, Sigma)`` (weighted mean and
    covariance, plus a relative ridge) and then moves every particle along
    ``m + (theta - m) cos phi + nu sin phi``, ``nu ~ N(0, Sigma)``, with the
    slice likelihood ``lpost(theta) - log N(theta; m, Sigma)``: the
    generalised elliptical slice of [NMA14] with a Gaussian reference. Exact
    for any continuous target (the prior need not be Gaussian); when the
    target is close to ``N(m, Sigma)`` the first angle is nearly always
    accepted and successive states are nearly independent.

    Parameters
    ----------
    ridge : float >= 0
        Relative ridge ``ridge * mean(diag Sigma) I`` added to the weighted
        covariance, so that the fit never fails with few or collinear
        particles.
    max_shrinks : int
        As in :class:`EllipticalSlice`.
    center : {"mean", "zero"}
        Centre of the ellipses: the weighted mean ``m`` of the fit (default)
        or the origin (the centre of the model's prior; the reference is then
        ``N(0, Sigma)``, the classic elliptical slice with a fitted
        covariance). Both are exact; "mean" is the more efficient one on the
        AUC posteriors (docs/benchmarks.md, "Efficiency of the SMC sampler").
    shrinkage : float in [0, 1)
        Pull the fitted covariance towards its diagonal,
        ``(1 - shrinkage) Sigma + shrinkage diag(Sigma)``; 0 is the plain
        fit. The default 0.3 is far more efficient with few particles per
        dimension (Sonar, DNA) and neutral otherwise (Pima): a fitted
        covariance from few particles is noisy off its diagonal (the figures
        in docs/benchmarks.md, "Efficiency of the SMC sampler").
    n_slices : int >= 1
        Slice steps per call of ``step``, i.e. per link of a waste-free chain
        (the chain keeps only the last state of each link).

    Notes
    -----
    Needs plain float particles (like the random walk): not for the
    spike-and-slab prior. Refused for GP latent scores
    (:func:`~pac_particles.smc.moves.check_move_fits`): an n x n covariance fit.
    """

    CENTERS = ("mean", "zero")

    def __init__(self, ridge=1e-6, max_shrinks=200, center="mean",
                 shrinkage=0.3, n_slices=1):
        self.ridge = check_ridge(ridge)
        self.max_shrinks = check_max_shrinks(max_shrinks)
        self.center = check_choice(center, "center", self.CENTERS)
        self.shrinkage = check_fraction(shrinkage, "shrinkage")
        self.n_slices = check_count(n_slices, "n_slices", minimum=1)
        self._reset_counts()

    def calibrate(self, W, x):
        arr = np.array(param_array(x.theta), dtype=float)
        mean, chol = weighted_gaussian_fit(W, arr, self.ridge, self.shrinkage)
        x.shared["ess_mean"] = mean if self.center == "mean" else None
        x.shared["ess_chol"] = chol

    def step(self, x, target=None):
        """One generalised elliptical slice step (in place); returns
        ``1 / mean evaluations``."""
        if "ess_chol" not in x.shared:
            raise InputError("CalibratedEllipticalSlice.step before calibrate: "
                             "no fitted Gaussian in x.shared")
        reference = GaussianReference(chol=x.shared["ess_chol"])
        rates = [self._slice_step(x, target, reference.draw(x.N), reference,
                                  center=x.shared["ess_mean"])
                 for _ in range(self.n_slices)]
        # 1 / mean evaluations of the whole link
        return 1.0 / np.sum(1.0 / np.asarray(rates))
