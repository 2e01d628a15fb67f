"""``pac-particles classify DATA.csv``: a PAC-Bayesian classifier
(:class:`~pac_particles.sklearn.classifier.PACBayesClassifier`: the Gibbs
posterior of a 0-1, hinge, exponential or ramp risk) on a CSV with a
held-out split, against the logistic-regression baseline
(:func:`logistic_classifier`): a JSON summary, a headline in ``fit``'s
style (:func:`print_classify`) and, with ``--save-model``, a model file for
``predict``.

The classifier class is looked up on :mod:`pac_particles.apps.cli` when the
command runs (``cli.PACBayesClassifier``), as the AUC commands' estimator.
"""

import os
import time

import numpy as np
from sklearn.linear_model import LogisticRegressionCV
from sklearn.model_selection import StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from pac_particles.apps import cli
from pac_particles.apps.cli.fit_command import (_print_reading,
                                                certificate_reading)
from pac_particles.apps.cli.held_out import _baseline_folds, _fit_on_split
from pac_particles.apps.cli.inputs import (_check_fit_options, _check_out,
                                           _read_csv)
from pac_particles.apps.cli.parser import (_CLASSIFIER_METHODS, _DEPLOYS,
                                          _LOSSES)
from pac_particles.apps.plots import plot_cv_curve, save
from pac_particles.apps.tables import jsonable, write_json
from pac_particles.core.checks import (check_choice, check_count,
                                       check_pu_prior)
from pac_particles.sklearn.methods import get_method
from pac_particles.sklearn.model_file import save_model

__all__ = ["classify_csv", "print_classify", "logistic_classifier"]


def classify_csv(path, target=None, method="vb", loss="auto", lam="cv",
                 test_size=0.25, pu_prior=None, n_particles=200, len_chain=10,
                 seed=0, n_jobs=1, out="results/classify", verbose=True,
                 save_model_to=None, csv_options=None, deploy="all_rows"):
    """The ``classify`` sub-command: returns the summary it writes as JSON.

    ``verbose``: the classifier's progress (per grid value and fold, then
    the final fit). ``save_model_to``: a path for the model file
    (:func:`pac_particles.sklearn.model_file.save_model`); ``deploy``: the
    rule ``predict`` and the model file use
    (:class:`~pac_particles.sklearn.classifier.PACBayesClassifier`'s
    ``deploy``)."""
    n_particles, len_chain, seed, test_size, method, lam = _check_fit_options(
        n_particles, len_chain, seed, test_size, method, _CLASSIFIER_METHODS, lam)
    loss = check_choice(loss, "loss", ("auto", *_LOSSES))
    deploy = check_choice(deploy, "deploy", _DEPLOYS)
    if pu_prior is not None:
        pu_prior = check_pu_prior(pu_prior)
    started = time.perf_counter()
    X, y, names, classes, target_name = _read_csv(
        path, target, ranking=False, **(csv_options or {}))
    _check_out(out)
    if save_model_to is not None:
        _check_out(os.path.dirname(os.path.abspath(save_model_to)),
                   option="--save-model")
    estimator = cli.PACBayesClassifier(
        method=method, loss=loss, lam=lam, pu_prior=pu_prior,
        n_particles=n_particles, len_chain=len_chain, random_state=seed,
        n_jobs=check_count(n_jobs, "n_jobs"), deploy=deploy, verbose=verbose)
    X_tr, X_te, y_tr, y_te, fit_seconds = _fit_on_split(
        estimator, X, y, test_size, seed, classes)
    summary = {
        "data": os.path.abspath(path), "target": target_name,
        "classes": {"negative": classes[0], "positive": classes[1]},
        "n_train": len(y_tr), "n_features": X.shape[1],
        "method": method, "loss": estimator.loss_, "pu_prior": pu_prior,
        "lam": estimator.lam_, "lam_chosen_by": "cv" if lam == "cv" else "user",
        "lam_rule": (f"{len(estimator.cv_.fold_auc)}-fold CV, best mean "
                     "validation accuracy" if lam == "cv"
                     else "given (--lam)"),
        "log_evidence": estimator.log_evidence_,
        "log_evidence_is": get_method(method).evidence_name,
        "deploy": deploy,
        "certificate": _certificate_summary(estimator),
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
                           along=get_method(method).lam_search,
                           marks={f"best: lam = {cv.best_lam:.4g}":
                                  cv.best_lam})
        ax.set_title(f"{os.path.basename(path)}: {len(cv.fold_auc)}-fold CV "
                     f"of lam ({method}, {estimator.loss_} loss)",
                     fontsize="medium")
        summary["cv_png"] = save(ax.figure, os.path.join(out, "cv_curve.png"))
    if X_te is not None:
        # with PU labels these are errors against the PU labels, as given
        summary["n_test"] = len(y_te)
        summary["test_error"] = 1.0 - estimator.score(X_te, y_te)
        folds = _baseline_folds(y_tr)
        summary["test_error_logistic"] = (1.0 - logistic_classifier(
            seed, folds).fit(X_tr, y_tr).score(X_te, y_te) if folds else None)
    summary["certificate_reading"] = certificate_reading(
        estimator.certificate_, "error", summary.get("test_error"),
        summary.get("n_test"))
    if save_model_to is not None:
        options = {"sep": ",", "header": True}
        options.update({k: v for k, v in (csv_options or {}).items()
                        if k in ("sep", "header")})
        summary["model_file"] = save_model(
            estimator, save_model_to, feature_names=names, classes=classes,
            info={"data": os.path.abspath(path), "target": target_name,
                  "n_train": len(y_tr), "test_error": summary.get(
                      "test_error"), "csv": options})
    summary["total_seconds"] = time.perf_counter() - started
    summary["summary_json"] = write_json(summary,
                                         os.path.join(out, "summary.json"))
    return jsonable(summary)


