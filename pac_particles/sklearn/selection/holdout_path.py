"""Choosing ``lam`` along a warm-started path that stops where the
validation curve is flat: on one held-out split or on K folds
(:mod:`pac_particles.sklearn.selection`).

:func:`holdout_path_choice` fits the training part of one stratified split
(:func:`~pac_particles.sklearn.selection.folds.holdout_split`) at every
``stride``-th value of the grid, from small to large ``lam``, each fit
warm-started at the previous optimum (a continuation along the path of
Gibbs posteriors), and scores the held-out part. It stops climbing as soon
as the curve is flat or falling: when the last ``patience`` values scored
each failed to beat the best so far by :data:`FLAT_TOL`.

:func:`kfold_path_choice` climbs the same way on the ``K`` stratified folds
at once (:func:`~pac_particles.sklearn.selection.folds.stratified_folds`),
each fold warm-started at its own previous fit, and reads the mean curve
over the folds: a value improves on the best so far when its mean gain
exceeds both :data:`FLAT_TOL` and its standard error over the folds (the
gains are paired: the same validation rows at both values, so the folds'
levels cancel). A value whose gains are below :data:`FLAT_TOL` in root
mean square counts neither way: at the bottom of the grid,
where the prior dominates, the fits barely move and the curve can be flat
there before it rises. The climb stops once ``patience`` values since the
last improvement were flat or falling. With ``climb_from`` the climb
starts at the largest of its values at or below it instead of the
smallest (for a caller that knows the values below leave the fits'
direction where the prior puts it, their curve flat); with
``return_start`` it also returns the folds' mean of their fits at the
chosen value, a warm start for the final fit on every row.

Either way the choice is the best value scored; the values the rule
skipped stay in the grid fixed in advance, so a certificate at the chosen
``lam`` still pays the union bound over the whole grid.

The held-out rule costs a few fits where a K-fold cross-validation costs
``K`` per grid value: the default of Gaussian VB where it samples pairs,
whose fits cost the same at every ``n``; the K-fold path is its default
where neither its leave-one-out (all pairs, few features) nor one held-out
part (many rows, enough of each class) applies (docs/user_guide.md,
"Which method when").

Example
-------
::

    from pac_particles.approx.vb import GaussianVB
    from pac_particles.sklearn.selection import kfold_path_choice, lam_grid
    cv = kfold_path_choice(
        X, y, lam_grid(5.0 * len(y), 13),
        lambda X_tr, y_tr, lam: GaussianVB(X_tr, y_tr, lam=lam,
                                           family="diagonal", tol=1e-2),
        n_folds=5, seed=0)
    cv.best_lam, cv.grid          # the choice, the values scored
"""

from types import SimpleNamespace
from typing import Callable, Optional

import numpy as np
from joblib import Parallel, delayed

from pac_particles.core.checks import (check_choice, check_count,
                                      check_positive)
from pac_particles.core.parallel import limited_threads
from pac_particles.core.posterior_result import start_moments
from pac_particles.core.progress import Progress
from pac_particles.problem.data import binary_labels
from pac_particles.sklearn.selection.folds import (holdout_split, on_grid,
                                                   stratified_folds)
from pac_particles.sklearn.selection.leave_one_out import (FLAT_TOL, FlatStop,
                                                           coarse_indices)
from pac_particles.sklearn.selection.scorers import METRICS

__all__ = ["FLAT_TOL", "UNCHANGED_DECADES", "holdout_path_choice",
           "paired_step", "kfold_path_choice"]


#: the K folds' climb stops once the values in a row whose gains all
#: counted neither way (:func:`paired_step` None) span this many decades of
#: ``lam``: at the bottom of the grid the prior holds the fits for part of
#: a decade before the curve rises, but a curve unmoved across a decade is
#: one no value moves -- the 0-1 loss's fold accuracy with 1 % positives,
#: the base rate at every value, whose climb otherwise fitted the whole
#: grid (docs/benchmarks.md, "The classifier's accuracy and its ranking")
UNCHANGED_DECADES = 1.0


def _held_out(approx, X_val, y_val, metric):
    scores = (approx.predict(X_val) if metric == "auc"
              else approx.predict_proba(X_val))
    return float(METRICS[metric](scores, y_val))


