"""The student report's sequential tuning (lab.study.sequential_tuning)
and the spike-and-slab path diagnostic on a CSV (the paper's DNA, Fig. 3)."""

import importlib.util
from pathlib import Path

import matplotlib
import numpy as np
import pytest
from sklearn.base import clone
from sklearn.metrics import roc_auc_score

from builders import noisy_linear
from pac_particles.problem.data import binary_labels
from pac_particles.core.checks import InputError
from pac_particles.sklearn.estimator import PACBayesAUC
from pac_particles.sklearn.selection import stratified_folds
from lab.study.sequential_tuning import sequential_tuning

matplotlib.use("Agg")
ROOT = Path(__file__).resolve().parents[2]
N_FOLDS, SEED = 3, 1
GRIDS = [("lam", [2.0, 30.0, 300.0]), ("ess_rmin", [0.3, 0.8])]


def _tiny():
    """60 rows, 3 features (one irrelevant), and a cheap sampler."""
    X, y = noisy_linear(60, [1.0, 0.5], seed=0, d=3)
    return X, y, PACBayesAUC(lam=30.0, n_particles=10, len_chain=3)


@pytest.fixture(scope="module")
def tuned():
    X, y, est = _tiny()
    return sequential_tuning(est, X, y, GRIDS, n_folds=N_FOLDS, seed=SEED)


def _direct_cv_auc(est, X, y, params):
    """Mean validation AUC of ``est`` with ``params`` over the library's
    stratified folds, fold k fitted with ``random_state = SEED + k``."""
    aucs = []
    for k, (train, val) in enumerate(stratified_folds(binary_labels(y),
                                                      N_FOLDS, SEED)):
        fit = clone(est).set_params(random_state=SEED + k, **params)
        fit.fit(X[train], y[train])
        aucs.append(roc_auc_score(y[val], fit.decision_function(X[val])))
    return np.mean(aucs)


def test_each_stage_picks_the_grid_value_of_best_direct_cv_auc(tuned):
    X, y, est = _tiny()
    held = {}
    for stage, (name, values) in zip(tuned.stages, GRIDS):
        assert stage.name == name and stage.grid == values
        current = dict({"lam": 30.0, "ess_rmin": 0.5}, **held)
        assert stage.held == {k: v for k, v in current.items() if k != name}
        direct = [_direct_cv_auc(est, X, y, dict(held, **{name: v}))
                  for v in values]
        np.testing.assert_allclose(stage.mean_auc, direct, rtol=1e-12)
        assert stage.best_value == values[int(np.argmax(direct))]
        assert stage.best_auc == pytest.approx(max(direct))
        held[name] = stage.best_value
    assert tuned.best_params == held
    assert tuned.cv_auc == tuned.stages[-1].best_auc


def test_sequential_tuning_is_reproducible_with_a_seed(tuned):
    X, y, est = _tiny()
    # the first stage again, from the same start: the same fits
    again = sequential_tuning(est, X, y, GRIDS[:1], n_folds=N_FOLDS, seed=SEED)
    np.testing.assert_array_equal(again.stages[0].fold_auc,
                                  tuned.stages[0].fold_auc)
    assert again.best_params == {"lam": tuned.best_params["lam"]}
    # another seed, another split: other fold AUCs at the first stage
    other = sequential_tuning(est, X, y, GRIDS[:1], n_folds=N_FOLDS,
                              seed=SEED + 10)
    assert not np.array_equal(other.stages[0].fold_auc,
                              tuned.stages[0].fold_auc)


def test_prior_scale_leaves_the_cv_auc_unchanged_and_rounds_stop_when_stable():
    """Under the isotropic Gaussian prior the risk is scale-invariant: the
    report's xi (``prior_var``) changes no fold's AUC, the tie goes to the
    first value, and the second sweep, changing nothing, ends the tuning."""
    X, y, est = _tiny()
    tuning = sequential_tuning(est, X, y, [("prior_var", [0.01, 100.0])],
                               n_folds=N_FOLDS, seed=SEED, n_rounds=3)
    first = tuning.stages[0]
    np.testing.assert_allclose(first.fold_auc[:, 0], first.fold_auc[:, 1],
                               rtol=1e-9)
    assert [s.round for s in tuning.stages] == [0, 1] and tuning.converged
    assert tuning.best_params == {"prior_var": first.best_value}
    rows = tuning.rows()
    assert len(rows) == 4 and sum(row["chosen"] for row in rows) == 2


def test_verbose_tuning_reports_each_stage_choice_on_stderr(capsys):
    X, y, est = _tiny()
    sequential_tuning(est, X, y, [("prior_var", [2.0])], n_folds=N_FOLDS,
                      seed=SEED, verbose="lines")
    lines = capsys.readouterr().err.splitlines()
    assert sum("fold" in line for line in lines) == N_FOLDS
    assert lines[-1].startswith("[pac_particles] round 1 stage prior_var: "
                                "2.0 (CV AUC ")


def test_unknown_parameters_and_empty_grids_are_refused():
    X, y, est = _tiny()
    with pytest.raises(InputError, match="no parameter 'temperature'"):
        sequential_tuning(est, X, y, [("temperature", [1.0])])
    with pytest.raises(InputError, match="empty"):
        sequential_tuning(est, X, y, [("lam", [])])
    with pytest.raises(InputError, match="grids is empty"):
        sequential_tuning(est, X, y, {})


# ------------------------------------------- spike-and-slab path on a CSV

def _diagnostic():
    path = ROOT / "diagnostics" / "spike_slab_path.py"
    spec = importlib.util.spec_from_file_location("spike_slab_path_script",
                                                  path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_spike_slab_path_reads_a_csv_with_a_named_target(tmp_path):
    """The DNA-capable path: ``--csv`` read by the package's loader, the
    label column named by ``--target`` (here not the last), the features
    named by the header in the table written."""
    X, y = noisy_linear(50, [1.5, 0.0], seed=2, d=2)
    csv = tmp_path / "tiny.csv"
    rows = [f"{a:.6f},{label},{b:.6f}" for (a, b), label in zip(X, y)]
    csv.write_text("gene_a,label,gene_b\n" + "\n".join(rows) + "\n")
    code = _diagnostic().main(["--csv", str(csv), "--target", "label",
                               "--quick", "--no-ep", "--out", str(tmp_path),
                               "--name", "tiny_path"])
    assert code == 0
    assert (tmp_path / "tiny_path.png").stat().st_size > 0
    table = (tmp_path / "tiny_path.csv").read_text().splitlines()
    coefficient = table[0].split(",").index("coefficient")
    names = {line.split(",")[coefficient] for line in table[1:]}
    assert names == {"gene_a", "gene_b"}
    assert {line.split(",")[0] for line in table[1:]} == {"smc"}
