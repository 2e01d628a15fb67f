"""What a fold computes when ``lam`` is cross-validated
(:mod:`pac_particles.sklearn.selection`): one tempering path per fold
(:class:`SMCPathScorer`, scored at every step by :class:`PathScores`) or one
fit per grid value (:class:`RefitScorer`), under a metric of
:data:`METRICS`; and :func:`cv_lambda`, SMC's cross-validation with its
refit on all rows."""

import functools

import numpy as np
from particles import collectors
from particles import smc_samplers as ssp

from pac_particles.core.checks import (check_choice, check_count,
                                       check_probability)
from pac_particles.core.parallel import (concurrent_folds, limited_threads,
                                         one_blas_thread)
from pac_particles.core.progress import Progress, progress_mode
from pac_particles.core.weighted_particles import WeightedParticles
from pac_particles.problem.auc import auc_risk
from pac_particles.problem.data import binary_labels
from pac_particles.problem.priors import param_array
from pac_particles.smc.models import AUCGibbsModel
from pac_particles.smc.posterior import POINT_ESTIMATES, run_smc
from pac_particles.sklearn.committee import vote_probability
from pac_particles.sklearn.selection.folds import cross_validate_lam, lam_grid

__all__ = ["METRICS", "PathScores", "SMCPathScorer", "RefitScorer",
           "cv_lambda"]


def _held_out_auc(scores, positives):
    return 1.0 - auc_risk(scores, positives)


def _held_out_accuracy(probabilities, positives):
    return float(np.mean((probabilities > 0.5) == positives))


#: metric -> ``f(held-out scores or probabilities, labels)``: the AUC of
#: scores (ranking), the accuracy of ``P(positive) > 1/2`` (classification)
METRICS = {"auc": _held_out_auc, "accuracy": _held_out_accuracy}


class PathScores(collectors.Collector):
    """Collector: scores of held-out inputs under the point estimate of the
    current tempered posterior, with the current exponent; with
    ``point="vote"``, the vote probability of the weighted committee of
    particles (classification: :func:`~pac_particles.sklearn.committee.vote_probability`).

    ``X_val`` must be preprocessed like the model's data
    (``model.data.transform``); ``model``, when given, maps a point estimate
    to scores (``model.predict_scores``: GP latent scores, or a linear
    model sampled in score space), else the scores are ``X_val @ point``.
    Each entry of the summary is ``(exponent, scores)``.
    """

    signature = {"X_val": None, "point": "bayes_point", "model": None}

    def fetch(self, smc):
        exponent = smc.X.shared["exponents"][-1]
        if self.point == "vote":
            return exponent, vote_probability(param_array(smc.X.theta), smc.W,
                                              self.X_val)
        current = WeightedParticles(param_array(smc.X.theta), smc.W)
        point = current.point_estimate(self.point)
        # score-space particles (GP latent scores) predict through the model
        scores = (self.X_val @ point if self.model is None
                  else self.model.predict_scores(self.X_val, point))
        return exponent, scores


class SMCPathScorer:
    """Fold scorer of :func:`cross_validate_lam`: one adaptive-tempering run
    from the prior to ``lam_max`` on the training part, the held-out
    ``metric`` at every step (:class:`PathScores`): the AUC of the point
    estimate's scores (ranking) or the accuracy of the particles' vote
    (``metric="accuracy"``, classification: the point is the vote).

    ``make_model(X, y, lam, **model_kwargs)`` builds the model (default
    :class:`~pac_particles.smc.models.AUCGibbsModel`;
    :func:`~pac_particles.smc.models.linear_score_model` samples in score space
    when d > n). ``threads``: numba and BLAS threads of the run (None:
    unchanged), so that concurrent folds share the cores."""

    def __init__(self, lam_max, point="bayes_point", model_kwargs=None,
                 smc_kwargs=None, make_model=AUCGibbsModel, threads=None,
                 metric="auc"):
        self.lam_max = lam_max
        self.metric = check_choice(metric, "metric", tuple(METRICS))
        self.point = "vote" if self.metric == "accuracy" else point
        self.model_kwargs = dict(model_kwargs or {})
        self.smc_kwargs = dict(smc_kwargs or {})
        self.make_model = make_model
        self.threads = threads

    def __call__(self, X_tr, y_tr, X_val, y_val, grid, seed):
        model = self.make_model(X_tr, y_tr, self.lam_max, **self.model_kwargs)
        collector = PathScores(X_val=model.data.transform(X_val),
                               point=self.point,
                               model=(model if self.point != "vote"
                                      and model.is_gp else None))
        # BLAS on one thread: the prior's triangular solves on a few
        # particles at a time were 100x slower with spinning BLAS workers
        with limited_threads(self.threads), one_blas_thread():
            # a fold needs the path's scores, not the evidence
            post = run_smc(model, seed=seed, collect=[collector],
                           **dict(self.smc_kwargs, evidence="tempering"))
        steps = post.summaries.pathScores
        gammas = np.array([self.lam_max * e for e, _ in steps])
        return gammas, np.array([METRICS[self.metric](s, y_val)
                                 for _, s in steps])


class RefitScorer:
    """Fold scorer of :func:`cross_validate_lam`: one fit per grid value.

    ``make(X, y, lam)`` returns an unfitted approximation with ``fit()`` and
    ``predict(X_new)`` (e.g. :class:`pac_particles.approx.vb.GaussianVB`;
    ``predict_proba(X_new)`` for ``metric="accuracy"``,
    :class:`~pac_particles.approx.classification_vb.ClassificationVB`). With
    ``warm_start``, the grid is visited from small to large ``lam`` and each
    fit starts at the previous optimum (``fit(init=previous)``): a
    continuation along the path of Gibbs posteriors. ``threads``: numba
    and BLAS threads of the fits (None: unchanged), so that concurrent
    folds share the cores. ``verbose``: one line per grid value where
    progress is written as lines (a fold may run in a worker process,
    whose bar would garble the caller's; the caller's bar counts folds).
    """

    def __init__(self, make, warm_start=False, threads=None, metric="auc",
                 verbose=False):
        self.make = make
        self.metric = check_choice(metric, "metric", tuple(METRICS))
        self.warm_start = bool(warm_start)
        self.threads = threads
        self.verbose = "lines" if progress_mode(verbose) == "lines" else False

    def __call__(self, X_tr, y_tr, X_val, y_val, grid, seed):
        aucs, previous = {}, None
        with limited_threads(self.threads), Progress(
                self.verbose, total=len(grid), desc="lam grid",
                unit="lam") as progress:
            for k, lam in enumerate(np.sort(grid)):
                approx = self.make(X_tr, y_tr, lam)
                if self.warm_start and previous is not None:
                    previous = approx.fit(init=previous)
                else:
                    previous = approx.fit()
                scores = (approx.predict(X_val) if self.metric == "auc"
                          else approx.predict_proba(X_val))
                aucs[lam] = METRICS[self.metric](scores, y_val)
                progress.update(advance=1, text=(
                    f"fold (seed {seed}): lam {k + 1}/{len(grid)} = "
                    f"{lam:.4g}: {self.metric} {aucs[lam]:.4f} "
                    f"({progress.elapsed:.1f} s)"))
        return grid, np.array([aucs[lam] for lam in grid])


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
