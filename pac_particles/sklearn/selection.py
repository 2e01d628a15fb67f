"""Choosing ``lam`` and prior hyper-parameters.

The grid of ``lam``
    :func:`lam_grid` -- ``grid_size`` log-spaced values below ``lam_max``,
    fixed before seeing the data: the certificate of the chosen value pays
    ``log(grid_size)`` (a union bound over the grid). Every method chooses
    on it.

Cross-validation of ``lam``
    :func:`cross_validate_lam` is the one K-fold machinery (stratified folds,
    per-fold seeds, folds in parallel through joblib, a :class:`LamCVResult`;
    fewer folds, with a :class:`FewerFoldsWarning`, when a class has fewer
    members than ``n_folds``: :func:`fold_count`);
    what a fold computes is a *scorer* returning its validation-AUC curve:

    * :class:`SMCPathScorer` -- one adaptive-tempering run per fold, from the
      prior to ``lam_max``, visits the Gibbs posteriors at
      ``gamma_t = lam_max * exponent_t`` for free. The :class:`PathScores`
      collector records, at every step, the scores of the held-out fold under
      the current point estimate; so each fold yields a whole validation-AUC
      curve ``gamma -> AUC`` without re-running anything (:func:`cv_lambda`
      adds the refit on all data).
    * :class:`RefitScorer` -- one fit per grid value (Gaussian VB).

    Curves are put on the grid (linear interpolation in ``log gamma``) and
    averaged over folds; the best ``lam`` is the grid value of highest mean.
    The values within one standard error of it
    (:attr:`LamCVResult.within_one_se` [HTF09, Sec. 7.10]) are those the
    folds cannot tell apart; on small data sets that is often the whole
    grid, and the estimator then chooses among them by their certificate.
    :func:`loo_lambda` gives the same result from a leave-one-out AUC that
    needs no refit (EP's cavity scores [OW00]).

Evidence maximisation
    For prior hyper-parameters ``xi`` (spike-and-slab ``p, v0, v1``, ARD
    variances, GP lengthscales), the empirical bound of [RACL14, Sec. 3.1]
    is minimised by maximising ``log Z_{xi, lam}``;
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

    from pac_particles.problem.data import load_dataset
    from pac_particles.sklearn.selection import cv_lambda
    X, y, _ = load_dataset("pima")
    cv = cv_lambda(X, y, lam_max=5 * len(y), n_folds=5, seed=0)
    cv.best_lam, cv.posterior.log_z

References
----------
[HTF09] Hastie, T., Tibshirani, R. and Friedman, J. (2009). The Elements of
Statistical Learning, 2nd ed. Springer, section 7.10.

[OW00] Opper, M. and Winther, O. (2000). Gaussian processes for
classification: mean-field algorithms. Neural Computation 12(11), 2655-2684.

[RACL14] Ridgway, J., Alquier, P., Chopin, N. and Liang, F. (2014).
PAC-Bayesian AUC classification and scoring. NIPS 27, section 3.1.
"""

import functools
import warnings
from dataclasses import dataclass, field

import numpy as np
from joblib import Parallel, delayed
from particles import collectors
from particles import smc_samplers as ssp
from sklearn.model_selection import StratifiedKFold

from pac_particles.problem.auc import auc_risk, binary_labels
from pac_particles.core.checks import (InputError, check_choice, check_count, check_positive,
                     check_probability)
from pac_particles.smc.models import AUCGibbsModel
from pac_particles.core.parallel import concurrent_folds, limited_threads, one_blas_thread
from pac_particles.smc.posterior import POINT_ESTIMATES, run_smc
from pac_particles.problem.priors import param_array
from pac_particles.core.progress import Progress, tracked
from pac_particles.core.weighted_particles import WeightedParticles

__all__ = ["PathScores", "LamCVResult", "LAM_MAX_PER_POINT",
           "default_lam_max", "lam_grid", "FewerFoldsWarning", "fold_count",
           "stratified_folds",
           "cross_validate_lam", "loo_lambda", "SMCPathScorer", "RefitScorer",
           "cv_lambda", "EvidenceGrid", "evidence_grid"]


