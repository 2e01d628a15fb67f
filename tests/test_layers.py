"""The layering rule of the package, checked on the imports of its source.

The subpackages form layers (``docs/architecture.md``)::

    core < problem < approx < smc < bounds < sklearn < apps < lab

A module imports only from its own layer and the layers below it; every
import counts, at the top of a module or inside a function. ``lab/`` (the
studies and reference implementations beside the package, outside the
wheel) is the top layer: the package never imports it. Private names (one
leading underscore) stay inside their subpackage, and the tests use public
names only. The facade ``pac_particles/__init__.py`` re-exports by name
(strings), so it is outside the rule. A module stays under the size of one
concept, and no docstring or comment of the package quotes a measured
time (those go to docs/benchmarks.md).
"""

import ast
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "pac_particles"
LAB = ROOT / "lab"
TESTS = pathlib.Path(__file__).resolve().parent
LAYERS = ("core", "problem", "approx", "smc", "bounds", "sklearn", "apps", "lab")
#: the top-level packages whose imports the rule reads
TOP = ("pac_particles", "lab")


def _modules():
    """``(path, parts)`` of every module of the package and of the lab;
    the lab's parts start with ``lab``, its layer."""
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        if parts == ("__init__",):
            continue
        yield path, parts
    for path in sorted(LAB.rglob("*.py")):
        yield path, path.relative_to(ROOT).with_suffix("").parts


def _package_modules():
    return [(path, parts) for path, parts in _modules() if parts[0] != "lab"]


