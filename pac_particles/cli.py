"""The ``pac-particles`` command.

Sub-commands
------------
``demo``
    The main job: a built-in dataset (Pima by default), stratified 75/25 split,
    waste-free adaptive-tempering SMC on the AUC Gibbs posterior with
    ``lam = n_train``; prints train/test AUC of the Bayes point and of the
    posterior mean, the test AUC of logistic regression on the same split, the
    PAC-Bayes certificate, the log evidence, the number of tempering steps and
    the wall time; writes a ROC plot and the marginal posteriors of the first
    three coefficients as PNGs.
``fit DATA.csv``
    Fit :class:`~pac_particles.estimator.PACBayesAUC` on a CSV (header row,
    numeric columns) with a held-out test split; writes ``summary.json``
    (AUCs, lam, log evidence, certificate, timings) and ``roc.png``.
``cv DATA.csv``
    Cross-validation of ``lam`` along the tempering path; writes
    ``cv_curve.png``, ``cv_curve.csv`` and ``summary.json``.

Errors in the input (missing file or column, non-numeric values, one class)
are reported in one line with exit code 2.

Example
-------
::

    pac-particles demo --dataset pima --out results/demo
    pac-particles fit data.csv --target y --method ep --lam cv --out results/fit
    pac-particles cv data.csv --lam-max 5000 --folds 5
"""

import argparse
import json
import os
import sys
import time
import warnings

import numpy as np
from sklearn.model_selection import train_test_split

from .auc import auc_risk
from .baselines import logistic_scores
from .bounds import smc_certificate
from .data import DATASETS, load_csv, load_dataset, validate_xy
from .estimator import METHODS, PACBayesAUC
from .models import AUCGibbsModel
from .plots import plot_cv_curve, plot_marginals, plot_roc, save
from .posterior import run_smc
from .selection import cv_lambda

__all__ = ["main", "demo"]


def demo(dataset="pima", n_particles=200, len_chain=10, lam=None,
         test_size=0.25, seed=0, out="results/demo", eps=0.05, verbose=True):
    """Run the main job and return a dict of the figures it printed."""
    X, y, names = load_dataset(dataset)
    X_tr, X_te, y_tr, y_te = train_test_split(
        X, y, test_size=test_size, stratify=y, random_state=seed)
    lam = float(len(y_tr)) if lam is None else float(lam)
    model = AUCGibbsModel(X_tr, y_tr, lam=lam)
    post = run_smc(model, n_particles=n_particles, len_chain=len_chain,
                   seed=seed, verbose=verbose)
    scores_te = {
        "PAC-Bayes (Bayes point)": post.score(X_te, "bayes_point"),
        "PAC-Bayes (posterior mean)": post.score(X_te, "mean"),
        "logistic regression": logistic_scores(X_tr, y_tr, X_te,
                                               random_state=seed),
    }
    cert = smc_certificate(post, eps=eps)
    result = {
        "dataset": dataset, "n_train": len(y_tr), "n_test": len(y_te),
        "d": model.d, "lam": lam,
        "train_auc_bayes_point": 1 - auc_risk(post.score(X_tr, "bayes_point"), y_tr),
        "train_auc_mean": 1 - auc_risk(post.score(X_tr, "mean"), y_tr),
        "test_auc_bayes_point": 1 - auc_risk(scores_te["PAC-Bayes (Bayes point)"], y_te),
        "test_auc_mean": 1 - auc_risk(scores_te["PAC-Bayes (posterior mean)"], y_te),
        "test_auc_logistic": 1 - auc_risk(scores_te["logistic regression"], y_te),
        "log_evidence": post.log_z, "n_tempering_steps": post.n_steps,
        "n_particles_total": post.theta.shape[0],
        "wall_time_s": post.wall_time,
        "likelihood_share": model.loglik_seconds / post.wall_time,
        "eps": eps, "bound_auc_risk": cert.auc_risk_bound_two_sample,
        "bound_ordered_pairs": cert.bound,
        "gibbs_expected_test_auc": 1 - float(post.weights @ auc_risk(
            post.theta @ model.data.transform(X_te).T, y_te)),
    }
    os.makedirs(out, exist_ok=True)
    ax = plot_roc(y_te, scores_te, title=f"{dataset}: test ROC")
    result["roc_png"] = save(ax.figure, os.path.join(out, "roc.png"))
    names = names or [f"x{k + 1}" for k in range(X.shape[1])]
    axes = plot_marginals(post.theta[:, :3], post.weights,
                          names=[names[k] for k in model.data.columns[:3]])
    result["marginals_png"] = save(axes[0].figure,
                                   os.path.join(out, "marginals.png"))
    return result


