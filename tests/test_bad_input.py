"""Bad input gets a clear InputError (issue 26, "Trust"): the command line
prints it as one line with exit code 2, before any fitting where it can be
known up front; the library refuses what it cannot answer instead of
returning a number or an AttributeError."""

import os
import warnings

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

from pac_particles.core.checks import InputError
from pac_particles.apps.cli import main

from builders import two_blobs


def _csv(path, X, y, header="a,b,c,y"):
    rows = "\n".join(",".join(f"{v:.6g}" for v in x) + f",{t}"
                     for x, t in zip(X, y))
    path.write_text(header + "\n" + rows + "\n")
    return str(path)


def _one_line_exit_2(capsys, argv, message):
    """``main(argv)`` exits with code 2 and one stderr line holding
    ``message``; returns that line."""
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    assert message in err, err
    return err


def _refuse_fitting(monkeypatch):
    """Make every fit a test failure: errors that can be known up front
    must come before the (expensive) fit."""
    import pac_particles.apps.cli as cli

    def no_fit(self, X, y):
        raise AssertionError("fitted before checking the input")
    monkeypatch.setattr(cli.PACBayesAUC, "fit", no_fit)
    monkeypatch.setattr(cli.PACBayesClassifier, "fit", no_fit)


# ------------------------------------------- a class too small for a split

@pytest.mark.parametrize("command", ["fit", "classify"])
def test_a_class_of_one_row_cannot_be_split_and_says_use_test_size_0(
        tmp_path, capsys, monkeypatch, command):
    # one positive among 30 rows: a stratified held-out split cannot put it
    # both in the training and the test part (scikit-learn's splitter error
    # and exit code 1 before)
    _refuse_fitting(monkeypatch)
    rng = np.random.default_rng(0)
    y = np.zeros(30, int)
    y[0] = 1
    csv = _csv(tmp_path / "d.csv", rng.standard_normal((30, 3)), y)
    err = _one_line_exit_2(capsys, [command, csv, "--lam", "10", "--quiet",
                                    "--out", str(tmp_path / "out")],
                           "only 1 row")
    assert "--test-size 0" in err


def test_a_class_of_one_row_fits_without_a_test_split(tmp_path):
    # what the message advises works: all rows, no test set
    import json
    rng = np.random.default_rng(0)
    y = np.zeros(30, int)
    y[0] = 1
    csv = _csv(tmp_path / "d.csv", rng.standard_normal((30, 3)), y)
    out = tmp_path / "out"
    main(["fit", csv, "--lam", "10", "--test-size", "0", "--n-particles",
          "20", "--len-chain", "2", "--quiet", "--out", str(out)])
    summary = json.loads((out / "summary.json").read_text())
    assert summary["n_train"] == 30 and "test_auc" not in summary


@pytest.mark.parametrize("test_size, message", [
    ("0.01", "test row(s)"),     # one test row: not both classes
    ("0.99", "training row(s)"),  # an empty training part
    # 2 positives among 100, 2 test rows: the stratified test part gets
    # no positive, so no test AUC
    ("0.02", "no row of class"),
])
def test_a_test_size_that_leaves_a_part_without_both_classes_is_refused(
        tmp_path, capsys, monkeypatch, test_size, message):
    _refuse_fitting(monkeypatch)
    rng = np.random.default_rng(1)
    y = np.zeros(100, int)
    y[:2] = 1
    csv = _csv(tmp_path / "d.csv", rng.standard_normal((100, 3)), y)
    _one_line_exit_2(capsys, ["fit", csv, "--lam", "10", "--test-size",
                              test_size, "--quiet", "--out",
                              str(tmp_path / "out")], message)


def test_the_demo_refuses_a_test_size_with_no_training_rows_and_no_bad_advice(
        tmp_path, capsys, monkeypatch):
    # the demo needs a test set: "--test-size 0" is not a way out there
    _refuse_fitting(monkeypatch)
    err = _one_line_exit_2(capsys, ["demo", "--test-size", "0.999", "--quiet",
                                    "--out", str(tmp_path)], "training row(s)")
    assert "--test-size 0" not in err


# ----------------------------------------------------- an unwritable --out

def _unwritable_outs(tmp_path):
    """Output folders that cannot be made: under a file, and a file."""
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    return {"under a file": str(blocker / "out"), "a file": str(blocker)}


@pytest.mark.parametrize("which", ["under a file", "a file"])
@pytest.mark.parametrize("command", ["fit", "classify", "cv"])
def test_an_unwritable_out_is_refused_before_fitting(tmp_path, capsys,
                                                     monkeypatch, command,
                                                     which):
    _refuse_fitting(monkeypatch)
    import pac_particles.apps.cli as cli
    monkeypatch.setattr(cli, "cv_lambda", lambda *a, **k: pytest.fail(
        "cross-validated before checking --out"))
    X, y = two_blobs(40, 3, seed=0)
    csv = _csv(tmp_path / "d.csv", X, y)
    out = _unwritable_outs(tmp_path)[which]
    lam = [] if command == "cv" else ["--lam", "10"]
    _one_line_exit_2(capsys, [command, csv, "--quiet", "--out", out] + lam,
                     "--out")


