"""The built-in data sets and the CSV reader: labels as read, then coded.

:func:`load_dataset` loads a built-in data set (the ``raw_data`` of
``particles.datasets``, or scikit-learn's breast cancer data) as ``(X, y,
feature_names)``. CSV files are read with pandas (:func:`load_csv`,
:func:`read_csv_table`, :func:`load_csv_features`): errors name the file,
the column and the 1-based data row, and say what to do; an unnamed first
column (pandas' index) is dropped with a :class:`CSVIndexWarning`.
:func:`encode_labels` turns any two labels into 0/1 codes by one documented
rule (``positive_label``, else the larger number or the lexicographically
larger string, with a :class:`LabelChoiceWarning`).

The validation of the data a fit uses is :mod:`pac_particles.problem.data`.

Example
-------
::

    from pac_particles.problem.datasets import load_dataset
    from pac_particles.problem.data import validate_xy
    X, y, names = load_dataset("pima")
    data = validate_xy(X, y, standardize=True)
    data.X_pos.shape, data.X_neg.shape      # ((268, 8), (500, 8))
"""

import csv
import numbers
import os
import warnings

import numpy as np
import pandas as pd

from pac_particles.core.checks import InputError

__all__ = ["load_dataset", "load_csv", "load_csv_features", "read_csv_table",
           "encode_labels", "CSVIndexWarning", "LabelChoiceWarning",
           "DATASETS"]

_PIMA_NAMES = ["pregnancies", "glucose", "blood_pressure", "skin_thickness",
               "insulin", "bmi", "pedigree", "age"]
_LIVER_NAMES = ["age", "gender", "total_bilirubin", "direct_bilirubin",
                "alkaline_phosphatase", "alamine_aminotransferase",
                "aspartate_aminotransferase", "total_proteins", "albumin",
                "albumin_globulin_ratio"]


def _particles_dataset(cls_name, positive_label=1.0, names=None):
    def load():
        # the sources of the built-in data sets (particles, scikit-learn:
        # a second each) are imported when one is loaded, so that the CSV
        # reader (pac-particles predict) does not pay for them
        from particles import datasets as particles_datasets
        raw = getattr(particles_datasets, cls_name)().raw_data
        X, labels = raw[:, :-1], raw[:, -1]
        return X, (labels == positive_label).astype(int), names
    return load


def _breast_cancer():
    from sklearn.datasets import load_breast_cancer  # on use, as above
    bunch = load_breast_cancer()
    # scikit-learn codes benign as 1: we score malignancy, the usual target
    return bunch.data, (bunch.target == 0).astype(int), list(bunch.feature_names)


DATASETS = {
    "pima": _particles_dataset("Pima", names=_PIMA_NAMES),  # 768 x 8, 1 = diabetes
    "sonar": _particles_dataset("Sonar"),        # 208 x 60, 1 = rock (particles coding)
    "eeg": _particles_dataset("Eeg"),            # 14980 x 14, 1 = eyes closed
    "liver": _particles_dataset("Liver", 1.0, _LIVER_NAMES),  # 1 = liver patient
    "breast_cancer": _breast_cancer,             # 569 x 30, 1 = malignant
}


def load_dataset(name):
    """Load a built-in dataset as ``(X, y, feature_names)``, y in {0, 1}.

    Names: ``pima``, ``sonar``, ``eeg``, ``liver`` (the ``raw_data`` of
    ``particles.datasets``, label in the last column, no intercept) and
    ``breast_cancer`` (scikit-learn; positives are malignant tumours).
    ``feature_names`` is None where the source has none.
    """
    key = str(name).lower().replace("-", "_")
    if key not in DATASETS:
        raise InputError(f"unknown dataset {name!r}; choose from "
                         f"{sorted(DATASETS)}")
    return DATASETS[key]()


#: the first column of a CSV written by pandas' ``DataFrame.to_csv`` with its
#: index: no name in the header (read back by pandas as ``Unnamed: 0``)
_INDEX_NAMES = ("", "Unnamed: 0")


