"""Certificates table: for every built-in and shared data set and synthetic
logistic data, the default ``PACBayesAUC`` certificate (``certificate_``),
the deployed score's (``deployed_certificate_``) in both modes (``deploy=
"all_rows"``: the derandomised certificate of the posterior's point
estimate; ``deploy="certified"``: the part-A score's test-set bound), and
the test-set bounds a user gets without the library at 70/30 and 50/50 on
the same rows
(:func:`pac_particles.bounds.certification.test_set_comparator`), on the
AUC scale (certified AUC = 1 - bound), delta 0.05.

    nice python scripts/certificates_table.py --data-dir ../shared/datasets \
        --budget 1800 --out results/certificates_table

Writes ``certificates.md`` under ``--out``; data sets are run in the order
given until ``--budget`` seconds have passed (the rest are listed as not
run). With ``--deployed-aucs``, instead: the test AUC of the two deployable
scores on held-out rows (``lab.study.deployed_scores``), ``deployed.md``.
"""
import argparse
import dataclasses
import os
import sys
import time

import numpy as np

from pac_particles.bounds import certify
from pac_particles.bounds.certification import (certificate_split,
                                                test_set_comparator)
from pac_particles.problem.datasets import load_csv, load_dataset
from pac_particles.problem.problem import GibbsProblem
from pac_particles.sklearn.binary import certificate_spec
from pac_particles.sklearn.estimator import PACBayesAUC
# lab/ sits beside the package (outside the wheel): found from a checkout
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from lab.study.certificate_coverage import logistic_population  # noqa: E402
from lab.study.deployed_scores import deployed_score_comparison  # noqa: E402

BUILT_IN = ("pima", "sonar", "liver", "breast_cancer", "eeg")
SHARED = ("german_credit", "german_credit_numeric", "spect", "spectf",
          "glass", "dna", "colon", "students_dropout")
SYNTHETIC = {"logistic_1e4": 10_000, "logistic_1e5": 100_000}


def load(name, data_dir):
    if name in SYNTHETIC:
        return logistic_population(SYNTHETIC[name], seed=0)
    if name in BUILT_IN:
        return load_dataset(name)[:2]
    return load_csv(os.path.join(data_dir, name + ".csv"))[:2]


def row(name, X, y, seed, splits):
    """One fit (``random_state=seed``); its certificates and the
    comparators' bounds averaged over ``splits`` splits (seeds ``seed`` to
    ``seed + splits - 1``: one split's test-set bound varies by several
    hundredths at m ~ 100)."""
    y = np.asarray(y) == np.max(y)
    start = time.perf_counter()
    est = PACBayesAUC(random_state=seed).fit(X, y)
    seconds = time.perf_counter() - start
    problem = GibbsProblem.ranking(X, y, est.lam_, est.standardize)
    seeds = range(seed, seed + splits)
    certs = [certify(est.posterior_, problem, dataclasses.replace(
        certificate_spec(est), seed=s)) for s in seeds]
    deployed = [None if est.posterior_.is_gp else certify(
        est.posterior_, problem, dataclasses.replace(
            certificate_spec(est, "deployed"), seed=s)) for s in seeds]
    part_a = [certify(est.posterior_, problem, dataclasses.replace(
        certificate_spec(est, "part_a"), seed=s)) for s in seeds]
    routes = [min(c.alternatives, key=lambda a: a[1])[0] for c in certs]
    out = {"dataset": name, "n": len(y), "d": X.shape[1],
           "m": int(min(y.sum(), (~y).sum())), "method": est.method_,
           "certified": float(np.mean([1 - c.bound for c in certs])),
           "route": max(set(routes), key=routes.count),
           "deployed": None if deployed[0] is None else float(
               np.mean([1 - c.bound for c in deployed])),
           "deployed_certified": float(np.mean([1 - c.bound
                                                for c in part_a])),
           "test_70_30": float(np.mean([1 - test_set_comparator(X, y, 0.7, s)
                                        for s in seeds])),
           "test_50_50": float(np.mean([1 - test_set_comparator(X, y, 0.5, s)
                                        for s in seeds])),
           "same_split": float(np.mean([1 - test_set_comparator(
               X, y, in_a=certificate_split(y, c)) for c in (
                   dataclasses.replace(certificate_spec(est), seed=s)
                   for s in seeds)])),
           "seconds": seconds}
    out["margin"] = out["certified"] - out["test_50_50"]
    out["margin_deployed_certified"] = (out["deployed_certified"]
                                        - out["test_50_50"])
    out["margin_same_split"] = out["certified"] - out["same_split"]
    return out


COLUMNS = ("dataset", "n", "d", "m", "method", "certified", "route",
           "deployed", "deployed_certified", "test_70_30", "test_50_50",
           "margin", "margin_deployed_certified", "same_split",
           "margin_same_split", "seconds")
DEPLOYED_COLUMNS = ("dataset", "n", "d", "method", "splits", "all_rows_auc",
                    "part_a_auc", "gain", "all_rows_certified",
                    "part_a_certified")


def deployed_row(name, X, y, seed, splits):
    """Mean over ``splits`` held-out splits of the two deployable scores'
    test AUCs and certificates (``lab.study.deployed_scores``)."""
    found = deployed_score_comparison(X, y, seeds=range(seed, seed + splits))
    mean = {key: (None if found[0][key] is None else
                  float(np.mean([f[key] for f in found])))
            for key in ("all_rows_auc", "part_a_auc", "all_rows_certified",
                        "part_a_certified")}
    return {"dataset": name, "n": len(y), "d": X.shape[1],
            "method": found[0]["method"], "splits": splits, **mean,
            "gain": mean["all_rows_auc"] - mean["part_a_auc"]}


def markdown(rows, skipped, columns=COLUMNS):
    cell = (lambda v: f"{v:.3f}" if isinstance(v, float) else
            ("-" if v is None else str(v)))
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(cell(r[c]) for c in columns) + " |"
              for r in rows]
    if skipped:
        lines.append(f"\nNot run within the time budget: {', '.join(skipped)}.")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=os.path.normpath(os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared",
        "datasets")))
    parser.add_argument("--datasets", nargs="*",
                        default=list(BUILT_IN + SHARED + tuple(SYNTHETIC)))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--splits", type=int, default=5,
                        help="splits averaged per data set (the fit is one)")
    parser.add_argument("--budget", type=float, default=3600.0)
    parser.add_argument("--out", default="results/certificates_table")
    parser.add_argument("--deployed-aucs", action="store_true",
                        help="the test AUCs of the two deployable scores "
                             "on held-out splits instead")
    args = parser.parse_args(argv)
    make, columns, table = ((deployed_row, DEPLOYED_COLUMNS, "deployed.md")
                            if args.deployed_aucs else
                            (row, COLUMNS, "certificates.md"))
    os.makedirs(args.out, exist_ok=True)
    start, rows, skipped = time.perf_counter(), [], []
    for name in args.datasets:
        if time.perf_counter() - start > args.budget:
            skipped.append(name)
            continue
        X, y = load(name, args.data_dir)
        rows.append(make(name, np.asarray(X, float), y, args.seed,
                         args.splits))
        text = markdown(rows, skipped, columns)
        with open(os.path.join(args.out, table), "w") as f:
            f.write(text + "\n")
        print(text.splitlines()[-1], flush=True)
    print(markdown(rows, skipped, columns))


if __name__ == "__main__":
    main()
