"""The equation index ``docs/equations.md`` names only things that exist.

Every ``module:qualname`` in a table row must import and resolve (importlib,
then one ``getattr`` per dotted part), every ``tests/...py::test_name`` must
be a test function defined in that file (read with ``ast``, not run), and
every ``diagnostics/...py`` or ``scripts/...py`` must be a file of the
repository. A row whose target is renamed or removed therefore fails here
until the index is updated.
"""
import ast
import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
INDEX = ROOT / "docs" / "equations.md"

# inside backticks: `package.module:Qual.name`, `tests/x.py::test_y`,
# `diagnostics/x.py`, `scripts/x.py`
_TARGET = re.compile(r"`([A-Za-z_][\w.]*:[A-Za-z_][\w.]*)`")
_TEST = re.compile(r"`(tests/[\w/]+\.py)::([\w:]+)(?:\[[^\]`]*\])?`")
_SCRIPT = re.compile(r"`((?:diagnostics|scripts)/[\w/]+\.py)`")
# what a row says when it has no target or no test
_NOTHING = re.compile(r"not implemented|planned|none|not tested|nothing to compute",
                      re.IGNORECASE)
_ITEM = re.compile(r"^\[[A-Z][A-Za-z0-9]*\] \S")


def table_rows(text):
    """``(line number, cells)`` of every body row of every Markdown table."""
    rows = []
    lines = text.splitlines()
    for number, line in enumerate(lines, start=1):
        if not line.startswith("|"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if all(set(c) <= set(":- ") for c in cells):
            continue                          # the |---|---| separator
        previous = lines[number - 2] if number >= 2 else ""
        if not previous.startswith("|"):
            continue                          # the header row
        rows.append((number, cells))
    return rows


def resolve(name):
    """The object named ``module:qualname``; raises on any missing part."""
    module_name, qualname = name.split(":", 1)
    obj = importlib.import_module(module_name)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def defined_tests(path):
    """Names ``test_x`` and ``TestC::test_x`` defined in a test file."""
    tree = ast.parse(path.read_text(), filename=str(path))
    names = set()
    functions = (ast.FunctionDef, ast.AsyncFunctionDef)
    for node in tree.body:
        if isinstance(node, functions) and node.name.startswith("test"):
            names.add(node.name)
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            names.update(f"{node.name}::{item.name}" for item in node.body
                         if isinstance(item, functions)
                         and item.name.startswith("test"))
    return names


def problem_with_test(path, name):
    """Problem with ``path::name`` (None if the test exists)."""
    file = ROOT / path
    if not file.is_file():
        return f"no file {path}"
    if name not in defined_tests(file):
        return f"{path} defines no test {name}"
    return None


TEXT = INDEX.read_text()
ROWS = table_rows(TEXT)
TARGETS = sorted({m for _, cells in ROWS for m in _TARGET.findall(" ".join(cells))})
TESTS = sorted({m for _, cells in ROWS for m in _TEST.findall(" ".join(cells))})
SCRIPTS = sorted({m for _, cells in ROWS for m in _SCRIPT.findall(" ".join(cells))})


def test_index_opens_with_the_citation_key_line():
    lines = [line for line in TEXT.splitlines() if line.strip()]
    assert lines[0] == "# Equation index"
    assert "[RACL14, Alg. 4]" in lines[1] and "docstring" in lines[1].lower()


def test_index_has_rows_and_every_row_is_complete():
    """Four cells per row (item, what, implemented by, checked by); the item
    key is ``[KEY] number``, unique; a row without a target or without a test
    says so in words."""
    assert len(ROWS) > 60 and len(TARGETS) > 40 and len(TESTS) > 40
    seen = {}
    for number, cells in ROWS:
        assert len(cells) == 4, f"line {number}: {len(cells)} cells"
        item, what, implemented, checked = cells
        assert _ITEM.match(item), f"line {number}: item key {item!r}"
        assert item not in seen, f"line {number}: {item} repeats line {seen[item]}"
        seen[item] = number
        assert what, f"line {number}: empty description"
        assert _TARGET.search(implemented) or _NOTHING.search(implemented), (
            f"line {number}: no `module:qualname` and no 'not implemented' / 'planned'")
        assert (_TEST.search(checked) or _SCRIPT.search(checked)
                or _NOTHING.search(checked)), (
            f"line {number}: no test, no script and no 'none' / 'not tested'")


@pytest.mark.parametrize("name", TARGETS)
def test_every_target_resolves(name):
    try:
        resolve(name)
    except (ImportError, AttributeError) as error:
        pytest.fail(f"{name} does not resolve: {error!r}")


@pytest.mark.parametrize("path,name", TESTS, ids=[f"{p}::{n}" for p, n in TESTS])
def test_every_test_is_defined(path, name):
    problem = problem_with_test(path, name)
    assert problem is None, problem


@pytest.mark.parametrize("path", SCRIPTS)
def test_every_script_exists(path):
    assert (ROOT / path).is_file(), f"no file {path}"


def test_the_checks_reject_wrong_names():
    """The checks have power: a misspelt module, attribute, test or file fails."""
    row = ("| [RACL14] Alg. 9 | wrong | `pac_particles.approx.ep:EPLinearr` "
           "| `tests/approx/test_ep.py::test_no_such_test` |")
    rows = table_rows("| a | b | c | d |\n|---|---|---|---|\n" + row)
    assert len(rows) == 1
    (target,) = _TARGET.findall(" ".join(rows[0][1]))
    with pytest.raises(AttributeError):
        resolve(target)
    with pytest.raises(ImportError):
        resolve("pac_particles.no_such_module:f")
    (test,) = _TEST.findall(" ".join(rows[0][1]))
    assert problem_with_test(*test) == "tests/approx/test_ep.py defines no test test_no_such_test"
    assert problem_with_test("tests/test_nothing.py", "test_x") == "no file tests/test_nothing.py"
    assert problem_with_test("tests/approx/test_ep.py", "test_single_pair_is_exact") is None
