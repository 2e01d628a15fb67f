"""Gaussian variational Bayes as a method of the estimators.

Ranking: :class:`~pac_particles.approx.vb.GaussianVB` (all pairs up to
:data:`~pac_particles.approx.vb.AUTO_PAIRS_ABOVE`, fresh sampled pairs
above), ``lam`` by its leave-one-out AUC (one Newton step from the fit, no
refit) on all pairs with at most :data:`VB_LOO_MAX_FEATURES` features and
:data:`VB_LOO_MAX_ROWS` rows, climbing the grid until the curve falls; on
one stratified held-out split along a warm-started path that stops where
the held-out curve is flat where pairs are sampled (or above
:data:`HOLDOUT_ABOVE_ROWS` rows), the final fit warm-started from it; by
``n_folds`` folds otherwise (more features or rows on all pairs, or a
class too small to hold a fifth out), climbed together along the same
warm-started path until their mean curve is flat within its standard
error (:func:`~pac_particles.sklearn.selection.kfold_path_choice`; below
:data:`KFOLD_PATH_MIN_PAIRS` pairs every grid value is scored, above
:data:`KFOLD_SAMPLE_ABOVE_PAIRS` a fold's fit takes one sample of pairs),
from the value :data:`KFOLD_CLIMB_FROM_PER_FEATURE` places, the final fit
warm-started at the folds' mean fit at the chosen ``lam``; the only method
for rows on a Dask cluster. Classification:
:class:`~pac_particles.approx.classification_vb.ClassificationVB` for every loss, ``lam``
by K-fold accuracy, the folds climbed together as for ranking (every grid
value below :data:`KFOLD_PATH_MIN_PAIRS` positive-negative pairs; on the
held-out path above :data:`HOLDOUT_ABOVE_ROWS` rows).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Optional

import numpy as np

from pac_particles.approx.classification_vb import ClassificationVB
from pac_particles.approx.vb import (AUTO_PAIRS_PER_POINT, GaussianVB,
                                     auto_pairs)
from pac_particles.core.checks import InputError
from pac_particles.core.parallel import concurrent_folds
from pac_particles.problem.problem import GibbsProblem
from pac_particles.sklearn.methods.base import FitOptions, Method, MethodFit
from pac_particles.sklearn.methods.ep import LOO_GRID_STRIDE
from pac_particles.sklearn.methods.gaussian import GaussianMethod
from pac_particles.sklearn.selection import (METRICS, RefitScorer,
                                             cross_validate_lam,
                                             holdout_path_choice,
                                             kfold_path_choice,
                                             vb_loo_choice)

__all__ = ["VB", "VB_CV_TOL", "VB_DECREMENT", "VB_PILOT_ROWS",
           "VB_LOO_MAX_FEATURES", "HOLDOUT_FRACTION", "HOLDOUT_ABOVE_ROWS",
           "HOLDOUT_MIN_MINORITY", "VB_PATH_STEPS", "VB_LOO_PATIENCE",
           "VB_LOO_FLAT_TOL", "KFOLD_PATH_MIN_PAIRS",
           "VB_LOO_MAX_ROWS", "KFOLD_SAMPLE_ABOVE_PAIRS",
           "KFOLD_CLIMB_FROM_PER_FEATURE"]

#: L-BFGS tolerance of the VB fits that choose lam (the final fit: 1e-6):
#: the leave-one-out AUCs agree to 4 digits with those at 1e-3, the same lam
#: (docs/benchmarks.md, "Default fits")
VB_CV_TOL = 1e-2
#: the classifier's L-BFGS fits also stop once the objective's predicted
#: decrease to its optimum is below this many nats: the held-out path's
#: fits that choose lam (the K folds of fewer rows, cheap, keep their
#: gradient tolerance and their choices) and the final fit. Their gradient
#: tolerances on the objective, whose risk term grows with lam ~ n, took
#: dozens of further evaluations for hundredths of a nat at a million
#: rows (docs/benchmarks.md, "The classifier's fits to a precision in
#: nats")
VB_DECREMENT = 1e-2
#: the classifier's cold fits of more than ClassificationVB's PILOT_FACTOR
#: (8) times this many rows (the held-out path's first, a fit at a given
#: lam) start from a fit on an eighth of them (docs/benchmarks.md, "The
#: classifier's fits to a precision in nats")
VB_PILOT_ROWS = 50_000
#: VB chooses ``lam`` by its leave-one-out (O(P d^2) per grid value) up to
#: this many features, by K-fold refits (O(P d) per iteration) above, where
#: the refits became the faster (docs/benchmarks.md, "Default fits")
VB_LOO_MAX_FEATURES = 64
#: ... and up to this many rows: each value the leave-one-out scores is a
#: fit on all ``P`` pairs, and its climb fits more values than the folds'
#: path (which stops at the first flat one), so with more rows on all pairs
#: (a small class: up to a million pairs with 100 positives in 10,000
#: rows) the folds' path is the faster at the same choice
#: (docs/benchmarks.md, "The folds of a small class and Corollary 19 on
#: sampled pairs")
VB_LOO_MAX_ROWS = 2000
#: ``lam="cv"`` scores one stratified held-out split of this fraction
#: instead of ``n_folds`` folds where pairs are sampled or above
#: :data:`HOLDOUT_ABOVE_ROWS` rows (where ``method="auto"`` leaves SMC;
#: classification too), along a path that stops where the held-out curve
#: is flat
#: (:func:`~pac_particles.sklearn.selection.holdout_path_choice`)
HOLDOUT_FRACTION = 0.2
HOLDOUT_ABOVE_ROWS = 2000
#: ... when the smaller class has at least this many members (a fifth of
#: them held out): with fewer the held-out AUC is too noisy to choose on
#: (100 positives in 10,000 rows, d = 100: test AUC 0.004 below the
#: logistic regression's against 0.002 with folds), and K folds use them all
HOLDOUT_MIN_MINORITY = 500
#: the leave-one-out climb stops at the first coarse value that fails to
#: beat the best so far by VB_LOO_FLAT_TOL, once the curve has risen
#: (:class:`~pac_particles.sklearn.selection.leave_one_out.FlatStop`): the
#: values above, whose fits take the most iterations, are not fitted. The
#: tolerance is above the error of the fits at VB_CV_TOL (their
#: leave-one-out is a Newton step from where each stopped:
#: :meth:`~pac_particles.approx.vb.GaussianVB.loo_scores`) and far below
#: the held-out path's, the leave-one-out curve having no split's noise
VB_LOO_PATIENCE = 1
VB_LOO_FLAT_TOL = 1e-4
#: below this many positive-negative pairs the K folds score every grid
#: value (:func:`_kfold_choice`; Colon, 46 training rows:
#: docs/benchmarks.md, "Default fits")
KFOLD_PATH_MIN_PAIRS = 50_000
#: a fold's fit on all pairs (L-BFGS) above this many pairs, with at most
#: :data:`VB_LOO_MAX_FEATURES` features, runs on one sample of
#: :data:`~pac_particles.approx.vb.AUTO_PAIRS_PER_POINT` pairs per member
#: of the larger class instead (:func:`_fold_pairs`; the sample drawn from
#: ``random_state``, the same at every grid value of a fold, so the
#: path's gains stay paired): a quarter of the 650,000 pairs of a fold at
#: 10,000 rows with 100 positives, the same choice on ten draws. Smaller
#: folds keep all pairs (at 3,000 rows with 5 % positives the sample moved
#: one choice of five, for little time), and so do more features, where
#: the all-pairs kernel was the faster (docs/benchmarks.md, "The folds of a
#: small class and Corollary 19 on sampled pairs")
KFOLD_SAMPLE_ABOVE_PAIRS = 500_000
#: the K-fold path of ranking climbs from the largest value it scores at or
#: below this many times the number of features ``d``, not from the grid's
#: smallest: a standardised pair difference has squared norm about ``2 d``,
#: so the probit risk's curvature in the mean matches the prior's only
#: from ``lam`` of the order of ``d``; below it the fits' mean keeps the
#: direction of the risk's gradient at the prior, and the folds' AUC curve
#: is flat (the values skipped stay in the certificate's grid). It moves
#: the start only where ``d`` is above the grid's bottom (``n / 200`` by
#: default): few rows and many features
#: (docs/benchmarks.md, "The K-fold path at small and unbalanced sizes")
KFOLD_CLIMB_FROM_PER_FEATURE = 1.0
#: Adam steps (or L-BFGS iterations) of a fit along the held-out path, each
#: warm-started at the previous one's optimum: the held-out AUC reads the
#: mean's direction only, which a continuation step settles in fewer steps
#: than the stopping rule's minimum of a cold fit (docs/benchmarks.md,
#: "Default fits"); 100 chose as 150 did where 75 did not (the same
#: page, "The folds of a small class and Corollary 19 on sampled pairs")
VB_PATH_STEPS = 100


def _on_holdout_path(data: Any, sampled: bool = False) -> bool:
    """Whether ``lam='cv'`` takes the held-out path on ``data``: above
    :data:`HOLDOUT_ABOVE_ROWS` rows (or on sampled pairs) with at least
    :data:`HOLDOUT_MIN_MINORITY` members of each class."""
    return ((sampled or data.n > HOLDOUT_ABOVE_ROWS)
            and min(data.n_pos, data.n_neg) >= HOLDOUT_MIN_MINORITY)


def _on_loo(data: Any, sampled: bool) -> bool:
    """Whether ``lam='cv'`` of ranking takes VB's leave-one-out."""
    return (data.d <= VB_LOO_MAX_FEATURES and data.n <= VB_LOO_MAX_ROWS
            and not sampled)


