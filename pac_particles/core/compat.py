"""The one compatibility path for names that moved: old module paths and
old attribute homes keep working for a deprecation period, with a warning.

Two kinds of move, one rule. A *module* that moved (``pac_particles.models``
is now ``pac_particles.smc.models``) is served by :class:`MovedModules`, a
finder on ``sys.meta_path``: importing the old path returns the module at
the new one, the same object, so classes, pickles and ``isinstance`` agree.
A *name* that moved out of a module (``load_dataset`` of
``pac_particles.problem.data``, now in ``pac_particles.problem.datasets``)
is served by the module ``__getattr__`` that :func:`moved_names` builds
(PEP 562). Either way :func:`warn_moved` emits one ``DeprecationWarning``
naming the new path and the version that removes the old one
(:data:`REMOVED_IN`, the next minor version).

The finder keeps no state between its calls: what an import needs travels
on that import's own spec (``loader_state``), so imports of old paths in
two threads, or one nested in another, do not interfere.

The module imports only the standard library: the package's facade
installs the finder at ``import pac_particles``, which loads nothing heavy.

Example
-------
::

    # in a module whose name FOO moved to pac_particles.core.bar:
    __getattr__ = moved_names(__name__, {"FOO": "pac_particles.core.bar"})
"""

import importlib
import importlib.abc
import importlib.util
import sys
import warnings
from typing import Callable, Dict, Optional

__all__ = ["REMOVED_IN", "removal_version", "warn_moved", "MovedModules",
           "moved_names"]


def removal_version(version: str) -> str:
    """The next minor version of ``version`` (``0.1.0`` -> ``0.2.0``): the
    release that removes the old paths."""
    major, minor = (int(part) for part in version.split(".")[:2])
    return f"{major}.{minor + 1}.0"


def _version() -> str:
    # the facade's: this module is imported while the facade loads, after
    # it has set __version__
    return sys.modules["pac_particles"].__version__


#: the version that removes the old paths
REMOVED_IN = removal_version(_version())


def warn_moved(old: str, new: str, stacklevel: int = 3) -> None:
    """``DeprecationWarning``: ``old`` moved to ``new`` and is removed in
    :data:`REMOVED_IN`."""
    warnings.warn(f"{old} is deprecated: use {new} (the old path is removed "
                  f"in pac_particles {REMOVED_IN})", DeprecationWarning,
                  stacklevel=stacklevel)


class MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports of an old module path return the module at its new path
    (``moved``: old path -> new path, both relative to ``package``; an old
    package's submodules follow it)."""

    def __init__(self, package: str, moved: Dict[str, str]):
        self.package = package
        self.moved = dict(moved)
        # longest first: pac_particles.ep.loo before pac_particles.ep
        self._keys = sorted(self.moved, key=len, reverse=True)

    def moved_to(self, fullname: str) -> Optional[str]:
        """The current name of an old module path, or None."""
        prefix = self.package + "."
        if not fullname.startswith(prefix):
            return None
        old = fullname[len(prefix):]
        for key in self._keys:
            if old == key or old.startswith(key + "."):
                return prefix + self.moved[key] + old[len(key):]
        return None

    def find_spec(self, fullname, path=None, target=None):
        new = self.moved_to(fullname)
        if new is None:
            return None
        spec = importlib.util.spec_from_loader(fullname, self)
        spec.loader_state = {"new": new}
        return spec

    def create_module(self, spec):
        # the warning points at the importing line (warnings skips importlib)
        warn_moved(spec.name, spec.loader_state["new"])
        module = importlib.import_module(spec.loader_state["new"])
        spec.loader_state["spec"] = module.__spec__
        return module

    def exec_module(self, module):
        # the import system stamped the old name's spec on the module: give
        # it back its own, carried on the old spec (this import's alone)
        module.__spec__ = module.__spec__.loader_state["spec"]


def moved_names(module: str, moved: Dict[str, str]) -> Callable[[str], object]:
    """A module ``__getattr__`` serving the names that left ``module``
    (``moved``: name -> the module that defines it now), with a warning;
    any other name raises ``AttributeError``."""

    def __getattr__(name):
        new = moved.get(name)
        if new is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        warn_moved(f"{module}.{name}", f"{new}.{name}")
        return getattr(importlib.import_module(new), name)

    return __getattr__
