"""The registry of methods: found by name, asked through the protocol."""

import ast
import pathlib
import pickle

import numpy as np
import pytest

from pac_particles.core.checks import InputError
from pac_particles.sklearn.classifier import PACBayesClassifier
from pac_particles.sklearn.estimator import PACBayesAUC
from pac_particles.sklearn.methods import (FitOptions, Method, choose_method,
                                           get_method, method_names, register,
                                           unregister)

from builders import two_blobs


@pytest.fixture
def toy():
    """The toy method of ``tests/sklearn/toy_method.py``, registered by
    importing that file, unregistered after the test."""
    import importlib
    import toy_method as module
    if module.TOY_NAME not in method_names():
        importlib.reload(module)
    yield module
    unregister(module.TOY_NAME)


def test_a_method_registered_in_one_file_fits_through_the_estimator(toy):
    X, y = two_blobs(n=120, d=3, seed=0)
    est = PACBayesAUC(method=toy.TOY_NAME, lam=50.0, random_state=0).fit(X, y)
    assert est.method_ == toy.TOY_NAME
    positives = y == 1
    difference = X[positives].mean(axis=0) - X[~positives].mean(axis=0)
    # standardised then mapped back: the direction of the raw difference
    # divided by the column variances
    direction = difference / X.var(axis=0)
    cosine = est.coef_ @ direction / (np.linalg.norm(est.coef_)
                                      * np.linalg.norm(direction))
    assert cosine > 0.999
    assert 0.5 < est.score(X, y) <= 1.0
    assert 0.0 <= est.certified_auc_risk_ <= 1.0
    lower, upper = est.coefficient_intervals().iloc[:, 1:].to_numpy().T
    assert np.all(lower <= est.coef_) and np.all(est.coef_ <= upper)
    # the command line and the estimator's parameter check list it
    assert toy.TOY_NAME in method_names("ranking")
    # a pickled fit names its method and scores the same
    again = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(again.decision_function(X),
                                  est.decision_function(X))


def test_a_method_that_refuses_says_why_and_auto_never_picks_it(toy):
    X, y = two_blobs(n=60, d=2, seed=1)
    with pytest.raises(InputError, match="takes a float lam"):
        PACBayesAUC(method=toy.TOY_NAME).fit(X, y)
    assert choose_method("auto", FitOptions(lam=1.0), 60).name == "smc"
    # a ranking-only method is not a classifier's to choose
    assert toy.TOY_NAME not in method_names("classification")
    with pytest.raises(InputError, match="method must be one of"):
        PACBayesClassifier(method=toy.TOY_NAME, lam=10.0).fit(X, y)


def test_a_name_is_registered_once_and_auto_is_reserved():
    with pytest.raises(InputError, match="registered already"):
        register(get_method("smc"))

    class Auto(Method):
        name = "auto"
    with pytest.raises(InputError, match="registered already"):
        register(Auto())
    with pytest.raises(InputError, match="method must be one of"):
        get_method("laplace")


@pytest.mark.parametrize("options, n, expected", [
    (dict(lam=10.0), 400, "smc"),
    (dict(lam=10.0), 401, "vb"),
    (dict(kernel="rbf"), 300, "ep"),          # SMC refuses lam='cv' for it
    (dict(prior="spike_slab"), 300, "ep"),
    (dict(kernel="rbf", lam=10.0), 300, "smc"),
    (dict(kernel="rbf", lam=10.0, backend="jax"), 300, "ep"),
])
def test_auto_picks_the_first_method_that_supports_the_fit(options, n,
                                                           expected):
    assert choose_method("auto", FitOptions(**options), n).name == expected


