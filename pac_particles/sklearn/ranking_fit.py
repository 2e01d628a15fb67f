"""The per-method fitters of :class:`~pac_particles.sklearn.estimator.PACBayesAUC`.

The estimator validates its parameters and the data, sets the problem up
once (:class:`~pac_particles.problem.problem.GibbsProblem`) and hands it to
one fitter:

* :func:`fit_smc` -- waste-free tempering SMC, the reference: ``lam`` by
  K-fold cross-validation along one tempering path per fold
  (:func:`~pac_particles.sklearn.selection.cv_lambda`; with
  ``cv_rule="certified"`` the path's step of tightest certificate among
  those the folds cannot tell apart), the prior's hyper-parameters by an
  evidence grid, extra ``chains``, and Corollary 19 for the exact Gibbs
  posterior; every model's risk on the estimator's ``backend``
  (:func:`smc_model`);
* :func:`fit_gaussian` -- EP or Gaussian VB: ``lam`` by the leave-one-out
  AUC along the grid (EP's site removal; VB's Newton step on all pairs up
  to :data:`VB_LOO_MAX_FEATURES` features) or K-fold refits, EP's evidence
  maximisation over the prior's hyper-parameters.

Each returns a :class:`RankingFit`; every choice of ``lam`` goes through
:mod:`pac_particles.sklearn.selection`. The fitters read the estimator's
parameters and set nothing on it.
"""

import copy
import dataclasses
import warnings

import numpy as np
from sklearn.base import clone
from sklearn.metrics import roc_auc_score

from pac_particles.approx.ep import EPGP, EPLinear, EPSpikeSlab
from pac_particles.approx.ep.base import AUTO_MAX_PAIRS
from pac_particles.approx.loo import reused_partner_products
from pac_particles.approx.vb import GaussianVB, auto_pairs
from pac_particles.bounds import certify, smc_certificate
from pac_particles.sklearn.binary import certificate_spec
from pac_particles.core.checks import InputError, check_positive
from pac_particles.core.kernels import SquaredExponential
from pac_particles.core.parallel import concurrent_folds
from pac_particles.problem.auc import pu_corrected_risk
from pac_particles.problem.priors import SpikeSlabPrior
from pac_particles.problem.problem import GibbsProblem
from pac_particles.smc.importance_evidence import refine_log_z
from pac_particles.smc.models import (AUCGibbsModel, GPAUCModel,
                                      linear_score_model,
                                      linear_score_model_for)
from pac_particles.smc.posterior import chain_seeds, run_smc, run_smc_chains
from pac_particles.sklearn.selection import (RefitScorer, cross_validate_lam,
                                             cv_lambda, ep_loo_choice,
                                             evidence_grid, heldout_score,
                                             lam_grid, most_certified_step,
                                             vb_loo_choice)

__all__ = ["RankingFit", "choose_method", "fit_smc", "fit_gaussian",
           "smc_model", "AUTO_SMC_MAX_ROWS", "HOLDOUT_FRACTION",
           "HOLDOUT_ABOVE_ROWS", "SampledPairsWarning",
           "DEFAULT_GRID_SIZE", "EP_PATH_TOL", "VB_CV_TOL",
           "VB_LOO_MAX_FEATURES", "LOO_GRID_STRIDE"]

#: ``grid_size=None``: SMC scores the whole tempering path of each fold (the
#: grid costs nothing); EP and VB fit once per value, and 13 values (four a
#: decade) chose the same lam as 50 within the curve's flat top
#: (docs/benchmarks.md, "Default fits").
DEFAULT_GRID_SIZE = {"smc": 50, "ep": 13, "vb": 13}
#: EP's tolerance along the grid of lam='cv' (the final fit: the model's
#: own, 1e-3): the leave-one-out AUCs of Pima agreed to 4 digits, in half
#: the sweeps.
EP_PATH_TOL = 1e-2
#: L-BFGS tolerance of the VB fits that choose lam (the final fit: 1e-6):
#: at 1e-2 the leave-one-out AUCs of Pima, Liver and German credit numeric
#: agreed to 4 digits with those at 1e-3 (same lam), 5-15% faster
VB_CV_TOL = 1e-2
#: VB chooses ``lam`` by its leave-one-out (O(P d^2) per grid value) up to
#: this many features, by K-fold refits (O(P d) per iteration) above: the
#: leave-one-out was 2x faster at d = 24 (German credit numeric) and d = 44
#: (SPECTF), and, since its systems are solved in one fused pass, 1.6x at
#: d = 60-61 (Sonar, German credit; over 24 splits the test AUCs minus the
#: K-fold choice's: -0.0014 +- 0.0019 and +0.0002 +- 0.0004).
VB_LOO_MAX_FEATURES = 64
#: EP's and VB's leave-one-out choice of lam scores every LOO_GRID_STRIDE-th
#: grid value, then the neighbours of the best (selection.loo_lambda)
LOO_GRID_STRIDE = 2
#: SMC's evidence grid: multiples of the rbf kernel's lengthscale, and the
#: spike-to-slab variance ratios ``v0 / v1`` (fixed in advance: the
#: certificate pays ``log`` of the grid's size)
LENGTHSCALE_FACTORS = (0.25, 0.5, 1.0, 2.0, 4.0)
SPIKE_RATIOS = (1e-4, 1e-3, 1e-2, 1e-1)


