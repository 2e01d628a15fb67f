"""The default fit by size: ``PACBayesAUC()`` and ``PACBayesClassifier()``
at their defaults against ``LogisticRegressionCV(scoring="roc_auc")`` and
``LogisticRegression`` on synthetic logistic data of growing ``n``
(``scripts/bench_defaults.py --sizes``).

Each size runs in a fresh process (:func:`bench_sizes`), so that its first
fit pays what a user's first fit pays after the import (numba's cached
kernels load on their first call); then ``rounds`` rounds
fit the two references and the estimator side by side (A, B, C, A, B, C,
...), and the ratios are medians over the rounds' ratios, which a shared
machine's load moves far less than the times.

Data (:func:`synthetic_logistic`): ``x ~ N(0, I_d)``, ``P(y = 1 | x) =
expit(x . beta + b)`` with ``beta ~ N(0, 2.25 / d I)`` and ``b`` solved for
the fraction of positives asked; a test set of ``n_test`` rows from the
same law.

Example
-------
::

    from lab.study.size_grid import bench_sizes
    rows = bench_sizes([(1000, 10, 0.3)], rounds=3)
    rows[0]["ratio_lrcv"], rows[0]["auc_gap"], rows[0]["first_fit_seconds"]
"""

import multiprocessing
import time
import warnings

import numpy as np
from scipy.optimize import brentq
from scipy.special import expit

__all__ = ["synthetic_logistic", "size_row", "bench_sizes", "format_size_rows"]


def synthetic_logistic(n, d, positive_rate, seed=0):
    """``(X, y)``: ``n`` rows of the logistic law of the module docstring
    with a fraction ``positive_rate`` of positives on average."""
    rng = np.random.default_rng(seed)
    beta = rng.normal(size=d) * 1.5 / np.sqrt(d)
    X = rng.normal(size=(n, d))
    logits = X @ beta
    b = brentq(lambda b: expit(logits + b).mean() - positive_rate, -40, 40)
    y = (rng.random(n) < expit(logits + b)).astype(int)
    return X, y


def _timed(make, X, y):
    time.sleep(0.2)           # BLAS workers of the previous fit at rest
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fitted = make().fit(X, y)
    return time.perf_counter() - start, fitted


