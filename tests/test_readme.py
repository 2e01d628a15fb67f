"""The README and the pages of ``docs/`` stay true to the code: their
import paths resolve, the README's code runs, its links resolve, it stays a
short guide, and the module map of ``docs/architecture.md`` lists exactly
the package's modules."""

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
PAGES = {path.relative_to(ROOT).as_posix(): path.read_text()
         for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]}
ARCHITECTURE = (ROOT / "docs" / "architecture.md").read_text()

#: the README is a guide; the rest lives in docs/
README_MAX_LINES = 200

_IMPORT = re.compile(r"^\s*from (pac_particles[\w.]*) import \(?([\w, ]+)\)?",
                     re.M)
# a dotted name in quotes is a string (a file format's tag), not a path
_DOTTED = re.compile(r"(?<![\"'])(pac_particles(?:\.\w+)+)")
_LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
_CODE = re.compile(r"^```python\n(.*?)^```", re.M | re.S)


def _imports(text):
    """``from pac_particles.x import y`` lines and dotted names such as
    ``pac_particles.ep.EPLinear`` in a page."""
    pairs = []
    for module, names in _IMPORT.findall(text):
        pairs += [(module, name.strip()) for name in names.split(",")
                  if name.strip()]
    for dotted in _DOTTED.findall(text):
        head, _, tail = dotted.rpartition(".")
        pairs.append((head, tail))
    return sorted(set(pairs))


def _all_imports():
    return sorted({pair for text in PAGES.values() for pair in _imports(text)})


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


def test_readme_is_a_short_guide_that_shows_imports():
    assert len(README.splitlines()) <= README_MAX_LINES
    assert len(_imports(README)) >= 5
    assert len(_all_imports()) >= 10


@pytest.mark.parametrize("module,name", _all_imports())
def test_every_import_in_the_readme_and_docs_resolves(module, name):
    _resolve(module, name)


@pytest.mark.parametrize("page", sorted(PAGES))
def test_every_relative_link_resolves(page):
    base = (ROOT / page).parent
    for target in _LINK.findall(PAGES[page]):
        if "://" in target or target.startswith("mailto:"):
            continue
        assert (base / target).exists(), f"{page} links to missing {target}"


@pytest.mark.parametrize("number", range(len(_CODE.findall(README))))
def test_the_readme_code_runs(number, tmp_path, monkeypatch):
    """Each ```python block of the README, as a user would paste it (the
    blocks use built-in data and small runs)."""
    monkeypatch.chdir(tmp_path)
    exec(compile(_CODE.findall(README)[number], f"README block {number}",
                 "exec"), {"__name__": "__readme__"})


def _module_map():
    block = ARCHITECTURE[ARCHITECTURE.index("## Layout"):]
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
        assert covered, f"{rel} is missing from the module map of docs/architecture.md"