#: ``method="auto"``: SMC up to this many rows. Fits at ``lam = n`` on
#: 10 features took about 750x ``LogisticRegression`` at 10,000 rows
#: (37 s) and over six minutes at 100,000, while default fits of the data
#: sets up to 1,000 rows run in seconds (docs/benchmarks.md, "Default
#: fits"); above, the Gaussian approximation.
AUTO_SMC_MAX_ROWS = 2000
#: ``lam="cv"`` scores one stratified held-out split of this fraction
#: instead of ``n_folds`` folds above :data:`HOLDOUT_ABOVE_ROWS` rows: one
#: fit per grid value instead of K
HOLDOUT_FRACTION = 0.2
HOLDOUT_ABOVE_ROWS = 20000


def choose_method(method, n, kernel=None, prior="gaussian", in_memory=True):
    """The method a fit uses: ``method`` itself, or for ``"auto"`` SMC (the
    reference) up to :data:`AUTO_SMC_MAX_ROWS` rows and above it Gaussian
    VB (linear scores under the Gaussian prior: one iteration costs the
    same at any ``n``) or EP (GP kernels, spike-and-slab priors, which VB
    does not support); VB for rows on a cluster (``in_memory`` False)."""
    if method != "auto":
        return method
    if not in_memory:
        return "vb"
    if n <= AUTO_SMC_MAX_ROWS:
        return "smc"
    return "ep" if kernel is not None or prior == "spike_slab" else "vb"


@dataclasses.dataclass
class RankingFit:
    """What a fitter returns: the fitted posterior (a
    :class:`~pac_particles.core.posterior_result.PosteriorResult`) at
    ``lam`` and how it was chosen."""

    posterior: object
    lam: float
    hyperparameters: dict
    cv: object = None
    posteriors: list = None
    approximation: object = None
    bound: object = None
    evidence_grid: object = None
    lam_grid_failures: np.ndarray = dataclasses.field(
        default_factory=lambda: np.empty(0))
    #: EP's or VB's leave-one-out AUC at ``lam`` (None: none)
    loo_auc: float = None


def grid_size(est):
    """The grid size of ``lam='cv'`` (:data:`DEFAULT_GRID_SIZE` when the
    estimator's ``grid_size`` is None)."""
    if est.grid_size is None:
        return DEFAULT_GRID_SIZE[est.method_]
    return int(est.grid_size)


def smc_model(est, problem, hyper):
    """The ``particles`` model of the estimator's prior on ``problem``,
    its risk on the estimator's ``backend`` (GP scores: the host only,
    which :func:`fit_smc` checks first)."""
    if est.kernel is not None:
        return GPAUCModel.from_problem(problem, kernel=hyper["kernel"])
    if est.prior == "spike_slab":
        prior = SpikeSlabPrior(problem.data.d, p=hyper["p"], v0=hyper["v0"],
                               v1=hyper["v1"])
        return AUCGibbsModel.from_problem(problem, prior=prior,
                                          backend=est.backend)
    # score space when d > n (the scores' prior has rank n)
    return linear_score_model_for(problem, prior_var=hyper["prior_var"],
                                  backend=est.backend)


def _check_gp_backend(est):
    """InputError where SMC on GP scores is asked for off the host: the
    device computes the risk of linear scores only."""
    if est.kernel is not None and est.backend != "numba":
        raise InputError(f"backend={est.backend!r} runs the risk of linear "
                         "scores; with a kernel (GP scores) SMC runs on the "
                         "host: use backend='numba' or no kernel")