def holdout_path_choice(X: np.ndarray, y: np.ndarray, grid: np.ndarray,
                        make: Callable, metric: str = "auc",
                        holdout: float = 0.2, seed: Optional[int] = None,
                        stride: int = 2, patience: int = 1,
                        tol: float = FLAT_TOL, verbose=False,
                        by_index: bool = False,
                        score: Optional[Callable] = None):
    """Choose ``lam`` on ``grid`` on one held-out split, along a
    warm-started path with an early stop (module docstring).

    Parameters
    ----------
    X, y : raw rows and binary labels.
    grid : (G,) increasing candidate values, fixed in advance.
    make : callable
        ``make(X_train, y_train, lam)`` returns an unfitted approximation
        with ``fit(init=None)`` and ``predict(X_new)`` (``predict_proba``
        for ``metric="accuracy"``), as for
        :class:`~pac_particles.sklearn.selection.scorers.RefitScorer`;
        with ``by_index``, ``make(train, y_train, lam)``.
    metric : {'auc', 'accuracy'}
    holdout : float in (0, 1), the fraction of each class held out.
    seed : int, optional; the split.
    stride : int >= 1, score every ``stride``-th grid value (and the last).
    patience : int >= 1, scored values without an improvement of ``tol``
        over the best so far after which the climb stops.
    tol : float >= 0, the improvement that counts.
    verbose : bool or str, one progress line (or bar step) per grid value
        (:mod:`pac_particles.core.progress`).
    by_index : bool, hand ``make`` the training rows' indices into ``X``
        (increasing) instead of a copy of the rows: for a maker that takes
        its part from rows it holds already.
    score : callable, optional
        ``score(approx, val)``: the held-out ``metric`` of a fit on the rows
        ``val`` (their indices, increasing), read from rows the caller
        holds (with ``by_index``): no copy of the raw held-out rows is
        made. Default: the metric of ``approx``'s predictions on
        ``X[val]``.

    Returns
    -------
    cv : :class:`~pac_particles.sklearn.selection.folds.LamCVResult` on the
        values scored (one row).
    path_fit : callable, ``lam -> result``, the training part's fit at a
        value scored (a warm start for the final fit on every row).
    """
    grid = np.asarray(grid, dtype=float)
    metric = check_choice(metric, "metric", tuple(METRICS))
    stride = check_count(stride, "stride")
    positives = binary_labels(y)
    train, val = holdout_split(positives, holdout, seed)
    X_tr = train if by_index else X[train]
    y_tr = positives[train]
    if score is None:
        # the predictions on a copy of the held-out rows
        X_val, y_val = X[val], positives[val]

        def score(approx, _):
            return _held_out(approx, X_val, y_val, metric)
    order = coarse_indices(grid.size, stride)
    scored, fits = {}, {}
    stop, previous = FlatStop(patience, tol), None
    with Progress(verbose, total=len(order), desc="lam grid (held out)",
                  unit="lam") as progress:
        for position, k in enumerate(order):
            approx = make(X_tr, y_tr, grid[k])
            previous = fits[k] = approx.fit(init=previous)
            value = scored[k] = score(approx, val)
            progress.update(advance=1, text=(
                f"lam {position + 1}/{len(order)} = {grid[k]:.4g}: held-out "
                f"{metric} {value:.4f} ({progress.elapsed:.1f} s)"))
            if stop.flat_after(value):
                break
    kept = np.array(sorted(scored), dtype=int)
    values = np.array([scored[k] for k in kept])
    cv = on_grid(grid[kept], [(grid[kept], values)])
    by_lam = {float(grid[k]): fits[k] for k in kept}
    return cv, lambda lam: by_lam[float(lam)]


def paired_step(best: np.ndarray, new: np.ndarray,
                tol: float = FLAT_TOL) -> Optional[bool]:
    """How the folds' scores ``new`` at a larger ``lam`` compare with the
    best value's ``best`` (both (K,), the same folds): True where the mean
    gain exceeds ``tol`` and its standard error over the folds (an
    improvement), None where the gains are below ``tol`` in root mean
    square (the fits did not change: neither better nor flat), False
    otherwise (flat or falling)."""
    gain = np.asarray(new, dtype=float) - np.asarray(best, dtype=float)
    se = gain.std(ddof=1) / np.sqrt(gain.size) if gain.size > 1 else 0.0
    if gain.mean() > max(tol, se):
        return True
    if np.sqrt(np.mean(gain ** 2)) < tol:
        return None
    return False


def _fold_step(make, X, positives, train, val, lam, init, metric, threads):
    """One fold's fit at ``lam`` from ``init`` (its previous fit's mean and
    covariance, or None) and its validation score; returns ``(score,
    start)``, the start of its next fit (small: a worker sends it back)."""
    with limited_threads(threads):
        approx = make(X[train], positives[train], lam)
        fitted = approx.fit(init=init)
        score = _held_out(approx, X[val], positives[val], metric)
    mean, cov = start_moments(fitted)
    return score, SimpleNamespace(mean=mean, cov=cov)


