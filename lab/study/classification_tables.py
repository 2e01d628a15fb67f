"""The classification experiments of [ARC16]'s dissertation follow-up: Tables
1-5 (misclassification rate, hinge loss, exponential loss) on breast cancer,
SPECT heart and students dropout, with our Gibbs posteriors and baselines.

Every method is fitted on the training part of the same repeated stratified
splits and scored on the test part by

* ``error``: the misclassification rate of its ``predict`` (for the Gibbs
  posteriors the posterior mean's score cut where Platt's sigmoid of the
  training scores passes 1/2);
* ``hinge``, ``exponential``: the mean of ``max(0, 1 - y f(x))`` and
  ``exp(-y f(x))``, ``y`` in {-1, +1}, of its linear score ``f`` (the
  posterior mean's own ``x . theta`` for the Gibbs posteriors, uncut: the
  score the loss was fitted to; the ``decision_function`` of the
  baselines). These losses depend on the scale
  of ``f``, which differs between methods: only the error is comparable
  across rows.

The methods (:func:`table_methods`): the Gibbs posterior of each loss at the
dissertation's ``lam = sqrt(n d)`` and prior ``N(0, I / d)`` ([ARC16,
Cor. 13, 15]; ``d`` counts the intercept) by Gaussian VB on the isotropic
family F1 (their choice) and by SMC (the exact posterior), logistic
regression (scikit-learn defaults on standardised inputs), an SVM with a
sigmoid kernel (the dissertation's baseline, defaults on standardised
inputs) and an RBF SVM tuned by 3-fold cross-validation.

:func:`classification_tables` returns one row per (data set, split,
method); :func:`summarise` averages them; :func:`format_tables` prints
Tables 1-5 next to the dissertation's numbers (:data:`DISSERTATION`).
``scripts/classification_tables.py`` runs it.

Example
-------
::

    from lab.study.classification_tables import (
        classification_tables, format_tables, summarise)
    rows = classification_tables(["breast_cancer"], n_repeats=2, smc=False)
    print(format_tables(summarise(rows)))

References
----------
[ARC16] Alquier, P., Ridgway, J. and Chopin, N. (2016). On the properties of
variational approximations of Gibbs posteriors. JMLR 17(239), 1-41; the
tables are those of the dissertation reproducing its Sections 3-4
(``alquier2016_vb_gibbs_posteriors_dissertation.txt``, Tables 1-5).
"""

import math
import os
import time
import warnings

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import (GridSearchCV, StratifiedKFold,
                                     StratifiedShuffleSplit)
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from pac_particles.problem.data import binary_labels
from pac_particles.core.checks import InputError, check_count, check_fraction
from pac_particles.sklearn.classifier import PACBayesClassifier
from pac_particles.problem.datasets import load_csv, load_dataset

__all__ = ["TABLES", "DISSERTATION", "DATASETS", "load_table_dataset",
           "table_methods", "classification_tables", "summarise",
           "format_tables"]

#: Table number -> (loss of the Gibbs posterior, the test figure reported).
TABLES = {1: ("zero_one", "error"), 2: ("hinge", "error"),
          3: ("hinge", "hinge"), 4: ("exponential", "error"),
          5: ("exponential", "exponential")}

#: The data sets: name -> CSV file under the data folder (None: built in).
DATASETS = {"breast_cancer": None, "spect": "spect.csv",
            "students_dropout": "students_dropout.csv"}

#: The dissertation's numbers: table -> data set -> (VB, VB bound, LR, SVM
#: sigmoid); None where it gives none.
DISSERTATION = {
    1: {"breast_cancer": (0.18, 0.04, 0.36, 0.35),
        "spect": (0.38, 0.075, 0.36, 0.27),
        "students_dropout": (0.34, 0.013, 0.43, 0.44)},
    2: {"breast_cancer": (0.017, None, 0.36, 0.35),
        "spect": (0.14, None, 0.36, 0.27),
        "students_dropout": (0.15, None, 0.43, 0.44)},
    3: {"breast_cancer": (0.035, None, 0.72, 0.71),
        "spect": (0.29, None, 0.73, 0.55),
        "students_dropout": (0.30, None, 0.86, 0.88)},
    4: {"breast_cancer": (0.087, None, 0.36, 0.35),
        "spect": (0.12, None, 0.36, 0.27),
        "students_dropout": (0.30, None, 0.43, 0.44)},
    5: {"breast_cancer": (0.57, None, None, 1.20),
        "spect": (0.68, None, 1.23, 1.02),
        "students_dropout": (1.12, None, 1.38, 1.40)},
}