def _smc_evidence(est, problem, hyper, smc_kwargs):
    """Grid search of log Z by SMC over the prior's hyper-parameters:
    ``(chosen hyper-parameters, EvidenceGrid or None)``."""
    if est.kernel is not None:
        base = hyper["kernel"]
        if not isinstance(base, SquaredExponential):
            return hyper, None
        grid = [{"kernel": SquaredExponential(base.lengthscale * f,
                                              base.amplitude)}
                for f in LENGTHSCALE_FACTORS]
    elif est.prior == "spike_slab":
        grid = [dict(hyper, v0=hyper["v1"] * r) for r in SPIKE_RATIOS]
    else:
        return hyper, None  # isotropic Gaussian: log Z does not depend on prior_var
    found = evidence_grid(lambda **h: smc_model(est, problem, h), grid,
                          seed=est.random_state, n_jobs=est.n_jobs or 1,
                          verbose=est.verbose, **smc_kwargs)
    return found.best_params, found


def fit_smc(est, X, problem, hyper, lam_max, choose_lam):
    """SMC's fit of the estimator ``est`` (module docstring); ``X`` the
    raw inputs the folds of ``lam='cv'`` split, ``problem`` their problem
    (at ``lam_max`` when ``lam`` is chosen), ``hyper`` the prior's
    hyper-parameters as given."""
    _check_gp_backend(est)
    smc_kwargs = dict(n_particles=est.n_particles, len_chain=est.len_chain,
                      move=est.move, ESSrmin=est.ess_rmin)
    fit = RankingFit(posterior=None, lam=None, hyperparameters=hyper)
    if choose_lam:
        if est.kernel is not None or est.prior == "spike_slab":
            raise InputError("lam='cv' with SMC is for the linear Gaussian "
                             "prior; give a float lam (or use method='ep')")
        model_kwargs = dict(standardize=est.standardize,
                            prior_var=est.prior_var, pu_prior=est.pu_prior,
                            backend=est.backend)
        certified = est.cv_rule == "certified"
        fit.cv = cv_lambda(X, problem.data.y, lam_max=lam_max,
                           n_folds=est.n_folds, grid_size=grid_size(est),
                           point=est.point, model_kwargs=model_kwargs,
                           make_model=linear_score_model,
                           refit_to="path" if certified else "best",
                           fold_particles=est.fold_particles,
                           fold_len_chain=est.fold_len_chain,
                           seed=est.random_state, n_jobs=est.n_jobs,
                           verbose=est.verbose, **smc_kwargs)
        if certified:
            # the path refit kept its tempering evidence: refine it at the
            # chosen step only
            step = most_certified_step(fit.cv, lambda post: certify(
                post, problem, certificate_spec(est)))
            # the step's own target: problem.at takes lam as given (PN)
            model = smc_model(est, problem.at(step.lam_pn), hyper)
            fit.posterior = step.with_importance(refine_log_z(
                model, step.theta, step.weights, step.theta.shape[0],
                seed=est.random_state))
        else:
            fit.posterior = fit.cv.posterior
        fit.lam = float(fit.posterior.lam_pn)
    else:
        fit.lam = check_positive(est.lam, "lam")
        if est.hyperparameters == "evidence":
            fit.hyperparameters, fit.evidence_grid = _smc_evidence(
                est, problem, hyper, smc_kwargs)
        fit.posterior = run_smc(smc_model(est, problem, fit.hyperparameters),
                                seed=est.random_state, verbose=est.verbose,
                                **smc_kwargs)
    fit.posteriors = [fit.posterior]
    if est.chains > 1:
        # independent runs at lam for the export's r_hat: the posterior
        # stays the first, the fit of chains=1
        model = smc_model(est, problem.at(fit.lam), fit.hyperparameters)
        fit.posteriors += run_smc_chains(
            model, chains=est.chains - 1,
            seed=chain_seeds(est.random_state, est.chains)[1:],
            n_jobs=est.n_jobs, verbose=est.verbose, **smc_kwargs)
    # the exact Gibbs posterior, log Z from a confidence bound; a lam
    # chosen with the data (a tempering step): the bound's is a grid value
    fit.bound = smc_certificate(
        fit.posterior, eps=est.eps,
        lam_grid=lam_grid(lam_max, grid_size(est)) if choose_lam else None)
    return fit


