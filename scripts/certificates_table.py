"""Certificates table: test AUC of the point estimate, empirical and test AUC
of the randomised score, and the certified AUC of Corollary 19, of the
previous default (two-sample Hoeffding) and of the new default, per data set;
the same for the classification risk on the dissertation's data sets; then
the coverage of the certificate on simulated data, and the negative controls
that give it power: the correct kl bound against its wrong variants (m = n,
KL = 0, all pairs) where the correct one is nearly tight.

    python scripts/certificates_table.py --data-dir ../shared/datasets --out /tmp/certs

Writes ``certificates.csv``, ``certificates.md``,
``classification_certificates.csv``, ``classification_certificates.md``,
``coverage.json``, ``negative_controls.md`` and ``negative_controls.json``
under ``--out`` (default ``results/certificates_table``). The controls alone:

    python scripts/certificates_table.py --datasets --classification-datasets \
        --coverage-repetitions 0 --control-repetitions 1000

References
----------
[ARC16, Cor. 19] Alquier, Ridgway & Chopin (2016); [PRST21] Perez-Ortiz,
Rivasplata, Shawe-Taylor & Szepesvari (2021).
"""
import argparse
import os
import sys

from pac_particles.apps.cli import parent_parsers
from pac_particles.problem.datasets import load_csv, load_dataset
from pac_particles.apps.tables import write_json, write_rows
# lab/ sits beside the package (outside the wheel): found from a checkout
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from lab.study.certificates import (
    NEGATIVE_CONTROLS, certificate_row, classification_certificate_row,
    coverage, format_classification_table, format_negative_controls,
    format_table, negative_control_coverage)
from lab.study.classification_tables import load_table_dataset

BUILT_IN = ("pima", "sonar", "breast_cancer")
CSV = ("german_credit", "spectf", "dna", "colon")


def main(argv=None):
    parents = parent_parsers()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     parents=[parents["run"]])
    parser.add_argument("--data-dir", default=os.path.normpath(os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared",
        "datasets")))
    parser.add_argument("--datasets", nargs="*", default=list(BUILT_IN + CSV))
    parser.add_argument("--classification-datasets", nargs="*",
                        default=["breast_cancer", "spect", "students_dropout"])
    parser.add_argument("--coverage-repetitions", type=int, default=200)
    parser.add_argument("--coverage-method", default="smc")
    parser.add_argument("--control-repetitions", type=int, default=1000)
    parser.add_argument("--control-delta", type=float, default=0.05)
    args = parser.parse_args(argv)
    out = args.out or "results/certificates_table"
    rows = []
    for name in args.datasets:
        X, y = (load_dataset(name) if name in BUILT_IN else
                load_csv(os.path.join(args.data_dir, name + ".csv")))[:2]
        rows.append(certificate_row(X, y, name=name, seed=args.seed))
        print(format_table(rows[-1:]).splitlines()[-1], flush=True)
    if rows:
        write_rows(rows, os.path.join(out, "certificates.csv"))
        table = format_table(rows)
        with open(os.path.join(out, "certificates.md"), "w") as fh:
            fh.write(table + "\n")
        print(table)
    rows = []
    for name in args.classification_datasets:
        X, y = load_table_dataset(name, args.data_dir)
        rows.append(classification_certificate_row(X, y, name=name,
                                                   seed=args.seed))
        print(format_classification_table(rows[-1:]).splitlines()[-1],
              flush=True)
    if rows:
        write_rows(rows, os.path.join(out, "classification_certificates.csv"))
        table = format_classification_table(rows)
        with open(os.path.join(out, "classification_certificates.md"),
                  "w") as fh:
            fh.write(table + "\n")
        print(table)
    if args.coverage_repetitions:
        result = coverage(repetitions=args.coverage_repetitions, seed=args.seed,
                          estimator_kwargs=dict(method=args.coverage_method))
        summary = {k: v for k, v in result.items()
                   if k not in ("certified", "population", "chosen")}
        summary["mean_certified"] = float(result["certified"].mean())
        summary["mean_population"] = float(result["population"].mean())
        summary["chosen"] = {c: result["chosen"].count(c)
                             for c in set(result["chosen"])}
        write_json(summary, os.path.join(out, "coverage.json"))
        print(summary)
    if args.control_repetitions:
        results = {name: negative_control_coverage(
            repetitions=args.control_repetitions, delta=args.control_delta,
            seed=args.seed, **setting)
            for name, setting in NEGATIVE_CONTROLS.items()}
        # write_json creates the folder
        write_json({name: {k: v for k, v in res.items()
                           if k not in ("empirical", "kl")}
                    for name, res in results.items()},
                   os.path.join(out, "negative_controls.json"))
        table = format_negative_controls(results)
        with open(os.path.join(out, "negative_controls.md"), "w") as fh:
            fh.write(table + "\n")
        print(table)


if __name__ == "__main__":
    main()