#: what an empty cell may be: pandas reads a short row's last fields as empty
_MISSING = ("a missing value (empty, NA, nan), or a row with fewer fields "
            "than the header")


class CSVIndexWarning(UserWarning):
    """An unnamed first column (a row index written by pandas) was dropped."""


class LabelChoiceWarning(UserWarning):
    """Two string labels and no ``positive_label``: the positive class was
    chosen by the documented rule (the lexicographically larger label)."""


def _read_header(path, delimiter):
    """The header row's names (stripped), or InputError: missing file, not
    text, empty, one name (another separator, or the labels alone)."""
    try:
        # utf-8-sig: a byte-order mark (spreadsheet exports) is not part of
        # the first column's name
        with open(path, newline="", encoding="utf-8-sig") as fh:
            header = next(csv.reader(fh, delimiter=delimiter), None)
    except FileNotFoundError:
        raise InputError(f"no such file: {path}")
    except (OSError, UnicodeDecodeError, csv.Error) as err:
        # a folder, no permission, a binary file: the user's file, not a bug
        raise InputError(f"cannot read {path}: {err}")
    if not header:
        raise InputError(f"{path} is empty: a header row is needed")
    header = [h.strip() for h in header]
    if len(header) == 1:
        _one_column(path, header[0], delimiter, "header")
    return header


def _one_column(path, first, delimiter, row):
    """InputError for a file read as one column: another separator, or
    the labels alone."""
    other = [sep for sep in (";", "\t", "|", ",") if sep in str(first)
             and sep != delimiter]
    if other:
        shown = "\\t" if other[0] == "\t" else other[0]
        raise InputError(f"{path}: the {row} {first!r} is one column: the "
                         f"file looks '{shown}'-separated, not "
                         f"{_separator_name(delimiter)}; pass --sep "
                         f"'{shown}' (delimiter={other[0]!r} in Python)")
    raise InputError(f"{path} has only the column {first!r}: no feature "
                     "column to score with; add the features beside the "
                     "label column")


def _separator_name(delimiter):
    names = {",": "comma-separated", ";": "';'-separated",
             "\t": "tab-separated"}
    return names.get(delimiter, f"{delimiter!r}-separated")


def read_csv_table(path, delimiter=",", header=True):
    """A CSV file as a pandas DataFrame, its columns named by the header.

    Read with pandas (``pandas.read_csv``, types inferred per column; the
    usual missing-value markers such as an empty cell, ``NA`` or ``nan``
    become NaN). Without a header (``header=False``) the columns are named
    ``col1, col2, ...``. An unnamed first column (the row index that
    ``DataFrame.to_csv`` writes by default; pandas reads it back as
    ``Unnamed: 0``) is dropped with a :class:`CSVIndexWarning`.

    Raises
    ------
    InputError
        naming the file and what to do: missing, a folder or not text,
        empty, a header of one name (another separator, or no feature),
        a name used twice, no data rows, rows with more fields than the
        header.
    """
    path = os.fspath(path)
    names = _read_header(path, delimiter) if header else None
    try:
        frame = pd.read_csv(path, sep=delimiter, header=None,
                            skiprows=1 if header else 0,
                            encoding="utf-8-sig", low_memory=False,
                            # the numbers as written (pandas' fast parser
                            # can be off in the last digit)
                            float_precision="round_trip")
    except FileNotFoundError:
        raise InputError(f"no such file: {path}")
    except pd.errors.EmptyDataError:
        if header:
            raise InputError(f"{path} has a header but no data rows")
        raise InputError(f"{path} is empty")
    except pd.errors.ParserError as err:
        # pandas: "Error tokenizing data. C error: Expected 3 fields in
        # line 5, saw 4"
        detail = str(err).split("C error: ")[-1].strip()
        expected = len(names) if names else "the first row's"
        raise InputError(f"{path}: {detail}: every row must have as many "
                         f"fields as the header ({expected}); fix that row")
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(f"cannot read {path}: {err}")
    if header:
        if frame.shape[1] != len(names):
            raise InputError(f"{path}: {len(names)} header names but "
                             f"{frame.shape[1]} columns in the first data "
                             "row; every row must have as many fields as "
                             "the header")
        seen = {}
        for k, name in enumerate(names):
            if name and name in seen:
                raise InputError(f"{path}: the header names column {name!r} "
                                 f"twice (columns {seen[name] + 1} and "
                                 f"{k + 1}); rename one")
            seen[name] = k
        frame.columns = names
        if names[0] in _INDEX_NAMES:
            warnings.warn(f"{path}: the first column has no name "
                          f"({names[0]!r}): taken as a row index (as pandas' "
                          "to_csv writes one) and dropped; write the CSV "
                          "with index=False, or name the column to use it",
                          CSVIndexWarning, stacklevel=2)
            frame = frame.iloc[:, 1:]
    else:
        if frame.shape[1] == 1:
            _one_column(path, frame.iloc[0, 0], delimiter, "first row")
        frame.columns = [f"col{k + 1}" for k in range(frame.shape[1])]
    if frame.shape[0] == 0:
        raise InputError(f"{path} has a header but no data rows")
    return frame