def _fold_pairs(data: Any) -> dict:
    """The pairs of a K-fold path's fit on ``data`` (a fold's training
    part), as keyword arguments of :meth:`VB.approximation`: one sample of
    :data:`~pac_particles.approx.vb.AUTO_PAIRS_PER_POINT` pairs per member
    of the larger class, fitted by L-BFGS, where all pairs number more than
    :data:`KFOLD_SAMPLE_ABOVE_PAIRS` with at most
    :data:`VB_LOO_MAX_FEATURES` features; else ``n_pairs="auto"``."""
    if (data.d > VB_LOO_MAX_FEATURES
            or data.n_pos * data.n_neg <= KFOLD_SAMPLE_ABOVE_PAIRS
            or auto_pairs(data.n_pos, data.n_neg) is not None):
        return {}
    return dict(n_pairs=AUTO_PAIRS_PER_POINT * max(data.n_pos, data.n_neg),
                resample=False)


def _kfold_choice(X: Any, data: Any, grid: np.ndarray, make: Any,
                  options: FitOptions, metric: str,
                  climb_from: Optional[float] = None,
                  return_start: bool = False) -> Any:
    """``lam`` by ``n_folds`` folds of ``make``'s fits under ``metric``:
    climbed together along the warm-started grid until their mean curve is
    flat (:func:`~pac_particles.sklearn.selection.kfold_path_choice`), or
    every grid value below :data:`KFOLD_PATH_MIN_PAIRS` positive-negative
    pairs, where the refits are cheap and the paired test that ends the
    climb has too few validation rows to trust (each fold along the whole
    grid, warm-started, in one job); concurrent folds share the cores.
    ``climb_from`` and ``return_start``: the path's
    (:func:`~pac_particles.sklearn.selection.kfold_path_choice`; the start
    None where every value is scored). The folds run in this process, one
    after another, unless ``n_jobs`` is given: each fit's kernels use every
    core already, and worker processes would first have to start and load
    them, seconds on a process's first fit for warm fits no faster
    (docs/benchmarks.md, "The classifier at large n and VB's folds in
    process")."""
    jobs, threads = concurrent_folds(
        options.n_folds, 1 if options.n_jobs is None else options.n_jobs)
    if data.n_pos * data.n_neg < KFOLD_PATH_MIN_PAIRS:
        cv = cross_validate_lam(
            X, data.y, grid,
            RefitScorer(make, warm_start=True, threads=threads,
                        metric=metric, verbose=options.verbose),
            n_folds=options.n_folds, seed=options.random_state, n_jobs=jobs,
            verbose=options.verbose)
        return (cv, None) if return_start else cv
    return kfold_path_choice(X, data.y, grid, make, n_folds=options.n_folds,
                             seed=options.random_state, metric=metric,
                             stride=LOO_GRID_STRIDE, n_jobs=jobs,
                             threads=threads, verbose=options.verbose,
                             climb_from=climb_from, return_start=return_start)


