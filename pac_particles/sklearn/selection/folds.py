"""The grid of ``lam``, stratified folds and the one K-fold loop
(:mod:`pac_particles.sklearn.selection`); :func:`cv_lambda`, that loop
along one tempering path per fold with SMC's refit on all rows."""

import functools
import warnings
from dataclasses import dataclass, field

import numpy as np
from joblib import Parallel, delayed
from particles import smc_samplers as ssp
from sklearn.model_selection import StratifiedKFold

from pac_particles.core.checks import (InputError, check_choice, check_count,
                                       check_fraction, check_positive,
                                       check_probability)
from pac_particles.core.parallel import (concurrent_folds, limited_threads,
                                         one_blas_thread)
from pac_particles.core.progress import Progress, tracked
from pac_particles.problem.data import binary_labels
from pac_particles.smc.models import AUCGibbsModel
from pac_particles.smc.posterior import POINT_ESTIMATES, run_smc
from pac_particles.sklearn.selection.scorers import SMCPathScorer

__all__ = ["LAM_MAX_PER_POINT", "CLASSIFICATION_LAM_MAX_PER_POINT",
           "default_lam_max", "lam_grid", "LamCVResult", "on_grid",
           "FewerFoldsWarning", "fold_count", "stratified_folds",
           "cross_validate_lam", "holdout_split", "heldout_score", "cv_lambda"]


#: The default top of the ``lam`` grid, per training point: ``5 n``. The
#: chosen ``lam`` lay below 0.8 n on nine of ten seeds and splits of Pima
#: (the validation AUC is flat above it within its noise) and the
#: certificate's optimum near ``m``; tempering the folds to 20 n (the
#: earlier default) took twice as long (docs/benchmarks.md, "Default fits").
LAM_MAX_PER_POINT = 5.0
#: The same for classification: ``lam`` multiplies a mean loss of ``n``
#: terms, whose Gibbs posterior concentrates more slowly than the AUC's
#: (``m = min(n_pos, n_neg)`` terms); the classifier's grid tops at ``10 n``.
CLASSIFICATION_LAM_MAX_PER_POINT = 10.0


def default_lam_max(n, task="ranking"):
    """The top of the ``lam`` grid when none is given: ``5 n`` for ranking
    (:data:`LAM_MAX_PER_POINT`), ``10 n`` for classification
    (:data:`CLASSIFICATION_LAM_MAX_PER_POINT`)."""
    per_point = {"ranking": LAM_MAX_PER_POINT,
                 "classification": CLASSIFICATION_LAM_MAX_PER_POINT}
    return per_point[check_choice(task, "task", tuple(per_point))] * check_count(n, "n")


def lam_grid(lam_max, grid_size=50, decades=3.0):
    """The candidate values of ``lam``: ``grid_size`` log-spaced values from
    ``lam_max / 10**decades`` to ``lam_max``.

    The grid is fixed before seeing the data (it depends on ``n`` at most,
    through ``lam_max``), so a PAC-Bayes certificate at the ``lam`` chosen on
    it holds with ``log(grid_size / eps)`` in place of ``log(1 / eps)``: a
    union bound over the grid (``grid_size=`` of :mod:`pac_particles.bounds`).
    """
    lam_max = check_positive(lam_max, "lam_max")
    grid_size = check_count(grid_size, "grid_size", minimum=2)
    decades = check_positive(decades, "grid_decades")
    return np.geomspace(lam_max / 10.0 ** decades, lam_max, grid_size)


