"""Label noise on real data: Bayes point machine and Bayesian transduction
against a soft-margin SVM and logistic regression, the reject curve, and the
evidence over the assumed noise level [GH01, Sec. 4-5].

Breast cancer (569 x 30), stratified 70/30 splits; a fraction ``--flip``
(default 0.1) of the training labels is flipped at random, test labels are
left clean. The 0-1 Gibbs posterior of a linear classifier with intercept
(N(0, I) prior on standardised inputs) is sampled by waste-free SMC with
the exact ellipse move at lam = n log((1 - q) / q), q = the true flip rate
and q chosen by the evidence (one run to q = 0.01 recording the tempering
path, :func:`pac_particles.smc.label_noise.label_noise_evidence_curve`). The
SVM (linear SVC) and the L2 logistic regression (standardised inputs)
choose their penalty by 5-fold cross-validated accuracy. Writes kgs_breast_cancer.csv (every split),
kgs_breast_cancer_reject.csv, kgs_breast_cancer.png (reject curves and the
evidence curve of the first split).

    python diagnostics/kgs_breast_cancer.py [--splits 10] [--flip 0.1] [--quick]
"""
import argparse
import os

import matplotlib.pyplot as plt
import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, StratifiedShuffleSplit
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from pac_particles.sklearn.committee import Committee, reject_curve
from pac_particles.problem.datasets import load_dataset
from pac_particles.smc.label_noise import PathLogLik, label_noise_evidence_curve
from pac_particles.smc.label_noise import lam_from_label_noise
from pac_particles.smc.models import ClassificationGibbsModel
from pac_particles.smc.moves import ExactEllipseGibbs
from pac_particles.apps.plots import save
from pac_particles.smc.posterior import run_smc
from pac_particles.apps.tables import write_rows

Q_GRID = np.round(np.linspace(0.01, 0.3, 30), 3)
RATES = np.linspace(0.0, 0.5, 11)


def smc_fit(X, y, q, size, seed, collect=None):
    model = ClassificationGibbsModel(X, y, lam=lam_from_label_noise(q, len(y)))
    return run_smc(model, move=ExactEllipseGibbs(model), seed=seed,
                   collect=collect, **size)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--splits", type=int, default=10)
    parser.add_argument("--flip", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="small run (smoke test)")
    parser.add_argument("--out", default="results/diagnostics")
    args = parser.parse_args()
    X, y, _ = load_dataset("breast_cancer")
    if args.quick:
        X, y = X[:150], y[:150]
    n_splits = 1 if args.quick else args.splits
    size = dict(n_particles=30, len_chain=4) if args.quick else dict(
        n_particles=200, len_chain=10)
    rng = np.random.default_rng(args.seed)
    splits = StratifiedShuffleSplit(n_splits, test_size=0.3,
                                    random_state=args.seed).split(X, y)
    rows, curves, evidence = [], {}, None
    for k, (tr, te) in enumerate(splits):
        y_tr = y[tr] ^ (rng.uniform(size=tr.size) < args.flip)
        X_tr, X_te, y_te = X[tr], X[te], y[te]
        seed = args.seed + 10 * k
        path = smc_fit(X_tr, y_tr, 0.01, size, seed, collect=[PathLogLik()])
        log_ev = label_noise_evidence_curve(path, tr.size, Q_GRID)
        q_hat = float(Q_GRID[np.argmax(log_ev)])
        if evidence is None:
            evidence = log_ev
        row = dict(split=k, q_evidence=q_hat)
        for label, q in (("true q", args.flip), ("evidence q", q_hat)):
            committee = Committee.from_posterior(smc_fit(X_tr, y_tr, q, size, seed + 1))
            vote = committee.vote(X_te)
            row[f"BPM ({label})"] = np.mean(
                (committee.bayes_point_scores(X_te) > 0) != y_te)
            row[f"vote ({label})"] = np.mean((vote > 0.5) != y_te)
            curves.setdefault(label, []).append(reject_curve(vote, y_te, RATES)[1])
        svm = GridSearchCV(make_pipeline(StandardScaler(), SVC(kernel="linear")),
                           {"svc__C": [0.001, 0.01, 0.1, 1.0, 10.0]}, cv=5)
        row["SVM"] = np.mean(svm.fit(X_tr, y_tr).predict(X_te) != y_te)
        logistic = GridSearchCV(
            make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000)),
            {"logisticregression__C": [0.001, 0.01, 0.1, 1.0, 10.0, 100.0]}, cv=5)
        row["logistic"] = np.mean(logistic.fit(X_tr, y_tr).predict(X_te) != y_te)
        rows.append(row)
        print(", ".join(f"{key} {value:.4g}" for key, value in row.items()), flush=True)
    os.makedirs(args.out, exist_ok=True)
    write_rows(rows, os.path.join(args.out, "kgs_breast_cancer.csv"))
    for key in rows[0]:
        if key == "split":
            continue
        values = np.array([r[key] for r in rows])
        se = values.std(ddof=1) / np.sqrt(values.size) if values.size > 1 else np.nan
        print(f"{key:20s} {values.mean():.4f} +- {se:.4f}")
    reject_rows = [dict(rate=r, **{label: float(np.mean(c, axis=0)[i])
                                   for label, c in curves.items()})
                   for i, r in enumerate(RATES)]
    write_rows(reject_rows, os.path.join(args.out, "kgs_breast_cancer_reject.csv"))
    for r in reject_rows:
        print(f"rejection {r['rate']:.2f}: error of the vote (true q) "
              f"{r['true q']:.4f}, (evidence q) {r['evidence q']:.4f}")
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    for label, c in curves.items():
        ax1.plot(RATES, np.mean(c, axis=0), "o-", label=f"vote, {label}")
    ax1.set_xlabel("rejection rate (votes closest to 1/2 rejected)")
    ax1.set_ylabel("test error on the kept points")
    ax1.set_title(f"Bayesian transduction with reject ({n_splits} splits)")
    ax1.legend()
    ax2.plot(Q_GRID, evidence, "-")
    ax2.axvline(args.flip, ls=":", color="k", label=f"true flip rate {args.flip}")
    ax2.set_xlabel("assumed label noise q")
    ax2.set_ylabel("log p(y | q)")
    ax2.set_title("evidence over q (first split, one SMC run)")
    ax2.legend()
    print("figure:", save(fig, os.path.join(args.out, "kgs_breast_cancer.png")))


if __name__ == "__main__":
    main()
