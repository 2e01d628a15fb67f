"""Sequential tuning of an estimator's parameters, one at a time, by K-fold
cross-validated AUC: the procedure of the student report [BPS, Sec. IV].

The report tuned five parameters of its waste-free tempering sampler --
K (MCMC steps, the chain length), N (particles), ``lam_max`` (the end of
the tempering path), ``ESSrmin`` (the resampling threshold) and ``xi``
(the scale of the Gaussian prior), in that order -- by 5-fold
cross-validation on the training part (75%) of each data set: "we fix 4
hyperparameters and we do cross-validation on different values of the
fifth hyperparameter, then we choose the value that yields the highest mean
AUC over the 5 validation folds [...] one by one until convergence of the
AUC values". It gives neither the grids nor the values chosen, only the
test AUCs (Pima 0.860, Sonar 0.697, EEG 0.651; logistic regression 0.863,
0.711, 0.625).

:func:`sequential_tuning` is that procedure for any
:class:`~pac_particles.sklearn.estimator.PACBayesAUC` (or any scikit-learn scorer
with ``decision_function`` and ``random_state``): one *stage* per
``(parameter, grid)``, in the order given; a stage is a K-fold CV AUC over
the grid with every other parameter held at its current best
(:func:`stage_cv`), its best value then held by the stages after it;
``n_rounds > 1`` repeats the sweep until a round changes nothing. The
folds are :mod:`pac_particles.sklearn.selection`'s
(:func:`~pac_particles.sklearn.selection.cross_validate_lam` over the positions of
the grid: :func:`~pac_particles.sklearn.selection.stratified_folds`, fold ``k``
seeded ``seed + k``, folds in parallel through joblib), the same split at
every stage, and within a fold every grid value is fitted with the same
seed (common random numbers), so that two values differ by their effect
and not by their Monte Carlo noise alone. Ties go to the first value of a
grid: list the cheapest first.

The report's five parameters are the estimator's ``len_chain`` (the
report's K MCMC steps make chains of ``len_chain = K + 1``: it kept
``(K + 1) N`` particles), ``n_particles``, ``lam`` (a float: the end of
the tempering path), ``ess_rmin`` and ``prior_var`` (:data:`REPORT_ORDER`).
Two of them are not free choices here: under the isotropic Gaussian prior
the AUC risk is scale-invariant and the posterior of the direction does
not depend on ``prior_var`` (docs: the conventions), and ``len_chain``,
``n_particles``, ``ess_rmin`` set the Monte Carlo accuracy, not the
target -- their variance x time trade-off is measured in
docs/benchmarks.md ("Efficiency of the SMC sampler"). Only ``lam``
changes the posterior.

Example
-------
::

    from pac_particles.problem.datasets import load_dataset
    from pac_particles.sklearn.estimator import PACBayesAUC
    from lab.study.sequential_tuning import sequential_tuning
    X, y, _ = load_dataset("pima")
    est = PACBayesAUC(lam=500.0, n_particles=50, len_chain=5)
    tuning = sequential_tuning(est, X, y, [("len_chain", [5, 10]),
                                           ("lam", [100.0, 500.0, 2000.0])],
                               n_folds=5, seed=0)
    for stage in tuning.stages:
        print(stage.name, stage.best_value, stage.best_auc)
    best = tuning.best_estimator(est).fit(X, y)

References
----------
[BPS] Bel Hadj Hassine, H., Poncin, A. and Sarr, G. HMM-SMC project:
PAC-Bayesian AUC classification and scoring (student report using
``particles``), sections IV and V.

[HTF09] Hastie, T., Tibshirani, R. and Friedman, J. (2009). The Elements of
Statistical Learning, 2nd ed. Springer, section 7.10.
"""

import time
from dataclasses import dataclass, field

import numpy as np
from sklearn.base import clone

from pac_particles.problem.auc import auc_risk
from pac_particles.problem.data import binary_labels
from pac_particles.core.checks import InputError, check_count
from pac_particles.core.parallel import concurrent_folds, limited_threads
from pac_particles.core.progress import Progress
from pac_particles.sklearn.selection import cross_validate_lam

__all__ = ["REPORT_ORDER", "TuningStage", "SequentialTuning", "stage_cv",
           "sequential_tuning"]

#: The report's order of the stages, as :class:`PACBayesAUC` parameters:
#: K (``len_chain``), N (``n_particles``), ``lam_max`` (``lam``, the end of
#: the tempering path), ``ESSrmin`` (``ess_rmin``), xi (``prior_var``).
REPORT_ORDER = ("len_chain", "n_particles", "lam", "ess_rmin", "prior_var")


