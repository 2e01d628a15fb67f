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
    ``pac_particles.approx.ep.EPLinear`` in a page."""
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
    """The files of the map in ``docs/architecture.md``: its tree indents
    two spaces per level below ``pac_particles/``."""
    block = ARCHITECTURE[ARCHITECTURE.index("    pac_particles/"):]
    listed, stack = set(), []
    for line in block.splitlines()[1:]:
        match = re.match(r"^( {6,})(\w+(?:\.py|/))(?:\s|$)", line)
        if not match:
            if line.strip() and len(line) - len(line.lstrip()) < 6:
                break                      # the tree of pac_particles/ ended
            continue
        depth = (len(match.group(1)) - 6) // 2
        stack = stack[:depth] + [match.group(2).rstrip("/")]
        if match.group(2).endswith(".py"):
            listed.add("/".join(stack))
    return listed


def test_every_module_in_the_map_exists_and_every_module_is_in_the_map():
    listed = _module_map()
    for entry in sorted(listed):
        assert (ROOT / "pac_particles" / entry).exists(), (
            f"docs/architecture.md lists {entry}, which does not exist")
    for path in (ROOT / "pac_particles").rglob("*.py"):
        rel = path.relative_to(ROOT / "pac_particles").as_posix()
        if rel.endswith("__init__.py") and rel != "__init__.py":
            continue                       # a subpackage's docstring
        assert rel in listed, f"{rel} is missing from the module map of docs/architecture.md"


# ------------------------------------------------ cross-references resolve

#: a section named in prose: ``docs/benchmarks.md, "Default fits"``,
#: ``README ("Your own data in ten lines")``, ``user_guide.md, "..."``
_SECTION_REF = re.compile(
    r"\b(README|(?:docs/)?(?:user_guide|benchmarks|architecture|equations|"
    r"examples|gpu))(?:\.md)?,?\s*\(?\s*\"([^\"()=]{3,100})\"")


def _headings(text):
    """The section titles of a Markdown page, without ``#`` and backticks,
    whitespace collapsed, lower case."""
    return [" ".join(line.lstrip("#").replace("`", "").split()).lower()
            for line in text.splitlines() if line.startswith("#")]


def _section_refs():
    """``(where, page, title)`` of every section reference in the pages,
    the package's docstrings and the tests."""
    sources = dict(PAGES)
    for folder in ("pac_particles", "tests", "scripts", "diagnostics"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path != Path(__file__).resolve():    # this test's patterns
                sources[path.relative_to(ROOT).as_posix()] = path.read_text()
    refs = []
    for where, text in sources.items():
        for page, title in _SECTION_REF.findall(text):
            page = "README.md" if page == "README" else (
                "docs/" + page.removeprefix("docs/") + ".md")
            # a title broken over comment lines ("#:" continuations)
            title = re.sub(r"#:?", " ", title)
            refs.append((where, page, " ".join(title.split())))
    return sorted(set(refs))


def test_every_section_reference_names_a_section_of_its_page():
    refs = _section_refs()
    assert len(refs) >= 5                  # the pattern finds them
    broken = []
    for where, page, title in refs:
        headings = _headings((ROOT / page).read_text())
        wanted = title.replace("`", "").lower()
        if not any(h == wanted or h.startswith(wanted + " (")
                   for h in headings):
            broken.append(f"{where} names {page}, \"{title}\"")
    assert not broken, "\n".join(broken)


# --------------------------- the user guide's reference of PACBayesAUC

def _reference_entries(kind):
    """The names of the ``**Parameters**`` or ``**Attributes**`` entries of
    the user guide's "Every parameter and attribute of `PACBayesAUC`", and
    the entries themselves."""
    guide = PAGES["docs/user_guide.md"]
    section = guide[guide.index("### Every parameter and attribute"):]
    block = section[section.index(f"**{kind}**"):]
    block = block[:block.index("\n**", 2)]
    entries = [line for line in block.splitlines() if line.startswith("- ")]
    names = set()
    for entry in entries:
        names.update(n.strip() for n in
                     re.match(r"- `([^`]+)`", entry).group(1).split(","))
    return names, entries


def _docstring_attributes(cls):
    """The attribute names of ``cls``'s numpydoc ``Attributes`` section
    (entries ``name, name : text``)."""
    doc = cls.__doc__
    block = doc[doc.index("Attributes\n"):]
    names = set()
    for line in block.splitlines()[2:]:
        match = re.match(r"^    ([\w, ]+) : ", line)
        if match:
            names.update(n.strip() for n in match.group(1).split(","))
    return names


def test_the_guides_reference_lists_every_parameter_and_attribute():
    from pac_particles.sklearn.estimator import PACBayesAUC
    params, entries = _reference_entries("Parameters")
    assert params == set(PACBayesAUC().get_params()), (
        "docs/user_guide.md's parameters differ from get_params(): "
        f"{params ^ set(PACBayesAUC().get_params())}")
    attributes, more = _reference_entries("Attributes")
    missing = _docstring_attributes(PACBayesAUC) - attributes
    assert not missing, f"attributes not in the user guide: {missing}"
    # each entry: a name, an optional type in brackets, a colon, the text
    # (a sentence cut into the brackets reads "(float in [0, 1], ...: with):")
    for entry in entries + more:
        assert re.match(r"^- `[^`]+`(?: \([^:]*?\))?: \S", entry), entry
