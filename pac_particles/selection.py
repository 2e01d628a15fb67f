"""Choosing ``lam`` and prior hyper-parameters.

Cross-validation of ``lam`` along the tempering path
    One adaptive-tempering run per fold, from the prior to ``lam_max``, visits
    the Gibbs posteriors at ``gamma_t = lam_max * exponent_t`` for free. The
    :class:`PathScores` collector records, at every step, the scores of the
    held-out fold under the current point estimate; so each fold yields a
    whole validation-AUC curve ``gamma -> AUC`` without re-running anything.
    Curves are put on a common log-spaced grid fixed in advance (linear
    interpolation in ``log gamma``), averaged over folds, the best ``lam`` is picked and the
    model refitted on all data (:func:`cv_lambda`).

Evidence maximisation
    For prior hyper-parameters ``xi`` (spike-and-slab ``p, v0, v1``, ARD
    variances, GP lengthscales), the empirical bound of Ridgway et al. (2014,
    section 3.1) is minimised by maximising ``log Z_{xi, lam}``;
    :func:`evidence_grid` estimates it by SMC over a grid (independent runs in
    parallel through joblib). Under an *isotropic* Gaussian prior there is
    nothing to tune: the risk is invariant to ``theta -> c theta``, so the
    prior variance only rescales the radius and ``Z`` does not depend on it.

Parallelism goes through joblib (``n_jobs``); a user can send the runs to a
cluster through joblib's backend mechanism, e.g.::

    import joblib
    from dask.distributed import Client, LocalCluster
    client = Client(LocalCluster())
    with joblib.parallel_config(backend="dask"):
        result = cv_lambda(X, y, lam_max=2000, n_jobs=-1)

Example
-------
::

    from pac_particles.data import load_dataset
    from pac_particles.selection import cv_lambda
    X, y, _ = load_dataset("pima")
    cv = cv_lambda(X, y, lam_max=5 * len(y), n_folds=5, seed=0)
    cv.best_lam, cv.posterior.log_z

References
----------
Ridgway, J., Alquier, P., Chopin, N. and Liang, F. (2014). PAC-Bayesian AUC
classification and scoring. NIPS 27, section 3.1.
"""

from dataclasses import dataclass, field

import numpy as np
from joblib import Parallel, delayed
from particles import collectors
from sklearn.model_selection import StratifiedKFold

from .auc import auc_risk, binary_labels
from .data import check_lam
from .models import AUCGibbsModel
from .posterior import POINT_ESTIMATES, run_smc
from .priors import param_array
from .weighted_particles import WeightedParticles

__all__ = ["PathScores", "LamCVResult", "cv_lambda", "EvidenceGrid",
           "evidence_grid"]


class PathScores(collectors.Collector):
    """Collector: scores of held-out inputs under the point estimate of the
    current tempered posterior, with the current exponent.

    ``X_val`` must be preprocessed like the model's data
    (``model.data.transform``). Each entry of the summary is
    ``(exponent, scores)``.
    """

    signature = {"X_val": None, "point": "bayes_point"}

    def fetch(self, smc):
        current = WeightedParticles(param_array(smc.X.theta), smc.W)
        return (smc.X.shared["exponents"][-1],
                self.X_val @ current.point_estimate(self.point))


@dataclass
class LamCVResult:
    """Cross-validation of ``lam`` along the tempering path.

    Attributes
    ----------
    grid : (G,) log-spaced values of ``gamma``.
    fold_auc : (n_folds, G) validation AUC of each fold on the grid.
    mean_auc, std_auc : (G,) mean and standard deviation over folds.
    best_lam : the grid value with the highest mean validation AUC.
    fold_paths : per fold, ``(gammas, aucs)`` exactly as visited by its run.
    posterior : the refitted SMCPosterior at ``best_lam`` (if refit).
    """

    grid: np.ndarray
    fold_auc: np.ndarray
    best_lam: float
    fold_paths: list = field(default_factory=list)
    posterior: object = None

    @property
    def mean_auc(self):
        return self.fold_auc.mean(axis=0)

    @property
    def std_auc(self):
        return self.fold_auc.std(axis=0, ddof=1) if len(self.fold_auc) > 1 \
            else np.zeros(self.grid.size)


def _fold_path(X_tr, y_tr, X_val, y_val, lam_max, point, model_kwargs,
               smc_kwargs, seed):
    model = AUCGibbsModel(X_tr, y_tr, lam=lam_max, **model_kwargs)
    collector = PathScores(X_val=model.data.transform(X_val), point=point)
    post = run_smc(model, seed=seed, collect=[collector], **smc_kwargs)
    steps = post.summaries.pathScores
    gammas = np.array([lam_max * e for e, _ in steps])
    aucs = np.array([1.0 - auc_risk(s, y_val) for _, s in steps])
    return gammas, aucs


