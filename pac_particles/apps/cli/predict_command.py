"""``pac-particles predict MODEL DATA.csv``: score the rows of a CSV with a
model file saved by ``fit --save-model`` or ``classify --save-model``,
carrying identifier columns through (``--id``), and its printed lines.

No estimator is fitted or unpickled to score rows: the model file is
numbers (JSON), loaded without running code
(:mod:`pac_particles.sklearn.model_file`), and no plotting library is
imported.
"""

import csv
import os
import sys
import warnings

import numpy as np
import pandas as pd

from pac_particles.apps.cli.inputs import _check_out
from pac_particles.apps.tables import write_rows
from pac_particles.core.checks import InputError
from pac_particles.problem.auc import auc_risk
from pac_particles.problem.datasets import encode_labels, load_csv_features
from pac_particles.sklearn.model_file import load_model

__all__ = ["predict_csv", "print_predict"]


def predict_csv(model, path, out="results/predict/predictions.csv", sep=None,
                header=None, ids=None):
    """The ``predict`` sub-command: score the rows of the CSV ``path`` with
    the model file ``model`` (:func:`pac_particles.sklearn.model_file.load_model`,
    which runs no code from the file); writes per row the ``ids`` columns
    (as read, e.g. a customer key to join the scores back on), ``row``,
    ``score`` (the deployed rule's; a format-1 classifier file has none),
    ``label`` and ``probability_<positive label>`` to ``out`` (``"-"``:
    stdout) and returns a summary. ``sep`` and ``header`` default to how
    the training CSV was read. With the labels in the CSV (the training
    target's column), the summary has their AUC and accuracy."""
    scorer = load_model(model)
    read = scorer.fit.get("csv") or {}
    sep = sep if sep is not None else read.get("sep", ",")
    header = header if header is not None else read.get("header", True)
    if out != "-":
        _check_out(os.path.dirname(os.path.abspath(out)))
    X, frame = load_csv_features(path, scorer.feature_names, delimiter=sep,
                                 header=header)
    carried = _id_columns(path, frame, ids or [], sep, header)
    positive = scorer.classes_[1]
    probability = scorer.predict_proba(X)[:, 1]
    labels = scorer.predict(X)
    # the deployed rule's score (a format-1 classifier file of the
    # posterior alone has none: its ranking is its probability)
    scores = (None if scorer.coef_ is None
              else scorer.decision_function(X))
    column = f"probability_{positive}"
    rows = []
    for k, (label, p) in enumerate(zip(labels, probability)):
        row = {name: values[k] for name, values in carried.items()}
        row["row"] = k + 1
        if scores is not None:
            row["score"] = float(scores[k])
        row.update({"label": label, column: float(p)})
        rows.append(row)
    summary = {"model": os.path.abspath(model), "data": os.path.abspath(path),
               "estimator": scorer.fit.get("estimator"),
               "method": scorer.fit.get("method"), "lam": scorer.fit.get("lam"),
               # which score the file deploys (older files: all_rows)
               "deploy": scorer.fit.get("deploy", "all_rows"),
               "n_rows": len(rows), "ids": list(carried),
               "n_predicted_positive": int(np.sum(labels == positive)),
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
            summary["auc"] = 1.0 - float(auc_risk(
                probability if scores is None else scores, codes))
            summary["accuracy"] = float(np.mean((labels == positive)
                                                == (codes == 1)))
    return summary


def _id_columns(path, frame, ids, sep, header):
    """The ``ids`` columns of the CSV, each as its text read verbatim
    (``"00123"`` stays ``"00123"``), keyed by name; InputError naming a
    column the file lacks."""
    names = []
    for name in ids:
        names += [part.strip() for part in str(name).split(",")
                  if part.strip()]
    missing = [name for name in names if name not in frame.columns]
    if missing:
        shown = ", ".join(repr(m) for m in missing)
        raise InputError(f"{path} has no column {shown} for --id; its "
                         f"columns are {list(frame.columns)[:20]}")
    if not names:
        return {}
    text = pd.read_csv(path, sep=sep, header=0 if header else None,
                       names=None if header else list(frame.columns),
                       usecols=names, dtype=str, keep_default_na=False)
    return {name: text[name].tolist() for name in dict.fromkeys(names)}


def print_predict(s, stream):
    """Print what :func:`predict_csv` did (summary ``s``) to ``stream``:
    the same headline style as ``fit`` and ``classify``."""
    positive = s["classes"][1]
    print(f"predict {os.path.basename(s['data'])}: {s['n_rows']} rows "
          f"scored with {os.path.basename(s['model'])} ({s['estimator']}, "
          f"method {s['method']}, lam {s['lam']:.4g}, deployed score "
          f"{s['deploy']})", file=stream)
    print(f"  {s['n_predicted_positive']} predicted {positive!r}, "
          f"{s['n_rows'] - s['n_predicted_positive']} {s['classes'][0]!r}",
          file=stream)
    if "auc" in s:
        print(f"  labels in column {s['labels_column']!r}: AUC "
              f"{s['auc']:.4f}, accuracy {s['accuracy']:.4f}", file=stream)
    if s["out"] != "-":
        carried = (f" (with {', '.join(s['ids'])} carried through)"
                   if s["ids"] else "")
        print(f"  file: {s['out']}{carried}", file=stream)
