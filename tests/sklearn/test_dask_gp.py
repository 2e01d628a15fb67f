"""GP scores of rows on a Dask cluster: the reduced-rank prior's features
computed where the rows are fetched, against the in-memory fit."""

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from pac_particles.problem.dask_data import validate_dask_xy
from pac_particles.problem.dask_features import DaskFeatureData
from pac_particles.problem.data import validate_xy
from pac_particles.problem.reduced_rank import rbf_features
from pac_particles.sklearn.estimator import PACBayesAUC

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")


@pytest.fixture(autouse=True)
def synchronous():
    with dask.config.set(scheduler="synchronous"):
        yield


def _rows(n, seed):
    """Smooth nonlinear scores: a disc in the first two columns, which no
    linear score ranks."""
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, 3))
    y = (Z[:, 0] ** 2 + Z[:, 1] ** 2 - 2.0 + 0.5 * Z[:, 2]
         + 0.5 * rng.logistic(size=n) > 0).astype(int)
    # columns on their own scales: features of unstandardised rows are wrong
    return Z * [1.0, 3.0, 0.5] + [0.0, 2.0, -1.0], y


def test_feature_data_reads_the_features_of_every_row():
    """The class-mean difference of the features (a pass over the chunks)
    and the features of new rows, Dask and numpy, against the map applied
    to the in-memory standardised rows."""
    X, y = _rows(600, 0)
    data = validate_dask_xy(da.from_array(X, chunks=(150, 3)),
                            da.from_array(y, chunks=150))
    ref = validate_xy(X, y, standardize=True)
    phi = rbf_features(ref.X, np.arange(200), rank=30, seed=1)
    features = DaskFeatureData(data, phi)
    assert features.d == phi.rank and not features.in_memory
    Phi = phi(ref.X)
    np.testing.assert_allclose(
        features.mean_difference,
        Phi[y == 1].mean(axis=0) - Phi[y == 0].mean(axis=0), atol=1e-10)
    lazy = features.transform(da.from_array(X, chunks=(100, 3)))
    assert isinstance(lazy, da.Array)
    np.testing.assert_allclose(lazy.compute(), Phi, atol=1e-10)
    np.testing.assert_allclose(features.transform(X), Phi, atol=1e-10)


def test_gp_fit_on_a_dask_array_matches_the_in_memory_gp_fit():
    """n = 1,500 rows in 5 chunks: the cluster's reduced-rank GP (map on
    the gathered sample, VB on the features of fetched pairs) ranks test
    rows as the in-memory reduced-rank GP does, far above the linear
    scores (a fit on the raw columns, the features not applied, is at
    chance here); Dask and numpy scores agree."""
    n = 1500
    X, y = _rows(n, 2)
    X_test, y_test = _rows(4000, 3)
    X_d, y_d = da.from_array(X, chunks=(300, 3)), da.from_array(y, chunks=300)
    est = PACBayesAUC(kernel="rbf", rank=60, lam=float(n),
                      random_state=0).fit(X_d, y_d)
    mem = PACBayesAUC(kernel="rbf", rank=60, method="vb", lam=float(n),
                      random_state=0).fit(X, y)
    linear = PACBayesAUC(lam=float(n), random_state=0).fit(X_d, y_d)
    assert est.method_ == "vb" and est.rank_ == mem.rank_
    assert est.certificate_ is None and est.bound_ is None
    scores = est.decision_function(da.from_array(X_test, chunks=(1000, 3)))
    assert isinstance(scores, da.Array)
    auc = roc_auc_score(y_test, scores.compute())
    auc_mem = roc_auc_score(y_test, mem.decision_function(X_test))
    auc_linear = roc_auc_score(y_test, linear.decision_function(X_test))
    assert abs(auc - auc_mem) < 0.01
    assert auc > auc_linear + 0.2
    np.testing.assert_allclose(est.decision_function(X_test),
                               scores.compute(), rtol=1e-10, atol=1e-10)
    labels = est.predict(da.from_array(X_test, chunks=(1000, 3)))
    np.testing.assert_array_equal(labels.compute(), est.predict(X_test))
