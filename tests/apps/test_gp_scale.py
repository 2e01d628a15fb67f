"""The GP-at-scale benchmark's bookkeeping (lab.study.gp_scale)."""
import numpy as np
import pytest

from lab.study.gp_scale import bench_gp_scale, format_scale_rows, smooth_nonlinear


def test_smooth_nonlinear_labels_follow_the_quadratic_score():
    X, y = smooth_nonlinear(4000, 0)
    assert X.shape == (4000, 10) and set(np.unique(y)) == {0, 1}
    signal = X[:, 0] ** 2 + X[:, 1] ** 2 - 2.0 + 0.5 * X[:, 2]
    # the signal ranks the labels well, a coordinate outside it does not
    from sklearn.metrics import roc_auc_score
    assert roc_auc_score(y, signal) > 0.85
    assert abs(roc_auc_score(y, X[:, 5]) - 0.5) < 0.05


def test_bench_rows_compare_ours_with_gradient_boosting_side_by_side():
    rows = bench_gp_scale([150], repeats=1, seed=0, exact_max=150,
                          test_rows=400)
    [row] = rows
    assert row["n"] == 150 and row["rank"] == 150   # the exact GP at 150 rows
    assert row["ratio"] == pytest.approx(row["ours_s"] / row["hgb_s"])
    assert 0.0 <= row["certified_auc"] <= 1.0
    assert row["exact_auc"] is not None
    assert "| 150 |" in format_scale_rows(rows)
