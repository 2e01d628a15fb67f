"""The AUC Gibbs posterior under a reduced-rank GP prior, a ``particles``
static model of dimension ``r``.

:class:`~pac_particles.smc.models.GPAUCModel` samples the n latent training
scores; ``particles``' default move, a random walk calibrated on the
particles' covariance, then needs more particles than rows
(``N * len_chain > n``) to have a covariance at all.
:class:`ReducedRankGPAUCModel` samples ``w`` of the scores
``s(x) = phi(x) . w``, ``w ~ N(0, I_r)``, with ``phi`` the Nystrom map of
the kernel on ``r`` inducing rows
(:mod:`pac_particles.problem.reduced_rank`): an
:class:`~pac_particles.smc.models.AUCGibbsModel` on the features, so that
every move of linear scores applies, ``particles``' own included when
``N * len_chain`` is well above ``r`` (its rejected proposals repeat
particles, and a weighted covariance of fewer distinct particles than
``r`` is singular). With ``r = n`` its prior on the training scores is the
exact GP's. ``GPAUCModel(X, y, lam)`` returns this model above
:data:`EXACT_MODEL_MAX_ROWS` rows, of rank :func:`default_model_rank`.

Example
-------
::

    import particles
    from particles import smc_samplers as ssp
    from pac_particles.smc.reduced_rank_gp import ReducedRankGPAUCModel

    model = ReducedRankGPAUCModel(X, y, lam=len(y), rank=50, seed=0)
    smc = particles.SMC(fk=ssp.AdaptiveTempering(model), N=20)
    smc.run()            # particles' random walk on N * len_chain = 200 > r

References
----------
[WS01] Williams, C. K. I. and Seeger, M. (2001). Using the Nystrom method
to speed up kernel machines. NIPS 13.
"""

import math
from typing import Any, Optional

import numpy as np

from pac_particles.core.checks import InputError, check_count
from pac_particles.core.feature_maps import NystromFeatures
from pac_particles.core.kernels import SquaredExponential
from pac_particles.problem.problem import GibbsProblem, as_problem
from pac_particles.problem.reduced_rank import MAX_RANK, reduced_rank_problem
from pac_particles.smc.models import AUCGibbsModel

__all__ = ["ReducedRankGPAUCModel", "default_model_rank", "model_rank",
           "EXACT_MODEL_MAX_ROWS"]

#: ``GPAUCModel(X, y, lam)`` keeps the exact latent scores up to this many
#: rows: ``particles``' default sampler (N = 100, 1,000 particles) estimates
#: their covariance up to about a quarter of its particles
EXACT_MODEL_MAX_ROWS = 200


def default_model_rank(n: int) -> int:
    """The rank of ``GPAUCModel(X, y, lam)`` on ``n`` rows: ``n`` (exact)
    up to :data:`EXACT_MODEL_MAX_ROWS`, then ``ceil(2 sqrt(n))`` capped at
    :data:`~pac_particles.problem.reduced_rank.MAX_RANK`.

    ``particles``' random walk calibrates on the weighted covariance of
    ``N * len_chain`` particles, of which its rejections repeat many: it
    ran in 5 seeds of 5 at r = 50 with 200 particles (N = 20), in 2 at
    r = 70 and none at r = 100 (docs/benchmarks.md,
    "GP scores at scale: the reduced-rank prior"). ``2 sqrt(n)`` keeps a quarter of ``N * len_chain`` above
    ``r`` for N = 20 at n = 300 (r = 35) and for the default N = 100 up to
    10,000 rows; the estimators' rank
    (:func:`~pac_particles.problem.reduced_rank.default_rank`) is twice
    that, for an optimiser that has no particles to feed."""
    n = check_count(n, "n")
    if n <= EXACT_MODEL_MAX_ROWS:
        return n
    return int(min(MAX_RANK, math.ceil(2.0 * math.sqrt(n))))


def model_rank(rank: Any, X: Any) -> Optional[int]:
    """The reduced rank ``GPAUCModel(X, y, ..., rank=rank)`` takes, or None
    for the exact latent scores (``rank=None``, or a rank at least the
    number of rows; ``'auto'``: :func:`default_model_rank`)."""
    if rank is None:
        return None
    try:
        n = X.data.n if isinstance(X, GibbsProblem) else len(X)
    except TypeError:       # not rows: the constructor's checks say why
        return None
    if isinstance(rank, str):
        if rank != "auto":
            raise InputError(f"rank must be 'auto', None or a positive "
                             f"integer, got {rank!r}")
        rank = default_model_rank(n)
    rank = check_count(rank, "rank")
    return rank if rank < n else None


class ReducedRankGPAUCModel(AUCGibbsModel):
    """AUC Gibbs posterior of the scores ``phi(x) . w``, ``w ~ N(0, I_r)``
    (module docstring).

    Parameters
    ----------
    X, y, lam, standardize, pu_prior, backend : as
        :class:`~pac_particles.smc.models.AUCGibbsModel`.
    kernel : callable ``kernel(X1, X2) -> Gram``; default squared
        exponential of lengthscale ``sqrt(d)`` on the preprocessed inputs
        (:class:`~pac_particles.smc.models.GPAUCModel`'s).
    rank : int, optional, the number of inducing rows (default: every row,
        the exact GP prior on the training scores).
    seed : int, optional, the draw of the inducing rows.

    ``ReducedRankGPAUCModel.from_problem(problem, kernel=None, rank=None,
    seed=None)`` takes a ranking
    :class:`~pac_particles.problem.problem.GibbsProblem` instead.

    Attributes
    ----------
    problem : the problem on the features (``problem.data`` a
        :class:`~pac_particles.problem.reduced_rank.FeatureData`);
    feature_map : the :class:`~pac_particles.core.feature_maps.NystromFeatures`;
    rank : r, the dimension of ``w``.
    """

    def __init__(self, X, y=None, lam=None, kernel=None,
                 rank: Optional[int] = None, seed: Optional[int] = None,
                 standardize: bool = True, pu_prior: Optional[float] = None,
                 backend: str = "numba"):
        self._build(as_problem(X, y, lam, self.task, type(self).__name__,
                               standardize=standardize, pu_prior=pu_prior),
                    kernel, rank, seed, backend)

    def _build(self, problem: GibbsProblem, kernel: Any = None,
               rank: Optional[int] = None, seed: Optional[int] = None,
               backend: str = "numba"):
        design = problem.data
        if kernel is None:
            kernel = SquaredExponential(lengthscale=np.sqrt(design.d))
        rank = design.n if rank is None else min(check_count(rank, "rank"),
                                                 design.n)
        rows = np.sort(np.random.default_rng(seed).choice(
            design.n, rank, replace=False))
        self.kernel = kernel
        self.feature_map = NystromFeatures(kernel, design.X[rows])
        super()._build(reduced_rank_problem(problem, self.feature_map),
                       backend=backend)

    @property
    def rank(self) -> int:
        return self.data.d
