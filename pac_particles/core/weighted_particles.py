"""Summaries of a weighted particle approximation: moments and point estimates.

:class:`WeightedParticles` holds particles ``theta`` (N, d) and normalised
weights, and computes what every particle method of the package reports: the
mean and covariance, the effective sample size, and the point estimates of
:data:`POINT_ESTIMATES`. It is the base of
:class:`~pac_particles.smc.posterior.SMCPosterior` (the weighted population of
tempering SMC), of :class:`~pac_particles.approx.svgd.SVGDResult` (equal weights),
and the summary that :class:`~pac_particles.sklearn.selection.PathScores` computes at
every tempering step.

Point estimates. The AUC risk is invariant to ``theta -> c theta`` (c > 0):
only the direction of ``theta`` matters for ranking [RACL14, Sec. 2]. So:

* ``mean``: the posterior mean of theta;
* ``bayes_point``: the posterior mean of ``theta / ||theta||`` (the centre of
  mass of the directions; the Bayes point of [GH01]);
* ``componentwise_mode``: the mode of each weighted marginal (Gaussian kernel
  density), the choice of the SMC-AUC student report.

For GP latent scores (:class:`~pac_particles.smc.models.GPAUCModel`) the
particles are the latent training scores ``s`` and the same summaries apply
to them.

Example
-------
>>> import numpy as np
>>> from pac_particles.core.weighted_particles import WeightedParticles
>>> cloud = WeightedParticles([[1.0, 0.0], [0.0, 3.0]], weights=[3.0, 1.0])
>>> cloud.weights.tolist(), cloud.mean.tolist(), cloud.bayes_point.tolist()
([0.75, 0.25], [0.75, 0.75], [0.75, 0.25])
>>> float(cloud.ess)
1.6

References
----------
[GH01] Graepel, T. and Herbrich, R. (2001). The kernel Gibbs sampler. NIPS 13.
[RACL14] Ridgway, J., Alquier, P., Chopin, N. and Liang, F. (2014).
PAC-Bayesian AUC classification and scoring. NIPS 27.
"""

import numpy as np
from scipy import stats

from pac_particles.core.checks import InputError, check_finite_array

__all__ = ["WeightedParticles", "POINT_ESTIMATES", "directions",
           "weighted_quantiles"]

POINT_ESTIMATES = ("bayes_point", "mean", "componentwise_mode")


def weighted_quantiles(values, weights, probs):
    """Quantiles ``probs`` of a weighted sample, each point at the middle of
    its mass: of ``values`` (N,), or of each column of ``values`` (N, d)
    (then one row per column)."""
    values = np.asarray(values, dtype=float)
    weights = np.asarray(weights, dtype=float)
    if values.ndim == 1:
        return weighted_quantiles(values[:, None], weights, probs)[0]
    order = np.argsort(values, axis=0, kind="stable")
    ordered = np.take_along_axis(values, order, axis=0)
    mass = weights[order] / np.sum(weights)
    middle = np.cumsum(mass, axis=0) - 0.5 * mass
    return np.array([np.interp(probs, middle[:, k], ordered[:, k])
                     for k in range(values.shape[1])])


def directions(theta):
    """Rows of ``theta`` scaled to unit norm (zero rows stay zero): the AUC
    only sees the direction of a linear score."""
    norms = np.linalg.norm(theta, axis=1, keepdims=True)
    return theta / np.where(norms > 0, norms, 1.0)


class WeightedParticles:
    """Particles ``theta`` (N, d) with normalised ``weights`` (N,).

    Parameters
    ----------
    theta : array-like (N, d)
    weights : array-like (N,) of non-negative numbers with a positive sum,
        optional (normalised here). Default: equal weights ``1 / N``.

    Subclasses that are dataclasses (``SMCPosterior``, ``SVGDResult``) set
    ``theta`` and ``weights`` themselves; only the summaries below are shared.

    Raises
    ------
    InputError
        if ``theta`` is not a finite 2-D array or ``weights`` do not match it.
    """

    def __init__(self, theta, weights=None):
        self.theta = check_finite_array(theta, "theta", ndim=2)
        n = self.theta.shape[0]
        if n == 0:
            raise InputError("theta must hold at least one particle")
        if weights is None:
            self.weights = np.full(n, 1.0 / n)
            return
        weights = check_finite_array(weights, "weights", ndim=1)
        if weights.shape != (n,):
            raise InputError(f"weights must have shape ({n},) like the rows of "
                             f"theta, got {weights.shape}")
        if np.any(weights < 0) or weights.sum() <= 0:
            raise InputError("weights must be >= 0 with a positive sum")
        self.weights = weights / weights.sum()

    @property
    def ess(self):
        """Effective sample size ``1 / sum w_i^2``."""
        return 1.0 / np.sum(self.weights ** 2)

    @property
    def mean(self):
        """Weighted mean of theta (d,)."""
        return np.average(self.theta, weights=self.weights, axis=0)

    @property
    def cov(self):
        """Weighted covariance of theta (d, d) (a scalar array if d = 1)."""
        return np.cov(self.theta, rowvar=False, aweights=self.weights, ddof=0)

    @property
    def directions(self):
        """The particles scaled to unit norm (:func:`directions`)."""
        return directions(self.theta)

    @property
    def bayes_point(self):
        """Weighted mean of the directions ``theta / ||theta||``."""
        return np.average(self.directions, weights=self.weights, axis=0)

    def componentwise_mode(self, grid_size=512):
        """Mode of each weighted marginal (Gaussian kernel density on a grid
        of ``grid_size`` points over the particles' range)."""
        modes = np.empty(self.theta.shape[1])
        for k, col in enumerate(self.theta.T):
            if np.ptp(col) == 0:
                modes[k] = col[0]
                continue
            kde = stats.gaussian_kde(col, weights=self.weights)
            grid = np.linspace(col.min(), col.max(), grid_size)
            modes[k] = grid[np.argmax(kde(grid))]
        return modes

    def point_estimate(self, point="bayes_point"):
        """One of :data:`POINT_ESTIMATES` as a (d,) array."""
        if not (isinstance(point, str) and point in POINT_ESTIMATES):
            raise InputError(f"unknown point estimate {point!r}; choose from "
                             f"{POINT_ESTIMATES}")
        if point == "componentwise_mode":
            return self.componentwise_mode()
        return getattr(self, point)
