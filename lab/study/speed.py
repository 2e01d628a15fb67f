"""Speed of the estimator at its defaults against a tuned logistic
regression, side by side in one run (``scripts/bench_defaults.py``).

:func:`bench_defaults` splits each data set once (stratified 75/25), fits
``PACBayesAUC(method=m)`` at its defaults (``lam="cv"`` included) for every
method ``m`` and scikit-learn's ``LogisticRegressionCV(scoring="roc_auc")``
(on standardised inputs, as the estimator standardises) on the same
training rows, and reports each fit time as a ratio to the logistic
regression's together with the test AUCs. Ratios measured in one process
on the same machine at the same moment are what docs/benchmarks.md quotes: the
absolute times move with the load of a shared machine, the ratios much less.

:func:`load_benchmark_data` reads the built-in data sets
(:func:`pac_particles.problem.datasets.load_dataset`) and the CSVs of the shared data
directory by name.

Example
-------
::

    from lab.study.speed import bench_defaults, load_benchmark_data
    data = {"pima": load_benchmark_data("pima")}
    rows = bench_defaults(data, methods=("ep", "vb"), seed=0)
    rows[0]["ratio"], rows[0]["test_auc"]

References
----------
[RACL14] Ridgway, J., Alquier, P., Chopin, N. and Liang, F. (2014).
PAC-Bayesian AUC classification and scoring. NIPS 27 (Tables 1 and 2).
"""

import os
import time
import warnings

import numpy as np
from sklearn.linear_model import LogisticRegressionCV
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from pac_particles.problem.data import binary_labels
from pac_particles.core.checks import (InputError, check_choice,
                                       check_count, check_fraction)
from pac_particles.problem.datasets import DATASETS, load_csv, load_dataset
from pac_particles.sklearn.estimator import PACBayesAUC
from pac_particles.sklearn.methods.vb import VB_LOO_MAX_FEATURES

__all__ = ["BASELINE", "bench_defaults", "load_benchmark_data",
           "format_rows", "logistic_cv", "ratio_summary", "PAPER_TABLE1",
           "PAPER_TABLE2", "paper_comparison"]

#: name of the reference fit in the rows of :func:`bench_defaults`
BASELINE = "logistic_cv"

METHODS = ("smc", "ep", "vb")


def logistic_cv(random_state=0):
    """The reference: ``LogisticRegressionCV(scoring="roc_auc")`` (5 folds,
    10 values of ``C``, scikit-learn's defaults) on standardised inputs."""
    return make_pipeline(StandardScaler(), LogisticRegressionCV(
        scoring="roc_auc", max_iter=5000, random_state=random_state))


def load_benchmark_data(name, data_dir=None):
    """``(X, y)`` of a built-in data set or of ``data_dir/name.csv``."""
    key = str(name).lower().replace("-", "_")
    if key in DATASETS:
        return load_dataset(key)[:2]
    if data_dir is None:
        raise InputError(f"{name!r} is not built in: give the data directory "
                         "holding its CSV")
    path = os.path.join(data_dir, f"{key}.csv")
    if not os.path.exists(path):
        raise InputError(f"no data set {name!r}: neither built in nor {path}")
    return load_csv(path)[:2]


#: Seconds of rest before each timed fit: OpenBLAS's idle workers spin for
#: about 2^28 cycles after a call, and a fit started in that window (right
#: after the logistic regression's) competed with them (Pima's EP fit 0.45
#: s instead of 0.35 s); every fit, the reference's included, starts rested.
REST_SECONDS = 0.3


def _timed_fit(estimator, X, y, X_test, y_test):
    """Wall and CPU seconds of ``fit`` (CPU: this process's threads; worker
    processes are not counted) and the test AUC, after
    :data:`REST_SECONDS` of rest."""
    time.sleep(REST_SECONDS)
    start, cpu = time.perf_counter(), time.process_time()
    with warnings.catch_warnings():
        # scikit-learn's notices of its own coming defaults (l1_ratios,
        # legacy attributes) say nothing about the fit being timed
        warnings.simplefilter("ignore", FutureWarning)
        estimator.fit(X, y)
    seconds = time.perf_counter() - start
    cpu = time.process_time() - cpu
    return seconds, cpu, float(roc_auc_score(
        y_test, estimator.decision_function(X_test)))