class VB(GaussianMethod):
    """Gaussian variational Bayes (module docstring)."""

    name = "vb"
    summary = "Gaussian variational Bayes: the fastest, any size, Dask"
    tasks = ("ranking", "classification")
    auto_order = 1
    evidence_name = "a lower bound on log Z (ELBO)"

    def refusal(self, options: FitOptions, task: str = "ranking",
                in_memory: bool = True) -> Optional[str]:
        if task not in self.tasks:
            return Method.refusal(self, options, task, in_memory)
        if task == "ranking" and not options.linear_gaussian:
            return ("method='vb' supports the linear Gaussian prior only; use "
                    "'smc' or 'ep' for GP kernels and spike-and-slab priors")
        return None

    def approximation(self, problem: GibbsProblem, options: FitOptions,
                      hyper: dict, tol: Optional[float] = None,
                      max_iter: Optional[int] = None, n_pairs: Any = "auto",
                      resample: bool = True) -> Any:
        return GaussianVB.from_problem(
            problem, prior_var=options.prior_var, family=options.vb_family,
            seed=options.random_state, n_pairs=n_pairs, resample=resample,
            tol=1e-6 if tol is None else tol, max_iter=max_iter)

    def choose_lam(self, problem: GibbsProblem, options: FitOptions,
                   hyper: dict, grid: np.ndarray, X: Any) -> tuple:
        data = problem.data
        sampled = auto_pairs(data.n_pos, data.n_neg) is not None
        if _on_loo(data, sampled):
            # the climb stops where the leave-one-out curve is flat: the
            # fits above it, the costliest, are not made
            cv, failed, path_fit = vb_loo_choice(
                lambda lam: self.approximation(problem.at(lam), options,
                                               hyper, tol=VB_CV_TOL),
                grid, verbose=options.verbose, stride=LOO_GRID_STRIDE,
                patience=VB_LOO_PATIENCE, tol=VB_LOO_FLAT_TOL)
            return cv, failed, self._polish(problem, options, hyper,
                                            path_fit)

        # the parts' fits read the options without the certified rule,
        # which holds the whole problem: a fold's maker goes to a worker
        # process at every grid value
        part_options = dataclasses.replace(options, step_rule=None)

        def part(X_tr, y_tr, lam):
            # a part's own problem (its rows standardised alone)
            return GibbsProblem.ranking(X_tr, y_tr, lam,
                                        part_options.standardize,
                                        part_options.pu_prior)

        def make(X_tr, y_tr, lam):
            # a fold's fit is warm-started along the path: on sampled pairs
            # (Adam) it takes the path's steps, not the cold stopping rule
            fold = part(X_tr, y_tr, lam)
            return self.approximation(fold, part_options, hyper,
                                      tol=VB_CV_TOL, max_iter=VB_PATH_STEPS,
                                      **_fold_pairs(fold.data))
        if _on_holdout_path(data, sampled):
            # a fit on sampled pairs costs the same at every n, so K refits
            # per grid value would cost K fits each: one held-out split,
            # climbed until its curve is flat
            last: list = []

            def make_on_path(train, y_tr, lam):
                # every value of the path refits the same training part
                # (``train``: its rows' indices): its problem is set up
                # once, from the validated rows where they are in memory
                # (no copy of the raw rows)
                if not (last and last[0] is train):
                    if data.in_memory and len(X) == data.n:
                        mask = np.zeros(data.n, dtype=bool)
                        mask[train] = True
                        fold = problem.part(mask)
                    else:
                        fold = part(X[train], y_tr, lam)
                    last[:] = [train, fold]
                return self.approximation(last[1].at(lam), options, hyper,
                                          tol=VB_CV_TOL,
                                          max_iter=VB_PATH_STEPS)
            cv, path_fit = holdout_path_choice(
                X, data.y, grid, make_on_path, holdout=HOLDOUT_FRACTION,
                seed=options.random_state, stride=LOO_GRID_STRIDE,
                verbose=options.verbose, by_index=True)
            # the final fit, warm-started at the path's fit at the chosen
            # lam, stops by the noise rule of its many coordinates
            # (approx.variational.stop_threshold)
            return cv, np.empty(0), self._polish(problem, options, hyper,
                                                 path_fit)
        # many features, or many rows with a small class: K folds, the
        # final fit warm-started at their mean fit at the chosen lam (each
        # fold standardised on its own rows: close scales, a start only)
        cv, start = _kfold_choice(
            X, data, grid, make, options, "auc", return_start=True,
            climb_from=KFOLD_CLIMB_FROM_PER_FEATURE * data.d)
        return cv, np.empty(0), (None if start is None else self._polish(
            problem, options, hyper, lambda lam: start))

    def _polish(self, problem: GibbsProblem, options: FitOptions,
                hyper: dict, path_fit: Any) -> Any:
        """``polish(lam)``: the final fit on every row at the final
        tolerance (Adam on sampled pairs: until its noise rule passes),
        warm-started at the path's fit at ``lam``."""
        def polish(lam):
            final = self.approximation(problem.at(lam), options, hyper)
            return final, final.fit(init=path_fit(lam))
        return polish

    def loo_score(self, approx: Any, options: FitOptions) -> Optional[float]:
        """VB's leave-one-out AUC on all pairs (None on sampled pairs, or
        where its Hessian is not positive definite)."""
        if approx.n_pairs is not None:
            return None
        try:
            return approx.loo_auc()
        except InputError:         # no minimum in the mean: no LOO
            return None

    def fit_classification(self, problem: GibbsProblem, options: FitOptions,
                           X: Any) -> MethodFit:
        fit = MethodFit(posterior=None, lam=options.lam,
                        hyperparameters=options.hyper)
        if options.choose_lam:
            fit.grid = self.grid(options, problem.data.n, problem.task)

            last: list = []

            def fitter(part, lam, decrement_tol=None):
                # at VB_CV_TOL, as for ranking: the same choices as at the
                # final fit's tolerance (docs/benchmarks.md, "The
                # classifier at large n and VB's folds in process")
                return ClassificationVB.from_problem(
                    part.at(lam), prior_var=options.prior_var,
                    family=options.vb_family, tol=VB_CV_TOL,
                    decrement_tol=decrement_tol, pilot_rows=VB_PILOT_ROWS,
                    seed=options.random_state)

            def make(X_tr, y_tr, lam):
                # a fold's refits along the grid share its problem, set up
                # once (another fold's rows, a new array, anew)
                if not (last and last[0] is X_tr):
                    last[:] = [X_tr, GibbsProblem.classification(
                        X_tr, y_tr, lam, options.loss, options.standardize,
                        options.fit_intercept, options.pu_prior)]
                return fitter(last[1], lam)

            def make_on_path(train, y_tr, lam):
                # the held-out path refits the same training part: taken
                # once from the validated rows (``train``: their indices),
                # on their scale, so that the held-out rows are scored as
                # they are (score_held_out)
                if not last:
                    mask = np.zeros(problem.data.n, dtype=bool)
                    mask[train] = True
                    last[:] = [train, problem.part(mask, own_scale=False)]
                return fitter(last[1], lam, VB_DECREMENT)

            held_out: list = []

            def score_held_out(approx, val):
                # the held-out rows of the validated design, gathered once
                if not held_out:
                    held_out[:] = [np.take(problem.data.X, val, axis=0),
                                   problem.data.y[val]]
                return METRICS["accuracy"](
                    approx.design_probability(held_out[0]), held_out[1])
            data = problem.data
            if _on_holdout_path(data):
                # K refits per grid value would cost K fits each
                fit.cv, path_fit = holdout_path_choice(
                    X, data.y, fit.grid, make_on_path, metric="accuracy",
                    holdout=HOLDOUT_FRACTION, seed=options.random_state,
                    stride=LOO_GRID_STRIDE, verbose=options.verbose,
                    by_index=True, score=score_held_out)
            else:
                fit.cv, start = _kfold_choice(X, data, fit.grid, make,
                                              options, "accuracy",
                                              return_start=True)
                path_fit = None if start is None else (lambda lam: start)
            fit.lam = float(fit.cv.best_lam)
        fit.approximation = ClassificationVB.from_problem(
            problem.at(fit.lam), prior_var=options.prior_var,
            family=options.vb_family, decrement_tol=VB_DECREMENT,
            pilot_rows=VB_PILOT_ROWS, seed=options.random_state)
        # warm-started, as for ranking, at the path's fit at the chosen lam
        # (the held-out part's, or the folds' mean)
        fit.posterior = fit.approximation.fit(
            init=None if not options.choose_lam or path_fit is None
            else path_fit(fit.lam))
        return fit
