"""The ``pac-particles`` command.

Sub-commands
------------
``demo``
    The main job: a built-in dataset (Pima by default), stratified 75/25 split,
    :class:`~pac_particles.estimator.PACBayesAUC` (waste-free
    adaptive-tempering SMC on the AUC Gibbs posterior) with ``lam = n_train``;
    prints train/test AUC of the Bayes point and of the posterior mean, the
    test AUC of logistic regression on the same split, the PAC-Bayes
    certificate (the tightest valid one, with its bound, prior and level,
    labelled when vacuous; Corollary 19 beside it) and a held-out bound for
    the Bayes point, the log evidence, the number of tempering steps and the
    wall time; writes as PNGs the ROC curves (``roc.png``), the posterior of
    the normalised direction ``theta_k / ||theta||`` per feature
    (``marginals.png``) and the tempering path, ``log Z`` against ``gamma``
    with the cross-validation AUC when ``--lam cv`` (``tempering_path.png``).
``fit DATA.csv``
    Fit :class:`~pac_particles.estimator.PACBayesAUC` on a CSV (header row,
    numeric columns) with a held-out test split; writes ``summary.json``
    (AUCs, lam, log evidence, certificate, timings, the coefficients keyed by
    the CSV's column names) and ``roc.png``.
``classify DATA.csv``
    Fit :class:`~pac_particles.classifier.PACBayesClassifier` (the Gibbs
    posterior of a 0-1, hinge, exponential or ramp risk, by SMC or VB) on a
    CSV with a held-out test split; writes ``summary.json`` (train and test
    misclassification rates, that of logistic regression on the same split,
    lam, log evidence, the coefficients of the posterior mean keyed by the
    CSV's column names, timings) and, with ``--lam cv``, ``cv_curve.png``
    (validation accuracy against ``lam``). ``--pu-prior PI`` reads the
    labels as positive / unlabelled.
``cv DATA.csv``
    Cross-validation of ``lam`` along the tempering path; writes
    ``cv_curve.png``, ``cv_curve.csv`` (mean, spread and per-fold AUC
    against ``gamma``) and ``summary.json``.

Options shared by several sub-commands come from parent parsers
(:func:`parent_parsers`, also used by the scripts): ``--seed``, ``--out``
(default ``results/COMMAND``), ``--progress`` (a tqdm bar on a terminal,
lines in logs; ``bar``, ``lines`` or ``off`` to force) and ``--quiet``
(``--progress off``); the sampler's ``--n-particles``
and ``--len-chain``; the data file and ``--target``; the held-out
``--test-size``; ``--n-jobs``. Bad input (a missing file or column, non-numeric
values, one class, an out-of-range option, a class or a ``--test-size`` that
leaves a part of the held-out split without both classes, an ``--out`` that
cannot be written: these two checked before any fitting) raises
:class:`~pac_particles.checks.InputError`, reported in one line with exit
code 2; any other exception is a bug and keeps its traceback.

Example
-------
::

    pac-particles demo --dataset pima --out results/demo
    pac-particles fit data.csv --target y --method ep --lam cv --out results/fit
    pac-particles cv data.csv --lam-max 5000 --folds 5
    pac-particles classify data.csv --method vb --loss hinge --lam cv

References
----------
[RACL14] Ridgway, Alquier, Chopin & Liang (2014), PAC-Bayesian AUC
classification and scoring. The certificates are those of
:mod:`pac_particles.bounds`.
"""

import argparse
import json
import math
import os
import sys
import tempfile
import time
import warnings

import numpy as np
from sklearn.linear_model import LogisticRegressionCV
from sklearn.model_selection import StratifiedKFold, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from .auc import auc_risk, binary_labels
from .baselines import logistic_scores
from .bounds import held_out_bound
from .checks import (InputError, check_choice, check_count, check_fraction,
                     check_positive, check_pu_prior)
from .classifier import METHODS as CLASSIFIER_METHODS
from .classifier import PACBayesClassifier
from .data import DATASETS, load_csv, load_dataset, validate_xy
from .estimator import METHODS, PACBayesAUC
from .plots import (plot_cv_curve, plot_directions, plot_roc,
                    plot_tempering_path, save)
from .progress import PROGRESS_MODES
from .results import jsonable, write_json, write_rows
from .risks import LOSSES
from .selection import cv_lambda, default_lam_max

__all__ = ["main", "demo", "fit_csv", "classify_csv", "cv_csv",
           "logistic_classifier", "parent_parsers", "progress_argument",
           "build_parser", "certificate_fields", "test_set_fields"]


