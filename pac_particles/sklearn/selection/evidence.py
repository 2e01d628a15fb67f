"""The evidence grid (:mod:`pac_particles.sklearn.selection`): SMC
estimates of ``log Z`` over a grid of prior hyper-parameters, the empirical
bound of [RACL14, Sec. 3.1] minimised by maximising the evidence.

References
----------
[RACL14] Ridgway, J., Alquier, P., Chopin, N. and Liang, F. (2014).
PAC-Bayesian AUC classification and scoring. NIPS 27, section 3.1.
"""

from dataclasses import dataclass

import numpy as np
from joblib import Parallel, delayed

from pac_particles.core.checks import InputError, check_probability
from pac_particles.core.progress import Progress, tracked
from pac_particles.smc.posterior import run_smc

__all__ = ["EvidenceGrid", "evidence_grid"]


@dataclass
class EvidenceGrid:
    """SMC estimates of ``log Z`` over a grid of hyper-parameters."""

    params: list
    log_z: np.ndarray
    posteriors: list

    @property
    def best_index(self):
        return int(np.argmax(self.log_z))

    @property
    def best_params(self):
        return self.params[self.best_index]


def _evidence_run(make_model, params, smc_kwargs, seed):
    post = run_smc(make_model(**params), seed=seed, **smc_kwargs)
    return post


def evidence_grid(make_model, param_grid, n_particles=200, len_chain=10,
                  move=None, seed=None, n_jobs=1, keep_posteriors=False,
                  verbose=False, ESSrmin=0.5):
    """Estimate ``log Z`` by SMC for each hyper-parameter setting.

    Parameters
    ----------
    make_model : callable
        ``make_model(**params)`` returns a model (e.g. an AUCGibbsModel with
        a spike-and-slab prior built from ``params``).
    param_grid : iterable of dict
        The settings; e.g. ``sklearn.model_selection.ParameterGrid(...)``.
    n_particles, len_chain, move, ESSrmin : passed to :func:`run_smc`.
    seed : int, optional; setting k uses ``seed + k``.
    n_jobs : int, runs in parallel through joblib.
    keep_posteriors : bool, keep every SMCPosterior (memory).
    verbose : bool or str, progress over the settings
        (:mod:`pac_particles.core.progress`).

    Returns
    -------
    EvidenceGrid (``best_params`` maximises the estimated evidence).
    """
    params = [dict(p) for p in param_grid]
    if not params:
        raise InputError("param_grid is empty")
    smc_kwargs = dict(n_particles=n_particles, len_chain=len_chain, move=move,
                      ESSrmin=check_probability(ESSrmin, "ESSrmin"))
    with Progress(verbose, total=len(params), desc="evidence grid",
                  unit="setting") as progress:
        posts = list(tracked(Parallel(n_jobs=n_jobs, return_as="generator")(
            delayed(_evidence_run)(make_model, p, smc_kwargs,
                                   None if seed is None else int(seed) + k)
            for k, p in enumerate(params)), progress, "setting"))
    return EvidenceGrid(params=params,
                        log_z=np.array([p.log_z for p in posts]),
                        posteriors=posts if keep_posteriors else [])
