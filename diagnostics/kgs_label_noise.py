"""Bayes point machine against soft-margin SVMs under label noise [GH01, Fig. 4].

The paper's generator (:func:`pac_particles.smc.kernel_gibbs_sampler.sphere_data`,
``inputs="gh01"``): points on the unit sphere in R^3, longitude
2 pi Beta(5, 5) about w*'s, latitude pi (Beta(0.1, 0.1) - 1/2); labels from
the classifier w* on the equator, flipped with probability q* = 0.05
(training and test labels alike, so 0.05 is the floor). m_train = 100,
m_test = 1000, 100 repetitions. The Bayes point machine is the mean of 100
draws of the label-noise posterior for an assumed q (lam =
n log((1 - q) / q), uniform prior on directions, no intercept):

* ``--sampler kgs`` (default, the paper's): one kernel Gibbs sampler chain,
  100 draws after ``--burn-in`` steps;
* ``--sampler smc``: the normalised particles of waste-free SMC with the
  exact ellipse move.

The SVMs are scikit-learn's linear SVC (L1 soft margin) over C and the
quadratic soft margin of the paper (kernel x . x' + lambda 1{x = x'}, hard
margin) over lambda. Writes kgs_label_noise.png, kgs_label_noise.csv (every
repetition) and kgs_label_noise_summary.csv.

    python diagnostics/kgs_label_noise.py [--repetitions 100] [--quick]
"""
import argparse
import os

import matplotlib.pyplot as plt
import numpy as np
from sklearn.svm import SVC

from pac_particles.sklearn.committee import Committee
from pac_particles.smc.kernel_gibbs_sampler import KernelGibbsSampler, sphere_data
from pac_particles.smc.label_noise import lam_from_label_noise
from pac_particles.smc.models import ClassificationGibbsModel
from pac_particles.smc.moves import ExactEllipseGibbs
from pac_particles.apps.plots import save
from pac_particles.smc.posterior import run_smc
from pac_particles.apps.tables import write_rows

Q_STAR = 0.05
#: w* at longitude 0, the centre of the Beta(5, 5) longitudes: the paper's
#: geometry (w* at longitude pi, longitudes 2 pi Beta(5, 5)) turned by pi
W_STAR = np.array([1.0, 0.0, 0.0])


def kgs_committee(X, y, q, seed, n_draws, burn_in, quick):
    """``n_draws`` equally weighted directions of one KGS chain after
    ``burn_in`` steps."""
    chains = KernelGibbsSampler(X, y, q=q).sample(
        n_draws=n_draws, n_chains=1, burn_in=burn_in, seed=seed)
    return Committee(chains.draws)


def smc_committee(X, y, q, seed, n_draws, burn_in, quick):
    """Draws of waste-free SMC with the exact ellipse move."""
    model = ClassificationGibbsModel(X, y, lam=lam_from_label_noise(q, len(y)),
                                     fit_intercept=False, standardize=False)
    size = (dict(n_particles=30, len_chain=4) if quick
            else dict(n_particles=200, len_chain=10))
    post = run_smc(model, move=ExactEllipseGibbs(model), seed=seed, **size)
    return Committee.from_posterior(post)


SAMPLERS = {"kgs": kgs_committee, "smc": smc_committee}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repetitions", type=int, default=100)
    parser.add_argument("--sampler", choices=sorted(SAMPLERS), default="kgs",
                        help="the posterior's sampler (default: the paper's KGS)")
    parser.add_argument("--draws", type=int, default=100,
                        help="KGS draws per Bayes point (the paper's 100)")
    parser.add_argument("--burn-in", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="small run (smoke test)")
    parser.add_argument("--out", default="results/diagnostics")
    args = parser.parse_args()
    reps = 2 if args.quick else args.repetitions
    qs = [0.01, 0.025, 0.05, 0.1, 0.2]
    Cs = [0.01, 0.1, 1.0, 10.0, 100.0]
    ridges = [0.01, 0.1, 1.0, 10.0]
    sample = SAMPLERS[args.sampler]
    rows = []
    for rep in range(reps):
        seeds = np.random.SeedSequence([args.seed, rep]).generate_state(3)
        X, y = sphere_data(100, Q_STAR, seed=int(seeds[0]), inputs="gh01",
                           w_star=W_STAR)
        X_te, y_te = sphere_data(1000, Q_STAR, seed=int(seeds[1]),
                                 inputs="gh01", w_star=W_STAR)
        y, y_te = (y > 0).astype(int), (y_te > 0).astype(int)
        for q in qs:
            committee = sample(X, y, q, int(seeds[2]), args.draws,
                               args.burn_in, args.quick)
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
    ax.set_title(f"BPM ({args.sampler.upper()}) vs SVM under 5% label noise "
                 f"({reps} repetitions)", fontsize=10)
    ax.legend(fontsize=7)
    print("figure:", save(fig, os.path.join(args.out, "kgs_label_noise.png")))


if __name__ == "__main__":
    main()
