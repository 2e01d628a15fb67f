"""The dissertation's classification tables: the figures of each method on a
split against sklearn.metrics and plain numpy."""
import numpy as np
import pytest
from sklearn.metrics import accuracy_score, hinge_loss
from sklearn.model_selection import StratifiedShuffleSplit

from pac_particles.problem.datasets import load_dataset
from lab.study.classification_tables import (
    DISSERTATION, TABLES, classification_tables, format_tables,
    load_table_dataset, summarise, table_methods)


@pytest.fixture(scope="module")
def rows():
    return classification_tables(["breast_cancer"], n_repeats=2, smc=False)


def test_figures_match_sklearn_metrics_on_the_same_split(rows):
    X, y, _ = load_dataset("breast_cancer")
    train, test = next(StratifiedShuffleSplit(2, test_size=0.3,
                                              random_state=0).split(X, y))
    methods = table_methods(len(train), X.shape[1], smc=False)
    for name in ("VB hinge", "LR", "SVM sigmoid"):
        est = methods[name](0).fit(X[train], y[train])
        row = next(r for r in rows if r["method"] == name and r["split"] == 0)
        assert row["error"] == pytest.approx(
            1 - accuracy_score(y[test], est.predict(X[test])))
        # the posterior mean's own score (decision_function is cut)
        score = (X[test] @ est.coef_ + est.intercept_ + est.threshold_
                 if name.startswith("VB") else est.decision_function(X[test]))
        assert row["hinge"] == pytest.approx(hinge_loss(2 * y[test] - 1, score))
        assert row["exponential"] == pytest.approx(
            np.mean(np.exp(-(2 * y[test] - 1) * score)))
    # a sound linear classifier on breast cancer, unlike the 0.36 reported
    summary = summarise(rows)
    assert summary[("breast_cancer", "LR")]["error"] < 0.08
    assert summary[("breast_cancer", "VB 0-1")]["error"] < 0.1


def test_tables_show_ours_next_to_the_dissertation(rows):
    text = format_tables(summarise(rows))
    for table in TABLES:
        assert f"Table {table}:" in text
    assert "| breast_cancer | 0.18 |" in text
    # Table 1's VB bound column: the certified error of the randomised
    # classifier, the mean over splits of each fit's certified_error_
    vb = summarise(rows)[("breast_cancer", "VB 0-1")]
    bounds = [r["certified_error"] for r in rows if r["method"] == "VB 0-1"]
    assert vb["certified_error"] == pytest.approx(np.mean(bounds))
    assert 0.0 <= vb["certified_error"] <= 1.0
    assert f"| {vb['certified_error']:.3f} ± " in text.split("Table 2")[0]
    assert set(DISSERTATION) == set(TABLES)


def test_unknown_data_set_is_refused():
    with pytest.raises(ValueError, match="unknown data set"):
        load_table_dataset("iris", ".")
