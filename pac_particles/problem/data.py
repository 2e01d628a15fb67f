"""Validation of ``(X, y)``, the positive/negative split, parts of the rows
(the design of classification: :mod:`pac_particles.problem.design`; the
built-in data sets and the CSV reader: :mod:`pac_particles.problem.datasets`).

The labels are read in one place, :func:`binary_labels`; whether the rows
live on a Dask cluster, in one place, :func:`is_dask_collection` (the
validation of rows on a cluster is :mod:`pac_particles.problem.dask_data`).

Every model goes through :func:`validate_xy` (:func:`checked_xy` its
checks): its :class:`AUCData` holds the cleaned rows, the bool labels, the
per-class ``X_pos`` / ``X_neg`` of the risk kernels, and the map (dropped
constant columns, standardisation) of new inputs.

Constant columns are dropped because they cannot change any pairwise
difference ``x_i - x_j``; in particular an intercept cancels in the AUC.

Example
-------
::

    from pac_particles.problem.datasets import load_dataset
    from pac_particles.problem.data import validate_xy
    X, y, names = load_dataset("pima")
    data = validate_xy(X, y, standardize=True)
    data.X_pos.shape, data.X_neg.shape      # ((268, 8), (500, 8))
    data.transform(X[:5])                   # same preprocessing for new inputs
"""

import warnings
from dataclasses import dataclass, field

import numpy as np

from pac_particles.problem.cells import check_columns
from pac_particles.problem.row_pools import (InMemoryRows, shuffled_rows,
                                             window_order, window_positions)
from pac_particles.core.checks import InputError, check_count, check_positive
from pac_particles.core.compat import moved_names

__all__ = ["AUCData", "validate_xy", "checked_xy", "binary_labels",
           "is_dask_collection", "standardize_in_place", "scaled", "unscaled",
           "check_lam", "kept_columns", "check_columns", "column_extremes"]


def is_dask_collection(obj):
    """Whether ``obj`` is a Dask collection (array, DataFrame, Series);
    imports dask only when ``obj`` comes from it."""
    if not type(obj).__module__.startswith("dask"):
        return False
    import dask
    return dask.is_dask_collection(obj)


def binary_labels(y):
    """Interpret binary labels; return a bool array, True for positives.

    The one place where labels are read. Accepts {0, 1}, {-1, 1}, bool, or any
    two distinct numeric values; the larger one is the positive class.

    Raises
    ------
    ValueError
        if ``y`` is not 1-D, contains NaN/inf, or does not hold exactly two
        distinct values.
    """
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.ndim != 1:
        raise InputError(f"y must be 1-D, got shape {y.shape}")
    if y.dtype == bool:
        # both classes present: no sort needed
        if y.any() and not y.all():
            return y.copy()
        classes = np.unique(y)
    else:
        try:
            y = y.astype(float)
        except (TypeError, ValueError):
            raise InputError("y must be numeric or bool (0/1, -1/1, True/False)")
        if not np.all(np.isfinite(y)):
            raise InputError("y contains NaN or infinite values")
        # two values: the smallest and the largest, found in O(n) (np.unique
        # sorts, and this runs several times a fit)
        low, high = y.min(initial=np.inf), y.max(initial=-np.inf)
        positive = y == high
        if low < high and np.all(positive | (y == low)):
            return positive
        classes = np.unique(y)
    if classes.size == 1:
        raise InputError(
            f"y has only one class ({classes[0]!r}); AUC needs at least one "
            "positive and one negative")
    if classes.size != 2:
        raise InputError(
            f"y must be binary, found {classes.size} distinct values "
            f"{classes[:5].tolist()}{'...' if classes.size > 5 else ''}")
    return y == classes[1]


