"""The certified choice of a tempering step (``cv_rule='certified'``)."""

from types import SimpleNamespace

import numpy as np
import pytest

from pac_particles.sklearn.selection import most_certified_step, on_grid


class _Path:
    """A tempering path kept step by step: step t is at gammas[t]."""

    def __init__(self, gammas):
        self.gammas = np.asarray(gammas, dtype=float)
        self.lam = self.lam_pn = float(self.gammas[-1])
        self.n_steps = len(gammas) - 1

    def at_step(self, t, standard_errors=True):
        return SimpleNamespace(step=t, gamma=self.gammas[t])


def _cv(path):
    # three folds' AUC on a grid: rising to lam = 100, then flat within
    # one standard error, then falling
    grid = np.array([1.0, 10.0, 100.0, 1000.0])
    folds = [(grid, np.array([0.70, 0.80, 0.86, 0.85]) + shift)
             for shift in (-0.03, 0.0, 0.03)]
    cv = on_grid(grid, folds)
    cv.posterior = path
    return cv


@pytest.mark.parametrize("bounds, expected", [
    # one certificate for every step (the part-A score's): the folds decide
    (lambda g: 0.3, 100.0),
    # a certificate that depends on the step: the tightest within one se
    (lambda g: 0.3 + 1e-3 * abs(np.log(g / 1000.0)), 1000.0),
])
def test_the_certificate_decides_and_the_folds_break_its_ties(bounds,
                                                              expected):
    path = _Path([0.0, 1.0, 10.0, 100.0, 1000.0])
    chosen = most_certified_step(
        _cv(path), lambda post: SimpleNamespace(bound=bounds(post.gamma)))
    assert chosen.gamma == expected


def test_tied_certificates_do_not_fall_to_the_smallest_gamma():
    """The former tie-break, the smallest gamma within one standard error,
    would take lam = 10 here (its mean AUC 0.84 is within the floor of
    the best's wide spread): the folds' best, 100, is taken."""
    path = _Path([0.0, 10.0, 100.0])
    grid = np.array([10.0, 100.0])
    cv = on_grid(grid, [(grid, np.array([0.84, 0.90])),
                        (grid, np.array([0.84, 0.82]))])
    cv.posterior = path
    assert cv.mean_auc_at(10.0) >= cv.one_se_floor    # both steps qualify
    chosen = most_certified_step(cv, lambda post: SimpleNamespace(bound=0.3))
    assert chosen.gamma == 100.0