def _imports(path):
    """``(module, names, line)`` of every ``pac_particles`` or ``lab``
    import of a file."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                raise AssertionError(f"{path}:{node.lineno}: relative import "
                                     "(the package imports absolutely)")
            if node.module and node.module.split(".")[0] in TOP:
                yield node.module, [a.name for a in node.names], node.lineno
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in TOP:
                    yield alias.name, [], node.lineno


def _layer(dotted):
    parts = dotted.split(".")
    if parts[0] == "lab":
        return "lab"
    return parts[1] if len(parts) > 1 else None


def test_every_module_sits_in_a_layer():
    stray = ["/".join(parts) for _, parts in _modules()
             if parts[0] not in LAYERS]
    assert not stray, f"modules outside the layers {LAYERS}: {stray}"


@pytest.mark.parametrize("path, parts", list(_modules()),
                         ids=lambda v: "/".join(v) if isinstance(v, tuple) else "")
def test_a_module_imports_only_its_layer_and_those_below(path, parts):
    own = LAYERS.index(parts[0])
    for module, names, line in _imports(path):
        layer = _layer(module)
        if layer is None:
            assert names == ["__version__"], (
                f"{path}:{line} imports {names} from the facade; import them "
                "from their module")
            continue
        assert layer in LAYERS, f"{path}:{line}: unknown module {module}"
        assert LAYERS.index(layer) <= own, (
            f"{'/'.join(parts)} ({parts[0]}) imports {module} ({layer}) at "
            f"line {line}: a layer above its own")


@pytest.mark.parametrize("path, parts", list(_modules()),
                         ids=lambda v: "/".join(v) if isinstance(v, tuple) else "")
def test_private_names_stay_in_their_subpackage(path, parts):
    own = parts[:-1]
    for module, names, line in _imports(path):
        private = [n for n in names if n.startswith("_")
                   and not n.startswith("__")]
        dotted = module.split(".")
        source = tuple(dotted[:-1] if dotted[0] == "lab" else dotted[1:-1])
        assert not private or source == tuple(own), (
            f"{path}:{line} imports {private} from {module}: private names "
            "stay inside their subpackage")


def test_the_tests_use_public_names_only():
    offenders = []
    for path in sorted(TESTS.rglob("*.py")):
        for module, names, line in _imports(path):
            private = [n for n in names if n.startswith("_")
                       and not n.startswith("__")]
            if private:
                offenders.append(f"{path.relative_to(TESTS)}:{line} {private}")
    assert not offenders, offenders


def test_the_layer_check_rejects_an_import_from_above(tmp_path):
    """The rule is not vacuous: a core module importing the estimator fails."""
    bad = tmp_path / "bad.py"
    bad.write_text("from pac_particles.sklearn.estimator import PACBayesAUC\n"
                   "def f():\n    from pac_particles.smc import models\n")
    layers = [_layer(module) for module, _, _ in _imports(bad)]
    assert layers == ["sklearn", "smc"]
    assert all(LAYERS.index(layer) > LAYERS.index("core") for layer in layers)


def test_the_package_never_imports_the_lab(tmp_path):
    """The lab is the top layer: an import of it from the package (here
    from apps, the package's top) is an import from above."""
    bad = tmp_path / "bad.py"
    bad.write_text("from lab.study import compare_scorers\n")
    [(module, _, _)] = list(_imports(bad))
    assert LAYERS.index(_layer(module)) > LAYERS.index("apps")
    assert not any(_layer(m) == "lab" for path, _ in _package_modules()
                   for m, _, _ in _imports(path))


def test_the_wheel_packages_no_lab_module():
    """``setup.cfg`` finds ``pac_particles*`` only: the lab stays out."""
    import setuptools
    found = setuptools.find_packages(str(ROOT), include=["pac_particles*"])
    assert "pac_particles" in found and "pac_particles.apps" in found
    assert not [name for name in found if name.split(".")[0] == "lab"
                or "study" in name.split(".")]
    assert "include = pac_particles*" in (ROOT / "setup.cfg").read_text()


#: a measured time: a decimal number of seconds ("0.45 s") or a number of
#: milliseconds, seconds or minutes; measured figures belong on the
#: benchmarks page (docs/benchmarks.md), where they carry their date and
#: machine
MEASURED_TIME = re.compile(r"\b\d+(?:\.\d+)?\s?(?:ms|seconds|minutes|CPU s)\b"
                           r"|\b\d+\.\d+\s?s\b")


def measured_times(source):
    """``(line, text)`` of every docstring or comment of ``source`` that
    quotes a measured time (:data:`MEASURED_TIME`)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                             ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node)
            if doc and (hit := MEASURED_TIME.search(doc)):
                found.append((getattr(node, "lineno", 1), hit.group()))
    for number, line in enumerate(source.splitlines(), 1):
        comment = line.split("#", 1)[1] if "#" in line else ""
        if comment and (hit := MEASURED_TIME.search(comment)):
            found.append((number, hit.group()))
    return found


def test_no_docstring_or_comment_quotes_a_measured_time():
    quoted = {"/".join(parts): hits for path, parts in _package_modules()
              if (hits := measured_times(path.read_text()))}
    assert not quoted, f"measured times in the package: {quoted}"


def test_the_measured_time_check_sees_one():
    source = ('def fit():\n    """Fits in 0.45 s at a million rows."""\n'
              '    return 1  # about 12 seconds on two cores\n'
              'def shape():\n    """(s, d) draws; sqrt(s / 2 s)."""\n')
    assert [text for _, text in measured_times(source)] == ["0.45 s",
                                                             "12 seconds"]


#: the most lines a module of the package may have: one concept per module
MAX_MODULE_LINES = 600


def test_no_module_is_over_the_size_of_one_concept():
    long = {"/".join(parts): n for path, parts in _package_modules()
            if (n := len(path.read_text().splitlines())) > MAX_MODULE_LINES}
    assert not long, f"modules over {MAX_MODULE_LINES} lines: {long}"


@pytest.mark.parametrize("module, name", [
    ("sklearn/estimator.py", "PACBayesAUC"),
    ("sklearn/classifier.py", "PACBayesClassifier")])
def test_the_estimators_are_thin_faces(module, name):
    """Each estimator class, docstring included, stays under 300 lines: the
    fitting lives in the per-method fitters, the certificates in bounds."""
    tree = ast.parse((PACKAGE / module).read_text())
    node = next(n for n in tree.body
                if isinstance(n, ast.ClassDef) and n.name == name)
    assert node.end_lineno - node.lineno + 1 < 300


def _private_reads(modules=None):
    """``(subpackage, "path:line expr", defining subpackages)`` of every read
    of a private attribute ``obj._name`` (``obj`` not ``self``, ``cls`` or
    ``super()``), with the subpackages that define ``_name`` (a method,
    class or function of that name, or an assignment to it)."""
    defined, reads = {}, []
    for path, parts in (_modules() if modules is None else modules):
        own = parts[0]
        for node in ast.walk(ast.parse(path.read_text())):
            name = None
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef,
                                 ast.ClassDef)):
                name = node.name
            elif isinstance(node, ast.Name) and isinstance(node.ctx,
                                                           ast.Store):
                name = node.id
            elif isinstance(node, ast.Attribute):
                if isinstance(node.ctx, ast.Store):
                    name = node.attr
                elif (node.attr.startswith("_")
                      and not node.attr.startswith("__")):
                    base = node.value
                    if not ((isinstance(base, ast.Name)
                             and base.id in ("self", "cls"))
                            or (isinstance(base, ast.Call)
                                and getattr(base.func, "id", "") == "super")):
                        reads.append((own, node.attr, f"{'/'.join(parts)}:"
                                      f"{node.lineno} {ast.unparse(node)}"))
            if name and name.startswith("_") and not name.startswith("__"):
                defined.setdefault(name, set()).add(own)
    return [(own, where, sorted(defined.get(attr, ())))
            for own, attr, where in reads
            if defined.get(attr) and own not in defined[attr]]


def test_no_private_attribute_is_read_across_subpackages():
    """A subpackage reads another's objects through their public names: an
    estimator's private method called from a fitter, a result's private
    field read by a certificate, is a protocol that is missing."""
    across = _private_reads()
    assert not across, "private attributes read across subpackages:\n" + \
        "\n".join(f"{where} (defined in {defs})" for _, where, defs in across)


def test_the_private_read_check_sees_a_read_across(tmp_path):
    """The rule is not vacuous: a fitter calling an estimator's private
    method is caught, a method reading its own is not."""
    fitter, estimator = tmp_path / "fitter.py", tmp_path / "estimator.py"
    fitter.write_text("def fit(est):\n    return est._most_certified(1)\n")
    estimator.write_text("class E:\n    def _most_certified(self, x):\n"
                         "        return self._most_certified\n")
    across = _private_reads([(fitter, ("smc", "fitter")),
                             (estimator, ("sklearn", "estimator"))])
    assert [where for _, where, _ in across] == [
        "smc/fitter:2 est._most_certified"]