class PathScores(collectors.Collector):
    """Collector: scores of held-out inputs under the point estimate of the
    current tempered posterior, with the current exponent.

    ``X_val`` must be preprocessed like the model's data
    (``model.data.transform``); ``model``, when given, maps a point estimate
    to scores (``model.predict_scores``: GP latent scores, or a linear
    model sampled in score space), else the scores are ``X_val @ point``.
    Each entry of the summary is ``(exponent, scores)``.
    """

    signature = {"X_val": None, "point": "bayes_point", "model": None}

    def fetch(self, smc):
        current = WeightedParticles(param_array(smc.X.theta), smc.W)
        point = current.point_estimate(self.point)
        # score-space particles (GP latent scores) predict through the model
        scores = (self.X_val @ point if self.model is None
                  else self.model.predict_scores(self.X_val, point))
        return smc.X.shared["exponents"][-1], scores


#: The default top of the ``lam`` grid, per training point: ``5 n``. The
#: chosen ``lam`` lay below 0.8 n on nine of ten seeds and splits of Pima
#: (the validation AUC is flat above it within its noise) and the
#: certificate's optimum near ``m``; tempering the folds to 20 n (the
#: earlier default) took twice as long (docs/benchmarks.md, "Default fits").
LAM_MAX_PER_POINT = 5.0


def default_lam_max(n):
    """``LAM_MAX_PER_POINT * n``, the top of the ``lam`` grid when none is
    given."""
    return LAM_MAX_PER_POINT * check_count(n, "n")


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


def _on_grid(grid, paths):
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
                       verbose=False, alongside=None):
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
        grid by :func:`_on_grid`.
    n_folds : int, stratified folds (:func:`stratified_folds`).
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
    folds = stratified_folds(positives, n_folds, seed)
    X = np.asarray(X, dtype=float)
    jobs = [delayed(scorer)(X[tr], positives[tr], X[va], positives[va], grid,
                            None if seed is None else int(seed) + k)
            for k, (tr, va) in enumerate(folds)]
    if alongside is not None:
        # dispatched first: it is the longest job (a refit on all rows with
        # the full population), and the pool takes jobs in order; last, it
        # started after the folds (German credit: cv 3.4 s -> 2.7 s)
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
    result = _on_grid(grid, done)
    result.posterior = posterior
    return result


def _coarse_indices(n, stride):
    """``0, stride, 2 stride, ..`` and ``n - 1``."""
    coarse = list(range(0, n, stride))
    return coarse if coarse[-1] == n - 1 else coarse + [n - 1]


def _coarse_then_fine(n, stride, score_at):
    """Indices ``0, stride, 2 stride, ..`` and ``n - 1`` in increasing
    order, then the up to ``stride - 1`` neighbours on each side of the
    best of them: ``score_at(k) -> float or None`` for each, returns
    ``{k: score}``."""
    scores = {k: score_at(k) for k in _coarse_indices(n, stride)}
    found = [k for k in scores if scores[k] is not None]
    if found:
        best = max(found, key=lambda k: scores[k])
        rest = range(max(0, best - stride + 1), min(n, best + stride))
    else:           # no value scored: try the others rather than give up
        rest = range(n)
    for k in rest:
        if k not in scores:
            scores[k] = score_at(k)
    return scores


def loo_lambda(grid, loo_auc, verbose=False, stride=1):
    """Choose ``lam`` by a leave-one-out AUC computed without refitting
    (EP's cavity scores [OW00]): ``loo_auc(lam) -> float`` at the grid
    values, or None where the fit failed (that value is left out of the
    returned grid; at least one must remain); one row in the returned
    :class:`LamCVResult`. ``verbose``: progress over the grid
    (:mod:`pac_particles.core.progress`).

    ``stride`` > 1 scores every ``stride``-th value (and the last) from
    small to large ``lam``, then the values around the best of them: the
    leave-one-out AUC varies slowly along a grid of ratio 1.8, and with
    ``stride = 2`` 9 of 13 values are scored. The returned grid holds the
    values scored."""
    grid = np.asarray(grid, dtype=float)
    stride = check_count(stride, "stride")
    n = len(grid)
    total = min(n, len(_coarse_indices(n, stride)) + 2 * (stride - 1))
    with Progress(verbose, total=total, desc="lam grid",
                  unit="lam") as progress:
        scored = []

        def score_at(k):
            # tracked() advances the progress by one per value scored
            scored.append(k)
            return next(tracked([loo_auc(grid[k])], progress, "lam value",
                                start=len(scored) - 1))
        scores = _coarse_then_fine(n, stride, score_at)
    kept = np.array(sorted(k for k, v in scores.items() if v is not None),
                    dtype=int)
    if not kept.size:
        raise InputError(f"no value of the lam grid [{grid[0]:.4g}, "
                         f"{grid[-1]:.4g}] gave a leave-one-out AUC")
    values = np.array([scores[k] for k in kept], dtype=float)
    return _on_grid(grid[kept], [(grid[kept], values)])


