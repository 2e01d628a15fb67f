"""``pac-particles fit DATA.csv``: :class:`~pac_particles.sklearn.estimator.PACBayesAUC`
on a CSV with a held-out split -- summary, coefficients, plots and, with
``--save-model``, a model file for ``predict`` -- and its printed headline.

The estimator class is looked up on :mod:`pac_particles.apps.cli` when the
command runs (``cli.PACBayesAUC``), as in :mod:`~pac_particles.apps.cli.demo_command`.
"""

import math
import os

import numpy as np

from pac_particles.apps import cli
from pac_particles.apps.cli.certificate_report import (certificate_fields,
                                                       certificate_sentence,
                                                       test_set_fields)
from pac_particles.apps.cli.held_out import _baseline_folds, _fit_on_split
from pac_particles.apps.cli.inputs import (_check_fit_options, _check_out,
                                           _read_csv)
from pac_particles.apps.cli.parser import _AUC_METHODS, _CV_RULES, _DEPLOYS
from pac_particles.apps.plots import (plot_cv_curve, plot_fitted_directions,
                                      plot_roc, save)
from pac_particles.apps.tables import jsonable, write_json, write_rows
from pac_particles.bounds.certificates import kl_bound
from pac_particles.core.checks import check_choice, check_count
from pac_particles.problem.auc import auc_risk
from pac_particles.sklearn.baselines import logistic_scores
from pac_particles.sklearn.methods import get_method
from pac_particles.sklearn.model_file import save_model

__all__ = ["fit_csv", "print_fit", "certificate_reading", "rows_to_inform",
           "cv_auc_at"]


