"""The ``pac-particles`` command.

Sub-commands
------------
``demo``
    The main job: a built-in dataset (Pima by default) or a CSV
    (``--csv PATH``), stratified 75/25 split,
    :class:`~pac_particles.sklearn.estimator.PACBayesAUC` (waste-free
    adaptive-tempering SMC on the AUC Gibbs posterior) with ``lam = n_train``;
    prints train/test AUC of the Bayes point and of the posterior mean, the
    test AUC of logistic regression on the same split, the PAC-Bayes
    certificate (the tightest valid one, with its bound, prior and level,
    labelled when vacuous; Corollary 19 beside it when it is not vacuous) and
    a held-out bound for the Bayes point, the log evidence, the number of
    tempering steps and the wall time; writes as PNGs the ROC curves
    (``roc.png``), the posterior of the normalised direction ``theta_k /
    ||theta||`` per feature (``marginals.png``) and the tempering path,
    ``log Z`` against ``gamma`` with the cross-validation AUC when ``--lam
    cv`` (``tempering_path.png``).
``fit DATA.csv``
    Fit :class:`~pac_particles.sklearn.estimator.PACBayesAUC` on a CSV with a
    held-out test split; prints a headline (AUCs, ``lam`` and the rule that
    chose it, the certificate in one sentence) and writes ``summary.json``
    (AUCs, lam, log evidence, certificate, timings, the coefficients keyed
    by the CSV's column names), ``coefficients.csv`` (coefficients with 95%
    posterior intervals, :meth:`PACBayesAUC.coefficient_intervals`),
    ``marginals.png``, ``roc.png`` (with a test split), ``cv_curve.png``
    (with ``--lam cv``) and, with ``--save-model FILE``, a model file
    (:mod:`pac_particles.sklearn.model_file`: JSON, loaded without running code).
``predict MODEL DATA.csv``
    Score the rows of a CSV with a saved model: writes the score, the
    predicted label and the probability of the positive label of each row
    to a CSV (``--out``); reports the AUC when the CSV holds the labels.
``classify DATA.csv``
    Fit :class:`~pac_particles.sklearn.classifier.PACBayesClassifier` (the Gibbs
    posterior of a 0-1, hinge, exponential or ramp risk, by SMC or VB) on a
    CSV with a held-out test split; writes ``summary.json`` (train and test
    misclassification rates, that of logistic regression on the same split,
    lam, log evidence, the coefficients of the posterior mean keyed by the
    CSV's column names, timings) and, with ``--lam cv``, ``cv_curve.png``
    (validation accuracy against ``lam``). ``--pu-prior PI`` reads the
    labels as positive / unlabelled.
``cv DATA.csv``
    Cross-validation of ``lam`` along the tempering path, through the same
    estimator as ``fit --lam cv --method smc``; reports both rules, labelled:
    the ``lam`` of best mean validation AUC and the certified rule's
    (``fit``'s default, ``--cv-rule``); writes ``cv_curve.png`` (both
    marked), ``cv_curve.csv`` (mean, spread and per-fold AUC against
    ``gamma``) and ``summary.json``.

Options shared by several sub-commands come from parent parsers
(:func:`parent_parsers`, also used by the scripts): ``--seed``, ``--out``
(default ``results/COMMAND``), ``--progress`` (a tqdm bar on a terminal,
lines in logs; ``bar``, ``lines`` or ``off`` to force) and ``--quiet``
(``--progress off``); the sampler's ``--n-particles`` and ``--len-chain``;
the data file and how to read it (``--target``, ``--sep``, ``--no-header``,
``--features`` / ``--drop``, ``--positive-label``); the held-out
``--test-size``; ``--n-jobs``. Bad input (a missing file or column, a
missing or non-numeric value, one class, an out-of-range option, a class or
a ``--test-size`` that leaves a part of the held-out split without both
classes, an ``--out`` that cannot be written: these checked before any
fitting; a model file that is not one, or was changed) raises
:class:`~pac_particles.core.checks.InputError`, reported in one line with exit
code 2; warnings are one line each (``pac-particles: warning: ...``); any
other exception is a bug and keeps its traceback.

``--help`` and ``--version`` import nothing heavy (numpy, scikit-learn,
numba, particles are imported by the commands, :func:`_import_heavy`), so
they answer at once.

Example
-------
::

    pac-particles demo --dataset pima --out results/demo
    pac-particles fit data.csv --target y --method ep --lam cv --save-model model.json
    pac-particles predict model.json new.csv --out predictions.csv
    pac-particles cv data.csv --lam-max 5000 --folds 5
    pac-particles classify data.csv --method vb --loss hinge --lam cv

References
----------
[RACL14] Ridgway, Alquier, Chopin & Liang (2014), PAC-Bayesian AUC
classification and scoring. The certificates are those of
:mod:`pac_particles.bounds`.
"""

import argparse
import importlib
import math
import os
import sys
import tempfile
import time
import warnings
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the names of _LAZY, spelled out for linters and IDEs
    import numpy as np
    from sklearn.linear_model import LogisticRegressionCV
    from sklearn.model_selection import StratifiedKFold, train_test_split
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from pac_particles.problem.auc import auc_risk
    from pac_particles.sklearn.baselines import logistic_scores
    from pac_particles.bounds import held_out_bound
    from pac_particles.sklearn.classifier import PACBayesClassifier
    from pac_particles.problem.data import encode_labels, load_csv, load_dataset, validate_xy
    from pac_particles.sklearn.estimator import PACBayesAUC
    from pac_particles.sklearn.model_file import save_model
    from pac_particles.apps.plots import (plot_cv_curve, plot_fitted_directions, plot_roc,
                        plot_tempering_path, save)
    from pac_particles.apps.tables import jsonable, write_json, write_rows
    from pac_particles.sklearn.selection import default_lam_max

__all__ = ["main", "demo", "fit_csv", "predict_csv", "classify_csv", "cv_csv",
           "logistic_classifier", "parent_parsers", "progress_argument",
           "build_parser", "certificate_fields", "certificate_sentence",
           "test_set_fields"]

#: names the commands use, imported on first use (:func:`_import_heavy`):
#: ``--help`` and ``--version`` then start in a fraction of a second
_LAZY = {
    "np": ("numpy", None),
    "StratifiedKFold": ("sklearn.model_selection", "StratifiedKFold"),
    "train_test_split": ("sklearn.model_selection", "train_test_split"),
    "LogisticRegressionCV": ("sklearn.linear_model", "LogisticRegressionCV"),
    "make_pipeline": ("sklearn.pipeline", "make_pipeline"),
    "StandardScaler": ("sklearn.preprocessing", "StandardScaler"),
    "auc_risk": ("pac_particles.problem.auc", "auc_risk"),
    "logistic_scores": ("pac_particles.sklearn.baselines", "logistic_scores"),
    "held_out_bound": ("pac_particles.bounds", "held_out_bound"),
    "PACBayesClassifier": ("pac_particles.sklearn.classifier", "PACBayesClassifier"),
    "load_dataset": ("pac_particles.problem.data", "load_dataset"),
    "load_csv": ("pac_particles.problem.data", "load_csv"),
    "encode_labels": ("pac_particles.problem.data", "encode_labels"),
    "validate_xy": ("pac_particles.problem.data", "validate_xy"),
    "PACBayesAUC": ("pac_particles.sklearn.estimator", "PACBayesAUC"),
    "save_model": ("pac_particles.sklearn.model_file", "save_model"),
    "plot_cv_curve": ("pac_particles.apps.plots", "plot_cv_curve"),
    "plot_fitted_directions": ("pac_particles.apps.plots", "plot_fitted_directions"),
    "plot_roc": ("pac_particles.apps.plots", "plot_roc"),
    "plot_tempering_path": ("pac_particles.apps.plots", "plot_tempering_path"),
    "save": ("pac_particles.apps.plots", "save"),
    "jsonable": ("pac_particles.apps.tables", "jsonable"),
    "write_json": ("pac_particles.apps.tables", "write_json"),
    "write_rows": ("pac_particles.apps.tables", "write_rows"),
    # not used here since cv runs the estimator; kept as cli.cv_lambda
    "cv_lambda": ("pac_particles.sklearn.selection", "cv_lambda"),
    "default_lam_max": ("pac_particles.sklearn.selection", "default_lam_max"),
}

