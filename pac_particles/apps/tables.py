"""Writing results to disk: tables as CSV or JSON, summaries as JSON.

The command line, the scripts and the diagnostics write their numbers
through these two functions, so every results file has the same shape:

* :func:`write_rows` writes a list of dicts (one per row) as a CSV whose
  header is the union of the keys in order of appearance (a missing value is
  an empty cell), or as a JSON list when the path ends in ``.json``;
* :func:`write_json` writes any nest of dicts, lists, tuples, numpy scalars
  and arrays as plain JSON (NaN and infinities become ``null``, which every
  JSON parser reads, unlike Python's ``NaN``).

Both create the parent folders and return the path.

Example
-------
::

    from pac_particles.apps.tables import write_json, write_rows
    write_rows([{"lam": 10.0, "auc": 0.81}, {"lam": 100.0, "auc": 0.83}],
               "results/curve.csv")
    write_json({"best_lam": np.float64(100.0), "grid": np.logspace(1, 2, 3)},
               "results/summary.json")

References
----------
RFC 4180 (CSV) and RFC 8259 (JSON).
"""

import csv
import json
import os

import numpy as np

from pac_particles.core.json_values import jsonable
from pac_particles.core.checks import InputError

__all__ = ["write_rows", "write_json", "jsonable"]

_FORMATS = (".csv", ".json")


def _parent_folder(path):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)


def write_json(obj, path):
    """Write ``obj`` as indented plain JSON (see :func:`jsonable`)."""
    _parent_folder(path)
    with open(path, "w") as fh:
        json.dump(jsonable(obj), fh, indent=2)
        fh.write("\n")
    return path


def write_rows(rows, path):
    """Write ``rows`` (a list of dicts) as a CSV or, for a ``.json`` path, a
    JSON list. The CSV header is the union of the keys in order of
    appearance; numpy scalars are written as plain numbers."""
    rows = list(rows)
    if not rows:
        # a header-less empty file would be unreadable; this is a caller bug
        raise ValueError(f"no rows to write to {path}")
    extension = os.path.splitext(os.fspath(path))[1].lower()
    if extension not in _FORMATS:
        raise InputError(f"{path}: a table is written as {' or '.join(_FORMATS)}"
                         f", not {extension or 'a file without extension'!r}")
    if extension == ".json":
        return write_json(rows, path)
    fields = list(dict.fromkeys(key for row in rows for key in row))
    _parent_folder(path)
    with open(path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields)
        writer.writeheader()
        writer.writerows({key: value.item() if isinstance(value, np.generic)
                          else value for key, value in row.items()}
                         for row in rows)
    return path