class SMCPathScorer:
    """Fold scorer of :func:`cross_validate_lam`: one adaptive-tempering run
    from the prior to ``lam_max`` on the training part, the held-out AUC of
    the point estimate at every step (:class:`PathScores`).

    ``make_model(X, y, lam, **model_kwargs)`` builds the model (default
    :class:`~pac_particles.smc.models.AUCGibbsModel`;
    :func:`~pac_particles.smc.models.linear_score_model` samples in score space
    when d > n). ``threads``: numba and BLAS threads of the run (None:
    unchanged), so that concurrent folds share the cores."""

    def __init__(self, lam_max, point="bayes_point", model_kwargs=None,
                 smc_kwargs=None, make_model=AUCGibbsModel, threads=None):
        self.lam_max = lam_max
        self.point = point
        self.model_kwargs = dict(model_kwargs or {})
        self.smc_kwargs = dict(smc_kwargs or {})
        self.make_model = make_model
        self.threads = threads

    def __call__(self, X_tr, y_tr, X_val, y_val, grid, seed):
        model = self.make_model(X_tr, y_tr, self.lam_max, **self.model_kwargs)
        collector = PathScores(X_val=model.data.transform(X_val),
                               point=self.point,
                               model=model if model.is_gp else None)
        # BLAS on one thread: the prior's triangular solves on a few
        # particles at a time were 100x slower with spinning BLAS workers
        with limited_threads(self.threads), one_blas_thread():
            # a fold needs the path's scores, not the evidence
            post = run_smc(model, seed=seed, collect=[collector],
                           **dict(self.smc_kwargs, evidence="tempering"))
        steps = post.summaries.pathScores
        gammas = np.array([self.lam_max * e for e, _ in steps])
        aucs = np.array([1.0 - auc_risk(s, y_val) for _, s in steps])
        return gammas, aucs


class RefitScorer:
    """Fold scorer of :func:`cross_validate_lam`: one fit per grid value.

    ``make(X, y, lam)`` returns an unfitted approximation with ``fit()`` and
    ``predict(X_new)`` (e.g. :class:`pac_particles.approx.vb.GaussianVB`). With
    ``warm_start``, the grid is visited from small to large ``lam`` and each
    fit starts at the previous optimum (``fit(init=previous)``): a
    continuation along the path of Gibbs posteriors. ``threads``: numba
    and BLAS threads of the fits (None: unchanged), so that concurrent
    folds share the cores.
    """

    def __init__(self, make, warm_start=False, threads=None):
        self.make = make
        self.warm_start = bool(warm_start)
        self.threads = threads

    def __call__(self, X_tr, y_tr, X_val, y_val, grid, seed):
        aucs, previous = {}, None
        with limited_threads(self.threads):
            for lam in np.sort(grid):
                approx = self.make(X_tr, y_tr, lam)
                if self.warm_start and previous is not None:
                    previous = approx.fit(init=previous)
                else:
                    previous = approx.fit()
                aucs[lam] = 1.0 - auc_risk(approx.predict(X_val), y_val)
        return grid, np.array([aucs[lam] for lam in grid])


def cv_lambda(X, y, lam_max, n_folds=5, grid_size=50, grid_decades=3.0,
              point="bayes_point",
              refit=True, refit_to="best", n_particles=200, len_chain=10,
              move=None, ESSrmin=0.5, fold_particles=None, fold_len_chain=None,
              model_kwargs=None, make_model=AUCGibbsModel, seed=None,
              n_jobs=None, verbose=False):
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
        quarter of the refit's population: on Pima and German credit the
        same ``lam`` was chosen in 2.6-3x less CPU time; on Sonar one seed
        of two chose another (docs/benchmarks.md, "Default fits").
    model_kwargs : dict, passed to ``make_model`` (e.g. prior).
    make_model : callable ``(X, y, lam, **model_kwargs) -> model``; default
        :class:`AUCGibbsModel`; :func:`~pac_particles.smc.models.linear_score_model`
        samples in score space when d > n.
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
        model = make_model(X, binary_labels(y), lam, **model_kwargs)
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