def _warm_up(estimator, methods, extra, seed):
    """Fit every method on a small problem with few and with many features
    (VB chooses ``lam`` in the process below
    :data:`~pac_particles.sklearn.methods.vb.VB_LOO_MAX_FEATURES` features, in
    worker processes above), so that both paths are warm."""
    rng = np.random.default_rng(seed)
    for d in (3, VB_LOO_MAX_FEATURES + 2):
        X = rng.normal(size=(60, d))
        y = (X[:, 0] + rng.normal(size=60) > 0).astype(int)
        for method in methods:
            estimator(method=method, random_state=seed,
                      **extra.get(method, {})).fit(X, y)


def bench_defaults(data, methods=METHODS, seed=0, test_size=0.25,
                   estimator_kwargs=None, warm_up=True, repeat=1,
                   verbose=False):
    """Fit time and test AUC of ``PACBayesAUC(method=m)`` at its defaults
    against :func:`logistic_cv`, on one stratified split per data set.

    Parameters
    ----------
    data : dict name -> (X, y).
    methods : methods of :class:`~pac_particles.sklearn.estimator.PACBayesAUC`.
    seed : seeds the split and every fit.
    test_size : fraction held out.
    estimator_kwargs : dict, optional; method -> extra keyword arguments
        (none: the defaults a new user gets).
    warm_up : bool
        Fit every method once on a small synthetic problem before timing,
        so that the first data set does not pay for starting joblib's
        worker processes (about 1.5 s for SMC's parallel folds) and loading
        numba's cache: the table compares steady-state fits, as in a
        session that fits more than once.
    repeat : int
        Rounds per data set: each round fits the reference and then every
        method once, so that a burst of load on a shared machine falls on
        one round of every fit rather than on one fit; ``seconds`` and
        ``cpu_seconds`` are the medians over the rounds, ``ratio`` the
        median of the rounds' ratios (same seed: the fits, and their test
        AUCs, are the same in every round).
    verbose : bool, print each row as it is measured.

    Returns
    -------
    list of dict rows: ``dataset``, ``n_train``, ``d``, ``method``
    (``logistic_cv`` for the reference), ``seconds``, ``ratio`` (seconds over
    the reference's on the same split), ``cpu_seconds`` (of this process:
    on a loaded machine a steadier measure of the work than wall time, but
    blind to worker processes), ``test_auc``, ``auc_gap`` (test AUC minus
    the reference's) and ``rounds``.
    """
    for method in methods:
        check_choice(method, "method", METHODS)
    test_size = check_fraction(test_size, "test_size")
    repeat = check_count(repeat, "repeat")
    extra = dict(estimator_kwargs or {})
    if warm_up:
        _warm_up(PACBayesAUC, methods, extra, seed)
    rows = []
    for name, (X, y) in data.items():
        X = np.asarray(X, dtype=float)
        y = binary_labels(y).astype(int)
        X_tr, X_te, y_tr, y_te = train_test_split(
            X, y, test_size=test_size, stratify=y, random_state=seed)
        fits = {BASELINE: lambda: logistic_cv(seed)}
        for method in methods:
            fits[method] = (lambda m: lambda: PACBayesAUC(
                method=m, random_state=seed, **extra.get(m, {})))(method)
        times = {key: [] for key in fits}
        for _ in range(repeat):
            for key, make in fits.items():
                times[key].append(_timed_fit(make(), X_tr, y_tr, X_te, y_te))
        base = np.array([t[0] for t in times[BASELINE]])
        base_auc = times[BASELINE][0][2]
        found = []
        for key, measured in times.items():
            seconds = np.array([t[0] for t in measured])
            found.append(dict(
                dataset=name, n_train=len(y_tr), d=X.shape[1], method=key,
                seconds=float(np.median(seconds)),
                ratio=float(np.median(seconds / base)),
                cpu_seconds=float(np.median([t[1] for t in measured])),
                test_auc=measured[0][2], auc_gap=measured[0][2] - base_auc,
                rounds=repeat))
        if verbose:
            print(format_rows(found, header=not rows), flush=True)
        rows += found
    return rows


