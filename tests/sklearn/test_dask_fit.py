"""PACBayesAUC on a Dask array on a LocalCluster: the same estimate as in
memory up to Monte Carlo error, the data never gathered."""

import warnings

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from pac_particles.core.checks import InputError
from pac_particles.problem.dask_data import DaskRows, validate_dask_xy
from pac_particles.problem.data import validate_xy
from pac_particles.sklearn.estimator import PACBayesAUC

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("dask.distributed")


def _rows(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3)) * [1.0, 3.0, 0.5] + [0.0, 2.0, -1.0]
    y = (X @ [1.0, -0.4, 2.0] + rng.normal(size=n) > 0).astype(int)
    return X, y


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2,
                                  processes=False, dashboard_address=None) \
            as cluster, distributed.Client(cluster) as client:
        yield client


def test_validation_on_the_cluster_matches_memory(client):
    X, y = _rows(2000, 0)
    order = np.argsort(y, kind="stable")     # data arriving sorted by label
    data = validate_dask_xy(da.from_array(X[order], chunks=(300, 3)),
                            da.from_array(y[order], chunks=300))
    ref = validate_xy(X, y, standardize=True)
    assert list(data.classes) == [0, 1]
    assert (data.n, data.n_pos, data.n_neg) == (ref.n, ref.n_pos, ref.n_neg)
    np.testing.assert_allclose(data.center, ref.center, rtol=1e-10)
    np.testing.assert_allclose(data.scale, ref.scale, rtol=1e-10)
    np.testing.assert_allclose(data.mean_difference, ref.mean_difference,
                               atol=1e-10)
    # rows drawn from the sorted chunks are uniform over each class
    pos, neg = DaskRows(data).draw(np.random.default_rng(1), 4000, 4000)
    for drawn, rows in ((pos, ref.X_pos), (neg, ref.X_neg)):
        se = rows.std(axis=0) / np.sqrt(len(drawn))
        assert np.all(np.abs(drawn.mean(axis=0) - rows.mean(axis=0)) < 4 * se)


def test_fit_on_a_dask_array_matches_the_in_memory_fit(client):
    """n = 3,000 rows stored sorted by label in 6 chunks: the cluster's VB
    (Adam on fresh pairs fetched in rounds) agrees with the in-memory VB
    (all pairs) up to the optimiser's Monte Carlo error, in the
    coefficients, the test AUC and the certified risk."""
    X, y = _rows(3000, 2)
    X_test, y_test = _rows(5000, 3)
    order = np.argsort(y, kind="stable")
    X_d = da.from_array(X[order], chunks=(500, 3)).persist()
    y_d = da.from_array(y[order], chunks=500).persist()
    est = PACBayesAUC(lam=3000.0, random_state=0).fit(X_d, y_d)
    mem = PACBayesAUC(method="vb", lam=3000.0, random_state=0).fit(X, y)
    assert est.method_ == "vb" and est.approximation_.n_pairs == 10_000
    cosine = est.coef_ @ mem.coef_ / (np.linalg.norm(est.coef_)
                                      * np.linalg.norm(mem.coef_))
    assert cosine > 0.999
    scores = est.decision_function(da.from_array(X_test, chunks=1000))
    assert isinstance(scores, da.Array)
    auc, auc_mem = (roc_auc_score(y_test, scores.compute()),
                    roc_auc_score(y_test, mem.decision_function(X_test)))
    assert abs(auc - auc_mem) < 0.002
    assert est.certificate_ is None and est.certified_auc_risk_ is None
    assert 0.0 < est.bound_.bound <= 1.0
    np.testing.assert_allclose(est.decision_function(X_test),
                               scores.compute(), rtol=1e-12, atol=1e-12)
    labels = est.predict(da.from_array(X_test, chunks=1000))
    assert isinstance(labels, da.Array)
    np.testing.assert_array_equal(labels.compute(), est.predict(X_test))
    proba = est.predict_proba(da.from_array(X_test, chunks=1000))
    assert isinstance(proba, da.Array) and proba.shape == (5000, 2)


def test_a_dask_dataframe_keeps_its_column_names(client):
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    X, y = _rows(1500, 4)
    frame = dd.from_pandas(pd.DataFrame(X, columns=["age", "income", "debt"]),
                           npartitions=3)
    labels = dd.from_pandas(pd.Series(y), npartitions=3)
    est = PACBayesAUC(lam=1500.0, random_state=0).fit(frame, labels)
    assert list(est.feature_names_in_) == ["age", "income", "debt"]
    assert list(est.coefficients_.index) == ["age", "income", "debt"]


@pytest.mark.parametrize("kwargs, what", [
    (dict(lam="cv"), "lam='cv'"), (dict(lam=10.0, method="smc"), "method"),
    (dict(lam=10.0, pu_prior=0.2), "PU")])
def test_what_the_cluster_fit_refuses_is_named(client, kwargs, what):
    X, y = _rows(200, 5)
    with pytest.raises(InputError, match=what):
        PACBayesAUC(**kwargs).fit(da.from_array(X, chunks=(50, 3)),
                                  da.from_array(y, chunks=50))


def test_bad_dask_input_gets_a_clear_error(client):
    X, y = _rows(200, 6)
    X[7, 1] = np.nan
    with pytest.raises(InputError, match="NaN"):
        PACBayesAUC(lam=10.0).fit(da.from_array(X, chunks=(50, 3)), y)
    with pytest.raises(InputError, match="one class"):
        PACBayesAUC(lam=10.0).fit(da.from_array(np.ones((10, 2)) * [[1, 2]]
                                                + np.arange(10)[:, None],
                                                chunks=(5, 2)),
                                  da.zeros(10, chunks=5))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(InputError, match="rows"):
            PACBayesAUC(lam=10.0).fit(da.from_array(X[:100], chunks=(50, 3)),
                                      da.from_array(y, chunks=50))


def test_a_cluster_fit_reports_its_fit_with_verbose(client, capsys):
    """verbose=True on a Dask collection: a line for the VB fit on the
    cluster's rows (in a log; a bar on a terminal)."""
    X, y = _rows(600, 3)
    PACBayesAUC(lam=600.0, random_state=0, verbose=True).fit(
        da.from_array(X, chunks=(200, 3)), da.from_array(y, chunks=200))
    lines = capsys.readouterr().err.splitlines()
    assert any(line.startswith("[pac_particles] VB fit at lam = 600 on 600 "
                               "rows done") for line in lines)
