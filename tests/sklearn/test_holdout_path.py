"""The paths that choose lam, on one held-out split and on K folds: warm
starts, the early stop where the curve is flat, the choice and its
progress lines."""

from types import SimpleNamespace

import numpy as np
import pytest

from pac_particles.sklearn.selection import (FLAT_TOL, holdout_path_choice,
                                             kfold_path_choice, lam_grid,
                                             paired_step)


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


def test_the_path_hands_the_training_indices_by_index_and_chooses_the_same():
    """With ``by_index`` the maker gets the training rows' indices (the
    one split, the same object at every value, no copy of the rows) and
    the choice is the one made on the copied rows."""
    from pac_particles.sklearn.selection.folds import holdout_split
    X, y = _data()
    grid = lam_grid(1e4, 13)
    seen, log = [], []

    def make(train, y_tr, lam):
        seen.append((train, y_tr))
        return _Direction(lam, grid[4], log)
    cv, _ = holdout_path_choice(X, y, grid, make, seed=3, by_index=True)
    train = holdout_split(y.astype(bool), 0.2, 3)[0]
    assert all(t is seen[0][0] for t, _ in seen)
    np.testing.assert_array_equal(seen[0][0], train)
    np.testing.assert_array_equal(seen[0][1], y[train] == 1)
    copied, _ = holdout_path_choice(
        X, y, grid, lambda X_tr, y_tr, lam: _Direction(lam, grid[4], []),
        seed=3)
    assert cv.best_lam == copied.best_lam
    np.testing.assert_array_equal(cv.fold_auc, copied.fold_auc)


def test_a_default_vb_path_fits_the_part_of_the_split_s_training_rows(
        monkeypatch):
    """VB's held-out path sets its part up once from the validated rows of
    the split's training indices: the rows of ``X[train]`` in class order
    (each class in the windows' order), not those of another split."""
    from pac_particles.problem.problem import GibbsProblem
    from pac_particles.problem.row_pools import window_order
    from pac_particles.sklearn.estimator import PACBayesAUC
    from pac_particles.sklearn.selection.folds import holdout_split
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 2))
    y = (X[:, 0] + 0.5 * rng.normal(size=3000) > 0.0).astype(int)
    parts = []
    original = GibbsProblem.part

    def part(self, mask):
        parts.append((self, original(self, mask)))
        return parts[-1][1]
    monkeypatch.setattr(GibbsProblem, "part", part)
    est = PACBayesAUC(method="vb", lam_max=3000.0, grid_size=5,
                      random_state=4).fit(X, y)
    assert est.approximation_.n_pairs is not None       # sampled: the path
    assert len(parts) == 1
    train = holdout_split(y == 1, 0.2, 4)[0]
    whole, fold = parts[0]
    Z = fold.data.transform(X[train])
    pos, neg = Z[y[train] == 1], Z[y[train] == 0]
    np.testing.assert_allclose(fold.data.X_pos,
                               pos[window_order(len(pos))], atol=1e-9)
    np.testing.assert_allclose(fold.data.X_neg,
                               neg[window_order(len(neg))], atol=1e-9)
    assert whole.data.n == len(y)


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


# ------------------------------------------------------------ K-fold path

class _Angle:
    """A fake approximation scoring ``cos(a) x_0 + sin(a) x_1`` with the
    angle ``a`` a function of ``log lam``: at ``pi / 3`` (flat) up to
    ``rise``, turning to the informative column ``x_0`` at ``peak``, then
    away again: a validation curve flat at the bottom, rising, falling.
    Its fits record ``(lam, rows, init)`` and return their own start."""

    def __init__(self, X, lam, rise, peak, log):
        self.lam, self.rows, self.log = lam, len(X), log
        t = (np.log(lam) - np.log(rise)) / (np.log(peak) - np.log(rise))
        self.angle = np.pi / 3 * (1.0 - t) if t > 0 else np.pi / 3

    def fit(self, init=None):
        self.log.append((self.lam, self.rows, init))
        return SimpleNamespace(mean=np.array([self.lam, self.rows]),
                               cov=np.ones(2))

    def predict(self, X):
        return np.cos(self.angle) * X[:, 0] + np.sin(self.angle) * X[:, 1]


def _angles(rise, peak, log):
    """``make(X_tr, y_tr, lam)`` of :class:`_Angle` fits rising from
    ``rise`` to ``peak``, each recorded in ``log``."""
    return lambda X_tr, y_tr, lam: _Angle(X_tr, lam, rise, peak, log)


