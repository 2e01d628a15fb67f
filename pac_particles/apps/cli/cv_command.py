"""``pac-particles cv DATA.csv``: cross-validation of ``lam`` along the
tempering path, through the estimator ``fit --lam cv --method smc`` runs, so
that both commands report the same ``lam``; the cross-validated AUC (mean
and spread over the folds) at the chosen ``lam``, beside the logistic
regression's on the same folds, as ``xgboost cv`` reports its model's; and
its printed headline.
"""

import os
import time

import numpy as np

from pac_particles.apps import cli
from pac_particles.apps.cli.certificate_report import certificate_fields
from pac_particles.apps.cli.fit_command import _cv_png, cv_auc_at
from pac_particles.apps.cli.inputs import _check_out, _check_sampler, _read_csv
from pac_particles.apps.tables import jsonable, write_json, write_rows
from pac_particles.core.checks import check_count, check_positive
from pac_particles.problem.auc import auc_risk
from pac_particles.sklearn.baselines import logistic_scores
from pac_particles.sklearn.selection import default_lam_max
from pac_particles.sklearn.selection.folds import stratified_folds

__all__ = ["cv_csv", "print_cv"]


def cv_csv(path, target=None, lam_max=None, folds=5, n_particles=200,
           len_chain=10, seed=0, n_jobs=1, out="results/cv", verbose=True,
           csv_options=None):
    """The ``cv`` sub-command: returns the summary it writes as JSON.

    Runs the estimator ``fit --method smc --lam cv`` runs
    (:class:`PACBayesAUC`, ``cv_rule='certified'``, on all rows), so both
    commands report the same ``lam``: ``lam_certified`` (the certified
    rule, ``fit``'s default) and ``best_lam`` (best mean CV AUC, ``fit
    --cv-rule best``)."""
    n_particles, len_chain, seed = _check_sampler(n_particles, len_chain, seed)
    folds = check_count(folds, "folds", minimum=2)
    X, y, _, classes, target_name = _read_csv(path, target,
                                              **(csv_options or {}))
    lam_max = (default_lam_max(len(y)) if lam_max is None
               else check_positive(lam_max, "lam_max"))
    _check_out(out)
    start = time.perf_counter()
    estimator = cli.PACBayesAUC(method="smc", lam="cv", lam_max=lam_max,
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
    certified_mean, certified_sd = cv_auc_at(cv, estimator.lam_)
    logistic = _logistic_cv_auc(X, y, folds, seed)
    summary = {"data": os.path.abspath(path), "target": target_name,
               "classes": {"negative": classes[0], "positive": classes[1]},
               "lam_max": lam_max, "folds": len(cv.fold_auc),
               "grid_size": int(cv.grid.size),
               # the two rules, labelled; fit uses lam_certified by default
               "best_lam": cv.best_lam, "cv_auc": cv.mean_auc[best],
               "cv_auc_sd": cv.std_auc[best],
               "lam_certified": estimator.lam_,
               "cv_auc_at_lam_certified": certified_mean,
               "cv_auc_sd_at_lam_certified": certified_sd,
               # the baseline on the same stratified folds (same seed)
               "cv_auc_logistic": float(np.mean(logistic)),
               "cv_auc_sd_logistic": float(np.std(logistic, ddof=1)),
               "certificate_at_lam_certified": cert,
               "fit_uses": {"--cv-rule certified (default)":
                            estimator.lam_, "--cv-rule best": cv.best_lam},
               "refit_log_evidence": estimator.log_evidence_,
               "seconds": time.perf_counter() - start, "cv_png": png}
    summary["cv_curve_csv"] = write_rows(cv.rows(),
                                         os.path.join(out, "cv_curve.csv"))
    write_json(summary, os.path.join(out, "summary.json"))
    return jsonable(summary)


def _logistic_cv_auc(X, y, folds, seed):
    """Validation AUC of the logistic-regression baseline on each of the
    stratified folds the estimator's cross-validation uses
    (:func:`~pac_particles.sklearn.selection.folds.stratified_folds` with
    the same seed)."""
    aucs = []
    for train, valid in stratified_folds(y == 1, folds, seed):
        scores = logistic_scores(X[train], y[train], X[valid],
                                 random_state=seed)
        aucs.append(1.0 - float(auc_risk(scores, y[valid])))
    return np.array(aucs)


def print_cv(s):
    """Print the headline of a :func:`cv_csv` summary ``s``: the
    cross-validated AUC, mean +- sd over the folds, at each rule's lam and
    of the logistic regression."""
    print(f"cv {os.path.basename(s['data'])}: {s['folds']}-fold "
          f"cross-validation of lam along the tempering path (method smc, "
          f"{s['grid_size']} values up to lam_max {s['lam_max']:.4g})")
    print(f"  {'':22s}{'lam':>10s}   CV AUC (mean +- sd over folds)")
    print(f"  {'certified rule (fit)':22s}{s['lam_certified']:10.4g}   "
          f"{s['cv_auc_at_lam_certified']:.3f} +- "
          f"{s['cv_auc_sd_at_lam_certified']:.3f}")
    print(f"  {'best mean CV AUC':22s}{s['best_lam']:10.4g}   "
          f"{s['cv_auc']:.3f} +- {s['cv_auc_sd']:.3f}   (fit --cv-rule best)")
    print(f"  {'logistic regression':22s}{'':10s}   "
          f"{s['cv_auc_logistic']:.3f} +- {s['cv_auc_sd_logistic']:.3f}   "
          "(same folds)")
    cert = s["certificate_at_lam_certified"]
    print(f"  certificate at the certified rule's lam: {cert['sentence']}")
    print(f"  files: {s['cv_png']}, {s['cv_curve_csv']}")
