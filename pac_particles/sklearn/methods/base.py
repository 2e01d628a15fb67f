"""What a method of the estimators is: the protocol, its options and its fit.

A method (SMC, EP, VB, ...) is an object with a small interface, found in
the registry (:mod:`pac_particles.sklearn.methods`) by the name a user
passes; the estimators, the command line and the certificates ask the
object, never compare its name. A :class:`Method` says what it supports
(:meth:`Method.refusal`), fits a
:class:`~pac_particles.problem.problem.GibbsProblem` of either task with
``lam`` given or chosen (:meth:`Method.fit_ranking`,
:meth:`Method.fit_classification`, returning a :class:`MethodFit` that
:meth:`Method.checked` checks)
and scores new rows of its fit (:meth:`Method.scores`,
:meth:`Method.positive_probability`). What the fit needs from the
estimator's parameters travels in one frozen :class:`FitOptions`, built once
per fit: a method never reads the estimator.

Adding a method is one module with a :class:`Method` subclass and one line
that registers it (:func:`pac_particles.sklearn.methods.register`).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable, ClassVar, Optional

import numpy as np

from pac_particles.core.checks import InputError
from pac_particles.problem.problem import GibbsProblem
from pac_particles.sklearn.selection import default_lam_max, lam_grid

__all__ = ["FitOptions", "MethodFit", "Method"]


@dataclasses.dataclass(frozen=True)
class FitOptions:
    """The estimator's parameters as a fit reads them, fixed for the fit.

    ``lam`` is None when it is chosen (``lam="cv"``); ``hyper`` the prior's
    hyper-parameters as given
    (:func:`~pac_particles.problem.problem.prior_hyperparameters`);
    ``step_rule`` the certified choice of a tempering step (SMC's
    ``cv_rule="certified"``), a function of the cross-validation result
    returning the chosen step, or None for the best validation AUC.
    """

    lam: Optional[float] = None
    lam_max: Optional[float] = None
    grid_size: Optional[int] = None
    grid_decades: float = 3.0
    n_folds: int = 5
    hyper: dict = dataclasses.field(default_factory=dict)
    hyperparameters: str = "fixed"
    kernel: Any = None
    prior: str = "gaussian"
    loss: str = "auc"
    prior_var: Any = 1.0
    vb_family: str = "diagonal"
    point: str = "bayes_point"
    standardize: bool = True
    fit_intercept: bool = True
    n_particles: int = 100
    len_chain: int = 10
    ess_rmin: float = 0.5
    fold_particles: Optional[int] = None
    fold_len_chain: Optional[int] = None
    move: Any = None
    chains: int = 1
    pu_prior: Optional[float] = None
    eps: float = 0.05
    random_state: Optional[int] = None
    n_jobs: Optional[int] = None
    verbose: Any = False
    backend: str = "numba"
    step_rule: Optional[Callable] = None

    @property
    def choose_lam(self) -> bool:
        """Whether ``lam`` is chosen (``lam="cv"``)."""
        return self.lam is None

    def given_lam(self) -> float:
        """The ``lam`` given (InputError when it is to be chosen)."""
        if self.lam is None:
            raise InputError("lam is chosen here (lam='cv'), not given")
        return float(self.lam)

    @property
    def linear_gaussian(self) -> bool:
        """Linear scores under the Gaussian prior."""
        return self.kernel is None and self.prior == "gaussian"


@dataclasses.dataclass
class MethodFit:
    """What a method's fit returns: the fitted posterior (a
    :class:`~pac_particles.core.posterior_result.PosteriorResult`) at
    ``lam`` and how it was chosen.

    ``grid`` is the grid fixed in advance that ``lam`` was chosen on (None
    for a ``lam`` given); ``approximation`` the fitted EP or VB model (None
    for a sampler); ``posteriors`` every independent run at ``lam`` (the
    chains of an export; ``[posterior]`` for a single fit); ``bound`` the
    dissertation's Corollary 19 where the method computes it during the fit.
    """

    # None until the method has fitted them
    posterior: Any
    lam: Any
    hyperparameters: dict
    grid: Optional[np.ndarray] = None
    cv: Any = None
    posteriors: Optional[list] = None
    approximation: Any = None
    bound: Any = None
    evidence_grid: Any = None
    lam_grid_failures: np.ndarray = dataclasses.field(
        default_factory=lambda: np.empty(0))
    #: the leave-one-out AUC (or accuracy) at ``lam`` (None: none)
    loo_score: Optional[float] = None


class Method:
    """Base of the methods (module docstring).

    A subclass sets :attr:`name`, :attr:`tasks` and the class attributes
    of ``method="auto"``, and implements :meth:`fit_ranking` and (if it
    supports classification) :meth:`fit_classification`; it overrides
    :meth:`refusal` for what it does not support.
    """

    #: the name a user passes (``method=...``, ``--method``)
    name: ClassVar[str] = ""
    #: one line for listings (the command line's help)
    summary: ClassVar[str] = ""
    #: the tasks it fits: ``"ranking"``, ``"classification"``
    tasks: ClassVar[tuple] = ("ranking",)
    #: ``method="auto"`` tries the methods by increasing ``auto_order`` and
    #: takes the first that supports the fit and has at least as many rows
    #: allowed as the data have (None: never chosen by ``auto``)
    auto_order: ClassVar[Optional[int]] = None
    auto_max_rows: ClassVar[float] = math.inf
    #: per task, where it differs from :attr:`auto_max_rows`
    auto_max_rows_by_task: ClassVar[dict] = {}
    #: size of the ``lam`` grid when the estimator leaves ``grid_size`` None
    default_grid_size: ClassVar[int] = 13
    #: a Monte Carlo method: its results carry standard errors and its
    #: certificate pays a confidence bound on ``log Z``
    monte_carlo: ClassVar[bool] = False
    #: the evidence ``log_evidence`` estimates, in words (reports)
    evidence_name: ClassVar[str] = "log Z"
    #: where ``lam='cv'`` scores the grid: along each fold's tempering path
    #: (``"path"``) or at each grid value (``"grid"``); for plots
    lam_search: ClassVar[str] = "grid"

    def refusal(self, options: FitOptions, task: str = "ranking",
                in_memory: bool = True) -> Optional[str]:
        """Why this method cannot fit ``options`` on ``task`` (None: it
        can): the sentence of an :class:`InputError`, which says what to
        pass instead."""
        if task not in self.tasks:
            return f"method={self.name!r} does not fit {task}"
        if not in_memory:
            return (f"method={self.name!r} needs the rows in memory (a Dask "
                    "collection is fitted by method='vb')")
        return None

    def auto_rows(self, task: str = "ranking") -> float:
        """The most rows ``method="auto"`` gives this method on ``task``."""
        return self.auto_max_rows_by_task.get(task, self.auto_max_rows)

    def check(self, options: FitOptions, task: str = "ranking",
              in_memory: bool = True) -> None:
        """Raise :class:`InputError` with :meth:`refusal`'s sentence."""
        why = self.refusal(options, task, in_memory)
        if why is not None:
            raise InputError(why)

    def grid_size(self, options: FitOptions) -> int:
        """The size of the ``lam`` grid: the option, else the method's."""
        return (self.default_grid_size if options.grid_size is None
                else int(options.grid_size))

    def grid(self, options: FitOptions, n: int,
             task: str = "ranking") -> np.ndarray:
        """The grid of ``lam='cv'``, fixed before seeing the data: up to
        ``lam_max`` (default from the ``task`` and the number of rows
        ``n``, all it depends on)."""
        lam_max = (options.lam_max if options.lam_max is not None
                   else default_lam_max(n, task))
        return lam_grid(lam_max, self.grid_size(options),
                        options.grid_decades)

    def checked(self, fit: MethodFit) -> MethodFit:
        """``fit``, the method's own fit of a problem (:meth:`fit_ranking`,
        :meth:`fit_classification`), with every independent run listed
        (``posteriors``: ``[posterior]`` for a single fit), after
        :meth:`check_usable`."""
        if fit.posteriors is None:
            fit.posteriors = [fit.posterior]
        self.check_usable(fit)
        return fit

    def check_usable(self, fit: MethodFit) -> None:
        """Raise :class:`InputError` where the fitted posterior collapsed
        (its protocol's ``degenerate``): nothing of it is usable."""
        if fit.posterior.degenerate:
            raise InputError(
                f"{self.name.upper()} failed at lam = {fit.lam:.4g}: the "
                "approximation collapsed (see the warning); use a smaller "
                "lam, lam='cv' or method='smc'")

    def fit_ranking(self, problem: GibbsProblem, options: FitOptions,
                    X: Optional[np.ndarray]) -> MethodFit:
        """Fit the posterior of a ranking ``problem``, the fit's own, set up
        once (at ``options.lam``, or at the ``lam`` chosen on :meth:`grid`);
        ``X`` the raw rows the folds of ``lam='cv'`` split. The estimator
        checks the method first (:func:`~pac_particles.sklearn.methods.choose_method`)
        and the fit after (:meth:`checked`)."""
        raise NotImplementedError

    def fit_classification(self, problem: GibbsProblem, options: FitOptions,
                           X: Optional[np.ndarray]) -> MethodFit:
        """Fit a classification problem (as :meth:`fit_ranking`)."""
        raise NotImplementedError

    def scores(self, fit: MethodFit, X: np.ndarray,
               point: str = "mean") -> np.ndarray:
        """Scores of new raw rows ``X`` under the fit: the linear score of
        the point estimate (a GP's predictive mean is the method's own)."""
        post = fit.posterior
        theta = post.linear_coefficients(post.point_estimate(point))
        return post.data.transform(X) @ theta

    def positive_probability(self, fit: MethodFit,
                             X: np.ndarray) -> np.ndarray:
        """``P(x . theta > 0)`` of the randomised classifier at new raw rows
        (classification)."""
        raise NotImplementedError

    def __repr__(self):
        return f"<method {self.name!r}>"

    def __reduce__(self):
        # a method is a registered singleton: a pickle names it
        from pac_particles.sklearn.methods import get_method
        return (get_method, (self.name,))