@dataclass
class LamCVResult:
    """Cross-validation of ``lam`` on a grid.

    Attributes
    ----------
    grid : (G,) log-spaced values of ``gamma``.
    fold_auc : (n_folds, G) validation AUC of each fold on the grid (one row
        for a leave-one-out criterion).
    mean_auc, std_auc : (G,) mean and standard deviation over folds.
    best_lam : the grid value with the highest mean validation AUC.
    fold_paths : per fold, ``(gammas, aucs)`` exactly as scored (the
        tempering path's exponents for SMC, the grid otherwise).
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

    @property
    def one_se_floor(self):
        """The best mean validation AUC minus its standard error
        (``std / sqrt(n_folds)`` at the best value): the one-standard-error
        rule [HTF09, Sec. 7.10]. With one row (a leave-one-out curve), the
        best value itself."""
        mean = self.mean_auc
        best = int(np.argmax(mean))
        return mean[best] - self.std_auc[best] / np.sqrt(len(self.fold_auc))

    @property
    def within_one_se(self):
        """(G,) bool: grid values whose mean validation AUC is at least
        :attr:`one_se_floor`, the values the folds cannot tell apart from
        the best."""
        return self.mean_auc >= self.one_se_floor

    def mean_auc_at(self, gammas):
        """The mean validation AUC at any ``gammas`` within the grid, linear
        in ``log gamma`` between grid values (as the folds' curves were put
        on the grid)."""
        return np.interp(np.log(gammas), np.log(self.grid), self.mean_auc)

    def rows(self):
        """The table behind the CV curve: one row per ``gamma`` of the grid
        with the mean, spread and per-fold validation AUCs."""
        return [dict({"gamma": gamma, "mean_auc": mean, "sd_auc": sd},
                     **{f"fold{k + 1}": auc for k, auc in enumerate(folds)})
                for gamma, mean, sd, folds in zip(self.grid, self.mean_auc,
                                                  self.std_auc, self.fold_auc.T)]


def on_grid(grid, paths):
    """Validation-AUC curves ``(gammas, aucs)`` put on the grid (linear in
    ``log gamma``; below a curve's first point, its first value) and the
    grid value of highest mean."""
    fold_auc = np.array([np.interp(np.log(grid), np.log(g), a)
                         for g, a in paths])
    return LamCVResult(grid=grid, fold_auc=fold_auc,
                       best_lam=float(grid[np.argmax(fold_auc.mean(axis=0))]),
                       fold_paths=list(paths))


class FewerFoldsWarning(UserWarning):
    """The smallest class has fewer members than the folds asked for, so
    :func:`stratified_folds` uses as many folds as it has members."""


def fold_count(positives, n_folds):
    """The number of stratified folds that ``positives`` can fill:
    ``n_folds``, or the size of the smallest class when that is smaller.

    Every validation fold must hold a positive and a negative (the AUC of a
    fold with one class is undefined), so K cannot exceed the smallest
    class. Below ``n_folds`` members the split falls back to K = that size
    (leave-one-out for that class) with a :class:`FewerFoldsWarning`, as
    scikit-learn's ``StratifiedKFold`` warns rather than fails; the default
    ``n_folds = 5`` thus still fits data sets with 2 to 4 members in a
    class.

    Parameters
    ----------
    positives : array of shape (n,), binary labels.
    n_folds : int >= 2, the folds asked for.

    Returns
    -------
    int, the folds to use (between 2 and ``n_folds``).

    Raises
    ------
    InputError
        When a class has fewer than 2 members: no split leaves both classes
        in every training and validation part.
    """
    n_folds = check_count(n_folds, "n_folds", minimum=2)
    positives = binary_labels(positives)
    smallest = int(min(positives.sum(), (~positives).sum()))
    if smallest < 2:
        raise InputError(f"stratified cross-validation needs at least 2 "
                         f"members of each class, but one class has "
                         f"{smallest}: give a float lam instead of "
                         f"lam='cv', or more data")
    if smallest < n_folds:
        warnings.warn(f"the smallest class has {smallest} members, fewer "
                      f"than n_folds = {n_folds}: using {smallest} folds "
                      f"(set n_folds <= {smallest} to silence this)",
                      FewerFoldsWarning, stacklevel=3)
        return smallest
    return n_folds


def stratified_folds(positives, n_folds, seed=None):
    """``(train, validation)`` index pairs of a shuffled stratified K-fold
    split (``seed`` None: 0, so that a split is always reproducible), with
    K = ``n_folds`` or fewer when the smallest class is smaller
    (:func:`fold_count`)."""
    positives = binary_labels(positives)
    n_folds = fold_count(positives, n_folds)
    split = StratifiedKFold(n_splits=n_folds, shuffle=True,
                            random_state=0 if seed is None else int(seed))
    return list(split.split(np.zeros((positives.size, 1)), positives))


def cross_validate_lam(X, y, grid, scorer, n_folds=5, seed=None, n_jobs=1,
                       verbose=False, alongside=None, holdout=None):
    """K-fold cross-validation of ``lam`` over ``grid`` with any fitting method.

    Parameters
    ----------
    X, y : training data (raw inputs, binary labels).
    grid : (G,) candidate values, from :func:`lam_grid`.
    scorer : callable
        ``scorer(X_train, y_train, X_val, y_val, grid, seed) -> (gammas,
        aucs)``: the validation-AUC curve of one fold, at the values it
        visited (:class:`SMCPathScorer`: one tempering path;
        :class:`RefitScorer`: one fit per grid value). Curves are put on the
        grid by :func:`on_grid`.
    n_folds : int, stratified folds (:func:`stratified_folds`).
    holdout : float in (0, 1), optional
        Score on one stratified held-out split of this fraction instead of
        ``n_folds`` folds (:func:`holdout_split`): one fit per grid value,
        the rule at scale, where K refits cost K times a fit.
    seed : int, optional; the split, and fold k gets ``seed + k``.
    n_jobs : int, folds in parallel through joblib.
    verbose : bool or str, progress over the folds
        (:mod:`pac_particles.core.progress`).
    alongside : callable, optional
        A job run in the same pool as the folds, e.g. a refit on all data
        that does not depend on the chosen ``lam`` (:func:`cv_lambda` with
        ``refit_to="path"``); its result is the returned ``posterior``.

    Returns
    -------
    LamCVResult (``posterior``: the result of ``alongside``, else None).
    """
    positives = binary_labels(y)
    folds = (stratified_folds(positives, n_folds, seed) if holdout is None
             else [holdout_split(positives, holdout, seed)])
    X = np.asarray(X, dtype=float)
    jobs = [delayed(scorer)(X[tr], positives[tr], X[va], positives[va], grid,
                            None if seed is None else int(seed) + k)
            for k, (tr, va) in enumerate(folds)]
    if alongside is not None:
        # dispatched first: it is the longest job (a refit on all rows with
        # the full population), and the pool takes jobs in order; last, it
        # would start only once the folds are done
        jobs.insert(0, delayed(alongside)())
    # "fold k/K" for the folds, "refit" for the job alongside (not a fold)
    labels = ["refit on all rows"] * (alongside is not None) + [
        f"fold {k + 1}/{len(folds)}" for k in range(len(folds))]
    with Progress(verbose, total=len(jobs), desc="CV folds" + (
            " + refit" if alongside is not None else ""),
                  unit="job") as progress:
        done = list(tracked(Parallel(n_jobs=n_jobs, return_as="generator")(
            jobs), progress, labels))
    posterior = done.pop(0) if alongside is not None else None
    result = on_grid(grid, done)
    result.posterior = posterior
    return result


def holdout_split(positives, fraction, seed=None):
    """``(train, validation)`` indices of one shuffled stratified split
    with a ``fraction`` of each class held out (``seed`` None: 0)."""
    positives = binary_labels(positives)
    fraction = check_fraction(fraction, "holdout")
    rng = np.random.default_rng(0 if seed is None else int(seed))
    held = np.zeros(positives.size, dtype=bool)
    for members in (np.flatnonzero(positives), np.flatnonzero(~positives)):
        k = int(round(fraction * members.size))
        if not 0 < k < members.size:
            raise InputError(f"a held-out fraction of {fraction:g} leaves a "
                             f"part without a class of {members.size} rows")
        held[rng.choice(members, size=k, replace=False)] = True
    return np.flatnonzero(~held), np.flatnonzero(held)


def heldout_score(fit_and_score, positives, n_folds=5, seed=None):
    """The mean held-out score of refits on stratified folds at a fixed
    ``lam``: ``fit_and_score(train, validation) -> float`` on index arrays
    (the estimator's ``heldout_auc_`` with PU labels and a float ``lam``).
    None when a class has one member (no split)."""
    try:
        folds = stratified_folds(positives, n_folds, seed)
    except InputError:
        # a class of one member: no split, and a fit at a fixed lam needs
        # none, so only the held-out figure is missing
        return None
    return float(np.mean([fit_and_score(train, val) for train, val in folds]))


def cv_lambda(X, y, lam_max, n_folds=5, grid_size=50, grid_decades=3.0,
              point="bayes_point",
              refit=True, refit_to="best", n_particles=200, len_chain=10,
              move=None, ESSrmin=0.5, fold_particles=None, fold_len_chain=None,
              model_kwargs=None, make_model=AUCGibbsModel, seed=None,
              n_jobs=None, verbose=False, refit_model=None):
    """Choose ``lam`` by K-fold cross-validation along the tempering path.

    Parameters
    ----------
    X, y : training data.
    lam_max : float
        End of the tempering path and of the grid of candidate ``lam``.
    n_folds : int
        Stratified folds.
    grid_size, grid_decades : int, float
        The common grid of ``gamma`` (:func:`lam_grid`): ``grid_size``
        log-spaced values from ``lam_max / 10**grid_decades`` to ``lam_max``.
        It is fixed before seeing the data, so a PAC-Bayes certificate at the
        chosen ``lam`` holds with ``log(grid_size / eps)`` in place of
        ``log(1 / eps)`` (a union bound over the grid). Grid values below a
        fold's first tempering step take that step's AUC.
    point : str
        Point estimate scored on the held-out fold (see
        ``pac_particles.smc.posterior.POINT_ESTIMATES``).
    refit : bool
        Run SMC on all data at the chosen ``lam``.
    refit_to : {"best", "path"}
        Where the refit's tempering path ends: at ``best_lam`` (after the
        folds), or at ``lam_max`` with the particles of every step kept
        (``SMCPosterior.at_step``) -- a run that does not depend on the
        folds, so it runs alongside them in the same pool -- so that the
        caller can choose among the Gibbs posteriors the folds cannot tell
        apart (:attr:`LamCVResult.within_one_se`; the estimator's
        ``cv_rule="certified"``). That run keeps its tempering estimate of
        log Z (``evidence="tempering"``: the step is chosen later, and the
        caller refines it there, as the estimator does); the folds always
        do.
    n_particles, len_chain : passed to :func:`run_smc` for the refit.
    move : passed to :func:`run_smc` for the refit and the folds.
    ESSrmin : float in (0, 1), the tempering's target ESS ratio, passed to
        :func:`run_smc` for the refit and the folds (the estimator's
        ``ess_rmin``).
    fold_particles, fold_len_chain : int, optional
        ``n_particles`` and ``len_chain`` of the folds' samplers; default
        half of each (at least 2; ``len_chain`` itself when ``move`` is a
        whole ``MCMCSequence``, which fixes the chain length). A fold only
        scores the point estimate on its held-out part, whose AUC varies far
        more between folds than between samplers, so the folds run on a
        quarter of the refit's population: the same ``lam`` in a fraction
        of the CPU time (docs/benchmarks.md, "Default fits").
    model_kwargs : dict, passed to ``make_model`` (e.g. prior).
    make_model : callable ``(X, y, lam, **model_kwargs) -> model``; default
        :class:`AUCGibbsModel`; :func:`~pac_particles.smc.models.linear_score_model`
        samples in score space when d > n. The folds' models.
    refit_model : callable ``lam -> model``, optional
        The refit's model on all of ``(X, y)``, from the caller's problem
        set up once (the estimator's); default ``make_model`` on ``X``.
    seed : int, optional; fold k uses ``seed + k``, the refit ``seed + n_folds``.
    n_jobs : int, folds run in parallel through joblib; None (default): one
        job per core up to ``n_folds``, the cores shared among the folds'
        numba and BLAS threads (:func:`pac_particles.core.parallel.concurrent_folds`).
    verbose : bool or str, progress over the folds and of the refit's
        tempering (:mod:`pac_particles.core.progress`).

    Returns
    -------
    LamCVResult
    """
    grid = lam_grid(lam_max, grid_size, grid_decades)    # validates lam_max
    lam_max = float(lam_max)
    point = check_choice(point, "point", POINT_ESTIMATES)
    model_kwargs = dict(model_kwargs or {})
    n_particles = check_count(n_particles, "n_particles", minimum=2)
    len_chain = check_count(len_chain, "len_chain", minimum=2)
    smc_kwargs = dict(n_particles=n_particles, len_chain=len_chain, move=move,
                      ESSrmin=check_probability(ESSrmin, "ESSrmin"))
    if fold_particles is None:
        fold_particles = max(2, n_particles // 2)
    if fold_len_chain is None:
        # a whole MCMCSequence fixes its own chain length
        fold_len_chain = (len_chain if isinstance(move, ssp.MCMCSequence)
                          else max(2, len_chain // 2))
    fold_kwargs = dict(
        smc_kwargs,
        n_particles=check_count(fold_particles, "fold_particles", minimum=2),
        len_chain=check_count(fold_len_chain, "fold_len_chain", minimum=2))
    n_jobs, threads = concurrent_folds(n_folds, n_jobs)
    scorer = SMCPathScorer(lam_max, point, model_kwargs, fold_kwargs,
                           make_model=make_model, threads=threads)
    refit_to = check_choice(refit_to, "refit_to", ("best", "path"))
    refit_seed = None if seed is None else int(seed) + int(n_folds)

    def refit_at(lam, keep_steps, limit):
        model = (refit_model(lam) if refit_model is not None
                 else make_model(X, binary_labels(y), lam, **model_kwargs))
        # a path refit is used at a step chosen later: importance-sampling
        # evidence at lam_max would be wasted (the caller refines the step)
        kwargs = dict(smc_kwargs, evidence="tempering") if keep_steps else smc_kwargs
        with limited_threads(limit), one_blas_thread():
            return run_smc(model, seed=refit_seed, keep_steps=keep_steps,
                           verbose=verbose, **kwargs)

    alongside = None
    if refit and refit_to == "path":
        # the whole path to lam_max does not depend on the folds
        alongside = functools.partial(refit_at, lam_max, True, threads)
    result = cross_validate_lam(X, y, grid, scorer, n_folds=n_folds,
                                seed=seed, n_jobs=n_jobs, verbose=verbose,
                                alongside=alongside)
    if refit and refit_to == "best":
        result.posterior = refit_at(result.best_lam, False, None)
    return result
