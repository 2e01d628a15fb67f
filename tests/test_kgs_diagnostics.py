"""Smoke test of the kernel Gibbs sampler's scripts in diagnostics/
(``--quick``): each runs and writes its files."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

SCRIPTS = {
    # script: (extra arguments, files written into --out)
    "kgs_boundaries.py": ([], ["kgs_boundaries.png"]),
    "kgs_label_noise.py": ([], ["kgs_label_noise.png", "kgs_label_noise.csv",
                                "kgs_label_noise_summary.csv"]),
    "kgs_breast_cancer.py": ([], ["kgs_breast_cancer.png", "kgs_breast_cancer.csv",
                                  "kgs_breast_cancer_reject.csv"]),
    "kgs_active_learning.py": (["--ranking"], ["kgs_active_learning.png",
                                               "kgs_active_learning.csv"]),
}


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_kgs_script_runs_quick_and_writes_its_files(script, tmp_path):
    extra, outputs = SCRIPTS[script]
    env = dict(os.environ, MPLBACKEND="Agg")
    env["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT)] + [p for p in [env.get("PYTHONPATH")] if p])
    proc = subprocess.run(
        [sys.executable, str(ROOT / "diagnostics" / script), "--quick",
         "--out", str(tmp_path)] + extra,
        capture_output=True, text=True, cwd=str(tmp_path), env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    for name in outputs:
        assert (tmp_path / name).is_file(), f"{script} did not write {name}"
        assert (tmp_path / name).stat().st_size > 0, f"{name} is empty"
