"""Plumbing shared by the EP models: data and risk, the EP run, LOO, evidence
maximisation.

:class:`_EPBase` takes the problem of the fit, set up once
(:class:`~pac_particles.problem.problem.GibbsProblem`: the validated data,
the risk -- :class:`pac_particles.problem.risks.AUCRisk`, whose order,
positives first, is the order of every n-vector inside EP -- and ``lam``
with its PU correction); the constructors build it from ``(X, y, lam)``,
``from_problem`` takes one built already. It runs the core
(:func:`pac_particles.approx.ep.core._run_ep`) with BLAS limited to
``blas_threads``, assembles the :class:`~pac_particles.approx.ep.result.EPResult`
and offers the leave-one-out scores [OW00]. :func:`_maximise` maximises
``log_z`` over hyper-parameters with L-BFGS-B, using the gradient that is
exact at an EP fixed point [See05].

A model subclass supplies the factor ``C`` of the prior covariance of the
training scores and the prior sites, and turns the whitened posterior back
into its parameter (:mod:`~pac_particles.approx.ep.linear`,
:mod:`~pac_particles.approx.ep.spike_slab`, :mod:`~pac_particles.approx.ep.gp`).

Example
-------
::

    from pac_particles.approx.ep import EPLinear
    ep = EPLinear(X, y, lam=len(y))
    ep.fit(); ep.loo_auc()

References
----------
[OW00] Opper, M. and Winther, O. (2000). Gaussian processes for
classification: mean-field algorithms. Neural Computation 12(11), 2655-2684.

[See05] Seeger, M. (2005). Expectation propagation for exponential families.
Technical report, University of California at Berkeley.
"""

import dataclasses
import math
import warnings
from collections.abc import Mapping

import numpy as np
from scipy import optimize

from pac_particles.core.posterior_result import Fitter
from pac_particles.core import parallel
from pac_particles.core.checks import InputError, check_choice, check_count, check_positive
from pac_particles.core.gaussian import KernelJitterWarning
from pac_particles.problem.auc import auc_risk
from pac_particles.problem.problem import check_problem
from pac_particles.problem.risks import SampledAUCRisk, duplicate_groups
from pac_particles.approx.ep.averaged import _AveragedSites
from pac_particles.approx.ep.core import EPConvergenceWarning, _run_ep, _Sites
from pac_particles.approx.ep.result import EPResult
from pac_particles.approx.loo import site_removal_scores