def fit_csv(path, target=None, method="smc", lam="cv", test_size=0.25,
            n_particles=200, len_chain=10, seed=0, n_jobs=1, out="results/fit",
            verbose=True, cv_rule="certified", save_model_to=None,
            csv_options=None, deploy="all_rows"):
    """The ``fit`` sub-command: returns the summary it writes as JSON.

    ``save_model_to``: a path for the model file
    (:func:`pac_particles.sklearn.model_file.save_model`); ``csv_options``: how to
    read the CSV
    (:func:`pac_particles.apps.cli.parser._csv_options`); ``deploy``: the
    score ``decision_function`` and the model file use
    (:class:`~pac_particles.sklearn.estimator.PACBayesAUC`'s ``deploy``)."""
    n_particles, len_chain, seed, test_size, method, lam = _check_fit_options(
        n_particles, len_chain, seed, test_size, method, _AUC_METHODS, lam)
    cv_rule = check_choice(cv_rule, "cv_rule", _CV_RULES)
    deploy = check_choice(deploy, "deploy", _DEPLOYS)
    csv_options = csv_options or {}
    X, y, names, classes, target_name = _read_csv(path, target, **csv_options)
    _check_out(out)
    if save_model_to is not None:
        _check_out(os.path.dirname(os.path.abspath(save_model_to)),
                   option="--save-model")
    estimator = cli.PACBayesAUC(method=method, lam=lam, n_particles=n_particles,
                                len_chain=len_chain, cv_rule=cv_rule,
                                deploy=deploy, random_state=seed,
                                n_jobs=check_count(n_jobs, "n_jobs"), verbose=verbose)
    X_tr, X_te, y_tr, y_te, fit_seconds = _fit_on_split(
        estimator, X, y, test_size, seed, classes, names)
    intervals = estimator.coefficient_intervals(0.95)
    intervals.index = names
    summary = {
        "data": os.path.abspath(path), "target": target_name,
        "classes": {"negative": classes[0], "positive": classes[1]},
        "n_train": len(y_tr), "n_train_positive": int(np.sum(y_tr)),
        "n_features": X.shape[1],
        # the method that ran (``auto`` resolves to one), and the one asked
        "method": estimator.method_, "method_requested": method,
        "lam": estimator.lam_,
        "lam_chosen_by": "cv" if lam == "cv" else "user",
        "lam_rule": _lam_rule(estimator, lam),
        "log_evidence": estimator.log_evidence_,
        "log_evidence_se": estimator.log_evidence_se_,
        "train_auc": estimator.train_auc_,
        "deploy": deploy,
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
        folds = len(estimator.cv_.fold_auc)
        summary["cv_png"] = _cv_png(
            estimator, out, title=f"{os.path.basename(path)}: "
            + (f"{folds}-fold CV of lam" if folds > 1
               else "leave-one-out choice of lam")
            + f" ({estimator.method_})")
    rows = [{"feature": name, "coefficient": row.coefficient,
             "lower_95": row.lower, "upper_95": row.upper}
            for name, row in intervals.iterrows()]
    summary["coefficients_csv"] = write_rows(
        rows, os.path.join(out, "coefficients.csv"))
    ax = plot_fitted_directions(
        estimator, names=names,
        title=f"{os.path.basename(path)}: posterior of theta_k / ||theta|| "
              f"({estimator.method_}, lam = {estimator.lam_:.4g})")
    summary["marginals_png"] = save(ax.figure,
                                    os.path.join(out, "marginals.png"))
    if X_te is not None:
        scores = {f"PAC-Bayes {estimator.method_}":
                  estimator.decision_function(X_te)}
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
        summary["roc_png"] = save(plot_roc(
            y_te, scores, title=f"{os.path.basename(path)}: test ROC "
            f"({len(y_te)} held-out rows)").figure,
            os.path.join(out, "roc.png"))
    summary["certificate_reading"] = certificate_reading(
        estimator.certificate_, "AUC", summary.get("test_auc"),
        summary.get("n_test"))
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


def rows_to_inform(cert):
    """Roughly how many independent terms (rows of the smaller class, for
    the AUC) would make the vacuous certificate ``cert`` informative: the
    least ``m`` at which the PAC-Bayes-kl bound with the fit's KL and
    empirical risk held as they are falls below the trivial value (found
    by doubling up to 2^30, then bisection), in rows of the whole sample
    when a prior saw a share of them; None when the certificate records no
    KL (nothing to extrapolate) or no ``m`` suffices. An extrapolation, not
    a promise: more data moves the posterior, and with it the KL."""
    if cert.kl is None or not cert.empirical_randomized_risk < cert.trivial:
        return None

    def informative(m):
        return kl_bound(cert.empirical_randomized_risk, cert.kl, m,
                        cert.delta, trivial=cert.trivial).bound < cert.trivial
    low = max(int(cert.m), 1)            # not informative: the fit's own m
    high = 2 * low
    while not informative(high):
        low, high = high, 2 * high
        if high > 2 ** 30:
            return None
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if informative(middle) else (middle, high)
    # the bound ran on a share of the rows when the prior saw the rest
    return int(math.ceil(high / (1.0 - (cert.prior_fraction or 0.0))))


def certificate_reading(cert, quantity, test_value=None, n_test=None):
    """What a user needs to read a certificate ``cert`` (of a fitted
    estimator) beside a held-out measure: why the two differ (``test_value``
    of ``quantity``, ``"AUC"`` or ``"error"``, on ``n_test`` held-out rows)
    and, when it is vacuous, what would make it informative. Returns
    ``{"beside_test": str or None, "vacuous_advice": str or None}``."""
    if cert is None:
        return {"beside_test": None, "vacuous_advice": None}
    level = f"{100 * (1 - cert.delta):g}%"
    smaller = ("rows of the smaller class" if quantity == "AUC"
               else "training rows")
    beside = None
    if test_value is not None:
        side = "below" if quantity == "AUC" else "above"
        score = cert.posterior or "the fitted predictor"
        beside = (f"why the two differ: the test {quantity} {test_value:.3f} "
                  f"is measured on {n_test} held-out rows; the certificate "
                  f"is a guarantee, at {level} confidence, for {score} on "
                  f"all new data, from the m = {cert.m} {smaller} it rests "
                  f"on: a confidence limit, so it lies {side} the test "
                  f"{quantity} and nears it as m grows")
    advice = None
    if cert.vacuous:
        needed = rows_to_inform(cert)
        advice = (f"the certificate is vacuous (no better than a coin): its "
                  f"sample size is m = {cert.m} {smaller}; more {smaller} "
                  "make it informative")
        if needed is not None:
            advice += (f" (roughly {needed} or more, if the posterior's KL "
                       "and training risk stayed as they are)")
    return {"beside_test": beside, "vacuous_advice": advice}


def _lam_rule(estimator, lam):
    """How ``lam_`` was chosen, in words."""
    if lam != "cv":
        return "given (--lam)"
    if get_method(estimator.method_).lam_search == "path":
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
    return f"{estimator.method_.upper()}'s leave-one-out AUC (best)"


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
    if get_method(estimator.method_).lam_search == "path":
        fields["rule"] = estimator.cv_rule
    else:
        fields["rule"] = "leave-one-out (best)"
    fields["lam_used"] = estimator.lam_
    fields["cv_auc_at_lam_used"], fields["cv_auc_sd_at_lam_used"] = (
        cv_auc_at(cv, estimator.lam_))
    return fields


def cv_auc_at(cv, lam):
    """The cross-validated AUC at ``lam``: the mean and the standard
    deviation over the folds of each fold's validation AUC at ``lam``
    (linear in ``log lam`` between grid values, as
    :meth:`~pac_particles.sklearn.selection.LamCVResult.mean_auc_at`; a
    leave-one-out curve has one row, and a spread of 0)."""
    at = np.array([np.interp(np.log(lam), np.log(cv.grid), row)
                   for row in cv.fold_auc])
    return float(at.mean()), float(at.std(ddof=1)) if at.size > 1 else 0.0


def _cv_png(estimator, out, title=None):
    """``cv_curve.png`` of a fit with ``lam='cv'``: the mean CV AUC, with
    the best-mean lam and the lam used marked."""
    cv = estimator.cv_
    marks = {f"best mean CV AUC: lam = {cv.best_lam:.4g}": cv.best_lam}
    if not math.isclose(estimator.lam_, cv.best_lam, rel_tol=1e-9):
        marks[f"{estimator.cv_rule} rule (used): lam = "
              f"{estimator.lam_:.4g}"] = estimator.lam_
    ax = plot_cv_curve(cv, along=get_method(estimator.method_).lam_search,
                       marks=marks)
    if title:
        ax.set_title(title, fontsize="medium")
    return save(ax.figure, os.path.join(out, "cv_curve.png"))


def _print_reading(reading, stream=None):
    """The lines of :func:`certificate_reading` under a headline's
    certificate."""
    for key in ("vacuous_advice", "beside_test"):
        if reading.get(key):
            print(f"    ({reading[key]})", file=stream)


def print_fit(s):
    """Print the headline of a :func:`fit_csv` summary ``s``."""
    classes = s["classes"]
    test = (f", {s['n_test']} held out" if "n_test" in s
            else ", no test split")
    print(f"fit {os.path.basename(s['data'])}: {s['n_train']} training rows"
          f"{test}; {s['n_features']} features; labels {s['target']!r}: "
          f"positive {classes['positive']!r}, negative "
          f"{classes['negative']!r}")
    chosen = (" (chosen by --method auto)"
              if s["method_requested"] != s["method"] else "")
    print(f"  method {s['method']}{chosen}; lam {s['lam']:.4g}, "
          f"{s['lam_rule']}")
    if "cv" in s:
        cv = s["cv"]
        line = (f"    CV AUC at this lam {cv['cv_auc_at_lam_used']:.3f} +- "
                f"{cv['cv_auc_sd_at_lam_used']:.3f} (mean +- sd over "
                f"{cv['folds']} folds)" if cv["folds"] > 1 else
                f"    leave-one-out AUC at this lam "
                f"{cv['cv_auc_at_lam_used']:.3f}")
        if cv["lam_best_mean_cv_auc"] != s["lam"]:
            line += (f"; best mean {cv['cv_auc_at_best']:.3f} at lam "
                     f"{cv['lam_best_mean_cv_auc']:.4g} (--cv-rule best)")
        print(line)
    line = f"  training AUC {s['train_auc']:.3f}"
    if "test_auc" in s:
        line += f"   test AUC {s['test_auc']:.3f}"
        if s["test_auc_logistic"] is not None:
            line += (f"   logistic regression test AUC "
                     f"{s['test_auc_logistic']:.3f}")
    print(line)
    print(f"  certificate: {s['certificate']['sentence']}")
    deployed = s["certificate"].get("deployed")
    if deployed is not None:
        # the score decision_function and the model file use (--deploy)
        print(f"  deployed score ({s.get('deploy', 'all_rows')}): "
              f"{certificate_sentence(deployed)}")
    _print_reading(s["certificate_reading"])
    files = [s[k] for k in ("summary_json", "coefficients_csv",
                            "marginals_png", "roc_png", "cv_png") if k in s]
    print(f"  files: {', '.join(files)}")
    if "model_file" in s:
        print(f"  model: {s['model_file']} (pac-particles predict "
              f"{s['model_file']} NEW.csv)")
