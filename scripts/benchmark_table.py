"""Benchmark table: test AUC of PAC-Bayesian AUC scoring (SMC, EP, GP-EP, VB)
against logistic regression and RankBoost on the same repeated stratified
75/25 splits (paper Table 1).

    python scripts/benchmark_table.py --data-dir ../shared/datasets --repeats 5

Built-in datasets always run; every CSV of --data-dir (label in the last
column) is added (DNA, Colon and students dropout among them). Training sets
larger than --max-train rows are stratified subsamples (the test set stays
whole), and such data sets get --large-repeats splits. GP-EP fits its
lengthscale by evidence, as the paper's. Where the paper has the row, the
test AUC is compared with its Table 1 and the fit time with its Table 2
(ratio; ours includes the choice of lam). Writes Markdown and CSV.

References
----------
[RACL14, Table 1] Ridgway, Alquier, Chopin & Liang (2014), PAC-Bayesian
AUC classification and scoring.
"""
import argparse
import glob
import os
import platform
import sys
import time

from sklearn.model_selection import train_test_split

from pac_particles.problem.data import binary_labels
from pac_particles.sklearn.baselines import LogisticBaseline, RankBoost
from pac_particles.problem.datasets import load_csv, load_dataset
from pac_particles.sklearn.estimator import PACBayesAUC
from pac_particles.apps.tables import write_rows
# lab/ sits beside the package (outside the wheel): found from a checkout
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from lab.study import compare_scorers
from lab.study.speed import paper_comparison


class _Subsampled:
    """Fit on at most ``max_train`` rows (stratified), score everything."""

    def __init__(self, scorer, max_train, seed):
        self.scorer, self.max_train, self.seed = scorer, max_train, seed

    def fit(self, X, y):
        if len(y) > self.max_train:
            X, _, y, _ = train_test_split(X, y, train_size=self.max_train,
                                          stratify=y, random_state=self.seed)
        self.scorer.fit(X, y)
        return self

    def decision_function(self, X):
        return self.scorer.decision_function(X)


def scorers(args):
    smc = dict(n_particles=args.n_particles, len_chain=args.len_chain)
    table = {
        "SMC-AUC": lambda seed: PACBayesAUC(method="smc", lam="cv", n_folds=3,
                                            random_state=seed, **smc),
        "EP-AUC": lambda seed: PACBayesAUC(method="ep", lam="cv", grid_size=20,
                                           random_state=seed),
        # the paper's GP-EP: squared-exponential kernel, lengthscale by evidence
        "GPEP-AUC": lambda seed: PACBayesAUC(method="ep", kernel="rbf", lam="cv",
                                             grid_size=8, random_state=seed,
                                             hyperparameters="evidence"),
        "VB-AUC": lambda seed: PACBayesAUC(method="vb", lam="cv", n_folds=3,
                                           grid_size=8, random_state=seed),
        "logistic": lambda seed: LogisticBaseline(random_state=seed),
        "RankBoost": lambda seed: RankBoost(n_rounds=200, max_thresholds=64),
    }
    chosen = {k: table[k] for k in args.methods}
    return {k: (lambda f: lambda seed: _Subsampled(f(seed), args.max_train, seed))(f)
            for k, f in chosen.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-dir", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "datasets"))
    parser.add_argument("--datasets", nargs="*", default=[
        "pima", "sonar", "liver", "breast_cancer", "eeg"])
    parser.add_argument("--csv", nargs="*", default=None,
                        help="CSV data sets of --data-dir to add, by name "
                        "(default: every CSV there)")
    parser.add_argument("--methods", nargs="*", default=[
        "SMC-AUC", "EP-AUC", "GPEP-AUC", "VB-AUC", "logistic", "RankBoost"])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--large-repeats", type=int, default=2,
                        help="splits for data sets above --max-train rows "
                        "(the machine is shared: fewer repetitions there)")
    parser.add_argument("--test-size", type=float, default=0.25)
    parser.add_argument("--max-train", type=int, default=3000)
    parser.add_argument("--n-particles", type=int, default=100)
    parser.add_argument("--len-chain", type=int, default=10)
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--out", default="results/benchmark_table")
    args = parser.parse_args()
    data = {name: load_dataset(name)[:2] for name in args.datasets}
    for path in sorted(glob.glob(os.path.join(args.data_dir, "*.csv"))):
        name = os.path.basename(path)[:-4]
        if args.csv is None or name in args.csv:
            data[name] = load_csv(path)[:2]
    methods = scorers(args)
    header = ("| dataset | n | covariates | positives | "
              + " | ".join(methods) + " |")
    lines = [header, "|---|---|---|---|" + "---|" * len(methods)]
    print(header, flush=True)
    rows = []
    os.makedirs(args.out, exist_ok=True)
    comparisons = []
    for name, (X, y) in data.items():
        start = time.perf_counter()
        repeats = args.large_repeats if len(y) > args.max_train else args.repeats
        table = compare_scorers(X, y, methods, n_repeats=repeats,
                                test_size=args.test_size, n_jobs=args.n_jobs)
        best = max(t["mean"] for t in table.values())
        cells = [("**{:.3f}**" if t["mean"] == best else "{:.3f}").format(t["mean"])
                 + f" ± {t['sd']:.3f} ({t['seconds']:.1f} s)" for t in table.values()]
        line = (f"| {name} | {X.shape[0]} | {X.shape[1]} | "
                f"{100 * binary_labels(y).mean():.0f}% | " + " | ".join(cells) + " |")
        lines.append(line)
        print(line + f"   [{time.perf_counter() - start:.0f} s, {repeats} "
              "splits]", flush=True)
        paper = paper_comparison(name, table)
        if paper:
            comparisons.append(f"- {name}: {paper}")
            print(comparisons[-1], flush=True)
        rows += [{"dataset": name, "method": m, "mean_auc": round(t["mean"], 5),
                  "sd_auc": round(t["sd"], 5), "fit_seconds": round(t["seconds"], 3)}
                 for m, t in table.items()]
        write_rows(rows, os.path.join(args.out, "benchmark_table.csv"))
    note = (f"\nTest AUC, mean ± sd over {args.repeats} stratified "
            f"{100 * (1 - args.test_size):.0f}/{100 * args.test_size:.0f} splits "
            f"(mean fit time); training sets capped at {args.max_train} rows. "
            f"Machine: {platform.machine()}, {os.cpu_count()} cores, "
            f"{time.strftime('%Y-%m-%d')}.\n")
    with open(os.path.join(args.out, "benchmark_table.md"), "w") as fh:
        fh.write("\n".join(lines) + "\n" + note + "\nAgainst Ridgway et al. "
                 "(2014), Tables 1 and 2:\n\n" + "\n".join(comparisons) + "\n")
    print(note)


if __name__ == "__main__":
    main()
