"""The registry of the estimators' methods: a name to a :class:`Method`.

Every caller (the estimators, the command line, the certificates) looks a
method up here and asks the object what it needs (:mod:`.base`); none
compares a method's name. Adding a method is one module with a
:class:`~pac_particles.sklearn.methods.base.Method` subclass and one line::

    register(MyMethod())

after which ``PACBayesAUC(method="mine")`` fits with it, ``method="auto"``
considers it (by its ``auto_order``) and ``--method`` lists it.

Example
-------
>>> from pac_particles.sklearn.methods import FitOptions, choose_method
>>> choose_method("auto", FitOptions(), n=500).name
'smc'
>>> choose_method("auto", FitOptions(kernel="rbf"), n=500).name   # lam='cv'
'ep'
"""

from __future__ import annotations

from typing import Dict, Tuple

from pac_particles.core.checks import InputError
from pac_particles.sklearn.methods.base import FitOptions, Method, MethodFit
from pac_particles.sklearn.methods.ep import EP
from pac_particles.sklearn.methods.smc import SMC
from pac_particles.sklearn.methods.vb import VB

__all__ = ["FitOptions", "Method", "MethodFit", "register", "unregister",
           "get_method", "method_names", "choose_method", "AUTO"]

#: the name that asks :func:`choose_method` to choose
AUTO = "auto"

_REGISTRY: Dict[str, Method] = {}


def register(method: Method) -> Method:
    """Add ``method`` under ``method.name`` (a name registered twice is an
    error: :func:`unregister` it first); returns it."""
    if not isinstance(method, Method) or not method.name:
        raise InputError("register takes a Method instance with a name")
    if method.name == AUTO or method.name in _REGISTRY:
        raise InputError(f"a method named {method.name!r} is registered "
                         "already")
    _REGISTRY[method.name] = method
    return method


def unregister(name: str) -> None:
    """Remove the method registered as ``name``."""
    _REGISTRY.pop(name, None)


def method_names(task: str = "ranking", auto: bool = True) -> Tuple[str, ...]:
    """The names a user may pass for ``task``, ``"auto"`` first when
    ``auto``."""
    names = tuple(name for name, method in _REGISTRY.items()
                  if task in method.tasks)
    return ((AUTO,) if auto else ()) + names


def get_method(name: str) -> Method:
    """The method registered as ``name`` (InputError listing the others)."""
    try:
        return _REGISTRY[name]
    except (KeyError, TypeError):
        raise InputError(f"method must be one of {method_names()}, got "
                         f"{name!r}") from None


def choose_method(requested: str, options: FitOptions, n: int,
                  task: str = "ranking", in_memory: bool = True) -> Method:
    """The method a fit uses: the one ``requested`` (checked: an
    InputError says why it cannot fit and what to pass), or for ``"auto"``
    the registered method of lowest ``auto_order`` that supports the fit
    and allows ``n`` rows: SMC (the reference) where it is affordable, then
    VB, then EP (which fits the GP and spike-and-slab priors VB does not)."""
    if requested != AUTO:
        method = get_method(requested)
        method.check(options, task, in_memory)
        return method
    candidates = sorted((m for m in _REGISTRY.values()
                         if m.auto_order is not None),
                        key=lambda m: int(m.auto_order or 0))
    for method in candidates:
        if (n <= method.auto_rows(task)
                and method.refusal(options, task, in_memory) is None):
            return method
    reasons = "; ".join(m.refusal(options, task, in_memory) or
                        f"{m.name}: more than {m.auto_rows(task):,} rows"
                        for m in candidates)
    raise InputError(f"no method supports this fit: {reasons}")


for _method in (SMC(), VB(), EP()):
    register(_method)
