"""Stein variational gradient descent on a smoothed AUC Gibbs posterior.

SVGD (Liu & Wang 2016) moves a set of particles ``theta_1..N`` deterministically
towards a target ``pi`` along the direction that decreases ``KL(q || pi)``
fastest in the unit ball of an RBF reproducing kernel Hilbert space::

    phi(theta_a) = (1/N) sum_b [ k(theta_b, theta_a) grad log pi(theta_b)
                                 + grad_{theta_b} k(theta_b, theta_a) ],
    k(theta, theta') = exp(-||theta - theta'||^2 / bw),   bw = med^2 / log N,

``med`` the median distance between particles (median heuristic; Liu & Wang,
Section 5). The first term drives the particles uphill, the second repels
them from each other. SVGD needs ``grad log pi``, and the AUC risk ``R_n`` is
piecewise constant; so the target here is the *smoothed* Gibbs posterior::

    log pi(theta) = -||theta||^2 / (2 prior_var) - lam R_h(theta) + const,
    R_h(theta)    = (1/P) sum_{i: y_i=1} sum_{j: y_j=0} Phi(-t_ij),
    t_ij          = (d_ij . theta) / (h ||theta|| ||d_ij||),   d_ij = x_i - x_j,

with ``h`` the relative ``bandwidth`` and ``lam`` multiplying the *fraction* of
pairs (the package's convention, see :mod:`pac_particles.approx.vb`).

Choice of bandwidth. The pair bandwidth ``h ||theta|| ||d_ij||`` is
proportional to ``||theta||`` so that ``R_h``, like ``R_n``, depends on the
direction of ``theta`` only (``t_ij = cos(theta, d_ij) / h``), and to
``||d_ij||`` so that ``R_h`` is exactly the Gaussian-VB expected risk of
Alquier, Ridgway & Chopin (2016)::

    R_h(theta) = E_{rho}[R_n],    rho = N(theta, (h ||theta||)^2 I),

(``E_rho[R_n] = (1/P) sum Phi(-(d_ij . m) / sqrt(d_ij' S d_ij))``, the quantity
``GaussianVB`` minimises, at ``m = theta``, ``S = (h ||theta||)^2 I``): every
particle is smeared over a cone of angular width about ``h`` radians. As
``h -> 0``, ``R_h -> R_n`` with ties counting 1/2 (``Phi(0) = 1/2``); pairs with
``d_ij = 0`` contribute 1/2 for every ``h``.

Gradient. ``grad t_ij = (I - u u') d_ij / (h ||theta|| ||d_ij||)``, ``u = theta
/ ||theta||`` (the derivative through ``h ||theta||`` is the projection), so::

    grad R_h(theta) = -(I - u u') g / (P h ||theta||),
    g = sum_ij w_ij d_ij = X_pos' (W 1) - X_neg' (W' 1),   w_ij = phi(t_ij) / ||d_ij||,

orthogonal to ``theta`` (Euler's relation for a scale-invariant function).
:class:`pac_particles.problem.probit_risk.SmoothedPairRisk` computes both for the
whole particle set at once, without forming any ``d_ij``, the inverse pair
norms ``1/||d_ij||`` cached between iterations: O(N P + N n d) time and
O(N n + block) memory per evaluation. ``R_h(0)`` is 1/2 with a zero gradient
(every score ties). With ``n_pairs=B``, ``R_h`` and its gradient are
estimated from ``B`` pairs drawn uniformly with replacement at every iteration
(the same pairs for all particles, seeded): an unbiased estimate given the
data (an incomplete U-statistic).

Step sizes. As in Liu & Wang's code, the update is
``theta += step * phi / (1e-6 + sqrt(v))`` with ``v`` an exponential moving
average (weight 0.9) of ``phi^2`` per coordinate (RMSprop-style AdaGrad), the
initial ``step`` in units of ``sqrt(prior_var)``. Such normalised steps have
size about ``step`` whatever ``|phi|``, so with a fixed step the particles end
in a limit cycle of that amplitude instead of at the fixed point ``phi = 0``.
We therefore keep one step per particle and coordinate and multiply it by 0.8
whenever that coordinate of ``phi`` changes sign (it overshot), never growing
it back (growing it, as in Rprop, made the particles churn forever on Pima).
Coordinates that move consistently keep their full step, so transport is as
in Liu & Wang; oscillating ones are damped geometrically. The run has
converged when the relative change per iteration averaged over a window of
20 iterations, ``sum ||Delta Theta||_F / sum ||Theta||_F``, is below ``tol``.
The damping also slows the slowest mode of the particle system (the spread
of the radii ``||theta||``), so the particle standard deviations can end a
little below those of a long run with a small constant step. With
``n_pairs`` the gradient noise makes signs flip, so the damping doubles as a
(fast) step decay: the particles freeze at a noise level set by ``n_pairs``.

Limits. SVGD approximates the *smoothed* posterior (``h > 0``) with a finite,
repulsive particle set, and such sets under-disperse as d grows. Under the
isotropic prior the target factorises, ``||theta|| ~ sqrt(prior_var) chi_d``
independently of the direction (``R_h`` is scale-invariant), and SVGD falls
short on both factors: the particles' norms fall short of
``sqrt(prior_var) E chi_d`` (so ``mean`` is short), and the normalised
directions ``theta / ||theta||`` are too concentrated as well, so SVGD is
over-confident about the direction. Only the *mean direction* (and the
``bayes_point``, the default of :meth:`SVGDResult.score`) is reliable: use
SVGD for a point score, not for uncertainty about the direction, credible
intervals or inclusion statements (SMC for those; the measured figures are
in docs/benchmarks.md). Each iteration costs O(N P) against
O(N n log n) per SMC risk evaluation, so SVGD is slower than
:func:`~pac_particles.smc.posterior.run_smc` (``n_pairs`` narrows the gap). It
is an alternative approximation, not a replacement: SMC targets the exact
Gibbs posterior and gives ``log Z``.

Example
-------
::

    from pac_particles.problem.datasets import load_dataset
    from pac_particles.approx.svgd import SVGD
    X, y, _ = load_dataset("pima")
    svgd = SVGD(X, y, lam=len(y), bandwidth=0.1, n_particles=100, seed=1)
    res = svgd.fit()
    res.mean, res.bayes_point, res.n_iter, res.converged, res.wall_time
    scores = res.score(X)            # x . bayes_point, training preprocessing

References
----------
Liu, Q. and Wang, D. (2016). Stein variational gradient descent: a general
purpose Bayesian inference algorithm. Advances in Neural Information
Processing Systems 29 (NIPS 2016), 2378-2386. arXiv:1608.04471.

Alquier, P., Ridgway, J. and Chopin, N. (2016). On the properties of variational
approximations of Gibbs posteriors. Journal of Machine Learning Research 17(239),
1-41.

Ridgway, J., Alquier, P., Chopin, N. and Liang, F. (2014). PAC-Bayesian AUC
classification and scoring. NIPS 27 (the Gibbs posterior targeted here, with
the risk ``R_n`` smoothed).
"""

