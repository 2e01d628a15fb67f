"""The validated data of classification: the design matrix of every
classification method, with its intercept column.

:class:`DesignData` is :class:`~pac_particles.problem.data.AUCData` whose
design matrix is kept in input order (a point risk sums over the rows in
any order, and its labels are the input's) and ends with a constant
intercept column when asked (never standardised, never dropped), in one
copy of the validated rows; :func:`classification_data` validates ``(X,
y)`` for it with every column kept.
"""

import numpy as np

from pac_particles.problem.data import (AUCData, checked_xy,
                                       standardize_in_place, unscaled)

__all__ = ["DesignData", "classification_data"]


class DesignData(AUCData):
    """Validated data of a classification model: :class:`AUCData` whose
    design matrix ends with a constant intercept column when
    ``intercept`` (never standardised, never dropped); :meth:`transform`
    appends it to new inputs too."""

    def __init__(self, intercept, **fields):
        # ``fields``: :class:`AUCData`'s, ``X`` the design with its
        # intercept column (:func:`classification_data`, :meth:`part`)
        self.intercept = bool(intercept)
        super().__init__(**fields)

    def __post_init__(self):
        # a point risk reads the rows in input order: each class's rows
        # (a certificate's parts) are copied out on first use only
        pass

    def part(self, mask: np.ndarray, standardize: bool = False
             ) -> "DesignData":
        """The rows where the (n,) bool ``mask`` is True as design data of
        their own (a held-out split's training part), in input order, in
        one gather and no second validation. ``standardize``: their columns
        centred and scaled on these rows' own moments, as
        :func:`classification_data` of their raw values would give to
        rounding (``transform`` then maps raw rows to them; a column
        constant on these rows at 0); the intercept column stays 1."""
        rows = np.take(self.X, np.flatnonzero(mask), axis=0)
        d = rows.shape[1] - int(self.intercept)
        center, scale = self.part_scaling(rows[:, :d], standardize)
        return DesignData(self.intercept, X=rows, y=self.y[mask],
                          columns=self.columns, center=center, scale=scale,
                          feature_names=list(self.feature_names),
                          n_raw_features=self.n_raw_features)

    def __getattr__(self, name):
        if name not in ("X_pos", "X_neg"):
            return super().__getattr__(name)
        of_class = self.y if name == "X_pos" else ~self.y
        rows = self.__dict__[name] = np.ascontiguousarray(self.X[of_class])
        return rows

    @property
    def n_pos(self):
        return int(np.count_nonzero(self.y))

    @property
    def n_neg(self):
        return self.n - self.n_pos

    @property
    def d(self):
        return self.X.shape[1]

    @property
    def mean_difference(self):
        """The positives' mean row minus the negatives' (:class:`AUCData`),
        by one product with the design (no copy of either class)."""
        n_pos, n_neg = self.n_pos, self.n_neg
        if not (n_pos and n_neg):
            return super().mean_difference
        return np.where(self.y, 1.0 / n_pos, -1.0 / n_neg) @ self.X

    def transform(self, X_new):
        Z = super().transform(X_new)
        if self.intercept:
            Z = np.hstack([Z, np.ones((Z.shape[0], 1))])
        return Z

    def raw_linear(self, theta):
        coef, offset = super().raw_linear(theta)
        if self.intercept:
            offset = offset + np.asarray(theta, dtype=float)[..., -1]
        return coef, offset


def classification_data(X, y, standardize=True, fit_intercept=True):
    """The validated :class:`DesignData` of every classification method:
    no column dropped, an intercept column appended if asked; the rows
    checked as :func:`~pac_particles.problem.data.validate_xy` checks them,
    then copied once, in input order, into the design (no copy by class
    first) and standardised there."""
    X, positives, columns, low, high, names = checked_xy(
        X, y, drop_constant=False)
    n, d = X.shape
    design = np.empty((n, d + int(bool(fit_intercept))))
    rows = design[:, :d]
    rows[...] = X
    if standardize:
        center, scale = standardize_in_place(rows, low, high)
    else:
        center, scale = unscaled(low, high)
    if fit_intercept:
        design[:, d] = 1.0
        names = list(names) + ["intercept"]
    return DesignData(fit_intercept, X=design, y=positives, columns=columns,
                      center=center, scale=scale, feature_names=list(names),
                      n_raw_features=d)