def _print_demo(r):
    print(f"dataset {r['dataset']}: n_train {r['n_train']}, n_test {r['n_test']}, "
          f"d {r['d']}, lam {r['lam']:g}")
    print(f"  Bayes point     train AUC {r['train_auc_bayes_point']:.4f}  "
          f"test AUC {r['test_auc_bayes_point']:.4f}")
    print(f"  posterior mean  train AUC {r['train_auc_mean']:.4f}  "
          f"test AUC {r['test_auc_mean']:.4f}")
    print(f"  logistic regression        test AUC {r['test_auc_logistic']:.4f}")
    print(f"  PAC-Bayes certificate ({100 * (1 - r['eps']):.0f}%): randomised "
          f"Gibbs score has expected 1 - AUC <= {r['bound_auc_risk']:.3f}, "
          f"i.e. AUC >= {1 - r['bound_auc_risk']:.3f} "
          f"(its test AUC: {r['gibbs_expected_test_auc']:.3f}); ordered-pairs "
          f"risk <= {r['bound_ordered_pairs']:.3f} (Corollary 19)")
    print(f"  log evidence {r['log_evidence']:.3f}   tempering steps "
          f"{r['n_tempering_steps']}   particles {r['n_particles_total']}")
    print(f"  wall time {r['wall_time_s']:.2f} s "
          f"({100 * r['likelihood_share']:.0f}% in the likelihood)")
    print(f"  figures: {r['roc_png']}, {r['marginals_png']}")


def _lam_argument(text):
    if text == "cv":
        return text
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--lam takes 'cv' or a number, got {text!r}")


def _read_csv(path, target):
    if not os.path.isfile(path):
        raise ValueError(f"no such file: {path}")
    X, y, names = load_csv(path, target=target)
    validate_xy(X, y)  # one clear error for NaN, one class, non-binary labels
    return X, y, names


def fit_csv(path, target=None, method="smc", lam="cv", test_size=0.25,
            n_particles=200, len_chain=10, seed=0, out="results/fit",
            verbose=True):
    """The ``fit`` sub-command: returns the summary it writes as JSON."""
    X, y, names = _read_csv(path, target)
    estimator = PACBayesAUC(method=method, lam=lam, n_particles=n_particles,
                            len_chain=len_chain, random_state=seed,
                            verbose=verbose)
    if test_size > 0:
        X_tr, X_te, y_tr, y_te = train_test_split(
            X, y, test_size=test_size, stratify=y, random_state=seed)
    else:
        X_tr, y_tr, X_te, y_te = X, y, None, None
    start = time.perf_counter()
    estimator.fit(X_tr, y_tr)
    fit_seconds = time.perf_counter() - start
    bound = estimator.bound_
    summary = {
        "data": os.path.abspath(path), "target": target or "last column",
        "n_train": int(len(y_tr)), "n_features": int(X.shape[1]),
        "method": method, "lam": float(estimator.lam_),
        "lam_chosen_by": "cv" if lam == "cv" else "user",
        "log_evidence": float(estimator.log_evidence_),
        "train_auc": float(estimator.train_auc_),
        "certificate": {
            "eps": bound.eps, "grid_size": bound.grid_size,
            "expected_auc_risk_bound": float(bound.auc_risk_bound_two_sample),
            "ordered_pairs_risk_bound": float(bound.bound),
            "statement": (f"with probability >= {1 - bound.eps:g}, the randomised "
                          "posterior score has expected 1 - AUC <= "
                          f"{bound.auc_risk_bound_two_sample:.4f}")},
        "coefficients": dict(zip(names, map(float, estimator.coef_))),
        "fit_seconds": fit_seconds,
    }
    os.makedirs(out, exist_ok=True)
    if X_te is not None:
        scores = {f"PAC-Bayes {method}": estimator.decision_function(X_te),
                  "logistic regression": logistic_scores(X_tr, y_tr, X_te,
                                                         random_state=seed)}
        summary["n_test"] = int(len(y_te))
        summary["test_auc"] = float(estimator.score(X_te, y_te))
        summary["test_auc_logistic"] = float(
            1 - auc_risk(scores["logistic regression"], y_te))
        summary["roc_png"] = save(plot_roc(y_te, scores).figure,
                                  os.path.join(out, "roc.png"))
    with open(os.path.join(out, "summary.json"), "w") as fh:
        json.dump(summary, fh, indent=2)
    return summary