import math
import sys
import time
import warnings
from dataclasses import dataclass

import numpy as np
from scipy.spatial.distance import pdist, squareform

from pac_particles.core.posterior_result import Fitter
from pac_particles.core import parallel
from pac_particles.problem.auc import linear_auc_risk
from pac_particles.core.checks import (InputError, check_count, check_finite_array,
                     check_positive)
from pac_particles.problem.probit_risk import SmoothedPairRisk, smoothed_auc_risk
from pac_particles.problem.problem import as_problem, check_problem
from pac_particles.core.weighted_particles import WeightedParticles

__all__ = ["SVGD", "SVGDResult", "SVGDConvergenceWarning", "smoothed_auc_risk",
           "stein_direction"]

# RMSprop-style AdaGrad of Liu & Wang's code.
_ALPHA = 0.9
_FUDGE = 1e-6
# Per-coordinate step factor after a sign flip of phi (steps never grow).
_SHRINK = 0.8
# Iterations per window of the stopping test.
_WINDOW = 20


class SVGDConvergenceWarning(RuntimeWarning):
    """SVGD reached ``max_iter`` before its relative change fell below ``tol``."""


# ---------------------------------------------------------- Stein direction

def stein_direction(theta, grad_log_target):
    """The SVGD direction with an RBF kernel and the median heuristic.

    ``phi_a = (1/N) sum_b [k_ab grad_b + (2/bw) k_ab (theta_a - theta_b)]``,
    ``k_ab = exp(-||theta_a - theta_b||^2 / bw)``, ``bw = med^2 / log N``
    (Liu & Wang 2016, eq. (8) and Section 5), ``med^2`` the median squared
    distance between distinct particles (1 if all particles coincide).

    Returns
    -------
    phi : (N, d) array
    bw : float, the kernel bandwidth used.
    """
    n = theta.shape[0]
    sq = pdist(theta, "sqeuclidean")
    med2 = float(np.median(sq))
    bw = med2 / math.log(n) if med2 > 0 else 1.0
    K = squareform(np.exp(-sq / bw))
    K[np.diag_indices(n)] = 1.0
    repulsion = (2.0 / bw) * (theta * K.sum(axis=1)[:, None] - K @ theta)
    return (K @ grad_log_target + repulsion) / n, bw