def test_every_method_is_asked_never_named_outside_the_registry():
    """No module of the package compares a method's name with a string
    (``method_ == "smc"``, ``method in ("ep", "vb")``) outside
    ``sklearn/methods``: callers ask the method object or the posterior."""
    names = {"smc", "ep", "vb"}
    package = pathlib.Path(__file__).resolve().parents[2] / "pac_particles"
    found = []
    for path in sorted(package.rglob("*.py")):
        if "methods" in path.relative_to(package).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Compare):
                continue
            sides = [node.left, *node.comparators]
            constants = set()
            for side in sides:
                values = (side.elts if isinstance(side, (ast.Tuple, ast.List,
                                                          ast.Set))
                          else [side])
                constants |= {v.value for v in values
                              if isinstance(v, ast.Constant)}
            named = any("method" in ast.unparse(side).lower()
                        for side in sides)
            if named and constants & names:
                found.append(f"{path.relative_to(package)}:{node.lineno}: "
                             f"{ast.unparse(node)}")
    assert not found, "method names compared:\n" + "\n".join(found)


SMALL = dict(n_particles=12, len_chain=3, n_folds=2, grid_size=4,
             random_state=0)


def _fits_or_says_what_to_pass(make, X, y):
    """A fit, or an InputError that names what to pass instead."""
    try:
        est = make().fit(X, y)
    except InputError as error:
        message = str(error)
        assert any(word in message for word in ("use ", "give ", "pass ")), (
            f"a refusal that does not say what to pass: {message}")
        return None
    return est


@pytest.mark.parametrize("pu_prior", [None, 0.3])
@pytest.mark.parametrize("prior", ["gaussian", "spike_slab"])
@pytest.mark.parametrize("kernel", [None, "rbf"])
@pytest.mark.parametrize("method", method_names("ranking"))
def test_every_ranking_option_fits_at_its_defaults_or_says_what_to_pass(
        method, kernel, prior, pu_prior):
    """lam left at its default ('cv'): each documented combination fits, or
    refuses in a sentence that says what to pass; 'auto' always fits."""
    X, y = two_blobs(n=50, d=3, seed=2)
    est = _fits_or_says_what_to_pass(
        lambda: PACBayesAUC(method=method, kernel=kernel, prior=prior,
                            pu_prior=pu_prior, **SMALL), X, y)
    if method == "auto" and not (kernel and prior == "spike_slab"):
        assert est is not None and est.method_ in method_names("ranking")
    if est is not None:
        assert 0.0 <= est.certified_auc_risk_ <= 1.0
        assert np.all(np.isfinite(est.decision_function(X)))


@pytest.mark.parametrize("pu_prior", [None, 0.3])
@pytest.mark.parametrize("loss", ["auto", "zero_one", "hinge", "exponential",
                                  "ramp"])
@pytest.mark.parametrize("method", method_names("classification"))
def test_every_classifier_option_fits_at_its_defaults_or_says_what_to_pass(
        method, loss, pu_prior):
    """The loss "auto" (the default) fits with every method: the first of
    AUTO_LOSSES the method fits (EP: the 0-1 loss)."""
    from pac_particles.sklearn.classifier import AUTO_LOSSES
    X, y = two_blobs(n=50, d=3, seed=3)
    settings = dict(SMALL, grid_size=3)
    est = _fits_or_says_what_to_pass(
        lambda: PACBayesClassifier(method=method, loss=loss,
                                   pu_prior=pu_prior, **settings), X, y)
    if loss == "auto":
        # the first of AUTO_LOSSES the method fits
        from pac_particles.sklearn.methods import FitOptions, get_method
        assert est is not None
        fits = [get_method(est.method_).refusal(
            FitOptions(loss=name, pu_prior=pu_prior), "classification") is None
            for name in AUTO_LOSSES]
        assert est.loss_ == AUTO_LOSSES[fits.index(True)]
    if est is not None:
        assert np.all(np.isfinite(est.predict_proba(X)))


def test_auto_leaves_smc_to_ranking_and_gives_classification_to_vb():
    from pac_particles.sklearn.methods import FitOptions, choose_method
    assert choose_method("auto", FitOptions(), n=300).name == "smc"
    assert choose_method("auto", FitOptions(loss="hinge"), n=300,
                         task="classification").name == "vb"
    assert choose_method("smc", FitOptions(), n=300,
                         task="classification").name == "smc"
