"""Gaussian variational inference for any expected risk: the families, the
optimisers, the result.

Variational Bayes [ARC16, Def. 5] replaces the Gibbs posterior
``prior(theta) exp(-lam r_n(theta))``, ``prior = N(0, prior_var I)``, by the
Gaussian ``rho = N(m, S)`` of a family that minimises [ARC16, eq. (2)]::

    objective(rho) = lam E_rho[r_n] + KL(rho || prior)
                   = -log Z + KL(rho || pi_lam)  >=  -log Z,

so ``elbo = -objective`` is a lower bound on ``log Z`` [ARC16, Prop. 6].
The families F1 (isotropic), F2 (diagonal), F3 (full) [ARC16, eqs.
(4)-(6)] are :mod:`pac_particles.approx.gaussian_family`.

F1 ⊂ F2 ⊂ F3 orders the optimal objectives [ARC16, eq. (7)]. What the risk
contributes is ``E_rho[r_n]`` with its gradients in ``m`` and ``S``: the pair
risk of ranking (:class:`~pac_particles.approx.vb.GaussianVB`) or the point
losses of classification (:class:`~pac_particles.approx.classification_vb.ClassificationVB`).
The base class here optimises with L-BFGS-B on the exact expected risk, or
with Adam on fresh minibatches averaging the iterates of the second half
[Kingma & Ba 2015], and returns a :class:`VBResult`, a Gaussian
:class:`~pac_particles.core.posterior_result.PosteriorResult` whose
``log_evidence`` is its ELBO.

References
----------
[ARC16] Alquier, P., Ridgway, J. and Chopin, N. (2016). On the properties of
variational approximations of Gibbs posteriors. Journal of Machine Learning
Research 17(239), 1-41.

Kingma, D. P. and Ba, J. (2015). Adam: a method for stochastic optimization. ICLR.
"""

import math
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np
from scipy import optimize
from scipy.special import ndtr, ndtri

from pac_particles.core import parallel
from pac_particles.approx.gaussian_family import FAMILIES, GaussianFamily
from pac_particles.core.checks import InputError, check_finite_array
from pac_particles.core.posterior_result import (GaussianPosterior, Fitter,
                                                start_moments)
from pac_particles.problem.problem import check_problem

__all__ = ["GaussianFamily", "VBResult", "FAMILIES", "LBFGS_MAX_ITER",
           "stop_threshold"]

#: L-BFGS's default iteration cap. The small sets converge in 20-250
#: iterations; all 14,980 Eeg rows (165,000 sampled pairs, diagonal
#: family, lam = n) need about 3,000, where the former cap of 2,000 left
#: the fit unconverged.
LBFGS_MAX_ITER = 5000
#: Adam without ``max_iter``: the stopping rule's window of steps, the
#: least number of averaged steps and the cap on all steps (see
#: :meth:`_GaussianVariational._adam`)
ADAM_WINDOW = 50
ADAM_MIN_AVERAGED = 100
ADAM_MAX_STEPS = 3000
ADAM_STOP_Z = 2.0
#: with ``_natural_scales`` (F1, F2): the rate ``beta`` of the running mean
#: of the minibatch precisions ``1 / prior_var + 2 lam G_kk`` that sets
#: ``1 / sigma_k^2`` (see :meth:`_GaussianVariational._adam`). A slower
#: rate holds the stopping rule's first test back while the scales settle;
#: this one settles them as well, sooner (docs/benchmarks.md, "GP scores at
#: scale: the reduced-rank prior")
PRECISION_RATE = 0.05
#: with ``_natural_scales``: the fraction of the natural-gradient step
#: ``S grad_m`` (a Newton step in the Gaussian's own metric) the mean takes
#: each step, in place of Adam's step: Adam's per-coordinate steps of
#: ``step_size`` cross features whose curvatures span decades (Nystrom
#: features) many times more slowly (docs/benchmarks.md, "GP scores at
#: scale: the reduced-rank prior")
NATURAL_MEAN_STEP = 0.1


