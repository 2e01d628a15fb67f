"""Scale: EP for the AUC against scikit-learn on large data, measured side by
side in one run (ratios printed).

* ``million``: ``PACBayesAUC(method="ep", lam=n).fit`` on n x d synthetic
  rows (default 1,000,000 x 10; logistic labels), against
  ``LogisticRegression().fit`` on the same rows: fit-time ratio and the
  difference of test AUC (on as many fresh rows). EP runs on sampled pairs
  (the incomplete U-statistic, automatic above 5e6 pairs).
* ``eeg``: EP (``EPLinear``, lam = n) and VB (``GaussianVB``, diagonal
  family) on the full Eeg data (14,980 rows, 55 million pairs), no row
  dropped, against ``LogisticRegression``.
* ``lam-path``: ``PACBayesAUC(method="ep")`` with ``lam="cv"`` (leave-one-out
  choice along the grid) against ``LogisticRegressionCV(scoring="roc_auc")``
  on Pima, German credit (numeric) and SPECTF.

Usage::

    python scripts/bench_scale.py million [--n 1000000 --d 10]
    python scripts/bench_scale.py eeg
    python scripts/bench_scale.py lam-path [--datasets-dir DIR]
"""
import argparse
import resource
import time
import warnings

import numpy as np
from sklearn.linear_model import LogisticRegression, LogisticRegressionCV
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import train_test_split

from pac_particles.problem.datasets import load_csv, load_dataset
from pac_particles.approx.ep import EPLinear
from pac_particles.sklearn.estimator import PACBayesAUC
from pac_particles.approx.vb import GaussianVB


def timed(fit):
    start = time.perf_counter()
    out = fit()
    return out, time.perf_counter() - start


def peak_gib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2 ** 20


def synthetic(n, d, seed):
    rng = np.random.default_rng(seed)
    w = rng.normal(size=d)
    X = rng.normal(size=(2 * n, d))
    y = (X @ w + 2.0 * rng.logistic(size=2 * n) > 0).astype(int)
    return X[:n], y[:n], X[n:], y[n:]


def million(args):
    Xtr, ytr, Xte, yte = synthetic(args.n, args.d, args.seed)
    lr, t_lr = timed(lambda: LogisticRegression().fit(Xtr, ytr))
    est, t_ep = timed(lambda: PACBayesAUC(method="ep", lam=float(args.n),
                                          random_state=args.seed).fit(Xtr, ytr))
    auc_lr = roc_auc_score(yte, lr.decision_function(Xte))
    auc_ep = roc_auc_score(yte, est.decision_function(Xte))
    post = est.posterior_
    print(f"{args.n} x {args.d}: EP {t_ep:.1f} s ({post.n_sweeps} sweeps, "
          f"converged {post.converged}, {est.approximation_.risk.n_terms} "
          f"pairs), LogisticRegression {t_lr:.2f} s: ratio {t_ep / t_lr:.1f}x;"
          f" test AUC EP {auc_ep:.5f}, LR {auc_lr:.5f}, difference "
          f"{auc_ep - auc_lr:+.5f}; peak memory {peak_gib():.1f} GiB")


def eeg(args):
    X, y, _ = load_dataset("eeg")
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3,
                                          random_state=args.seed, stratify=y)
    for label, rows in (("train split", (Xtr, ytr)), ("all rows", (X, y))):
        Xa, ya = rows
        lr, t_lr = timed(lambda: LogisticRegression(max_iter=1000).fit(Xa, ya))
        ep = EPLinear(Xa, ya, lam=float(len(ya)), seed=args.seed)
        res, t_ep = timed(ep.fit)
        vb = GaussianVB(Xa, ya, lam=float(len(ya)), family="diagonal",
                        n_pairs="auto", seed=args.seed)
        vres, t_vb = timed(vb.fit)
        line = (f"Eeg {label} {Xa.shape[0]} rows ({ep.risk.n_pairs / 1e6:.0f}M"
                f" pairs, EP on {ep.risk.n_terms / 1e6:.0f}M): EP {t_ep:.1f} s "
                f"({res.n_sweeps} sweeps, converged {res.converged}), VB "
                f"{t_vb:.1f} s (converged {vres.converged}), LR "
                f"{t_lr:.2f} s: ratios EP {t_ep / t_lr:.1f}x, VB "
                f"{t_vb / t_lr:.1f}x")
        if Xa is Xtr:
            line += (f"; test AUC EP {roc_auc_score(yte, ep.predict(Xte)):.4f}"
                     f", VB {roc_auc_score(yte, vb.predict(Xte)):.4f}"
                     f", LR {roc_auc_score(yte, lr.decision_function(Xte)):.4f}")
        print(line + f"; peak memory {peak_gib():.1f} GiB", flush=True)


def lam_path(args):
    sets = {"pima": lambda: load_dataset("pima")[:2]}
    for name in ("german_credit_numeric", "spectf"):
        sets[name] = (lambda n=name: load_csv(f"{args.datasets_dir}/{n}.csv",
                                              target="y")[:2])
    print("data                   rows x d   EP lam=cv    LRCV    ratio  "
          "AUC EP  AUC LR")
    for name, load in sets.items():
        X, y = load()
        Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3,
                                              random_state=args.seed,
                                              stratify=y)
        t_ep = t_lr = np.inf
        for _ in range(args.repeats):
            ep, t = timed(lambda: PACBayesAUC(method="ep").fit(Xtr, ytr))
            t_ep = min(t_ep, t)
            lr, t = timed(lambda: LogisticRegressionCV(
                scoring="roc_auc", max_iter=1000).fit(Xtr, ytr))
            t_lr = min(t_lr, t)
        auc_ep = roc_auc_score(yte, ep.decision_function(Xte))
        auc_lr = roc_auc_score(yte, lr.decision_function(Xte))
        print(f"{name:22s} {Xtr.shape[0]:4d} x {Xtr.shape[1]:<3d} "
              f"{t_ep:7.2f} s  {t_lr:6.2f} s  {t_ep / t_lr:5.2f}x  "
              f"{auc_ep:.4f}  {auc_lr:.4f}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=("million", "eeg", "lam-path"))
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--d", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--datasets-dir", default="/work/shared/datasets")
    args = parser.parse_args()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        {"million": million, "eeg": eeg, "lam-path": lam_path}[args.what](args)


if __name__ == "__main__":
    main()
