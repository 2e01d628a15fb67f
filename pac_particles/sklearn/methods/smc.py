"""Waste-free tempering SMC as a method of the estimators: the reference.

Ranking: ``lam`` by K-fold cross-validation along one tempering path per
fold (:func:`~pac_particles.sklearn.selection.cv_lambda`; with a
certified step rule, the path's step of tightest certificate among those
the folds cannot tell apart), the prior's hyper-parameters by an evidence
grid fixed in advance, extra ``chains``, and Corollary 19 for the exact
Gibbs posterior; every model's risk on the options' ``backend``.
Classification: ``lam`` by K-fold accuracy along each fold's path, then
one run (and ``chains``) at ``lam``; predictions are the particles'
weighted vote.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from pac_particles.bounds import smc_certificate
from pac_particles.core.kernels import SquaredExponential
from pac_particles.problem.priors import SpikeSlabPrior, gaussian_prior
from pac_particles.problem.problem import GibbsProblem
from pac_particles.smc.models import (AUCGibbsModel, ClassificationGibbsModel,
                                      GPAUCModel, linear_score_model,
                                      linear_score_model_for)
from pac_particles.smc.posterior import (chain_seeds, run_smc, run_smc_chains,
                                          with_refinement)
from pac_particles.sklearn.committee import vote_probability
from pac_particles.sklearn.methods.base import FitOptions, Method, MethodFit
from pac_particles.sklearn.selection import (SMCPathScorer, cross_validate_lam,
                                             cv_lambda, evidence_grid)

__all__ = ["SMC", "smc_model", "LENGTHSCALE_FACTORS", "SPIKE_RATIOS"]

#: SMC's evidence grid: multiples of the rbf kernel's lengthscale, and the
#: spike-to-slab variance ratios ``v0 / v1`` (fixed in advance: the
#: certificate pays ``log`` of the grid's size)
LENGTHSCALE_FACTORS = (0.25, 0.5, 1.0, 2.0, 4.0)
SPIKE_RATIOS = (1e-4, 1e-3, 1e-2, 1e-1)


def smc_model(problem: GibbsProblem, options: FitOptions, hyper: dict) -> Any:
    """The ``particles`` model of the options' prior on ``problem``, its risk
    on the options' ``backend`` (GP scores: the host only)."""
    if options.kernel is not None:
        return GPAUCModel.from_problem(problem, kernel=hyper["kernel"])
    if options.prior == "spike_slab":
        prior = SpikeSlabPrior(problem.data.d, p=hyper["p"], v0=hyper["v0"],
                               v1=hyper["v1"])
        return AUCGibbsModel.from_problem(problem, prior=prior,
                                          backend=options.backend)
    # score space when d > n (the scores' prior has rank n)
    return linear_score_model_for(problem, prior_var=hyper["prior_var"],
                                  backend=options.backend)


def _smc_kwargs(options):
    return dict(n_particles=options.n_particles, len_chain=options.len_chain,
                move=options.move, ESSrmin=options.ess_rmin)


def _evidence(problem, options, hyper):
    """Grid search of log Z by SMC over the prior's hyper-parameters:
    ``(chosen hyper-parameters, EvidenceGrid or None)``."""
    if options.kernel is not None:
        base = hyper["kernel"]
        if not isinstance(base, SquaredExponential):
            return hyper, None
        grid = [{"kernel": SquaredExponential(base.lengthscale * f,
                                              base.amplitude)}
                for f in LENGTHSCALE_FACTORS]
    elif options.prior == "spike_slab":
        grid = [dict(hyper, v0=hyper["v1"] * r) for r in SPIKE_RATIOS]
    else:
        return hyper, None  # isotropic Gaussian: log Z does not depend on prior_var
    found = evidence_grid(lambda **h: smc_model(problem, options, h), grid,
                          seed=options.random_state,
                          n_jobs=options.n_jobs or 1,
                          verbose=options.verbose, **_smc_kwargs(options))
    return found.best_params, found


