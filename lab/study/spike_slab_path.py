"""The regularisation path of the spike-and-slab Gibbs posterior in the
spike variance ``v0`` [RACL14, Fig. 3].

:func:`spike_slab_path` runs one SMC sampler per ``v0`` (the spike-and-slab
move, :class:`~pac_particles.smc.moves.SpikeSlabMove`, or with scaled flips
of the indicators, :class:`~pac_particles.smc.moves.SpikeSlabFlipMove`,
under the prior of [GM93]) and collects posterior means, inclusion probabilities and log
evidences in a :class:`SpikeSlabPath`; :meth:`SpikeSlabPath.from_fits`
collects the same summaries from other approximations (EP) for comparison
(``diagnostics/spike_slab_path.py``).

Example
-------
::

    from pac_particles.problem.datasets import load_dataset
    from lab.study import spike_slab_path
    X, y, _ = load_dataset("pima")
    path = spike_slab_path(X, y, lam=len(y), v0_grid=[1e-3, 1e-2, 1e-1],
                           n_particles=200, seed=0)
    path.inclusion_probs          # (3, d)

References
----------
[GM93] George, E. I. and McCulloch, R. E. (1993). Variable selection via
Gibbs sampling. Journal of the American Statistical Association 88(423),
881-889.
[RACL14] Ridgway, J., Alquier, P., Chopin, N. and Liang, F. (2014).
PAC-Bayesian AUC classification and scoring. NIPS 27.
"""

from dataclasses import dataclass

import numpy as np
from joblib import Parallel, delayed

from pac_particles.core import parallel
from pac_particles.problem.data import validate_xy
from pac_particles.smc.models import AUCGibbsModel
from pac_particles.problem.priors import SpikeSlabPrior
from lab.study.repeated_runs import _study_run

__all__ = ["SpikeSlabPath", "spike_slab_path"]


@dataclass
class SpikeSlabPath:
    """Posterior summaries along a grid of spike variances ``v0``.

    Attributes
    ----------
    v0 : (n_v0,) spike variances; ``p``, ``v1`` : the other prior parameters.
    means : (n_v0, d) posterior means of theta.
    inclusion_probs : (n_v0, d) posterior inclusion probabilities (SMC:
        Rao-Blackwellised,
        :attr:`~pac_particles.smc.posterior.SMCPosterior.inclusion_probs`).
    log_z : (n_v0,) log evidence.
    wall_time : (n_v0,) seconds per run (NaN if unknown).
    method : str, e.g. ``"smc"`` or ``"ep"``.
    """

    v0: np.ndarray
    p: float
    v1: float
    means: np.ndarray
    inclusion_probs: np.ndarray
    log_z: np.ndarray
    wall_time: np.ndarray = None
    method: str = "smc"

    @classmethod
    def from_fits(cls, v0, fits, p, v1, method="ep"):
        """Collect fitted approximations with attributes ``mean``,
        ``inclusion_probs`` and ``log_z`` (e.g. the results of
        :meth:`pac_particles.approx.ep.EPSpikeSlab.fit`), one per ``v0``."""
        return cls(v0=np.asarray(v0, dtype=float), p=float(p), v1=float(v1),
                   means=np.array([f.mean for f in fits]),
                   inclusion_probs=np.array([f.inclusion_probs for f in fits]),
                   log_z=np.array([f.log_z for f in fits]),
                   wall_time=np.full(len(fits), np.nan), method=method)

    def rows(self, names=None):
        """One dict per (v0, coefficient), for a CSV."""
        names = names or [f"theta[{j}]" for j in range(self.means.shape[1])]
        return [{"method": self.method, "v0": float(v0),
                 "coefficient": names[j], "index": j,
                 "mean": float(self.means[i, j]),
                 "inclusion_prob": float(self.inclusion_probs[i, j]),
                 "log_z": float(self.log_z[i])}
                for i, v0 in enumerate(self.v0)
                for j in range(self.means.shape[1])]


def spike_slab_path(X, y, lam, v0_grid, p=None, v1=1.0, n_particles=200,
                    len_chain=10, wastefree=True, seed=0, n_jobs=1,
                    numba_threads=None, standardize=True, n_flips=None):
    """Regularisation path of the spike-and-slab Gibbs posterior in ``v0``.

    One SMC run of
    ``AUCGibbsModel(X, y, lam, prior=SpikeSlabPrior(d, p, v0, v1))`` per
    spike variance, all with the same ``seed`` (common random numbers make
    the path smoother) [RACL14, Fig. 3].

    As ``v0 / v1`` shrinks the indicators ``z`` become sticky under the
    Gibbs update of :class:`~pac_particles.smc.moves.SpikeSlabMove` (the
    move with ``n_flips=None``): the inclusion probabilities at the small
    end of the grid then rest on the reweighting of the initial population.
    With ``n_flips`` a number,
    :class:`~pac_particles.smc.moves.SpikeSlabFlipMove` adds that many
    scaled flips of single indicators per step, which mix ``z`` whatever
    ``v0 / v1``; compare with :class:`pac_particles.approx.ep.EPSpikeSlab`.

    Parameters
    ----------
    X, y, lam, standardize : as :class:`~pac_particles.smc.models.AUCGibbsModel`.
    v0_grid : sequence of float in (0, v1)
    p, v1 : as :class:`~pac_particles.problem.priors.SpikeSlabPrior` (default ``p``:
        ``1 - exp(-1/d)``).
    n_particles, len_chain, wastefree, seed : as
        :func:`~pac_particles.smc.posterior.run_smc`.
    n_jobs, numba_threads : as :func:`~lab.study.repeated_runs`.
    n_flips : int or None, scaled indicator flips per MCMC step (None: the
        Gibbs update alone).

    Returns
    -------
    SpikeSlabPath
    """
    v0_grid = np.atleast_1d(np.asarray(v0_grid, dtype=float))
    d = validate_xy(X, y, standardize=standardize).d
    priors = [SpikeSlabPrior(d, p=p, v0=v0, v1=v1) for v0 in v0_grid]
    threads = parallel.threads_per_job(n_jobs, numba_threads)
    move, options = (("spike_slab", None) if n_flips is None
                     else ("spike_slab_flips", {"n_flips": n_flips}))
    runs = Parallel(n_jobs=n_jobs)(
        delayed(_study_run)(AUCGibbsModel(X, y, lam, prior=prior,
                                          standardize=standardize),
                            move, n_particles, len_chain, seed,
                            threads, wastefree, None, move_options=options)
        for prior in priors)
    return SpikeSlabPath(
        v0=v0_grid, p=float(priors[0].p), v1=float(v1),
        means=np.array([run["mean"] for run in runs]),
        inclusion_probs=np.array([run["inclusion_probs"] for run in runs]),
        log_z=np.array([run["log_z"] for run in runs]),
        wall_time=np.array([run["wall_time"] for run in runs]))