# The choices --help shows, spelled here so that it imports nothing; a test
# checks them against the library's (METHODS, LOSSES, DATASETS, ...).
_DATASETS = ("breast_cancer", "eeg", "liver", "pima", "sonar")
_AUC_METHODS = ("smc", "ep", "vb")
_CLASSIFIER_METHODS = ("smc", "vb", "ep")
_LOSSES = ("zero_one", "hinge", "exponential", "ramp")
_CV_RULES = ("certified", "best")
_PROGRESS_MODES = ("off", "auto", "bar", "lines")


def __getattr__(name):
    """``cli.PACBayesAUC`` and the other names of :data:`_LAZY`, imported
    on first use (PEP 562)."""
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, attribute = _LAZY[name]
    value = importlib.import_module(module)
    if attribute is not None:
        value = getattr(value, attribute)
    globals()[name] = value
    return value


def _import_heavy():
    """Bind every name of :data:`_LAZY` that is not bound yet (a name
    replaced beforehand, e.g. by a test, stays replaced)."""
    for name in _LAZY:
        if name not in globals():
            __getattr__(name)


def _version():
    from pac_particles import __version__
    return __version__


def _check_sampler(n_particles, len_chain, seed):
    """The sampler options every sub-command shares (waste-free: chains of
    at least two particles)."""
    from pac_particles.core.checks import check_count
    return (check_count(n_particles, "n_particles", minimum=2),
            check_count(len_chain, "len_chain", minimum=2),
            check_count(seed, "seed", minimum=0))


def _check_test_size(test_size, allow_zero):
    from pac_particles.core.checks import InputError, check_fraction
    test_size = check_fraction(test_size, "test_size")
    if test_size == 0 and not allow_zero:
        raise InputError("test_size must be > 0: the demo scores a held-out set")
    return test_size


def _class_name(label, classes):
    """How a message names class ``label`` (a 0/1 code when ``classes``
    gives the labels it stands for)."""
    if classes is not None:
        return repr(classes[int(label)])
    return f"{label:g}"


def _split(X, y, test_size, seed, no_test_set=True, classes=None):
    """Stratified split, or InputError when the rows are too few for each
    part to hold both classes (a training part needs them to fit, a test
    part to score); scikit-learn's own errors name neither the cause
    nor the way out. ``no_test_set``: whether ``--test-size 0`` (fit on
    all rows) is a way out to suggest (not in the demo). ``classes``: the
    labels that 0/1 codes in ``y`` stand for (for the messages)."""
    from pac_particles.core.checks import InputError
    or_all = (", or --test-size 0 to fit on all rows with no test set"
              if no_test_set else "")
    labels, counts = np.unique(y, return_counts=True)
    if counts.min() < 2:
        label = _class_name(labels[np.argmin(counts)], classes)
        raise InputError(f"class {label} has only 1 row: a held-out test "
                         "split needs at least 2 rows of each class (one to "
                         f"fit, one to test); add rows of that class{or_all}")
    n = len(y)
    # scikit-learn's rounding of a fractional test size
    n_test = math.ceil(test_size * n)
    for part, size in (("test", n_test), ("training", n - n_test)):
        if size < 2:
            raise InputError(f"test_size = {test_size:g} leaves {size} "
                             f"{part} row(s) out of {n}: each part needs at "
                             "least 2 (one of each class); choose a "
                             f"test_size between {2 / n:.3g} and "
                             f"{1 - 2 / n:.3g}{or_all}")
    parts = train_test_split(X, y, test_size=test_size, stratify=y,
                             random_state=seed)
    for part, y_part in (("training", parts[2]), ("test", parts[3])):
        missing = np.setdiff1d(labels, y_part)
        if missing.size:
            raise InputError(f"test_size = {test_size:g} leaves no row of "
                             f"class {_class_name(missing[0], classes)} in "
                             f"the {part} part (the classes have "
                             f"{counts.min()} and {counts.max()} rows); "
                             "choose a test_size that gives each part both "
                             f"classes{or_all}")
    return parts


def _check_out(out, option="--out"):
    """``out`` as a folder that exists and takes files, or InputError:
    checked before the fit, so that a mistyped ``--out`` costs no fitting
    time (the writers would fail only at the end)."""
    from pac_particles.core.checks import InputError
    folder = out or os.curdir
    try:
        os.makedirs(folder, exist_ok=True)
        # a file created and removed: permissions, read-only mounts and a
        # full disk show here, where os.access would not see all of them
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as err:
        # "File exists" / "Not a directory" do not say which path is the
        # file in the way: find it
        blocker = os.path.abspath(folder)
        while not os.path.exists(blocker):
            blocker = os.path.dirname(blocker)
        reason = (f"{blocker} is a file, not a folder"
                  if not os.path.isdir(blocker) else
                  f"{err.strerror or err}"
                  + (f" ({err.filename})" if err.filename not in
                     (None, folder) else ""))
        raise InputError(f"cannot write to the output folder {folder}: "
                         f"{reason}; choose a folder that can be created "
                         f"and written with {option}")
    return out


def _csv_options(sep=",", header=True, features=None, drop=None,
                 positive_label=None):
    """How to read a CSV: the keyword arguments of :func:`_read_csv`."""
    return dict(sep=sep, header=header, features=features, drop=drop,
                positive_label=positive_label)


def _read_csv(path, target=None, sep=",", header=True, features=None,
              drop=None, positive_label=None, ranking=True):
    """A CSV for fitting: ``(X, codes, names, classes, target)``, the labels
    as 0/1 codes (1 positive) and ``classes = [negative, positive]`` the
    labels they stand for (:func:`pac_particles.problem.data.encode_labels`).
    ``ranking``: the AUC's columns (constant ones dropped, with a warning);
    classification keeps them (they act as an intercept)."""
    from pac_particles.core.checks import InputError
    X, y, names, target = load_csv(path, target=target, delimiter=sep,
                                   header=header, features=features,
                                   drop=drop, return_target=True)
    try:
        codes, classes = encode_labels(y, positive_label)
    except InputError as err:
        # "the labels" means little to a CSV's user: name the column they
        # came from, and how to name another
        raise InputError(f"{path}: the labels, read from column {target!r}: "
                         f"{err}; name the label column with --target") from None
    # one clear error for constant columns, shapes; named as in the CSV
    validate_xy(X, codes, feature_names=names, drop_constant=ranking)
    return X, codes, names, classes, target


