"""``pac-particles cv DATA.csv``: cross-validation of ``lam`` along the
tempering path, through the estimator ``fit --lam cv --method smc`` runs, so
that both commands report the same ``lam``; and its printed headline.
"""

import os
import time

import numpy as np

from pac_particles.apps import cli
from pac_particles.apps.cli.certificate_report import certificate_fields
from pac_particles.apps.cli.fit_command import _cv_png
from pac_particles.apps.cli.inputs import _check_out, _check_sampler, _read_csv
from pac_particles.apps.tables import jsonable, write_json, write_rows
from pac_particles.core.checks import check_count, check_positive
from pac_particles.sklearn.selection import default_lam_max

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


def print_cv(s):
    """Print the headline of a :func:`cv_csv` summary ``s``."""
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
