"""What the Gaussian approximations (EP, VB) share as methods of the estimators.

A Gaussian method builds its model on the fit's problem
(:meth:`GaussianMethod.approximation`), chooses ``lam`` along the grid by
its own rule (:meth:`GaussianMethod.choose_lam`: a leave-one-out score
without refits, or K-fold refits) and polishes the grid path's model at the
chosen ``lam``; the leave-one-out along the grid, the polish and the final
fit keep one factor of the prior scores
(:func:`~pac_particles.approx.loo.reused_partner_products`).
Classification refits ``lam`` on folds by accuracy unless the method scores
the grid by its own leave-one-out.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from pac_particles.approx.loo import reused_partner_products
from pac_particles.core.progress import Progress
from pac_particles.problem.problem import GibbsProblem
from pac_particles.sklearn.methods.base import FitOptions, Method, MethodFit

__all__ = ["GaussianMethod"]


class GaussianMethod(Method):
    """Base of EP and VB as methods (module docstring)."""

    def approximation(self, problem: GibbsProblem, options: FitOptions,
                      hyper: dict, tol: Optional[float] = None) -> Any:
        """The unfitted model of the options' prior on ``problem`` (``tol``:
        a looser tolerance for the fits along the grid)."""
        raise NotImplementedError

    def choose_lam(self, problem: GibbsProblem, options: FitOptions,
                   hyper: dict, grid: np.ndarray, X: Any) -> tuple:
        """``(cv, failures, polish)`` of the choice of ``lam`` on ``grid``;
        ``polish(lam) -> (model, result)`` refits at the final tolerance
        from the path's fit (None: refit from scratch)."""
        raise NotImplementedError

    def tune_hyperparameters(self, approx: Any, options: FitOptions) -> dict:
        """``hyperparameters='evidence'``: tune the prior on every row and
        return them, the model left at them (default: keep them)."""
        return options.hyper

    def loo_score(self, approx: Any, options: FitOptions) -> Optional[float]:
        """The leave-one-out AUC of the final fit, or None."""
        return None

    def before_fit(self, problem: GibbsProblem, options: FitOptions,
                   lam: float) -> None:
        """A warning about the fit to come (default: none)."""

    def fit_ranking(self, problem: GibbsProblem, options: FitOptions,
                    X: Any) -> MethodFit:
        with reused_partner_products():
            return self._fit_ranking(problem, options, X)

    def _fit_ranking(self, problem: GibbsProblem, options: FitOptions,
                     X: Any) -> MethodFit:
        hyper = options.hyper
        fit = MethodFit(posterior=None, lam=None, hyperparameters=hyper)
        polish: Optional[Callable] = None
        if options.choose_lam:
            fit.grid = self.grid(options, problem.data.n, problem.task)
            self.before_fit(problem, options, fit.grid[-1])
            fit.cv, fit.lam_grid_failures, polish = self.choose_lam(
                problem, options, hyper, fit.grid, X)
            fit.lam = float(fit.cv.best_lam)
        else:
            fit.lam = options.given_lam()
            self.before_fit(problem, options, fit.lam)
        evidence = options.hyperparameters == "evidence"
        with Progress(options.verbose, total=1, desc="final fit",
                      unit="fit") as progress:
            if polish is not None and not evidence:
                # the grid path's model: polish it at the chosen lam
                fit.approximation, fit.posterior = polish(fit.lam)
            else:
                fit.approximation = self.approximation(problem.at(fit.lam),
                                                       options, hyper)
                if evidence:
                    fit.hyperparameters = self.tune_hyperparameters(
                        fit.approximation, options)
                fit.posterior = fit.approximation.fit()
            progress.update(advance=1, text=(
                f"{self.name.upper()} fit at lam = {fit.lam:.4g} on "
                f"{problem.data.n:,} rows done ({progress.elapsed:.1f} s)"))
        self.check_usable(fit)
        # after K-fold refits (more than one row of scores, or no path to
        # polish) the folds' mean AUC at lam is the held-out AUC, and the
        # final fit's leave-one-out would cost O(n d^3) where the folds
        # were chosen for many features
        by_folds = options.choose_lam and (polish is None
                                           or len(fit.cv.fold_auc) > 1)
        if not by_folds:
            fit.loo_score = self.loo_score(fit.approximation, options)
        return fit

    def scores(self, fit: MethodFit, X: np.ndarray,
               point: str = "mean") -> np.ndarray:
        """A GP's predictive mean at new rows, else the mean's scores."""
        if fit.posterior.is_gp:
            return fit.approximation.predict(X)
        return super().scores(fit, X, point)

    def positive_probability(self, fit: MethodFit,
                             X: np.ndarray) -> np.ndarray:
        """``Phi(x m / sqrt(x S x))``: the Gaussian's predictive."""
        return fit.approximation.predict_proba(X)
