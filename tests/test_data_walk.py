"""The walk of the data through a fit: down the layers, never back up.

Following the training rows through ``PACBayesAUC.fit`` (the array, the
problem set up from it, its validated data and design), every call that
receives one of them is recorded with the module it is made from. A call
from a module into one of a higher layer is a climb back up: the layering
of the imports (``test_layers.py``) allows it through a callback or an
object handed down, and this walk rejects it, except for the methods of
the data objects themselves (``data.transform``, ``data.raw_linear``).
"""

import sys

import numpy as np
import pytest

from builders import two_blobs
from pac_particles.problem.problem import GibbsProblem
from pac_particles.sklearn.estimator import PACBayesAUC
from pac_particles.sklearn.methods import method_names

LAYERS = ("core", "problem", "approx", "smc", "bounds", "sklearn", "apps")


def _module(frame):
    name = frame.f_code.co_filename
    if "/pac_particles/" not in name:
        return None
    return name.split("/pac_particles/")[-1][:-3]


def _layer(module):
    return LAYERS.index(module.split("/")[0])


def data_walk(est, X, y):
    """``[(caller module, callee module, function, on a carrier)]`` of the
    calls of ``est.fit(X, y)`` that receive the data or what was made of it
    (the validated array, the problem, its data, design and labels)."""
    carriers = {}
    walk = []

    def carry(value):
        for v in (value, getattr(value, "data", None)):
            if v is not None and not isinstance(v, (int, float, str)):
                carriers[id(v)] = v
                for part in (getattr(v, "X", None), getattr(v, "y", None)):
                    if isinstance(part, np.ndarray):
                        carriers[id(part)] = part

    def arguments(frame):
        code = frame.f_code
        names = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
        return [frame.f_locals.get(name) for name in names]

    def tracer(frame, event, arg):
        module = _module(frame)
        if module is None:
            return None
        if event == "call":
            if (not carriers and module == "sklearn/estimator"
                    and frame.f_code.co_name == "fit"):
                carry(frame.f_locals["X"])
            args = arguments(frame)
            if any(id(a) in carriers for a in args):
                caller = _module(frame.f_back) if frame.f_back else None
                walk.append((caller, module, frame.f_code.co_name,
                             bool(args) and id(args[0]) in carriers))
        elif event == "return" and arg is not None and (
                isinstance(arg, (GibbsProblem, tuple))):
            # what the data is made into: a problem set up anywhere, the
            # arrays that the problem layer (validation, labels) returns;
            # not what a sampler or a fit returns (particles, scores)
            made_of_data = module.startswith(("problem/", "sklearn/binary"))
            for value in (arg if isinstance(arg, tuple) else (arg,)):
                if isinstance(value, GibbsProblem) or (
                        made_of_data and isinstance(value, np.ndarray)):
                    carry(value)
        return tracer

    sys.settrace(tracer)
    try:
        est.fit(X, y)
    finally:
        sys.settrace(None)
    return walk


@pytest.mark.parametrize("method", method_names("ranking", auto=False))
def test_the_data_never_climbs_back_up_the_layers(method):
    X, y = two_blobs(n=60, d=3, seed=0)
    walk = data_walk(PACBayesAUC(method=method, n_particles=8, len_chain=3,
                                 n_folds=2, grid_size=3, random_state=0,
                                 n_jobs=1), X, y)
    assert len(walk) > 10           # the tracer followed the data
    climbs = [(caller, callee, name) for caller, callee, name, own in walk
              if caller and not own and _layer(callee) > _layer(caller)]
    assert not climbs, f"calls back up the layers: {climbs}"


def test_the_walk_sees_a_climb_back_up():
    """The check is not vacuous: a problem-layer function that hands the
    labels up to a function of the estimators' layer is caught."""
    from pac_particles.problem import problem as problem_module
    X, y = two_blobs(n=40, d=2, seed=1)
    est = PACBayesAUC(method="vb", lam=10.0, random_state=0)
    original = problem_module.GibbsProblem.at
    # compiled as code of problem/problem.py: the layer the walk sees
    source = ("def at(self, lam):\n"
              "    from pac_particles.sklearn.selection import folds\n"
              "    folds.fold_count(self.data.y, 2)\n"
              "    return original(self, lam)\n")
    scope = {"original": original}
    exec(compile(source, problem_module.__file__, "exec"), scope)
    problem_module.GibbsProblem.at = scope["at"]
    try:
        walk = data_walk(est, X, y)
    finally:
        problem_module.GibbsProblem.at = original
    assert any(caller == "problem/problem"
               and callee == "sklearn/selection/folds"
               for caller, callee, _, _ in walk)


def test_the_full_rows_are_set_up_once_per_fit_and_a_fold_once(monkeypatch):
    """GibbsProblem.ranking runs once on all the rows of a fit, once on
    each fold's training rows, and on the certificate's part A (its prior,
    a problem of half the rows by design); no second set-up of the full
    rows by the method, the selection of lam or the certificate."""
    X, y = two_blobs(n=80, d=3, seed=0)
    sizes = []
    original = GibbsProblem.ranking.__func__

    def counting(cls, X, *args, **kwargs):
        sizes.append(len(X))
        return original(cls, X, *args, **kwargs)
    monkeypatch.setattr(GibbsProblem, "ranking", classmethod(counting))
    for method in ("ep", "vb"):
        sizes.clear()
        PACBayesAUC(method=method, random_state=0).fit(X, y)
        assert sizes.count(len(y)) == 1, (method, sizes)
    sizes.clear()
    PACBayesAUC(method="smc", n_particles=8, len_chain=3, n_folds=2,
                grid_size=3, random_state=0, n_jobs=1).fit(X, y)
    folds = [n for n in sizes if n < len(y)]
    assert sizes.count(len(y)) == 1 and len(folds) >= 2, sizes


#: the most modules the data pass through in a fit of each method with
#: ``lam='cv'`` (the docs/architecture.md walk)
WALK_MODULES = {"smc": 10, "ep": 15, "vb": 15}


@pytest.mark.parametrize("method", sorted(WALK_MODULES))
def test_a_fit_walks_through_few_modules(method):
    """The modules the data pass through in a fit with ``lam='cv'`` (the
    docs/architecture.md walk). SMC: the estimator, the problem and its
    data, the method, the choice of ``lam`` with its folds, the model and
    its risk, EP's Gaussian that the refinement draws from (its base and
    linear model) and the certificate; EP and VB: the estimator, the
    problem and its data, the Gaussian methods' base and the method, the
    approximation (base and model), the risk and the AUC of its
    leave-one-out scores, and the certificate with the smoothed pair risk
    and its kernels, the rescaled KL, the posterior's protocol and the
    derandomised bound. No detour through a module that only forwards the
    data (the label check, the method's base, the Dask check, the GP
    features of a linear fit)."""
    X, y = two_blobs(n=60, d=3, seed=0)
    walk = data_walk(PACBayesAUC(method=method, n_particles=8, len_chain=3,
                                 n_folds=2, grid_size=3, random_state=0,
                                 n_jobs=1), X, y)
    modules = {callee for _, callee, _, _ in walk}
    for detour in ("sklearn/binary", "sklearn/methods/base",
                   "problem/dask_data", "sklearn/reduced_rank_gp"):
        assert detour not in modules, detour
    assert len(modules) <= WALK_MODULES[method], sorted(modules)
