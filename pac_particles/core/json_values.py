"""Python values as plain JSON values: the one conversion of the package's
JSON writers (the command line's summaries, :mod:`pac_particles.apps.tables`,
and the model files, :mod:`pac_particles.sklearn.model_file`)."""

import math
import os

import numpy as np

__all__ = ["jsonable"]


def jsonable(obj, other=None):
    """``obj`` with numpy types turned into plain Python ones that
    :func:`json.dumps` accepts: dicts with string keys, arrays and tuples as
    lists, numpy scalars as numbers or bools, non-finite floats as ``None``
    (strict JSON), paths as strings. ``other``: applied to any other value
    (e.g. ``str``; default: left as it is)."""
    if isinstance(obj, dict):
        return {str(key): jsonable(value, other) for key, value in obj.items()}
    if isinstance(obj, (list, tuple, np.ndarray)):
        return [jsonable(value, other) for value in obj]
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, os.PathLike):
        return os.fspath(obj)
    if other is None or obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    return other(obj)
