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