def approximation(est, problem, hyper, tol=None):
    """The unfitted EP or VB model of the estimator's prior on ``problem``
    (VB: all pairs up to :data:`~pac_particles.approx.vb.AUTO_PAIRS_ABOVE`,
    a fixed sample of pairs above; ``tol`` its L-BFGS tolerance)."""
    if est.method_ == "vb":
        return GaussianVB.from_problem(
            problem, prior_var=est.prior_var, family=est.vb_family,
            seed=est.random_state, n_pairs="auto",
            tol=1e-6 if tol is None else tol)
    if est.kernel is not None:
        return EPGP.from_problem(problem, kernel=hyper["kernel"])
    if est.prior == "spike_slab":
        return EPSpikeSlab.from_problem(problem, p=hyper["p"], v0=hyper["v0"],
                                        v1=hyper["v1"])
    return EPLinear.from_problem(problem, prior_var=hyper["prior_var"])


def _choose_lam(est, X, problem, hyper, grid):
    """``(cv, failures, polish)`` of the Gaussian fits' choice of ``lam``:
    EP's leave-one-out along the grid, VB's leave-one-out (all pairs, at
    most :data:`VB_LOO_MAX_FEATURES` features), else K-fold VB refits with
    continuation from small to large ``lam``. ``polish(lam) -> (model,
    result)`` refits at the final tolerance from the path's fit (None:
    refit from scratch)."""
    if est.method_ == "ep":
        model = approximation(est, problem.at(grid[0]), hyper)
        cv, failed, refit = ep_loo_choice(
            model, grid, lambda m: m.loo_auc(), path_tol=EP_PATH_TOL,
            verbose=est.verbose, stride=LOO_GRID_STRIDE)
        return cv, failed, lambda lam: (model, refit(lam))
    data = problem.data
    if (data.d <= VB_LOO_MAX_FEATURES
            and auto_pairs(data.n_pos, data.n_neg) is None):
        cv, failed, path_fit = vb_loo_choice(
            lambda lam: approximation(est, problem.at(lam), hyper,
                                      tol=VB_CV_TOL),
            grid, verbose=est.verbose, stride=LOO_GRID_STRIDE)

        def polish(lam):
            # the final fit, warm-started at the path's optimum
            final = approximation(est, problem.at(lam), hyper)
            return final, final.fit(init=path_fit(lam))
        return cv, failed, polish
    # sampled pairs or many features: K-fold refits; concurrent folds
    # share the cores
    jobs, threads = concurrent_folds(est.n_folds, est.n_jobs)

    def make(X_tr, y_tr, lam):
        # a fold's own problem (its rows standardised alone), the fit's VB
        return approximation(
            est, GibbsProblem.ranking(X_tr, y_tr, lam, est.standardize,
                                      est.pu_prior), hyper, tol=VB_CV_TOL)
    # at scale one held-out split: K refits would cost K fits
    holdout = HOLDOUT_FRACTION if data.n > HOLDOUT_ABOVE_ROWS else None
    cv = cross_validate_lam(X, data.y, grid,
                            RefitScorer(make, warm_start=True,
                                        threads=threads),
                            n_folds=est.n_folds, seed=est.random_state,
                            n_jobs=jobs, verbose=est.verbose, holdout=holdout)
    return cv, np.empty(0), None


class SampledPairsWarning(UserWarning):
    """EP is asked to run where it samples pairs (more than
    :data:`~pac_particles.approx.ep.base.AUTO_MAX_PAIRS`): its sites then
    often have no fixed point, and VB is the method at that size."""


def _warn_if_ep_samples_pairs(est, problem, lam):
    n_pairs = problem.risk.n_pairs
    if est.method_ == "ep" and n_pairs > AUTO_MAX_PAIRS:
        # measured: no fixed point at kappa = lam / B near 0.2 (1e6 rows)
        warnings.warn(
            f"EP samples {AUTO_MAX_PAIRS:,} of the {n_pairs:,} pairs here "
            f"(kappa = lam / B = {lam / AUTO_MAX_PAIRS:.3g}), where it often "
            "does not converge: use method='vb' (or 'auto') at this size",
            SampledPairsWarning, stacklevel=4)


def fit_gaussian(est, X, problem, hyper, lam_max, choose_lam):
    """EP's or VB's fit of the estimator ``est`` (module docstring), with
    the arguments of :func:`fit_smc`."""
    # the leave-one-out along the grid, the polish and the final fit's keep
    # one factor of the prior scores: its partner products are formed once
    with reused_partner_products():
        return _fit_gaussian(est, X, problem, hyper, lam_max, choose_lam)


