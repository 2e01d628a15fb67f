"""GP scores against linear scores and logistic regression on one split.

Full waste-free runs of GPAUCModel (squared-exponential kernel, lengthscale
sqrt(d) on standardised inputs) and AUCGibbsModel with lam = n_train, on
Pima (576 training points) and Sonar; prints wall time, tempering steps and
test AUCs, and writes a CSV.

    python scripts/bench_gp.py [--datasets pima sonar] [--n-particles 200]

References
----------
[RACL14] Ridgway, Alquier, Chopin & Liang (2014), PAC-Bayesian AUC
classification and scoring (GP scores: their section 5).
"""
import argparse

from sklearn.model_selection import train_test_split

from pac_particles.problem.auc import auc_risk
from pac_particles.sklearn.baselines import logistic_scores
from pac_particles.problem.datasets import load_dataset
from pac_particles.smc.models import AUCGibbsModel, GPAUCModel
from pac_particles.smc.posterior import run_smc
from pac_particles.apps.tables import write_rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", nargs="*", default=["pima", "sonar"])
    parser.add_argument("--n-particles", type=int, default=200)
    parser.add_argument("--len-chain", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="results/bench_gp.csv")
    args = parser.parse_args()
    rows = []
    print(f"{'dataset':8s} {'model':10s} {'n_train':>7s} {'steps':>5s} "
          f"{'wall s':>7s} {'test AUC':>8s}")
    for name in args.datasets:
        X, y, _ = load_dataset(name)
        X_tr, X_te, y_tr, y_te = train_test_split(
            X, y, test_size=0.25, stratify=y, random_state=args.seed)
        lam = float(len(y_tr))
        for label, model in (("GP", GPAUCModel(X_tr, y_tr, lam)),
                             ("linear", AUCGibbsModel(X_tr, y_tr, lam))):
            post = run_smc(model, n_particles=args.n_particles,
                           len_chain=args.len_chain, seed=args.seed)
            auc = 1 - auc_risk(post.score(X_te), y_te)
            rows.append({"dataset": name, "model": label, "n_train": len(y_tr),
                         "tempering_steps": post.n_steps,
                         "wall_seconds": post.wall_time, "test_auc": auc})
            print(f"{name:8s} {label:10s} {len(y_tr):7d} {post.n_steps:5d} "
                  f"{post.wall_time:7.1f} {auc:8.4f}", flush=True)
        auc = 1 - auc_risk(logistic_scores(X_tr, y_tr, X_te, random_state=args.seed),
                           y_te)
        rows.append({"dataset": name, "model": "logistic", "n_train": len(y_tr),
                     "tempering_steps": 0, "wall_seconds": float("nan"),
                     "test_auc": auc})
        print(f"{name:8s} {'logistic':10s} {len(y_tr):7d} {'':5s} {'':7s} {auc:8.4f}")
    print(write_rows(rows, args.out))


if __name__ == "__main__":
    main()
