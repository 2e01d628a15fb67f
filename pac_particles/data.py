"""Validation of ``(X, y)``, the positive/negative split, and dataset loaders.

Every model of the package goes through :func:`validate_xy`, the single data
validator. It returns an :class:`AUCData` object that holds the cleaned design
matrix, the bool labels, the pre-split ``X_pos`` / ``X_neg`` used by the risk
kernels, and the transformation (dropped constant columns, optional
standardisation) to apply to new inputs.

Constant columns are dropped because they cannot change any pairwise
difference ``x_i - x_j``; in particular an intercept cancels in the AUC.

Example
-------
::

    from pac_particles.data import load_dataset, validate_xy
    X, y, names = load_dataset("pima")
    data = validate_xy(X, y, standardize=True)
    data.X_pos.shape, data.X_neg.shape      # ((268, 8), (500, 8))
    data.transform(X[:5])                   # same preprocessing for new inputs
"""

import csv
import warnings
from dataclasses import dataclass, field

import numpy as np

from .auc import binary_labels
from .checks import InputError, check_positive

__all__ = ["AUCData", "validate_xy", "check_lam", "load_dataset", "load_csv",
           "DATASETS"]


@dataclass
class AUCData:
    """Validated data for AUC scoring.

    Attributes
    ----------
    X : (n, d) float array, preprocessed (constant columns dropped, optionally
        standardised).
    y : (n,) bool array, True for positives.
    X_pos, X_neg : the rows of ``X`` with ``y`` True / False (C-contiguous).
    columns : indices of the columns of the raw input that were kept.
    center, scale : (d,) arrays; ``X = (X_raw[:, columns] - center) / scale``.
    feature_names : list of the kept columns' names.
    """

    X: np.ndarray
    y: np.ndarray
    columns: np.ndarray
    center: np.ndarray
    scale: np.ndarray
    feature_names: list = field(default_factory=list)
    n_raw_features: int = 0

    def __post_init__(self):
        self.X_pos = np.ascontiguousarray(self.X[self.y])
        self.X_neg = np.ascontiguousarray(self.X[~self.y])

    def __len__(self):
        return self.X.shape[0]

    @property
    def n(self):
        return self.X.shape[0]

    @property
    def d(self):
        return self.X.shape[1]

    @property
    def n_pos(self):
        return self.X_pos.shape[0]

    @property
    def n_neg(self):
        return self.X_neg.shape[0]

    @property
    def n_pairs(self):
        """P = n_pos * n_neg, the number of positive/negative pairs."""
        return self.n_pos * self.n_neg

    def transform(self, X_new):
        """Apply the training preprocessing to new inputs of the raw width."""
        X_new = _as_design_matrix(X_new, "X_new")
        if X_new.shape[1] != self.n_raw_features:
            raise InputError(
                f"X_new has {X_new.shape[1]} columns, the training data had "
                f"{self.n_raw_features}")
        return _scaled(X_new[:, self.columns], self.center, self.scale,
                       "X_new", True)