class _EPBase(Fitter):
    """Shared plumbing: data order, the EP loop, LOO, result assembly."""

    _label = "EP"
    #: Power-EP fraction of the margin sites (:mod:`pac_particles.approx.ep.core`);
    #: 1 is plain EP, the models that take ``alpha=`` set their own.
    alpha = 1.0
    #: Compute EP's log evidence at the end of a fit (one O(P) energy pass);
    #: off along a grid path scored by leave-one-out (:func:`lam_path_scores`).
    compute_log_z = True
    #: the task of the problems the model approximates (``GibbsProblem.task``)
    _task = "ranking"
    #: the layout of the pair sites (EPLinear sets its own from ``sites=``)
    sites_ = "per_pair"

    @classmethod
    def from_problem(cls, problem, **options):
        """The model of ``problem``, a
        :class:`~pac_particles.problem.problem.GibbsProblem` set up already
        (its data, risk and ``lam`` are taken as they are, not validated
        again); ``options`` are the constructor's other keyword arguments
        (``prior_var``, ``damping``, ...)."""
        return cls(check_problem(problem, cls._task, cls.__name__), **options)

    def _setup_problem(self, problem, n_pairs="all",
                       pair_sampling="stratified", seed=None):
        """Take the data, ``lam`` (PU-resolved: ``lam / (1 - pi)`` on the
        observed ranking risk) and the risk of ``problem``; EP runs on all
        its pairs or on sampled ones (:func:`pair_risk`)."""
        self.problem = problem
        self.data = problem.data
        self.lam, self.lam_pn = problem.lam, problem.lam_pn
        self.pu_prior = problem.pu_prior
        self.standardize = problem.standardize
        self._setup_risk(pair_risk(problem, n_pairs, pair_sampling, seed))

    def _setup_risk(self, risk):
        self.risk = risk
        self._perm = self.risk.order
        self._inv_perm = self.risk.inverse_order
        self._Xs = self.data.in_risk_order(self.risk)
        self.n_pos, self.n_neg = self.data.n_pos, self.data.n_neg
        self.result_ = None
        self._run = None
        # BLAS threads inside the EP loop: its many small triangular solves
        # and products run far slower multi-threaded (OpenBLAS wakes idle
        # threads per call, and they compete with numba's threads); the O(P)
        # pair pass is parallelised with numba instead. None = no limit.
        self.blas_threads = 1

    def _input_sites(self):
        """Sites of the pairs whose inputs differ (a linear score ties the
        others for every theta); tied to one average factor
        (:mod:`pac_particles.approx.ep.averaged`) when :attr:`sites_` says so."""
        tied = self.risk.tied_sites(duplicate_groups(self._Xs))
        if self.sites_ == "averaged":
            if self.alpha != 1.0:
                raise InputError("sites='averaged' runs plain EP (alpha = "
                                 f"1); got alpha = {self.alpha}: use "
                                 "sites='per_pair' for power EP")
            return _AveragedSites(self.risk, tied, self.lam)
        return _Sites(self.risk, tied, self.lam, self.alpha)

    def _fit_core(self, C, prior, space, warm_start):
        init = None
        if warm_start and self._run is not None:
            init = (self._run.W, self._run.H)
        with parallel.blas_threads(self.blas_threads):
            run = _run_ep(C, self._sites, prior, self.damping, self.tol,
                          self.max_sweeps, init=init, label=self._label,
                          with_log_z=self.compute_log_z)
        self._run = run
        self._C = C
        self._prior = prior
        st = run.state
        return EPResult(
            mean=None, log_z=float(run.log_z), n_sweeps=run.n_sweeps,
            converged=run.converged, damping=run.damping,
            max_change=run.max_change, site_precision=run.W, site_shift=run.H,
            score_mean=st.score_mean[self._inv_perm],
            score_var=st.score_var[self._inv_perm], n_improper=run.n_improper,
            ep_space=space, lam=self.lam, data=self.data,
            scale_identity=run.scale_identity,
            degenerate=run.degenerate, history=run.history)

    def set_lam(self, lam):
        """Change ``lam`` keeping the sites of the last fit, so that
        ``fit(warm_start=True)`` continues from them (the path along a grid
        of ``lam``: :func:`lam_path_scores`)."""
        self.problem = self.problem.at(lam)
        self.lam, self.lam_pn = self.problem.lam, self.problem.lam_pn
        # a model that builds its sites in fit (EPGP: they depend on the
        # kernel) has none before its first fit
        if hasattr(self, "_sites"):
            self._sites = self._sites.at(self.lam)
        self.result_ = None

    def _require_fit(self):
        if self._run is None:
            self.fit()
        return self._run

    def loo_scores(self, return_var=False):
        """Approximate leave-one-out scores of the training points.

        All the pair sites involving point i are removed from the global EP
        approximation (not refitted) [OW00]; the resulting Gaussian gives
        the predictive score of point i. Cost O(P r^2 + n r^3), r = min(d, n)
        (r = n for EPGP), against n refits.

        Returns
        -------
        mean : (n,) LOO score means, in input order
        var : (n,) LOO score variances (if ``return_var``)
        """
        run = self._require_fit()
        if run.degenerate:
            # the sites of a collapsed run give finite cavities and hence
            # an AUC, but of a state that is no approximation of anything
            raise InputError(
                f"{self._label} failed at lam = {self.lam_pn:.4g} (the "
                "approximation collapsed; see its warning): there are no "
                "leave-one-out scores to give; refit with a smaller lam, or "
                "use SMC")
        with parallel.blas_threads(self.blas_threads):
            mean, var = site_removal_scores(self._C, self._sites, run.W, run.H,
                                    run.state)
        bad = ~(np.isfinite(mean) & (var > 0))
        if np.any(bad):
            warnings.warn(f"{int(bad.sum())} leave-one-out cavities are "
                          "improper; their posterior marginal is used instead",
                          EPConvergenceWarning, stacklevel=2)
            mean[bad] = run.state.score_mean[bad]
            var[bad] = run.state.score_var[bad]
        mean, var = mean[self._inv_perm], var[self._inv_perm]
        return (mean, var) if return_var else mean

    def loo_auc(self):
        """EP cross-validation AUC: the AUC of the leave-one-out scores (over
        all pairs, also when EP ran on sampled pairs)."""
        return 1.0 - auc_risk(self.loo_scores(), self.data.y)


