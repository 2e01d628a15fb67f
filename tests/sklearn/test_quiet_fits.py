"""Default fits on clean data are quiet (issue 31).

EP fails along the grid of ``lam='cv'`` as a matter of routine (it
collapses at the top of the grid); the values where it did are recorded in
``lam_grid_failures_``, and an :class:`EPConvergenceWarning` is left for
the cases that matter: a failure next to the chosen ``lam``
(:func:`pac_particles.sklearn.selection.ep_grid_choice`). Values that the
coarse-then-fine scan of the grid did not score are not failures.
"""

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer

from pac_particles.core.checks import InputError
from pac_particles.sklearn.selection import ep_grid_choice
from pac_particles.approx.ep import EPConvergenceWarning
from pac_particles.sklearn.classifier import PACBayesClassifier
from pac_particles.sklearn.estimator import PACBayesAUC
from pac_particles.sklearn.selection import lam_grid


@pytest.fixture(scope="module")
def breast_cancer():
    return load_breast_cancer(return_X_y=True)


def _fit_raising_on_any_warning(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return est.fit(X, y)


def test_default_ep_auc_fit_on_breast_cancer_emits_no_warning(breast_cancer):
    est = _fit_raising_on_any_warning(PACBayesAUC(method="ep"),
                                      *breast_cancer)
    # the grid values the stride skipped are not failures
    assert est.cv_.grid.size < 13
    assert est.lam_grid_failures_.size == 0


def test_default_ep_classifier_fit_on_breast_cancer_emits_no_warning(
        breast_cancer):
    est = _fit_raising_on_any_warning(PACBayesClassifier(method="ep"),
                                      *breast_cancer)
    grid = lam_grid(10.0 * len(breast_cancer[1]), 20)
    # EP collapses at the top of the grid: recorded, far from the choice
    failures = est.lam_grid_failures_
    assert failures.size and np.all(failures > 2 * est.lam_)
    assert np.all(np.isin(failures, grid))
    assert not np.any(np.isin(failures, est.cv_.grid))


def test_ep_failures_along_the_grid_are_recorded_not_warned():
    # one positive in 200 rows: EP collapses for lam >= ~300
    rng = np.random.default_rng(1)
    X = rng.standard_normal((200, 3))
    y = np.zeros(200, int)
    y[0] = 1
    est = _fit_raising_on_any_warning(
        PACBayesAUC(method="ep", grid_size=8), X, y)
    grid = lam_grid(5.0 * 200, 8)
    np.testing.assert_array_equal(est.lam_grid_failures_, grid[-2:])


def test_fits_that_scan_no_ep_grid_record_no_failures():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 2))
    y = (X[:, 0] + rng.standard_normal(60) > 0).astype(int)
    for est in (PACBayesAUC(method="ep", lam=30.0),
                PACBayesAUC(method="vb"),
                PACBayesClassifier(method="vb", lam=30.0)):
        assert _fit_raising_on_any_warning(est, X, y).lam_grid_failures_.size == 0


def _stub_scores(auc, failing):
    """A leave-one-out curve ``lam -> auc[k]`` on the grid, None (EP did
    not converge) at the indices ``failing``."""
    grid = lam_grid(1000.0, len(auc))

    def scores(lam):
        k = int(np.argmin(np.abs(grid - lam)))
        return None if k in failing else auc[k]
    return grid, scores


def test_a_failure_far_from_the_chosen_lam_is_recorded_silently():
    grid, scores = _stub_scores([0.7, 0.8, 0.9, 0.85, 0.8, 0.7, 0.6], {5, 6})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cv, failed = ep_grid_choice(grid, scores)
    assert cv.best_lam == grid[2]
    np.testing.assert_array_equal(failed, grid[5:])


def test_a_failure_next_to_the_chosen_lam_warns():
    # the curve still rises where EP stopped converging
    grid, scores = _stub_scores([0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 0.97],
                                {5, 6})
    with pytest.warns(EPConvergenceWarning, match="next to the chosen"):
        cv, failed = ep_grid_choice(grid, scores)
    assert cv.best_lam == grid[4]
    np.testing.assert_array_equal(failed, grid[5:])


def test_values_the_stride_skips_are_not_failures():
    grid, scores = _stub_scores([0.7, 0.8, 0.9, 0.85, 0.8, 0.7, 0.6], set())
    cv, failed = ep_grid_choice(grid, scores, stride=2)
    assert cv.grid.size < grid.size and failed.size == 0


def test_no_converged_value_is_an_error():
    grid, scores = _stub_scores([0.7, 0.8, 0.9], {0, 1, 2})
    with pytest.raises(InputError, match="did not converge at any lam"):
        ep_grid_choice(grid, scores)
