"""Expectation Propagation as a method of the estimators.

Ranking: :class:`~pac_particles.approx.ep.EPLinear`,
:class:`~pac_particles.approx.ep.EPSpikeSlab` or
:class:`~pac_particles.approx.ep.EPGP` by the options' prior; ``lam`` by the
leave-one-out AUC along the grid (each site removed, no refit: Opper &
Winther), the prior's hyper-parameters by EP's evidence on every row.
Classification: :class:`~pac_particles.approx.ep.EPClassification` (the 0-1
loss), ``lam`` by the leave-one-out accuracy.
"""

from __future__ import annotations

from typing import Any, Optional

import copy
import warnings

import numpy as np

from pac_particles.approx.ep import (EPGP, EPClassification, EPLinear,
                                     EPSpikeSlab)
from pac_particles.approx.ep.base import AUTO_MAX_PAIRS
from pac_particles.problem.problem import GibbsProblem
from pac_particles.sklearn.methods.base import FitOptions, MethodFit
from pac_particles.sklearn.methods.gaussian import GaussianMethod
from pac_particles.sklearn.selection import ep_loo_choice

__all__ = ["EP", "EP_PATH_TOL", "LOO_GRID_STRIDE", "SampledPairsWarning"]

#: EP's tolerance along the grid of lam='cv' (the final fit: the model's
#: own, 1e-3): the leave-one-out AUCs agree to 4 digits in half the sweeps
#: (docs/benchmarks.md, "Default fits")
EP_PATH_TOL = 1e-2
#: the leave-one-out choice of lam scores every LOO_GRID_STRIDE-th grid
#: value, then the neighbours of the best (selection.loo_lambda)
LOO_GRID_STRIDE = 2


class SampledPairsWarning(UserWarning):
    """EP is asked to run where it samples pairs (more than
    :data:`~pac_particles.approx.ep.base.AUTO_MAX_PAIRS`): its sites then
    often have no fixed point, and VB is the method at that size."""


class EP(GaussianMethod):
    """Expectation Propagation (module docstring)."""

    name = "ep"
    summary = "Expectation Propagation: a Gaussian with log-evidence"
    tasks = ("ranking", "classification")
    # auto: GP scores and spike-and-slab priors, which VB does not fit
    auto_order = 2
    evidence_name = "EP's approximation of log Z"

    def refusal(self, options: FitOptions, task: str = "ranking",
                in_memory: bool = True) -> Optional[str]:
        why = super().refusal(options, task, in_memory)
        if (why is None and task == "classification"
                and options.loss != "zero_one"):
            why = (f"method='ep' approximates the 0-1 posterior only, got "
                   f"loss={options.loss!r}: use method='vb' or 'smc'")
        return why

    def approximation(self, problem: GibbsProblem, options: FitOptions,
                      hyper: dict, tol: Optional[float] = None) -> Any:
        if options.kernel is not None:
            return EPGP.from_problem(problem, kernel=hyper["kernel"])
        if options.prior == "spike_slab":
            return EPSpikeSlab.from_problem(problem, p=hyper["p"],
                                            v0=hyper["v0"], v1=hyper["v1"])
        return EPLinear.from_problem(problem, prior_var=hyper["prior_var"])

    def choose_lam(self, problem: GibbsProblem, options: FitOptions,
                   hyper: dict, grid: np.ndarray, X: Any) -> tuple:
        model = self.approximation(problem.at(grid[0]), options, hyper)
        cv, failed, refit = ep_loo_choice(
            model, grid, lambda m: m.loo_auc(), path_tol=EP_PATH_TOL,
            verbose=options.verbose, stride=LOO_GRID_STRIDE)
        return cv, failed, lambda lam: (model, refit(lam))

    def before_fit(self, problem: GibbsProblem, options: FitOptions,
                   lam: float) -> None:
        n_pairs = problem.risk.n_pairs
        if n_pairs > AUTO_MAX_PAIRS:
            # measured: no fixed point at kappa = lam / B near 0.2 (1e6 rows)
            warnings.warn(
                f"EP samples {AUTO_MAX_PAIRS:,} of the {n_pairs:,} pairs here "
                f"(kappa = lam / B = {lam / AUTO_MAX_PAIRS:.3g}), where it "
                "often does not converge: use method='vb' (or 'auto') at "
                "this size", SampledPairsWarning, stacklevel=6)

    def tune_hyperparameters(self, approx: Any, options: FitOptions) -> dict:
        """Maximise EP's evidence over the prior's hyper-parameters (ARD
        variances, spike-and-slab ``p`` and ``v0 / v1``, GP lengthscales) on
        every row. The certificate does not restrict this: the kl bound
        holds for every posterior at once, so ``rho`` may use all the data;
        only the bound's prior must not have seen the rows whose risk it
        uses. A kernel given as a parameter is tuned as a copy."""
        if options.kernel is not None:
            # tune a copy: the kernel given as a parameter stays as it was
            approx.kernel = copy.deepcopy(approx.kernel)
        approx.fit_hyperparameters()
        if isinstance(approx, EPGP):
            return {"kernel": approx.kernel}
        if isinstance(approx, EPSpikeSlab):
            return {"p": float(np.mean(approx.p)),
                    "v0": float(np.mean(approx.v0)),
                    "v1": float(np.mean(approx.v1))}
        return {"prior_var": np.array(approx.prior_var, dtype=float)}

    def loo_score(self, approx: Any, options: FitOptions) -> Optional[float]:
        """EP's leave-one-out AUC under a Gaussian prior (GP included)."""
        return approx.loo_auc() if options.prior == "gaussian" else None

    def fit_classification(self, problem: GibbsProblem, options: FitOptions,
                           X: Any) -> MethodFit:
        fit = MethodFit(posterior=None, lam=options.lam,
                        hyperparameters=options.hyper)
        if options.choose_lam:
            fit.grid = self.grid(options, problem.data.n, problem.task)
            model = EPClassification.from_problem(problem.at(fit.grid[0]),
                                                  prior_var=options.prior_var)
            fit.cv, fit.lam_grid_failures, _ = ep_loo_choice(
                model, fit.grid, EPClassification.loo_accuracy)
            fit.lam = float(fit.cv.best_lam)
        fit.approximation = EPClassification.from_problem(
            problem.at(fit.lam), prior_var=options.prior_var)
        fit.posterior = fit.approximation.fit()
        return fit
