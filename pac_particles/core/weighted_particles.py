"""Summaries of a weighted particle approximation: moments and point estimates.

:class:`WeightedParticles` holds particles ``theta`` (N, d) and normalised
weights, and computes what every particle method of the package reports: the
mean and covariance, the effective sample size, and the point estimates of
:data:`POINT_ESTIMATES`. It is a
:class:`~pac_particles.core.posterior_result.PosteriorResult` whose draws are
the particles resampled to equal weights (:func:`resample_equally_weighted`),
and the base of
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

from pac_particles.core.checks import (InputError, check_choice, check_count,
                                      check_finite_array)
from pac_particles.core.posterior_result import (POINT_ESTIMATES, SPACES,
                                                 PosteriorResult)

__all__ = ["WeightedParticles", "POINT_ESTIMATES", "directions",
           "weighted_quantiles", "resample_equally_weighted"]


def resample_equally_weighted(weights, n_draws, rng):
    """Indices of ``n_draws`` equally weighted draws from normalised
    ``weights``: systematic resampling (one uniform of the
    ``numpy.random.Generator`` ``rng`` shared by the ``n_draws`` strata),
    shuffled so that consecutive draws are not sorted by particle."""
    cumulative = np.cumsum(weights)
    cumulative[-1] = 1.0  # guard against rounding below the last stratum
    strata = (rng.uniform() + np.arange(n_draws)) / n_draws
    return rng.permutation(np.searchsorted(cumulative, strata, side="right"))


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


class WeightedParticles(PosteriorResult):
    """Particles ``theta`` (N, d) with normalised ``weights`` (N,).

    Parameters
    ----------
    theta : array-like (N, d)
    weights : array-like (N,) of non-negative numbers with a positive sum,
        optional (normalised here). Default: equal weights ``1 / N``.
    data, lam : the validated data and the inverse temperature of the
        posterior the particles approximate, if known (None: a bare sample).
    space : ``"primal"``, ``"score"`` or ``"gp"`` (what ``theta`` is).

    Subclasses that are dataclasses (``SMCPosterior``, ``SVGDResult``) set
    ``theta``, ``weights``, ``data`` and ``lam`` themselves; only the
    summaries below are shared. A weighted sample alone has no estimate of
    ``log Z``: :attr:`log_evidence` is NaN unless a subclass has one.

    Raises
    ------
    InputError
        if ``theta`` is not a finite 2-D array or ``weights`` do not match it.
    """

    #: 0/1 inclusion indicators (N, d) of a spike-and-slab particle
    #: system, drawn along with ``theta``; None otherwise
    z = None
    draws_description = ("systematic resampling of the weighted particles, "
                         "shuffled")

    def __init__(self, theta, weights=None, data=None, lam=None,
                 space="primal"):
        self.data, self.lam = data, lam
        self.space = check_choice(space, "space", SPACES)
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
    def log_evidence(self):
        """NaN: a weighted sample carries no estimate of ``log Z``."""
        return float("nan")

    @property
    def n_particles(self):
        """The particles of the approximation (the rows of ``theta``)."""
        return self.theta.shape[0]

    @property
    def default_draws(self):
        """An export resamples as many draws as there are particles."""
        return self.n_particles

    def _resample(self, n, rng):
        return resample_equally_weighted(self.weights, n, rng)

    def _draws(self, n, rng):
        return self.theta[self._resample(n, rng)]

    def sample_variables(self, n, rng=None):
        """``n`` equally weighted draws (systematic resampling, shuffled) of
        ``theta`` and, for a spike-and-slab system, of its indicators ``z``
        (int8) at the same particles."""
        rng = np.random.default_rng(rng)
        idx = self._resample(check_count(n, "n"), rng)
        draws = {"theta": self.theta[idx]}
        if self.z is not None:
            draws["z"] = np.asarray(self.z)[idx].astype(np.int8)
        return draws

    def point_draws(self, point="mean", n=None, rng=None):
        """``(particles, weights)``: the weighted particles themselves as
        coefficients of the design (``n`` and ``rng`` unused), their
        directions for the Bayes point (the mean of the directions)."""
        theta = directions(self.theta) if point == "bayes_point" else self.theta
        return np.atleast_2d(self.linear_coefficients(theta)), self.weights

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
        """One of :data:`POINT_ESTIMATES` as a (d,) array: the particles'
        ``mean``, ``bayes_point`` (the default: the AUC sees the direction
        only) or ``componentwise_mode``."""
        if not (isinstance(point, str) and point in POINT_ESTIMATES):
            raise InputError(f"unknown point estimate {point!r}; choose from "
                             f"{POINT_ESTIMATES}")
        if point == "componentwise_mode":
            return self.componentwise_mode()
        return self.mean if point == "mean" else self.bayes_point
