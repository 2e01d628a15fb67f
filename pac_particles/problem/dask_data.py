"""Data larger than memory: a Dask array (or DataFrame) on a cluster, read
in passes and by sampled rows, never gathered on one process.

:func:`validate_dask_xy` is :func:`~pac_particles.problem.data.validate_xy`
for Dask collections. Two passes over the chunks, each a reduction on the
cluster: the labels' distinct values, then the columns' minima, maxima,
means and standard deviations, each chunk's count of positives and the
positives' column sums (the same checks as in memory: finite values,
binary labels, both classes, constant columns dropped with a warning). What
comes back is a :class:`DaskAUCData`: the standardisation, the class counts
and the class means, with the data left where it is.

The stochastic VB (:mod:`pac_particles.approx.vb`) then reads rows only
through :class:`DaskRows`: a uniform draw of row indices of each class,
mapped to chunks by the per-chunk counts, fetched by one task per chunk
that holds a drawn row (dask-ml and dask-glm compute a GLM's gradient
chunk by chunk and reduce it on the cluster; here the pair risk couples
rows of different chunks, so it is the rows, not the gradients, that
travel: ``reuse x B`` of each class per round of
:class:`~pac_particles.problem.row_pools.RowPools`, standardised on
arrival). The rows of a draw are uniform over the class whatever the order
in which the data are stored (sorted by label, by time or by a feature):
the indices are drawn, not the chunks.

Persist the data on the cluster first (``X = X.persist()``): each round
reads the chunks that hold its rows, from the workers' memory if persisted,
else from wherever the collection is computed from.
"""

import numpy as np

from pac_particles.core.checks import InputError
from pac_particles.problem.data import (AUCData, is_dask_collection,
                                       kept_columns, scaled)
from pac_particles.problem.risks import Risk
from pac_particles.problem.row_pools import RowPools

__all__ = ["validate_dask_xy", "DaskAUCData",
           "DaskRows", "PairCounts", "as_dask_arrays", "as_dask_matrix"]


def as_dask_arrays(X, y):
    """``(X, y, feature_names)``: ``X`` as a 2-D Dask array of floats with
    known chunk sizes and one chunk of columns, ``y`` as a 1-D Dask array
    chunked like ``X``'s rows (either may be in memory); the DataFrame's
    column names, else None."""
    import dask.array as da
    names = None
    if hasattr(X, "to_dask_array"):                 # a Dask DataFrame
        names = [str(c) for c in X.columns]
        X = X.to_dask_array(lengths=True)
    elif not isinstance(X, da.Array):
        X = da.from_array(np.asarray(X))
    if X.ndim != 2:
        raise InputError(f"X must be 2-D (n_samples, n_features), got "
                         f"{X.ndim} dimension(s)")
    if any(np.isnan(c) for c in X.chunks[0]):
        X = X.compute_chunk_sizes()
    try:
        X = X.astype(float)
    except (TypeError, ValueError):
        raise InputError("X must be a numeric array") from None
    X = X.rechunk({1: -1})
    if hasattr(y, "to_dask_array"):                 # a Dask Series
        y = y.to_dask_array(lengths=True)
    elif not isinstance(y, da.Array):
        y = np.asarray(y)
        if y.ndim == 2 and y.shape[1] == 1:
            y = y[:, 0]
        y = da.from_array(y, chunks=(X.chunks[0],))
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.ndim != 1:
        raise InputError(f"y must be 1-D, got {y.ndim} dimensions")
    if any(np.isnan(c) for c in y.chunks[0]):
        y = y.compute_chunk_sizes()
    if y.shape[0] != X.shape[0]:
        raise InputError(f"X has {X.shape[0]} rows but y has {y.shape[0]} "
                         "entries")
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise InputError(f"X is empty: shape {X.shape}")
    return X, y.rechunk((X.chunks[0],)), names


def _block_count(block):
    return np.array([block.sum()], dtype=np.int64)