def _fit_gaussian(est, X, problem, hyper, lam_max, choose_lam):
    fit = RankingFit(posterior=None, lam=None, hyperparameters=hyper)
    _warn_if_ep_samples_pairs(est, problem, lam_max if choose_lam else est.lam)
    polish = None
    if choose_lam:
        fit.cv, fit.lam_grid_failures, polish = _choose_lam(
            est, X, problem, hyper, lam_grid(lam_max, grid_size(est)))
        fit.lam = fit.cv.best_lam
    else:
        fit.lam = check_positive(est.lam, "lam")
    evidence = est.hyperparameters == "evidence"
    if polish is not None and not evidence:
        # the grid path's model: polish it at the chosen lam
        fit.approximation, fit.posterior = polish(fit.lam)
    else:
        fit.approximation = approximation(est, problem.at(fit.lam), hyper)
        if evidence and est.method_ == "ep":
            fit.hyperparameters = _evidence_on_all_rows(est, fit.approximation)
        fit.posterior = fit.approximation.fit()
    if est.method_ == "ep" and fit.posterior.degenerate:
        raise InputError(f"EP failed at lam = {fit.lam:.4g}: the "
                         "approximation collapsed (see the warning); use "
                         "a smaller lam, lam='cv' or method='smc'")
    if polish is not None or not choose_lam:
        # after K-fold refits the folds' mean AUC at lam is the held-out
        # AUC (heldout_auc), and the final fit's leave-one-out would cost
        # O(n d^3) where the folds were chosen for many features (colon's
        # 2000: 0.84 s of a 2.9 s fit)
        fit.loo_auc = _loo_auc(est, fit.approximation)
    return fit


def _loo_auc(est, approx):
    """The leave-one-out AUC of the final fit: EP (Gaussian prior, GP
    included), VB on all pairs (None where its Hessian is not positive
    definite); None otherwise."""
    if est.method_ == "ep" and est.prior == "gaussian":
        return approx.loo_auc()
    if est.method_ == "vb" and approx.n_pairs is None:
        try:
            return approx.loo_auc()
        except InputError:         # no minimum in the mean: no LOO
            return None
    return None


def _evidence_on_all_rows(est, approx):
    """``hyperparameters='evidence'`` with EP: maximise EP's evidence over
    the prior's hyper-parameters (ARD variances, spike-and-slab ``p`` and
    ``v0 / v1``, GP lengthscales) on every row; returns them, the model
    left at them. The certificate does not restrict this: the kl bound
    holds for every posterior at once, so ``rho`` may use all the data;
    only the bound's prior must not have seen the rows whose risk it uses
    (:func:`pac_particles.bounds.certify`). A kernel given as a
    parameter is tuned as a copy."""
    if est.kernel is not None:
        # tune a copy: the kernel given as a parameter stays as it was
        approx.kernel = copy.deepcopy(approx.kernel)
    approx.fit_hyperparameters()
    if isinstance(approx, EPGP):
        return {"kernel": approx.kernel}
    if isinstance(approx, EPSpikeSlab):
        return {"p": float(np.mean(approx.p)), "v0": float(np.mean(approx.v0)),
                "v1": float(np.mean(approx.v1))}
    return {"prior_var": np.array(approx.prior_var, dtype=float)}


def heldout_auc(est, X, positives):
    """The fitted estimator's ``heldout_auc_``: the leave-one-out AUC, the
    folds' mean AUC at ``lam_`` (``lam='cv'``), or with ``pu_prior`` the
    mean AUC of refits on stratified folds; PU-corrected; None otherwise."""
    auc = getattr(est, "cv_auc_", None)
    if auc is None and "cv_" in est.__dict__:
        auc = float(est.cv_.mean_auc[np.argmin(np.abs(est.cv_.grid
                                                      - est.lam_))])
    elif (auc is None and est.pu_prior is not None
          and est._heldout_folds):
        def fit_and_score(train, val):
            refit = clone(est)
            refit._heldout_folds = False       # no folds within the folds
            refit.fit(X[train], positives[train].astype(int))
            return roc_auc_score(positives[val],
                                 refit.decision_function(X[val]))
        auc = heldout_score(fit_and_score, positives, est.n_folds,
                            est.random_state)
    if auc is None:
        return None
    return 1.0 - float(pu_corrected_risk(1.0 - auc, est.pu_prior))
