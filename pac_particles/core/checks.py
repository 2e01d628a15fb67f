"""Validation of scalar arguments: the one place that says what a bad value is.

Every public entry point of the package checks its numbers here, so that the
same mistake gets the same message everywhere. Each helper returns the
cleaned value or raises :class:`InputError`, a ``ValueError`` subclass: the
command line turns it into one line and exit code 2, while any other
exception still shows a traceback (it is a bug, not bad input).

Example
-------
::

    from pac_particles.core.checks import check_positive, resolve_lam
    check_positive(2.0, "lam")            # 2.0
    resolve_lam(100.0, pu_prior=0.2)      # (125.0, 100.0): observed, positive-vs-negative
"""

import numbers
from typing import Any

import numpy as np

__all__ = ["ArrayLike", "InputError", "check_positive", "check_count", "check_probability",
           "check_fraction", "check_pu_prior", "resolve_lam", "check_choice",
           "check_finite_array"]

#: what the public API accepts as data: a numpy array, a pandas DataFrame or
#: Series, a Dask collection or a nested sequence (validated on entry)
ArrayLike = Any


class InputError(ValueError):
    """Bad input from a user: a value, a shape, a file, a combination of
    options. A ``ValueError``, so callers that catch ``ValueError`` keep
    working."""


def check_positive(value, name="lam", allow_zero=False):
    """``value`` as a float, or InputError unless ``0 < value < inf``
    (``0 <= value`` with ``allow_zero``)."""
    if isinstance(value, bool):
        raise InputError(f"{name} must be a positive number, got {value!r}")
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a positive number, got {value!r}")
    ok = out >= 0 if allow_zero else out > 0
    if not (np.isfinite(out) and ok):
        bound = ">= 0" if allow_zero else "> 0"
        raise InputError(f"{name} must be a finite number {bound}, got {out}")
    return out


def check_count(value, name, minimum=1):
    """``value`` as an int, or InputError unless it is an integer >= minimum."""
    if isinstance(value, bool) or not isinstance(value, (numbers.Integral,
                                                         numbers.Real)):
        raise InputError(f"{name} must be an integer >= {minimum}, got "
                         f"{value!r}")
    if not np.isfinite(value) or int(value) != value or int(value) < minimum:
        raise InputError(f"{name} must be an integer >= {minimum}, got "
                         f"{value!r}")
    return int(value)


def check_probability(value, name, closed=False):
    """``value`` as a float in the open interval (0, 1) ([0, 1] if
    ``closed``), or InputError."""
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a number in (0, 1), got {value!r}")
    ok = (0.0 <= out <= 1.0) if closed else (0.0 < out < 1.0)
    if not ok:
        interval = "[0, 1]" if closed else "(0, 1)"
        raise InputError(f"{name} must be in {interval}, got {out}")
    return out


def check_fraction(value, name):
    """``value`` as a float in [0, 1), or InputError."""
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a number in [0, 1), got {value!r}")
    if not 0.0 <= out < 1.0:
        raise InputError(f"{name} must be in [0, 1), got {out}")
    return out


def check_pu_prior(pu_prior):
    """The fraction ``pi`` of positives among unlabelled points, in [0, 1)."""
    try:
        return check_fraction(pu_prior, "pu_prior (fraction of positives among "
                                        "the unlabelled)")
    except InputError:
        raise InputError(f"pu_prior (fraction of positives among the "
                         f"unlabelled) must be a number in [0, 1), got "
                         f"{pu_prior!r}")


def resolve_lam(lam, pu_prior=None):
    """``(lam_observed, lam_pn)``: the inverse temperature on the risk of the
    labels as given, and the one on the positive-vs-negative risk.

    Without ``pu_prior`` both are ``lam``. With positive-unlabelled labels
    the Gibbs posterior at ``lam`` on the positive-vs-negative AUC risk is
    the one at ``lam / (1 - pi)`` on the observed PU risk
    (:mod:`pac_particles.problem.auc`), so every model, EP, VB and the estimator
    resolve ``lam`` here, once.
    """
    lam_pn = check_positive(lam, "lam")
    if pu_prior is None:
        return lam_pn, lam_pn
    return lam_pn / (1.0 - check_pu_prior(pu_prior)), lam_pn


def check_choice(value, name, choices):
    """``value`` if it is one of ``choices``, else InputError listing them."""
    if isinstance(value, str) and value in choices:
        return value
    raise InputError(f"{name} must be one of {tuple(choices)}, got {value!r}")


def check_finite_array(value, name, ndim=None):
    """``value`` as a float array (of ``ndim`` dimensions if given), or
    InputError if it is not numeric or holds NaN/inf."""
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a numeric array")
    if ndim is not None and arr.ndim != ndim:
        raise InputError(f"{name} must be {ndim}-D, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise InputError(f"{name} contains NaN or infinite values")
    return arr


def check_gaussian(mean, cov, d, what="mean and cov"):
    """``(mean, cov)`` of a Gaussian on ``d`` coordinates as finite float
    arrays of shapes (d,) and (d, d), or InputError naming ``what``."""
    mean = check_finite_array(mean, "mean")
    cov = check_finite_array(cov, "cov")
    if mean.shape != (d,) or cov.shape != (d, d):
        raise InputError(f"{what} must have shapes ({d},) and ({d}, {d}), "
                         f"got {mean.shape} and {cov.shape}")
    return mean, cov