@dataclass
class AUCData:
    """Validated data for AUC scoring.

    Attributes
    ----------
    X : (n, d) float array, preprocessed (constant columns dropped, optionally
        standardised). Given as None with ``ordered``: built from it on
        first use.
    y : (n,) bool array, True for positives.
    X_pos, X_neg : the rows of ``X`` with ``y`` True / False (C-contiguous).
    ordered : optional (n, d) array of the rows of the positives, then of the
        negatives (each in input order, or as ``positions`` says); ``X_pos``
        and ``X_neg`` are then views of it. :func:`validate_xy` builds this
        one copy of the data: a fit at scale never asks for ``X`` in input
        order.
    positions : optional (n,) permutation: row ``i`` of the input is row
        ``positions[i]`` of ``ordered`` (None: each class in input order).
    window_ordered : whether each class's rows are in the fixed order of
        the pair windows (:func:`~pac_particles.problem.row_pools.window_order`
        of the class in input order, as a part's are: :meth:`part`; or
        :func:`~pac_particles.problem.row_pools.window_positions`);
        :meth:`pair_source` then reads them directly, no shuffled copy.
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
    ordered: np.ndarray = None
    window_ordered: bool = False
    positions: np.ndarray = None

    #: the rows are arrays in this process (a Dask collection's are not:
    #: :class:`pac_particles.problem.dask_data.DaskAUCData`)
    in_memory = True

    def __post_init__(self):
        if self.ordered is None:
            self.X_pos = np.ascontiguousarray(self.X[self.y])
            self.X_neg = np.ascontiguousarray(self.X[~self.y])
            return
        n_pos = int(np.count_nonzero(self.y))
        self.X_pos, self.X_neg = self.ordered[:n_pos], self.ordered[n_pos:]
        if self.X is None:
            del self.X                  # built on first use (__getattr__)

    def __getattr__(self, name):
        # only X, and only when built from ``ordered``: found here because
        # __post_init__ removed the attribute (``__dict__`` never recurses)
        ordered = self.__dict__.get("ordered")
        if name != "X" or ordered is None:
            raise AttributeError(name)
        X = self.X = np.take(ordered, self._ordered_positions(), axis=0)
        return X

    @property
    def mean_difference(self):
        """The positives' mean row minus the negatives' (Fisher's direction
        up to whitening: where the optimisers start)."""
        return self.X_pos.mean(axis=0) - self.X_neg.mean(axis=0)

    def __len__(self):
        return self.y.shape[0]

    @property
    def n(self):
        return self.y.shape[0]

    @property
    def d(self):
        return self.X_pos.shape[1]

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

    def in_risk_order(self, risk):
        """The rows of ``X`` in ``risk.order`` (the order of n-vectors inside
        the algorithms), C-contiguous: the class-ordered rows themselves,
        no copy, for a risk ordered by class (the AUC's pairs) when each
        class is in input order."""
        ordered = self.__dict__.get("ordered")
        if ordered is not None and risk.class_ordered and self.positions is None:
            return ordered
        return np.ascontiguousarray(np.asarray(self.X, dtype=float)[risk.order])

    def by_class(self) -> "AUCData":
        """These rows with the positives first (each class in its stored
        order): ``X`` is the class-ordered copy itself, no copy (``self``
        without one). For what reads ``X`` and ``y`` in any row order (a
        pair risk, a linear score's bound): no rebuild of ``X`` in input
        order."""
        ordered = self.__dict__.get("ordered")
        if ordered is None:
            return self
        return AUCData(X=ordered, y=np.arange(self.n) < self.n_pos,
                       columns=self.columns, center=self.center,
                       scale=self.scale, feature_names=self.feature_names,
                       n_raw_features=self.n_raw_features, ordered=ordered,
                       window_ordered=self.window_ordered)

    def _ordered_positions(self):
        """Position in ``ordered`` of each row of the input order."""
        if self.positions is not None:
            return self.positions
        positions = np.empty(self.n, dtype=np.intp)
        positions[self.y] = np.arange(self.n_pos)
        positions[~self.y] = np.arange(self.n_pos, self.n)
        return positions

    def rows(self, mask: np.ndarray) -> np.ndarray:
        """The rows of ``X`` where the (n,) bool ``mask`` is True, in input
        order (``X[mask]``): gathered from the class-ordered copy while
        ``X`` is not built, so that a part of the rows never costs the
        whole design in input order."""
        ordered = self.__dict__.get("ordered")
        if ordered is None or "X" in self.__dict__:
            return self.X[mask]
        # np.take gathers rows faster than fancy indexing
        return np.take(ordered, self._ordered_positions()[mask], axis=0)

    def class_rows(self, mask: np.ndarray) -> tuple:
        """``(rows, n_pos)``: the rows of ``X`` where the (n,) bool ``mask``
        is True, its positives then its negatives (each in input order),
        in one C-contiguous copy whose first ``n_pos`` rows are the
        positives (``rows[:n_pos]``, ``rows[n_pos:]``: views, no further
        copy for a pair risk)."""
        of_pos, of_neg = mask[self.y], mask[~self.y]
        n_pos = int(np.count_nonzero(of_pos))
        ordered = self.__dict__.get("ordered")
        if ordered is not None:
            # np.take gathers rows faster than a boolean mask
            return np.take(ordered, self._class_positions(mask),
                           axis=0), n_pos
        return np.concatenate([self.X_pos[of_pos], self.X_neg[of_neg]]), n_pos

    def _class_positions(self, mask):
        """Positions in ``ordered`` of the rows where ``mask`` is True, its
        positives then its negatives, each in input order."""
        positions = self._ordered_positions()
        return np.concatenate([positions[mask & self.y],
                               positions[mask & ~self.y]])

    def class_scores(self, w: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """``x . w`` on the rows of :meth:`class_rows` of ``mask``, in their
        order, without gathering the rows (each class's scores, then the
        mask's picked)."""
        ordered = self.__dict__.get("ordered")
        if ordered is not None:
            return (ordered @ w)[self._class_positions(mask)]
        return np.concatenate([(self.X_pos @ w)[mask[self.y]],
                               (self.X_neg @ w)[mask[~self.y]]])

    def part(self, mask: np.ndarray, standardize: bool = False) -> "AUCData":
        """The rows where the (n,) bool ``mask`` is True as data of their
        own (a held-out split's training part): its positives, then its
        negatives, each in the windows' fixed order of its own rows
        (``window_order(k)`` of the class's ``k`` rows of the part in input
        order), in one gather and no second validation. A risk, a
        standardisation and a fit read a class's rows in any order; the
        part's pair windows (:meth:`pair_source`) then read these rows
        themselves, no shuffled copy of them.
        ``standardize``: centred and scaled on these rows' own moments, as
        :func:`validate_xy` of their raw values would give to rounding
        (``transform`` then maps raw rows to them); a column constant on
        these rows is kept, at 0 (no pair differs in it: the one dropped by
        :func:`validate_xy` of the rows)."""
        at_pos, at_neg = np.flatnonzero(mask[self.y]), np.flatnonzero(
            mask[~self.y])
        at_pos = at_pos[window_order(at_pos.size)]
        at_neg = at_neg[window_order(at_neg.size)]
        n_pos = at_pos.size
        ordered = self.__dict__.get("ordered")
        if ordered is not None:
            # one gather: a class's k-th row is at positions[y][k]
            positions = self._ordered_positions()
            rows = np.take(ordered, np.concatenate(
                [positions[self.y][at_pos], positions[~self.y][at_neg]]),
                axis=0)
        else:
            rows = np.concatenate([np.take(self.X_pos, at_pos, axis=0),
                                   np.take(self.X_neg, at_neg, axis=0)])
        center, scale = self.part_scaling(rows, standardize)
        return AUCData(X=None, y=np.arange(rows.shape[0]) < n_pos,
                       columns=self.columns, center=center, scale=scale,
                       feature_names=self.feature_names,
                       n_raw_features=self.n_raw_features, ordered=rows,
                       window_ordered=True)

    def part_scaling(self, rows: np.ndarray, standardize: bool) -> tuple:
        """``(center, scale)`` in raw units of a part's ``rows`` (of these
        data, a view allowed): with ``standardize`` the rows are centred
        and scaled on their own moments in place, and the two composed
        with these data's, as :func:`validate_xy` of the part's raw values
        would give to rounding; else these data's own."""
        if not standardize:
            return self.center, self.scale
        part_center, part_scale = standardize_in_place(
            rows, *column_extremes(rows))
        return (self.center + self.scale * part_center,
                self.scale * part_scale)

    def transform(self, X_new):
        """Apply the training preprocessing to new inputs of the raw width."""
        X_new = as_design_matrix(X_new, "X_new")
        if X_new.shape[1] != self.n_raw_features:
            raise InputError(
                f"X_new has {X_new.shape[1]} columns, the training data had "
                f"{self.n_raw_features}")
        # every column kept (columns are increasing): no copy to select them
        kept = (X_new if self.columns.size == X_new.shape[1]
                else X_new[:, self.columns])
        return scaled(kept, self.center, self.scale, "X_new", True)

    def pair_source(self, rng, n_pairs):
        """Where a stochastic optimiser draws its ``n_pairs`` fresh pairs a
        step: from the class arrays, a class of at least ``n_pairs`` rows in
        windows of its shuffled copy, made once for these rows whatever
        ``n_pairs`` (:class:`~pac_particles.problem.row_pools.InMemoryRows`),
        or of its rows themselves when they are in the windows' order
        (``window_ordered``)."""
        copies = self.__dict__.setdefault("_shuffled", {})
        for side, X in (("pos", self.X_pos), ("neg", self.X_neg)):
            if X.shape[0] >= n_pairs and side not in copies:
                copies[side] = X if self.window_ordered else shuffled_rows(X)
        return InMemoryRows(self.X_pos, self.X_neg, rng,
                            (copies.get("pos"), copies.get("neg")))

    def raw_linear(self, theta):
        """``(coef, offset)`` with ``X_raw @ coef + offset == X @ theta``: a
        linear score on this design mapped back to the raw inputs (zero for
        the dropped columns). ``theta`` (d,) or (m, d); ``coef`` then
        (n_raw_features,) or (m, n_raw_features)."""
        theta = np.asarray(theta, dtype=float)
        slope = theta[..., :self.center.size] / self.scale
        coef = np.zeros(theta.shape[:-1] + (self.n_raw_features,))
        coef[..., self.columns] = slope
        return coef, -slope @ self.center


def as_design_matrix(X, name="X", check_finite=True):
    """``X`` as a 2-D float array with rows and columns, or InputError
    naming what it is (and, ``check_finite``, its first non-finite cell)."""
    try:
        X = np.asarray(X, dtype=float)
    except (TypeError, ValueError):
        check_columns(X, name)
        raise InputError(f"{name} must be a numeric array")
    if X.ndim != 2:
        raise InputError(f"{name} must be 2-D (n_samples, n_features), got "
                         f"shape {X.shape}")
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise InputError(f"{name} is empty: shape {X.shape}")
    # min and max propagate NaN and inf: two passes, no n x d mask
    if check_finite and not (np.isfinite(X.min()) and np.isfinite(X.max())):
        check_columns(X, name)
    return X


def column_extremes(X: np.ndarray, slab: int = 256) -> tuple:
    """``(X.min(axis=0), X.max(axis=0))``, exactly (NaN propagates), in
    elementwise min/max over slabs of ``slab`` rows: NumPy's column-wise
    reduction of a C-ordered array was 4 times slower (docs/benchmarks.md,
    "The data's setup at large n")."""
    k = X.shape[0] // slab
    if k < 2 or not X.flags.c_contiguous:
        return X.min(axis=0), X.max(axis=0)
    slabs, tail = X[:k * slab].reshape(k, slab, -1), X[k * slab:]
    low = np.concatenate([np.minimum.reduce(slabs, axis=0), tail]).min(axis=0)
    high = np.concatenate([np.maximum.reduce(slabs, axis=0), tail]).max(axis=0)
    return low, high


#: Rows per block of :func:`_class_ordered` (its only temporary arrays)
_ORDER_BLOCK_ROWS = 1 << 16


def _class_ordered(X, positives, columns, positions=None):
    """The ``columns`` of the rows of ``X`` with ``positives``, then of the
    others (each in input order; or row ``i`` at ``positions[i]``), in one
    new C-contiguous array: copied in blocks of rows, so that no temporary
    array holds more than a block (``np.compress(out=...)`` was several
    times slower: docs/benchmarks.md, "Scale: a million rows and more")."""
    n_pos = int(np.count_nonzero(positives))
    out = np.empty((X.shape[0], columns.size))
    every = columns.size == X.shape[1]
    p, q = 0, n_pos
    for start in range(0, X.shape[0], _ORDER_BLOCK_ROWS):
        block = X[start:start + _ORDER_BLOCK_ROWS]
        if not every:
            block = block[:, columns]
        if positions is not None:
            # each row where it goes: no windows' shuffled copy later
            out[positions[start:start + _ORDER_BLOCK_ROWS]] = block
            continue
        mask = positives[start:start + _ORDER_BLOCK_ROWS]
        k = int(np.count_nonzero(mask))
        out[p:p + k] = block[mask]
        out[q:q + mask.size - k] = block[~mask]
        p, q = p + k, q + mask.size - k
    return out


def _standardized(X, columns, low, high, positives, positions=None):
    """``(Xs, center, scale)``: the ``columns`` of ``X`` centred and scaled
    to unit standard deviation (:func:`standardize_in_place`), the rows in
    class order (:func:`_class_ordered`), in one copy of ``X`` (every copy
    counts at a million rows). ``low``, ``high``: the columns' minima and
    maxima."""
    Xs = _class_ordered(X, positives, columns, positions)
    center, scale = standardize_in_place(Xs, low[columns], high[columns])
    return Xs, center, scale


# Largest |x| the models accept after preprocessing: Gram matrices and
# Laplacian products sum squares of the inputs over up to ~1e7 rows.
_MAX_ABS = 1e150


def standardize_in_place(Xs, low, high):
    """``(center, scale)``: the columns of ``Xs`` centred and scaled to unit
    standard deviation in place, ``Xs = (Xs_before - center) / scale``.
    Columns whose largest value would over- or underflow when squared
    (``X * 1e200`` has a finite mean and sd) are first divided by it, and
    their moments multiplied back. ``low``, ``high``: the columns' minima
    and maxima (a constant column centres to exactly 0 with scale 1: its
    mean may be an ulp off its value)."""
    top = np.maximum(np.abs(low), np.abs(high))
    top[top == 0] = 1.0
    extreme = (top >= _MAX_ABS) | (top <= 1e-150)
    if np.any(extreme):
        Xs[:, extreme] /= top[extreme]
    center = Xs.mean(axis=0)
    flat = low == high
    center[flat] = (low / np.where(extreme, top, 1.0))[flat]
    Xs -= center
    scale = np.sqrt(np.einsum("ij,ij->j", Xs, Xs) / Xs.shape[0])
    scale[flat | (scale == 0)] = 1.0
    Xs /= scale
    factor = np.where(extreme, top, 1.0)
    center, scale = center * factor, scale * factor
    # new rows are mapped in raw units (AUCData.transform): the columns'
    # extremes must survive x - center there
    scaled(np.vstack([low, high]), center, scale, "X", True)
    return center, scale


def scaled(X, center, scale, name, standardized):
    """``(X - center) / scale``, or InputError if the result is too large to
    compute with (its squares would overflow)."""
    with np.errstate(over="ignore", invalid="ignore"):
        # one new array (the difference, divided in place); the largest
        # |x| from its extremes, no array of |x| (both propagate NaN)
        out = np.subtract(X, center)
        out /= scale
        largest = np.maximum(out.max(), -out.min())
    if not largest <= _MAX_ABS:
        hint = ("" if standardized else
                " or pass standardize=True")
        raise InputError(f"{name} has values too large to compute with "
                         f"(|x| up to {largest:.3g} after preprocessing; the "
                         f"squares of such values overflow): rescale the "
                         f"columns{hint}")
    return out


def unscaled(low, high):
    """``(center, scale)`` of columns kept in raw units (zeros, ones), their
    extremes ``low``, ``high`` checked not to overflow when squared."""
    center, scale = np.zeros(low.size), np.ones(low.size)
    scaled(np.vstack([low, high]), center, scale, "X", False)
    return center, scale


def kept_columns(low, high, names):
    """Indices of the columns whose minimum ``low`` and maximum ``high``
    differ; the constant ones are dropped with a warning (they cancel in
    every pairwise difference), and InputError if none is left."""
    constant = low == high
    if np.all(constant):
        raise InputError("every column of X is constant: no score can rank "
                         "the data")
    if np.any(constant):
        warnings.warn(
            f"dropping {constant.sum()} constant column(s) "
            f"{[names[k] for k in np.flatnonzero(constant)][:10]}: they "
            "cancel in every pairwise difference, so they cannot change "
            "the AUC", stacklevel=3)
    return np.flatnonzero(~constant)


def validate_xy(X, y, standardize=False, drop_constant=True, feature_names=None,
                window_rows=None):
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
    window_rows : int, optional
        From this many rows on, each class is stored in the pair windows'
        order (:func:`~pac_particles.problem.row_pools.window_positions`: a
        fit by sampled pairs then makes no shuffled copy).

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
    X, positives, columns, low, high, names = checked_xy(
        X, y, drop_constant, feature_names)
    n_raw = X.shape[1]
    positions = (window_positions(positives) if window_rows is not None and
                 positives.size >= check_count(window_rows, "window_rows")
                 else None)
    if standardize:
        ordered, center, scale = _standardized(X, columns, low, high,
                                               positives, positions)
    else:
        center, scale = unscaled(low[columns], high[columns])
        ordered = _class_ordered(X, positives, columns, positions)
    return AUCData(X=None, y=positives, columns=columns, center=center,
                   scale=scale, feature_names=[names[k] for k in columns],
                   n_raw_features=n_raw, ordered=ordered,
                   window_ordered=positions is not None, positions=positions)


def checked_xy(X, y, drop_constant=True, feature_names=None) -> tuple:
    """``(X, positives, columns, low, high, names)``, checked: ``X`` as
    floats, its labels, the columns kept (``drop_constant``), every
    column's extremes and name (:func:`validate_xy` before its copy, and
    :func:`pac_particles.problem.design.classification_data`)."""
    # the columns' extremes check finiteness too (they propagate NaN, inf)
    X = as_design_matrix(X, check_finite=False)
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
    low, high = column_extremes(X)
    if not (np.all(np.isfinite(low)) and np.all(np.isfinite(high))):
        check_columns(X)
    columns = (kept_columns(low, high, names) if drop_constant
               else np.arange(n_raw))
    return X, positives, columns, low, high, names


#: ``check_lam(lam)``: ``lam`` as a float, or InputError unless 0 < lam < inf
check_lam = check_positive


#: the loaders that moved to :mod:`pac_particles.problem.datasets`: read from
#: here (``pac_particles.data.load_dataset`` of the flat layout) they keep
#: working, with a DeprecationWarning, loaded on first use (datasets.py
#: imports pandas, which validation needs not)
__getattr__ = moved_names(__name__, {
    **{name: "pac_particles.problem.datasets" for name in (
        "load_dataset", "load_csv", "load_csv_features", "read_csv_table",
        "encode_labels", "CSVIndexWarning", "LabelChoiceWarning",
        "DATASETS")},
    **{name: "pac_particles.problem.design" for name in (
        "DesignData", "classification_data")}})
