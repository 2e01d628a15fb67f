import subprocess
import sys

import numpy as np
import pytest

from pac_particles.apps.cli import demo, main


def test_demo_prints_figures_and_writes_pngs(tmp_path, capsys):
    main(["demo", "--n-particles", "40", "--len-chain", "4", "--out",
          str(tmp_path), "--quiet"])
    out = capsys.readouterr().out
    for expected in ("test AUC", "logistic regression", "log evidence",
                     "tempering steps", "wall time"):
        assert expected in out
    assert (tmp_path / "roc.png").stat().st_size > 1000
    assert (tmp_path / "marginals.png").stat().st_size > 1000


def test_demo_result_is_reasonable_on_pima(tmp_path):
    r = demo(n_particles=60, len_chain=5, out=str(tmp_path), verbose=False)
    assert r["n_train"] == 576 and r["lam"] == 576
    assert r["test_auc_bayes_point"] > 0.8 and r["test_auc_logistic"] > 0.8
    assert r["log_evidence"] < 0


def test_demo_shows_progress_on_stderr(tmp_path, capsys):
    demo(dataset="sonar", n_particles=30, len_chain=3, out=str(tmp_path))
    assert "[pac_particles] step" in capsys.readouterr().err


def test_console_entry_point_reports_bad_arguments():
    proc = subprocess.run([sys.executable, "-m", "pac_particles.apps.cli", "demo",
                           "--lam", "-1", "--quiet"], capture_output=True, text=True)
    assert proc.returncode == 2 and "lam must be" in proc.stderr


def test_unknown_dataset_is_refused_by_argparse():
    with pytest.raises(SystemExit):
        main(["demo", "--dataset", "iris"])


def _write_csv(path, n=160, seed=0):
    from builders import noisy_linear
    X, y = noisy_linear(n, [1.0, -1.0], seed, d=3)
    with open(path, "w") as fh:
        fh.write("f1,outcome,f2,f3\n")
        for row, label in zip(X, y):
            fh.write(f"{row[0]},{label},{row[1]},{row[2]}\n")


@pytest.mark.parametrize("method", ["smc", "ep", "vb"])
def test_fit_round_trip_on_a_csv_writes_a_json_summary(tmp_path, method):
    import json
    csv = tmp_path / "d.csv"
    _write_csv(csv)
    out = tmp_path / "out"
    main(["fit", str(csv), "--target", "outcome", "--method", method, "--lam",
          "100", "--n-particles", "40", "--len-chain", "4", "--out", str(out),
          "--quiet"])
    summary = json.loads((out / "summary.json").read_text())
    assert summary["lam"] == 100.0 and summary["method"] == method
    assert set(summary["coefficients"]) == {"f1", "f2", "f3"}
    assert summary["test_auc"] > 0.75 and summary["n_test"] == 40
    assert 0 < summary["certificate"]["expected_auc_risk_bound"]
    assert (out / "roc.png").exists()


def test_cv_command_writes_the_curve(tmp_path):
    import json
    csv = tmp_path / "d.csv"
    _write_csv(csv)
    main(["cv", str(csv), "--target", "outcome", "--lam-max", "500", "--folds",
          "3", "--n-particles", "30", "--len-chain", "3", "--out",
          str(tmp_path), "--quiet"])
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert 500 / 1000 <= summary["best_lam"] <= 500
    assert (tmp_path / "cv_curve.png").exists()


@pytest.mark.parametrize("content, args, message", [
    ("a,b,y\n1,2,0\n2,1,1\n", ["--target", "label"], "not in the header"),
    ("a,b,y\n1,x,0\n2,1,1\n", [], "numeric"),
    ("a,b,y\n1,2,0\n2,1,0\n", [], "one class"),
    ("a,b,y\n1,2,0\n2,1,1\n3,3,2\n", [], "binary"),
])
def test_bad_csv_is_one_clear_line_and_exit_code_2(tmp_path, content, args, message):
    csv = tmp_path / "bad.csv"
    csv.write_text(content)
    proc = subprocess.run([sys.executable, "-m", "pac_particles.apps.cli", "fit",
                           str(csv), "--quiet"] + args,
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert message in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_missing_file_is_a_clear_error(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "pac_particles.apps.cli", "fit",
                           str(tmp_path / "none.csv")], capture_output=True, text=True)
    assert proc.returncode == 2 and "no such file" in proc.stderr


# ------------------------------------------------- errors: bad input vs bugs