def print_classify(s):
    """Print the headline of a :func:`classify_csv` summary ``s``, in the
    style of :func:`~pac_particles.apps.cli.fit_command.print_fit`."""
    classes = s["classes"]
    test = (f", {s['n_test']} held out" if "n_test" in s
            else ", no test split")
    print(f"classify {os.path.basename(s['data'])}: {s['n_train']} training "
          f"rows{test}; {s['n_features']} features; labels {s['target']!r}: "
          f"positive {classes['positive']!r}, negative "
          f"{classes['negative']!r}"
          + (f"; PU labels, prior {s['pu_prior']:g}" if s["pu_prior"]
             is not None else ""))
    print(f"  method {s['method']}, {s['loss']} loss; lam {s['lam']:.4g}, "
          f"{s['lam_rule']}")
    if "cv_accuracy" in s:
        print(f"    (mean CV accuracy {s['cv_accuracy']:.3f} at that lam)")
    line = f"  training error {s['train_error']:.3f}"
    if "test_error" in s:
        line += f"   test error {s['test_error']:.3f}"
        if s["test_error_logistic"] is not None:
            line += (f"   logistic regression test error "
                     f"{s['test_error_logistic']:.3f}")
    print(line)
    cert = s["certificate"]
    if cert is None or "statement" not in cert:
        print("  certificate: none for this fit (PU labels: the PU risk is "
              "not a mean of i.i.d. errors)")
    else:
        print(f"  certificate: {cert['statement']}")
    deployed = (cert or {}).get("deployed")
    if deployed is not None:
        print(f"  deployed rule ({s['deploy']}): {deployed['statement']}")
    _print_reading(s["certificate_reading"])
    files = [s[k] for k in ("summary_json", "cv_png") if k in s]
    print(f"  files: {', '.join(files)}")
    if "model_file" in s:
        print(f"  model: {s['model_file']} (pac-particles predict "
              f"{s['model_file']} NEW.csv)")


def _certificate_summary(estimator):
    """The certificate and, under ``deployed``, the certificate of the rule
    ``predict`` uses (``deploy``), as ``fit``'s summary nests them."""
    fields = _error_certificate_fields(estimator.certificate_)
    deployed = _error_certificate_fields(estimator.deployed_certificate_)
    if fields is None and deployed is None:
        return None
    return {**(fields or {}), "deployed": deployed}


def _error_certificate_fields(cert):
    """The classifier's certificate for the JSON summary (None when the fit
    has none: PU labels)."""
    if cert is None:
        return None
    score = cert.posterior or "the randomised classifier"
    claim = (f"with probability >= {1 - cert.delta:g}, {score} errs on new "
             f"data with probability <= {cert.bound:.4f}")
    return {"bound": cert.name, "score": score, "delta": cert.delta,
            "certified_error": cert.bound, "vacuous": cert.vacuous,
            "empirical_randomized_error": cert.empirical_randomized_risk,
            "kl": cert.kl, "m": cert.m,
            "statement": ("VACUOUS (no better than a coin): " + claim
                          if cert.vacuous else claim),
            # the certificate's own sentence (pac_particles.bounds)
            "sentence": str(cert)}


def logistic_classifier(seed=None, n_folds=5):
    """The logistic-regression baseline of classification: L2 penalty chosen
    by ``n_folds``-fold accuracy (``LogisticRegressionCV``) on standardised
    inputs."""
    folds = StratifiedKFold(n_folds, shuffle=True, random_state=seed)
    return make_pipeline(StandardScaler(), LogisticRegressionCV(
        cv=folds, scoring="accuracy", l1_ratios=(0.0,),
        use_legacy_attributes=False, max_iter=5000))
