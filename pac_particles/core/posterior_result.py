"""The protocol of a fitted posterior: what every method's result offers.

Every fitter of the package returns a :class:`PosteriorResult`:
:func:`~pac_particles.smc.posterior.run_smc` an
:class:`~pac_particles.smc.posterior.SMCPosterior` (and each tempering step
one, ``at_step``), the EP models an
:class:`~pac_particles.approx.ep.EPResult`, Gaussian VB a
:class:`~pac_particles.approx.vb.VBResult`, SVGD an
:class:`~pac_particles.approx.svgd.SVGDResult`. Code above the methods (the
estimators, the committee, the certificates, the ArviZ export, the studies)
reads a posterior through this protocol only, never by probing its type.

What a result provides (its subclass defines these):

``mean``, ``cov``
    Moments of the parameter ``theta``: linear coefficients on the fit's
    validated design (the span coordinates ``w`` for SMC in score space),
    or the latent training scores of a GP.
``log_evidence``
    The method's estimate of ``log Z(lam)``, ``Z = E_prior[exp(-lam r_n)]``:
    SMC's estimate (importance sampling, else tempering), EP's energy, VB's
    ELBO (a lower bound); NaN where the method has none (SVGD).
``data``
    The validated data of the fit (``transform`` for new rows,
    ``raw_linear`` to map a linear score back to the raw inputs).
``space``
    ``"primal"`` (theta are coefficients of the design), ``"score"``
    (SMC's span coordinates, d > n) or ``"gp"`` (latent scores).
``lam``
    The inverse temperature on the observed risk (PU-resolved for ranking,
    :class:`~pac_particles.problem.problem.GibbsProblem`).
``_draws(n, rng)``
    ``n`` equally weighted draws of ``theta``.

What a certificate reads (:func:`~pac_particles.bounds.certify`):
:meth:`gaussian_summary`, ``space``, :meth:`point_estimate`.

What it gets from them: :meth:`sample`, :meth:`point_estimate`,
:meth:`linear_coefficients`, :meth:`raw_coefficients`, and what the
estimators read without asking which method ran: :meth:`point_draws` (the
draws behind a point estimate, with their weights),
:meth:`coefficient_intervals`, :meth:`point_estimate_se` (a Monte Carlo
standard error, None for a deterministic method) and ``degenerate`` (the
fit collapsed and is not usable).

What an export (:mod:`~pac_particles.core.inference_data`) reads besides,
with defaults here for a method that has nothing to say:

``evidence_method``
    Which estimate ``log_evidence`` is (``"EP energy"``, ``"ELBO"``,
    ``"importance sampling"``, ``"tempering"``), None where there is none.
``log_evidence_se``
    The Monte Carlo standard error of ``log_evidence`` (NaN: a Monte Carlo
    estimate without one), None for a deterministic method.
``tempering_path``
    The path of a tempering run, a dict of arrays over its steps ``t = 0..T``
    (``beta``, ``gamma``, ``log_z`` and, where recorded, ``ess``), or None.
``default_draws``, ``draws_description``
    How many draws an export takes by default and how they are made.
:meth:`sample_variables`
    The draws of ``theta`` with the other variables of the posterior drawn
    along (a particle system's inclusion indicators ``z``).

:class:`GaussianPosterior` is the base of the Gaussian approximations (EP,
VB): its draws are independent draws from ``N(mean, cov)`` through
:func:`~pac_particles.core.gaussian.gaussian_draws`.
"""

from typing import Any, Optional, Tuple

import numpy as np
from scipy.special import ndtri

from pac_particles.core.checks import InputError, check_choice, check_count
from pac_particles.core.gaussian import gaussian_draws

__all__ = ["fitted_result", "start_moments", "Fitter", "PosteriorResult", "GaussianPosterior", "POINT_ESTIMATES",
           "GAUSSIAN_DRAWS", "SPACES"]

#: the point estimates of a posterior (:mod:`pac_particles.core.weighted_particles`)
POINT_ESTIMATES = ("bayes_point", "mean", "componentwise_mode")

#: what ``theta`` is: coefficients of the design, SMC's span coordinates,
#: latent GP scores
SPACES = ("primal", "score", "gp")

#: ridge (times the mean variance) of a particle system's Gaussian summary
SUMMARY_RIDGE = 1e-8

#: draws of a Gaussian posterior in an export, by default
GAUSSIAN_DRAWS = 1000


