"""GP scores at scale against gradient boosting and a tuned logistic
regression, side by side in one run (``scripts/bench_gp.py --scale``).

:func:`smooth_nonlinear` draws the smooth nonlinear ranking problem
``y = 1[x1^2 + x2^2 - 2 + 0.5 x3 + 0.7 e > 0]``, ``x ~ N(0, I_10)``, ``e``
standard logistic. :func:`bench_gp_scale` fits, for each training size,
scikit-learn's ``HistGradientBoostingClassifier()`` and
``LogisticRegressionCV(scoring="roc_auc")`` and ``PACBayesAUC(kernel="rbf",
lam=n)`` (the exact GP up to 1,000 rows, the reduced-rank prior above),
and the exact GP (``rank=n``, EP) up to ``exact_max`` rows, interleaved
(each repeat fits them in turn) so that the load of a shared machine falls
on all alike; times are the medians over repeats, AUCs on fresh test rows.
:func:`bench_gp_datasets` does the same on a split of real data sets
against the linear-score estimator at the same ``lam``.

Example
-------
::

    from lab.study.gp_scale import bench_gp_scale, format_scale_rows
    rows = bench_gp_scale([1000, 3000], repeats=1, seed=0)
    print(format_scale_rows(rows))
"""

import contextlib
import time
import warnings

import numpy as np
from threadpoolctl import threadpool_limits
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import train_test_split

from lab.study.speed import load_benchmark_data, logistic_cv
from pac_particles.core.checks import check_count
from pac_particles.core.parallel import limited_threads
from pac_particles.sklearn.estimator import PACBayesAUC

__all__ = ["smooth_nonlinear", "bench_gp_scale", "bench_gp_datasets",
           "format_scale_rows", "format_dataset_rows"]


def smooth_nonlinear(n, seed, d=10):
    """``(X, y)``: ``n`` rows of the smooth nonlinear problem (module
    docstring) in ``d >= 3`` dimensions, drawn from ``seed``."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((check_count(n, "n"), d))
    u = rng.uniform(size=n)
    noise = np.log(u) - np.log1p(-u)
    y = (X[:, 0] ** 2 + X[:, 1] ** 2 - 2.0 + 0.5 * X[:, 2] + 0.7 * noise
         > 0).astype(int)
    return X, y


def _timed(make, X, y, X_test, y_test):
    """``(seconds, test AUC, fitted)`` of one fit."""
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fitted = make().fit(X, y)
    seconds = time.perf_counter() - start
    scores = (fitted.decision_function(X_test)
              if hasattr(fitted, "decision_function")
              else fitted.predict_proba(X_test)[:, 1])
    return seconds, roc_auc_score(y_test, scores), fitted


def _fits(n, exact_max, seed):
    """The fits of one size, by name (the order of a repeat)."""
    fits = {"hgb": lambda: HistGradientBoostingClassifier(random_state=seed),
            "lrcv": lambda: logistic_cv(seed),
            "ours": lambda: PACBayesAUC(kernel="rbf", lam=float(n),
                                        random_state=seed)}
    if n <= exact_max:
        fits["exact_gp"] = lambda: PACBayesAUC(kernel="rbf", rank=n,
                                               method="ep", lam=float(n),
                                               random_state=seed)
    return fits


def _side_by_side(fits, X, y, X_test, y_test, repeats):
    """``{name: (median seconds, AUC, fitted)}``, the fits interleaved."""
    times = {name: [] for name in fits}
    last = {}
    for _ in range(repeats):
        for name, make in fits.items():
            seconds, auc, fitted = _timed(make, X, y, X_test, y_test)
            times[name].append(seconds)
            last[name] = (auc, fitted)
    return {name: (float(np.median(times[name])),) + last[name]
            for name in fits}


@contextlib.contextmanager
def _threads(limit):
    """Every library on at most ``limit`` threads within the block (None:
    unchanged): HGB's OpenMP and BLAS (threadpoolctl), numba."""
    if limit is None:
        yield
        return
    with threadpool_limits(limits=check_count(limit, "threads")), \
            limited_threads(limit):
        yield