def test_paired_step_reads_the_mean_gain_against_its_standard_error():
    best = np.array([0.70, 0.80, 0.75, 0.90])
    # every fold gains 0.01: an improvement
    assert paired_step(best, best + 0.01) is True
    # gains of 0.01 on average with a standard error of 0.0126: flat
    gains = np.array([0.03, -0.01, 0.03, -0.01])
    assert gains.std(ddof=1) / 2 > gains.mean() > FLAT_TOL
    assert paired_step(best, best + gains) is False
    # every fold falls: flat or falling
    assert paired_step(best, best - 0.01) is False
    # gains below FLAT_TOL in root mean square: the fits did not change
    assert paired_step(best, best + np.array([1, -1, 2, 0]) * 1e-4) is None
    # a mean gain within the standard error of unpaired scores (0.04)
    # but well above that of the paired gains: an improvement
    assert paired_step(best, best + np.array([0.011, 0.009, 0.010, 0.010]))


def test_the_k_folds_climb_together_past_a_flat_bottom_and_stop_where_the_mean_falls():
    X, y = _data(n=2000)
    grid = lam_grid(1e4, 13)
    log = []
    cv = kfold_path_choice(X, y, grid, _angles(grid[3], grid[7], log),
                           n_folds=4, seed=0, stride=1, patience=2)
    # every value from the smallest: the flat bottom (grid[0..3]) counts
    # neither way, the rise improves, two values past the peak fall
    fitted = np.array([lam for lam, _, _ in log])
    np.testing.assert_allclose(np.unique(fitted), grid[:10])
    assert len(log) == 4 * 10
    assert cv.fold_auc.shape == (4, 10)
    np.testing.assert_allclose(cv.grid, grid[:10])
    assert cv.best_lam == pytest.approx(grid[7])
    # each fold starts from its own previous fit (its rows, the previous
    # value), the first fit of each from nothing
    for (lam, rows, init) in log:
        if lam == grid[0]:
            assert init is None
        else:
            k = int(np.searchsorted(grid, lam * (1 - 1e-9)))
            np.testing.assert_allclose(init.mean, [grid[k - 1], rows])
    # the defaults, the held-out path's: every other value, stopping at the
    # first that does not improve
    log.clear()
    cv = kfold_path_choice(X, y, grid, _angles(grid[3], grid[7], log),
                           n_folds=4, seed=0)
    np.testing.assert_allclose(cv.grid, grid[[0, 2, 4, 6, 8]])
    assert cv.best_lam == pytest.approx(grid[6])
    # the held-out path's rule (no gate) would have stopped on the bottom
    log.clear()
    held, _ = holdout_path_choice(X, y, grid, _angles(grid[3], grid[7], log),
                                  seed=0, stride=1)
    assert held.best_lam < grid[3]


def test_the_k_folds_climb_from_a_given_value_and_return_their_mean_fit():
    """climb_from: the climb starts at the largest value it scores at or
    below it (cold), the values below never fitted; return_start: the
    folds' mean of their fits' means and covariances at the chosen value
    (here each fit's mean is (lam, training rows): their mean is known)."""
    X, y = _data(n=2000)
    grid = lam_grid(1e4, 13)
    log = []
    cv, start = kfold_path_choice(X, y, grid, _angles(grid[3], grid[7], log),
                                  n_folds=4, seed=0, climb_from=grid[5] * 1.5,
                                  return_start=True)
    # every other value from grid[4] (grid[6] is above 1.5 grid[5])
    np.testing.assert_allclose(cv.grid, grid[[4, 6, 8]])
    assert min(lam for lam, _, _ in log) == pytest.approx(grid[4])
    assert all(init is None for lam, _, init in log if lam == grid[4])
    assert cv.best_lam == pytest.approx(grid[6])
    rows = [r for lam, r, _ in log if lam == grid[6]]
    assert len(rows) == 4
    np.testing.assert_allclose(start.mean, [grid[6], np.mean(rows)])
    np.testing.assert_allclose(start.cov, np.ones(2))
    # below the smallest value: from the smallest, as without it
    log.clear()
    low = kfold_path_choice(X, y, grid, _angles(grid[3], grid[7], log),
                            n_folds=4, seed=0, climb_from=grid[0] / 2)
    np.testing.assert_allclose(low.grid, grid[[0, 2, 4, 6, 8]])


