"""Empirical AUC risk: the loss behind every model of this package.

For scores ``s`` and binary labels ``y``, the empirical AUC risk is the
fraction of positive/negative pairs that are mis-ordered, ties counting 1/2::

    R_n(s) = (1/P) sum_{i: y_i=1} sum_{j: y_j=0} (1{s_i < s_j} + 0.5 * 1{s_i == s_j})
           = 1 - AUC(s, y),        P = n_pos * n_neg,

which equals ``1 - sklearn.metrics.roc_auc_score(y, s)``.

The kernel sorts the positive and the negative scores separately and
merge-counts them (:func:`merge_count`, whose loop count is returned so that
its linearity can be checked): O(n log n) per score vector instead of the
O(n_pos n_neg) double loop. Batches of score vectors (one per particle) are
sorted by numpy (its SIMD sort, faster than numba's; the rows split among
threads when :mod:`pac_particles.core.parallel` says so) and merged in numba;
only tiny batches are sorted inside numba (:func:`_risk_rows` is the one
dispatch; the figures in docs/benchmarks.md, "The AUC risk kernel"). Linear scores ``X @ theta`` are
computed with BLAS, in blocks so that memory stays bounded.

Example
-------
::

    import numpy as np
    from pac_particles.problem.auc import auc_risk, linear_auc_risk
    y = np.array([1, 0, 1, 0]); s = np.array([0.9, 0.1, 0.4, 0.4])
    auc_risk(s, y)                       # 0.125 (one tie out of four pairs)
    theta = np.random.randn(100, 3)      # 100 particles
    X = np.random.randn(4, 3)
    linear_auc_risk(theta, X[y == 1], X[y == 0])   # shape (100,)

Positive-unlabelled (PU) data
-----------------------------
When only some positives are labelled (y = 1) and the rest of the data is
unlabelled (y = 0), with a known fraction ``pi`` of positives among the
unlabelled, treating unlabelled as negatives gives the PU pair risk

    R_PU(s) = P(s(X+) < s(X_U)) + 0.5 P(tie),    X_U ~ pi P+ + (1 - pi) P-
            = pi * [P(s(X+) < s(X+')) + 0.5 P(tie)] + (1 - pi) * R_PN(s)
            = pi / 2 + (1 - pi) * R_PN(s),

because the indicator loss is symmetric: for two independent positives,
``P(s < s') + P(s > s') + P(s = s') = 1`` and the two strict events have the
same probability, so the bracket is exactly 1/2 (ties counted 1/2). Hence
``exp(-lam' R_PU) ∝ exp(-lam' (1 - pi) R_PN)``: the Gibbs posterior with
inverse temperature ``lam`` on the positive-vs-negative risk is obtained from
PU labels with ``lam' = lam / (1 - pi)`` (:func:`pu_lam`; exact in
expectation, the empirical PU risk being an unbiased estimate of the
right-hand side), and risks, AUCs and risk bounds measured on PU labels
convert back by ``R_PN = (R_PU - pi/2) / (1 - pi)``
(:func:`pu_corrected_risk`), i.e. ``AUC_PN = (AUC_PU - pi/2) / (1 - pi)``.

Two cautions. The correction assumes labelled and unlabelled positives are
ranked alike; a score *fitted* to put labelled positives above the
unlabelled points breaks that on its training data, so corrected training
AUCs are optimistic: correct AUCs measured on held-out data. And the
corrected AUC moves with ``pi``, ``d AUC_PN / d pi = (AUC_PU - 1/2) /
(1 - pi)^2``: an overestimated ``pi`` inflates it (and makes a corrected
certificate optimistic). When ``pi`` is only known to lie in an interval,
report the range (:func:`pu_corrected_auc_range`).

References
----------
du Plessis, M. C., Niu, G. and Sugiyama, M. (2014). Analysis of learning from
positive and unlabeled data. NIPS 27.

Hanley, J. A. and McNeil, B. J. (1982). The meaning and use of the area under a
receiver operating characteristic (ROC) curve. Radiology 143(1), 29-36.
"""

import os
from concurrent.futures import ThreadPoolExecutor
import warnings

import numpy as np
import numba

from pac_particles.core import parallel
from pac_particles.core.checks import InputError, check_pu_prior, resolve_lam
from pac_particles.problem.data import binary_labels

__all__ = ["auc_risk", "split_risk", "linear_auc_risk",
           "blocked_linear_risk", "merge_count", "pu_lam", "pu_corrected_risk",
           "pu_corrected_auc_range", "PUPriorRangeWarning"]