def _resolve_column(spec, columns, path, what):
    """The column named ``spec``, or at the 1-based position ``spec``."""
    spec = str(spec).strip()
    if spec in columns:
        return spec
    if spec.isdigit() and 1 <= int(spec) <= len(columns):
        return columns[int(spec) - 1]
    shown = ", ".join(repr(c) for c in columns[:12])
    more = f", ... ({len(columns)} in all)" if len(columns) > 12 else ""
    raise InputError(f"{what} column {spec!r} not in the header of {path}: "
                     f"{shown}{more}")


def _numeric_block(frame, columns, path):
    """The columns ``columns`` of ``frame`` as a float array, or InputError
    naming the column and the 1-based data row of the first cell that is
    missing, not a number, or infinite, and what to do."""
    n = frame.shape[0]
    X = np.empty((n, len(columns)))
    problems = np.zeros((n, len(columns)), dtype=bool)
    for j, name in enumerate(columns):
        column = frame[name]
        if pd.api.types.is_bool_dtype(column):
            values = column.to_numpy(dtype=float)
        elif pd.api.types.is_numeric_dtype(column):
            values = column.to_numpy(dtype=float, na_value=np.nan)
        else:
            values = pd.to_numeric(column, errors="coerce").to_numpy(
                dtype=float, na_value=np.nan)
        X[:, j] = values
        problems[:, j] = ~np.isfinite(values)
    if not problems.any():
        return X
    rows = np.flatnonzero(problems.any(axis=1))
    row = rows[0]
    j = int(np.flatnonzero(problems[row])[0])
    name = columns[j]
    cell = frame[name].iloc[row]
    where = (f"data row {row + 1}" + (f" ({rows.size} rows in all)"
                                      if rows.size > 1 else ""))
    if _is_missing(cell):
        raise InputError(f"{path}: column {name!r} has no value in {where}: "
                         f"{_MISSING}; remove those rows or fill in the "
                         "values")
    if isinstance(cell, str):
        raise InputError(f"{path}: column {name!r} is not numeric: {where} "
                         f"holds {cell!r}; encode it as numbers (0/1, or one "
                         "column per category) or leave the column out "
                         f"(--drop {name!r} on the command line)")
    raise InputError(f"{path}: column {name!r} holds {cell} in {where}; "
                     "remove those rows or fill in finite values")


def _is_missing(cell):
    """Whether a cell read by pandas is missing (NaN, None, pd.NA)."""
    return not isinstance(cell, str) and bool(pd.isna(cell))