def kfold_path_choice(X: np.ndarray, y: np.ndarray, grid: np.ndarray,
                      make: Callable, n_folds: int = 5,
                      seed: Optional[int] = None, metric: str = "auc",
                      stride: int = 2, patience: int = 1,
                      tol: float = FLAT_TOL, n_jobs: int = 1,
                      threads: Optional[int] = None, verbose=False,
                      climb_from: Optional[float] = None,
                      unchanged_decades: Optional[float] = UNCHANGED_DECADES,
                      return_start: bool = False):
    """Choose ``lam`` on ``grid`` by ``n_folds`` stratified folds climbed
    together along a warm-started path, stopping where the mean curve over
    the folds is flat within its standard error (module docstring,
    :func:`paired_step`).

    Parameters
    ----------
    X, y : raw rows and binary labels.
    grid : (G,) increasing candidate values, fixed in advance.
    make : callable, ``make(X_train, y_train, lam)`` as for
        :func:`holdout_path_choice`; each fold's fit starts at its own
        previous fit's mean and covariance (``fit(init=...)``).
    n_folds : int >= 2, stratified folds (fewer, with a warning, for a
        small class: :func:`~pac_particles.sklearn.selection.folds.fold_count`).
    seed : int, optional; the split.
    metric : {'auc', 'accuracy'}
    stride : int >= 1, score every ``stride``-th grid value (and the last).
    patience : int >= 1, values in a row that were flat or falling after
        which the climb stops.
    tol : float >= 0, the mean gain that counts, and the root mean square
        of the gains below which a value counts neither way.
    n_jobs : int, the folds of one grid value in parallel through joblib
        (the workers are kept along the path).
    threads : int, optional; numba and BLAS threads of each fold's fit.
    verbose : bool or str, one progress line (or bar step) per grid value
        (:mod:`pac_particles.core.progress`).
    unchanged_decades : float > 0 or None, the climb stops once the values
        in a row that counted neither way (the folds' scores did not move)
        span this many decades of ``lam`` from the value before them; None:
        never (default :data:`UNCHANGED_DECADES`).
    climb_from : float, optional; the climb starts at the largest value it
        scores at or below this one (default: the smallest).
    return_start : bool, also return the folds' mean fit at ``best_lam``.

    Returns
    -------
    cv : :class:`~pac_particles.sklearn.selection.folds.LamCVResult` on the
        values scored (one row per fold; ``best_lam`` the highest mean).
    start : with ``return_start``, the folds' mean of their fits' means
        and covariances at ``best_lam`` (``mean`` and ``cov`` attributes:
        an ``init`` of ``fit``); each fold's problem is its own, so this is
        a start, not a fit.
    """
    grid = np.asarray(grid, dtype=float)
    metric = check_choice(metric, "metric", tuple(METRICS))
    stride = check_count(stride, "stride")
    stop = FlatStop(patience, tol)        # checks both
    if unchanged_decades is not None:
        unchanged_decades = check_positive(unchanged_decades,
                                           "unchanged_decades")
    positives = binary_labels(y)
    folds = stratified_folds(positives, n_folds, seed)
    X = np.asarray(X, dtype=float)
    order = _climb(grid, coarse_indices(grid.size, stride), climb_from)
    starts = [None] * len(folds)
    scored = {}
    best = best_start = None
    with Progress(verbose, total=len(order), desc=f"lam grid ({len(folds)} "
                  f"folds)", unit="lam") as progress, \
            Parallel(n_jobs=n_jobs) as parallel:
        for position, k in enumerate(order):
            steps = parallel(delayed(_fold_step)(
                make, X, positives, train, val, grid[k], start, metric,
                threads) for (train, val), start in zip(folds, starts))
            scores = scored[k] = np.array([score for score, _ in steps])
            starts = [start for _, start in steps]
            progress.update(advance=1, text=(
                f"lam {position + 1}/{len(order)} = {grid[k]:.4g}: mean "
                f"{metric} {scores.mean():.4f} over {len(folds)} folds "
                f"({progress.elapsed:.1f} s)"))
            step = (None if best is None
                    else paired_step(scored[best], scores, stop.tol))
            flat = best is not None and stop.after_step(step)
            if step is not None or best is None:
                moved_at = grid[k]       # the last value the folds moved
            elif (unchanged_decades is not None and
                  np.log10(grid[k] / moved_at) >= unchanged_decades):
                flat = True
            if best is None or scores.mean() > scored[best].mean():
                best = k
                if return_start:
                    best_start = _mean_start(starts)
            if flat:
                break
    kept = np.array(sorted(scored), dtype=int)
    cv = on_grid(grid[kept], [(grid[kept], scored_at)
                              for scored_at in np.array(
                                  [scored[k] for k in kept]).T])
    return (cv, best_start) if return_start else cv


def _climb(grid, order, climb_from):
    """The indices of ``order`` from the largest whose value is at or
    below ``climb_from`` on (all of them for None or below the first)."""
    if climb_from is None:
        return order
    below = [position for position, k in enumerate(order)
             if grid[k] <= climb_from]
    return order[below[-1]:] if below else order


def _mean_start(starts):
    """The folds' mean of their fits' means and covariances (the
    starts :func:`_fold_step` returns)."""
    return SimpleNamespace(mean=np.mean([s.mean for s in starts], axis=0),
                           cov=np.mean([s.cov for s in starts], axis=0))