_LOSS_NAMES = {"zero_one": "0-1", "hinge": "hinge", "exponential": "exp"}
_BASELINES = ("LR", "SVM sigmoid", "SVM RBF (tuned)")


def load_table_dataset(name, data_dir):
    """``(X, y)`` of one of :data:`DATASETS` (CSVs read from ``data_dir``)."""
    if name not in DATASETS:
        raise InputError(f"unknown data set {name!r}: choose from "
                         f"{sorted(DATASETS)}")
    if DATASETS[name] is None:
        return load_dataset(name)[:2]
    return load_csv(os.path.join(data_dir, DATASETS[name]))[:2]


def _gibbs(method, loss, n, d, n_particles, len_chain):
    """The dissertation's setting: ``lam = sqrt(n d)``, prior variance
    ``1/d``, ``d`` with the intercept [ARC16, Cor. 13, 15]."""
    d = d + 1

    def factory(seed):
        return PACBayesClassifier(
            method=method, loss=loss, lam=math.sqrt(n * d), prior_var=1.0 / d,
            vb_family="isotropic", n_particles=n_particles,
            len_chain=len_chain, random_state=seed)
    return factory


def _rbf_svm(seed):
    grid = {"svc__C": np.logspace(-1, 2, 4), "svc__gamma": ["scale", 0.01, 0.1]}
    folds = StratifiedKFold(3, shuffle=True, random_state=seed)
    return GridSearchCV(make_pipeline(StandardScaler(), SVC()), grid, cv=folds)


def table_methods(n, d, smc=True, n_particles=200, len_chain=10):
    """name -> factory(seed) of an unfitted estimator, for ``n`` training
    points of ``d`` features."""
    methods = {}
    for loss, short in _LOSS_NAMES.items():
        methods[f"VB {short}"] = _gibbs("vb", loss, n, d, n_particles,
                                        len_chain)
        if smc:
            methods[f"SMC {short}"] = _gibbs("smc", loss, n, d, n_particles,
                                             len_chain)
    methods["LR"] = lambda seed: make_pipeline(StandardScaler(),
                                               LogisticRegression())
    methods["SVM sigmoid"] = lambda seed: make_pipeline(StandardScaler(),
                                                        SVC(kernel="sigmoid"))
    methods["SVM RBF (tuned)"] = _rbf_svm
    return methods


def _linear_score(estimator, X):
    if isinstance(estimator, PACBayesClassifier):
        # the posterior mean's own score: decision_function is cut
        return estimator.decision_function(X) + estimator.threshold_
    return estimator.decision_function(X)


def _test_figures(estimator, X, positives):
    signs = np.where(positives, 1.0, -1.0)
    margins = signs * _linear_score(estimator, X)
    predicted = estimator.predict(X).astype(bool)
    with np.errstate(over="ignore"):
        # an exponential loss can overflow to inf on a badly scaled score:
        # reported as inf, never NaN
        exponential = float(np.mean(np.exp(-margins)))
    return dict(error=float(np.mean(predicted != positives)),
                hinge=float(np.mean(np.maximum(0.0, 1.0 - margins))),
                exponential=exponential)