def _check_sampler(n_particles, len_chain, seed):
    """The sampler options every sub-command shares (waste-free: chains of
    at least two particles)."""
    return (check_count(n_particles, "n_particles", minimum=2),
            check_count(len_chain, "len_chain", minimum=2),
            check_count(seed, "seed", minimum=0))


def _check_test_size(test_size, allow_zero):
    test_size = check_fraction(test_size, "test_size")
    if test_size == 0 and not allow_zero:
        raise InputError("test_size must be > 0: the demo scores a held-out set")
    return test_size


def _split(X, y, test_size, seed, no_test_set=True):
    """Stratified split, or InputError when the rows are too few for each
    part to hold both classes (a training part needs them to fit, a test
    part to score an AUC); scikit-learn's own errors name neither the cause
    nor the way out. ``no_test_set``: whether ``--test-size 0`` (fit on
    all rows) is a way out to suggest (not in the demo)."""
    or_all = (", or --test-size 0 to fit on all rows with no test set"
              if no_test_set else "")
    labels, counts = np.unique(y, return_counts=True)
    if counts.min() < 2:
        label = labels[np.argmin(counts)]
        raise InputError(f"class {label:g} has only 1 row: a held-out test "
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
                             f"class {missing[0]:g} in the {part} part (the "
                             f"classes have {counts.min()} and {counts.max()} "
                             "rows); choose a test_size that gives each part "
                             f"both classes{or_all}")
    return parts


def _check_out(out):
    """``out`` as a folder that exists and takes files, or InputError:
    checked before the fit, so that a mistyped ``--out`` costs no fitting
    time (the writers would fail only at the end)."""
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
                         "and written with --out")
    return out


