"""Which cell of a table is not a finite number, and what to do about it.

:func:`check_columns` names the first such cell of ``X`` (its column and
row, by name for a pandas DataFrame) in an
:class:`~pac_particles.core.checks.InputError` that says how to fix it: the
message of every validator of the package
(:func:`pac_particles.problem.data.validate_xy`, the estimators' input
checks) when the rows hold text, NaN or infinite values.
"""

import math
import numbers

import numpy as np

from pac_particles.core.checks import InputError

__all__ = ["check_columns"]


#: what to do about each kind of bad cell, in the messages of
#: :func:`check_columns`
_FIXES = {
    "text": "encode it as numbers (one column per category, e.g. with "
            "pandas.get_dummies) or leave the column out",
    "NaN": "fill the missing values (e.g. sklearn.impute.SimpleImputer in "
           "a Pipeline) or drop those rows",
    "inf": "replace the infinite values or drop those rows",
}


def _bad_cell(values):
    """``(row, kind, value)`` of the first cell of the 1-D array ``values``
    that is not a finite number (``kind``: ``"text"``, ``"NaN"`` or
    ``"inf"``), or None; None too for cells that are other objects (their
    conversion's own error is clearer than a guess)."""
    kind = values.dtype.kind
    if kind in "biuc":
        return None
    if kind == "f":
        bad = ~np.isfinite(values)
        if not bad.any():
            return None
        row = int(np.argmax(bad))
        return row, "NaN" if np.isnan(values[row]) else "inf", values[row]
    for row, value in enumerate(values):
        if value is None or type(value).__name__ == "NAType":
            return row, "NaN", value
        if isinstance(value, str):
            try:
                value = float(value)
            except ValueError:
                return row, "text", value
        elif not isinstance(value, numbers.Real):
            return None
        if math.isnan(value):
            return row, "NaN", value
        if math.isinf(value):
            return row, "inf", value
    return None


def check_columns(X, name="X"):
    """InputError naming the first cell of ``X`` that is not a finite
    number: its column and its row (by name and index label for a pandas
    DataFrame, by 0-based index otherwise) and what to do; a 1-D ``X`` is refused
    saying how to reshape it. Other inputs (sparse matrices, Dask
    collections, objects that are not numbers or strings) pass, to the
    caller's own checks.

    Examples
    --------
    >>> import pandas as pd
    >>> check_columns(pd.DataFrame({"age": [31, 40], "region": ["north", "south"]}))
    Traceback (most recent call last):
    ...
    pac_particles.core.checks.InputError: X column 'region' is not numeric: the row at index 0 holds 'north'; encode it as numbers (one column per category, e.g. with pandas.get_dummies) or leave the column out
    """
    rows = None
    if hasattr(X, "iloc") and hasattr(X, "columns"):       # a DataFrame
        cells = ((repr(column), X.iloc[:, k].to_numpy())
                 for k, column in enumerate(X.columns))
        rows = X.index                      # rows by their index labels
    elif hasattr(X, "__array__") or isinstance(X, (list, tuple)):
        if hasattr(X, "dask") or hasattr(X, "tocsr"):     # Dask, sparse
            return
        try:
            table = np.asarray(X)
        except (TypeError, ValueError):
            return
        if table.ndim == 1 and table.dtype.kind in "biufOUS":
            raise InputError(
                f"{name} must be 2-D (rows x features), got a 1-D array of "
                f"{table.size} values: reshape your data with "
                f"{name}.reshape(-1, 1) for one feature, or "
                f"{name}.reshape(1, -1) for one row")
        if table.ndim != 2:
            return
        cells = ((f"{k} ({name}[:, {k}])", table[:, k])
                 for k in range(table.shape[1]))
    else:
        return
    for column, values in cells:
        bad = _bad_cell(values)
        if bad is None:
            continue
        row, kind, value = bad
        at = f"the row at index {row if rows is None else rows[row]!r}"
        what = {"text": f"is not numeric: {at} holds {value!r}",
                "NaN": f"holds NaN (a missing value) in {at}",
                "inf": f"holds {value!r} (an infinite value) in {at}"}[kind]
        raise InputError(f"{name} column {column} {what}; {_FIXES[kind]}")