def classification_tables(datasets=tuple(DATASETS), data_dir=".",
                          n_repeats=10, test_size=0.3, smc=True,
                          n_particles=200, len_chain=10, seed=0,
                          verbose=False):
    """Fit every method of :func:`table_methods` on repeated stratified
    splits of each data set; one row per (data set, split, method) with
    ``error``, ``hinge``, ``exponential`` and ``seconds`` (fit time).

    Split r of a data set is ``StratifiedShuffleSplit(random_state=seed)``'s
    r-th and seeds the random methods with ``seed + r``.
    """
    n_repeats = check_count(n_repeats, "n_repeats")
    test_size = check_fraction(test_size, "test_size")
    rows = []
    for name in datasets:
        X, y = load_table_dataset(name, data_dir)
        positives = binary_labels(y)
        splitter = StratifiedShuffleSplit(n_splits=n_repeats,
                                          test_size=test_size,
                                          random_state=seed)
        for r, (train, test) in enumerate(splitter.split(X, positives)):
            methods = table_methods(len(train), X.shape[1], smc=smc,
                                    n_particles=n_particles,
                                    len_chain=len_chain)
            for method, factory in methods.items():
                start = time.perf_counter()
                with warnings.catch_warnings():
                    # constant columns of a split (SPECT) are reported by
                    # the preprocessing on every fit
                    warnings.simplefilter("ignore", UserWarning)
                    est = factory(seed + r).fit(X[train], positives[train])
                seconds = time.perf_counter() - start
                rows.append(dict(dataset=name, split=r, method=method,
                                 n_train=len(train), n_test=len(test),
                                 seconds=seconds,
                                 # the certified error of the randomised
                                 # classifier, where the fit has one
                                 certified_error=getattr(
                                     est, "certified_error_", None),
                                 **_test_figures(est, X[test],
                                                 positives[test])))
                if verbose:
                    print(f"{name} split {r} {method}: error "
                          f"{rows[-1]['error']:.3f} ({seconds:.1f} s)",
                          flush=True)
    return rows


def summarise(rows):
    """(data set, method) -> dict of the mean and standard error over the
    splits of ``error``, ``hinge``, ``exponential``, ``certified_error``
    (the PAC-Bayes bound on the randomised classifier's error, where the fit
    has one), and mean ``seconds``."""
    groups = {}
    for row in rows:
        groups.setdefault((row["dataset"], row["method"]), []).append(row)
    summary = {}
    for key, group in groups.items():
        entry = {"n_splits": len(group),
                 "seconds": float(np.mean([g["seconds"] for g in group]))}
        for figure in ("error", "hinge", "exponential"):
            values = np.array([g[figure] for g in group])
            entry[figure] = float(values.mean())
            entry[figure + "_se"] = (float(values.std(ddof=1)
                                           / math.sqrt(values.size))
                                     if values.size > 1 else 0.0)
        bounds = [g["certified_error"] for g in group
                  if g.get("certified_error") is not None]
        if bounds:
            entry["certified_error"] = float(np.mean(bounds))
            entry["certified_error_se"] = (float(np.std(bounds, ddof=1)
                                                 / math.sqrt(len(bounds)))
                                           if len(bounds) > 1 else 0.0)
        summary[key] = entry
    return summary


def _cell(entry, figure):
    if entry is None:
        return "--"
    mean, se = entry[figure], entry[figure + "_se"]
    if abs(mean) >= 100:  # an exponential loss blown up by a large score
        return f"{mean:.2g} ± {se:.2g}"
    return f"{mean:.3f} ± {se:.3f}"


def _paper(value):
    return "--" if value is None else f"{value:g}"


def format_tables(summary):
    """Tables 1-5 as Markdown: ours (mean ± standard error over splits)
    next to the dissertation's (in brackets)."""
    datasets = list(dict.fromkeys(d for d, _ in summary))
    lines = []
    for table, (loss, figure) in TABLES.items():
        short = _LOSS_NAMES[loss]
        ours = [f"VB {short}", f"SMC {short}"] + list(_BASELINES)
        lines += [f"Table {table}: test {figure} (Gibbs posterior of the "
                  f"{short} loss)", "",
                  "| data set | VB (paper) | VB | VB bound (paper) | VB bound "
                  "| SMC | LR (paper) | LR | SVM sigmoid (paper) | SVM sigmoid "
                  "| SVM RBF tuned |",
                  "|---" * 11 + "|"]
        for name in datasets:
            paper = DISSERTATION[table].get(name, (None,) * 4)
            cells = [_cell(summary.get((name, m)), figure) for m in ours]
            vb = summary.get((name, f"VB {short}"))
            bound = (_cell(vb, "certified_error") if table == 1 and vb
                     and "certified_error" in vb else "--")
            lines.append(
                f"| {name} | {_paper(paper[0])} | {cells[0]} | "
                f"{_paper(paper[1])} | {bound} | {cells[1]} | "
                f"{_paper(paper[2])} | {cells[2]} | {_paper(paper[3])} | "
                f"{cells[3]} | {cells[4]} |")
        lines.append("")
    return "\n".join(lines)
