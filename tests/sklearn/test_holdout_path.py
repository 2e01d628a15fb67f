"""The held-out path's choice of lam: warm starts, the early stop where the
held-out curve is flat, the choice and its progress lines."""

import numpy as np
import pytest

from pac_particles.sklearn.selection import holdout_path_choice, lam_grid


class _Direction:
    """A fake approximation whose score turns from a useless direction
    (column 1) to the informative one (column 0) as lam grows up to
    ``plateau``, then stays: a held-out curve that rises, then is flat.
    It records the fits and their warm starts."""

    def __init__(self, lam, plateau, log):
        self.lam, self.plateau, self.log = lam, plateau, log

    def fit(self, init=None):
        self.log.append((self.lam, init))
        return ("fit at", self.lam)

    def predict(self, X):
        w = min(1.0, np.log(self.lam) / np.log(self.plateau))
        return w * X[:, 0] + (1.0 - w) * X[:, 1]


def _data(n=4000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = (X[:, 0] + 0.5 * rng.normal(size=n) > 0.5).astype(int)
    return X, y


def test_the_path_stops_where_the_held_out_curve_is_flat_and_warm_starts():
    X, y = _data()
    grid = lam_grid(1e4, 13)
    log = []
    cv, path_fit = holdout_path_choice(
        X, y, grid, lambda X_tr, y_tr, lam: _Direction(lam, grid[4], log),
        seed=0, stride=2, patience=2)
    fitted = [lam for lam, _ in log]
    # every other value from the smallest, until two values past the
    # plateau (grid[4]) failed to improve
    np.testing.assert_allclose(fitted, grid[[0, 2, 4, 6, 8]])
    assert log[0][1] is None
    assert [init for _, init in log[1:]] == [("fit at", lam)
                                              for lam in fitted[:-1]]
    assert cv.fold_auc.shape == (1, 5)
    np.testing.assert_allclose(cv.grid, fitted)
    # on the plateau the scores are equal: the first of them is chosen
    assert cv.best_lam == pytest.approx(grid[4])
    assert path_fit(grid[4]) == ("fit at", grid[4])
    # the default patience: one value past the plateau
    log.clear()
    holdout_path_choice(
        X, y, grid, lambda X_tr, y_tr, lam: _Direction(lam, grid[4], log),
        seed=0, stride=2)
    np.testing.assert_allclose([lam for lam, _ in log], grid[[0, 2, 4, 6]])


def test_a_curve_that_keeps_rising_is_climbed_to_the_top():
    X, y = _data()
    grid = lam_grid(1e4, 7)
    log = []
    cv, _ = holdout_path_choice(
        X, y, grid, lambda X_tr, y_tr, lam: _Direction(lam, grid[-1], log),
        seed=0, stride=1)
    np.testing.assert_allclose([lam for lam, _ in log], grid)
    assert cv.best_lam == pytest.approx(grid[-1])


def test_the_path_writes_one_progress_line_per_grid_value(capsys):
    X, y = _data(n=600)
    grid = lam_grid(100.0, 5)
    log = []
    holdout_path_choice(X, y, grid,
                        lambda X_tr, y_tr, lam: _Direction(lam, 1e9, log),
                        seed=0, stride=1, verbose="lines")
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == len(log) >= 2
    assert all(line.startswith("[pac_particles] lam ") and "held-out auc"
               in line for line in lines)


def test_a_default_vb_fit_reports_each_grid_value_and_the_final_fit(
        monkeypatch, capsys):
    """verbose=True in a log: one line per grid value of the held-out path
    (where pairs are sampled) and one for the final fit on every row."""
    from pac_particles.sklearn.estimator import PACBayesAUC
    from pac_particles.sklearn.methods import vb as vb_method
    X, y = _data(n=300)
    monkeypatch.setattr(vb_method, "auto_pairs", lambda n_pos, n_neg: 1000)
    monkeypatch.setattr(vb_method, "HOLDOUT_MIN_MINORITY", 10)
    est = PACBayesAUC(method="vb", lam_max=300.0, grid_size=5,
                      random_state=0, verbose=True).fit(X, y)
    lines = capsys.readouterr().err.splitlines()
    path = [line for line in lines if "held-out auc" in line]
    assert len(path) == len(est.cv_.grid) >= 2
    final = [line for line in lines if "fit at lam" in line]
    assert len(final) == 1 and f"{est.lam_:.4g}" in final[0]


def test_k_fold_refits_report_each_grid_value_in_lines(capsys):
    from pac_particles.sklearn.selection import (RefitScorer,
                                                 cross_validate_lam)
    X, y = _data(n=300)
    log = []
    scorer = RefitScorer(lambda X_tr, y_tr, lam: _Direction(lam, 1e3, log),
                         verbose="lines")
    cross_validate_lam(X, y, lam_grid(100.0, 3), scorer, n_folds=2, seed=0,
                       n_jobs=1, verbose="lines")
    lines = capsys.readouterr().err.splitlines()
    assert sum("lam " in line and "auc" in line for line in lines) == 6
    assert sum(line.endswith("s)") and "fold" in line and "done" in line
               for line in lines) == 2


def test_the_final_fit_after_a_sampled_path_stops_by_its_noise_rule():
    """On sampled pairs the final fit on every row, warm-started at the
    path's fit, runs Adam until the noise rule of its coordinates passes
    (not to a fixed count or the cap), the second half averaged."""
    from pac_particles.sklearn.estimator import PACBayesAUC
    X, y = _data(n=3000)
    y = (X[:, 0] + 0.5 * np.random.default_rng(1).normal(size=3000)
         > 0.0).astype(int)              # about 1,500 pairs a side: sampled
    est = PACBayesAUC(method="vb", lam_max=3000.0, grid_size=5,
                      random_state=0).fit(X, y)
    assert est.approximation_.n_pairs is not None
    message = est.posterior_.message
    assert "stopping rule: descent ended at step" in message
    steps = int(message.split("Adam: ")[1].split(" steps")[0])
    assert f"last {steps // 2} iterates averaged" in message
