"""GibbsProblem: the one set-up of a fit, and the map of a linear score
back to the raw inputs."""

import numpy as np
import pytest

from pac_particles.core.checks import InputError
from pac_particles.core.kernels import SquaredExponential
from pac_particles.problem.data import validate_xy
from pac_particles.problem.design import classification_data
from pac_particles.problem.problem import GibbsProblem, prior_hyperparameters
from pac_particles.problem.risks import AUCRisk, ClassificationRisk
from pac_particles.problem.row_pools import window_order


def _data(n=40, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * [1.0, 10.0, 0.1, 3.0][:d] + [0, 5, -2, 1][:d]
    y = rng.integers(0, 2, size=n)
    y[:2] = [0, 1]
    return X, y


def test_ranking_problem_validates_once_and_resolves_pu_lam():
    X, y = _data()
    X = np.column_stack([X, np.full(len(y), 7.0)])          # a constant column
    with pytest.warns(UserWarning, match="constant"):
        problem = GibbsProblem.ranking(X, y, lam=12.0, pu_prior=0.25)
    assert problem.task == "ranking" and problem.loss == "auc"
    assert problem.data.columns.tolist() == [0, 1, 2, 3]
    assert isinstance(problem.risk, AUCRisk)
    assert problem.lam == pytest.approx(12.0 / 0.75) and problem.lam_pn == 12.0
    moved = problem.at(3.0)
    assert moved.data is problem.data and moved.risk is problem.risk
    assert moved.lam == pytest.approx(4.0) and moved.lam_pn == 3.0
    # the same validation as validate_xy's
    with pytest.warns(UserWarning):
        direct = validate_xy(X, y, standardize=True)
    np.testing.assert_array_equal(problem.data.X, direct.X)


def test_classification_problem_keeps_every_column_and_uses_lam_as_given():
    X, y = _data()
    problem = GibbsProblem.classification(X, y, lam=9.0, loss="hinge",
                                          pu_prior=0.3)
    assert problem.task == "classification" and problem.loss == "hinge"
    assert problem.fit_intercept and problem.data.d == X.shape[1] + 1
    assert isinstance(problem.risk, ClassificationRisk)
    assert problem.lam == problem.lam_pn == 9.0
    assert problem.at(2.0).lam == 2.0
    with pytest.raises(InputError, match="loss"):
        GibbsProblem.classification(X, y, lam=1.0, loss="square")
    with pytest.raises(InputError, match="lam"):
        GibbsProblem.ranking(X, y, lam=-1.0)


@pytest.mark.parametrize("standardize", [True, False])
def test_raw_linear_reproduces_the_scores_of_the_design(standardize):
    """``X_raw @ coef + offset == X @ theta`` for the ranking design (a
    dropped column gets 0) and the classification design (intercept)."""
    X, y = _data()
    X = np.column_stack([X[:, :2], np.ones(len(y)), X[:, 2:]])
    with pytest.warns(UserWarning):
        data = validate_xy(X, y, standardize=standardize)
    theta = np.random.default_rng(1).normal(size=(3, data.d))
    coef, offset = data.raw_linear(theta)
    np.testing.assert_allclose(X @ coef.T + offset, data.X @ theta.T,
                               rtol=1e-10, atol=1e-10)
    assert np.all(coef[:, 2] == 0)
    design = classification_data(X, y, standardize, fit_intercept=True)
    theta = np.random.default_rng(2).normal(size=design.d)
    coef, offset = design.raw_linear(theta)
    np.testing.assert_allclose(X @ coef + offset, design.X @ theta,
                               rtol=1e-10, atol=1e-10)


def test_prior_hyperparameters_as_the_parameters_give_them():
    assert prior_hyperparameters(4) == {"prior_var": 1.0}
    kernel = prior_hyperparameters(9, kernel="rbf")["kernel"]
    assert isinstance(kernel, SquaredExponential)
    np.testing.assert_allclose(kernel.lengthscale, 6.0)     # 2 sqrt(d)
    given = SquaredExponential(2.0)
    assert prior_hyperparameters(9, kernel=given)["kernel"] is given
    slab = prior_hyperparameters(10, prior="spike_slab")
    assert slab["v1"] == 1.0 and slab["v0"] == pytest.approx(0.01)
    assert slab["p"] == pytest.approx(1.0 - np.exp(-0.1))
    assert prior_hyperparameters(10, prior="spike_slab",
                                 spike_slab=(0.2, 0.0, 2.0))["v0"] == 0.0


def test_a_part_of_a_ranking_problem_keeps_lam_and_pairs_its_own_rows():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(300, 3))
    y = rng.random(300) < 0.4
    mask = rng.random(300) < 0.8
    problem = GibbsProblem.ranking(X, y, lam=40.0, pu_prior=0.2)
    part = problem.part(mask)
    assert (part.lam, part.lam_pn, part.pu_prior) == (50.0, 40.0, 0.2)
    assert part.data.n == mask.sum()
    assert part.risk.n_pairs == (y & mask).sum() * (~y & mask).sum()
    ref = GibbsProblem.ranking(X[mask], y[mask], lam=40.0, pu_prior=0.2)
    np.testing.assert_allclose(
        part.data.X_pos,
        ref.data.X_pos[window_order(ref.data.n_pos)], atol=1e-12)
    assert part.at(10.0).lam == ref.at(10.0).lam