def _lam_rule(estimator, lam):
    """How ``lam_`` was chosen, in words."""
    if lam != "cv":
        return "given (--lam)"
    if estimator.method == "smc":
        if estimator.cv_rule == "certified":
            return (f"{estimator.n_folds}-fold CV along the tempering path, "
                    "certified rule: the tightest certificate among the lam "
                    "whose mean CV AUC is within one standard error of the "
                    "best")
        return (f"{estimator.n_folds}-fold CV along the tempering path, best "
                "mean CV AUC")
    if len(estimator.cv_.fold_auc) > 1:
        # VB on sampled pairs or many features: K-fold refits
        return (f"{len(estimator.cv_.fold_auc)}-fold CV, best mean CV AUC")
    return f"{estimator.method.upper()}'s leave-one-out AUC (best)"


def demo(dataset="pima", n_particles=200, len_chain=10, lam=None,
         test_size=0.25, seed=0, out="results/demo", eps=0.05, verbose=True,
         csv=None, target=None, csv_options=None):
    """Run the main job through :class:`PACBayesAUC` (``method='smc'``) and
    return a dict of the figures it printed. ``csv``: a CSV file instead of
    the built-in ``dataset`` (read with ``target`` and ``csv_options``,
    :func:`_csv_options`)."""
    _import_heavy()
    from pac_particles.core.checks import check_positive
    n_particles, len_chain, seed = _check_sampler(n_particles, len_chain, seed)
    test_size = _check_test_size(test_size, allow_zero=False)
    classes = None
    if csv is not None:
        X, y, names, classes, _ = _read_csv(csv, target,
                                            **(csv_options or {}))
        dataset = os.path.basename(os.fspath(csv))
    else:
        X, y, names = load_dataset(dataset)
    _check_out(out)
    X_tr, X_te, y_tr, y_te = _split(X, y, test_size, seed,
                                    no_test_set=False, classes=classes)
    if lam is None:
        lam = float(len(y_tr))
    elif not (isinstance(lam, str) and lam == "cv"):
        lam = check_positive(lam, "lam")
    estimator = PACBayesAUC(method="smc", lam=lam, n_particles=n_particles,
                            len_chain=len_chain, eps=eps, random_state=seed,
                            verbose=verbose).fit(X_tr, y_tr)
    post = estimator.posterior_
    data, model = post.data, post.predictor
    scores_te = {
        "PAC-Bayes (Bayes point)": estimator.decision_function(X_te),
        "PAC-Bayes (posterior mean)": post.score(X_te, "mean"),
    }
    if _baseline_folds(y_tr):
        scores_te["logistic regression"] = logistic_scores(
            X_tr, y_tr, X_te, random_state=seed)
    result = {
        "dataset": dataset, "n_train": len(y_tr), "n_test": len(y_te),
        "d": data.d, "lam": estimator.lam_,
        "train_auc_bayes_point": estimator.train_auc_,
        "train_auc_mean": 1 - auc_risk(post.score(X_tr, "mean"), y_tr),
        "test_auc_bayes_point": 1 - auc_risk(scores_te["PAC-Bayes (Bayes point)"], y_te),
        "test_auc_mean": 1 - auc_risk(scores_te["PAC-Bayes (posterior mean)"], y_te),
        "test_auc_logistic": (
            1 - auc_risk(scores_te["logistic regression"], y_te)
            if "logistic regression" in scores_te else None),
        "log_evidence": estimator.log_evidence_,
        "log_evidence_se": estimator.log_evidence_se_,
        "n_tempering_steps": post.n_steps,
        "n_particles_total": post.n_particles,
        "importance_draws": post.theta.shape[0] - post.n_particles,
        "wall_time_s": post.wall_time,
        "likelihood_share": model.loglik_seconds / post.wall_time,
        # the certificate is about the randomised score: one particle per use
        "gibbs_expected_test_auc": 1 - float(post.weights @ auc_risk(
            post.theta @ data.transform(X_te).T, y_te)),
    }
    result.update(certificate_fields(estimator))
    result["test_set_certificate"] = test_set_fields(
        result["test_auc_bayes_point"], y_te, eps)
    ax = plot_roc(y_te, scores_te, title=f"{dataset}: test ROC")
    result["roc_png"] = save(ax.figure, os.path.join(out, "roc.png"))
    ax = plot_fitted_directions(
        estimator, names=names,
        title=f"{dataset}: posterior of theta_k / ||theta|| "
              f"(lam = {estimator.lam_:.4g})")
    result["marginals_png"] = save(ax.figure, os.path.join(out, "marginals.png"))
    ax = plot_tempering_path(post.gammas, post.log_z_path,
                             cv=getattr(estimator, "cv_", None),
                             title=f"{dataset}: tempering path")
    result["tempering_path_png"] = save(ax.figure,
                                        os.path.join(out, "tempering_path.png"))
    return result


def certificate_fields(estimator):
    """The certificate of a fitted :class:`PACBayesAUC` as plain fields (for
    the demo and the JSON summaries), on the AUC scale: ``certified_auc = 1 -
    certified_auc_risk_``, with which bound, prior and delta, whether it
    is vacuous (AUC 1/2 or less: no better than a coin), and the
    ``sentence`` a user reads (:func:`certificate_sentence`)."""
    cert = estimator.certificate_
    certified_auc = 1.0 - estimator.certified_auc_risk_
    level = f"{100 * (1 - cert.delta):g}%"
    if cert.vacuous:
        statement = (f"VACUOUS: at {level} the certified AUC {certified_auc:.4f}"
                     " is no better than a coin (0.5); the sample is too "
                     "small for this posterior to be certified")
    else:
        posterior = cert.posterior or "the fitted posterior"
        statement = (f"with probability >= {1 - cert.delta:g}, the randomised "
                     f"score (theta drawn from {posterior} at each use) has "
                     f"expected AUC >= {certified_auc:.4f}")
    fields = {
        "bound": cert.name, "prior": cert.prior, "delta": cert.delta,
        "certified_auc": certified_auc,
        "expected_auc_risk_bound": estimator.certified_auc_risk_,
        "vacuous": cert.vacuous,
        "empirical_randomized_auc": 1.0 - cert.empirical_randomized_risk,
        "kl": cert.kl, "m": cert.m,
        # what the certificate rests on: the posterior it certifies, how its
        # prior's hyper-parameters were chosen, and each part's share of delta
        "posterior": cert.posterior, "prior_fraction": cert.prior_fraction,
        "hyperparameters": dict(cert.hyperparameters),
        "hyperparameters_tuned_on": cert.hyperparameters_tuned_on,
        "delta_shares": dict(cert.delta_shares), "note": cert.note,
        "candidates": {name: 1.0 - b for name, b in cert.alternatives},
        "corollary19_certified_auc": 1.0 - estimator.bound_.auc_risk_bound_rigorous,
        "corollary19_vacuous": estimator.bound_.auc_risk_bound_rigorous >= 0.5,
        "statement": statement}
    fields["sentence"] = certificate_sentence(fields)
    return {"certificate": fields}