def lam_path_scores(model, score, best=None):
    """``lam -> score(model)`` after fitting ``model`` at ``lam``, each fit
    warm-started from the sites of the last converged one (continuation
    along an increasing grid: the sites at the previous ``lam`` are close to
    the next fixed point, which also keeps EP away from the collapse that a
    start from the prior meets at large ``lam``); None where EP did not
    converge (its sites are not used as a start). What
    :func:`pac_particles.sklearn.selection.loo_lambda` takes. ``best``: a dict that
    receives the ``lam``, ``score`` and converged run (its sites) of the
    highest score so far -- the value ``loo_lambda`` will choose -- to
    restart the final fit from them (:func:`refit_from_path`); one run is
    kept, not one per grid value (each holds O(P) site arrays)."""
    last = {"run": None}

    def at(lam):
        model.set_lam(lam)
        start = last
        if best and abs(math.log(lam / best["lam"])) < abs(
                math.log(lam / last.get("lam", math.inf))):
            # a grid scored coarse then fine (loo_lambda's stride) comes
            # back to the neighbours of the best value: start from it
            start = best
        run = start["run"]
        if run is not None:
            # a weak step site's EP parameters grow in proportion to its
            # kappa = lam / P: start from the last sites rescaled (on Pima
            # and German credit 17-20% fewer sweeps along the grid, the same
            # leave-one-out AUCs to 4 digits)
            ratio = float(lam) / start["lam"]
            run = dataclasses.replace(run, W=run.W * ratio, H=run.H * ratio)
        model._run = run
        # the path is scored by leave-one-out: no log Z (one O(P) pass less)
        with_log_z, model.compute_log_z = model.compute_log_z, False
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", EPConvergenceWarning)
                converged = model.fit(warm_start=True).converged
        finally:
            model.compute_log_z = with_log_z
        if not converged:
            return None
        last["run"], last["lam"] = model._run, float(lam)
        value = score(model)
        # ties go to the smaller lam, as loo_lambda's choice does (a grid
        # scored coarse then fine does not visit it in increasing order)
        if best is not None and (value > best.get("score", -np.inf) or (
                value == best["score"] and lam < best["lam"])):
            best.update(lam=float(lam), score=value, run=model._run)
        return value
    return at


def refit_from_path(model, lam, best, tol):
    """Fit ``model`` at ``lam`` to tolerance ``tol``, warm-started from the
    sites its grid path kept at that ``lam`` (``best`` of
    :func:`lam_path_scores`; from the prior if it kept another ``lam``):
    the path runs at a looser tolerance, and the final fit only polishes."""
    model.set_lam(lam)
    model.tol = tol
    model._run = best.get("run") if best.get("lam") == float(lam) else None
    return model.fit(warm_start=True)


#: The site layouts of the EP models that take ``sites=``.
SITE_LAYOUTS = ("auto", "per_pair", "averaged")


def site_layout(sites, risk):
    """The layout ``sites`` resolves to on ``risk``: ``"auto"`` is
    ``"per_pair"`` (see :class:`~pac_particles.approx.ep.EPLinear` for why)."""
    sites = check_choice(sites, "sites", SITE_LAYOUTS)
    if sites == "auto":
        return "per_pair"
    return sites