def _label_column(frame, name, path):
    """The labels of column ``name`` as read (numbers, bools or strings), or
    InputError naming the first row without a label."""
    column = frame[name]
    missing = column.isna().to_numpy()
    if pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(column):
        values = column.to_numpy(dtype=float, na_value=np.nan)
        missing = ~np.isfinite(values)
    else:
        values = np.asarray(column.to_numpy(dtype=object))
        if not missing.any():
            values = np.array([v if isinstance(v, (bool, np.bool_))
                               else str(v).strip() for v in values],
                              dtype=object)
    if missing.any():
        rows = np.flatnonzero(missing)
        cell = column.iloc[rows[0]]
        more = f" ({rows.size} rows in all)" if rows.size > 1 else ""
        if _is_missing(cell):
            raise InputError(f"{path}: column {name!r} (the labels) has no "
                             f"value in data row {rows[0] + 1}{more}: "
                             f"{_MISSING}; remove those rows or fill in the "
                             "labels")
        raise InputError(f"{path}: column {name!r} (the labels) holds "
                         f"{cell} in data row {rows[0] + 1}{more}; remove "
                         "those rows or fill in the labels")
    return values


def load_csv(path, target=None, delimiter=",", header=True, features=None,
             drop=None, return_target=False):
    """Load a CSV as ``(X, y, feature_names)``, read with pandas.

    Parameters
    ----------
    path : str or path-like
    target : str, optional
        Name of the label column (or its 1-based position); default: the
        last column.
    delimiter : str
        The field separator (``","``; ``";"``, ``"\\t"``, ...).
    header : bool
        Whether the first row names the columns; without one they are
        ``col1, col2, ...``.
    features : list of str, optional
        The feature columns, in this order (names or 1-based positions);
        default: every column but the target and ``drop``.
    drop : list of str, optional
        Columns to leave out (identifiers, text).
    return_target : bool
        Also return the label column's name (fourth).

    Returns
    -------
    X : (n, d) float array.
    y : (n,) labels as read: a float array, or an object array of strings
        (:func:`encode_labels` makes them binary).
    feature_names : the names of the columns of ``X``.

    Raises
    ------
    InputError
        naming the file, the column and the 1-based data row, with what to
        do: a file that cannot be read, a header of one name (another
        separator, or no feature), no data rows, a missing, non-numeric or
        infinite feature value, a missing label, rows longer than the
        header, an unknown column name. An unnamed first column (a pandas
        index) is dropped with a :class:`CSVIndexWarning`.
    """
    frame = read_csv_table(path, delimiter=delimiter, header=header)
    path = os.fspath(path)
    columns = [str(c) for c in frame.columns]
    frame.columns = columns
    target = (columns[-1] if target is None
              else _resolve_column(target, columns, path, "target"))
    if features is not None and drop is not None:
        raise InputError("give the feature columns (features / --features) or "
                         "the columns to leave out (drop / --drop), not both")
    if features is not None:
        names = [_resolve_column(f, columns, path, "feature")
                 for f in _as_list(features)]
        if target in names:
            raise InputError(f"{path}: column {target!r} is both the target "
                             "and a feature; leave it out of the features")
    else:
        dropped = {_resolve_column(f, columns, path, "dropped")
                   for f in _as_list(drop or [])}
        if target in dropped:
            raise InputError(f"{path}: column {target!r} is the target: it "
                             "cannot be dropped")
        names = [c for c in columns if c != target and c not in dropped]
    if not names:
        raise InputError(f"{path} has no feature column beside the labels "
                         f"{target!r}: no feature to score with")
    if len(set(names)) != len(names):
        raise InputError(f"{path}: a feature column is named twice in "
                         "the features")
    X = _numeric_block(frame, names, path)
    y = _label_column(frame, target, path)
    return (X, y, names, target) if return_target else (X, y, names)


def load_csv_features(path, feature_names, delimiter=",", header=True):
    """The columns ``feature_names`` of a CSV as a float array, for scoring
    new rows (:mod:`pac_particles.sklearn.model_file`): ``(X, frame)``, ``frame``
    the whole table (other columns, such as labels, are left as read).

    Raises
    ------
    InputError
        as :func:`load_csv`, and naming the features the file lacks.
    """
    frame = read_csv_table(path, delimiter=delimiter, header=header)
    path = os.fspath(path)
    frame.columns = [str(c) for c in frame.columns]
    missing = [name for name in feature_names if name not in frame.columns]
    if missing:
        shown = ", ".join(repr(m) for m in missing[:10])
        raise InputError(f"{path} lacks the feature column(s) {shown} of the "
                         f"model ({len(feature_names)} features); the file "
                         "needs a header naming the columns as in the "
                         "training CSV")
    return _numeric_block(frame, list(feature_names), path), frame


