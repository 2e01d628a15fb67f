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

from pac_particles.problem.data import AUCData, validate_xy

__all__ = ["DesignData", "classification_data"]


class DesignData(AUCData):
    """Validated data of a classification model: :class:`AUCData` whose
    design matrix ends with a constant intercept column when
    ``intercept`` (never standardised, never dropped); :meth:`transform`
    appends it to new inputs too."""

    def __init__(self, data, intercept):
        self.intercept = bool(intercept)
        names = list(data.feature_names)
        # the design in input order and its intercept column in one
        # allocation: one copy of the validated rows (no input-order copy
        # of them first, no copy per class: :meth:`__post_init__`)
        d = data.d
        X = np.empty((data.n, d + int(self.intercept)))
        if "X" in data.__dict__:
            X[:, :d] = data.X
        elif data.positions is not None:
            X[:, :d] = np.take(data.ordered, data.positions, axis=0)
        else:
            X[data.y, :d], X[~data.y, :d] = data.X_pos, data.X_neg
        if self.intercept:
            X[:, d] = 1.0
            names.append("intercept")
        super().__init__(X=X, y=data.y, columns=data.columns,
                         center=data.center, scale=data.scale,
                         feature_names=names,
                         n_raw_features=data.n_raw_features)

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
        part = DesignData.__new__(DesignData)
        part.intercept = self.intercept
        AUCData.__init__(part, X=rows, y=self.y[mask], columns=self.columns,
                         center=center, scale=scale,
                         feature_names=list(self.feature_names),
                         n_raw_features=self.n_raw_features)
        return part

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
    no column dropped, an intercept column appended if asked."""
    data = validate_xy(X, y, standardize=standardize, drop_constant=False)
    return DesignData(data, fit_intercept)