#: Above this many positive/negative pairs, ``n_pairs=None`` samples
#: ``AUTO_MAX_PAIRS`` of them (:class:`~pac_particles.problem.risks.SampledAUCRisk`):
#: the O(P) site arrays of the full grid take about 60 bytes a pair.
AUTO_MAX_PAIRS = 5_000_000


def pair_risk(problem, n_pairs="all", sampling="stratified", seed=None):
    """The AUC risk EP runs on for a ranking ``problem``: its risk over
    every pair (``n_pairs="all"``), B sampled pairs (an int), or automatic
    (``None``: all pairs up to :data:`AUTO_MAX_PAIRS`, that many sampled
    pairs beyond)."""
    full = problem.risk
    if isinstance(n_pairs, str) and n_pairs == "all":
        return full
    if n_pairs is None:
        if full.n_pairs <= AUTO_MAX_PAIRS:
            return full
        n_pairs = AUTO_MAX_PAIRS
    return SampledAUCRisk(problem.data.y, n_pairs, sampling, seed)


def _check_bounds(bounds, name="bounds"):
    """``(low, high)`` with ``0 < low < high < inf`` (bounds on variances or
    lengthscales, searched in log space), or InputError."""
    try:
        low, high = (float(b) for b in bounds)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a pair (low, high) of positive "
                         f"numbers, got {bounds!r}")
    if not (0 < low < high < np.inf):
        raise InputError(f"{name} must satisfy 0 < low < high < inf (they "
                         f"are searched in log space), got {bounds!r}")
    return low, high


#: The L-BFGS-B options ``fit_hyperparameters(options=...)`` passes on: its
#: stopping rules (scipy.optimize.minimize); counts, then tolerances. The
#: others do nothing here (the gradient is exact, not finite differences).
OPTIMIZER_COUNTS = ("maxiter", "maxfun", "maxcor", "maxls")
OPTIMIZER_TOLERANCES = ("ftol", "gtol")


def _check_optimizer_options(options):
    """``options`` as a dict of L-BFGS-B stopping rules, or InputError: a
    typo that scipy would only warn of, then ignore, is refused."""
    if options is None:
        return None
    if not isinstance(options, Mapping):
        raise InputError(f"options must be a dict of L-BFGS-B options, e.g. "
                         f"{{'maxiter': 50}}, or None; got {options!r}")
    known = OPTIMIZER_COUNTS + OPTIMIZER_TOLERANCES
    unknown = [key for key in options if key not in known]
    if unknown:
        raise InputError(f"unknown optimizer option(s) {unknown}: options "
                         f"takes {known}")
    checked = {key: check_count(value, key) for key, value in options.items()
               if key in OPTIMIZER_COUNTS}
    checked.update({key: check_positive(value, key)
                    for key, value in options.items()
                    if key in OPTIMIZER_TOLERANCES})
    return checked


def _maximise(model, objective, x0, bounds, options, ep_tol):
    """Maximise ``log_z`` with L-BFGS-B; ``objective(x) -> (log_z, grad)``.

    EP runs warm-started at a tolerance ``ep_tol`` tighter than the model's:
    the gradient is exact only at the fixed point, and a loosely converged
    objective makes the line search fail.
    """
    def neg(x):
        with warnings.catch_warnings():
            # trial points may need jitter or more sweeps: report at the end
            warnings.simplefilter("ignore", EPConvergenceWarning)
            warnings.simplefilter("ignore", KernelJitterWarning)
            val, grad = objective(x)
        if not np.isfinite(val):
            # an EP failure at a trial point: push the line search back
            return 1e10, np.zeros_like(x)
        return -val, -grad

    options = _check_optimizer_options(options)
    ep_tol = check_positive(ep_tol, "ep_tol")
    tol = model.tol
    model.tol = min(tol, ep_tol)
    try:
        return optimize.minimize(neg, x0, jac=True, method="L-BFGS-B",
                                 bounds=bounds, options=options)
    finally:
        model.tol = tol
