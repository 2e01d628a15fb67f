"""The public API's type hints, checked by mypy.

The modules a user calls (the estimators, the methods and their
protocol, the posterior protocol, the problem) carry type hints on their
public functions; mypy checks them with the configuration of
``setup.cfg`` (the rest of the package is read, not checked).
"""

import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
#: the modules of the public API that mypy checks
TYPED = ("pac_particles/core/posterior_result.py",
         "pac_particles/problem/problem.py",
         "pac_particles/sklearn/methods",
         "pac_particles/sklearn/estimator.py",
         "pac_particles/sklearn/classifier.py",
         "pac_particles/sklearn/coefficient_report.py")


def test_the_public_api_type_checks():
    pytest.importorskip("mypy")
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file",
         str(ROOT / "setup.cfg"), "--cache-dir",
         str(ROOT / ".pytest_cache" / "mypy"), *TYPED],
        cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_public_functions_of_the_typed_modules_are_annotated():
    """Every public function and method of the typed modules has a return
    annotation (a forgotten one would pass mypy unchecked)."""
    import ast
    missing = []
    for entry in TYPED:
        path = ROOT / entry
        for file in ([path] if path.is_file() else sorted(path.glob("*.py"))):
            tree = ast.parse(file.read_text())
            # the module's functions and its classes' methods (not the
            # closures inside them)
            nodes = [n for top in tree.body
                     for n in ([top] + (top.body if isinstance(top, ast.ClassDef)
                                        else []))]
            for node in nodes:
                if (isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                        and not node.name.startswith("_")
                        and node.returns is None):
                    missing.append(f"{file.relative_to(ROOT)}:{node.lineno} "
                                   f"{node.name}")
    assert not missing, "no return annotation:\n" + "\n".join(missing)
