"""Test AUC of several scorers on the same repeated stratified splits (the
benchmark table, ``scripts/benchmark_table.py``).

:func:`compare_scorers` fits every scorer (an object with ``fit`` and
``decision_function``: the baselines of :mod:`pac_particles.sklearn.baselines`, the
estimator :class:`~pac_particles.sklearn.estimator.PACBayesAUC`) on the training
part of each split and reports its test AUC and fit time.

Example
-------
::

    from pac_particles.sklearn.baselines import LogisticBaseline, RankBoost
    from lab.study import compare_scorers
    table = compare_scorers(X, y, {
        "logistic": lambda seed: LogisticBaseline(random_state=seed),
        "rankboost": lambda seed: RankBoost(n_rounds=200)}, n_repeats=5)
    table["rankboost"]["mean"]

References
----------
[RACL14] Ridgway, J., Alquier, P., Chopin, N. and Liang, F. (2014).
PAC-Bayesian AUC classification and scoring. NIPS 27 (Table 1).
"""

import time

import numpy as np
from joblib import Parallel, delayed
from sklearn.model_selection import StratifiedShuffleSplit

from pac_particles.problem.auc import auc_risk
from pac_particles.problem.data import binary_labels
from pac_particles.core.checks import check_count

__all__ = ["compare_scorers"]


def _fit_and_score(factory, X, y, train, test, seed):
    start = time.perf_counter()
    scorer = factory(seed).fit(X[train], y[train])
    seconds = time.perf_counter() - start
    return 1.0 - auc_risk(scorer.decision_function(X[test]), y[test]), seconds


def compare_scorers(X, y, factories, n_repeats=5, test_size=0.3, seed=0,
                    n_jobs=1):
    """Test AUC of several scorers on the same repeated stratified splits.

    Parameters
    ----------
    X, y : data.
    factories : dict name -> callable(seed) returning an unfitted object with
        ``fit(X, y)`` and ``decision_function(X)``.
    n_repeats : number of random splits; ``test_size`` their test fraction.
    seed : int, seeds the splits; split r passes ``seed + r`` to factories.
    n_jobs : joblib workers (over splits and scorers).

    Returns
    -------
    dict name -> dict with ``auc`` (array over splits), ``mean``, ``sd``,
    ``seconds`` (mean fit time).
    """
    positives = binary_labels(y)
    X = np.asarray(X, dtype=float)
    splitter = StratifiedShuffleSplit(n_splits=check_count(n_repeats, "n_repeats"),
                                      test_size=test_size, random_state=seed)
    splits = list(splitter.split(X, positives))
    names = list(factories)
    jobs = [(name, r) for r in range(len(splits)) for name in names]
    results = Parallel(n_jobs=n_jobs)(
        delayed(_fit_and_score)(factories[name], X, positives, *splits[r],
                                seed + r)
        for name, r in jobs)
    table = {}
    for name in names:
        rows = [res for (nm, _), res in zip(jobs, results) if nm == name]
        aucs = np.array([a for a, _ in rows])
        table[name] = {"auc": aucs, "mean": aucs.mean(),
                       "sd": aucs.std(ddof=1) if aucs.size > 1 else 0.0,
                       "seconds": float(np.mean([s for _, s in rows]))}
    return table