def stop_threshold(n_coordinates: int) -> float:
    """The bound on every coordinate's ``|mean / se|`` of a window that ends
    Adam's descent: :data:`ADAM_STOP_Z` for one coordinate, and for ``p``
    the Sidak quantile that a stationary window (independent coordinates)
    passes as often as one coordinate passes ``ADAM_STOP_Z``. All of 400
    coordinates within 2 standard errors has probability 0.95^400 ~ 1e-8
    at the optimum: the rule never fired at rank 200."""
    fail_one = 2.0 * ndtr(-ADAM_STOP_Z)
    fail_each = -math.expm1(math.log1p(-fail_one) / n_coordinates)
    return float(ndtri(1.0 - 0.5 * fail_each))


# ------------------------------------------------------------ the result

@dataclass
class VBResult(GaussianPosterior):
    """Outcome of a Gaussian VB fit (:class:`~pac_particles.approx.vb.GaussianVB`,
    :class:`~pac_particles.approx.classification_vb.ClassificationVB`): ``rho = N(mean, cov)``,
    a :class:`~pac_particles.core.posterior_result.PosteriorResult` whose
    ``log_evidence`` is the ELBO (a lower bound on ``log Z``, not an
    estimate of it).

    The reported objective (``objective``, ``elbo``, ``expected_risk``,
    ``kl``, ``grad_norm``, ``objective_se``) is computed on first read, by
    ``report``, with the same values as at the end of the fit (the
    fitter's own seed): a fit read only for its mean and covariance (a warm
    start, a held-out score) skips its O(P) sum or its estimate on
    sampled pairs.

    Attributes
    ----------
    mean : (d,) array ``m``, on the (standardised) scale of ``GaussianVB.data``.
    cov : (d, d) array ``S`` (a diagonal family's built on first read from
        ``compact_cov``).
    compact_cov : the family's own form of ``S``: its (d,) variances for the
        isotropic and diagonal families, the (d, d) matrix for the full one
        (what a warm start reads: no d x d matrix where ``S`` is diagonal).
    objective : float
        ``lam E_rho[R_n] + KL(rho || prior)`` at the optimum, computed exactly
        on all pairs, or (a stochastic fit above
        :data:`~pac_particles.approx.vb.EXACT_OBJECTIVE_PAIRS` pairs)
        estimated without an O(P) sum, with standard error
        ``objective_se``.
    elbo : float
        ``-objective``, a lower bound on ``log Z = log E_prior[exp(-lam R_n)]``.
    expected_risk : float
        ``E_rho[R_n]`` (exact, all pairs).
    kl : float
        ``KL(rho || prior)``.
    lam, prior_var : float (``lam`` on the observed risk)
    family : str
    converged : bool
        Optimiser's convergence flag (always True for the Adam run, which has
        no stopping test: look at ``grad_norm``).
    n_iter, n_fev : int
        Optimiser iterations and objective evaluations.
    grad_norm : float
        Max-norm of the exact gradient at the optimum (unconstrained
        parameters); estimated from sampled pairs where ``objective_se`` is
        set.
    message : str
    risk_sd : float or None
        With ``n_pairs``: standard deviation of the per-pair terms of the last
        pair sample; ``risk_sd / sqrt(n_pairs)`` is the standard error of one
        subsampled estimate of ``E_rho[R_n]``.
    data : the validated data of the fit (``transform``, ``raw_linear``).
    objective_se : float or None
        Standard error of an estimated ``objective`` (None: exact).
    report : callable or None
        Computes the reported objective's fields (a dict) on first read;
        None once read.
    """

    mean: np.ndarray
    compact_cov: np.ndarray
    lam: float
    prior_var: float
    family: str
    converged: bool
    n_iter: int
    n_fev: int
    message: str
    risk_sd: Optional[float] = None
    data: object = None
    #: ``report()`` returns the reported objective's fields as a dict
    #: (dropped once read: the fitter's rows are no longer held)
    report: Optional[Callable] = field(default=None, repr=False,
                                       compare=False)

    evidence_method = "ELBO"

    def _reported(self):
        """The reported objective's fields, computed once."""
        values = self.__dict__.get("_report_values")
        if values is None:
            values = self.__dict__["_report_values"] = self.report()
            self.report = None
        return values

    objective = property(lambda self: self._reported()["objective"])
    elbo = property(lambda self: self._reported()["elbo"])
    expected_risk = property(lambda self: self._reported()["expected_risk"])
    kl = property(lambda self: self._reported()["kl"])
    grad_norm = property(lambda self: self._reported()["grad_norm"])
    objective_se = property(lambda self: self._reported()["objective_se"])

    @property
    def cov(self) -> np.ndarray:
        """The (d, d) covariance ``S``: a diagonal family's is built on
        first read (a fit on many features read only for its mean and
        variances, a warm start or a held-out score, never forms it)."""
        if self.compact_cov.ndim == 2:
            return self.compact_cov
        dense = self.__dict__.get("_dense_cov")
        if dense is None:
            dense = self.__dict__["_dense_cov"] = np.diag(self.compact_cov)
        return dense

    def __getstate__(self):
        # a pickle holds the values, not the fitter that computes them
        # (nor the dense S a diagonal family rebuilds)
        self._reported()
        return {key: value for key, value in self.__dict__.items()
                if key != "_dense_cov"}

    @property
    def log_evidence(self):
        """The ELBO ``-objective <= log Z(lam)`` [ARC16, Prop. 6]."""
        return self.elbo

    def sample(self, n, rng=None, *, seed=None):
        """``n`` independent draws ``theta ~ rho``, shape (n, d)
        (:meth:`~pac_particles.core.posterior_result.PosteriorResult.sample`);
        ``seed`` is the former name of ``rng``, kept for its callers."""
        return super().sample(n, rng if seed is None else seed)

    def __repr__(self):
        return (f"VBResult(family={self.family!r}, lam={self.lam:.4g}, "
                f"objective={self.objective:.6g}, converged={self.converged}, "
                f"mean={np.array2string(self.mean[:5], precision=4)}"
                f"{'...' if self.mean.size > 5 else ''})")


