"""Bad input to the estimators' ``fit``: one InputError each, in English,
naming what to fix -- the column (by name for a DataFrame, by index for an
array) and the row of a bad value, the counts of rows and labels, the
classes found. Each case fails before any fitting, so the sweep is fast."""

import numpy as np
import pandas as pd
import pytest

from pac_particles.core.checks import InputError
from pac_particles.problem.data import check_columns
from pac_particles.sklearn.classifier import PACBayesClassifier
from pac_particles.sklearn.estimator import PACBayesAUC

rng = np.random.default_rng(0)
Y = np.r_[np.zeros(10), np.ones(10)]


def _frame(**columns):
    base = {"age": rng.normal(size=20), "income": rng.normal(size=20)}
    base.update(columns)
    return pd.DataFrame(base, index=[f"c{k}" for k in range(20)])


def _with(value, row=3, column=1, d=3):
    X = rng.normal(size=(20, d)).astype(object if isinstance(value, str)
                                        else float)
    X[row, column] = value
    return X


#: (X, y, the phrases the message must hold)
CASES = {
    "a string column of a DataFrame": (
        _frame(region=["south"] * 20), Y,
        ["column 'region'", "not numeric", "'south'", "index 'c0'",
         "get_dummies"]),
    "a missing value in a DataFrame": (
        _frame(income=np.r_[rng.normal(size=5), np.nan, rng.normal(size=14)]),
        Y, ["column 'income'", "NaN (a missing value)", "index 'c5'",
            "fill the missing values"]),
    "an infinite value in an array": (
        _with(np.inf), Y, ["column 1 (X[:, 1])", "inf", "index 3"]),
    "text in an object array": (
        _with("n/a", row=7, column=2), Y,
        ["column 2 (X[:, 2])", "not numeric", "'n/a'", "index 7"]),
    "a 1-D X": (rng.normal(size=20), Y, ["2-D", "reshape(-1, 1)"]),
    "more labels than rows": (
        rng.normal(size=(19, 2)), Y, ["X has 19 rows but y has 20 labels"]),
    "a missing label": (
        rng.normal(size=(20, 2)), pd.Series(np.r_[Y[:4], np.nan, Y[5:]],
                                            index=range(100, 120)),
        ["y holds NaN", "index 104"]),
    "one class": (rng.normal(size=(20, 2)), np.ones(20),
                  ["only one class (1.0)", "add rows of the other class"]),
    "three classes": (rng.normal(size=(21, 2)), np.arange(21) % 3,
                      ["3 classes in y (0, 1, 2)", "merge them into two"]),
    "a continuous y": (rng.normal(size=(20, 2)), rng.normal(size=20),
                       ["Unknown label type", "two classes"]),
}


@pytest.mark.parametrize("estimator", [PACBayesAUC, PACBayesClassifier])
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_bad_fit_input_names_what_to_fix(estimator, case):
    X, y, phrases = CASES[case]
    with pytest.raises(InputError) as info:
        estimator(method="vb", lam=10.0).fit(X, y)
    message = str(info.value)
    for phrase in phrases:
        assert phrase in message, (case, message)
    # one sentence of English: no array dump, no doubled verb
    assert "\n" not in message and "needs AUC scoring needs" not in message


def test_the_one_class_message_reads_for_both_estimators():
    for estimator, says in ((PACBayesAUC, "AUC scoring needs positives and "
                             "negatives"),
                            (PACBayesClassifier, "the fit needs two classes")):
        with pytest.raises(InputError, match=says):
            estimator(method="vb", lam=10.0).fit(rng.normal(size=(6, 2)),
                                                 np.zeros(6))


def test_check_columns_lets_good_and_foreign_inputs_through():
    check_columns(_frame())                           # numbers: no error
    check_columns(np.array([["1.5", "2"], ["3", "4e2"]], dtype=object))
    # objects that are not numbers or strings: scikit-learn's own TypeError
    check_columns(np.array([[{"a": 1}, 1.0]], dtype=object))
    with pytest.raises(InputError, match="column 0"):
        check_columns(np.array([[None, 1.0]], dtype=object))
