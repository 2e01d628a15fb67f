"""The reduced-rank GP prior of a ranking problem: its design mapped to
features.

A GP prior ``s ~ N(0, K)`` on the scores of n rows costs O(n^3) and puts
the posterior in n dimensions. With a feature map ``phi`` of rank ``r``
(:mod:`pac_particles.core.feature_maps`) the scores are
``s(x) = phi(x) . w``, ``w ~ N(0, I_r)``: the problem of linear scores on
the columns of ``Phi`` under the isotropic prior, on which SMC, EP, VB and
the certificates act as on any design. :class:`FeatureData` is that design
(``transform`` maps new raw rows through the problem's preprocessing and
``phi``), :func:`reduced_rank_problem` the problem on it, and
:func:`rbf_features` the Nystrom map of the squared-exponential kernel
built from a given set of rows alone (so that a certificate whose prior
part holds those rows may treat it as fixed before the others).

With every row an inducing input, ``Phi Phi' = K`` on the training rows:
the reduced-rank posterior of the training scores is then the exact GP's.

Example
-------
::

    from pac_particles.problem.problem import GibbsProblem
    from pac_particles.problem.reduced_rank import (rbf_features,
                                                    reduced_rank_problem)
    problem = GibbsProblem.ranking(X, y, lam=len(y), standardize=True)
    phi = rbf_features(problem.data.X, rows=np.arange(len(y)), rank=200, seed=0)
    features = reduced_rank_problem(problem, phi)      # data.X is Phi (n, 200)

References
----------
[WS01] Williams, C. K. I. and Seeger, M. (2001). Using the Nystrom method
to speed up kernel machines. NIPS 13.
"""

import dataclasses
from typing import Optional

import numpy as np

from pac_particles.core.checks import InputError, check_count, check_positive
from pac_particles.core.feature_maps import NystromFeatures, median_lengthscale
from pac_particles.core.kernels import SquaredExponential
from pac_particles.problem.data import AUCData
from pac_particles.problem.problem import GibbsProblem, check_problem

__all__ = ["FeatureData", "reduced_rank_problem", "rbf_features",
           "default_rank", "EXACT_GP_MAX_ROWS", "MAX_RANK"]

#: ``kernel='rbf'`` fits the exact GP up to this many rows (EP's O(n^3)
#: sweeps take seconds there) and the reduced-rank prior above
EXACT_GP_MAX_ROWS = 1000
#: the largest rank :func:`default_rank` picks: the cost of a fit grows with
#: ``r`` while the test AUC of smooth scores levels off by then
MAX_RANK = 200


def default_rank(n: int) -> int:
    """The rank of the reduced-rank prior on ``n`` rows: ``n`` (the exact
    GP) up to :data:`EXACT_GP_MAX_ROWS`, then ``4 sqrt(n)`` capped at
    :data:`MAX_RANK` (and never below 100)."""
    n = check_count(n, "n")
    if n <= EXACT_GP_MAX_ROWS:
        return n
    return int(min(MAX_RANK, max(100, round(4.0 * np.sqrt(n)))))


class FeatureData(AUCData):
    """The design of a reduced-rank GP prior: ``X = Phi = phi(design.X)``,
    and :meth:`transform` maps new raw rows through the design's
    preprocessing and ``phi``. The score ``phi(x) . w`` is not linear in
    the raw inputs: :meth:`raw_linear` refuses."""

    def __init__(self, design: AUCData, feature_map):
        self.design = design
        self.feature_map = feature_map
        Phi = np.ascontiguousarray(feature_map(design.X), dtype=float)
        if not np.all(np.isfinite(Phi)):
            raise InputError("the feature map returned NaN or infinite "
                             "entries")
        r = Phi.shape[1]
        super().__init__(X=Phi, y=design.y, columns=np.arange(r),
                         center=np.zeros(r), scale=np.ones(r),
                         feature_names=[f"phi{k + 1}" for k in range(r)],
                         n_raw_features=design.n_raw_features)

    def transform(self, X_new):
        return self.feature_map(self.design.transform(X_new))

    def raw_linear(self, theta):
        raise InputError("a reduced-rank GP score phi(x) . w is not linear in "
                         "the inputs: it has no raw coefficients (score new "
                         "rows with data.transform(X) @ w)")


def reduced_rank_problem(problem: GibbsProblem, feature_map) -> GibbsProblem:
    """The ranking problem of linear scores ``phi(x) . w`` on the features
    of ``problem``'s design: the same labels, risk and ``lam``."""
    problem = check_problem(problem, "ranking", "reduced_rank_problem")
    if not problem.data.in_memory:
        raise InputError("the reduced-rank GP prior needs the rows in memory")
    return dataclasses.replace(problem,
                               data=FeatureData(problem.data, feature_map))


def rbf_features(X: np.ndarray, rows: np.ndarray, rank: int,
                 lengthscale_factor: float = 1.0,
                 seed: Optional[int] = None) -> NystromFeatures:
    """The Nystrom map of a squared-exponential kernel built from the rows
    ``rows`` of ``X`` alone: ``rank`` inducing inputs drawn among them
    (from ``seed``), lengthscales ``lengthscale_factor`` times the median
    distance of those rows after each column is scaled by its standard
    deviation over them (ARD by the column's own spread; the map is then
    the same for any affine rescaling of the columns).

    Nothing of the rows outside ``rows`` enters the map."""
    X = np.asarray(X, dtype=float)
    rows = np.asarray(rows)
    if rows.dtype == bool:
        rows = np.flatnonzero(rows)
    rank = check_count(rank, "rank")
    check_positive(lengthscale_factor, "lengthscale_factor")
    if rows.size < 2:
        raise InputError("the feature map needs at least two rows")
    rng = np.random.default_rng(seed)
    part = X[rows]
    spread = part.std(axis=0)
    spread[spread == 0] = 1.0
    base = median_lengthscale(part / spread, seed=rng.integers(2**31))
    kernel = SquaredExponential(lengthscale_factor * base * spread)
    inducing = part[rng.choice(part.shape[0], min(rank, part.shape[0]),
                               replace=False)]
    return NystromFeatures(kernel, inducing)
