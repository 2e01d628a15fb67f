"""Choosing ``lam`` by a leave-one-out criterion that needs no refit
(:mod:`pac_particles.sklearn.selection`): EP's cavity scores [OW00] and
VB's one-Newton-step scores, scored coarse then fine along the grid; VB's
climb stops where the curve is flat (:class:`FlatStop`, shared with the
held-out path).

References
----------
[OW00] Opper, M. and Winther, O. (2000). Gaussian processes for
classification: mean-field algorithms. Neural Computation 12(11), 2655-2684.
"""

import math
import warnings
from typing import Optional

import numpy as np

from pac_particles.approx.ep import EPConvergenceWarning
from pac_particles.approx.ep.base import lam_path_scores, refit_from_path
from pac_particles.core.checks import InputError, check_count, check_positive
from pac_particles.core.progress import Progress, tracked
from pac_particles.sklearn.selection.folds import on_grid

__all__ = ["FLAT_TOL", "FlatStop", "coarse_indices", "loo_lambda",
           "ep_grid_choice", "ep_loo_choice", "vb_loo_choice"]

#: the held-out curve
#: (:func:`~pac_particles.sklearn.selection.holdout_path_choice`) is flat
#: where a larger ``lam`` gains less than this (AUC or accuracy):
#: below the differences the choice of ``lam`` is for. The scores along a
#: warm-started path change smoothly and are scored on the same held-out
#: rows, so their differences are far less noisy than each score (whose
#: standard error at 1,000 held-out rows is near 0.02)
FLAT_TOL = 5e-4


class FlatStop:
    """The early stop of a climb along the grid, from small to large
    ``lam``: :meth:`flat_after` is True once the last ``patience`` values
    scored each failed to beat the best so far by ``tol``. The values the
    rule skips stay in the grid fixed in advance, so a certificate at the
    chosen ``lam`` still pays the union bound over the whole grid.

    ``after_rise``: flat values count only once the curve has risen above
    its first value by ``tol``. A leave-one-out curve can start high and dip
    before it climbs: at the smallest ``lam`` the fit is near the prior and
    its mean is the direction of the pairs' mean difference, a fair
    ranking where rows are few and features many (Sonar: docs/benchmarks.md,
    "Default fits"), and the climb must pass the dip."""

    def __init__(self, patience: int = 1, tol: float = FLAT_TOL,
                 after_rise: bool = False):
        self.patience = check_count(patience, "patience")
        self.tol = check_positive(tol, "tol", allow_zero=True)
        self.after_rise = bool(after_rise)
        self.first, self.best, self.flat = None, -np.inf, 0

    def flat_after(self, value: float) -> bool:
        """Record the next value of the climb; whether to stop there."""
        if self.first is None:
            self.first = value
        improved = value > self.best + self.tol
        self.best = max(self.best, value)
        risen = not self.after_rise or self.best > self.first + self.tol
        return self.after_step(improved) and risen

    def after_step(self, improved: Optional[bool]) -> bool:
        """Record whether the next value improved on the best so far (None:
        it counts neither way); whether to stop there."""
        if improved is not None:
            self.flat = 0 if improved else self.flat + 1
        return self.flat >= self.patience


def coarse_indices(n, stride):
    """``0, stride, 2 stride, ..`` and ``n - 1``."""
    coarse = list(range(0, n, stride))
    return coarse if coarse[-1] == n - 1 else coarse + [n - 1]


def _coarse_then_fine(n, stride, score_at, stop=None):
    """Indices ``0, stride, 2 stride, ..`` and ``n - 1`` in increasing
    order, then the up to ``stride - 1`` neighbours on each side of the
    best of them: ``score_at(k) -> float or None`` for each, returns
    ``{k: score}``. ``stop`` (a :class:`FlatStop`) ends the increasing
    pass where the curve is flat (a value that did not score counts
    neither way)."""
    scores = {}
    for k in coarse_indices(n, stride):
        scores[k] = score_at(k)
        if (stop is not None and scores[k] is not None
                and stop.flat_after(scores[k])):
            break
    found = [k for k in scores if scores[k] is not None]
    if found:
        best = max(found, key=lambda k: scores[k])
        rest = range(max(0, best - stride + 1), min(n, best + stride))
    else:           # no value scored: try the others rather than give up
        rest = range(n)
    for k in rest:
        if k not in scores:
            scores[k] = score_at(k)
    return scores