class PosteriorResult:
    """Base of every fitted posterior (module docstring: the protocol).

    ``mean``, ``cov``, ``data`` and ``lam`` are the subclass's own (fields
    of its dataclass or attributes it sets): no class attribute here, so
    that a dataclass subclass does not inherit a default for them.
    """

    # the subclass's own (annotations only: no class attribute)
    mean: Any
    cov: Any
    data: Any
    lam: Any

    #: ``"primal"``, ``"score"`` or ``"gp"`` (:data:`SPACES`)
    space = "primal"
    #: which estimate :attr:`log_evidence` is; None: the method has none
    evidence_method = None
    #: how an export's draws are made
    draws_description = "equally weighted draws"
    #: whether the fit collapsed and is not usable (EP's scale identity
    #: broken); a method that cannot collapse leaves it False
    degenerate = False
    #: single-run Monte Carlo standard errors of ``mean`` and of the Bayes
    #: point (a sampler's); None for a deterministic method
    mean_se = None
    bayes_point_se = None

    @property
    def log_evidence(self) -> float:
        """The method's estimate of ``log Z(lam)`` (NaN: none)."""
        raise NotImplementedError

    @property
    def log_evidence_se(self) -> Optional[float]:
        """Monte Carlo standard error of :attr:`log_evidence`: None for a
        deterministic method (EP, VB) or one without an estimate."""
        return None

    @property
    def tempering_path(self) -> Optional[dict]:
        """The tempering path of the run (dict of arrays over its steps), or
        None for a method without one."""
        return None

    @property
    def default_draws(self) -> int:
        """The number of draws an export takes when not told."""
        return GAUSSIAN_DRAWS

    @property
    def is_gp(self) -> bool:
        """Whether ``theta`` are latent GP scores (no coefficients)."""
        return self.space == "gp"

    def _draws(self, n, rng):
        raise NotImplementedError

    def sample(self, n: int, rng: Any = None) -> np.ndarray:
        """``n`` equally weighted draws of ``theta``, shape (n, d); ``rng``
        a ``numpy.random.Generator`` or a seed."""
        n = check_count(n, "n")
        return self._draws(n, np.random.default_rng(rng))

    def sample_variables(self, n: int, rng: Any = None) -> dict:
        """``n`` equally weighted draws of every variable of the posterior,
        a dict: ``"theta"`` (n, d) as :meth:`sample` (the same draws for the
        same ``rng``), and the variables drawn along with it (none here)."""
        return {"theta": self.sample(n, rng)}

    def point_estimate(self, name: str = "mean") -> np.ndarray:
        """A point estimate of ``theta``: ``"mean"``, ``"bayes_point"``
        (the mean direction, which is what the AUC sees) or
        ``"componentwise_mode"``. A Gaussian has its mean for all three (its
        mean's direction is the Bayes point's to first order)."""
        check_choice(name, "point", POINT_ESTIMATES)
        return np.asarray(self.mean, dtype=float)

    def gaussian_summary(self) -> Tuple[np.ndarray, np.ndarray]:
        """``(mean, cov)``: the Gaussian a certificate takes for this
        posterior (:func:`~pac_particles.bounds.certify`): a particle
        system's weighted moments, with a ridge of :data:`SUMMARY_RIDGE`
        times the mean variance so that its KL to a prior is finite (a
        Gaussian posterior gives its own moments). The certificate
        certifies this Gaussian, not the particles (an empirical measure
        has no finite KL to a prior)."""
        mean = np.asarray(self.mean, dtype=float)
        cov = np.atleast_2d(np.asarray(self.cov, dtype=float))
        ridge = SUMMARY_RIDGE * max(float(np.mean(np.diag(cov))), 1e-300)
        return mean, cov + ridge * np.eye(mean.size)

    def linear_coefficients(self, theta: Optional[np.ndarray] = None
                            ) -> np.ndarray:
        """Coefficients on the validated design of ``theta`` (d,) or (m, d)
        (default: the mean): ``theta`` itself except in SMC's score space."""
        if self.is_gp:
            raise InputError("GP scores have no linear coefficients")
        return np.asarray(self.mean if theta is None else theta, dtype=float)

    def point_estimate_se(self, name: str = "mean") -> Optional[np.ndarray]:
        """The Monte Carlo standard error of :meth:`point_estimate` ``name``
        on the design (d,), or None: a deterministic method, the
        componentwise mode, or ``theta`` not coefficients of the design."""
        check_choice(name, "point", POINT_ESTIMATES)
        if self.space != "primal":
            return None
        return {"mean": self.mean_se,
                "bayes_point": self.bayes_point_se}.get(name)

    def point_draws(self, point: str = "mean", n: int = 2000,
                    rng: Any = None) -> Tuple[np.ndarray, np.ndarray]:
        """``(draws, weights)``: draws of the quantity the point estimate
        ``point`` estimates, as coefficients of the design (in score space
        ``E[theta | w]``), with normalised weights: ``n`` equally weighted
        draws here; a particle system gives its own weighted particles."""
        draws = self.sample(n, rng)
        return (np.atleast_2d(self.linear_coefficients(draws)),
                np.full(draws.shape[0], 1.0 / draws.shape[0]))

    def coefficient_intervals(self, level: float = 0.95, point: str = "mean"
                              ) -> Tuple[np.ndarray, np.ndarray]:
        """``(lower, upper)``: equal-tailed marginal intervals of probability
        ``level`` of the quantity :meth:`point_draws` draws, on the design:
        weighted quantiles of those draws here; a Gaussian's are its
        marginals in closed form."""
        # weighted_particles builds on this module: imported at the call
        from pac_particles.core.weighted_particles import weighted_quantiles
        alpha = 0.5 * (1.0 - level)
        draws, weights = self.point_draws(point, rng=0)
        return tuple(weighted_quantiles(draws, weights, q)
                     for q in (alpha, 1.0 - alpha))

    def raw_coefficients(self, theta: Optional[np.ndarray] = None
                         ) -> Tuple[np.ndarray, float]:
        """``(coef, offset)``: the score of ``theta`` (default the mean) on
        the raw inputs, ``X_raw @ coef + offset`` (zero coefficients for the
        columns the validation dropped)."""
        return self.data.raw_linear(self.linear_coefficients(theta))