# Score entries per BLAS block in ``linear_auc_risk`` (about 32 MB of float64).
_BLOCK_ENTRIES = 4_000_000


@numba.njit(cache=True, nogil=True)
def merge_count(pos_sorted, neg_sorted):
    """Twice the number of mis-ordered pairs of two sorted score vectors.

    Returns ``(2 * (#{s_pos < s_neg} + 0.5 #{s_pos == s_neg}), steps)`` where
    ``steps`` counts loop iterations: at most ``n_pos + 2 n_neg``, i.e. the
    merge is linear (the cost of the kernel is in the two sorts).
    """
    n_pos = pos_sorted.shape[0]
    n_neg = neg_sorted.shape[0]
    below = 0  # negatives strictly below the current positive score
    at_or_below = 0  # negatives at or below it
    twice_bad = 0
    steps = 0
    for k in range(n_pos):
        v = pos_sorted[k]
        while below < n_neg and neg_sorted[below] < v:
            below += 1
            steps += 1
        if at_or_below < below:
            at_or_below = below
        while at_or_below < n_neg and neg_sorted[at_or_below] <= v:
            at_or_below += 1
            steps += 1
        # negatives above v are mis-ordered (count 2), ties count 1
        twice_bad += 2 * (n_neg - at_or_below) + (at_or_below - below)
        steps += 1
    return twice_bad, steps


@numba.njit(cache=True, nogil=True)
def _merged_risk(pos_sorted, neg_sorted):
    """The risk of one pair of sorted score vectors (:func:`merge_count`)."""
    twice_bad, _ = merge_count(pos_sorted, neg_sorted)
    return 0.5 * twice_bad / (pos_sorted.shape[0] * neg_sorted.shape[0])


@numba.njit(cache=True)
def _sort_merge_rows(scores_pos, scores_neg):
    """Risk of each row of (N, n_pos) and (N, n_neg) score arrays, sorting
    each row in numba: the path of tiny batches (see :func:`_risk_rows`)."""
    out = np.empty(scores_pos.shape[0])
    for r in range(scores_pos.shape[0]):
        out[r] = _merged_risk(np.sort(scores_pos[r]), np.sort(scores_neg[r]))
    return out


@numba.njit(cache=True, parallel=True)
def _merge_rows_parallel(pos_sorted, neg_sorted):
    """Risk of each row of (N, n_pos) and (N, n_neg) arrays of row-sorted
    scores."""
    out = np.empty(pos_sorted.shape[0])
    for r in numba.prange(pos_sorted.shape[0]):
        out[r] = _merged_risk(pos_sorted[r], neg_sorted[r])
    return out


@numba.njit(cache=True)
def _merge_rows_serial(pos_sorted, neg_sorted):
    """Same as :func:`_merge_rows_parallel` on one thread."""
    out = np.empty(pos_sorted.shape[0])
    for r in range(pos_sorted.shape[0]):
        out[r] = _merged_risk(pos_sorted[r], neg_sorted[r])
    return out


#: Score entries (rows x (n_pos + n_neg)) of a batch from which
#: :func:`_risk_rows` sorts with numpy rather than inside numba.
NUMPY_SORT_MIN_ENTRIES = 256

_EXECUTORS = {}


def _executor(threads):
    """A thread pool of ``threads`` workers, one per process (a pool does not
    survive a fork)."""
    key = (os.getpid(), threads)
    if key not in _EXECUTORS:
        _EXECUTORS[key] = ThreadPoolExecutor(threads)
    return _EXECUTORS[key]


def _sort_slice(task):
    source, target, lo, hi = task
    target[lo:hi] = source[lo:hi]
    target[lo:hi].sort(axis=1)  # numpy's sort releases the GIL


def _sorted_rows(blocks, threads):
    """Copies of the 2-D ``blocks`` with each row sorted by numpy; on
    ``threads`` threads, each block's rows split among them (one row: the
    blocks sorted side by side)."""
    if threads <= 1:
        return [np.sort(b, axis=1) for b in blocks]
    out = [np.empty_like(b) for b in blocks]
    n_rows = blocks[0].shape[0]
    cuts = np.linspace(0, n_rows, min(threads, n_rows) + 1).astype(int)
    tasks = [(b, o, lo, hi) for b, o in zip(blocks, out)
             for lo, hi in zip(cuts[:-1], cuts[1:])]
    list(_executor(threads).map(_sort_slice, tasks))
    return out


