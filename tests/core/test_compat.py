"""The one compatibility path for moved names (pac_particles.core.compat):
old module paths and old attribute homes keep working, warn with the new
path and the version that removes them, and imports of old paths nest and
run in threads without interfering."""

import importlib
import sys
import threading
import time
import warnings

import pytest

import pac_particles
from pac_particles.core.compat import (REMOVED_IN, MovedModules, moved_names,
                                       removal_version)


def test_the_old_paths_are_removed_in_the_next_minor_version():
    assert removal_version("0.1.0") == "0.2.0"
    assert removal_version("1.9.3") == "1.10.0"
    assert REMOVED_IN == removal_version(pac_particles.__version__)


def test_an_old_module_path_is_the_new_module_and_warns_with_its_name(
        monkeypatch):
    import pac_particles.smc.models as new
    monkeypatch.delitem(sys.modules, "pac_particles.models", raising=False)
    with pytest.warns(DeprecationWarning) as record:
        old = importlib.import_module("pac_particles.models")
    assert old is new and new.__spec__.name == "pac_particles.smc.models"
    message = str(record[0].message)
    assert "pac_particles.models" in message
    assert "use pac_particles.smc.models" in message and REMOVED_IN in message


def test_a_moved_attribute_works_and_warns_with_its_new_home():
    from pac_particles.core.kernels import SquaredExponential
    from pac_particles.smc.tempering import RobustAdaptiveTempering
    import pac_particles.problem.data as data
    import pac_particles.problem.priors as priors
    import pac_particles.smc.models as models
    for module, name, new in (
            (priors, "SquaredExponential", SquaredExponential),
            (models, "RobustAdaptiveTempering", RobustAdaptiveTempering)):
        with pytest.warns(DeprecationWarning, match=(
                rf"{module.__name__}\.{name} is deprecated: use "
                rf"{new.__module__}\.{name}.*{REMOVED_IN}")):
            assert getattr(module, name) is new
    with pytest.warns(DeprecationWarning,
                      match="use pac_particles.problem.datasets.load_dataset"):
        from pac_particles.problem.data import load_dataset  # noqa: F401
    with pytest.raises(AttributeError, match="no_such_name"):
        data.no_such_name


def test_the_current_paths_do_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        from pac_particles.core.kernels import SquaredExponential  # noqa: F401
        from pac_particles.smc.models import AUCGibbsModel  # noqa: F401
        from pac_particles.problem.datasets import load_dataset  # noqa: F401


class _SlowFinder(MovedModules):
    """Waits between creating a module and running it: other threads'
    imports of old paths run in that window (a finder keeping state
    between the two calls would hand one thread another's spec)."""

    def create_module(self, spec):
        module = super().create_module(spec)
        time.sleep(0.02)
        return module


@pytest.fixture
def toy_package(tmp_path, monkeypatch):
    """A package whose ``new_a`` imports the old path of ``new_b`` while it
    loads: the import of one old path nested in another's."""
    root = tmp_path / "compat_toy"
    root.mkdir()
    (root / "__init__.py").write_text("")
    (root / "new_a.py").write_text("import compat_toy.old_b\nA = 1\n")
    (root / "new_b.py").write_text("B = 2\n")
    for k in range(8):
        (root / f"new_{k}.py").write_text(f"VALUE = {k}\n")
    moved = {"old_a": "new_a", "old_b": "new_b",
             **{f"old_{k}": f"new_{k}" for k in range(8)}}
    finder = _SlowFinder("compat_toy", moved)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(sys, "meta_path", [finder] + sys.meta_path)
    yield
    for name in [n for n in sys.modules if n.split(".")[0] == "compat_toy"]:
        del sys.modules[name]


def test_an_import_of_an_old_path_nested_in_another_keeps_each_spec(
        toy_package):
    with pytest.warns(DeprecationWarning):
        old_a = importlib.import_module("compat_toy.old_a")
    new_a = sys.modules["compat_toy.new_a"]
    new_b = sys.modules["compat_toy.new_b"]
    assert old_a is new_a and sys.modules["compat_toy.old_b"] is new_b
    # each module keeps its own spec: the nested import did not hand the
    # outer one its spec
    assert new_a.__spec__.name == "compat_toy.new_a"
    assert new_b.__spec__.name == "compat_toy.new_b"


def test_imports_of_old_paths_in_threads_keep_each_spec(toy_package):
    barrier = threading.Barrier(8)
    found, errors = {}, []

    def load(k):
        try:
            barrier.wait()
            found[k] = importlib.import_module(f"compat_toy.old_{k}")
        except Exception as error:            # reported below
            errors.append(error)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        threads = [threading.Thread(target=load, args=(k,)) for k in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert not errors
    for k in range(8):
        assert found[k].VALUE == k
        assert found[k].__spec__.name == f"compat_toy.new_{k}"


def test_a_module_getattr_serves_only_the_moved_names():
    getattr_ = moved_names("somewhere",
                           {"warn_moved": "pac_particles.core.compat"})
    with pytest.warns(DeprecationWarning,
                      match="somewhere.warn_moved is deprecated"):
        assert callable(getattr_("warn_moved"))
    with pytest.raises(AttributeError):
        getattr_("y")