def _as_list(names):
    """Column names given as a list, or as one comma-separated string."""
    if isinstance(names, str):
        names = [names]
    out = []
    for name in names:
        out.extend(part.strip() for part in str(name).split(",") if part.strip())
    return out


def _plain(value):
    """A label as a plain Python value (int where a float is integral)."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (numbers.Real, np.number)):
        value = float(value)
        return int(value) if value.is_integer() else value
    return str(value)


def encode_labels(y, positive_label=None):
    """Binary labels as 0/1 codes and the two labels they stand for.

    The positive class (code 1) is ``positive_label`` when given (matched
    as a number when the labels are numbers: ``"1"`` matches ``1.0``);
    otherwise, for numbers or bools, the larger (the rule of
    :func:`~pac_particles.problem.data.binary_labels`: 1 of {0, 1}, 1 of {-1, 1},
    True); for strings, the lexicographically larger (``"yes"`` of
    ``"no"``/``"yes"``, ``"malignant"`` of ``"benign"``/``"malignant"``:
    scikit-learn's ``classes_[1]``), with a :class:`LabelChoiceWarning`
    saying which, since nothing in two strings says which is positive.

    Returns
    -------
    codes : (n,) int array, 1 for the positive class.
    classes : list ``[negative, positive]`` of plain Python values.

    Raises
    ------
    InputError
        one class only, more than two, or a ``positive_label`` that is not
        one of the labels.
    """
    y = np.asarray(y)
    if y.ndim != 1:
        raise InputError(f"the labels must be 1-D, got shape {y.shape}")
    numeric = y.dtype.kind in "biuf"
    if y.dtype.kind == "O":
        numeric = all(isinstance(v, (numbers.Real, np.number, bool, np.bool_))
                      for v in y)
    values = y.astype(float) if numeric else np.array([str(v) for v in y],
                                                      dtype=object)
    if numeric and not np.all(np.isfinite(values)):
        raise InputError("the labels contain NaN or infinite values")
    classes = np.unique(values) if numeric else np.array(sorted(set(values)),
                                                         dtype=object)
    shown = [_plain(c) for c in classes[:5]]
    if classes.size == 1:
        raise InputError(f"the labels hold one class only ({shown[0]!r}): a "
                         "fit needs both classes")
    if classes.size != 2:
        raise InputError(f"the labels must be binary: found {classes.size} "
                         f"distinct values {shown}"
                         f"{'...' if classes.size > 5 else ''}")
    if positive_label is not None:
        wanted = positive_label
        if numeric:
            try:
                wanted = float(positive_label)
            except (TypeError, ValueError):
                wanted = None
        else:
            wanted = str(positive_label)
        if wanted not in list(classes):
            raise InputError(f"the positive label {positive_label!r} is not "
                             f"one of the labels {[_plain(c) for c in classes]}")
        positive = wanted
    else:
        positive = classes[1]
        if not numeric:
            warnings.warn(f"the labels are {classes[0]!r} and {classes[1]!r}: "
                          f"{classes[1]!r} (the lexicographically larger) is "
                          "taken as the positive class; choose it with "
                          "--positive-label (positive_label=)",
                          LabelChoiceWarning, stacklevel=2)
    negative = classes[0] if classes[1] == positive else classes[1]
    bool_labels = y.dtype == bool or (y.dtype.kind == "O" and all(
        isinstance(v, (bool, np.bool_)) for v in y))
    codes = (values == positive).astype(int)
    as_label = bool if bool_labels else _plain
    return codes, [as_label(negative), as_label(positive)]