@pytest.mark.parametrize("standardize", [True, False])
def test_a_part_of_a_classification_problem_is_that_of_its_rows(standardize):
    """The part's design (input order, intercept column at 1) and risk are
    those of the classification problem of its raw rows, to rounding, and
    new rows are mapped alike; a part without its own standardisation
    (the full rows' scale) differs."""
    rng = np.random.default_rng(8)
    X = rng.normal(size=(400, 3)) * [1.0, 4.0, 0.1] + [2.0, -1.0, 5.0]
    y = rng.random(400) < 0.35
    mask = rng.random(400) < 0.8
    problem = GibbsProblem.classification(X, y, 30.0, "hinge", standardize,
                                          pu_prior=0.2)
    part = problem.part(mask)
    ref = GibbsProblem.classification(X[mask], y[mask], 30.0, "hinge",
                                      standardize, pu_prior=0.2)
    np.testing.assert_allclose(part.data.X, ref.data.X, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(part.data.X[:, -1], 1.0)
    np.testing.assert_array_equal(part.data.y, ref.data.y)
    assert (part.lam, part.pu_prior, part.loss) == (30.0, 0.2, "hinge")
    np.testing.assert_allclose(part.risk.weights, ref.risk.weights)
    new = rng.normal(size=(20, 3)) * 3
    np.testing.assert_allclose(part.data.transform(new),
                               ref.data.transform(new), rtol=0, atol=1e-12)
    if standardize:
        assert not np.allclose(part.data.X, problem.data.X[mask])
    for bad in (mask[:-1], mask.astype(int)):
        with pytest.raises(InputError, match="bool array of the problem's"):
            problem.part(bad)


@pytest.mark.parametrize("standardize", [True, False])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_the_classification_design_is_the_checked_rows_in_input_order(
        standardize, fit_intercept):
    """``classification_data``: the rows in input order, every column kept
    (a constant one at 0 when standardised), centred and scaled on their
    own moments, the intercept column 1 last; the classes' rows read from
    it; bad rows refused as the ranking validator refuses them."""
    from pac_particles.core.checks import InputError
    X, y = _data()
    X = np.column_stack([X, np.full(len(y), 3.0)])
    if standardize:
        # a column whose squares overflow standardises as its unit version
        X = np.column_stack([X, 1e200 * X[:, 0]])
    design = classification_data(X, y, standardize, fit_intercept)
    expected = X.copy()
    if standardize:
        unit = np.column_stack([X[:, :-1], X[:, 0]])
        sd = unit.std(axis=0)
        expected = (unit - unit.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
        expected[:, -2] = 0.0
    if fit_intercept:
        expected = np.column_stack([expected, np.ones(len(y))])
    np.testing.assert_allclose(design.X, expected, rtol=1e-10, atol=1e-10)
    assert design.d == X.shape[1] + fit_intercept
    assert design.feature_names[-1] == ("intercept" if fit_intercept
                                        else f"x{X.shape[1]}")
    positives = y == y.max()
    np.testing.assert_array_equal(design.X_pos, design.X[positives])
    np.testing.assert_array_equal(design.y, positives)
    np.testing.assert_allclose(design.transform(X), design.X, rtol=1e-10,
                               atol=1e-10)
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(InputError, match="NaN"):
        classification_data(bad, y)
    with pytest.raises(InputError, match="one class"):
        classification_data(X, np.ones(len(y)))


@pytest.mark.parametrize("task", ["ranking", "classification"])
def test_a_part_on_the_problem_s_scale_reads_its_design_rows(task):
    """``part(mask, own_scale=False)``: the part's rows are the problem's
    design rows (its scale kept); by default they are standardised on
    their own rows (another scale)."""
    rng = np.random.default_rng(4)
    X = 2.0 + 3.0 * rng.normal(size=(500, 3))
    y = rng.random(500) < 0.4
    mask = rng.random(500) < 0.7
    problem = getattr(GibbsProblem, task)(X, y, 10.0)
    kept = problem.part(mask, own_scale=False)
    np.testing.assert_array_equal(kept.data.center, problem.data.center)
    np.testing.assert_array_equal(kept.data.scale, problem.data.scale)
    np.testing.assert_allclose(kept.data.transform(X[mask]),
                               problem.data.transform(X[mask]), atol=1e-12)
    own = problem.part(mask)
    assert not np.allclose(own.data.center, problem.data.center)