def loo_lambda(grid, loo_auc, verbose=False, stride=1, patience=None,
               tol=0.0):
    """Choose ``lam`` by a leave-one-out AUC computed without refitting
    (EP's cavity scores [OW00]): ``loo_auc(lam) -> float`` at the grid
    values, or None where the fit failed (that value is left out of the
    returned grid; at least one must remain); one row in the returned
    :class:`LamCVResult`. ``verbose``: progress over the grid
    (:mod:`pac_particles.core.progress`).

    ``stride`` > 1 scores every ``stride``-th value (and the last) from
    small to large ``lam``, then the values around the best of them: the
    leave-one-out AUC varies slowly along a grid of ratio 1.8, and with
    ``stride = 2`` 9 of 13 values are scored. ``patience`` (None: never)
    stops that increasing pass once the curve has risen above its first
    value and then ``patience`` values in a row failed to beat the best so
    far by ``tol`` (:class:`FlatStop`), as the held-out path does: the
    values above a flat or falling stretch, whose fits cost the most, are
    not scored. The returned grid holds the values scored."""
    grid = np.asarray(grid, dtype=float)
    stride = check_count(stride, "stride")
    stop = (None if patience is None
            else FlatStop(patience, tol, after_rise=True))
    n = len(grid)
    total = min(n, len(coarse_indices(n, stride)) + 2 * (stride - 1))
    with Progress(verbose, total=total, desc="lam grid",
                  unit="lam") as progress:
        scored = []

        def score_at(k):
            # tracked() advances the progress by one per value scored
            scored.append(k)
            return next(tracked([loo_auc(grid[k])], progress, "lam value",
                                start=len(scored) - 1))
        scores = _coarse_then_fine(n, stride, score_at, stop)
    kept = np.array(sorted(k for k, v in scores.items() if v is not None),
                    dtype=int)
    if not kept.size:
        raise InputError(f"no value of the lam grid [{grid[0]:.4g}, "
                         f"{grid[-1]:.4g}] gave a leave-one-out AUC")
    values = np.array([scores[k] for k in kept], dtype=float)
    return on_grid(grid[kept], [(grid[kept], values)])


def ep_grid_choice(grid, scores, verbose=False, stride=1):
    """EP's choice of ``lam`` on ``grid`` by a leave-one-out criterion,
    among the values where EP converged, for both estimators (:func:`ep_loo_choice`).

    ``scores(lam) -> float or None`` is EP's path scorer
    (:func:`pac_particles.approx.ep.base.lam_path_scores`: None where EP did not
    converge); :func:`pac_particles.sklearn.selection.loo_lambda` chooses, with
    ``verbose`` and ``stride``. Returns the :class:`LamCVResult` and the
    sorted array of the grid values where EP did not converge (the
    estimators' ``lam_grid_failures_``). Values that a ``stride`` > 1 did
    not score are not failures.

    EP fails along a grid as a matter of routine (it collapses once ``lam``
    per pair or point is too large, typically at the top of the grid), and
    a failure is recorded, not warned of. An
    :class:`~pac_particles.approx.ep.EPConvergenceWarning` is raised only where
    the failure could have changed the choice: at a grid neighbour of the
    chosen value. The leave-one-out curve is smooth along a grid of a few
    values a decade, so a value whose neighbours both scored lower is a
    maximum of the curve whatever the failed values farther away would
    have scored; next to a failure the curve may still be rising.

    Raises
    ------
    InputError
        When EP converged at no value of the grid.
    """
    grid = np.asarray(grid, dtype=float)
    failed = []

    def recorded(lam):
        value = scores(lam)
        if value is None:
            failed.append(float(lam))
        return value

    try:
        cv = loo_lambda(grid, recorded, verbose=verbose, stride=stride)
    except InputError:
        raise InputError(f"EP did not converge at any lam of the grid "
                         f"[{grid[0]:.4g}, {grid[-1]:.4g}]: lower lam_max or "
                         "use method='smc'") from None
    failed = np.array(sorted(failed), dtype=float)
    best = int(np.argmin(np.abs(grid - cv.best_lam)))
    beside = [grid[k] for k in (best - 1, best + 1)
              if 0 <= k < grid.size and np.any(np.isclose(failed, grid[k]))]
    if beside:
        warnings.warn(f"EP did not converge at lam = "
                      f"{', '.join(f'{v:.4g}' for v in beside)}, next to the "
                      f"chosen lam = {cv.best_lam:.4g}: the best leave-one-out "
                      "value may lie there (every failure: "
                      "lam_grid_failures_); compare with method='smc' or "
                      "change lam_max", EPConvergenceWarning, stacklevel=4)
    return cv, failed


