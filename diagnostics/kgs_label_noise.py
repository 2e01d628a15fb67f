"""Bayes point machine against soft-margin SVMs under label noise [GH01, Fig. 4].

The paper's generator: points on the unit sphere in R^3, longitude
2 pi Beta(5, 5), polar angle pi Beta(0.1, 0.1); labels from the classifier
w* at polar angle pi/2 and longitude pi, i.e. w* = (-1, 0, 0), flipped with
probability q* = 0.05 (training and test labels alike, so 0.05 is the
floor). m_train = 100, m_test = 1000. The Bayes point machine is the mean of
the normalised particles of the 0-1 Gibbs posterior with lam =
n log((1 - q) / q) (uniform prior on directions: N(0, I), no intercept),
sampled by waste-free SMC with the exact ellipse move, for several assumed
q; the SVMs are scikit-learn's linear SVC (L1 soft margin) over C and the
quadratic soft margin of the paper (kernel x . x' + lambda 1{x = x'}, hard
margin) over lambda. Writes kgs_label_noise.png, kgs_label_noise.csv (every
repetition) and kgs_label_noise_summary.csv.

    python diagnostics/kgs_label_noise.py [--repetitions 20] [--quick]
"""
import argparse
import os

import matplotlib.pyplot as plt
import numpy as np
from sklearn.svm import SVC

from pac_particles.sklearn.committee import Committee
from pac_particles.smc.models import ClassificationGibbsModel, lam_from_label_noise
from pac_particles.smc.moves import ExactEllipseGibbs
from pac_particles.apps.plots import save
from pac_particles.smc.posterior import run_smc
from pac_particles.apps.tables import write_rows

Q_STAR = 0.05
W_STAR = np.array([-1.0, 0.0, 0.0])


def sphere_data(m, rng):
    """The generator of [GH01, Sec. 5] (see the module docstring)."""
    lon = 2 * np.pi * rng.beta(5, 5, size=m)
    polar = np.pi * rng.beta(0.1, 0.1, size=m)
    X = np.column_stack([np.sin(polar) * np.cos(lon),
                         np.sin(polar) * np.sin(lon), np.cos(polar)])
    y = (X @ W_STAR > 0) ^ (rng.uniform(size=m) < Q_STAR)
    return X, y.astype(int)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repetitions", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="small run (smoke test)")
    parser.add_argument("--out", default="results/diagnostics")
    args = parser.parse_args()
    reps = 2 if args.quick else args.repetitions
    qs = [0.01, 0.025, 0.05, 0.1, 0.2]
    Cs = [0.01, 0.1, 1.0, 10.0, 100.0]
    ridges = [0.01, 0.1, 1.0, 10.0]
    size = dict(n_particles=30, len_chain=4) if args.quick else dict(
        n_particles=200, len_chain=10)
    rng = np.random.default_rng(args.seed)
    rows = []
    for rep in range(reps):
        X, y = sphere_data(100, rng)
        X_te, y_te = sphere_data(1000, rng)
        for q in qs:
            model = ClassificationGibbsModel(X, y, lam=lam_from_label_noise(q, 100),
                                             fit_intercept=False, standardize=False)
            post = run_smc(model, move=ExactEllipseGibbs(model),
                           seed=args.seed + rep, **size)
            committee = Committee.from_posterior(post)
            bpm = committee.bayes_point_scores(X_te, raw=False) > 0
            vote = committee.decide(X_te, raw=False)
            rows.append(dict(rep=rep, method="BPM", param=q,
                             error=np.mean(bpm != y_te)))
            rows.append(dict(rep=rep, method="vote", param=q,
                             error=np.mean(vote != y_te)))
        for C in Cs:
            svm = SVC(kernel="linear", C=C).fit(X, y)
            rows.append(dict(rep=rep, method="SVM (L1 soft margin, C)", param=C,
                             error=np.mean(svm.predict(X_te) != y_te)))
        for ridge in ridges:
            svm = SVC(kernel="precomputed", C=1e6).fit(X @ X.T + ridge * np.eye(100), y)
            rows.append(dict(rep=rep, method="SVM (quadratic soft margin, lambda)",
                             param=ridge, error=np.mean(svm.predict(X_te @ X.T) != y_te)))
        print(f"repetition {rep + 1}/{reps} done", flush=True)
    os.makedirs(args.out, exist_ok=True)
    write_rows(rows, os.path.join(args.out, "kgs_label_noise.csv"))
    summary = []
    for method in dict.fromkeys(r["method"] for r in rows):
        for param in dict.fromkeys(r["param"] for r in rows if r["method"] == method):
            errs = np.array([r["error"] for r in rows
                             if r["method"] == method and r["param"] == param])
            summary.append(dict(method=method, param=param, mean_error=errs.mean(),
                                se=errs.std(ddof=1) / np.sqrt(errs.size),
                                repetitions=errs.size))
            print(f"{method:38s} {param:7.3g}  error {errs.mean():.4f} "
                  f"+- {summary[-1]['se']:.4f}")
    write_rows(summary, os.path.join(args.out, "kgs_label_noise_summary.csv"))
    fig, ax = plt.subplots(figsize=(6, 4))
    markers = {"BPM": "o-", "vote": "s--", "SVM (L1 soft margin, C)": "^-",
               "SVM (quadratic soft margin, lambda)": "v-"}
    for method, style in markers.items():
        pts = [s for s in summary if s["method"] == method]
        ax.errorbar([s["param"] for s in pts], [s["mean_error"] for s in pts],
                    yerr=[s["se"] for s in pts], fmt=style, capsize=3,
                    label=method + (" (assumed q)" if method in ("BPM", "vote") else ""))
    ax.axhline(Q_STAR, ls=":", color="k", label="label noise q* = 0.05")
    ax.set_xscale("log")
    ax.set_xlabel("assumed q (BPM, vote) / C or lambda (SVM)")
    ax.set_ylabel("test error")
    ax.set_title(f"BPM vs SVM under 5% label noise ({reps} repetitions)")
    ax.legend(fontsize=7)
    print("figure:", save(fig, os.path.join(args.out, "kgs_label_noise.png")))


if __name__ == "__main__":
    main()