class _Close(Exception):
    """L-BFGS is close enough: the point ``x`` evaluated last is within
    ``decrement_tol`` of the optimum (:meth:`GaussianFamily.decrement`)."""

    def __init__(self, x):
        super().__init__()
        self.x = x


class _GaussianVariational(Fitter):
    """What the Gaussian VB of every risk shares: the families, L-BFGS on
    the exact expected risk or Adam on fresh minibatches, the initial
    point, the result. Subclasses set ``data``, ``family``, ``lam``,
    ``prior_var``, ``resample``, ``seed``, ``max_iter``, ``tol``,
    ``step_size`` and provide ``_expected`` (exact ``(risk, g_m, g_cov)``
    terms), ``_batch`` (None: exact) and ``_sampled_terms(rng)``."""


    #: what a minibatch is made of (for messages)
    _unit = "pairs"
    #: whether the risk depends on ``(m, S)`` only through the normalised
    #: margins ``x . m / sqrt(x' S x)``: Adam then takes the joint scale of
    #: ``(m, S^(1/2))`` in closed form (:meth:`GaussianFamily.rescale`)
    _scale_invariant = False
    #: whether Adam's families F1 and F2 take natural-gradient steps on
    #: the precisions instead of Adam steps on the log standard deviations
    _natural_scales = False
    #: L-BFGS also stops once the objective's predicted decrease to its
    #: optimum is at most this many nats (:meth:`GaussianFamily.decrement`,
    #: families F1 and F2, whose fits from a warm start then run in the
    #: family's metric there, ``tol`` on the scaled gradient; None: at
    #: ``tol`` on the gradient alone)
    decrement_tol = None
    #: the task of the problems the approximation takes (``GibbsProblem.task``)
    _task = "ranking"

    @classmethod
    def from_problem(cls, problem, **options):
        """The approximation of ``problem``, a
        :class:`~pac_particles.problem.problem.GibbsProblem` set up already
        (its data, risk and ``lam`` taken as they are, not validated again);
        ``options`` are the constructor's other keyword arguments
        (``family``, ``prior_var``, ...)."""
        return cls(check_problem(problem, cls._task, cls.__name__), **options)

    def _setup_problem(self, problem, family):
        """Take the data and ``lam`` of ``problem``; check ``family``."""
        if family not in FAMILIES:
            raise InputError(f"unknown family {family!r}; choose from "
                             f"{list(FAMILIES)}")
        self.family = family
        self.problem = problem
        self.data = problem.data
        self.lam, self.lam_pn = problem.lam, problem.lam_pn
        self.pu_prior = problem.pu_prior

    # -------------------------------------------------------------- fitting
    def fit(self, init=None):
        """Optimise; store and return the :class:`VBResult`.

        Parameters
        ----------
        init : object with ``mean`` and ``cov`` attributes, optional
            Starting point (e.g. another ``VBResult``, an ``EPResult``), on the
            same scale, projected onto the family. Default: ``m`` along the
            difference of the class means with norm ``sqrt(prior_var)`` and
            ``S = prior_var I / 4``. The objective is not convex: warm-start a
            larger family at a smaller family's optimum to guarantee the
            nested ordering of the computed optima.
        """
        fam = GaussianFamily(self.family, self.data.d)
        x0 = self._initial_point(fam, init)
        self._risk_sd = None
        # the pair kernels supply the threads (pac_particles.core.parallel)
        with parallel.one_blas_thread():
            if self._batch is None:
                x, info = self._lbfgs(fam, x0, self._expected,
                                      warm=init is not None)
            elif not self.resample:
                rng = np.random.default_rng(self.seed)
                x, info = self._lbfgs(fam, x0, self._sampled_terms(rng))
            else:
                x, info = self._adam(fam, x0)
        m, cov, _ = fam.unpack(x)
        converged, n_iter, n_fev, message = info
        self.result_ = VBResult(
            mean=m.copy(), compact_cov=cov,
            lam=self.lam, prior_var=self.prior_var, family=self.family,
            converged=converged, n_iter=n_iter, n_fev=n_fev, message=message,
            risk_sd=self._risk_sd, data=self.data,
            report=self._reporter(fam, x, self.lam, self.prior_var))
        if not getattr(self.data, "in_memory", True):
            # rows on a cluster: read while it is there
            self.result_._reported()
        return self.result_

    def _reporter(self, fam, x, lam, prior_var):
        """``report`` of the result at ``x`` (:class:`VBResult`): exact
        values (all terms) whatever the optimiser saw, or estimates where
        the exact sum is O(P) too many, at the fit's ``lam`` and
        ``prior_var``."""
        def report():
            with parallel.one_blas_thread():
                value, grad, risk, kl, objective_se = self._final_objective(
                    fam, x, lam, prior_var)
            return dict(objective=float(value), elbo=-float(value),
                        expected_risk=float(risk), kl=float(kl),
                        grad_norm=float(np.max(np.abs(grad))),
                        objective_se=objective_se)
        return report

    def _final_objective(self, fam, x, lam, prior_var):
        """``(objective, gradient, expected risk, kl, standard error)`` at
        the optimum: exact here (standard error None)."""
        value, grad, risk, kl = fam.objective(x, lam, prior_var,
                                              self._expected)
        return value, grad, risk, kl, None

    def _initial_point(self, fam, init):
        d, v = self.data.d, self.prior_var
        if init is not None:
            try:  # any Gaussian's moments: a PosteriorResult or not
                mean, cov = start_moments(init)
            except AttributeError:
                raise InputError("init must have mean and cov attributes (a "
                                 "VBResult, EPResult or SMCPosterior)") from None
            mean = check_finite_array(mean, "init.mean")
            cov = check_finite_array(cov, "init.cov")
            if mean.shape != (d,) or cov.shape not in ((d,), (d, d)):
                raise InputError(f"init has mean {mean.shape}, cov {cov.shape};"
                                 f" expected ({d},) and ({d}, {d})")
            variances = cov if cov.ndim == 1 else np.diag(cov)
            if not np.all(variances > 0):
                raise InputError("init.cov must have positive variances")
            return fam.pack(mean, cov)
        # class-mean difference: Fisher's direction up to whitening
        direction = self.data.mean_difference
        norm = np.linalg.norm(direction)
        direction = direction / norm if norm > 0 else np.ones(d) / math.sqrt(d)
        return fam.pack(math.sqrt(v) * direction, np.full(d, 0.25 * v))

    def _lbfgs(self, fam, x0, pair_terms, warm=False):
        lam, v = self.lam, self.prior_var
        lo, hi = fam.bounds()

        close = self.decrement_tol
        n_fev, n_iter = [0], [0]

        def count(_):
            n_iter[0] += 1

        def fun(x):
            # the objective of the box's nearest point, flat beyond it (its
            # gradient there zero): a line search past the box cannot
            # overflow exp(2 log sigma), and the optimum is the box's. Not
            # scipy's bounds, whose set-up loops in Python over every
            # parameter at every call (2 d of them for F2): the K folds of
            # thousands of features refit dozens of times
            inside = np.clip(x, lo, hi)
            value, grad, _, _ = fam.objective(inside, lam, v, pair_terms)
            grad[inside != x] = 0.0
            n_fev[0] += 1
            if close is not None:
                gap = fam.decrement(inside, grad)
                if gap is not None and gap <= close:
                    raise _Close(inside)
            return value, grad

        # with decrement_tol, a warm start's fit runs in the family's metric
        # there (x = x0 + P z: its scales are those of the start), where the
        # decrement is half the squared scaled gradient (the final fit at a
        # million rows: 13 evaluations -> 3). Not a cold start's: its scales
        # are the prior's, far from the fit's
        root = fam.metric_root(x0) if close is not None and warm else None

        def in_metric(z):
            value, grad = fun(x0 + root * z)
            return value, grad * root
        try:
            res = optimize.minimize(
                fun if root is None else in_metric,
                x0 if root is None else np.zeros_like(x0), jac=True,
                method="L-BFGS-B", callback=count,
                options=dict(maxiter=self.max_iter or LBFGS_MAX_ITER,
                             gtol=self.tol, ftol=1e-12, maxcor=20))
            if root is not None:
                res.x = x0 + root * res.x
        except _Close as done:
            return done.x, (True, n_iter[0], n_fev[0],
                            f"predicted decrease to the optimum below "
                            f"decrement_tol = {close:g}")
        return np.clip(res.x, lo, hi), (bool(res.success), int(res.nit),
                                        int(res.nfev), str(res.message))

    def _adam(self, fam, x0):
        """Adam on fresh minibatches each step, with iterate averaging.

        With ``max_iter``: exactly that many steps, the iterates of the
        second half averaged. Without (the stopping rule on the gradient's
        noise): the steps run in windows of :data:`ADAM_WINDOW`; the
        descent ends at the first window where, in every coordinate, the
        mean minibatch gradient is within :func:`stop_threshold` standard
        errors of zero (each from the spread of that window's gradients: the
        signal is then below the noise; :data:`ADAM_STOP_Z` for one
        coordinate, more for many), then as many steps as the descent
        took (at least :data:`ADAM_MIN_AVERAGED`) are averaged;
        :data:`ADAM_MAX_STEPS` caps the whole. The average of a constant-step stochastic gradient
        around the optimum converges to it at rate ``1 / sqrt(steps x
        batch)`` (Polyak & Juditsky 1992): fresh pairs at every step make
        its target the optimum of the complete U-statistic, not of a
        sample. With ``_natural_scales`` (F1, F2) the scales and the mean
        take natural-gradient steps instead of Adam's
        (:data:`PRECISION_RATE`, :data:`NATURAL_MEAN_STEP`)."""
        rng = np.random.default_rng(self.seed)
        fixed = self.max_iter is not None
        n_steps = self.max_iter if fixed else ADAM_MAX_STEPS
        lo, hi = fam.bounds()
        beta1, beta2 = 0.9, 0.999
        exact_scale = self._scale_invariant
        natural = self._natural_scales and fam.name != "full"
        d = fam.d
        per = 1.0 if fam.name == "diagonal" else float(d)
        target_avg = 0.0
        # the running mean of the precisions needs a few of its time
        # constants before its lag stops biasing the scales
        first_test = int(4 / PRECISION_RATE) if natural else 0
        x = fam.rescale(x0, self.prior_var) if exact_scale else x0.copy()
        first, second = np.zeros_like(x), np.zeros_like(x)
        average, n_avg = np.zeros_like(x), 0
        # the stopping rule: window sums of the minibatch objective
        start_avg = n_steps // 2 + 1 if fixed else None
        stop_at = n_steps
        window = np.empty((ADAM_WINDOW, x.size))
        z_stop = stop_threshold(x.size)
        t = 0
        for t in range(1, n_steps + 1):
            terms = self._sampled_terms(rng)
            _, grad, _, _ = fam.objective(x, self.lam, self.prior_var, terms)
            first = beta1 * first + (1 - beta1) * grad
            second = beta2 * second + (1 - beta2) * grad**2
            step = self.step_size * (first / (1 - beta1**t)) \
                / (np.sqrt(second / (1 - beta2**t)) + 1e-8)
            if natural:
                # the stationary point of the log-sd gradient g = 2 var
                # (lam G + 1 / (2 v)) - 1 (summed over k for F1) is the
                # precision 2 lam G + 1 / v = (g + per) / (per var): move
                # the precision a fraction beta of the way there (the
                # natural gradient of the Gaussian's scales; Adam's steps
                # are slowed by the noise of G)
                var = np.exp(2.0 * x[d:])
                rate = PRECISION_RATE
                target_avg = (1.0 - rate) * target_avg \
                    + rate * (grad[d:] + per) / (per * var)
                precision = np.maximum(target_avg / (1.0 - (1.0 - rate)**t),
                                       (1.0 - rate) / var)
                step[d:] = x[d:] + 0.5 * np.log(precision)
                # and the mean a fraction of the way along S grad_m
                step[:d] = NATURAL_MEAN_STEP * grad[:d] / precision
            x = np.clip(x - step, lo, hi)
            if exact_scale:
                x = fam.rescale(x, self.prior_var)
            if start_avg is not None and t >= start_avg:
                n_avg += 1
                average += (x - average) / n_avg
                if t >= stop_at:
                    break
                continue
            if fixed:       # max_iter: the second half, whatever the rule
                continue
            window[(t - 1) % ADAM_WINDOW] = grad
            if t % ADAM_WINDOW == 0 and t >= first_test:
                se = window.std(axis=0) / math.sqrt(ADAM_WINDOW - 1)
                if np.all(np.abs(window.mean(axis=0)) <= z_stop * se):
                    start_avg = t + 1
                    stop_at = min(n_steps, t + max(t, ADAM_MIN_AVERAGED))
        if n_avg == 0:                    # the cap came first: last iterate
            average, n_avg = x, 1
        elif exact_scale:                 # the average is inside the sphere
            average = fam.rescale(average, self.prior_var)
        if fixed:
            message = (f"Adam: {n_steps} steps on {self._batch} fresh "
                       f"{self._unit} each, "
                       f"last {n_avg} iterates averaged")
        else:
            rule = ("no window stopped descending" if start_avg is None
                    else f"descent ended at step {start_avg - 1}")
            message = (f"Adam: {t} steps on {self._batch} fresh "
                       f"{self._unit} each, last {n_avg} iterates averaged "
                       f"(stopping rule: {rule}"
                       + (")" if t < n_steps else
                          f"; capped at {n_steps} steps)"))
        return average, (fixed or start_avg is not None, t, t, message)

    # ------------------------------------------------------------ using it
    def _require_fit(self):
        if self.result_ is None:
            raise InputError(f"{type(self).__name__} is not fitted yet: call "
                             f"fit() first")
        return self.result_

    def predict(self, X_new):
        """Scores ``x . m`` of new raw inputs (training preprocessing applied)."""
        return self.data.transform(X_new) @ self._require_fit().mean
