"""The leave-one-out choice of ``lam`` along the grid
(pac_particles.sklearn.selection.leave_one_out): the coarse-then-fine scan
and its early stop where the curve is flat, against the full scan."""

import numpy as np
import pytest

from pac_particles.sklearn.selection.leave_one_out import (FlatStop,
                                                           loo_lambda)

GRID = np.geomspace(1.0, 1000.0, 13)


def scan(curve, **options):
    """``loo_lambda`` on ``curve`` (index -> value); the indices scored."""
    asked = []

    def loo_auc(lam):
        k = int(np.argmin(np.abs(GRID - lam)))
        asked.append(k)
        return curve[k]
    return loo_lambda(GRID, loo_auc, stride=2, **options), asked


def test_climb_stops_after_the_curve_falls_and_keeps_the_full_choice():
    """A single-peaked curve: the climb stops at the first coarse value
    below the best, the neighbours of the best are scored, and the choice is
    the full scan's, with the top of the grid never fitted."""
    curve = [0.70, 0.71, 0.72, 0.73, 0.735, 0.738, 0.737, 0.73, 0.72,
             0.71, 0.70, 0.69, 0.68]
    full, all_asked = scan(curve)
    stopped, asked = scan(curve, patience=1, tol=0.0)
    assert stopped.best_lam == full.best_lam == GRID[5]
    assert asked == [0, 2, 4, 6, 8, 5, 7]
    assert len(all_asked) == 9
    np.testing.assert_array_equal(stopped.grid, GRID[sorted(asked)])


def test_climb_passes_a_dip_below_the_first_value():
    """A curve that starts high and dips before it climbs (the near-prior
    fit's mean-difference direction at the smallest lam): the stop waits
    for a rise above the first value, and chooses as the full scan does;
    a stop without that wait ends at the dip (the variant it replaces)."""
    curve = [0.80, 0.79, 0.788, 0.789, 0.79, 0.80, 0.81, 0.83, 0.85, 0.86,
             0.87, 0.875, 0.876]
    full, _ = scan(curve)
    stopped, asked = scan(curve, patience=1, tol=1e-4)
    assert stopped.best_lam == full.best_lam == GRID[12]
    assert 12 in asked
    stop = FlatStop(patience=1, tol=1e-4, after_rise=False)
    assert [stop.flat_after(curve[k]) for k in (0, 2)] == [False, True]


def test_flat_stretch_within_tol_stops_and_failures_count_neither_way():
    """Gains below ``tol`` count as flat; a value that did not score
    (None) neither continues nor ends a flat stretch."""
    stop = FlatStop(patience=2, tol=1e-3)
    assert [stop.flat_after(v) for v in (0.70, 0.71, 0.7105)] == [
        False, False, False]
    assert stop.flat_after(0.7108)
    curve = [0.70, 0.7, 0.71, 0.7, None, 0.7, 0.7101, 0.7, 0.7, 0.7, 0.72,
             0.7, 0.73]
    stopped, asked = scan(curve, patience=2, tol=1e-3)
    assert asked[:5] == [0, 2, 4, 6, 8]
    assert stopped.best_lam == GRID[6]
    with pytest.raises(ValueError, match="patience"):
        FlatStop(patience=0)
