"""Choosing ``lam`` on one held-out split along a warm-started path that
stops where the validation curve is flat (:mod:`pac_particles.sklearn.selection`).

:func:`holdout_path_choice` fits the training part of one stratified split
(:func:`~pac_particles.sklearn.selection.folds.holdout_split`) at every
``stride``-th value of the grid, from small to large ``lam``, each fit
warm-started at the previous optimum (a continuation along the path of
Gibbs posteriors), and scores the held-out part. It stops climbing as soon
as the curve is flat or falling: when the last ``patience`` values scored
each failed to beat the best so far by :data:`FLAT_TOL`. The choice is the
best value scored; the values the rule skipped
stay in the grid fixed in advance, so a certificate at the chosen ``lam``
still pays the union bound over the whole grid.

The rule costs a few fits where a K-fold cross-validation costs ``K`` per
grid value: the default of Gaussian VB where it samples pairs, whose fits
cost the same at every ``n`` (docs/user_guide.md, "Which method when").
"""

from typing import Callable, Optional

import numpy as np

from pac_particles.core.checks import check_choice, check_count
from pac_particles.core.progress import Progress
from pac_particles.problem.auc import binary_labels
from pac_particles.sklearn.selection.folds import holdout_split, on_grid
from pac_particles.sklearn.selection.leave_one_out import (FLAT_TOL, FlatStop,
                                                           coarse_indices)
from pac_particles.sklearn.selection.scorers import METRICS

__all__ = ["FLAT_TOL", "holdout_path_choice"]


def holdout_path_choice(X: np.ndarray, y: np.ndarray, grid: np.ndarray,
                        make: Callable, metric: str = "auc",
                        holdout: float = 0.2, seed: Optional[int] = None,
                        stride: int = 2, patience: int = 1,
                        tol: float = FLAT_TOL, verbose=False):
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
        :class:`~pac_particles.sklearn.selection.scorers.RefitScorer`.
    metric : {'auc', 'accuracy'}
    holdout : float in (0, 1), the fraction of each class held out.
    seed : int, optional; the split.
    stride : int >= 1, score every ``stride``-th grid value (and the last).
    patience : int >= 1, scored values without an improvement of ``tol``
        over the best so far after which the climb stops.
    tol : float >= 0, the improvement that counts.
    verbose : bool or str, one progress line (or bar step) per grid value
        (:mod:`pac_particles.core.progress`).

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
    X_tr, y_tr, X_val, y_val = X[train], positives[train], X[val], positives[val]
    order = coarse_indices(grid.size, stride)
    scored, fits = {}, {}
    stop, previous = FlatStop(patience, tol), None
    with Progress(verbose, total=len(order), desc="lam grid (held out)",
                  unit="lam") as progress:
        for position, k in enumerate(order):
            approx = make(X_tr, y_tr, grid[k])
            previous = fits[k] = approx.fit(init=previous)
            held = (approx.predict(X_val) if metric == "auc"
                    else approx.predict_proba(X_val))
            value = scored[k] = float(METRICS[metric](held, y_val))
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