def test_the_vb_k_fold_path_climbs_from_d_and_polishes_the_folds_mean_fit(
        monkeypatch):
    """PACBayesAUC's K-fold path (many features): the climb starts at the
    largest value it scores at or below KFOLD_CLIMB_FROM_PER_FEATURE d, and
    the final fit on every row starts at the folds' mean fit at the chosen
    lam (not from the class means); no leave-one-out score after folds."""
    from pac_particles.approx.vb import GaussianVB
    from pac_particles.sklearn.estimator import PACBayesAUC
    import pac_particles.sklearn.methods.vb as vb_method
    monkeypatch.setattr(vb_method, "VB_LOO_MAX_FEATURES", 2)
    monkeypatch.setattr(vb_method, "KFOLD_PATH_MIN_PAIRS", 0)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 30))
    y = (X[:, :2].sum(axis=1) + rng.normal(size=400) > 0.5).astype(int)
    fits = []
    real = GaussianVB.fit

    def recording(vb, init=None):
        result = real(vb, init)
        fits.append((vb.data.n, vb.lam, init, result))
        return result

    monkeypatch.setattr(GaussianVB, "fit", recording)
    est = PACBayesAUC(method="vb", n_folds=3, n_jobs=1, lam_max=2000.0,
                      grid_size=13, random_state=0).fit(X, y)
    grid = lam_grid(2000.0, 13)
    climb = grid[[k for k in range(0, 13, 2)
                  if grid[k] <= vb_method.KFOLD_CLIMB_FROM_PER_FEATURE * 30][-1]]
    assert climb > grid[0]
    assert est.cv_.grid[0] == pytest.approx(climb)
    *folds, (n, lam, init, _) = fits
    assert n == 400 and lam == pytest.approx(est.lam_)
    chosen = [result for _, fold_lam, _, result in folds
              if fold_lam == pytest.approx(est.lam_)]
    assert len(chosen) == 3
    np.testing.assert_allclose(init.mean,
                               np.mean([r.mean for r in chosen], axis=0))
    assert getattr(est, "cv_auc_", None) is None


def test_a_k_fold_curve_that_keeps_rising_is_climbed_to_the_top():
    X, y = _data(n=1000)
    grid = lam_grid(1e4, 7)
    log = []
    cv = kfold_path_choice(X, y, grid, _angles(grid[0], grid[-1], log),
                           n_folds=3, seed=0, stride=1)
    np.testing.assert_allclose(cv.grid, grid)
    assert cv.best_lam == pytest.approx(grid[-1])


def test_the_k_fold_path_writes_one_progress_line_per_grid_value(capsys):
    X, y = _data(n=600)
    grid = lam_grid(100.0, 5)
    log = []
    cv = kfold_path_choice(X, y, grid, _angles(grid[0], grid[-1], log),
                           n_folds=3, seed=0, stride=1, verbose="lines")
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == cv.grid.size == 5
    assert all(line.startswith("[pac_particles] lam ") and
               "mean auc" in line and "over 3 folds" in line
               for line in lines)


def test_folds_in_worker_processes_give_the_sequential_choice():
    from pac_particles.approx.vb import GaussianVB
    rng = np.random.default_rng(3)
    X = rng.normal(size=(240, 80))
    y = (X[:, :3].sum(axis=1) + rng.normal(size=240) > 0).astype(int)
    grid = lam_grid(1200.0, 7)

    def make(X_tr, y_tr, lam):
        return GaussianVB(X_tr, y_tr, lam=lam, family="diagonal", tol=1e-6)
    one = kfold_path_choice(X, y, grid, make, n_folds=3, seed=0)
    two = kfold_path_choice(X, y, grid, make, n_folds=3, seed=0, n_jobs=2,
                            threads=1)
    np.testing.assert_allclose(two.grid, one.grid)
    np.testing.assert_allclose(two.fold_auc, one.fold_auc, atol=1e-6)
    assert two.best_lam == one.best_lam


def test_a_default_vb_fit_with_many_features_climbs_the_folds(capsys,
                                                              monkeypatch):
    """Above VB_LOO_MAX_FEATURES features on all pairs (and from
    KFOLD_PATH_MIN_PAIRS pairs, lowered here to keep the data small),
    lam='cv' takes the K-fold path: n_folds rows of scores, one line per
    grid value."""
    from pac_particles.sklearn.estimator import PACBayesAUC
    import pac_particles.sklearn.methods.vb as vb_method
    monkeypatch.setattr(vb_method, "KFOLD_PATH_MIN_PAIRS", 0)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 70))
    y = (X[:, 0] + rng.normal(size=300) > 0.5).astype(int)
    est = PACBayesAUC(method="vb", n_folds=3, random_state=0,
                      verbose="lines").fit(X, y)
    lines = capsys.readouterr().err.splitlines()
    assert est.cv_.fold_auc.shape == (3, est.cv_.grid.size)
    assert sum("over 3 folds" in line for line in lines) == est.cv_.grid.size
    assert est.lam_ in est.cv_.grid