def format_rows(rows, header=True):
    """Markdown lines of :func:`bench_defaults` rows."""
    lines = ["| dataset | n_train x d | method | seconds | ratio to "
             "LogisticRegressionCV | CPU seconds | test AUC | AUC - logistic |",
             "|---|---|---|---|---|---|---|---|"] if header else []
    for r in rows:
        lines.append(f"| {r['dataset']} | {r['n_train']} x {r['d']} | "
                     f"{r['method']} | {r['seconds']:.2f} | {r['ratio']:.1f}x | "
                     f"{r['cpu_seconds']:.2f} | "
                     f"{r['test_auc']:.3f} | {r['auc_gap']:+.3f} |")
    return "\n".join(lines)


def ratio_summary(rows):
    """Per method: the largest and median ratio and the worst AUC gap."""
    summary = {}
    for method in sorted({r["method"] for r in rows} - {BASELINE}):
        mine = [r for r in rows if r["method"] == method]
        ratios = np.array([r["ratio"] for r in mine])
        summary[method] = {"max_ratio": float(ratios.max()),
                           "median_ratio": float(np.median(ratios)),
                           "worst_auc_gap": float(min(r["auc_gap"] for r in mine))}
    return summary


# Ridgway et al. (2014): Table 1 (test AUC) and Table 2 (CPU seconds, i7-3720QM,
# their C implementation; RankBoost in Matlab), keyed by our data set names.
PAPER_TABLE1 = {
    "pima": {"EP-AUC": 0.8617, "GPEP-AUC": 0.8557, "logistic": 0.8646, "RankBoost": 0.8224},
    "german_credit": {"EP-AUC": 0.7952, "GPEP-AUC": 0.7922, "logistic": 0.7561, "RankBoost": 0.788},
    "dna": {"EP-AUC": 0.9814, "GPEP-AUC": 0.9812, "logistic": 0.9696, "RankBoost": 0.9814},
    "spectf": {"EP-AUC": 0.8684, "GPEP-AUC": 0.8545, "logistic": 0.8715, "RankBoost": 0.8684},
    "colon": {"EP-AUC": 0.7034, "GPEP-AUC": 0.75, "logistic": 0.73, "RankBoost": 0.5935},
    "glass": {"EP-AUC": 0.9843, "GPEP-AUC": 0.9629, "logistic": 0.9029, "RankBoost": 0.9436},
}
PAPER_TABLE2 = {
    "pima": {"EP-AUC": 0.06, "GPEP-AUC": 7.75, "RankBoost": 3.26},
    "german_credit": {"EP-AUC": 1.98, "GPEP-AUC": 7.59, "RankBoost": 56.54},
    "dna": {"EP-AUC": 11.26, "GPEP-AUC": 63.47, "RankBoost": 141.60},
    "spectf": {"EP-AUC": 0.25, "GPEP-AUC": 63.47, "RankBoost": 3.55},
    "colon": {"EP-AUC": 636.63, "GPEP-AUC": 60.99, "RankBoost": 156.85},
    "glass": {"EP-AUC": 0.23, "GPEP-AUC": 1.33, "RankBoost": 2.36},
}


def paper_comparison(name, table):
    """Markdown cells comparing a :func:`lab.study.compare_scorers`
    table of data set ``name`` with the paper: per method, our test AUC
    minus the paper's Table 1 figure and our mean fit time over the paper's
    Table 2 figure (ours includes the choice of ``lam`` and, for GP-EP, of
    the lengthscale; the paper's machine and implementation differ).
    Empty when the paper has no such row."""
    cells = []
    for method, t in table.items():
        auc = PAPER_TABLE1.get(name, {}).get(method)
        secs = PAPER_TABLE2.get(name, {}).get(method)
        if auc is None and secs is None:
            continue
        text = f"{method}:"
        if auc is not None:
            text += f" AUC {t['mean'] - auc:+.3f} vs paper"
        if secs is not None:
            text += f", time {t['seconds'] / secs:.2g}x paper's {secs:g} s"
        cells.append(text)
    return "; ".join(cells)
