"""The ``pac-particles`` command.

Sub-commands
------------
``demo``
    The main job: a built-in dataset (Pima by default), stratified 75/25 split,
    waste-free adaptive-tempering SMC on the AUC Gibbs posterior with
    ``lam = n_train``; prints train/test AUC of the Bayes point and of the
    posterior mean, the test AUC of logistic regression on the same split, the
    log evidence, the number of tempering steps and the wall time; writes a ROC
    plot and the marginal posteriors of the first three coefficients as PNGs.

Example
-------
::

    pac-particles demo --dataset pima --out results/demo
"""

import argparse
import os
import sys
import time

import numpy as np
from sklearn.model_selection import train_test_split

from .auc import auc_risk
from .baselines import logistic_scores
from .bounds import smc_certificate
from .data import DATASETS, load_dataset
from .models import AUCGibbsModel
from .plots import plot_marginals, plot_roc, save
from .posterior import run_smc

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


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="pac-particles",
        description="PAC-Bayesian AUC scoring with Sequential Monte Carlo.")
    sub = parser.add_subparsers(dest="command", required=True)
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
    if args.command == "demo":
        start = time.perf_counter()
        try:
            result = demo(dataset=args.dataset, n_particles=args.n_particles,
                          len_chain=args.len_chain, lam=args.lam, seed=args.seed,
                          out=args.out, verbose=not args.quiet)
        except ValueError as err:
            parser.exit(2, f"pac-particles: error: {err}\n")
        _print_demo(result)
        print(f"  total {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