class SMC(Method):
    """Waste-free tempering SMC (module docstring)."""

    name = "smc"
    summary = "waste-free tempering SMC, the reference sampler"
    tasks = ("ranking", "classification")
    auto_order = 0
    #: ``method="auto"``: SMC up to this many rows, a Gaussian approximation
    #: above: over five splits SMC's test AUC led VB's on the data sets of
    #: up to 270 rows with many features (Sonar, SPECT, Colon), while on
    #: synthetic logistic data of 500 and 1,000 rows (d = 10) VB's was the
    #: closer to the logistic regression's (at 1,000 rows within 0.002 in 10
    #: draws of 10, SMC's in 5), in less time (docs/benchmarks.md, "By size:
    #: the default fit on synthetic logistic data")
    auto_max_rows = 400
    #: classification: never by ``auto`` (the classifier's SMC default fit
    #: is many times slower than VB's at every size measured;
    #: docs/benchmarks.md, "Default fits")
    auto_max_rows_by_task = {"classification": 0}
    #: its folds score the whole tempering path, so the grid costs nothing
    default_grid_size = 50
    monte_carlo = True
    evidence_name = "log Z (SMC estimate)"
    lam_search = "path"

    def refusal(self, options: FitOptions, task: str = "ranking",
                in_memory: bool = True) -> Optional[str]:
        why = super().refusal(options, task, in_memory)
        if why is not None:
            return why
        if options.kernel is not None and options.backend != "numba":
            return (f"backend={options.backend!r} runs the risk of linear "
                    "scores; with a kernel (GP scores) SMC runs on the host: "
                    "use backend='numba' or no kernel")
        if (task == "ranking" and options.choose_lam
                and not options.linear_gaussian):
            return ("lam='cv' with SMC is for the linear Gaussian prior; "
                    "give a float lam (or use method='ep')")
        return None

    # ------------------------------------------------------------ ranking
    def fit_ranking(self, problem: GibbsProblem, options: FitOptions,
                    X: Any) -> MethodFit:
        hyper = options.hyper
        fit = MethodFit(posterior=None, lam=None, hyperparameters=hyper)
        if options.choose_lam:
            fit.grid = self.grid(options, problem.data.n, problem.task)
            step_rule = options.step_rule
            certified = step_rule is not None
            model_kwargs = dict(standardize=options.standardize,
                                prior_var=options.prior_var,
                                pu_prior=options.pu_prior,
                                backend=options.backend)
            fit.cv = cv_lambda(
                X, problem.data.y, lam_max=fit.grid[-1],
                n_folds=options.n_folds, grid_size=len(fit.grid),
                grid_decades=options.grid_decades, point=options.point,
                model_kwargs=model_kwargs, make_model=linear_score_model,
                refit_to="path" if certified else "best",
                fold_particles=options.fold_particles,
                fold_len_chain=options.fold_len_chain,
                seed=options.random_state, n_jobs=options.n_jobs,
                verbose=options.verbose,
                # the refit on every row: the fit's own problem
                refit_model=lambda lam: smc_model(problem.at(lam), options,
                                                  hyper),
                **_smc_kwargs(options))
            if step_rule is not None:
                # the path refit kept its tempering evidence: refine it at
                # the chosen step only, as run_smc refines its runs
                step = step_rule(fit.cv)
                # the step's own target: problem.at takes lam as given (PN)
                model = smc_model(problem.at(step.lam_pn), options, hyper)
                fit.posterior = with_refinement(
                    step, model, step.theta.shape[0],
                    seed=options.random_state)
            else:
                fit.posterior = fit.cv.posterior
            fit.lam = float(fit.posterior.lam_pn)
        else:
            fit.lam = options.given_lam()
            if options.hyperparameters == "evidence":
                fit.hyperparameters, fit.evidence_grid = _evidence(
                    problem, options, hyper)
            fit.posterior = run_smc(
                smc_model(problem, options, fit.hyperparameters),
                seed=options.random_state, verbose=options.verbose,
                **_smc_kwargs(options))
        if options.chains > 1:
            # independent runs at lam for the export's r_hat: the posterior
            # stays the first, the fit of chains=1
            fit.posteriors = [fit.posterior] + run_smc_chains(
                smc_model(problem.at(fit.lam), options, fit.hyperparameters),
                chains=options.chains - 1,
                seed=chain_seeds(options.random_state, options.chains)[1:],
                n_jobs=options.n_jobs, verbose=options.verbose,
                **_smc_kwargs(options))
        # the exact Gibbs posterior, log Z from a confidence bound; a lam
        # chosen with the data (a tempering step): the bound's is a grid value
        fit.bound = smc_certificate(fit.posterior, eps=options.eps,
                                    lam_grid=fit.grid)
        return fit

    def scores(self, fit: MethodFit, X: np.ndarray,
               point: str = "mean") -> np.ndarray:
        """The point estimate's scores (a GP's conditional mean given the
        point's latent training scores)."""
        return fit.posterior.score(X, point=point)

    # ----------------------------------------------------- classification
    def fit_classification(self, problem: GibbsProblem, options: FitOptions,
                           X: Any) -> MethodFit:
        prior = gaussian_prior(problem.data.d, var=float(options.prior_var))
        smc_kwargs = dict(n_particles=options.n_particles,
                          len_chain=options.len_chain)
        fit = MethodFit(posterior=None, lam=options.lam,
                        hyperparameters=options.hyper)
        if options.choose_lam:
            fit.grid = self.grid(options, problem.data.n, problem.task)
            scorer = SMCPathScorer(
                float(fit.grid[-1]), metric="accuracy",
                make_model=ClassificationGibbsModel,
                model_kwargs=dict(
                    loss=options.loss, fit_intercept=options.fit_intercept,
                    standardize=options.standardize,
                    pu_prior=options.pu_prior, prior=prior,
                    backend=options.backend),
                smc_kwargs=smc_kwargs)
            fit.cv = cross_validate_lam(X, problem.data.y, fit.grid, scorer,
                                        n_folds=options.n_folds,
                                        seed=options.random_state,
                                        n_jobs=options.n_jobs)
            fit.lam = float(fit.cv.best_lam)
        model = ClassificationGibbsModel.from_problem(
            problem.at(fit.lam), prior=prior, backend=options.backend)
        seed = options.random_state
        # a seed of its own, apart from the folds'
        refit_seed = None if seed is None else int(seed) + int(options.n_folds)
        fit.posterior = run_smc(model, seed=refit_seed, **smc_kwargs)
        fit.posteriors = [fit.posterior] + (run_smc_chains(
            model, chains=options.chains - 1,
            seed=chain_seeds(refit_seed, options.chains)[1:],
            n_jobs=options.n_jobs, **smc_kwargs) if options.chains > 1 else [])
        return fit

    def positive_probability(self, fit: MethodFit,
                             X: np.ndarray) -> np.ndarray:
        """The particles' weighted vote
        ``sum_k W_k (1{x . theta_k > 0} + 0.5 1{x . theta_k = 0})``."""
        post = fit.posterior
        return vote_probability(post.theta, post.weights,
                                post.data.transform(X))

