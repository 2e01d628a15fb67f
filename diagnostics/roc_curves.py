"""ROC curves of PAC-Bayesian AUC scoring against the baselines on one split
(paper figure 2). Writes roc_curves.png and roc_curves.csv (test AUCs).

    python diagnostics/roc_curves.py --dataset pima [--quick]
"""
import argparse
import os

from sklearn.model_selection import train_test_split

from pac_particles.problem.auc import auc_risk
from pac_particles.sklearn.baselines import LogisticBaseline, RankBoost
from pac_particles.problem.datasets import DATASETS, load_csv, load_dataset
from pac_particles.sklearn.estimator import PACBayesAUC
from pac_particles.apps.plots import plot_roc, save


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dataset", default="pima", choices=sorted(DATASETS))
    parser.add_argument("--csv", help="a CSV file instead (label in the last column)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="small run (smoke test)")
    parser.add_argument("--out", default="results/diagnostics")
    args = parser.parse_args()
    X, y, _ = load_csv(args.csv) if args.csv else load_dataset(args.dataset)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.3, stratify=y,
                                              random_state=args.seed)
    size = dict(n_particles=30, len_chain=3) if args.quick else {}
    scorers = {
        "PAC-Bayes SMC (lam = n)": PACBayesAUC(lam=float(len(y_tr)),
                                               random_state=args.seed, **size),
        "logistic regression": LogisticBaseline(random_state=args.seed),
        "RankBoost": RankBoost(n_rounds=50 if args.quick else 200),
    }
    scores = {name: s.fit(X_tr, y_tr).decision_function(X_te)
              for name, s in scorers.items()}
    os.makedirs(args.out, exist_ok=True)
    name = os.path.basename(args.csv)[:-4] if args.csv else args.dataset
    png = save(plot_roc(y_te, scores, title=f"{name}: test ROC").figure,
               os.path.join(args.out, "roc_curves.png"))
    with open(os.path.join(args.out, "roc_curves.csv"), "w") as fh:
        fh.write("method,test_auc\n")
        for method, s in scores.items():
            auc = 1 - auc_risk(s, y_te)
            fh.write(f"{method},{auc:.5f}\n")
            print(f"{method:28s} test AUC {auc:.4f}")
    print(f"figure: {png}")


if __name__ == "__main__":
    main()
