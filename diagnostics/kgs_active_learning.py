"""Active learning by query by committee on the Gibbs posterior [GH01,
Sec. 4]: learning curves of the entropy query rule against random querying.

Breast cancer (569 x 30, inputs standardised on the whole pool: features
are known before labels), a held-out test set of 169 points, a pool of 400.
Each repetition starts from 4 random labels (two of each class) and queries
``--queries`` more, refitting the 0-1 Gibbs posterior of a linear classifier
with intercept (lam for q = 0.05) by waste-free SMC with the exact ellipse
move after every label; the committee labels the pool point of highest
vote entropy (``rule="entropy"``) or a random one. Our extension to ranking
(``--ranking``): the AUC Gibbs posterior, the pair-order entropy rule against
random, scored by the test AUC of the Bayes point. Writes
kgs_active_learning.csv (every curve), kgs_active_learning.png, and prints
the labels each rule needs to reach ``--target`` accuracy.

    python diagnostics/kgs_active_learning.py [--repetitions 5] [--queries 40] [--quick]
"""
import argparse
import os

import matplotlib.pyplot as plt
import numpy as np
from sklearn.metrics import roc_auc_score

from pac_particles.sklearn.committee import Committee, query_by_committee
from pac_particles.problem.datasets import load_dataset
from pac_particles.smc.label_noise import lam_from_label_noise
from pac_particles.smc.models import AUCGibbsModel, ClassificationGibbsModel
from pac_particles.smc.moves import ExactEllipseGibbs
from pac_particles.apps.plots import save
from pac_particles.smc.posterior import run_smc
from pac_particles.apps.tables import write_rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repetitions", type=int, default=5)
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--target", type=float, default=0.95)
    parser.add_argument("--ranking", action="store_true",
                        help="also the AUC posterior with the pair-order entropy rule")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="small run (smoke test)")
    parser.add_argument("--out", default="results/diagnostics")
    args = parser.parse_args()
    X, y, _ = load_dataset("breast_cancer")
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    reps = 1 if args.quick else args.repetitions
    n_queries = 3 if args.quick else args.queries
    size = dict(n_particles=30, len_chain=4) if args.quick else dict(
        n_particles=100, len_chain=5)

    def fit(X_l, y_l, seed):
        model = ClassificationGibbsModel(
            X_l, y_l, lam=lam_from_label_noise(0.05, len(y_l)), standardize=False)
        return Committee.from_posterior(run_smc(
            model, move=ExactEllipseGibbs(model), seed=seed, **size))

    def fit_auc(X_l, y_l, seed):
        model = AUCGibbsModel(X_l, y_l, lam=float(len(y_l)), standardize=False)
        return Committee.from_posterior(run_smc(model, seed=seed, **size))

    def test_auc(committee, X_t, y_t):
        return roc_auc_score(y_t, committee.bayes_point_scores(X_t))

    tasks = [("accuracy", fit, None, ("entropy", "random"))]
    if args.ranking:
        tasks.append(("AUC", fit_auc, test_auc, ("pair_entropy", "random")))
    rng = np.random.default_rng(args.seed)
    rows, curves = [], {}
    for rep in range(reps):
        order = rng.permutation(len(y))
        pool, test = order[:400], order[400:]
        for metric, fitter, score, rules in tasks:
            for rule in rules:
                curve = query_by_committee(
                    fitter, X[pool], y[pool], X[test], y[test], n_initial=4,
                    n_queries=n_queries, rule=rule, score=score,
                    seed=args.seed + rep)
                curves.setdefault((metric, rule), []).append(curve)
                rows += [dict(rep=rep, metric=metric, rule=rule, n_labels=n,
                              score=s) for n, s in zip(curve.n_labels, curve.score)]
                print(f"repetition {rep + 1}/{reps}, {metric}, {rule}: final "
                      f"{curve.score[-1]:.3f}", flush=True)
    os.makedirs(args.out, exist_ok=True)
    write_rows(rows, os.path.join(args.out, "kgs_active_learning.csv"))
    fig, axes = plt.subplots(1, len(tasks), figsize=(5.5 * len(tasks), 4),
                             squeeze=False)
    for ax, (metric, _, _, rules) in zip(axes[0], tasks):
        for rule in rules:
            group = curves[(metric, rule)]
            mean = np.mean([c.score for c in group], axis=0)
            ax.plot(group[0].n_labels, mean, "o-", ms=3, label=rule)
            needed = [c.labels_to_reach(args.target) for c in group]
            print(f"{metric} {rule:12s}: labels to reach {args.target}: {needed}")
        ax.set_xlabel("labelled points")
        ax.set_ylabel(f"test {metric}")
        ax.set_title(f"query by committee ({reps} repetitions)")
        ax.legend()
    print("figure:", save(fig, os.path.join(args.out, "kgs_active_learning.png")))


if __name__ == "__main__":
    main()