def cv_lambda(X, y, lam_max, n_folds=5, grid_size=50, grid_decades=3.0,
              point="bayes_point",
              refit=True, n_particles=200, len_chain=10, move=None,
              model_kwargs=None, seed=None, n_jobs=1, verbose=False):
    """Choose ``lam`` by K-fold cross-validation along the tempering path.

    Parameters
    ----------
    X, y : training data.
    lam_max : float
        End of the tempering path and of the grid of candidate ``lam``.
    n_folds : int
        Stratified folds.
    grid_size, grid_decades : int, float
        The common grid of ``gamma``: ``grid_size`` log-spaced values from
        ``lam_max / 10**grid_decades`` to ``lam_max``. It is fixed before
        seeing the data, so a PAC-Bayes certificate at the chosen ``lam``
        holds with ``log(grid_size / eps)`` in place of ``log(1 / eps)``
        (a union bound over the grid). Grid values below a fold's first
        tempering step take that step's AUC.
    point : str
        Point estimate scored on the held-out fold (see
        ``pac_particles.posterior.POINT_ESTIMATES``).
    refit : bool
        Run SMC on all data at the chosen ``lam``.
    n_particles, len_chain, move : passed to :func:`run_smc`.
    model_kwargs : dict, passed to :class:`AUCGibbsModel` (e.g. prior).
    seed : int, optional; fold k uses ``seed + k``, the refit ``seed + n_folds``.
    n_jobs : int, folds run in parallel through joblib.
    verbose : bool, progress of the refit.

    Returns
    -------
    LamCVResult
    """
    lam_max = check_lam(lam_max, "lam_max")
    if point not in POINT_ESTIMATES:
        raise ValueError(f"unknown point estimate {point!r}; choose from "
                         f"{POINT_ESTIMATES}")
    positives = binary_labels(y)
    n_folds = int(n_folds)
    if n_folds < 2:
        raise ValueError(f"n_folds must be >= 2, got {n_folds}")
    if min(positives.sum(), (~positives).sum()) < n_folds:
        raise ValueError(f"each class needs at least n_folds = {n_folds} "
                         "members for stratified cross-validation")
    X = np.asarray(X, dtype=float)
    model_kwargs = dict(model_kwargs or {})
    smc_kwargs = dict(n_particles=n_particles, len_chain=len_chain, move=move)
    base = 0 if seed is None else int(seed)
    folds = StratifiedKFold(n_splits=n_folds, shuffle=True,
                            random_state=base).split(X, positives)
    paths = Parallel(n_jobs=n_jobs)(
        delayed(_fold_path)(X[tr], positives[tr], X[va], positives[va], lam_max,
                            point, model_kwargs, smc_kwargs,
                            None if seed is None else base + k)
        for k, (tr, va) in enumerate(folds))
    grid = np.geomspace(lam_max / 10.0 ** grid_decades, lam_max, int(grid_size))
    fold_auc = np.array([np.interp(np.log(grid), np.log(g), a) for g, a in paths])
    result = LamCVResult(grid=grid, fold_auc=fold_auc,
                         best_lam=float(grid[np.argmax(fold_auc.mean(axis=0))]),
                         fold_paths=paths)
    if refit:
        model = AUCGibbsModel(X, positives, lam=result.best_lam, **model_kwargs)
        result.posterior = run_smc(
            model, seed=None if seed is None else base + n_folds,
            verbose=verbose, **smc_kwargs)
    return result


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
                  move=None, seed=None, n_jobs=1, keep_posteriors=False):
    """Estimate ``log Z`` by SMC for each hyper-parameter setting.

    Parameters
    ----------
    make_model : callable
        ``make_model(**params)`` returns a model (e.g. an AUCGibbsModel with
        a spike-and-slab prior built from ``params``).
    param_grid : iterable of dict
        The settings; e.g. ``sklearn.model_selection.ParameterGrid(...)``.
    n_particles, len_chain, move : passed to :func:`run_smc`.
    seed : int, optional; setting k uses ``seed + k``.
    n_jobs : int, runs in parallel through joblib.
    keep_posteriors : bool, keep every SMCPosterior (memory).

    Returns
    -------
    EvidenceGrid (``best_params`` maximises the estimated evidence).
    """
    params = [dict(p) for p in param_grid]
    if not params:
        raise ValueError("param_grid is empty")
    smc_kwargs = dict(n_particles=n_particles, len_chain=len_chain, move=move)
    posts = Parallel(n_jobs=n_jobs)(
        delayed(_evidence_run)(make_model, p, smc_kwargs,
                               None if seed is None else int(seed) + k)
        for k, p in enumerate(params))
    return EvidenceGrid(params=params,
                        log_z=np.array([p.log_z for p in posts]),
                        posteriors=posts if keep_posteriors else [])
