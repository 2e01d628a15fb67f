"""The reduced-rank GP prior of data left on a Dask cluster: the rows'
features computed where the rows are fetched.

:class:`DaskFeatureData` is to a
:class:`~pac_particles.problem.dask_data.DaskAUCData` what
:class:`~pac_particles.problem.reduced_rank.FeatureData` is to in-memory
data: the design of linear scores ``phi(x) . w`` on the features of the
standardised rows. The rows stay on the cluster; each row drawn by
:class:`~pac_particles.problem.dask_data.DaskRows` is standardised and
mapped on arrival, so that the stochastic VB on sampled pairs runs on the
features as it runs on the columns of linear Dask data. The class-mean
difference of the features (what a fit may read of the whole data) is one
pass over the chunks (a task per chunk), computed on first use; :meth:`transform` of a Dask
array is lazy (the map applied chunk by chunk).

The feature map itself is built before, from a sample of rows gathered in
memory (:mod:`pac_particles.sklearn.dask_fit`): it is fixed before the
pairs the fit draws, but not before the rows it was built from, and a fit
on a cluster has no certificate.

Example
-------
::

    from pac_particles.problem.dask_data import validate_dask_xy
    from pac_particles.problem.dask_features import DaskFeatureData
    data = validate_dask_xy(X_dask, y_dask)
    features = DaskFeatureData(data, phi)        # phi: a NystromFeatures
    features.transform(X_new_dask) @ w           # lazy scores
"""

import numpy as np

from pac_particles.problem.dask_data import DaskAUCData
from pac_particles.problem.data import is_dask_collection
from pac_particles.problem.reduced_rank import FeatureData

__all__ = ["DaskFeatureData"]


def _block_feature_sums(X_block, positive_block, data):
    """The feature sums (2, r) of a chunk's positives and of its
    negatives."""
    Phi = data.standardized(X_block)
    positive = np.asarray(positive_block, dtype=bool)
    return np.stack([Phi[positive].sum(axis=0),
                     Phi[~positive].sum(axis=0)])


class DaskFeatureData(DaskAUCData, FeatureData):
    """The features ``phi`` of the standardised rows of ``design`` (a
    :class:`~pac_particles.problem.dask_data.DaskAUCData`), the rows left on
    the cluster: rows fetched by
    :class:`~pac_particles.problem.dask_data.DaskRows` arrive as features,
    ``raw_linear`` refuses as for in-memory features."""

    def __init__(self, design: DaskAUCData, feature_map):
        self.design, self.feature_map = design, feature_map
        r = int(feature_map.rank)
        # no columns to standardise: the features are the design
        DaskAUCData.__init__(
            self, X=None, y=None, columns=np.arange(r), center=np.zeros(r),
            scale=np.ones(r), feature_names=[f"phi{k + 1}" for k in range(r)],
            n_raw_features=design.n_raw_features)
        self.dask_X, self.dask_positive = design.dask_X, design.dask_positive
        self.classes = design.classes
        self.block_pos, self.block_neg = design.block_pos, design.block_neg
        self._mean_difference = None

    def standardized(self, rows):
        """Raw rows (k, n_raw_features) fetched from the cluster as
        features (k, r)."""
        return self.feature_map(self.design.standardized(rows))

    @property
    def mean_difference(self):
        """``mean phi(x+) - mean phi(x-)`` over every row: one pass over
        the chunks on first use."""
        if self._mean_difference is None:
            import dask
            block_sums = dask.delayed(_block_feature_sums, pure=True)
            sums = sum(dask.compute(*(
                block_sums(X_block, positive_block, self)
                for X_block, positive_block in zip(
                    self.dask_X.to_delayed().ravel(),
                    self.dask_positive.to_delayed().ravel()))))
            self._mean_difference = (sums[0] / self.n_pos
                                     - sums[1] / self.n_neg)
        return self._mean_difference

    def transform(self, X_new):
        """Features of new raw rows: a Dask array stays one (lazy)."""
        Z = self.design.transform(X_new)
        if is_dask_collection(Z):
            return Z.map_blocks(self.feature_map,
                                chunks=(Z.chunks[0], (self.d,)), dtype=float)
        return self.feature_map(Z)