def demo(dataset="pima", n_particles=200, len_chain=10, lam=None,
         test_size=0.25, seed=0, out="results/demo", eps=0.05, verbose=True):
    """Run the main job through :class:`PACBayesAUC` (``method='smc'``) and
    return a dict of the figures it printed."""
    n_particles, len_chain, seed = _check_sampler(n_particles, len_chain, seed)
    test_size = _check_test_size(test_size, allow_zero=False)
    X, y, names = load_dataset(dataset)
    _check_out(out)
    X_tr, X_te, y_tr, y_te = _split(X, y, test_size, seed,
                                    no_test_set=False)
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
        "logistic regression": logistic_scores(X_tr, y_tr, X_te,
                                               random_state=seed),
    }
    result = {
        "dataset": dataset, "n_train": len(y_tr), "n_test": len(y_te),
        "d": data.d, "lam": estimator.lam_,
        "train_auc_bayes_point": estimator.train_auc_,
        "train_auc_mean": 1 - auc_risk(post.score(X_tr, "mean"), y_tr),
        "test_auc_bayes_point": 1 - auc_risk(scores_te["PAC-Bayes (Bayes point)"], y_te),
        "test_auc_mean": 1 - auc_risk(scores_te["PAC-Bayes (posterior mean)"], y_te),
        "test_auc_logistic": 1 - auc_risk(scores_te["logistic regression"], y_te),
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
    names = names or [f"x{k + 1}" for k in range(X.shape[1])]
    ax = plot_directions(post.directions, post.weights,
                         names=[names[k] for k in data.columns],
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
    certified_auc_risk_``, with which bound, prior and delta, and whether it
    is vacuous (AUC 1/2 or less: no better than a coin)."""
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
    return {"certificate": {
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
        "statement": statement}}


def test_set_fields(test_auc, y_test, delta):
    """Held-out bound for the deterministic point estimate (fixed before the
    test sample is seen): ``m = min(n_pos, n_neg)`` of the test sample."""
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
    print(f"  logistic regression        test AUC {r['test_auc_logistic']:.4f}")
    c, t = r["certificate"], r["test_set_certificate"]
    print(f"  PAC-Bayes certificate ({100 * (1 - c['delta']):g}%, {c['bound']} "
          f"bound, {c['prior'].split(':')[0]} prior): the randomised score "
          f"of the {c['posterior'] or 'posterior'} has expected "
          f"{_auc_claim(c['certified_auc'], c['vacuous'])} (its empirical AUC "
          f"{c['empirical_randomized_auc']:.3f}; the particles' randomised "
          f"test AUC {r['gibbs_expected_test_auc']:.3f}); Corollary 19: "
          f"{_auc_claim(c['corollary19_certified_auc'], c['corollary19_vacuous'])}")
    print(f"  held-out bound ({100 * (1 - t['delta']):g}%) for the Bayes point: "
          f"test-population {_auc_claim(t['certified_auc'], t['vacuous'])}")
    print(f"  log evidence {r['log_evidence']:.3f} "
          f"(+- {r['log_evidence_se']:.3f} Monte Carlo se)   tempering steps "
          f"{r['n_tempering_steps']}   particles {r['n_particles_total']}")
    print(f"  wall time {r['wall_time_s']:.2f} s "
          f"({100 * r['likelihood_share']:.0f}% in the likelihood)")
    print(f"  figures: {r['roc_png']}, {r['marginals_png']}, "
          f"{r['tempering_path_png']}")


def _read_csv(path, target):
    X, y, names = load_csv(path, target=target)
    try:
        binary_labels(y)
    except InputError as err:
        # "y" means nothing to a CSV's user: name the column it came from
        column = f"column {target!r}" if target else "the last column"
        raise InputError(f"{path}: the labels, read from {column}: {err}; "
                         "name the label column with --target") from None
    validate_xy(X, y)  # one clear error for NaN, constant columns, shapes
    return X, y, names


def _fit_on_split(estimator, X, y, test_size, seed):
    """Fit on the training part of a stratified split (all of the data when
    ``test_size`` is 0: no test part, ``None``s); returns ``X_tr, X_te, y_tr,
    y_te`` and the fit's seconds."""
    if test_size > 0:
        X_tr, X_te, y_tr, y_te = _split(X, y, test_size, seed)
    else:
        X_tr, y_tr, X_te, y_te = X, y, None, None
    start = time.perf_counter()
    estimator.fit(X_tr, y_tr)
    return X_tr, X_te, y_tr, y_te, time.perf_counter() - start


def fit_csv(path, target=None, method="smc", lam="cv", test_size=0.25,
            n_particles=200, len_chain=10, seed=0, n_jobs=1, out="results/fit",
            verbose=True):
    """The ``fit`` sub-command: returns the summary it writes as JSON."""
    n_particles, len_chain, seed = _check_sampler(n_particles, len_chain, seed)
    test_size = _check_test_size(test_size, allow_zero=True)
    if lam != "cv":
        lam = check_positive(lam, "lam")
    X, y, names = _read_csv(path, target)
    _check_out(out)
    estimator = PACBayesAUC(method=method, lam=lam, n_particles=n_particles,
                            len_chain=len_chain, random_state=seed,
                            n_jobs=check_count(n_jobs, "n_jobs"), verbose=verbose)
    X_tr, X_te, y_tr, y_te, fit_seconds = _fit_on_split(estimator, X, y,
                                                          test_size, seed)
    summary = {
        "data": os.path.abspath(path), "target": target or "last column",
        "n_train": len(y_tr), "n_features": X.shape[1],
        "method": method, "lam": estimator.lam_,
        "lam_chosen_by": "cv" if lam == "cv" else "user",
        "log_evidence": estimator.log_evidence_,
        "log_evidence_se": estimator.log_evidence_se_,
        "train_auc": estimator.train_auc_,
        **certificate_fields(estimator),
        # keyed by the CSV's column names, as PACBayesAUC.coefficients_ is by
        # a DataFrame's
        "coefficients": dict(zip(names, estimator.coef_)),
        "fit_seconds": fit_seconds,
    }
    if X_te is not None:
        scores = {f"PAC-Bayes {method}": estimator.decision_function(X_te),
                  "logistic regression": logistic_scores(X_tr, y_tr, X_te,
                                                         random_state=seed)}
        summary["n_test"] = len(y_te)
        summary["test_auc"] = estimator.score(X_te, y_te)
        summary["test_set_certificate"] = test_set_fields(
            summary["test_auc"], y_te, estimator.eps)
        summary["test_auc_logistic"] = 1 - auc_risk(
            scores["logistic regression"], y_te)
        summary["roc_png"] = save(plot_roc(y_te, scores).figure,
                                  os.path.join(out, "roc.png"))
    write_json(summary, os.path.join(out, "summary.json"))
    return jsonable(summary)


def logistic_classifier(seed=None):
    """The logistic-regression baseline of classification: L2 penalty chosen
    by 5-fold accuracy (``LogisticRegressionCV``) on standardised inputs."""
    folds = StratifiedKFold(5, shuffle=True, random_state=seed)
    return make_pipeline(StandardScaler(), LogisticRegressionCV(
        cv=folds, scoring="accuracy", l1_ratios=(0.0,),
        use_legacy_attributes=False, max_iter=5000))


def classify_csv(path, target=None, method="vb", loss="zero_one", lam="cv",
                 test_size=0.25, pu_prior=None, n_particles=200, len_chain=10,
                 seed=0, n_jobs=1, out="results/classify", verbose=True):
    """The ``classify`` sub-command: returns the summary it writes as JSON.

    ``verbose`` is accepted for the shared options; the classifier reports
    no progress."""
    n_particles, len_chain, seed = _check_sampler(n_particles, len_chain, seed)
    test_size = _check_test_size(test_size, allow_zero=True)
    method = check_choice(method, "method", CLASSIFIER_METHODS)
    loss = check_choice(loss, "loss", LOSSES)
    if lam != "cv":
        lam = check_positive(lam, "lam")
    if pu_prior is not None:
        pu_prior = check_pu_prior(pu_prior)
    started = time.perf_counter()
    X, y, names = _read_csv(path, target)
    _check_out(out)
    estimator = PACBayesClassifier(
        method=method, loss=loss, lam=lam, pu_prior=pu_prior,
        n_particles=n_particles, len_chain=len_chain, random_state=seed,
        n_jobs=check_count(n_jobs, "n_jobs"))
    X_tr, X_te, y_tr, y_te, fit_seconds = _fit_on_split(estimator, X, y,
                                                          test_size, seed)
    summary = {
        "data": os.path.abspath(path), "target": target or "last column",
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
        ax = plot_cv_curve(cv)
        ax.set_ylabel("validation accuracy")
        summary["cv_png"] = save(ax.figure, os.path.join(out, "cv_curve.png"))
    if X_te is not None:
        # with PU labels these are errors against the PU labels, as given
        summary["n_test"] = len(y_te)
        summary["test_error"] = 1.0 - estimator.score(X_te, y_te)
        summary["test_error_logistic"] = 1.0 - logistic_classifier(
            seed).fit(X_tr, y_tr).score(X_te, y_te)
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
           len_chain=10, seed=0, n_jobs=1, out="results/cv", verbose=True):
    """The ``cv`` sub-command: returns the summary it writes as JSON."""
    n_particles, len_chain, seed = _check_sampler(n_particles, len_chain, seed)
    folds = check_count(folds, "folds", minimum=2)
    X, y, _ = _read_csv(path, target)
    lam_max = (default_lam_max(len(y)) if lam_max is None
               else check_positive(lam_max, "lam_max"))
    _check_out(out)
    start = time.perf_counter()
    cv = cv_lambda(X, y, lam_max=lam_max, n_folds=folds, n_particles=n_particles,
                   len_chain=len_chain, seed=seed,
                   n_jobs=check_count(n_jobs, "n_jobs"), verbose=verbose)
    png = save(plot_cv_curve(cv).figure, os.path.join(out, "cv_curve.png"))
    best = int(np.argmax(cv.mean_auc))
    summary = {"data": os.path.abspath(path), "lam_max": lam_max, "folds": folds,
               "best_lam": cv.best_lam, "cv_auc": cv.mean_auc[best],
               "cv_auc_sd": cv.std_auc[best],
               "refit_log_evidence": cv.posterior.log_z,
               "seconds": time.perf_counter() - start, "cv_png": png}
    write_rows(cv.rows(), os.path.join(out, "cv_curve.csv"))
    write_json(summary, os.path.join(out, "summary.json"))
    return jsonable(summary)


# ------------------------------------------------------------ argument parsing

def _lam_argument(text):
    if text == "cv":
        return text
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--lam takes 'cv' or a number, got {text!r}")


def progress_argument(args):
    """The ``verbose`` value of parsed ``--progress`` / ``--quiet`` options
    (:mod:`pac_particles.progress`)."""
    return False if args.quiet else (True if args.progress == "auto"
                                       else args.progress)


def parent_parsers():
    """Options several sub-commands (and the scripts) share, one definition
    each, as argparse parent parsers keyed by topic: ``run`` (``--seed``,
    ``--out``, whose default ``None`` stands for ``results/NAME``),
    ``quiet`` (``--progress``, ``--quiet``: :func:`progress_argument`),
    ``sampler`` (``--n-particles``, ``--len-chain``), ``data``
    (a CSV path and ``--target``), ``split`` (``--test-size``) and ``jobs``
    (``--n-jobs``)."""
    run = argparse.ArgumentParser(add_help=False)
    run.add_argument("--seed", type=int, default=0,
                     help="seed of the split and of the sampler")
    run.add_argument("--out", default=None,
                     help="output folder (default: results/NAME, NAME the "
                          "command or script)")
    quiet = argparse.ArgumentParser(add_help=False)
    quiet.add_argument("--progress", default="auto",
                       choices=[m for m in PROGRESS_MODES if m != "off"],
                       help="progress on stderr: a tqdm bar on a terminal and "
                            "one line per step in logs (auto), or force "
                            "'bar' or 'lines'")
    quiet.add_argument("--quiet", action="store_true",
                       help="no progress report")
    sampler = argparse.ArgumentParser(add_help=False)
    sampler.add_argument("--n-particles", type=int, default=200,
                         help="resampled particles M (waste-free: M x "
                              "len-chain held)")
    sampler.add_argument("--len-chain", type=int, default=10,
                         help="length of the MCMC chains (>= 2)")
    data = argparse.ArgumentParser(add_help=False)
    data.add_argument("data", help="CSV with a header row, numeric columns")
    data.add_argument("--target", default=None,
                      help="label column (default: last)")
    split = argparse.ArgumentParser(add_help=False)
    split.add_argument("--test-size", type=float, default=0.25,
                       help="held-out fraction of a stratified split")
    jobs = argparse.ArgumentParser(add_help=False)
    jobs.add_argument("--n-jobs", type=int, default=1,
                      help="cross-validation folds run in parallel")
    return {"run": run, "quiet": quiet, "sampler": sampler, "data": data,
            "split": split, "jobs": jobs}


def build_parser():
    """The argument parser of ``pac-particles``."""
    parents = parent_parsers()

    def using(*names):
        return [parents[name] for name in ("run", "quiet", "sampler") + names]
    parser = argparse.ArgumentParser(
        prog="pac-particles",
        description="PAC-Bayesian AUC scoring with Sequential Monte Carlo.")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("demo", parents=using("split"),
                       help="the main job on a built-in dataset")
    p.add_argument("--dataset", default="pima", choices=sorted(DATASETS))
    p.add_argument("--lam", type=_lam_argument, default=None,
                   help="inverse temperature, or 'cv' to choose it by "
                        "cross-validation (default: number of training points)")
    f = sub.add_parser("fit", parents=using("data", "split", "jobs"),
                       help="fit on a CSV file and write a JSON summary")
    f.add_argument("--method", default="smc", choices=METHODS)
    f.add_argument("--lam", type=_lam_argument, default="cv",
                   help="'cv' (default) or a positive number")
    k = sub.add_parser("classify", parents=using("data", "split", "jobs"),
                       help="fit a PAC-Bayesian classifier on a CSV file and "
                            "write a JSON summary")
    k.add_argument("--method", default="vb", choices=CLASSIFIER_METHODS)
    k.add_argument("--loss", default="zero_one", choices=LOSSES)
    k.add_argument("--lam", type=_lam_argument, default="cv",
                   help="'cv' (default: K-fold accuracy) or a positive number")
    k.add_argument("--pu-prior", type=float, default=None,
                   help="positive-unlabelled labels: the fraction of "
                        "positives among the unlabelled points")
    c = sub.add_parser("cv", parents=using("data", "jobs"),
                       help="cross-validate lam along the tempering path")
    c.add_argument("--lam-max", type=float, default=None,
                   help="end of the path (default: 5 x n)")
    c.add_argument("--folds", type=int, default=5)
    return parser


def _run(args):
    shared = dict(n_particles=args.n_particles, len_chain=args.len_chain,
                  seed=args.seed, out=args.out or f"results/{args.command}",
                  verbose=progress_argument(args))
    if args.command == "demo":
        start = time.perf_counter()
        _print_demo(demo(dataset=args.dataset, lam=args.lam,
                         test_size=args.test_size, **shared))
        print(f"  total {time.perf_counter() - start:.1f} s")
    elif args.command == "fit":
        summary = fit_csv(args.data, target=args.target, method=args.method,
                          lam=args.lam, test_size=args.test_size,
                          n_jobs=args.n_jobs, **shared)
        print(json.dumps({k: v for k, v in summary.items()
                          if k != "coefficients"}, indent=2))
    elif args.command == "classify":
        summary = classify_csv(args.data, target=args.target,
                               method=args.method, loss=args.loss,
                               lam=args.lam, test_size=args.test_size,
                               pu_prior=args.pu_prior, n_jobs=args.n_jobs,
                               **shared)
        print(json.dumps({k: v for k, v in summary.items()
                          if k != "coefficients"}, indent=2))
    else:
        summary = cv_csv(args.data, target=args.target, lam_max=args.lam_max,
                         folds=args.folds, n_jobs=args.n_jobs, **shared)
        print(json.dumps(summary, indent=2))


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        with warnings.catch_warnings():
            # constant columns etc. are reported once
            warnings.simplefilter("once")
            _run(args)
    except InputError as err:
        # bad input is the user's to fix: one line, no traceback; anything
        # else is a bug and propagates with its traceback
        message = " ".join(str(err).split())
        parser.exit(2, f"pac-particles: error: {message}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