@pytest.mark.parametrize("args, message", [
    (["demo", "--n-particles", "1"], "n_particles must be"),
    (["demo", "--len-chain", "1"], "len_chain must be"),
    (["demo", "--test-size", "1.5"], "test_size must be"),
    (["demo", "--test-size", "0"], "test_size must be > 0"),
    (["cv", "missing.csv", "--folds", "1"], "folds must be"),
])
def test_input_error_is_one_line_and_exit_code_2(tmp_path, capsys, args, message):
    with pytest.raises(SystemExit) as info:
        main(args + ["--out", str(tmp_path), "--quiet"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_a_multi_line_input_error_is_printed_on_one_line(monkeypatch, capsys):
    import pac_particles.apps.cli as cli
    from pac_particles.core.checks import InputError

    def bad_input(**kwargs):
        raise InputError("first line\nsecond line")
    monkeypatch.setattr(cli, "demo", bad_input)
    with pytest.raises(SystemExit) as info:
        main(["demo", "--quiet"])
    assert info.value.code == 2
    assert capsys.readouterr().err == "pac-particles: error: first line second line\n"


@pytest.mark.parametrize("error", [RuntimeError("a bug"), ValueError("a bug"),
                                   OSError("a bug")])
def test_an_unexpected_error_is_not_swallowed(monkeypatch, error):
    import pac_particles.apps.cli as cli

    def bug(**kwargs):
        raise error
    monkeypatch.setattr(cli, "demo", bug)
    with pytest.raises(type(error), match="a bug"):
        main(["demo", "--quiet"])


def test_an_unexpected_error_shows_its_traceback(tmp_path):
    # an estimator that fails with a bug: the command must not hide it
    code = ("import sys, pac_particles.sklearn.estimator as e, pac_particles.apps.cli as cli\n"
            "def fit(self, X, y):\n"
            "    raise ZeroDivisionError('not an input error')\n"
            "e.PACBayesAUC.fit = fit\n"
            "sys.exit(cli.main(sys.argv[1:]))\n")
    proc = subprocess.run([sys.executable, "-c", code, "demo", "--quiet",
                           "--out", str(tmp_path)], capture_output=True, text=True)
    assert proc.returncode == 1
    assert "Traceback" in proc.stderr and "ZeroDivisionError" in proc.stderr


@pytest.mark.parametrize("content, message", [
    (None, "cannot read"),                 # a folder
    ("", "empty"),
    ("a,b,y\n", "no data rows"),
    ("a,b,y\n1,2\n", "columns"),
])
def test_unreadable_csv_is_one_line_and_exit_code_2(tmp_path, capsys, content,
                                                    message):
    path = tmp_path / "d.csv"
    if content is None:
        path.mkdir()
    else:
        path.write_text(content)
    with pytest.raises(SystemExit) as info:
        main(["fit", str(path), "--quiet", "--out", str(tmp_path / "out")])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


# ------------------------------------------------------- demo = the estimator

def test_demo_goes_through_the_estimator(tmp_path, monkeypatch):
    import pac_particles.apps.cli as cli
    from pac_particles.sklearn.estimator import PACBayesAUC
    fitted = []

    class Recording(PACBayesAUC):
        def fit(self, X, y):
            fitted.append((self.get_params(), X.shape))
            return super().fit(X, y)
    monkeypatch.setattr(cli, "PACBayesAUC", Recording)
    r = demo(dataset="sonar", n_particles=30, len_chain=3, seed=1,
             out=str(tmp_path), verbose=False)
    assert len(fitted) == 1
    params, shape = fitted[0]
    assert params["method"] == "smc" and params["lam"] == r["n_train"] == shape[0]
    assert (params["n_particles"], params["len_chain"]) == (30, 3)
    assert params["random_state"] == 1
    assert r["n_particles_total"] == 30 * 3
    assert (tmp_path / "roc.png").exists() and (tmp_path / "marginals.png").exists()


def test_demo_default_out_is_results_demo(monkeypatch):
    import pac_particles.apps.cli as cli
    seen = {}
    monkeypatch.setattr(cli, "demo", lambda **kw: seen.update(kw))
    monkeypatch.setattr(cli, "print_demo", lambda r: None)
    main(["demo", "--quiet", "--seed", "3"])
    assert seen["out"] == "results/demo" and seen["seed"] == 3
    assert seen["verbose"] is False


# ---------------------------------------------------------------- the writer

def test_writer_round_trips_csv_and_json(tmp_path):
    import csv
    import json

    import numpy as np

    from pac_particles.core.checks import InputError
    from pac_particles.apps.tables import write_json, write_rows
    rows = [{"lam": np.float64(10.0), "auc": 0.75, "k": np.int64(3)},
            {"lam": 100.0, "auc": np.float32(0.5), "note": "x"}]
    path = write_rows(rows, str(tmp_path / "a" / "t.csv"))
    with open(path, newline="") as fh:
        back = list(csv.DictReader(fh))
    assert list(back[0]) == ["lam", "auc", "k", "note"]
    assert back == [{"lam": "10.0", "auc": "0.75", "k": "3", "note": ""},
                    {"lam": "100.0", "auc": "0.5", "k": "", "note": "x"}]
    path = write_rows(rows, str(tmp_path / "t.json"))
    assert json.loads(open(path).read()) == [
        {"lam": 10.0, "auc": 0.75, "k": 3}, {"lam": 100.0, "auc": 0.5, "note": "x"}]
    summary = {"grid": np.array([1.0, 2.0]), "best": np.float64(2.0),
               "ok": np.bool_(True), "pair": (1, np.int32(2)), "bad": np.nan,
               "nested": {"n": np.int64(7), "path": tmp_path / "x"}}
    path = write_json(summary, str(tmp_path / "b" / "s.json"))
    assert json.loads(open(path).read()) == {
        "grid": [1.0, 2.0], "best": 2.0, "ok": True, "pair": [1, 2], "bad": None,
        "nested": {"n": 7, "path": str(tmp_path / "x")}}
    with pytest.raises(InputError, match="csv or .json"):
        write_rows(rows, str(tmp_path / "t.txt"))
    with pytest.raises(ValueError, match="no rows"):
        write_rows([], str(tmp_path / "t.csv"))


def test_plots_save_rows_is_the_writer():
    from pac_particles.apps.plots import save_rows
    from pac_particles.apps.tables import write_rows
    assert save_rows is write_rows


def test_run_smc_script_wires_particles_by_hand(tmp_path):
    import json
    import os
    script = os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "run_smc.py")
    proc = subprocess.run([sys.executable, script, "--dataset", "sonar",
                           "--n-particles", "20", "--len-chain", "3", "--out",
                           str(tmp_path)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["lam"] == summary["n_train"] and summary["particles"] == 60
    assert summary["log_evidence"] < 0 and summary["test_auc_bayes_point"] > 0.6
    assert len(summary["bayes_point"]) == 60


# ------------------------------------------------- feature names and progress

def test_a_dataframe_written_to_csv_round_trips_its_names_through_fit(tmp_path):
    import json
    pd = pytest.importorskip("pandas")
    from builders import noisy_linear
    from pac_particles.sklearn.estimator import PACBayesAUC
    X, y = noisy_linear(150, [1.0, -1.0], 3, d=3)
    frame = pd.DataFrame(X, columns=["glucose", "bmi", "age"])
    frame.insert(1, "diabetes", y)
    frame.to_csv(tmp_path / "d.csv", index=False)
    main(["fit", str(tmp_path / "d.csv"), "--target", "diabetes", "--method",
          "ep", "--lam", "150", "--test-size", "0", "--out", str(tmp_path),
          "--quiet"])
    written = pd.Series(json.loads((tmp_path / "summary.json").read_text())
                        ["coefficients"])
    est = PACBayesAUC(method="ep", lam=150.0).fit(
        frame.drop(columns="diabetes"), frame["diabetes"])
    pd.testing.assert_series_equal(written, est.coefficients_,
                                   check_names=False, check_index_type=False)


def test_demo_draws_the_tempering_path_and_a_forced_progress_bar(tmp_path, capsys):
    # a lam steep enough for several tempering steps (a path of one point
    # is not drawn: test_user_flow)
    main(["demo", "--dataset", "sonar", "--lam", "3000", "--n-particles",
          "30", "--len-chain", "3", "--out", str(tmp_path), "--progress",
          "bar"])
    captured = capsys.readouterr()
    assert "SMC exponent" in captured.err and "100%" in captured.err
    assert "[pac_particles] step" not in captured.err
    assert "tempering_path.png" in captured.out
    assert (tmp_path / "tempering_path.png").stat().st_size > 1000


def _noisy_csv(path, n=80, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    y = (X[:, 0] + 2.0 * rng.standard_normal(n) > 0).astype(int)
    rows = "\n".join(",".join(f"{v:.6g}" for v in x) + f",{t}"
                     for x, t in zip(X, y))
    path.write_text("a,b,c,y\n" + rows + "\n")
    return path


@pytest.mark.parametrize("args, message", [
    (["fit", "{csv}", "--test-size", "-0.1"], "test_size must be"),
    (["cv", "{csv}", "--lam-max", "0"], "lam_max must be"),
    # EP collapses at this lam on non-separable data: a failure, not exit 0
    # with coefficients ~1e-63
    (["fit", "{csv}", "--method", "ep", "--lam", "1e5", "--test-size", "0"],
     "EP failed"),
])
def test_out_of_range_options_and_failed_fits_exit_2(tmp_path, capsys, args,
                                                     message):
    csv = str(_noisy_csv(tmp_path / "d.csv"))
    with pytest.raises(SystemExit) as info:
        main([a.format(csv=csv) for a in args]
             + ["--out", str(tmp_path / "out"), "--quiet"])
    assert info.value.code == 2
    # the error is one line, last; a warning it refers to ("see the
    # warning") is one line before it
    lines = capsys.readouterr().err.strip().splitlines()
    assert message in lines[-1] and lines[-1].startswith("pac-particles: error:")
    assert all(line.startswith("pac-particles: warning:") for line in lines[:-1])


# ------------------------------------------------------ the classify command

@pytest.mark.parametrize("method, loss", [("vb", "hinge"), ("smc", "zero_one")])
def test_classify_round_trip_reports_the_test_error(tmp_path, method, loss):
    import json
    from sklearn.metrics import accuracy_score
    from sklearn.model_selection import train_test_split
    from pac_particles.sklearn.classifier import PACBayesClassifier
    from pac_particles.problem.datasets import load_csv
    csv = tmp_path / "d.csv"
    _write_csv(csv)
    out = tmp_path / "out"
    main(["classify", str(csv), "--target", "outcome", "--method", method,
          "--loss", loss, "--lam", "60", "--n-particles", "40",
          "--len-chain", "4", "--seed", "3", "--out", str(out), "--quiet"])
    summary = json.loads((out / "summary.json").read_text())
    assert summary["lam"] == 60.0 and summary["method"] == method
    assert summary["loss"] == loss and summary["n_test"] == 40
    assert set(summary["coefficients"]) == {"f1", "f2", "f3"}
    # the same split and fit, scored by sklearn.metrics
    X, y, _ = load_csv(csv, target="outcome")
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.25,
                                              stratify=y, random_state=3)
    est = PACBayesClassifier(method=method, loss=loss, lam=60.0,
                             n_particles=40, len_chain=4,
                             random_state=3).fit(X_tr, y_tr)
    assert summary["test_error"] == pytest.approx(
        1 - accuracy_score(y_te, est.predict(X_te)))
    assert summary["test_error"] < 0.3 and summary["test_error_logistic"] < 0.3
    # the certificate of the same fit, where its assumptions hold
    cert = summary["certificate"]
    if est.certificate_ is None:
        assert cert is None or "statement" not in cert
    else:
        assert cert["certified_error"] == pytest.approx(est.certified_error_)
        assert 0 <= cert["empirical_randomized_error"] <= cert["certified_error"] <= 1
        assert cert["statement"].startswith("VACUOUS") == cert["vacuous"]
    assert summary["coefficients"]["f1"] == pytest.approx(est.coef_[0])


def test_classify_chooses_lam_by_cv_and_draws_the_curve(tmp_path):
    import json
    csv = tmp_path / "d.csv"
    _write_csv(csv)
    main(["classify", str(csv), "--target", "outcome", "--method", "vb",
          "--out", str(tmp_path), "--quiet"])
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["lam_chosen_by"] == "cv" and 0.5 < summary["cv_accuracy"] <= 1
    assert (tmp_path / "cv_curve.png").stat().st_size > 1000
    assert summary["log_evidence"] < 0


@pytest.mark.parametrize("args, message", [
    (["--lam", "-1"], "lam must be"),
    (["--pu-prior", "1.5"], "pu_prior"),
    (["--test-size", "1.5"], "test_size must be"),
])
def test_classify_bad_options_are_one_line_and_exit_code_2(tmp_path, capsys,
                                                           args, message):
    csv = tmp_path / "d.csv"
    _write_csv(csv, n=40)
    with pytest.raises(SystemExit) as info:
        main(["classify", str(csv), "--target", "outcome", "--out",
              str(tmp_path), "--quiet"] + args)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_classify_refuses_an_unknown_loss():
    with pytest.raises(SystemExit):
        main(["classify", "d.csv", "--loss", "logistic"])