def cv_csv(path, target=None, lam_max=None, folds=5, n_particles=200,
           len_chain=10, seed=0, n_jobs=1, out="results/cv", verbose=True):
    """The ``cv`` sub-command: returns the summary it writes as JSON."""
    X, y, _ = _read_csv(path, target)
    lam_max = lam_max or 20.0 * len(y)
    start = time.perf_counter()
    cv = cv_lambda(X, y, lam_max=lam_max, n_folds=folds, n_particles=n_particles,
                   len_chain=len_chain, seed=seed, n_jobs=n_jobs, verbose=verbose)
    os.makedirs(out, exist_ok=True)
    png = save(plot_cv_curve(cv).figure, os.path.join(out, "cv_curve.png"))
    best = int(np.argmax(cv.mean_auc))
    summary = {"data": os.path.abspath(path), "lam_max": lam_max, "folds": folds,
               "best_lam": cv.best_lam, "cv_auc": float(cv.mean_auc[best]),
               "cv_auc_sd": float(cv.std_auc[best]),
               "refit_log_evidence": float(cv.posterior.log_z),
               "seconds": time.perf_counter() - start, "cv_png": png}
    np.savetxt(os.path.join(out, "cv_curve.csv"),
               np.column_stack([cv.grid, cv.mean_auc, cv.std_auc]), delimiter=",",
               header="gamma,mean_auc,sd_auc", comments="")
    with open(os.path.join(out, "summary.json"), "w") as fh:
        json.dump(summary, fh, indent=2)
    return summary


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="pac-particles",
        description="PAC-Bayesian AUC scoring with Sequential Monte Carlo.")
    sub = parser.add_subparsers(dest="command", required=True)
    f = sub.add_parser("fit", help="fit on a CSV file and write a JSON summary")
    f.add_argument("data", help="CSV with a header row, numeric columns")
    f.add_argument("--target", default=None, help="label column (default: last)")
    f.add_argument("--method", default="smc", choices=METHODS)
    f.add_argument("--lam", type=_lam_argument, default="cv",
                   help="'cv' (default) or a positive number")
    f.add_argument("--test-size", type=float, default=0.25,
                   help="held-out fraction (0: fit on everything)")
    f.add_argument("--n-particles", type=int, default=200)
    f.add_argument("--len-chain", type=int, default=10)
    f.add_argument("--seed", type=int, default=0)
    f.add_argument("--out", default="results/fit")
    f.add_argument("--quiet", action="store_true")
    c = sub.add_parser("cv", help="cross-validate lam along the tempering path")
    c.add_argument("data", help="CSV with a header row, numeric columns")
    c.add_argument("--target", default=None)
    c.add_argument("--lam-max", type=float, default=None,
                   help="end of the path (default: 20 x n)")
    c.add_argument("--folds", type=int, default=5)
    c.add_argument("--n-particles", type=int, default=200)
    c.add_argument("--len-chain", type=int, default=10)
    c.add_argument("--seed", type=int, default=0)
    c.add_argument("--n-jobs", type=int, default=1)
    c.add_argument("--out", default="results/cv")
    c.add_argument("--quiet", action="store_true")
    p = sub.add_parser("demo", help="the main job on a built-in dataset")
    p.add_argument("--dataset", default="pima", choices=sorted(DATASETS))
    p.add_argument("--n-particles", type=int, default=200,
                   help="resampled particles M (waste-free: M x len-chain held)")
    p.add_argument("--len-chain", type=int, default=10)
    p.add_argument("--lam", type=float, default=None,
                   help="inverse temperature (default: number of training points)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="results/demo", help="folder for the PNGs")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    try:
        with warnings.catch_warnings():
            # constant columns etc. are reported once, in one line
            warnings.simplefilter("once")
            if args.command == "demo":
                result = demo(dataset=args.dataset, n_particles=args.n_particles,
                              len_chain=args.len_chain, lam=args.lam,
                              seed=args.seed, out=args.out, verbose=not args.quiet)
                _print_demo(result)
                print(f"  total {time.perf_counter() - start:.1f} s")
            elif args.command == "fit":
                summary = fit_csv(args.data, target=args.target, method=args.method,
                                  lam=args.lam, test_size=args.test_size,
                                  n_particles=args.n_particles,
                                  len_chain=args.len_chain, seed=args.seed,
                                  out=args.out, verbose=not args.quiet)
                print(json.dumps({k: v for k, v in summary.items()
                                  if k != "coefficients"}, indent=2))
            else:
                summary = cv_csv(args.data, target=args.target,
                                 lam_max=args.lam_max, folds=args.folds,
                                 n_particles=args.n_particles,
                                 len_chain=args.len_chain, seed=args.seed,
                                 n_jobs=args.n_jobs, out=args.out,
                                 verbose=not args.quiet)
                print(json.dumps(summary, indent=2))
    except (ValueError, OSError) as err:
        parser.exit(2, f"pac-particles: error: {err}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