def _risk_rows(scores_pos, scores_neg):
    """Risk of each row of C-contiguous (N, n_pos) and (N, n_neg) score
    arrays: the one place that picks the kernel's path.

    Both paths sort each row and merge-count it in numba (the same
    :func:`_merged_risk`, hence the same numbers to the last bit); they
    differ in who sorts. Below :data:`NUMPY_SORT_MIN_ENTRIES` score entries
    numba sorts inside one compiled call; from there numpy sorts the whole
    block (its SIMD sort, on the threads of :func:`parallel.use_parallel`),
    then numba merges. numpy's sort wins from a few hundred entries on,
    whatever the number of particles; numba wins only on a single tiny row,
    where numpy's two calls cost more than the sort, hence the crossover.
    Plain numpy sort + ``searchsorted`` (left and right, ties 1/2) lost to
    the merge everywhere: the binary searches cost more than one linear
    pass. The figures (``scripts/bench_kernel.py --scale``): docs/benchmarks.md,
    "The AUC risk kernel".
    """
    entries = scores_pos.shape[0] * (scores_pos.shape[1] + scores_neg.shape[1])
    if entries < NUMPY_SORT_MIN_ENTRIES:
        return _sort_merge_rows(scores_pos, scores_neg)
    threads = numba.get_num_threads() if parallel.use_parallel(entries) else 1
    pos_sorted, neg_sorted = _sorted_rows((scores_pos, scores_neg), threads)
    merge = parallel.dispatch(_merge_rows_serial, _merge_rows_parallel, entries)
    return merge(pos_sorted, neg_sorted)


def split_risk(scores_pos, scores_neg):
    """AUC risk from scores already split into positives and negatives.

    Parameters
    ----------
    scores_pos : array of shape (n_pos,) or (N, n_pos)
    scores_neg : array of shape (n_neg,) or (N, n_neg)

    Returns
    -------
    float, or array of shape (N,)

    No input checks beyond shapes: this is the inner loop of the samplers.
    Use :func:`auc_risk` for user-facing calls.
    """
    sp = np.asarray(scores_pos, dtype=float)
    sn = np.asarray(scores_neg, dtype=float)
    if sp.ndim == 1:
        return float(_risk_rows(sp[None, :], sn[None, :])[0])
    return _risk_rows(np.ascontiguousarray(sp), np.ascontiguousarray(sn))


def auc_risk(scores, y):
    """Empirical AUC risk ``R_n = 1 - AUC`` with ties counted 1/2.

    Parameters
    ----------
    scores : array of shape (n,) or (N, n)
        One score vector, or N of them (e.g. one per particle).
    y : array of shape (n,)
        Binary labels (see :func:`~pac_particles.problem.data.binary_labels`).

    Returns
    -------
    float, or array of shape (N,)
        Fraction of mis-ordered positive/negative pairs. Equals
        ``1 - sklearn.metrics.roc_auc_score(y, scores)``.
    """
    pos = binary_labels(y)
    s = np.asarray(scores, dtype=float)
    if s.ndim not in (1, 2) or s.shape[-1] != pos.shape[0]:
        raise InputError(
            f"scores must have shape (n,) or (N, n) with n = len(y) = "
            f"{pos.shape[0]}, got {s.shape}")
    if not np.all(np.isfinite(s)):
        raise InputError("scores contain NaN or infinite values")
    return split_risk(s[..., pos], s[..., ~pos])


