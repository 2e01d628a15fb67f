"""Benchmark table: test AUC of PAC-Bayesian AUC scoring against logistic
regression and RankBoost on the same repeated stratified splits.

    python scripts/benchmark_table.py --data-dir ../shared/datasets --repeats 5

Built-in datasets always run; the CSVs of --data-dir (German credit, SPECTF,
SPECT, glass; label in the last column) are added when the folder exists.
Writes a CSV next to the printed table.
"""
import argparse
import os

from pac_particles.baselines import LogisticBaseline, RankBoost, compare_scorers
from pac_particles.data import load_csv, load_dataset
from pac_particles.estimator import PACBayesAUC

CSV_FILES = ("german_credit.csv", "spectf.csv", "spect.csv", "glass.csv")


def scorers(n_particles, len_chain):
    return {
        "PAC-Bayes SMC (lam by CV)": lambda seed: PACBayesAUC(
            lam="cv", n_folds=3, n_particles=n_particles, len_chain=len_chain,
            random_state=seed),
        "logistic regression": lambda seed: LogisticBaseline(random_state=seed),
        "RankBoost (200 rounds)": lambda seed: RankBoost(n_rounds=200,
                                                         max_thresholds=64),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-dir", default=os.path.join(
        os.path.dirname(__file__), "..", "..", "shared", "datasets"))
    parser.add_argument("--datasets", nargs="*", default=["pima", "sonar", "liver",
                                                          "breast_cancer"])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--test-size", type=float, default=0.3)
    parser.add_argument("--n-particles", type=int, default=100)
    parser.add_argument("--len-chain", type=int, default=10)
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--out", default="results/benchmark_table.csv")
    args = parser.parse_args()
    data = {name: load_dataset(name)[:2] for name in args.datasets}
    if os.path.isdir(args.data_dir):
        for f in CSV_FILES:
            path = os.path.join(args.data_dir, f)
            if os.path.exists(path):
                data[f[:-4]] = load_csv(path)[:2]
    methods = scorers(args.n_particles, args.len_chain)
    rows = []
    print(f"| dataset | n | d | " + " | ".join(methods) + " |")
    print("|---|---|---|" + "---|" * len(methods))
    for name, (X, y) in data.items():
        table = compare_scorers(X, y, methods, n_repeats=args.repeats,
                                test_size=args.test_size, n_jobs=args.n_jobs)
        cells = [f"{t['mean']:.3f} ± {t['sd']:.3f} ({t['seconds']:.1f}s)"
                 for t in table.values()]
        print(f"| {name} | {X.shape[0]} | {X.shape[1]} | " + " | ".join(cells) + " |",
              flush=True)
        rows += [(name, m, t["mean"], t["sd"], t["seconds"]) for m, t in table.items()]
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as fh:
        fh.write("dataset,method,mean_auc,sd_auc,fit_seconds\n")
        for r in rows:
            fh.write(f"{r[0]},{r[1]},{r[2]:.5f},{r[3]:.5f},{r[4]:.3f}\n")
    print(f"written {args.out}")


if __name__ == "__main__":
    main()