def validate_dask_xy(X, y, standardize=True, feature_names=None):
    """:class:`DaskAUCData` of Dask ``(X, y)`` (module docstring): the
    checks of :func:`~pac_particles.problem.data.validate_xy`, on the
    cluster. Labels: two distinct values, the larger (in sorted order) the
    positive class (``data.classes``: the two label values in order)."""
    import dask
    import dask.array as da
    X, y, names = as_dask_arrays(X, y)
    classes = np.unique(np.asarray(da.unique(y).compute()))
    if classes.size == 1:
        raise InputError(f"y has only one class ({classes[0]!r}): AUC "
                         "scoring needs positives and negatives")
    if classes.size != 2:
        raise InputError(
            f"y has {classes.size} distinct value(s) "
            f"{classes[:5].tolist()}: AUC scoring needs exactly two classes")
    positive = y == classes[1]
    counts = positive.map_blocks(_block_count, chunks=((1,) * positive.numblocks[0],),
                                 dtype=np.int64)
    finite, low, high, mean, sd, pos_counts, pos_sum = dask.compute(
        da.isfinite(X).all(), X.min(axis=0), X.max(axis=0), X.mean(axis=0),
        X.std(axis=0), counts, (X * positive[:, None]).sum(axis=0))
    if not finite:
        raise InputError("X contains NaN or infinite values")
    n, n_raw = X.shape
    names = (list(feature_names) if feature_names is not None
             else names if names is not None
             else [f"x{k + 1}" for k in range(n_raw)])
    if len(names) != n_raw:
        raise InputError(f"{len(names)} feature names for {n_raw} columns")
    n_pos = int(pos_counts.sum())
    if n_pos in (0, n):
        raise InputError("y has only one class: AUC scoring needs "
                         "positives and negatives")
    columns = kept_columns(low, high, names)
    if standardize:
        center, scale = mean[columns], sd[columns]
        scale[scale == 0] = 1.0
    else:
        center, scale = np.zeros(columns.size), np.ones(columns.size)
    # new rows are mapped in raw units: the columns' extremes must survive
    scaled(np.vstack([low[columns], high[columns]]), center, scale, "X",
            standardize)
    pos_mean = pos_sum / n_pos
    neg_mean = (mean * n - pos_sum) / (n - n_pos)
    data = DaskAUCData(
        X=None, y=None, columns=columns, center=center, scale=scale,
        feature_names=[names[k] for k in columns], n_raw_features=n_raw)
    data.adopt(X, positive, pos_counts, classes,
               (pos_mean - neg_mean)[columns] / scale)
    return data


class DaskAUCData(AUCData):
    """:class:`~pac_particles.problem.data.AUCData` of data left on a
    cluster: the same standardisation, feature names and ``raw_linear``,
    the class counts and class-mean difference, no ``X``, ``X_pos`` or
    ``X_neg`` in memory (``in_memory`` is False). Rows are reached through
    :meth:`pair_source` and :meth:`sampled_pairs`."""

    in_memory = False

    def __post_init__(self):
        pass                       # no class arrays: the rows stay put

    def adopt(self, X, positive, pos_counts, classes, mean_difference):
        """Keep the cluster's arrays and what the reductions found."""
        self.dask_X, self.dask_positive, self.classes = X, positive, classes
        self.block_pos = np.asarray(pos_counts, dtype=np.int64)
        self.block_neg = np.asarray(X.chunks[0], dtype=np.int64) \
            - self.block_pos
        self._mean_difference = np.asarray(mean_difference, dtype=float)

    @property
    def mean_difference(self):
        return self._mean_difference

    def __len__(self):
        return self.n

    @property
    def n(self):
        return self.dask_X.shape[0]

    @property
    def d(self):
        return self.columns.size

    @property
    def n_pos(self):
        return int(self.block_pos.sum())

    @property
    def n_neg(self):
        return int(self.block_neg.sum())

    def standardized(self, rows):
        """Raw rows (k, n_raw_features) fetched from the cluster on the
        fit's scale."""
        return (rows[:, self.columns] - self.center) / self.scale

    def transform(self, X_new):
        """The training preprocessing of new rows: a Dask array stays one
        (lazy), anything else as in memory."""
        if is_dask_collection(X_new):
            X_new = as_dask_matrix(X_new)
            if X_new.shape[1] != self.n_raw_features:
                raise InputError(
                    f"X_new has {X_new.shape[1]} columns, the training data "
                    f"had {self.n_raw_features}")
            return (X_new[:, self.columns] - self.center) / self.scale
        return super().transform(X_new)

    def pair_source(self, rng, n_pairs):
        """Each Adam step's own ``n_pairs`` rows of each class, fetched in
        rounds (:class:`~pac_particles.problem.row_pools.RowPools` over
        :class:`DaskRows`): the variance of ``n_pairs`` independent pairs."""
        return RowPools(DaskRows(self), rng, rows=n_pairs)

    def sampled_pairs(self, rng, n_pairs):
        """``(P, N)``: the rows of ``n_pairs`` independent pairs, each
        uniform over all pairs (pair ``b`` is ``(P[b], N[b])``), on the
        fit's scale."""
        pos, neg = DaskRows(self).draw(rng, n_pairs, n_pairs)
        return (pos[rng.permutation(n_pairs)], neg[rng.permutation(n_pairs)])


