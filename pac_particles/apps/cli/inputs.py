"""The checks every sub-command runs before it fits: the sampler's
options, the held-out fraction, the output folder, the CSV read for
fitting (the split itself is :mod:`~pac_particles.apps.cli.held_out`).

Bad input raises :class:`~pac_particles.core.checks.InputError` here,
before any fitting time is spent, with a message that names the cause and
the way out (the command prints it on one line, exit code 2).
"""

import os
import tempfile

from pac_particles.core.checks import (InputError, check_choice, check_count,
                                       check_fraction, check_positive)
from pac_particles.problem.data import validate_xy
from pac_particles.problem.datasets import encode_labels, load_csv


def _check_sampler(n_particles, len_chain, seed):
    """The sampler options every sub-command shares (waste-free: chains of
    at least two particles)."""
    return (check_count(n_particles, "n_particles", minimum=2),
            check_count(len_chain, "len_chain", minimum=2),
            check_count(seed, "seed", minimum=0))


def _check_test_size(test_size, allow_zero):
    test_size = check_fraction(test_size, "test_size")
    if test_size == 0 and not allow_zero:
        raise InputError("test_size must be > 0: the demo scores a held-out set")
    return test_size


def _check_fit_options(n_particles, len_chain, seed, test_size, method,
                       methods, lam):
    """The options of the commands that fit on a CSV with an optional
    held-out split (fit, classify): the sampler's, ``test_size`` (0: no
    split), ``method`` among ``methods``, ``lam`` a positive float or
    ``"cv"``."""
    n_particles, len_chain, seed = _check_sampler(n_particles, len_chain, seed)
    return (n_particles, len_chain, seed,
            _check_test_size(test_size, allow_zero=True),
            check_choice(method, "method", methods),
            lam if lam == "cv" else check_positive(lam, "lam"))


def _check_out(out, option="--out"):
    """``out`` as a folder that exists and takes files, or InputError:
    checked before the fit, so that a mistyped ``--out`` costs no fitting
    time (the writers would fail only at the end)."""
    folder = out or os.curdir
    try:
        os.makedirs(folder, exist_ok=True)
        # a file created and removed: permissions, read-only mounts and a
        # full disk show here, where os.access would not see all of them
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as err:
        # "File exists" / "Not a directory" do not say which path is the
        # file in the way: find it
        blocker = os.path.abspath(folder)
        while not os.path.exists(blocker):
            blocker = os.path.dirname(blocker)
        reason = (f"{blocker} is a file, not a folder"
                  if not os.path.isdir(blocker) else
                  f"{err.strerror or err}"
                  + (f" ({err.filename})" if err.filename not in
                     (None, folder) else ""))
        raise InputError(f"cannot write to the output folder {folder}: "
                         f"{reason}; choose a folder that can be created "
                         f"and written with {option}")
    return out


def _read_csv(path, target=None, sep=",", header=True, features=None,
              drop=None, positive_label=None, ranking=True):
    """A CSV for fitting: ``(X, codes, names, classes, target)``, the labels
    as 0/1 codes (1 positive) and ``classes = [negative, positive]`` the
    labels they stand for (:func:`pac_particles.problem.datasets.encode_labels`).
    ``ranking``: the AUC's columns (constant ones dropped, with a warning);
    classification keeps them (they act as an intercept)."""
    X, y, names, target = load_csv(path, target=target, delimiter=sep,
                                   header=header, features=features,
                                   drop=drop, return_target=True)
    try:
        codes, classes = encode_labels(y, positive_label)
    except InputError as err:
        # "the labels" means little to a CSV's user: name the column they
        # came from, and how to name another
        raise InputError(f"{path}: the labels, read from column {target!r}: "
                         f"{err}; name the label column with --target") from None
    # one clear error for constant columns, shapes; named as in the CSV
    validate_xy(X, codes, feature_names=names, drop_constant=ranking)
    return X, codes, names, classes, target