def test_a_default_vb_fit_with_many_rows_on_all_pairs_climbs_the_folds(
        monkeypatch):
    """Above VB_LOO_MAX_ROWS rows on all pairs with a class too small for
    the held-out path, lam='cv' takes the K-fold path (n_folds rows of
    scores) instead of the leave-one-out (one row); up to it, the
    leave-one-out (limits lowered to keep the data small)."""
    from pac_particles.sklearn.estimator import PACBayesAUC
    import pac_particles.sklearn.methods.vb as vb_method
    monkeypatch.setattr(vb_method, "KFOLD_PATH_MIN_PAIRS", 0)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = (X[:, 0] + rng.normal(size=300) > 1.5).astype(int)
    assert y.sum() < vb_method.HOLDOUT_MIN_MINORITY
    fits = {}
    for limit in (300, 299):
        monkeypatch.setattr(vb_method, "VB_LOO_MAX_ROWS", limit)
        fits[limit] = PACBayesAUC(method="vb", n_folds=3,
                                  random_state=0).fit(X, y)
    assert fits[300].cv_.fold_auc.shape[0] == 1
    assert hasattr(fits[300], "cv_auc_")           # the leave-one-out's
    assert fits[299].cv_.fold_auc.shape == (3, fits[299].cv_.grid.size)
    assert not hasattr(fits[299], "cv_auc_")
    assert fits[299].lam_ in fits[299].cv_.grid


def test_the_folds_fits_take_one_sample_of_pairs_above_the_limit(
        monkeypatch):
    """On the K-fold path, a fold's fit with more than
    KFOLD_SAMPLE_ABOVE_PAIRS pairs (and at most VB_LOO_MAX_FEATURES
    features) is L-BFGS on one sample of AUTO_PAIRS_PER_POINT pairs per
    member of the larger class, the same sample at every grid value; at or
    below the limit, or with more features, on all pairs (limits lowered
    to keep the data small)."""
    from pac_particles.approx.vb import AUTO_PAIRS_PER_POINT, GaussianVB
    from pac_particles.sklearn.estimator import PACBayesAUC
    import pac_particles.sklearn.methods.vb as vb_method
    monkeypatch.setattr(vb_method, "KFOLD_PATH_MIN_PAIRS", 0)
    monkeypatch.setattr(vb_method, "VB_LOO_MAX_ROWS", 100)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = (X[:, 0] + rng.normal(size=300) > 1.5).astype(int)
    samples = []
    real = GaussianVB._sampled_terms

    def recording(vb, rng):
        samples.append((vb.data.n_pos, vb.data.n_neg, vb.n_pairs,
                        vb.resample, str(rng.bit_generator.state)))
        return real(vb, rng)

    monkeypatch.setattr(GaussianVB, "_sampled_terms", recording)

    def fit(limit, max_features=64):
        monkeypatch.setattr(vb_method, "KFOLD_SAMPLE_ABOVE_PAIRS", limit)
        monkeypatch.setattr(vb_method, "VB_LOO_MAX_FEATURES", max_features)
        samples.clear()
        return PACBayesAUC(method="vb", n_folds=3, n_jobs=1,
                           random_state=0).fit(X, y)

    sampled = fit(0)
    assert sampled.cv_.fold_auc.shape == (3, sampled.cv_.grid.size)
    folds = {(n_pos, n_neg) for n_pos, n_neg, *_ in samples}
    assert len(folds) >= 2 and len(samples) == 3 * sampled.cv_.grid.size
    for n_pos, n_neg, n_pairs, resample, _ in samples:
        assert n_pairs == AUTO_PAIRS_PER_POINT * max(n_pos, n_neg)
        assert not resample
    # each fold draws the same sample at every grid value
    for fold in folds:
        assert len({state for *key, state in samples
                    if tuple(key[:2]) == fold}) == 1
    fold_pairs = min(n_pos * n_neg for n_pos, n_neg in folds)
    for limit, max_features in ((fold_pairs * 10, 64), (0, 2)):
        fit(limit, max_features)
        assert samples == []         # all pairs: no sample drawn