def certificate_sentence(cert):
    """The certificate (fields of :func:`certificate_fields`) in one plain
    sentence."""
    level = f"{100 * (1 - cert['delta']):g}%"
    if cert["vacuous"]:
        return (f"No useful guarantee: at {level} confidence the certificate "
                f"only says AUC >= {cert['certified_auc']:.3f}, no better "
                "than a coin (0.5); the smaller class has too few rows "
                f"(m = {cert['m']} used by the bound) to certify this fit.")
    posterior = cert.get("posterior") or "fitted posterior"
    return (f"With {level} confidence, a score drawn from the {posterior} "
            "for each use ranks a random positive above a random negative "
            f"of new data (from the same source) with probability at least "
            f"{cert['certified_auc']:.3f} (its training AUC: "
            f"{cert['empirical_randomized_auc']:.3f}).")


def test_set_fields(test_auc, y_test, delta):
    """Held-out bound for the deterministic point estimate (fixed before the
    test sample is seen): ``m = min(n_pos, n_neg)`` of the test sample."""
    _import_heavy()
    positives = np.asarray(y_test) == np.max(y_test)
    held_out = held_out_bound(1.0 - test_auc, int(min(positives.sum(),
                                                      (~positives).sum())),
                              delta, trivial=0.5)
    return {"certified_auc": 1.0 - held_out.bound, "delta": delta,
            "vacuous": held_out.vacuous}


def _auc_claim(certified_auc, vacuous):
    label = " (VACUOUS: no better than a coin)" if vacuous else ""
    return f"AUC >= {certified_auc:.3f}{label}"


def _print_demo(r):
    print(f"dataset {r['dataset']}: n_train {r['n_train']}, n_test {r['n_test']}, "
          f"d {r['d']}, lam {r['lam']:g}")
    print(f"  Bayes point     train AUC {r['train_auc_bayes_point']:.4f}  "
          f"test AUC {r['test_auc_bayes_point']:.4f}")
    print(f"  posterior mean  train AUC {r['train_auc_mean']:.4f}  "
          f"test AUC {r['test_auc_mean']:.4f}")
    if r["test_auc_logistic"] is not None:
        print(f"  logistic regression        test AUC "
              f"{r['test_auc_logistic']:.4f}")
    c, t = r["certificate"], r["test_set_certificate"]
    # Corollary 19 (the linear bound) is vacuous on most real data: shown
    # only when it says something (always in the JSON)
    corollary19 = ("" if c["corollary19_vacuous"] else
                   f"; Corollary 19: "
                   f"{_auc_claim(c['corollary19_certified_auc'], False)}")
    print(f"  PAC-Bayes certificate ({100 * (1 - c['delta']):g}%, {c['bound']} "
          f"bound, {c['prior'].split(':')[0]} prior): the randomised score "
          f"of the {c['posterior'] or 'posterior'} has expected "
          f"{_auc_claim(c['certified_auc'], c['vacuous'])} (its empirical AUC "
          f"{c['empirical_randomized_auc']:.3f}; the particles' randomised "
          f"test AUC {r['gibbs_expected_test_auc']:.3f}){corollary19}")
    print(f"  held-out bound ({100 * (1 - t['delta']):g}%) for the Bayes point: "
          f"test-population {_auc_claim(t['certified_auc'], t['vacuous'])}")
    print(f"  log evidence {r['log_evidence']:.3f} "
          f"(+- {r['log_evidence_se']:.3f} Monte Carlo se)   tempering steps "
          f"{r['n_tempering_steps']}   particles {r['n_particles_total']}")
    print(f"  wall time {r['wall_time_s']:.2f} s "
          f"({100 * r['likelihood_share']:.0f}% in the likelihood)")
    print(f"  figures: {r['roc_png']}, {r['marginals_png']}, "
          f"{r['tempering_path_png']}")


def _fit_on_split(estimator, X, y, test_size, seed, classes=None,
                  names=None):
    """Fit on the training part of a stratified split (all of the data when
    ``test_size`` is 0: no test part, ``None``s); returns ``X_tr, X_te, y_tr,
    y_te`` and the fit's seconds. ``names``: the CSV's column names, for
    the warning about columns constant on the training part."""
    if test_size > 0:
        X_tr, X_te, y_tr, y_te = _split(X, y, test_size, seed,
                                        classes=classes)
    else:
        X_tr, y_tr, X_te, y_te = X, y, None, None
    if names is not None:
        # warns of columns constant on the training part by their names;
        # the estimator's own warning (x1, x2, ...) would say it again
        validate_xy(X_tr, y_tr, feature_names=names)
    start = time.perf_counter()
    with warnings.catch_warnings():
        if names is not None:
            warnings.filterwarnings("ignore",
                                    message="dropping .* constant column")
        estimator.fit(X_tr, y_tr)
    return X_tr, X_te, y_tr, y_te, time.perf_counter() - start


def _cv_fields(estimator):
    """Both rules of ``lam='cv'`` (SMC), labelled: the grid value of best
    mean validation AUC and the lam the fit used, with their CV AUCs."""
    cv = estimator.cv_
    best = int(np.argmax(cv.mean_auc))
    fields = {"lam_best_mean_cv_auc": cv.best_lam,
              "cv_auc_at_best": cv.mean_auc[best],
              "cv_auc_sd_at_best": cv.std_auc[best],
              "grid": [float(cv.grid[0]), float(cv.grid[-1]),
                       int(cv.grid.size)],
              "folds": int(len(cv.fold_auc))}
    if estimator.method == "smc":
        fields["rule"] = estimator.cv_rule
        fields["lam_used"] = estimator.lam_
        fields["cv_auc_at_lam_used"] = float(cv.mean_auc_at(
            [estimator.lam_])[0])
    else:
        fields["rule"] = "leave-one-out (best)"
        fields["lam_used"] = estimator.lam_
    return fields


def _cv_png(estimator, out, title=None):
    """``cv_curve.png`` of a fit with ``lam='cv'``: the mean CV AUC, with
    the best-mean lam and the lam used marked."""
    cv = estimator.cv_
    marks = {f"best mean CV AUC: lam = {cv.best_lam:.4g}": cv.best_lam}
    if not math.isclose(estimator.lam_, cv.best_lam, rel_tol=1e-9):
        marks[f"{estimator.cv_rule} rule (used): lam = "
              f"{estimator.lam_:.4g}"] = estimator.lam_
    ax = plot_cv_curve(cv, along="path" if estimator.method == "smc"
                       else "grid", marks=marks)
    if title:
        ax.set_title(title, fontsize="medium")
    return save(ax.figure, os.path.join(out, "cv_curve.png"))