def as_dask_matrix(X, name="X_new"):
    """A Dask array or DataFrame of new rows as a 2-D Dask array of floats
    (lazy: nothing is computed)."""
    import dask.array as da
    if hasattr(X, "to_dask_array"):
        X = X.to_dask_array(lengths=True)
    if not isinstance(X, da.Array) or X.ndim != 2:
        raise InputError(f"{name} must be a 2-D Dask array or DataFrame")
    try:
        return X.astype(float)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be numeric") from None


def _rows_of_block(X_block, positive_block, pos_ranks, neg_ranks):
    """The rows of a chunk at the given ranks among its positives and its
    negatives."""
    pos = np.flatnonzero(positive_block)
    neg = np.flatnonzero(~positive_block)
    return X_block[pos[pos_ranks]], X_block[neg[neg_ranks]]


class DaskRows:
    """Rows of each class drawn uniformly with replacement from a
    :class:`DaskAUCData` on the cluster: one task per chunk that holds a
    drawn row, which returns those rows only."""

    def __init__(self, data, standardize=True):
        self.data, self.standardize = data, standardize
        self.n_pos, self.n_neg = data.n_pos, data.n_neg
        self._cum_pos = np.concatenate([[0], np.cumsum(data.block_pos)])
        self._cum_neg = np.concatenate([[0], np.cumsum(data.block_neg)])

    def draw(self, rng, k_pos, k_neg):
        """``(positives, negatives)``: ``k_pos`` and ``k_neg`` rows, i.i.d.
        uniform over their class, grouped by chunk; on the fit's scale
        (raw with ``standardize=False``)."""
        import dask
        ranks_pos = rng.integers(self.n_pos, size=k_pos)
        ranks_neg = rng.integers(self.n_neg, size=k_neg)
        block_pos = np.searchsorted(self._cum_pos, ranks_pos, side="right") - 1
        block_neg = np.searchsorted(self._cum_neg, ranks_neg, side="right") - 1
        X_blocks = self.data.dask_X.to_delayed().ravel()
        y_blocks = self.data.dask_positive.to_delayed().ravel()
        fetch = dask.delayed(_rows_of_block, pure=True)
        tasks = []
        for b in np.union1d(block_pos, block_neg):
            in_pos, in_neg = block_pos == b, block_neg == b
            tasks.append(fetch(X_blocks[b], y_blocks[b],
                               ranks_pos[in_pos] - self._cum_pos[b],
                               ranks_neg[in_neg] - self._cum_neg[b]))
        parts = dask.compute(*tasks)
        d_raw = self.data.n_raw_features
        pos = np.concatenate([p for p, _ in parts] + [np.empty((0, d_raw))])
        neg = np.concatenate([q for _, q in parts] + [np.empty((0, d_raw))])
        if not self.standardize:
            return pos, neg
        return (np.ascontiguousarray(self.data.standardized(pos)),
                np.ascontiguousarray(self.data.standardized(neg)))


class PairCounts(Risk):
    """The sizes of the AUC pair risk of data left on a cluster: what the
    VB and the certificates read of an
    :class:`~pac_particles.problem.risks.AUCRisk` (``n_pairs``,
    ``n_independent = min(n_pos, n_neg)``, ``kappa``), whose labels stay
    on the cluster."""

    name = "auc"

    def __init__(self, n_pos, n_neg):          # no labels to read
        self.n_pos, self.n_neg = int(n_pos), int(n_neg)
        self.n = self.n_pos + self.n_neg
        self.n_terms = self.n_pos * self.n_neg
        self.n_independent = min(self.n_pos, self.n_neg)

    @property
    def n_pairs(self):
        return self.n_terms