def test_an_unwritable_out_is_refused_before_the_demo_fits(tmp_path, capsys,
                                                           monkeypatch):
    _refuse_fitting(monkeypatch)
    out = _unwritable_outs(tmp_path)["under a file"]
    _one_line_exit_2(capsys, ["demo", "--quiet", "--out", out], "--out")


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0,
                    reason="root writes into read-only folders")
def test_a_read_only_out_is_refused_before_fitting(tmp_path, capsys,
                                                   monkeypatch):
    _refuse_fitting(monkeypatch)
    X, y = two_blobs(40, 3, seed=0)
    csv = _csv(tmp_path / "d.csv", X, y)
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        _one_line_exit_2(capsys, ["fit", csv, "--lam", "10", "--quiet",
                                  "--out", str(locked)], "--out")
    finally:
        locked.chmod(0o700)


# --------------------------------------------- a sweep of CSV mistakes

@pytest.mark.parametrize("content, args, message", [
    # a missing value: named by column and data row, with what to do
    ("a,b,y\n1,2,0\n2,nan,1\n3,1,0\n4,2,1\n", [], "column 'b'"),
    ("a,b,y\n1,2,0\n2,1,1\n3,1,inf\n4,2,1\n", [], "column 'y'"),
    # only the label column: no feature to score with
    ("y\n0\n1\n0\n1\n", [], "no feature column"),
    # another delimiter: the header is one name
    ("a;b;y\n1;2;0\n2;1;1\n", [], "comma-separated"),
    # a feature taken for the labels: name the column and --target
    ("a,b,y\n1,2,0\n2,1,1\n3,3,0\n", ["--target", "a"], "--target"),
])
def test_csv_mistakes_are_one_line_naming_the_fix(tmp_path, capsys, content,
                                                  args, message):
    path = tmp_path / "d.csv"
    path.write_text(content)
    _one_line_exit_2(capsys, ["fit", str(path), "--lam", "10", "--test-size",
                              "0", "--quiet", "--out", str(tmp_path / "out")]
                     + args, message)


# ------------------------------------- EP hyper-parameter search options

def _ep_models():
    from pac_particles.approx.ep import EPGP, EPLinear, EPSpikeSlab
    from pac_particles.core.kernels import SquaredExponential
    return {"linear": lambda X, y: EPLinear(X, y, lam=40),
            "spike_slab": lambda X, y: EPSpikeSlab(X, y, lam=40),
            "gp": lambda X, y: EPGP(X, y, lam=40,
                                    kernel=SquaredExponential(1.0))}


@pytest.mark.parametrize("model", ["linear", "spike_slab", "gp"])
@pytest.mark.parametrize("options, message", [
    ("bad", "dict"),
    ({"maxiters": 3}, "maxiters"),          # a typo scipy would only warn of
    ({"maxiter": 0}, "maxiter"),
    ({"gtol": -1.0}, "gtol"),
])
def test_fit_hyperparameters_refuses_bad_options(model, options, message):
    X, y = two_blobs(30, 2, seed=3)
    ep = _ep_models()[model](X, y)
    with pytest.raises(InputError, match=message):
        ep.fit_hyperparameters(options=options)
    # refused before any EP run
    assert ep.result_ is None


def test_fit_hyperparameters_accepts_lbfgsb_stopping_options():
    from pac_particles.approx.ep import EPLinear
    X, y = two_blobs(30, 2, seed=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        opt = EPLinear(X, y, lam=40).fit_hyperparameters(
            options={"maxiter": 2, "gtol": 1e-4})
    assert opt.nit <= 2


# ----------------------------------------------- baselines before fit

@pytest.mark.parametrize("make", ["RankBoost", "LogisticBaseline"])
def test_baselines_before_fit_raise_not_fitted_error(make):
    import pac_particles.sklearn.baselines as baselines
    scorer = getattr(baselines, make)()
    with pytest.raises(NotFittedError, match=make):
        scorer.decision_function(np.zeros((3, 2)))


# ------------------------------------- EP leave-one-out after a failed fit

def test_loo_after_a_degenerate_ep_fit_is_refused():
    # 100 x 3, noisy labels, lam = 1e5: EP collapses (tests/approx/test_ep.py);
    # its leave-one-out AUC is that of a collapsed state, not an estimate
    from pac_particles.approx.ep import EPConvergenceWarning, EPLinear
    rng = np.random.default_rng(0)
    X = rng.standard_normal((100, 3))
    y = (X[:, 0] + 2.0 * rng.standard_normal(100) > 0).astype(int)
    ep = EPLinear(X, y, lam=1e5)
    with pytest.warns(EPConvergenceWarning):
        res = ep.fit()
    assert res.degenerate
    with pytest.raises(InputError, match="failed.*smaller lam"):
        ep.loo_auc()
    with pytest.raises(InputError, match="failed"):
        ep.loo_scores()
