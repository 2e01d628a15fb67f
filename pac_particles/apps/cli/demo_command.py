"""``pac-particles demo``: the main job on a built-in dataset or a CSV --
fit :class:`~pac_particles.sklearn.estimator.PACBayesAUC` by SMC on a
stratified split, test, certify and plot -- and its printed headline.

The estimator class is looked up on :mod:`pac_particles.apps.cli` when the
command runs (``cli.PACBayesAUC``): the one name to replace it by, as the
tests do to record the fits.
"""

import os

import numpy as np

from pac_particles.apps import cli
from pac_particles.apps.cli.certificate_report import (certificate_fields,
                                                       test_set_fields)
from pac_particles.apps.cli.fit_command import (_print_reading,
                                                certificate_reading)
from pac_particles.apps.cli.held_out import _baseline_folds, _split
from pac_particles.apps.cli.inputs import (_check_out, _check_sampler,
                                           _check_test_size, _read_csv)
from pac_particles.apps.plots import (plot_fitted_directions, plot_roc,
                                      plot_tempering_path, save)
from pac_particles.core.checks import check_positive
from pac_particles.problem.auc import auc_risk
from pac_particles.problem.datasets import load_dataset
from pac_particles.sklearn.baselines import logistic_scores

__all__ = ["demo", "print_demo"]


def demo(dataset="pima", n_particles=200, len_chain=10, lam=None,
         test_size=0.25, seed=0, out="results/demo", eps=0.05, verbose=True,
         csv=None, target=None, csv_options=None):
    """Run the main job through :class:`PACBayesAUC` (``method='smc'``) and
    return a dict of the figures it printed. ``csv``: a CSV file instead of
    the built-in ``dataset`` (read with ``target`` and ``csv_options``,
    :func:`pac_particles.apps.cli.parser._csv_options`)."""
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
        lam, lam_rule = float(len(y_tr)), "the number of training rows"
    elif isinstance(lam, str) and lam == "cv":
        lam_rule = "cross-validation along the tempering path"
    else:
        lam, lam_rule = check_positive(lam, "lam"), "given (--lam)"
    estimator = cli.PACBayesAUC(method="smc", lam=lam, n_particles=n_particles,
                                len_chain=len_chain, eps=eps, random_state=seed,
                                verbose=verbose).fit(X_tr, y_tr)
    post = estimator.posterior_
    data, model = post.data, post.predictor
    method = estimator.method_
    bayes_point, mean = (f"PAC-Bayes {method}, Bayes point",
                         f"PAC-Bayes {method}, posterior mean")
    scores_te = {bayes_point: estimator.decision_function(X_te),
                 mean: post.score(X_te, "mean")}
    if _baseline_folds(y_tr):
        scores_te["logistic regression"] = logistic_scores(
            X_tr, y_tr, X_te, random_state=seed)
    result = {
        "dataset": dataset, "n_train": len(y_tr), "n_test": len(y_te),
        "d": data.d, "method": method, "lam": estimator.lam_,
        "lam_rule": lam_rule,
        "train_auc_bayes_point": estimator.train_auc_,
        "train_auc_mean": 1 - auc_risk(post.score(X_tr, "mean"), y_tr),
        "test_auc_bayes_point": 1 - auc_risk(scores_te[bayes_point], y_te),
        "test_auc_mean": 1 - auc_risk(scores_te[mean], y_te),
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
    result["certificate_reading"] = certificate_reading(
        estimator.certificate_, "AUC", result["test_auc_bayes_point"],
        len(y_te))
    ax = plot_roc(y_te, scores_te, title=f"{dataset}: test ROC "
                  f"({len(y_te)} held-out rows)")
    result["roc_png"] = save(ax.figure, os.path.join(out, "roc.png"))
    ax = plot_fitted_directions(
        estimator, names=names,
        title=f"{dataset}: posterior of theta_k / ||theta|| "
              f"({method}, lam = {estimator.lam_:.4g})")
    result["marginals_png"] = save(ax.figure, os.path.join(out, "marginals.png"))
    cv = getattr(estimator, "cv_", None)
    imp = post.importance
    result["importance"] = (None if imp is None else {
        "n_draws": imp.n_draws, "ess": imp.ess, "pareto_k": imp.pareto_k,
        "reliable": bool(imp.reliable)})
    # a path of one point (the run went to lam in one step: importance
    # sampling from a Gaussian) says nothing; the headline gives the
    # importance diagnostics instead
    if cv is not None or np.count_nonzero(post.gammas > 0) > 1:
        ax = plot_tempering_path(post.gammas, post.log_z_path, cv=cv,
                                 title=f"{dataset}: tempering path "
                                       f"({post.n_steps} steps)")
        result["tempering_path_png"] = save(
            ax.figure, os.path.join(out, "tempering_path.png"))
    else:
        result["tempering_path_png"] = None
    return result


def _auc_claim(certified_auc, vacuous):
    label = " (VACUOUS: no better than a coin)" if vacuous else ""
    return f"AUC >= {certified_auc:.3f}{label}"


def print_demo(r):
    """Print the headline of a :func:`demo` result ``r`` (its dict)."""
    print(f"dataset {r['dataset']}: n_train {r['n_train']}, n_test {r['n_test']}, "
          f"d {r['d']}")
    print(f"  method {r['method']}; lam {r['lam']:g}, {r['lam_rule']}")
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
    print(f"  certificate: {c['sentence']}{corollary19}")
    _print_reading(r["certificate_reading"])
    print(f"  held-out bound ({100 * (1 - t['delta']):g}%) for the Bayes point: "
          f"test-population {_auc_claim(t['certified_auc'], t['vacuous'])}")
    print(f"  log evidence {r['log_evidence']:.3f} "
          f"(+- {r['log_evidence_se']:.3f} Monte Carlo se)   tempering steps "
          f"{r['n_tempering_steps']}   particles {r['n_particles_total']}")
    if r["importance"] is not None and r["tempering_path_png"] is None:
        i = r["importance"]
        print(f"  one step, importance sampling from a Gaussian: ESS "
              f"{i['ess']:.0f} of {i['n_draws']} draws, Pareto k "
              f"{i['pareto_k']:.2f} ({'' if i['reliable'] else 'not '}"
              f"reliable); no tempering path to draw")
    print(f"  wall time {r['wall_time_s']:.2f} s "
          f"({100 * r['likelihood_share']:.0f}% in the likelihood)")
    figures = [r[k] for k in ("roc_png", "marginals_png",
                              "tempering_path_png") if r[k]]
    print(f"  figures: {', '.join(figures)}")