# ------------------------------------------------------------- the result

@dataclass
class SVGDResult(WeightedParticles):
    """Particles of an SVGD fit (equal weights).

    The moments and point estimates (``mean``, ``cov``, ``directions``,
    ``bayes_point``, ``componentwise_mode``, ``point_estimate``, ``ess``)
    are those of :class:`~pac_particles.core.weighted_particles.WeightedParticles`
    with ``weights = 1 / N``; compare them with SMC through
    ``lab.study.compare_with_smc`` (beside the package). Its draws resample
    the particles. SVGD gives no estimate of ``log Z``: ``log_evidence`` is
    NaN (SMC or EP for the evidence).

    Attributes
    ----------
    theta : (N, d) particles on the (standardised) scale of ``SVGD.data``.
    lam, bandwidth, prior_var : the target's parameters.
    n_iter : iterations run.
    converged : bool, relative change per iteration below ``tol``.
    rel_change : mean relative change per iteration over the last window.
    step_size : the median final step (per particle coordinate; in units of
        ``sqrt(prior_var)``).
    kernel_bandwidth : the RBF kernel's ``bw`` at the last iteration.
    smoothed_risk : (N,) ``R_h`` of the final particles (all pairs).
    wall_time : seconds spent in :meth:`SVGD.fit`.
    data : the AUCData used (``data.transform`` maps new inputs).
    """

    theta: np.ndarray
    lam: float
    bandwidth: float
    prior_var: float
    n_iter: int
    converged: bool
    rel_change: float
    step_size: float
    kernel_bandwidth: float
    smoothed_risk: np.ndarray
    wall_time: float
    data: object = None

    @property
    def weights(self):
        """Equal weights ``1 / N``: SVGD particles are an unweighted sample."""
        n = self.theta.shape[0]
        return np.full(n, 1.0 / n)

    def score(self, X_new, point="bayes_point", raw=True):
        """Scores ``x . theta_hat`` of new inputs.

        ``raw=True``: ``X_new`` has the training input's columns and goes
        through the training preprocessing (``data.transform``).
        """
        X_new = self.data.transform(X_new) if raw else np.asarray(X_new, float)
        return X_new @ self.point_estimate(point)

    def __repr__(self):
        return (f"SVGDResult(N={self.theta.shape[0]}, lam={self.lam:.4g}, "
                f"bandwidth={self.bandwidth:.3g}, n_iter={self.n_iter}, "
                f"converged={self.converged}, "
                f"mean={np.array2string(self.mean[:5], precision=4)}"
                f"{'...' if self.mean.size > 5 else ''})")


# ------------------------------------------------------------ the sampler

