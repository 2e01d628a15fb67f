"""The held-out split of the commands that fit (demo, fit, classify) and
the fit on its training part; the folds the logistic-regression baseline
can use.

A split that would leave a part without both classes raises
:class:`~pac_particles.core.checks.InputError` naming the cause and the way
out, before any fitting (scikit-learn's own errors name neither).
"""

import math
import time
import warnings

import numpy as np
from sklearn.model_selection import train_test_split

from pac_particles.core.checks import InputError
from pac_particles.problem.data import validate_xy


def _class_name(label, classes):
    """How a message names class ``label`` (a 0/1 code when ``classes``
    gives the labels it stands for)."""
    if classes is not None:
        return repr(classes[int(label)])
    return f"{label:g}"


def _split(X, y, test_size, seed, no_test_set=True, classes=None):
    """Stratified split, or InputError when the rows are too few for each
    part to hold both classes (a training part needs them to fit, a test
    part to score); scikit-learn's own errors name neither the cause
    nor the way out. ``no_test_set``: whether ``--test-size 0`` (fit on
    all rows) is a way out to suggest (not in the demo). ``classes``: the
    labels that 0/1 codes in ``y`` stand for (for the messages)."""
    or_all = (", or --test-size 0 to fit on all rows with no test set"
              if no_test_set else "")
    labels, counts = np.unique(y, return_counts=True)
    if counts.min() < 2:
        label = _class_name(labels[np.argmin(counts)], classes)
        raise InputError(f"class {label} has only 1 row: a held-out test "
                         "split needs at least 2 rows of each class (one to "
                         f"fit, one to test); add rows of that class{or_all}")
    n = len(y)
    # scikit-learn's rounding of a fractional test size
    n_test = math.ceil(test_size * n)
    for part, size in (("test", n_test), ("training", n - n_test)):
        if size < 2:
            raise InputError(f"test_size = {test_size:g} leaves {size} "
                             f"{part} row(s) out of {n}: each part needs at "
                             "least 2 (one of each class); choose a "
                             f"test_size between {2 / n:.3g} and "
                             f"{1 - 2 / n:.3g}{or_all}")
    parts = train_test_split(X, y, test_size=test_size, stratify=y,
                             random_state=seed)
    for part, y_part in (("training", parts[2]), ("test", parts[3])):
        missing = np.setdiff1d(labels, y_part)
        if missing.size:
            raise InputError(f"test_size = {test_size:g} leaves no row of "
                             f"class {_class_name(missing[0], classes)} in "
                             f"the {part} part (the classes have "
                             f"{counts.min()} and {counts.max()} rows); "
                             "choose a test_size that gives each part both "
                             f"classes{or_all}")
    return parts


def _fit_on_split(estimator, X, y, test_size, seed, classes=None,
                  names=None):
    """Fit on the training part of a stratified split (all of the data when
    ``test_size`` is 0: no test part, ``None``s); returns ``X_tr, X_te, y_tr,
    y_te`` and the fit's seconds. ``names``: the CSV's column names, for
    the warning about columns constant on the training part."""
    if test_size > 0:
        X_tr, X_te, y_tr, y_te = _split(X, y, test_size, seed,
                                        classes=classes)
    else:
        X_tr, y_tr, X_te, y_te = X, y, None, None
    if names is not None:
        # warns of columns constant on the training part by their names;
        # the estimator's own warning (x1, x2, ...) would say it again
        validate_xy(X_tr, y_tr, feature_names=names)
    start = time.perf_counter()
    with warnings.catch_warnings():
        if names is not None:
            warnings.filterwarnings("ignore",
                                    message="dropping .* constant column")
        estimator.fit(X_tr, y_tr)
    return X_tr, X_te, y_tr, y_te, time.perf_counter() - start


def _baseline_folds(y):
    """The folds the logistic-regression baselines can use on the
    training labels ``y`` (at most 5, one member of each class per fold),
    or 0 when a class has a single row (no baseline then)."""
    smallest = int(min(np.sum(y), len(y) - np.sum(y)))
    return min(5, smallest) if smallest >= 2 else 0
