"""``pac-particles predict MODEL DATA.csv``: score the rows of a CSV with a
model file saved by ``fit --save-model``, and its printed line.

Light on purpose: no estimator, scikit-learn or plotting library is
imported to score rows; the model file is numbers (JSON), loaded without
running code (:mod:`pac_particles.sklearn.model_file`).
"""

import csv
import os
import sys
import warnings

import numpy as np

from pac_particles.apps.cli.inputs import _check_out
from pac_particles.apps.tables import write_rows
from pac_particles.core.checks import InputError
from pac_particles.problem.auc import auc_risk
from pac_particles.problem.datasets import encode_labels, load_csv_features
from pac_particles.sklearn.model_file import load_model

__all__ = ["predict_csv", "print_predict"]


def predict_csv(model, path, out="results/predict/predictions.csv", sep=None,
                header=None):
    """The ``predict`` sub-command: score the rows of the CSV ``path`` with
    the model file ``model`` (:func:`pac_particles.sklearn.model_file.load_model`,
    which runs no code from the file); writes ``row, score, label,
    probability_<positive label>`` per row to ``out`` (``"-"``: stdout)
    and returns a summary. ``sep`` and ``header`` default to how the
    training CSV was read. With the labels in the CSV (the training
    target's column), the summary has their AUC and accuracy."""
    scorer = load_model(model)
    read = scorer.fit.get("csv") or {}
    sep = sep if sep is not None else read.get("sep", ",")
    header = header if header is not None else read.get("header", True)
    if out != "-":
        _check_out(os.path.dirname(os.path.abspath(out)))
    X, frame = load_csv_features(path, scorer.feature_names, delimiter=sep,
                                 header=header)
    scores = scorer.decision_function(X)
    labels = scorer.predict(X)
    positive = scorer.classes_[1]
    probability = scorer.predict_proba(X)[:, 1]
    column = f"probability_{positive}"
    rows = [{"row": k + 1, "score": float(s), "label": label,
             column: float(p)}
            for k, (s, label, p) in enumerate(zip(scores, labels,
                                                  probability))]
    summary = {"model": os.path.abspath(model), "data": os.path.abspath(path),
               "n_rows": len(rows),
               "n_predicted_positive": int(np.sum(scores > 0)),
               "classes": scorer.classes_.tolist(), "out": out}
    if out == "-":
        writer = csv.DictWriter(sys.stdout, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    else:
        write_rows(rows, out)
    target = scorer.fit.get("target")
    if target in frame.columns and target not in scorer.feature_names:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                codes, _ = encode_labels(frame[target].to_numpy(),
                                         positive_label=positive)
        except InputError as err:
            warnings.warn(f"{path}: column {target!r} does not hold the "
                          f"model's labels {scorer.classes_.tolist()} ({err}): "
                          "no AUC reported")
        else:
            summary["labels_column"] = target
            summary["auc"] = 1.0 - float(auc_risk(scores, codes))
            summary["accuracy"] = float(np.mean((scores > 0) == (codes == 1)))
    return summary


def print_predict(s, stream):
    """Print what :func:`predict_csv` did (summary ``s``) to ``stream``."""
    positive = s["classes"][1]
    print(f"predict: scored {s['n_rows']} rows of {os.path.basename(s['data'])}"
          f" with {os.path.basename(s['model'])}: "
          f"{s['n_predicted_positive']} predicted {positive!r}, "
          f"{s['n_rows'] - s['n_predicted_positive']} "
          f"{s['classes'][0]!r}" + ("" if s["out"] == "-"
                                    else f"; wrote {s['out']}"),
          file=stream)
    if "auc" in s:
        print(f"  labels in column {s['labels_column']!r}: AUC "
              f"{s['auc']:.4f}, accuracy {s['accuracy']:.4f}", file=stream)