def bench_gp_scale(sizes, repeats=1, seed=0, exact_max=3000,
                   test_rows=20000, threads=None):
    """One row per training size of :func:`smooth_nonlinear` (module
    docstring): AUCs, median times and ``ratio`` = ours / HGB, the
    certified AUC and the rank of ours; every fit on at most ``threads``
    threads (None: as the libraries choose)."""
    X_test, y_test = smooth_nonlinear(test_rows, seed + 1)
    rows = []
    for n in sizes:
        X, y = smooth_nonlinear(n, seed)
        with _threads(threads):
            found = _side_by_side(_fits(n, exact_max, seed), X, y, X_test,
                                  y_test, check_count(repeats, "repeats"))
        ours = found["ours"][2]
        row = {"n": n, "hgb_auc": found["hgb"][1], "hgb_s": found["hgb"][0],
               "lrcv_auc": found["lrcv"][1], "lrcv_s": found["lrcv"][0],
               "ours_auc": found["ours"][1], "ours_s": found["ours"][0],
               "ratio": found["ours"][0] / found["hgb"][0],
               "certified_auc": 1.0 - ours.certified_auc_risk_,
               "rank": ours.rank_, "method": ours.method_,
               "exact_auc": None, "exact_s": None}
        if "exact_gp" in found:
            row["exact_auc"], row["exact_s"] = (found["exact_gp"][1],
                                                found["exact_gp"][0])
        rows.append(row)
    return rows


def bench_gp_datasets(names, data_dir=None, repeats=1, seed=0,
                      test_size=0.25):
    """One row per data set: test AUCs and median times of ours
    (``kernel="rbf"``, ``lam = n``) and the linear-score estimator at the
    same ``lam`` on one stratified split, and HGB and LRCV beside them."""
    rows = []
    for name in names:
        X, y = load_benchmark_data(name, data_dir)
        X, X_test, y, y_test = train_test_split(
            X, y, test_size=test_size, stratify=y, random_state=seed)
        n = len(y)
        fits = _fits(n, 0, seed)
        fits["linear"] = lambda: PACBayesAUC(lam=float(n), random_state=seed)
        found = _side_by_side(fits, X, y, X_test, y_test, repeats)
        rows.append({"dataset": name, "n": n, "d": X.shape[1],
                     "ours_auc": found["ours"][1], "ours_s": found["ours"][0],
                     "rank": found["ours"][2].rank_,
                     "linear_auc": found["linear"][1],
                     "linear_s": found["linear"][0],
                     "hgb_auc": found["hgb"][1], "lrcv_auc": found["lrcv"][1]})
    return rows


def format_scale_rows(rows):
    """The table of :func:`bench_gp_scale` in Markdown."""
    lines = ["| n | HGB AUC (s) | LRCV AUC | ours AUC (s) | rank | time / HGB "
             "| certified AUC | exact GP AUC (s) |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        exact = ("-" if r["exact_auc"] is None
                 else f"{r['exact_auc']:.3f} ({r['exact_s']:.1f})")
        lines.append(
            f"| {r['n']:,} | {r['hgb_auc']:.3f} ({r['hgb_s']:.1f}) | "
            f"{r['lrcv_auc']:.3f} | {r['ours_auc']:.3f} ({r['ours_s']:.1f}) | "
            f"{r['rank']} | {r['ratio']:.1f}x | {r['certified_auc']:.3f} | "
            f"{exact} |")
    return "\n".join(lines)


def format_dataset_rows(rows):
    """The table of :func:`bench_gp_datasets` in Markdown."""
    lines = ["| data set | n | d | rank | ours AUC (s) | linear AUC (s) | "
             "ours - linear | HGB AUC | LRCV AUC |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(
            f"| {r['dataset']} | {r['n']} | {r['d']} | {r['rank']} | "
            f"{r['ours_auc']:.3f} ({r['ours_s']:.1f}) | "
            f"{r['linear_auc']:.3f} ({r['linear_s']:.1f}) | "
            f"{r['ours_auc'] - r['linear_auc']:+.3f} | {r['hgb_auc']:.3f} | "
            f"{r['lrcv_auc']:.3f} |")
    return "\n".join(lines)
