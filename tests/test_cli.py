import subprocess
import sys

import pytest

from pac_particles.cli import demo, main


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
    proc = subprocess.run([sys.executable, "-m", "pac_particles.cli", "demo",
                           "--lam", "-1", "--quiet"], capture_output=True, text=True)
    assert proc.returncode == 2 and "lam must be" in proc.stderr


def test_unknown_dataset_is_refused_by_argparse():
    with pytest.raises(SystemExit):
        main(["demo", "--dataset", "iris"])


def _write_csv(path, n=160, seed=0):
    from conftest import noisy_linear
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
    proc = subprocess.run([sys.executable, "-m", "pac_particles.cli", "fit",
                           str(csv), "--quiet"] + args,
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert message in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_missing_file_is_a_clear_error(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "pac_particles.cli", "fit",
                           str(tmp_path / "none.csv")], capture_output=True, text=True)
    assert proc.returncode == 2 and "no such file" in proc.stderr