@dataclass
class TuningStage:
    """One stage of :func:`sequential_tuning`: a K-fold CV AUC over the
    grid of one parameter, the others held.

    Attributes
    ----------
    name : the parameter tuned; ``grid`` : its values, in the order given.
    fold_auc : (n_folds, G) validation AUC of each fold and value.
    best_value : the grid value of highest mean validation AUC (the first
        of tied values).
    held : the other tuned parameters' values during the stage.
    round : the sweep it belongs to (0, 1, ...).
    wall_time : seconds the stage took.
    """

    name: str
    grid: list
    fold_auc: np.ndarray
    best_value: object
    held: dict = field(default_factory=dict)
    round: int = 0
    wall_time: float = float("nan")

    @property
    def mean_auc(self):
        """(G,) mean validation AUC over the folds."""
        return self.fold_auc.mean(axis=0)

    @property
    def std_auc(self):
        """(G,) standard deviation of the validation AUC over the folds."""
        return (self.fold_auc.std(axis=0, ddof=1) if len(self.fold_auc) > 1
                else np.zeros(len(self.grid)))

    @property
    def best_index(self):
        return int(np.argmax(self.mean_auc))

    @property
    def best_auc(self):
        """The stage's CV AUC: the mean validation AUC of ``best_value``."""
        return float(self.mean_auc[self.best_index])

    @property
    def best_se(self):
        """Standard error of ``best_auc`` over the folds (``std /
        sqrt(n_folds)``, as
        :attr:`~pac_particles.sklearn.selection.LamCVResult.one_se_floor`)."""
        return float(self.std_auc[self.best_index]
                     / np.sqrt(len(self.fold_auc)))

    @property
    def within_one_se(self):
        """The grid values whose mean AUC is within one standard error of
        the best [HTF09, Sec. 7.10]: those the folds cannot tell apart."""
        floor = self.best_auc - self.best_se
        return [v for v, m in zip(self.grid, self.mean_auc) if m >= floor]

    def rows(self):
        """One dict per grid value: the stage, the value, mean and spread
        of its validation AUC, and whether it was chosen."""
        return [dict({"round": self.round, "parameter": self.name,
                      "value": value, "mean_auc": float(mean),
                      "sd_auc": float(sd), "chosen": k == self.best_index},
                     **{f"fold{j + 1}": float(a)
                        for j, a in enumerate(self.fold_auc[:, k])})
                for k, (value, mean, sd) in enumerate(
                    zip(self.grid, self.mean_auc, self.std_auc))]


@dataclass
class SequentialTuning:
    """The record of :func:`sequential_tuning`.

    Attributes
    ----------
    stages : list of :class:`TuningStage`, in the order run.
    best_params : the tuned parameters' final values.
    n_folds, seed : the split (the same at every stage; fewer folds than
        asked when a class has fewer members).
    converged : whether the last sweep changed no value (after a single
        sweep: whether every stage kept its starting value).
    """

    stages: list
    best_params: dict
    n_folds: int
    seed: int
    converged: bool = False

    @property
    def cv_auc(self):
        """The CV AUC of the last stage: that of ``best_params``."""
        return self.stages[-1].best_auc

    def best_estimator(self, estimator):
        """An unfitted clone of ``estimator`` with ``best_params``."""
        return clone(estimator).set_params(**self.best_params)

    def rows(self):
        """Every stage's rows (:meth:`TuningStage.rows`), for a CSV."""
        return [row for stage in self.stages for row in stage.rows()]


class _ParameterScorer:
    """Fold scorer of :func:`~pac_particles.sklearn.selection.cross_validate_lam`
    for one parameter: its ``grid`` holds the positions ``1, ..., G`` of
    ``values`` (positive and increasing, as the machinery interpolates in
    ``log``: at the grid itself the curve is the scores), each fitted as a
    clone of ``estimator`` with the fold's seed as ``random_state``."""

    def __init__(self, estimator, name, values, threads=None):
        self.estimator = estimator
        self.name = name
        self.values = list(values)
        self.threads = threads

    def __call__(self, X_tr, y_tr, X_val, y_val, grid, seed):
        aucs = []
        with limited_threads(self.threads):
            for position in grid:
                est = clone(self.estimator).set_params(
                    **{self.name: self.values[int(position) - 1]})
                if "random_state" in est.get_params():
                    est.set_params(random_state=seed)
                est.fit(X_tr, y_tr.astype(int))
                aucs.append(1.0 - auc_risk(est.decision_function(X_val), y_val))
        return grid, np.array(aucs)