def size_row(n, d, positive_rate, estimator="auc", rounds=3, n_test=50_000,
             seed=0, method="auto"):
    """One row of :func:`bench_sizes`, measured in the calling process
    (a fresh one, for its first fit to mean anything); ``method``: the
    estimator's (its default, ``"auto"``, or one named)."""
    from sklearn.linear_model import LogisticRegression, LogisticRegressionCV
    from sklearn.metrics import roc_auc_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    if estimator == "auc":
        from pac_particles.sklearn.estimator import PACBayesAUC as Estimator
    else:
        from pac_particles.sklearn.classifier import (
            PACBayesClassifier as Estimator)
    X, y = synthetic_logistic(n + n_test, d, positive_rate, seed)
    X, y, X_test, y_test = X[:n], y[:n], X[n:], y[n:]
    fits = {
        "lrcv": lambda: make_pipeline(StandardScaler(), LogisticRegressionCV(
            scoring="roc_auc", max_iter=5000, random_state=seed)),
        "lr": lambda: make_pipeline(StandardScaler(),
                                    LogisticRegression(max_iter=5000)),
        "ours": lambda: Estimator(method=method, random_state=seed)}
    first, fitted = _timed(fits["ours"], X, y)
    seconds = {key: [] for key in fits}
    models = {}
    for _ in range(rounds):
        for key, make in fits.items():
            elapsed, models[key] = _timed(make, X, y)
            seconds[key].append(elapsed)
    ours = np.array(seconds["ours"])
    # every model's ranking score (the classifier's decision_function,
    # which its predict_proba ranks as)
    auc = {key: float(roc_auc_score(y_test, (
        model.decision_function(X_test) if hasattr(model, "decision_function")
        else model.predict_proba(X_test)[:, 1])))
        for key, model in models.items()}
    # a classifier's own risk is its error rate: its test accuracy beside
    # the logistic regression's (at 1 % positives both near the base rate)
    # and the AUC of its posterior mean score (its decision_function's)
    accuracy = ({key: float(np.mean(model.predict(X_test) == y_test))
                 for key, model in models.items()}
                if estimator == "classifier" else dict(ours=np.nan, lr=0.0))
    mean_score_auc = (float(roc_auc_score(y_test, X_test @ models["ours"].coef_))
                      if estimator == "classifier" else np.nan)
    certified = getattr(models["ours"], "certified_auc_risk_", None)
    return dict(
        estimator=estimator, n=n, d=d, positive_rate=positive_rate,
        n_pos=int(y.sum()), method=getattr(models["ours"], "method_",
                                        models["ours"].method),
        lam=float(getattr(models["ours"], "lam_", np.nan)), rounds=rounds,
        seconds=float(np.median(ours)),
        lrcv_seconds=float(np.median(seconds["lrcv"])),
        lr_seconds=float(np.median(seconds["lr"])),
        ratio_lrcv=float(np.median(ours / np.array(seconds["lrcv"]))),
        ratio_lr=float(np.median(ours / np.array(seconds["lr"]))),
        test_auc=auc["ours"], auc_gap=auc["ours"] - auc["lr"],
        auc_gap_lrcv=auc["ours"] - auc["lrcv"],
        accuracy_gap=accuracy["ours"] - accuracy["lr"],
        mean_score_auc_gap=mean_score_auc - auc["lr"],
        certified_auc=None if certified is None else 1.0 - certified,
        first_fit_seconds=first,
        first_ratio_lrcv=first / float(np.median(seconds["lrcv"])))


def _child(args):
    return size_row(*args)


def bench_sizes(sizes, estimator="auc", rounds=3, n_test=50_000, seed=0,
                verbose=False, methods=("auto",)):
    """Rows of :func:`size_row` for every ``(n, d, positive_rate)`` of
    ``sizes`` and every one of ``methods``, each measured in a fresh
    process (started by ``spawn``, so nothing is inherited). ``verbose``:
    print each row's line as it comes."""
    rows = []
    context = multiprocessing.get_context("spawn")
    for n, d, rate in sizes:
        for method in methods:
            with context.Pool(1) as pool:
                row = pool.apply(_child, ((int(n), int(d), float(rate),
                                           estimator, rounds, n_test, seed,
                                           method),))
            rows.append(row)
            if verbose:
                print(format_size_rows([row], header=len(rows) == 1),
                      flush=True)
    return rows


def format_size_rows(rows, header=True):
    """Markdown lines of :func:`bench_sizes` rows."""
    lines = (["| estimator | n | d | positives | method | ours (s) | / LRCV | "
             "/ LR | test AUC - LR's | mean score's - LR's | "
             "test accuracy - LR's | certified AUC | first fit (s) | "
             "first / LRCV |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
             if header else [])
    for r in rows:
        cert = ("-" if r["certified_auc"] is None
                else f"{r['certified_auc']:.3f}")
        lines.append(
            f"| {r['estimator']} | {r['n']:,} | {r['d']} | "
            f"{r['positive_rate']:.0%} | {r['method']} | {r['seconds']:.2f} | "
            f"{r['ratio_lrcv']:.1f}x | {r['ratio_lr']:.0f}x | "
            f"{r['auc_gap']:+.4f} | "
            f"{r.get('mean_score_auc_gap', np.nan):+.4f} | "
            f"{r.get('accuracy_gap', np.nan):+.4f} | "
            f"{cert} | {r['first_fit_seconds']:.2f} | "
            f"{r['first_ratio_lrcv']:.1f}x |")
    return "\n".join(lines)
