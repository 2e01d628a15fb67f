"""The default-fits benchmark's bookkeeping (lab.study.speed)."""
import numpy as np
import pytest

from lab.study import speed
from builders import noisy_linear


def test_bench_defaults_rows_compare_each_method_with_the_logistic_baseline(
        monkeypatch):
    X, y = noisy_linear(120, [1.0, -1.0, 0.5], 0)
    warmed = []
    real_warm_up = speed._warm_up
    monkeypatch.setattr(speed, "_warm_up",
                        lambda *a: (warmed.append(a[1]), real_warm_up(*a)))
    rows = speed.bench_defaults({"toy": (X, y)}, methods=["ep"], seed=0)
    assert warmed == [["ep"]]
    base, ep = rows
    assert base["method"] == speed.BASELINE and base["ratio"] == 1.0
    assert ep["method"] == "ep" and ep["n_train"] == 90 and ep["d"] == 3
    assert ep["ratio"] == pytest.approx(ep["seconds"] / base["seconds"])
    assert ep["auc_gap"] == pytest.approx(ep["test_auc"] - base["test_auc"])
    assert 0.5 < ep["test_auc"] <= 1.0 and np.isfinite(ep["cpu_seconds"])
    assert speed.bench_defaults({"toy": (X, y)}, methods=["ep"],
                                warm_up=False)[1]["test_auc"] == ep["test_auc"]
    twice = speed.bench_defaults({"toy": (X, y)}, methods=["ep"],
                                 warm_up=False, repeat=2)
    assert [r["rounds"] for r in twice] == [2, 2]
    assert twice[1]["test_auc"] == ep["test_auc"] and twice[0]["ratio"] == 1.0
    with pytest.raises(ValueError, match="repeat"):
        speed.bench_defaults({"toy": (X, y)}, methods=["ep"], repeat=0)
    with pytest.raises(ValueError, match="method"):
        speed.bench_defaults({"toy": (X, y)}, methods=["mcmc"])


def test_synthetic_logistic_data_have_the_fraction_of_positives_asked():
    from lab.study.size_grid import synthetic_logistic
    for rate in (0.3, 0.01):
        X, y = synthetic_logistic(40_000, 5, rate, seed=1)
        se = (rate * (1 - rate) / y.size) ** 0.5
        assert X.shape == (40_000, 5) and abs(y.mean() - rate) < 4 * se
    # the labels depend on the rows: a logistic model, not noise
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score
    X, y = synthetic_logistic(4000, 5, 0.3, seed=2)
    auc = roc_auc_score(y, LogisticRegression().fit(X, y).decision_function(X))
    assert auc > 0.75