def blocked_linear_risk(theta, designs, row_risk):
    """Risks of the linear scores of a batch of particles: the one block loop
    of the package (AUC and point risks alike).

    ``theta`` (N, d) or (d,); ``designs`` a tuple of (n_k, d) matrices whose
    scores ``theta @ X_k.T`` are computed with BLAS (on one thread: the
    kernel's ``prange`` supplies the parallelism) in blocks of particles, so
    that memory stays about 32 MB whatever N and n; ``row_risk(*scores)``
    returns the risk of each row. Returns (N,) (float for 1-D ``theta``).
    """
    # a field view of a structured array is strided: copy once so BLAS applies
    theta = np.ascontiguousarray(theta, dtype=float)
    if theta.ndim == 1:
        return float(blocked_linear_risk(theta[None, :], designs,
                                         row_risk)[0])
    n = sum(X.shape[0] for X in designs)
    block = max(1, _BLOCK_ENTRIES // max(n, 1))
    out = np.empty(theta.shape[0])
    for start in range(0, theta.shape[0], block):
        th = theta[start:start + block]
        with parallel.one_blas_thread():
            scores = [th @ X.T for X in designs]
        out[start:start + block] = row_risk(*scores)
    return out


def linear_auc_risk(theta, X_pos, X_neg):
    """AUC risk of linear scores ``x . theta`` for a batch of particles.

    Parameters
    ----------
    theta : array of shape (N, d) or (d,)
    X_pos, X_neg : arrays of shape (n_pos, d) and (n_neg, d)

    Returns
    -------
    array of shape (N,) (float if ``theta`` is 1-D)

    Scores are computed with BLAS in blocks of particles
    (:func:`blocked_linear_risk`), risks with the O(n log n) numba kernel.
    """
    return blocked_linear_risk(theta, (X_pos, X_neg), _risk_rows)


def pu_lam(lam, pu_prior):
    """Inverse temperature on the PU risk that targets ``lam`` on the
    positive-vs-negative risk: ``lam / (1 - pi)`` (None: ``lam`` unchanged)."""
    return resolve_lam(lam, pu_prior)[0]


def pu_corrected_risk(risk_pu, pu_prior):
    """Positive-vs-negative risk from a PU risk: ``(R_PU - pi/2) / (1 - pi)``.

    Applies to empirical risks, expected risks and risk bounds alike (the map
    is affine and increasing). ``None``: returned unchanged.
    """
    if pu_prior is None:
        return risk_pu
    pi = check_pu_prior(pu_prior)
    return (np.asarray(risk_pu) - 0.5 * pi) / (1.0 - pi)


class PUPriorRangeWarning(UserWarning):
    """A corrected AUC left [0, 1]: the prior is incompatible with the PU AUC."""


def pu_corrected_auc_range(auc_pu, pu_prior_interval):
    """Range of the positive-vs-negative AUC when ``pi`` is only known to lie
    in an interval, clipped to [0, 1].

    ``AUC_PN = (AUC_PU - pi/2) / (1 - pi)`` is monotone in ``pi`` (increasing
    when ``AUC_PU > 1/2``), so the range is given by the interval's ends.

    A score's PU AUC lies in ``[pi/2, 1 - pi/2]`` (the unlabelled positives
    are ranked against the labelled ones at 1/2 on average): an
    ``AUC_PU > 1 - pi/2``, i.e. ``pi > 2 (1 - AUC_PU)``, maps to an
    ``AUC_PN > 1`` and says that such a ``pi`` is too large for these scores
    (an overestimated prior, or an ``AUC_PU`` measured with noise or on the
    training data). Such ends are clipped to 1 (to 0 below ``pi/2``) with a
    :class:`PUPriorRangeWarning` naming the largest compatible prior.

    Parameters
    ----------
    auc_pu : float or array, AUC of the scores on PU labels (labelled
        positives vs unlabelled), preferably on held-out data.
    pu_prior_interval : (pi_low, pi_high), ``0 <= pi_low <= pi_high < 1``.

    Returns
    -------
    (low, high) : the smallest and largest corrected AUC over the interval,
    in [0, 1].

    Example
    -------
    >>> low, high = pu_corrected_auc_range(0.70, (0.1, 0.3))
    >>> round(low, 4), round(high, 4)
    (0.7222, 0.7857)
    """
    try:
        lo, hi = (check_pu_prior(p) for p in pu_prior_interval)
    except TypeError:
        raise InputError("pu_prior_interval must be a pair (pi_low, pi_high)")
    if lo > hi:
        raise InputError(f"pu_prior_interval must have pi_low <= pi_high, got "
                         f"({lo}, {hi})")
    auc = np.asarray(auc_pu, dtype=float)
    if not np.all((auc >= 0) & (auc <= 1)):
        raise InputError(f"auc_pu must be in [0, 1], got {auc_pu!r}")
    ends = [1.0 - pu_corrected_risk(1.0 - auc, p) for p in (lo, hi)]
    low, high = np.minimum(*ends), np.maximum(*ends)
    if np.any(low < 0) or np.any(high > 1):
        compatible = 2.0 * np.minimum(auc, 1.0 - auc)
        warnings.warn(
            f"the corrected AUC left [0, 1] (range {np.min(low):.3g} to "
            f"{np.max(high):.3g}) and is clipped: a PU AUC of "
            f"{np.ravel(auc)[0]:.3g} is possible only for pi <= 2 min(AUC_PU, "
            f"1 - AUC_PU) = {np.min(compatible):.3g}, and the prior interval "
            f"reaches {hi:.3g}; the prior is overestimated or AUC_PU is noisy "
            f"(measure it on held-out data)", PUPriorRangeWarning, stacklevel=2)
        low, high = np.clip(low, 0.0, 1.0), np.clip(high, 0.0, 1.0)
    if low.ndim == 0:
        return float(low), float(high)
    return low, high