def _as_design_matrix(X, name="X"):
    try:
        X = np.asarray(X, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a numeric array")
    if X.ndim != 2:
        raise InputError(f"{name} must be 2-D (n_samples, n_features), got "
                         f"shape {X.shape}")
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise InputError(f"{name} is empty: shape {X.shape}")
    if not np.all(np.isfinite(X)):
        bad = np.argwhere(~np.isfinite(X))[0]
        raise InputError(f"{name} contains NaN or infinite values (first at "
                         f"row {bad[0]}, column {bad[1]})")
    return X


# Largest |x| the models accept after preprocessing: Gram matrices and
# Laplacian products sum squares of the inputs over up to ~1e7 rows.
_MAX_ABS = 1e150


def _column_moments(X):
    """Column means and standard deviations, without overflow or underflow:
    computed on the columns divided by their largest absolute value (``X *
    1e200`` has a finite mean and sd, but its squares overflow)."""
    top = np.max(np.abs(X), axis=0)
    top[top == 0] = 1.0
    Xs = X / top
    center = Xs.mean(axis=0) * top
    scale = Xs.std(axis=0) * top
    scale[scale == 0] = 1.0
    return center, scale


def _scaled(X, center, scale, name, standardized):
    """``(X - center) / scale``, or InputError if the result is too large to
    compute with (its squares would overflow)."""
    with np.errstate(over="ignore", invalid="ignore"):
        out = (X - center) / scale
        largest = np.max(np.abs(out))
    if not largest <= _MAX_ABS:
        hint = ("" if standardized else
                " or pass standardize=True")
        raise InputError(f"{name} has values too large to compute with "
                         f"(|x| up to {largest:.3g} after preprocessing; the "
                         f"squares of such values overflow): rescale the "
                         f"columns{hint}")
    return out


def validate_xy(X, y, standardize=False, drop_constant=True, feature_names=None):
    """Validate ``(X, y)`` and split positives from negatives.

    Parameters
    ----------
    X : array-like of shape (n, d), finite numbers.
    y : array-like of shape (n,), two classes: {0, 1}, {-1, 1} or bool
        (any two numbers: the larger one is the positive class).
    standardize : bool
        Centre and scale each kept column to unit standard deviation.
    drop_constant : bool
        Drop columns that are constant (they cannot change the AUC), with a
        warning.
    feature_names : list of str, optional

    Returns
    -------
    AUCData

    Raises
    ------
    ValueError
        naming the problem: non-numeric or non-2-D X, NaN/inf, length
        mismatch, labels that are not binary, one class only, all columns
        constant.
    """
    X = _as_design_matrix(X)
    y_arr = np.asarray(y)
    if y_arr.ndim == 2 and y_arr.shape[1] == 1:
        y_arr = y_arr[:, 0]
    if y_arr.ndim != 1:
        raise InputError(f"y must be 1-D, got shape {y_arr.shape}")
    if y_arr.shape[0] != X.shape[0]:
        raise InputError(f"X has {X.shape[0]} rows but y has {y_arr.shape[0]} "
                         "entries")
    positives = binary_labels(y_arr)
    n_raw = X.shape[1]
    names = (list(feature_names) if feature_names is not None
             else [f"x{k + 1}" for k in range(n_raw)])
    if len(names) != n_raw:
        raise InputError(f"{len(names)} feature names for {n_raw} columns")
    columns = np.arange(n_raw)
    if drop_constant:
        constant = np.all(X == X[0], axis=0)
        if np.all(constant):
            raise InputError("every column of X is constant: no score can "
                             "rank the data")
        if np.any(constant):
            warnings.warn(
                f"dropping {constant.sum()} constant column(s) "
                f"{[names[k] for k in np.flatnonzero(constant)][:10]}: they "
                "cancel in every pairwise difference, so they cannot change "
                "the AUC", stacklevel=2)
            columns = np.flatnonzero(~constant)
    Xk = X[:, columns]
    if standardize:
        center, scale = _column_moments(Xk)
    else:
        center = np.zeros(Xk.shape[1])
        scale = np.ones(Xk.shape[1])
    Xk = _scaled(Xk, center, scale, "X", standardize)
    return AUCData(X=np.ascontiguousarray(Xk), y=positives, columns=columns,
                   center=center, scale=scale,
                   feature_names=[names[k] for k in columns],
                   n_raw_features=n_raw)


def check_lam(lam, name="lam"):
    """Return ``lam`` as a float, or raise InputError unless 0 < lam < inf."""
    return check_positive(lam, name)


# ----------------------------------------------------------------- loaders

_PIMA_NAMES = ["pregnancies", "glucose", "blood_pressure", "skin_thickness",
               "insulin", "bmi", "pedigree", "age"]
_LIVER_NAMES = ["age", "gender", "total_bilirubin", "direct_bilirubin",
                "alkaline_phosphatase", "alamine_aminotransferase",
                "aspartate_aminotransferase", "total_proteins", "albumin",
                "albumin_globulin_ratio"]


def _particles_dataset(cls_name, positive_label=1.0, names=None):
    def load():
        from particles import datasets
        raw = getattr(datasets, cls_name)().raw_data
        X, labels = raw[:, :-1], raw[:, -1]
        return X, (labels == positive_label).astype(int), names
    return load


def _breast_cancer():
    from sklearn.datasets import load_breast_cancer
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


def load_csv(path, target=None, delimiter=","):
    """Load a CSV with a header row as ``(X, y, feature_names)``.

    Parameters
    ----------
    path : str or path-like
    target : str, optional
        Name of the label column; default: the last column.

    Raises
    ------
    InputError
        when the file cannot be read (missing, a folder, not text), has no
        header, a header of one name (another delimiter, or no feature), no
        data rows, a non-numeric, missing (NaN) or infinite value, or rows
        whose length differs from the header's.
    """
    try:
        # utf-8-sig: a byte-order mark (spreadsheet exports) is not part of
        # the first column's name
        with open(path, newline="", encoding="utf-8-sig") as fh:
            header = next(csv.reader(fh, delimiter=delimiter), None)
    except FileNotFoundError:
        raise InputError(f"no such file: {path}")
    except (OSError, UnicodeDecodeError) as err:
        # a folder, no permission, a binary file: the user's file, not a bug
        raise InputError(f"cannot read {path}: {err}")
    if not header:
        raise InputError(f"{path} is empty: a header row is needed")
    header = [h.strip() for h in header]
    if len(header) == 1:
        # a one-name header is either another delimiter or no feature at all
        other = [sep for sep in (";", "\t", "|") if sep in header[0]]
        if other:
            raise InputError(f"{path}: the header {header[0]!r} is one "
                             f"column; the file looks {other[0]!r}-separated "
                             "but must be comma-separated")
        raise InputError(f"{path} has only the column {header[0]!r}: no "
                         "feature column to score with; add the features "
                         "beside the label column")
    if target is None:
        k = len(header) - 1
    elif target in header:
        k = header.index(target)
    else:
        raise InputError(f"target column {target!r} not in the header of "
                         f"{path}: {header[:10]}...")
    try:
        with warnings.catch_warnings():
            # numpy's "input contained no data": reported below as an error
            warnings.simplefilter("ignore", UserWarning)
            table = np.loadtxt(path, delimiter=delimiter, skiprows=1, ndmin=2)
    except ValueError as err:
        raise InputError(f"{path}: all columns must be numeric ({err})")
    if table.shape[0] == 0:
        raise InputError(f"{path} has a header but no data rows")
    if table.shape[1] != len(header):
        raise InputError(f"{path}: {len(header)} header names but "
                         f"{table.shape[1]} columns")
    bad = ~np.isfinite(table)
    if np.any(bad):
        # loadtxt reads "nan" and "inf": name the column and row here, where
        # the file's names are known (validate_xy only has indices)
        row, col = np.argwhere(bad)[0]
        raise InputError(f"{path}: column {header[col]!r} holds "
                         f"{table[row, col]} in data row {row + 1} "
                         f"({int(bad.any(axis=1).sum())} row(s) in all); "
                         "remove those rows or fill in the values")
    keep = [j for j in range(len(header)) if j != k]
    return table[:, keep], table[:, k], [header[j] for j in keep]
