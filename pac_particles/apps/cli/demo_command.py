"""``pac-particles demo``: the main job on a built-in dataset or a CSV --
fit :class:`~pac_particles.sklearn.estimator.PACBayesAUC` by SMC on a
stratified split, test, certify and plot -- and its printed headline.

The estimator class is looked up on :mod:`pac_particles.apps.cli` when the
command runs (``cli.PACBayesAUC``): the one name to replace it by, as the
tests do to record the fits.
"""

import os

from pac_particles.apps import cli
from pac_particles.apps.cli.certificate_report import (certificate_fields,
                                                       test_set_fields)
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
        lam = float(len(y_tr))
    elif not (isinstance(lam, str) and lam == "cv"):
        lam = check_positive(lam, "lam")
    estimator = cli.PACBayesAUC(method="smc", lam=lam, n_particles=n_particles,
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


def _auc_claim(certified_auc, vacuous):
    label = " (VACUOUS: no better than a coin)" if vacuous else ""
    return f"AUC >= {certified_auc:.3f}{label}"


def print_demo(r):
    """Print the headline of a :func:`demo` result ``r`` (its dict)."""
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