def stage_cv(estimator, X, y, name, grid, n_folds=5, seed=0, n_jobs=1,
             verbose=False):
    """One stage: the K-fold CV AUC of ``estimator`` over the values
    ``grid`` of its parameter ``name``, every other parameter as set.

    Parameters
    ----------
    estimator : an unfitted scikit-learn estimator with ``decision_function``
        (e.g. :class:`~pac_particles.sklearn.estimator.PACBayesAUC`).
    X, y : data; ``y`` binary (:func:`pac_particles.problem.data.binary_labels`).
    name : str, a parameter of ``estimator``.
    grid : sequence of values of ``name`` (any type: ints, floats, strings).
    n_folds : int, stratified folds
        (:func:`pac_particles.sklearn.selection.stratified_folds`; fewer, with a
        warning, when a class has fewer members).
    seed : int; the split, and fold ``k`` fits with ``random_state = seed + k``
        for every value.
    n_jobs : int or None, folds in parallel (joblib; None: one per core up
        to ``n_folds``, cores shared: :func:`pac_particles.core.parallel.concurrent_folds`).
    verbose : bool or str, progress over the folds (:mod:`pac_particles.core.progress`).

    Returns
    -------
    TuningStage (``held`` empty, ``round`` 0).
    """
    values = list(grid)
    if not values:
        raise InputError(f"the grid of {name!r} is empty")
    if name not in estimator.get_params():
        raise InputError(f"{type(estimator).__name__} has no parameter "
                         f"{name!r}")
    seed = check_count(seed, "seed", minimum=0)
    jobs, threads = concurrent_folds(n_folds, n_jobs)
    start = time.perf_counter()
    cv = cross_validate_lam(
        X, binary_labels(y), np.arange(1.0, len(values) + 1),
        _ParameterScorer(estimator, name, values, threads),
        n_folds=n_folds, seed=seed, n_jobs=jobs, verbose=verbose)
    best = int(np.argmax(cv.fold_auc.mean(axis=0)))    # ties: the first
    return TuningStage(name=name, grid=values, fold_auc=cv.fold_auc,
                       best_value=values[best],
                       wall_time=time.perf_counter() - start)


def sequential_tuning(estimator, X, y, grids, n_folds=5, seed=0, n_rounds=1,
                      n_jobs=1, verbose=False):
    """Tune the parameters of ``estimator`` one at a time by K-fold CV AUC
    [BPS, Sec. IV].

    Parameters
    ----------
    estimator : an unfitted scikit-learn estimator with ``decision_function``
        and (for reproducible fits) ``random_state``, e.g.
        :class:`~pac_particles.sklearn.estimator.PACBayesAUC` with a float ``lam``
        when ``lam`` is tuned. Its other parameters are the starting point.
    X, y : the training data (keep a test set aside, as the report did).
    grids : sequence of ``(name, values)`` or a dict (in its order): the
        stages, e.g. in the report's order :data:`REPORT_ORDER`.
    n_folds : int, stratified folds, the same split at every stage.
    seed : int, the split; fold ``k`` fits with ``random_state = seed + k``.
    n_rounds : int
        Sweeps over the stages at most; after the first, a sweep that
        changes no value ends the tuning (the report's "until
        convergence").
    n_jobs : int or None, folds in parallel (:func:`stage_cv`).
    verbose : bool or str, one line per stage (its choice and CV AUC) and
        progress over the folds (:mod:`pac_particles.core.progress`).

    Returns
    -------
    SequentialTuning
    """
    stages_in = list(grids.items()) if isinstance(grids, dict) else list(grids)
    if not stages_in:
        raise InputError("grids is empty: give (parameter, values) pairs")
    n_rounds = check_count(n_rounds, "n_rounds")
    params = estimator.get_params()
    for name, _ in stages_in:
        if name not in params:
            raise InputError(f"{type(estimator).__name__} has no parameter "
                             f"{name!r}")
    best = {name: params[name] for name, _ in stages_in}
    stages, converged = [], False
    total = len(stages_in) * n_rounds
    with Progress(verbose, total=total, desc="tuning stages",
                  unit="stage") as progress:
        for round_ in range(n_rounds):
            before = dict(best)
            for name, values in stages_in:
                current = clone(estimator).set_params(**best)
                stage = stage_cv(current, X, y, name, values, n_folds=n_folds,
                                 seed=seed, n_jobs=n_jobs,
                                 verbose=verbose if progress.mode == "lines"
                                 else False)
                stage.round = round_
                stage.held = {k: v for k, v in best.items() if k != name}
                best[name] = stage.best_value
                stages.append(stage)
                progress.update(advance=1, text=(
                    f"round {round_ + 1} stage {name}: {stage.best_value!r} "
                    f"(CV AUC {stage.best_auc:.4f} +/- {stage.best_se:.4f}, "
                    f"{stage.wall_time:.1f} s)"),
                    postfix=f"{name}={stage.best_value!r}")
            converged = best == before
            if converged:
                break
    return SequentialTuning(stages=stages, best_params=best,
                            n_folds=len(stages[0].fold_auc), seed=seed,
                            converged=converged)