class SVGD(Fitter):
    """Stein variational gradient descent on the smoothed AUC Gibbs posterior.

    Target ``pi(theta) ∝ N(theta; 0, prior_var I) exp(-lam R_h(theta))`` with
    the smoothed risk ``R_h`` of the module docstring (the Gaussian-VB expected
    risk of ``N(theta, (h ||theta||)^2 I)``). Like ``GaussianVB``: the
    constructor validates, :meth:`fit` runs.

    Parameters
    ----------
    X : array-like (n, d); y : array-like (n,), binary labels.
    lam : float > 0
        Inverse temperature multiplying the *fraction* of mis-ordered pairs.
    prior_var : float > 0, default 1.0
    bandwidth : float > 0, default 0.1
        Relative smoothing ``h``: ``R_h -> R_n`` as ``h -> 0``; larger values
        give smoother gradients and a flatter target.
    n_particles : int >= 2, default 100
    standardize : bool, default True
        Centre and scale the columns (``validate_xy``); particles live on the
        standardised scale.
    n_pairs : int, optional
        Estimate ``R_h`` and its gradient from ``n_pairs`` pairs drawn
        uniformly with replacement at each iteration (unbiased; the same pairs
        for all particles). Default: all ``P`` pairs.
    step_size : float > 0, default 0.05
        Initial step of the RMSprop-style update, in units of
        ``sqrt(prior_var)``; each particle coordinate's step is multiplied by
        0.8 whenever its update changes sign.
    max_iter : int >= 1, default 2000
    tol : float > 0, default 5e-4
        Stop when the relative change per iteration averaged over a window of
        20 iterations, ``sum ||Delta Theta||_F / sum ||Theta||_F``, is below
        ``tol``.
    seed : int, optional
        Seeds the initial particles (prior draws) and the pair subsampling.
    verbose : bool or int
        Print progress to stderr every ``verbose`` iterations (True: 100).

    Attributes
    ----------
    data : AUCData; result_ : SVGDResult after :meth:`fit`.

    Raises
    ------
    InputError
        (a ``ValueError``) for bad data (``validate_xy``), ``lam <= 0``, ``bandwidth <= 0``,
        ``prior_var <= 0``, ``n_particles < 2``, ``n_pairs < 1``,
        ``step_size <= 0``, ``max_iter < 1``, ``tol <= 0``.

    Examples
    --------
    On a problem set up once (the data and ``lam`` that EP or VB would see):

    >>> import numpy as np
    >>> from pac_particles.problem.problem import GibbsProblem
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 3))
    >>> problem = GibbsProblem.ranking(
    ...     X, X @ [1.0, -1.0, 0.5] + rng.normal(size=60) > 0, lam=60.0)
    >>> res = SVGD.from_problem(problem, n_particles=50, seed=0).fit()
    >>> res.theta.shape, res.bayes_point.shape
    ((50, 3), (3,))
    """


    def __init__(self, X, y=None, lam=None, prior_var=1.0, bandwidth=0.1,
                 n_particles=100, standardize=True, n_pairs=None,
                 step_size=0.05, max_iter=2000, tol=5e-4, seed=None,
                 verbose=False):
        self._configure(as_problem(X, y, lam, "ranking", type(self).__name__,
                                   standardize=standardize),
                        prior_var, bandwidth, n_particles, n_pairs, step_size,
                        max_iter, tol, seed, verbose)

    @classmethod
    def from_problem(cls, problem, **options):
        """SVGD on ``problem``, a ranking
        :class:`~pac_particles.problem.problem.GibbsProblem` set up already
        (its data, risk and ``lam`` taken as they are, not validated again);
        ``options`` are the constructor's other keyword arguments."""
        return cls(check_problem(problem, "ranking", cls.__name__), **options)

    def _configure(self, problem, prior_var=1.0, bandwidth=0.1,
                   n_particles=100, n_pairs=None, step_size=0.05,
                   max_iter=2000, tol=5e-4, seed=None, verbose=False):
        self.problem = problem
        self.data = problem.data
        self.lam = problem.lam
        self.prior_var = check_positive(prior_var, "prior_var")
        self.bandwidth = check_positive(bandwidth, "bandwidth")
        self.n_particles = check_count(n_particles, "n_particles", 2)
        self.n_pairs = None if n_pairs is None else check_count(
            n_pairs, "n_pairs", 1)
        self.step_size = check_positive(step_size, "step_size")
        self.max_iter = check_count(max_iter, "max_iter", 1)
        self.tol = check_positive(tol, "tol")
        self.seed = None if seed is None else check_count(seed, "seed", 0)
        self.verbose = (100 if verbose is True else 0 if verbose is False
                        else check_count(verbose, "verbose", 0))
        self._risk = SmoothedPairRisk(self.data.X_pos, self.data.X_neg,
                                      self.bandwidth)
        self._auc_risk = problem.risk

    # ------------------------------------------------------------- target
    def log_target(self, theta, pairs=None, need_value=True):
        """``log pi(theta)`` (up to a constant) and its gradient.

        ``theta`` (N, d); returns ``(values (N,) or None, grads (N, d))``.
        ``grad log pi = -theta / prior_var - lam grad R_h``.
        """
        theta = np.atleast_2d(np.asarray(theta, dtype=float))
        risk, grad_risk = self._risk(theta, pairs=pairs, need_risk=need_value)
        grad = -theta / self.prior_var - self.lam * grad_risk
        if not need_value:
            return None, grad
        value = (-0.5 * np.einsum("ij,ij->i", theta, theta) / self.prior_var
                 - self.lam * risk)
        return value, grad

    # ------------------------------------------------------------ fitting
    def fit(self, init=None):
        """Run SVGD; store and return the :class:`SVGDResult`.

        Parameters
        ----------
        init : (n_particles, d) array, or weighted particles with such a
            ``theta`` (e.g. an ``SMCPosterior`` subsample), on the
            standardised scale. Default: ``n_particles`` draws from the prior.
        """
        rng = np.random.default_rng(self.seed)
        theta = self._initial_particles(init, rng)
        start_time = time.perf_counter()
        step_max = self.step_size * math.sqrt(self.prior_var)
        steps = np.full_like(theta, step_max)
        history = np.zeros_like(theta)
        phi_prev = np.zeros_like(theta)
        path, scale, rel_change, converged = 0.0, 0.0, np.inf, False
        bw = float("nan")
        with parallel.one_blas_thread():
            for it in range(1, self.max_iter + 1):
                pairs = (self._auc_risk.draw_pairs(rng, self.n_pairs)
                         if self.n_pairs else None)
                _, grad = self.log_target(theta, pairs, need_value=False)
                phi, bw = stein_direction(theta, grad)
                history = (phi ** 2 if it == 1 else
                           _ALPHA * history + (1.0 - _ALPHA) * phi ** 2)
                # a sign flip means this coordinate overshot: damp its step
                steps = np.where(phi * phi_prev < 0, _SHRINK * steps, steps)
                delta = steps * phi / (_FUDGE + np.sqrt(history))
                path += np.linalg.norm(delta)
                scale += np.linalg.norm(theta)
                theta = theta + delta
                phi_prev = phi
                # phi or phi^2 overflowing freezes or corrupts the particles
                if not (np.all(np.isfinite(history))
                        and np.all(np.isfinite(theta))):
                    raise InputError(
                        f"SVGD cannot run at lam = {self.lam:.4g}: the "
                        f"gradient overflows (iteration {it}); use a smaller "
                        "lam")
                if it % _WINDOW == 0:
                    rel_change = path / scale
                    converged = rel_change < self.tol
                    path, scale = 0.0, 0.0
                if self.verbose and (it % self.verbose == 0 or converged):
                    self._print_progress(it, theta, steps, rel_change, bw,
                                         start_time)
                if converged:
                    break
            final_risk, _ = self._risk(theta, need_grad=False)
        wall_time = time.perf_counter() - start_time
        if not converged:
            warnings.warn(
                f"SVGD stopped at max_iter={self.max_iter} with relative change "
                f"{rel_change:.3g} per iteration > tol={self.tol:g}; increase "
                "max_iter or step_size", SVGDConvergenceWarning, stacklevel=2)
        self.result_ = SVGDResult(
            theta=theta, lam=self.lam, bandwidth=self.bandwidth,
            prior_var=self.prior_var, n_iter=it, converged=converged,
            rel_change=float(rel_change),
            step_size=float(np.median(steps)) / math.sqrt(self.prior_var),
            kernel_bandwidth=bw,
            smoothed_risk=final_risk, wall_time=wall_time, data=self.data)
        return self.result_

    def _initial_particles(self, init, rng):
        shape = (self.n_particles, self.data.d)
        if init is None:
            return math.sqrt(self.prior_var) * rng.standard_normal(shape)
        if isinstance(init, WeightedParticles):
            init = init.theta
        theta = np.array(check_finite_array(init, "init"))
        if theta.shape != shape:
            raise InputError(f"init must have shape {shape} (n_particles, d), "
                             f"got {theta.shape}")
        # the risk depends on theta / ||theta|| only: at theta = 0 it has no
        # gradient, and equal particles feel no repulsion, so they never spread
        if np.any(np.all(theta == 0, axis=1)):
            raise InputError("init has particles at theta = 0, where the "
                             "scale-invariant risk has no gradient")
        if np.all(theta == theta[0]):
            raise InputError("init has all particles equal: SVGD cannot "
                             "spread them (the kernel's repulsion is zero)")
        return theta

    def _print_progress(self, it, theta, steps, rel_change, bw, start_time):
        risk = linear_auc_risk(theta, self.data.X_pos, self.data.X_neg)
        print(f"[pac_particles] svgd iter {it:5d}  median step "
              f"{np.median(steps):.3g}  "
              f"rel change {rel_change:.3g}  kernel bw {bw:.3g}  "
              f"mean R_n {risk.mean():.4f}  "
              f"{time.perf_counter() - start_time:.1f} s", file=sys.stderr,
              flush=True)

    # ------------------------------------------------------------ using it
    def predict(self, X_new, point="bayes_point"):
        """Scores of new raw inputs (like ``GaussianVB.predict``): rankings,
        not labels."""
        if self.result_ is None:
            raise InputError("SVGD is not fitted yet: call fit() first")
        return self.result_.score(X_new, point=point)

    def __repr__(self):
        state = (f", n_iter={self.result_.n_iter}" if self.result_ is not None
                 else ", not fitted")
        return (f"SVGD(lam={self.lam:.4g}, bandwidth={self.bandwidth:.3g}, "
                f"n_particles={self.n_particles}{state})")