def ep_loo_choice(model, grid, criterion, path_tol=None, verbose=False,
                  stride=1):
    """EP's choice of ``lam`` on ``grid`` by a leave-one-out criterion
    (each point's sites removed, no refit), among the values where EP
    converged: a collapsed fit has meaningless leave-one-out scores (all
    near 0, which can read as AUC 1) and must not be chosen.

    ``model`` (an EP model, e.g. ``EPLinear`` or ``EPClassification``) is
    fitted along the grid from small to large ``lam``, each fit
    warm-started from the last converged one
    (:func:`pac_particles.approx.ep.base.lam_path_scores`), at ``path_tol``
    when given (the final fit keeps the model's own tolerance);
    ``criterion(model) -> float`` scores a fit (``EPLinear.loo_auc``,
    ``EPClassification.loo_accuracy``). Returns the :class:`LamCVResult`,
    the grid values where EP did not converge (:func:`ep_grid_choice`) and
    ``polish(lam)``: the final fit at the model's tolerance, warm-started
    from the path's sites at ``lam``
    (:func:`pac_particles.approx.ep.base.refit_from_path`)."""
    final_tol = model.tol
    if path_tol is not None:
        model.tol = path_tol
    best = {}
    scores = lam_path_scores(model, criterion, best)
    cv, failed = ep_grid_choice(grid, scores, verbose=verbose, stride=stride)
    return cv, failed, lambda lam: refit_from_path(model, lam, best, final_tol)


def vb_loo_choice(make_vb, grid, verbose=False, stride=1, patience=None,
                  tol=0.0):
    """VB's choice of ``lam`` by leave-one-out: ``make_vb(lam)`` builds the
    approximation (``GaussianVB``) at a grid value; every ``stride``-th
    value is fitted from small to large ``lam``, then the neighbours of the
    best, each warm-started at the nearest optimum found, and scored by the
    AUC of its one-Newton-step leave-one-out scores
    (:meth:`pac_particles.approx.vb.GaussianVB.loo_auc`) instead of K-fold
    refits; ``patience`` and ``tol`` stop the climb where the curve is
    flat (:func:`loo_lambda`). Returns the :class:`LamCVResult`, the grid
    values where the leave-one-out was undefined (Hessian not positive
    definite) and ``path_fit(lam)``, the path's fit at a grid value it
    scored."""
    fits, fitted, failed = {}, {}, []

    def loo_auc(lam):
        # warm start at the nearest value fitted (the grid is scored
        # coarse then fine)
        near = min(fitted, key=lambda f: abs(math.log(f / lam)), default=None)
        vb = make_vb(lam)
        fitted[float(lam)] = vb.fit(init=fitted.get(near))
        try:
            score = vb.loo_auc()
        except InputError:         # Hessian not positive definite
            failed.append(float(lam))
            return None            # loo_lambda leaves this value out
        fits[float(lam)] = fitted[float(lam)]
        return score

    cv = loo_lambda(grid, loo_auc, verbose=verbose, stride=stride,
                    patience=patience, tol=tol)
    return cv, np.array(sorted(failed), dtype=float), lambda lam: fits[float(lam)]