def fit_csv(path, target=None, method="smc", lam="cv", test_size=0.25,
            n_particles=200, len_chain=10, seed=0, n_jobs=1, out="results/fit",
            verbose=True, cv_rule="certified", save_model_to=None,
            csv_options=None):
    """The ``fit`` sub-command: returns the summary it writes as JSON.

    ``save_model_to``: a path for the model file
    (:func:`pac_particles.sklearn.model_file.save_model`); ``csv_options``: how to
    read the CSV (:func:`_csv_options`)."""
    _import_heavy()
    from pac_particles.core.checks import check_choice, check_count, check_positive
    n_particles, len_chain, seed = _check_sampler(n_particles, len_chain, seed)
    test_size = _check_test_size(test_size, allow_zero=True)
    method = check_choice(method, "method", _AUC_METHODS)
    cv_rule = check_choice(cv_rule, "cv_rule", _CV_RULES)
    if lam != "cv":
        lam = check_positive(lam, "lam")
    csv_options = csv_options or {}
    X, y, names, classes, target_name = _read_csv(path, target, **csv_options)
    _check_out(out)
    if save_model_to is not None:
        _check_out(os.path.dirname(os.path.abspath(save_model_to)),
                   option="--save-model")
    estimator = PACBayesAUC(method=method, lam=lam, n_particles=n_particles,
                            len_chain=len_chain, cv_rule=cv_rule,
                            random_state=seed,
                            n_jobs=check_count(n_jobs, "n_jobs"), verbose=verbose)
    X_tr, X_te, y_tr, y_te, fit_seconds = _fit_on_split(
        estimator, X, y, test_size, seed, classes, names)
    intervals = estimator.coefficient_intervals(0.95)
    intervals.index = names
    summary = {
        "data": os.path.abspath(path), "target": target_name,
        "classes": {"negative": classes[0], "positive": classes[1]},
        "n_train": len(y_tr), "n_train_positive": int(np.sum(y_tr)),
        "n_features": X.shape[1], "method": method, "lam": estimator.lam_,
        "lam_chosen_by": "cv" if lam == "cv" else "user",
        "lam_rule": _lam_rule(estimator, lam),
        "log_evidence": estimator.log_evidence_,
        "log_evidence_se": estimator.log_evidence_se_,
        "train_auc": estimator.train_auc_,
        **certificate_fields(estimator),
        # keyed by the CSV's column names, as PACBayesAUC.coefficients_ is by
        # a DataFrame's
        "coefficients": dict(zip(names, estimator.coef_)),
        "coefficient_intervals": {
            name: {"lower": row.lower, "upper": row.upper, "level": 0.95}
            for name, row in intervals.iterrows()},
        "fit_seconds": fit_seconds,
    }
    if lam == "cv":
        summary["cv"] = _cv_fields(estimator)
        summary["cv_png"] = _cv_png(estimator, out)
    rows = [{"feature": name, "coefficient": row.coefficient,
             "lower_95": row.lower, "upper_95": row.upper}
            for name, row in intervals.iterrows()]
    summary["coefficients_csv"] = write_rows(
        rows, os.path.join(out, "coefficients.csv"))
    ax = plot_fitted_directions(
        estimator, names=names,
        title=f"{os.path.basename(path)}: posterior of theta_k / ||theta|| "
              f"({method}, lam = {estimator.lam_:.4g})")
    summary["marginals_png"] = save(ax.figure,
                                    os.path.join(out, "marginals.png"))
    if X_te is not None:
        scores = {f"PAC-Bayes {method}": estimator.decision_function(X_te)}
        if _baseline_folds(y_tr):
            scores["logistic regression"] = logistic_scores(
                X_tr, y_tr, X_te, random_state=seed)
        summary["n_test"] = len(y_te)
        summary["test_auc"] = estimator.score(X_te, y_te)
        summary["test_set_certificate"] = test_set_fields(
            summary["test_auc"], y_te, estimator.eps)
        summary["test_auc_logistic"] = (
            1 - auc_risk(scores["logistic regression"], y_te)
            if "logistic regression" in scores else None)
        summary["roc_png"] = save(plot_roc(y_te, scores).figure,
                                  os.path.join(out, "roc.png"))
    if save_model_to is not None:
        options = {"sep": ",", "header": True}
        options.update({k: v for k, v in csv_options.items()
                        if k in ("sep", "header")})
        summary["model_file"] = save_model(
            estimator, save_model_to, feature_names=names, classes=classes,
            info={"data": os.path.abspath(path), "target": target_name,
                  "n_train": len(y_tr), "test_auc": summary.get("test_auc"),
                  "lam_rule": summary["lam_rule"], "csv": options})
    summary["summary_json"] = write_json(summary,
                                         os.path.join(out, "summary.json"))
    return jsonable(summary)


def _print_fit(s):
    classes = s["classes"]
    test = (f", {s['n_test']} held out" if "n_test" in s
            else ", no test split")
    print(f"fit {os.path.basename(s['data'])}: {s['n_train']} training rows"
          f"{test}; {s['n_features']} features; labels {s['target']!r}: "
          f"positive {classes['positive']!r}, negative "
          f"{classes['negative']!r}")
    print(f"  method {s['method']}, lam {s['lam']:.4g}: {s['lam_rule']}")
    if "cv" in s and s["cv"]["lam_best_mean_cv_auc"] != s["lam"]:
        cv = s["cv"]
        print(f"    (best mean CV AUC {cv['cv_auc_at_best']:.3f} at lam "
              f"{cv['lam_best_mean_cv_auc']:.4g}; --cv-rule best uses it)")
    line = f"  training AUC {s['train_auc']:.3f}"
    if "test_auc" in s:
        line += f"   test AUC {s['test_auc']:.3f}"
        if s["test_auc_logistic"] is not None:
            line += (f"   logistic regression test AUC "
                     f"{s['test_auc_logistic']:.3f}")
    print(line)
    print(f"  certificate: {s['certificate']['sentence']}")
    files = [s[k] for k in ("summary_json", "coefficients_csv",
                            "marginals_png", "roc_png", "cv_png") if k in s]
    print(f"  files: {', '.join(files)}")
    if "model_file" in s:
        print(f"  model: {s['model_file']} (pac-particles predict "
              f"{s['model_file']} NEW.csv)")


