"""What a fold computes when ``lam`` is cross-validated
(:mod:`pac_particles.sklearn.selection`): one tempering path per fold
(:class:`SMCPathScorer`, scored at every step by :class:`PathScores`) or one
fit per grid value (:class:`RefitScorer`), under a metric of
:data:`METRICS`. The loop over the folds is
:mod:`~pac_particles.sklearn.selection.folds`'s."""

import numpy as np
from particles import collectors

from pac_particles.core.checks import check_choice
from pac_particles.core.compat import moved_names
from pac_particles.core.parallel import limited_threads, one_blas_thread
from pac_particles.core.progress import Progress, progress_mode
from pac_particles.core.weighted_particles import WeightedParticles
from pac_particles.problem.auc import auc_risk
from pac_particles.problem.priors import param_array
from pac_particles.smc.models import AUCGibbsModel
from pac_particles.smc.posterior import run_smc
from pac_particles.sklearn.committee import vote_probability

__all__ = ["METRICS", "PathScores", "SMCPathScorer", "RefitScorer"]

# SMC's cross-validation of lam runs the folds' loop: it lives with it
__getattr__ = moved_names(__name__, {
    "cv_lambda": "pac_particles.sklearn.selection.folds"})


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