class GaussianPosterior(PosteriorResult):
    """A Gaussian posterior ``N(mean, cov)`` (EP, VB): its draws are
    independent (:func:`~pac_particles.core.gaussian.gaussian_draws`, a
    jittered Cholesky factor, so a singular ``cov`` is accepted) and its
    point estimates its mean."""

    draws_description = "independent draws from N(mean, cov)"

    def _draws(self, n, rng):
        return gaussian_draws(self.mean, self.cov, n, rng)

    def gaussian_summary(self) -> Tuple[np.ndarray, np.ndarray]:
        """The Gaussian's own moments."""
        return (np.asarray(self.mean, dtype=float),
                np.atleast_2d(np.asarray(self.cov, dtype=float)))

    def coefficient_intervals(self, level: float = 0.95, point: str = "mean"
                              ) -> Tuple[np.ndarray, np.ndarray]:
        """The Gaussian's marginal intervals ``mean -+ z sd`` (every point
        estimate of a Gaussian is its mean)."""
        half = ndtri(0.5 + 0.5 * level) * np.sqrt(
            np.maximum(np.diag(np.atleast_2d(self.cov)), 0.0))
        mean = np.asarray(self.mean, dtype=float)
        return mean - half, mean + half


class Fitter:
    """Base of the objects that fit a posterior without a sampler (EP, VB,
    SVGD): ``fit()`` returns a :class:`PosteriorResult`, kept in
    ``result_``, which is None until then."""

    #: the fitted :class:`PosteriorResult` (None until ``fit``)
    result_ = None


def start_moments(start: Any) -> Tuple[Any, Any]:
    """``(mean, cov)`` of a warm start ``start`` (any object with ``mean``
    and ``cov``), the covariance in its compact form where the object keeps
    one (``compact_cov``: a diagonal Gaussian's (d,) variances), so that a
    start on many features never forms a d x d matrix it does not need.

    Raises
    ------
    AttributeError
        where ``start`` has no ``mean`` or no covariance.
    """
    compact = getattr(start, "compact_cov", None)
    return start.mean, (start.cov if compact is None else compact)


def fitted_result(posterior: Any) -> PosteriorResult:
    """The :class:`~pac_particles.core.posterior_result.PosteriorResult` of
    ``posterior``: itself, or the ``result_`` of a fitted approximation
    (``EPLinear``, ``GaussianVB``, ``SVGD``, ...: the one path by which an
    export accepts a fitted object instead of its result).

    Raises
    ------
    InputError
        for an approximation not fitted yet, or an object that is neither.
    """
    if isinstance(posterior, PosteriorResult):
        return posterior
    result = posterior.result_ if isinstance(posterior, Fitter) else None
    if not isinstance(result, PosteriorResult):
        raise InputError(f"{type(posterior).__name__} is not a posterior (or "
                         "is not fitted: call fit() first)")
    return result
