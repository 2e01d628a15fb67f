"""Threads: when a numba kernel runs in parallel, and BLAS on one thread.

Every numba kernel of the package comes in two compiled versions, a serial
one and a ``prange`` one, over the same inner function. :func:`use_parallel`
is the one rule that chooses between them: below :data:`MIN_PARALLEL_WORK`
inner-loop items (score entries, pairs, pair x particle terms; an item that
evaluates the normal cdf counts :data:`NORMAL_CDF_ITEMS`) waking numba's
thread pool costs more than the work, and when other processes hold the
cores spinning OpenMP workers made small batches many times slower (the
slice moves, which evaluate a few shrinking particles at a time).

:func:`one_blas_thread` runs the BLAS calls around the kernels on one
thread: OpenBLAS workers keep spinning after a call and then fight the numba
threads that follow (slower risk kernels, and a far slower slice loop in low
dimension); the kernels' ``prange`` supplies the parallelism. The figures:
docs/benchmarks.md, "The AUC risk kernel", threads.

Tests force either version with :func:`forced` to check that both give the
same numbers.

Example
-------
::

    from pac_particles import parallel
    with parallel.forced("parallel"):
        ...                                  # every kernel takes its prange version
    with parallel.one_blas_thread():
        scores = theta @ X.T
"""

import contextlib
import os
import sys

from threadpoolctl import ThreadpoolController

from pac_particles.core.checks import InputError

__all__ = ["MIN_PARALLEL_WORK", "NORMAL_CDF_ITEMS", "use_parallel",
           "dispatch", "forced", "one_blas_thread", "blas_threads", "threads_per_job",
           "concurrent_folds", "limited_threads"]

#: Inner-loop items below which a kernel runs on one thread.
MIN_PARALLEL_WORK = 50_000

#: What an item that evaluates the normal cdf or density (a probit pair term,
#: an EP site's tilted moments) costs in cheap items (a score entry, a
#: merge step): with it, a work of a few thousand such pairs runs on both
#: cores, where the plain count kept them serial up to 50,000 (the figures:
#: docs/benchmarks.md, "Speed and accuracy tables").
NORMAL_CDF_ITEMS = 25

_MODES = ("auto", "serial", "parallel")
_mode = "auto"
_CONTROLLER = ThreadpoolController()
#: how many modules were loaded when the controller looked for BLAS
#: libraries: one loaded later (scipy's own OpenBLAS, JAX's) would escape a
#: limit, so the controller looks again when the count has changed (a scan
#: costs milliseconds; the count, nothing)
_CONTROLLER_MODULES = len(sys.modules)


def _controller():
    """The threadpool controller, refreshed if modules were loaded since."""
    global _CONTROLLER, _CONTROLLER_MODULES
    if len(sys.modules) != _CONTROLLER_MODULES:
        _CONTROLLER = ThreadpoolController()
        _CONTROLLER_MODULES = len(sys.modules)
    return _CONTROLLER


def use_parallel(work):
    """Whether a kernel over ``work`` inner-loop items should use its
    ``prange`` version (always/never inside :func:`forced`)."""
    if _mode == "serial":
        return False
    if _mode == "parallel":
        return True
    return work >= MIN_PARALLEL_WORK


def dispatch(serial, parallel, work):
    """The serial or the parallel compiled version of a kernel, for
    ``work`` items."""
    return parallel if use_parallel(work) else serial


@contextlib.contextmanager
def forced(mode):
    """Within the block, every kernel runs its ``mode`` version
    (``"serial"``, ``"parallel"`` or ``"auto"``)."""
    global _mode
    if mode not in _MODES:
        raise InputError(f"mode must be one of {_MODES}, got {mode!r}")
    previous, _mode = _mode, mode
    try:
        yield
    finally:
        _mode = previous


#: the BLAS limit of the innermost :func:`blas_threads` block (None: none)
_blas_limit = None


def blas_threads(limit):
    """Context manager limiting BLAS to at most ``limit`` threads (None: no
    limit). Within a block that already holds BLAS to ``limit`` threads or
    fewer it does nothing: a threadpoolctl limit costs tens of
    microseconds, and the slice moves asked for one on every shrink of
    their brackets, inside runs already held to one thread (a noticeable
    share of a fold's time)."""
    if limit is None or (_blas_limit is not None
                         and _blas_limit <= int(limit)):
        return contextlib.nullcontext()
    return _held_blas(int(limit))


@contextlib.contextmanager
def _held_blas(limit):
    global _blas_limit
    outer = _blas_limit
    with _controller().limit(limits=limit, user_api="blas"):
        _blas_limit = limit
        try:
            yield
        finally:
            _blas_limit = outer


def one_blas_thread():
    """Context manager running BLAS on one thread (see module docstring)."""
    return blas_threads(1)


def threads_per_job(n_jobs, numba_threads=None):
    """Threads for each of ``n_jobs`` concurrent runs: ``numba_threads`` if
    given, else the cores shared among the jobs (at least 1)."""
    if numba_threads:
        return int(numba_threads)
    return max(1, (os.cpu_count() or 1) // max(1, int(n_jobs)))


def concurrent_folds(n_folds, n_jobs=None):
    """``(n_jobs, threads)`` of folds run concurrently through joblib:
    ``n_jobs`` if given, else one job per core up to ``n_folds``; and the
    numba and BLAS threads of each job (:func:`threads_per_job`; None, i.e.
    unchanged, for a single job)."""
    if n_jobs is None:
        n_jobs = max(1, min(int(n_folds), os.cpu_count() or 1))
    return n_jobs, (threads_per_job(n_jobs) if n_jobs != 1 else None)


@contextlib.contextmanager
def limited_threads(limit):
    """numba and BLAS on at most ``limit`` threads within the block (None:
    unchanged). The previous numba count is restored, since a run may
    execute in the caller's process."""
    import numba
    before = numba.get_num_threads()
    if limit:
        numba.set_num_threads(min(int(limit), numba.config.NUMBA_NUM_THREADS))
    try:
        with blas_threads(limit or None):
            yield
    finally:
        numba.set_num_threads(before)