def predict_csv(model, path, out="results/predict/predictions.csv", sep=None,
                header=None):
    """The ``predict`` sub-command: score the rows of the CSV ``path`` with
    the model file ``model`` (:func:`pac_particles.sklearn.model_file.load_model`,
    which runs no code from the file); writes ``row, score, label,
    probability_<positive label>`` per row to ``out`` (``"-"``: stdout)
    and returns a summary. ``sep`` and ``header`` default to how the
    training CSV was read. With the labels in the CSV (the training
    target's column), the summary has their AUC and accuracy."""
    import numpy as np

    from pac_particles.problem.data import encode_labels, load_csv_features
    from pac_particles.sklearn.model_file import load_model
    from pac_particles.apps.tables import write_rows
    scorer = load_model(model)
    read = scorer.fit.get("csv") or {}
    sep = sep if sep is not None else read.get("sep", ",")
    header = header if header is not None else read.get("header", True)
    if out != "-":
        _check_out(os.path.dirname(os.path.abspath(out)))
    X, frame = load_csv_features(path, scorer.feature_names, delimiter=sep,
                                 header=header)
    scores = scorer.decision_function(X)
    labels = scorer.predict(X)
    positive = scorer.classes_[1]
    probability = scorer.predict_proba(X)[:, 1]
    column = f"probability_{positive}"
    rows = [{"row": k + 1, "score": float(s), "label": label,
             column: float(p)}
            for k, (s, label, p) in enumerate(zip(scores, labels,
                                                  probability))]
    summary = {"model": os.path.abspath(model), "data": os.path.abspath(path),
               "n_rows": len(rows),
               "n_predicted_positive": int(np.sum(scores > 0)),
               "classes": scorer.classes_.tolist(), "out": out}
    if out == "-":
        import csv
        writer = csv.DictWriter(sys.stdout, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    else:
        write_rows(rows, out)
    target = scorer.fit.get("target")
    if target in frame.columns and target not in scorer.feature_names:
        from pac_particles.core.checks import InputError
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                codes, _ = encode_labels(frame[target].to_numpy(),
                                         positive_label=positive)
        except InputError as err:
            warnings.warn(f"{path}: column {target!r} does not hold the "
                          f"model's labels {scorer.classes_.tolist()} ({err}): "
                          "no AUC reported")
        else:
            from pac_particles.problem.auc import auc_risk
            summary["labels_column"] = target
            summary["auc"] = 1.0 - float(auc_risk(scores, codes))
            summary["accuracy"] = float(np.mean((scores > 0) == (codes == 1)))
    return summary


def _print_predict(s, stream):
    positive = s["classes"][1]
    print(f"predict: scored {s['n_rows']} rows of {os.path.basename(s['data'])}"
          f" with {os.path.basename(s['model'])}: "
          f"{s['n_predicted_positive']} predicted {positive!r}, "
          f"{s['n_rows'] - s['n_predicted_positive']} "
          f"{s['classes'][0]!r}" + ("" if s["out"] == "-"
                                    else f"; wrote {s['out']}"),
          file=stream)
    if "auc" in s:
        print(f"  labels in column {s['labels_column']!r}: AUC "
              f"{s['auc']:.4f}, accuracy {s['accuracy']:.4f}", file=stream)


def _baseline_folds(y):
    """The folds the logistic-regression baselines can use on the
    training labels ``y`` (at most 5, one member of each class per fold),
    or 0 when a class has a single row (no baseline then)."""
    smallest = int(min(np.sum(y), len(y) - np.sum(y)))
    return min(5, smallest) if smallest >= 2 else 0


def logistic_classifier(seed=None, n_folds=5):
    """The logistic-regression baseline of classification: L2 penalty chosen
    by ``n_folds``-fold accuracy (``LogisticRegressionCV``) on standardised
    inputs."""
    _import_heavy()
    folds = StratifiedKFold(n_folds, shuffle=True, random_state=seed)
    return make_pipeline(StandardScaler(), LogisticRegressionCV(
        cv=folds, scoring="accuracy", l1_ratios=(0.0,),
        use_legacy_attributes=False, max_iter=5000))


def classify_csv(path, target=None, method="vb", loss="zero_one", lam="cv",
                 test_size=0.25, pu_prior=None, n_particles=200, len_chain=10,
                 seed=0, n_jobs=1, out="results/classify", verbose=True,
                 csv_options=None):
    """The ``classify`` sub-command: returns the summary it writes as JSON.

    ``verbose`` is accepted for the shared options; the classifier reports
    no progress."""
    _import_heavy()
    from pac_particles.core.checks import (check_choice, check_count, check_positive,
                         check_pu_prior)
    n_particles, len_chain, seed = _check_sampler(n_particles, len_chain, seed)
    test_size = _check_test_size(test_size, allow_zero=True)
    method = check_choice(method, "method", _CLASSIFIER_METHODS)
    loss = check_choice(loss, "loss", _LOSSES)
    if lam != "cv":
        lam = check_positive(lam, "lam")
    if pu_prior is not None:
        pu_prior = check_pu_prior(pu_prior)
    started = time.perf_counter()
    X, y, names, classes, target_name = _read_csv(
        path, target, ranking=False, **(csv_options or {}))
    _check_out(out)
    estimator = PACBayesClassifier(
        method=method, loss=loss, lam=lam, pu_prior=pu_prior,
        n_particles=n_particles, len_chain=len_chain, random_state=seed,
        n_jobs=check_count(n_jobs, "n_jobs"))
    X_tr, X_te, y_tr, y_te, fit_seconds = _fit_on_split(
        estimator, X, y, test_size, seed, classes)
    summary = {
        "data": os.path.abspath(path), "target": target_name,
        "classes": {"negative": classes[0], "positive": classes[1]},
        "n_train": len(y_tr), "n_features": X.shape[1],
        "method": method, "loss": loss, "pu_prior": pu_prior,
        "lam": estimator.lam_, "lam_chosen_by": "cv" if lam == "cv" else "user",
        "log_evidence": estimator.log_evidence_,
        "log_evidence_is": ("log Z (SMC estimate)" if method == "smc"
                            else "EP's approximation of log Z" if method == "ep"
                            else "a lower bound on log Z (ELBO)"),
        "certificate": _error_certificate_fields(estimator.certificate_),
        "train_error": 1.0 - estimator.score(X_tr, y_tr),
        # the linear rule of the posterior mean on raw inputs, keyed by the
        # CSV's column names
        "coefficients": dict(zip(names, estimator.coef_)),
        "intercept": estimator.intercept_,
        "fit_seconds": fit_seconds,
    }
    if lam == "cv":
        cv = estimator.cv_
        summary["cv_accuracy"] = float(np.max(cv.mean_auc))
        # SMC scores each fold along a tempering path; VB refits, and EP
        # scores its leave-one-out, at each grid value
        ax = plot_cv_curve(cv, ylabel="validation accuracy",
                           along="path" if method == "smc" else "grid",
                           marks={f"best: lam = {cv.best_lam:.4g}":
                                  cv.best_lam})
        summary["cv_png"] = save(ax.figure, os.path.join(out, "cv_curve.png"))
    if X_te is not None:
        # with PU labels these are errors against the PU labels, as given
        summary["n_test"] = len(y_te)
        summary["test_error"] = 1.0 - estimator.score(X_te, y_te)
        folds = _baseline_folds(y_tr)
        summary["test_error_logistic"] = (1.0 - logistic_classifier(
            seed, folds).fit(X_tr, y_tr).score(X_te, y_te) if folds else None)
    summary["total_seconds"] = time.perf_counter() - started
    write_json(summary, os.path.join(out, "summary.json"))
    return jsonable(summary)


def _error_certificate_fields(cert):
    """The classifier's certificate for the JSON summary (None when the fit
    has none: PU labels, or SMC with an unbounded loss)."""
    if cert is None:
        return None
    claim = (f"with probability >= {1 - cert.delta:g}, the randomised "
             f"classifier errs with probability <= {cert.bound:.4f}")
    return {"bound": cert.name, "delta": cert.delta,
            "certified_error": cert.bound, "vacuous": cert.vacuous,
            "empirical_randomized_error": cert.empirical_randomized_risk,
            "kl": cert.kl,
            "statement": ("VACUOUS (no better than a coin): " + claim
                          if cert.vacuous else claim)}


def cv_csv(path, target=None, lam_max=None, folds=5, n_particles=200,
           len_chain=10, seed=0, n_jobs=1, out="results/cv", verbose=True,
           csv_options=None):
    """The ``cv`` sub-command: returns the summary it writes as JSON.

    Runs the estimator ``fit --method smc --lam cv`` runs
    (:class:`PACBayesAUC`, ``cv_rule='certified'``, on all rows), so both
    commands report the same ``lam``: ``lam_certified`` (the certified
    rule, ``fit``'s default) and ``best_lam`` (best mean CV AUC, ``fit
    --cv-rule best``)."""
    _import_heavy()
    from pac_particles.core.checks import check_count, check_positive
    n_particles, len_chain, seed = _check_sampler(n_particles, len_chain, seed)
    folds = check_count(folds, "folds", minimum=2)
    X, y, _, classes, target_name = _read_csv(path, target,
                                              **(csv_options or {}))
    lam_max = (default_lam_max(len(y)) if lam_max is None
               else check_positive(lam_max, "lam_max"))
    _check_out(out)
    start = time.perf_counter()
    estimator = PACBayesAUC(method="smc", lam="cv", lam_max=lam_max,
                            n_folds=folds, cv_rule="certified",
                            n_particles=n_particles, len_chain=len_chain,
                            random_state=seed,
                            n_jobs=check_count(n_jobs, "n_jobs"),
                            verbose=verbose).fit(X, y)
    cv = estimator.cv_
    png = _cv_png(estimator, out, title=f"{os.path.basename(path)}: "
                  f"{len(cv.fold_auc)}-fold CV of lam")
    best = int(np.argmax(cv.mean_auc))
    cert = certificate_fields(estimator)["certificate"]
    summary = {"data": os.path.abspath(path), "target": target_name,
               "classes": {"negative": classes[0], "positive": classes[1]},
               "lam_max": lam_max, "folds": len(cv.fold_auc),
               "grid_size": int(cv.grid.size),
               # the two rules, labelled; fit uses lam_certified by default
               "best_lam": cv.best_lam, "cv_auc": cv.mean_auc[best],
               "cv_auc_sd": cv.std_auc[best],
               "lam_certified": estimator.lam_,
               "cv_auc_at_lam_certified": float(cv.mean_auc_at(
                   [estimator.lam_])[0]),
               "certificate_at_lam_certified": cert,
               "fit_uses": {"--cv-rule certified (default)":
                            estimator.lam_, "--cv-rule best": cv.best_lam},
               "refit_log_evidence": estimator.log_evidence_,
               "seconds": time.perf_counter() - start, "cv_png": png}
    summary["cv_curve_csv"] = write_rows(cv.rows(),
                                         os.path.join(out, "cv_curve.csv"))
    write_json(summary, os.path.join(out, "summary.json"))
    return jsonable(summary)


def _print_cv(s):
    print(f"cv {os.path.basename(s['data'])}: {s['folds']}-fold "
          f"cross-validation of lam along the tempering path "
          f"({s['grid_size']} values up to lam_max {s['lam_max']:.4g})")
    print(f"  best mean CV AUC:  lam {s['best_lam']:.4g} (CV AUC "
          f"{s['cv_auc']:.3f} +- {s['cv_auc_sd']:.3f}; fit --cv-rule best)")
    cert = s["certificate_at_lam_certified"]
    print(f"  certified rule:    lam {s['lam_certified']:.4g} (CV AUC "
          f"{s['cv_auc_at_lam_certified']:.3f}, within one standard error "
          f"of the best; certified AUC {cert['certified_auc']:.3f}"
          f"{' VACUOUS' if cert['vacuous'] else ''}; fit's default)")
    print(f"  files: {s['cv_png']}, {s['cv_curve_csv']}")


# ------------------------------------------------------------ argument parsing

class _HelpFormatter(argparse.ArgumentDefaultsHelpFormatter,
                     argparse.RawDescriptionHelpFormatter):
    """Defaults in ``--help`` (where there is one to show) and epilogs
    kept as written."""

    def _get_help_string(self, action):
        text = action.help or ""
        if action.default in (None, False) or "default" in text \
                or action.default is argparse.SUPPRESS:
            return text
        return super()._get_help_string(action)


def _lam_argument(text):
    if text == "cv":
        return text
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--lam takes 'cv' or a number, got {text!r}")


def _sep_argument(text):
    """``--sep``: one character; ``\\t`` or ``tab`` for a tab."""
    if text in ("\\t", "tab", "TAB"):
        return "\t"
    if len(text) != 1:
        raise argparse.ArgumentTypeError(
            f"--sep takes one character (',' ';' '|', or '\\t' / tab), got "
            f"{text!r}")
    return text


def progress_argument(args):
    """The ``verbose`` value of parsed ``--progress`` / ``--quiet`` options
    (:mod:`pac_particles.core.progress`)."""
    return False if args.quiet else (True if args.progress == "auto"
                                       else args.progress)


def parent_parsers():
    """Options several sub-commands (and the scripts) share, one definition
    each, as argparse parent parsers keyed by topic: ``run`` (``--seed``,
    ``--out``, whose default ``None`` stands for ``results/NAME``),
    ``quiet`` (``--progress``, ``--quiet``: :func:`progress_argument`),
    ``sampler`` (``--n-particles``, ``--len-chain``), ``csv`` (how to read
    a CSV: ``--target``, ``--sep``, ``--no-header``, ``--features``,
    ``--drop``, ``--positive-label``), ``data`` (a CSV path and the ``csv``
    options), ``split`` (``--test-size``) and ``jobs`` (``--n-jobs``)."""
    run = argparse.ArgumentParser(add_help=False)
    run.add_argument("--seed", type=int, default=0,
                     help="seed of the split, the folds and the sampler")
    run.add_argument("--out", default=None,
                     help="output folder (default: results/NAME, NAME the "
                          "command or script)")
    quiet = argparse.ArgumentParser(add_help=False)
    quiet.add_argument("--progress", default="auto",
                       choices=[m for m in _PROGRESS_MODES if m != "off"],
                       help="progress on stderr: a tqdm bar on a terminal and "
                            "one line per step in logs (auto), or force "
                            "'bar' or 'lines'")
    quiet.add_argument("--quiet", action="store_true",
                       help="no progress report")
    sampler = argparse.ArgumentParser(add_help=False)
    sampler.add_argument("--n-particles", type=int, default=200,
                         help="resampled particles M of the SMC sampler "
                              "(waste-free: M x len-chain held)")
    sampler.add_argument("--len-chain", type=int, default=10,
                         help="length of the MCMC chains (>= 2)")
    csv = argparse.ArgumentParser(add_help=False)
    csv.add_argument("--target", default=None, metavar="COLUMN",
                     help="label column, by name or 1-based position "
                          "(default: the last column)")
    csv.add_argument("--sep", type=_sep_argument, default=",",
                     help="field separator: ',' ';' '|' or '\\t'")
    csv.add_argument("--no-header", dest="header", action="store_false",
                     help="the first row is data: columns are named col1, "
                          "col2, ... (default: the first row names the "
                          "columns)")
    picks = csv.add_mutually_exclusive_group()
    picks.add_argument("--features", action="append", metavar="COLUMNS",
                       help="feature columns, comma-separated or repeated "
                            "(default: every column but the target)")
    picks.add_argument("--drop", action="append", metavar="COLUMNS",
                       help="columns to leave out (identifiers, text), "
                            "comma-separated or repeated")
    csv.add_argument("--positive-label", default=None, metavar="LABEL",
                     help="the label of the positive class (default: the "
                          "larger number, or for two strings the "
                          "lexicographically larger, e.g. 'yes' of no/yes)")
    data = argparse.ArgumentParser(add_help=False, parents=[csv])
    data.add_argument("data", help="CSV file: one row per example, numeric "
                                   "feature columns and a label column with "
                                   "two distinct values")
    split = argparse.ArgumentParser(add_help=False)
    split.add_argument("--test-size", type=float, default=0.25,
                       help="held-out fraction of a stratified split "
                            "(fit, classify: 0 fits on all rows, with no "
                            "test set)")
    jobs = argparse.ArgumentParser(add_help=False)
    jobs.add_argument("--n-jobs", type=int, default=1,
                      help="cross-validation folds run in parallel")
    return {"run": run, "quiet": quiet, "sampler": sampler, "csv": csv,
            "data": data, "split": split, "jobs": jobs}


def build_parser():
    """The argument parser of ``pac-particles``."""
    parents = parent_parsers()

    def using(*names):
        return [parents[name] for name in ("run", "quiet", "sampler") + names]
    parser = argparse.ArgumentParser(
        prog="pac-particles", formatter_class=_HelpFormatter,
        description="PAC-Bayesian AUC scoring with Sequential Monte Carlo:\n"
                    "fit a linear score that ranks positives above "
                    "negatives,\nwith a certificate on its AUC.",
        epilog="examples:\n"
               "  pac-particles demo\n"
               "  pac-particles fit data.csv --target y --save-model "
               "model.json\n"
               "  pac-particles predict model.json new.csv --out "
               "predictions.csv\n"
               "  pac-particles COMMAND --help   (the options of a command)")
    parser.add_argument("--version", action="version",
                        version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", required=True,
                                metavar="COMMAND")

    def command(name, help, parents=()):
        import textwrap
        return sub.add_parser(name, parents=list(parents), help=help,
                              description=textwrap.fill(
                                  help[0].upper() + help[1:] + ".", 78),
                              formatter_class=_HelpFormatter)
    p = command("demo", "the main job on a built-in dataset or a CSV: fit, "
                        "test, certify and plot", using("split", "csv"))
    p.add_argument("--dataset", default="pima", choices=_DATASETS,
                   help="built-in dataset")
    p.add_argument("--csv", default=None, metavar="PATH",
                   help="a CSV file instead of --dataset (read with the "
                        "--target, --sep, ... options)")
    p.add_argument("--lam", type=_lam_argument, default=None,
                   help="inverse temperature, or 'cv' to choose it by "
                        "cross-validation (default: number of training rows)")
    f = command("fit", "fit PACBayesAUC on a CSV file: summary, "
                       "coefficients, plots and, with --save-model, a model "
                       "file for predict", using("data", "split", "jobs"))
    f.add_argument("--method", default="smc", choices=_AUC_METHODS,
                   help="smc: tempering SMC (the reference); ep: "
                        "Expectation Propagation; vb: Gaussian variational "
                        "Bayes")
    f.add_argument("--lam", type=_lam_argument, default="cv",
                   help="inverse temperature on the fraction of mis-ordered "
                        "pairs, or 'cv' to choose it")
    f.add_argument("--cv-rule", default="certified", choices=_CV_RULES,
                   help="with --lam cv and smc: 'certified' takes the "
                        "tightest certificate among the lam within one "
                        "standard error of the best mean CV AUC, 'best' the "
                        "best mean CV AUC (EP and VB: leave-one-out, best)")
    f.add_argument("--save-model", default=None, metavar="FILE",
                   help="write the fitted score to FILE (JSON with a "
                        "checksum; read by predict without running code)")
    r = command("predict", "score the rows of a CSV with a model file saved "
                           "by fit --save-model")
    r.add_argument("model", help="model file (fit --save-model)")
    r.add_argument("data", help="CSV file holding the model's feature "
                                "columns, by name (other columns are "
                                "ignored; the label column, when present, "
                                "gives an AUC)")
    r.add_argument("--out", default="results/predict/predictions.csv",
                   help="CSV to write: row, score, label, probability of "
                        "the positive label; '-' for stdout")
    r.add_argument("--sep", type=_sep_argument, default=None,
                   help="field separator (default: the training CSV's)")
    r.add_argument("--no-header", dest="header", action="store_const",
                   const=False, default=None,
                   help="the first row is data, columns col1, col2, ... "
                        "(default: as the training CSV)")
    k = command("classify", "fit a PAC-Bayesian classifier "
                            "(PACBayesClassifier) on a CSV file and write a "
                            "JSON summary", using("data", "split", "jobs"))
    k.add_argument("--method", default="vb", choices=_CLASSIFIER_METHODS,
                   help="vb: Gaussian variational Bayes; smc: tempering "
                        "SMC; ep: Expectation Propagation (0-1 loss only)")
    k.add_argument("--loss", default="zero_one", choices=_LOSSES,
                   help="classification loss of the Gibbs posterior")
    k.add_argument("--lam", type=_lam_argument, default="cv",
                   help="inverse temperature on the mean loss, or 'cv' to "
                        "choose it by K-fold accuracy")
    k.add_argument("--pu-prior", type=float, default=None,
                   help="positive-unlabelled labels: the fraction of "
                        "positives among the unlabelled rows (default: "
                        "ordinary labels)")
    c = command("cv", "cross-validate lam along the tempering path (SMC): "
                      "the best-mean and the certified lam, as fit chooses",
                using("data", "jobs"))
    c.add_argument("--lam-max", type=float, default=None,
                   help="end of the path (default: 5 x number of rows)")
    c.add_argument("--folds", type=int, default=5,
                   help="stratified cross-validation folds")
    return parser


def _csv_args(args):
    return _csv_options(sep=args.sep, header=args.header,
                        features=args.features, drop=args.drop,
                        positive_label=args.positive_label)


def _run(args):
    if args.command == "predict":
        summary = predict_csv(args.model, args.data, out=args.out,
                              sep=args.sep, header=args.header)
        _print_predict(summary, sys.stderr if args.out == "-" else sys.stdout)
        return
    shared = dict(n_particles=args.n_particles, len_chain=args.len_chain,
                  seed=args.seed, out=args.out or f"results/{args.command}",
                  verbose=progress_argument(args))
    if args.command == "demo":
        start = time.perf_counter()
        _print_demo(demo(dataset=args.dataset, lam=args.lam,
                         test_size=args.test_size, csv=args.csv,
                         target=args.target, csv_options=_csv_args(args),
                         **shared))
        print(f"  total {time.perf_counter() - start:.1f} s")
    elif args.command == "fit":
        _print_fit(fit_csv(args.data, target=args.target, method=args.method,
                           lam=args.lam, test_size=args.test_size,
                           n_jobs=args.n_jobs, cv_rule=args.cv_rule,
                           save_model_to=args.save_model,
                           csv_options=_csv_args(args), **shared))
    elif args.command == "classify":
        import json
        summary = classify_csv(args.data, target=args.target,
                               method=args.method, loss=args.loss,
                               lam=args.lam, test_size=args.test_size,
                               pu_prior=args.pu_prior, n_jobs=args.n_jobs,
                               csv_options=_csv_args(args), **shared)
        print(json.dumps({k: v for k, v in summary.items()
                          if k != "coefficients"}, indent=2))
    else:
        _print_cv(cv_csv(args.data, target=args.target, lam_max=args.lam_max,
                         folds=args.folds, n_jobs=args.n_jobs,
                         csv_options=_csv_args(args), **shared))


def _one_line_warning(message, category, filename, lineno, file=None,
                      line=None):
    """Warnings of the command: one line on stderr, without the source
    location (which means nothing to a user)."""
    text = " ".join(str(message).split())
    print(f"pac-particles: warning: {text}", file=sys.stderr, flush=True)


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    from pac_particles.core.checks import InputError
    try:
        with warnings.catch_warnings():
            # constant columns etc. are reported once, on one line
            warnings.simplefilter("once")
            warnings.showwarning = _one_line_warning
            if args.command != "predict":
                _import_heavy()
            _run(args)
    except InputError as err:
        # bad input is the user's to fix: one line, no traceback; anything
        # else is a bug and propagates with its traceback
        message = " ".join(str(err).split())
        parser.exit(2, f"pac-particles: error: {message}\n")
    except BrokenPipeError:
        # "predict --out - | head": the reader stopped reading, not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


if __name__ == "__main__":
    sys.exit(main())
