"""The README's import paths and module map stay true to the code."""

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()

_IMPORT = re.compile(r"^\s*from (pac_particles[\w.]*) import \(?([\w, ]+)\)?",
                     re.M)


_DOTTED = re.compile(r"(pac_particles(?:\.\w+)+)")


def _imports():
    """``from pac_particles.x import y`` lines and dotted names such as
    ``pac_particles.ep.EPLinear`` anywhere in the README."""
    pairs = []
    for module, names in _IMPORT.findall(README):
        pairs += [(module, name.strip()) for name in names.split(",")
                  if name.strip()]
    for dotted in _DOTTED.findall(README):
        head, _, tail = dotted.rpartition(".")
        pairs.append((head, tail))
    return sorted(set(pairs))


def _resolve(module, name):
    """Import the longest importable prefix, then follow attributes."""
    parts = module.split(".") + [name]
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(module)


def test_readme_shows_imports():
    assert len(_imports()) >= 10


@pytest.mark.parametrize("module,name", _imports())
def test_every_import_in_the_readme_resolves(module, name):
    _resolve(module, name)


def _module_map():
    block = README[README.index("## Layout"):README.index("## Benchmarks")]
    return re.findall(r"^\s{6,8}([\w/]+(?:\.py)?)\s", block, re.M)


def test_every_module_in_the_map_exists_and_every_module_is_in_the_map():
    listed = set()
    parent = ""
    for entry in _module_map():
        if entry.endswith("/"):
            parent = entry
            listed.add(entry.rstrip("/"))
        elif entry.endswith(".py"):
            top = (ROOT / "pac_particles" / entry).exists()
            listed.add(entry if top else parent + entry)
    for entry in listed:
        assert (ROOT / "pac_particles" / entry).exists(), entry
    for path in (ROOT / "pac_particles").rglob("*.py"):
        rel = path.relative_to(ROOT / "pac_particles").as_posix()
        if rel == "__init__.py" or "__pycache__" in rel:
            continue
        package = rel.split("/")[0]
        covered = rel in listed or (package in listed and "/" in rel)
        assert covered, f"{rel} is missing from the README's module map"
