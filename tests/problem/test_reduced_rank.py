"""The reduced-rank GP prior's design: features of the preprocessed rows,
new rows mapped the same way, and a map built from given rows alone."""

import numpy as np
import pytest

from pac_particles.core.checks import InputError
from pac_particles.core.feature_maps import NystromFeatures
from pac_particles.core.kernels import SquaredExponential
from pac_particles.problem.problem import GibbsProblem
from pac_particles.problem.reduced_rank import (EXACT_GP_MAX_ROWS, MAX_RANK,
                                                FeatureData, default_rank,
                                                rbf_features,
                                                reduced_rank_problem)


def _problem(n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3)) * [1.0, 5.0, 0.2] + [0.0, 3.0, -1.0]
    y = (X[:, 0] ** 2 + rng.standard_normal(n) > 1).astype(int)
    return X, GibbsProblem.ranking(X, y, lam=float(n), standardize=True)


def test_new_rows_go_through_the_preprocessing_and_the_map():
    X, problem = _problem()
    phi = NystromFeatures(SquaredExponential(1.5), problem.data.X[:10])
    features = reduced_rank_problem(problem, phi)
    assert isinstance(features.data, FeatureData)
    assert features.data.d == 10 and features.lam == problem.lam
    np.testing.assert_array_equal(features.data.y, problem.data.y)
    np.testing.assert_allclose(features.data.transform(X), features.data.X,
                               atol=1e-12)


def test_a_nonlinear_score_has_no_raw_coefficients():
    _, problem = _problem()
    features = reduced_rank_problem(
        problem, NystromFeatures(SquaredExponential(1.0), problem.data.X[:5]))
    with pytest.raises(InputError, match="not linear"):
        features.data.raw_linear(np.ones(5))


def test_the_rbf_map_depends_on_the_given_rows_alone():
    X, problem = _problem()
    rows = np.arange(30)
    phi = rbf_features(problem.data.X, rows, rank=10, seed=3)
    moved = problem.data.X.copy()
    moved[30:] = 100.0 + moved[30:] * 7.0
    again = rbf_features(moved, rows, rank=10, seed=3)
    probe = np.random.default_rng(1).standard_normal((5, 3))
    np.testing.assert_array_equal(phi(probe), again(probe))
    # a change inside the rows changes it: the comparison can fail
    moved[:30] *= 2.0
    assert not np.allclose(phi(probe), rbf_features(moved, rows, 10,
                                                    seed=3)(probe))


def test_the_rbf_map_is_the_same_for_rescaled_columns():
    _, problem = _problem()
    rows = np.arange(40)
    scale = np.array([3.0, 0.1, 10.0])
    phi = rbf_features(problem.data.X, rows, rank=15, seed=0)
    scaled = rbf_features(problem.data.X * scale, rows, rank=15, seed=0)
    probe = problem.data.X[40:]
    np.testing.assert_allclose(phi(probe), scaled(probe * scale), atol=1e-10)


def test_the_default_rank_is_every_row_up_to_the_exact_limit_then_capped():
    assert default_rank(500) == 500
    assert default_rank(EXACT_GP_MAX_ROWS) == EXACT_GP_MAX_ROWS
    assert 100 <= default_rank(EXACT_GP_MAX_ROWS + 1) < EXACT_GP_MAX_ROWS
    assert default_rank(10**7) == MAX_RANK