def test_the_classifier_climbs_the_folds_and_scores_every_value_when_small(
        monkeypatch):
    """PACBayesClassifier's lam='cv' (VB, up to HOLDOUT_ABOVE_ROWS rows):
    the K folds climb every other grid value until their mean accuracy is
    flat; with fewer than KFOLD_PATH_MIN_PAIRS positive-negative pairs
    every grid value is scored."""
    from pac_particles.sklearn.classifier import PACBayesClassifier
    import pac_particles.sklearn.methods.vb as vb_method
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 3))
    y = (X[:, 0] + rng.normal(size=600) > 0).astype(int)
    climbed = PACBayesClassifier(random_state=0, n_folds=3).fit(X, y)
    with monkeypatch.context() as patch:
        patch.setattr(vb_method, "KFOLD_PATH_MIN_PAIRS", np.inf)
        every = PACBayesClassifier(random_state=0, n_folds=3).fit(X, y)
    grid = every.cv_.grid
    assert every.cv_.fold_auc.shape == (3, grid.size)
    assert climbed.cv_.fold_auc.shape == (3, climbed.cv_.grid.size)
    np.testing.assert_allclose(climbed.cv_.grid,
                               grid[::2][:climbed.cv_.grid.size])


def test_a_k_fold_curve_that_no_value_moves_stops_after_a_decade():
    """Fits whose scores are the same at every lam (the 0-1 loss's fold
    accuracy where calling every row negative is best): the climb stops
    once the unmoved values span UNCHANGED_DECADES, where without the rule
    it fitted the whole grid; the choice, the smallest value, is the
    same."""
    from pac_particles.sklearn.selection.holdout_path import UNCHANGED_DECADES
    X, y = _data(n=600)
    grid = lam_grid(1e4, 13)            # four values a decade
    log = []
    same = _angles(10 * grid[-1], 100 * grid[-1], log)   # flat throughout
    cv = kfold_path_choice(X, y, grid, same, n_folds=3, seed=0, stride=1)
    assert cv.best_lam == pytest.approx(grid[0])
    spanned = np.log10(cv.grid[-1] / grid[0])
    assert UNCHANGED_DECADES <= spanned < UNCHANGED_DECADES + 0.3
    assert cv.grid.size < grid.size
    full = kfold_path_choice(X, y, grid, same, n_folds=3, seed=0, stride=1,
                             unchanged_decades=None)
    np.testing.assert_allclose(full.grid, grid)
    assert full.best_lam == pytest.approx(grid[0])


def test_a_given_held_out_score_reads_the_split_s_held_out_rows():
    """``score(approx, val)`` gets the held-out rows' indices of the split
    and replaces the predictions on ``X[val]``: the same choice when it
    scores the same rows; a score of other rows (a wrong variant) chooses
    otherwise."""
    from pac_particles.sklearn.selection.folds import holdout_split
    from pac_particles.sklearn.selection.scorers import METRICS
    X, y = _data()
    grid = lam_grid(1e4, 13)
    seen = []

    def make(train, y_tr, lam):
        return _Direction(lam, grid[4], [])

    def score(approx, val):
        seen.append(val)
        return METRICS["auc"](approx.predict(X[val]), y[val] == 1)
    cv, _ = holdout_path_choice(X, y, grid, make, seed=3, by_index=True,
                                score=score)
    val = holdout_split(y.astype(bool), 0.2, 3)[1]
    np.testing.assert_array_equal(seen[0], val)
    plain, _ = holdout_path_choice(X, y, grid, make, seed=3, by_index=True)
    assert cv.best_lam == plain.best_lam
    np.testing.assert_array_equal(cv.fold_auc, plain.fold_auc)
    flipped, _ = holdout_path_choice(
        X, y, grid, make, seed=3, by_index=True,
        score=lambda approx, val: METRICS["auc"](
            -approx.predict(X[val]), y[val] == 1))
    assert flipped.best_lam != plain.best_lam


def test_the_classifier_scores_its_held_out_rows_from_the_design():
    """The classifier's held-out path fits its part on the design's own
    scale, so its held-out rows are scored from the validated design: the
    probabilities of ``predict_proba`` on the raw rows."""
    from pac_particles.approx.classification_vb import ClassificationVB
    from pac_particles.problem.problem import GibbsProblem
    rng = np.random.default_rng(2)
    X = 3.0 + 2.0 * rng.normal(size=(600, 3))
    y = X[:, 0] + rng.normal(size=600) > 3.0
    problem = GibbsProblem.classification(X, y, 50.0)
    mask = rng.random(600) < 0.8
    part = problem.part(mask, own_scale=False)
    np.testing.assert_array_equal(part.data.center, problem.data.center)
    vb = ClassificationVB.from_problem(part, family="diagonal")
    vb.fit()
    val = np.flatnonzero(~mask)
    np.testing.assert_allclose(vb.design_probability(problem.data.X[val]),
                               vb.predict_proba(X[val]), rtol=1e-12,
                               atol=1e-12)
