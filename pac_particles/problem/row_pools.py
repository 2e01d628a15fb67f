"""Where the stochastic optimiser's pairs come from: rows in memory, or pools
of rows fetched from a cluster.

The stochastic VB of the AUC posterior (:mod:`pac_particles.approx.vb`)
estimates ``E_rho[R_n]`` and its gradient at every step from ``B`` fresh
positive/negative pairs, each uniform over the ``n_pos n_neg`` pairs: an
unbiased incomplete U-statistic ([CCB16]), drawn afresh so that the iterate
average targets the optimum of the complete U-statistic. Two sources:

* :class:`InMemoryRows`: the pairs are drawn directly from the two class
  arrays (``B`` row indices of each class, uniform with replacement); a
  class of at least ``B`` rows is read in windows instead (below).
* :class:`RowPools`: for rows that are expensive to reach one at a time (a
  Dask array on a cluster, :class:`pac_particles.problem.dask_data.DaskRows`),
  rows are fetched in rounds. A round fetches ``reuse x k`` rows of each
  class, i.i.d. uniform over the class, in random order, and step ``t`` of
  the round draws its ``B`` pairs within its own ``k`` rows of each class,
  never another step's. The rows of a step are then independent of the
  iterate they are evaluated at (which depends only on earlier steps' rows),
  so each step's gradient is unbiased given the iterate, as with pairs drawn
  from all rows: pairs within blocks formed at random ([CCB16], Sec. 3).
  (Re-using a pool for several steps would not be: the iterate adapts to
  the pool, and it was measured to pull a fit off the optimum.) With
  ``k = B`` the variance is that of ``B`` independent pairs: each pair's
  rows are i.i.d. uniform, and a row is shared by about one pair.

The blocks are random whatever the order of the data: a round's rows are
drawn by row index, uniformly, never as runs of consecutive rows, and
shuffled after the fetch (a source may return them grouped by chunk), so
data that arrive sorted (by time, by label, by a feature) give the same
pairs in law as shuffled data.

Windows. Rows drawn at random indices are read at random addresses: once a
class outgrows the caches every row costs a trip to memory
(docs/benchmarks.md, "By size: the default fit on synthetic logistic
data", measures it). A class of at least ``B`` rows is therefore copied once, in a
fixed pseudo-random order (:func:`shuffled_rows`), and a step reads ``B``
consecutive rows of that copy from a uniform random start, wrapping around
its end (a window), pairing the ``b``-th row of the positives' window with
the ``b``-th of the negatives' (or with the ``b``-th of ``B`` uniform
indices into a class too small for windows). Every row lies in exactly
``B`` of the ``n`` windows, so the ``b``-th row of a window whose start is
uniform is uniform over the class whatever the order of the copy, and the
two classes' starts are independent: each pair is uniform over all pairs,
and a step's starts are fresh, independent of the iterate (unbiased as
above). The shuffled order only keeps a window's rows as varied as a
random sample when the data arrive sorted; a row appears at most once in a
step's pairs, as in ``B`` pairs drawn among ``B`` rows. A window that
wraps is read through indices (its rows modulo ``n``, in the same order):
the same pairs, and no copy of the window or rows repeated past the end.
Rows already stored in that order (a held-out part gathered in it,
:meth:`pac_particles.problem.data.AUCData.part`) are their own copy.

[CCB16] Clemencon, S., Colin, I. and Bellet, A. (2016). Scaling-up empirical
risk minimization: optimization of incomplete U-statistics. JMLR 17(76),
1-36.
"""

import numpy as np

from pac_particles.core.checks import check_count

__all__ = ["InMemoryRows", "RowPools", "POOL_REUSE", "shuffled_rows",
           "window_order", "window_positions", "WINDOW_ORDER_ROWS",
           "SHUFFLE_SEED", "pairs_by_positive"]

#: Steps per round of :class:`RowPools`: one fetch from the cluster serves
#: this many steps (each with its own rows).
POOL_REUSE = 20


#: Seed of the fixed order of :func:`shuffled_rows`: the windows' pairs are
#: uniform whatever the order (module docstring), so it is no seed of a fit
SHUFFLE_SEED = 20161130


def window_order(n: int, seed: int = SHUFFLE_SEED) -> np.ndarray:
    """The fixed pseudo-random order of ``n`` rows that the windows of
    :class:`InMemoryRows` read (a permutation of ``range(n)``, the same
    for the same ``n`` and ``seed``)."""
    return np.random.default_rng(seed).permutation(n)


#: Rows from which the validated data of a ranking problem store each class
#: in the windows' order (:func:`window_positions`), so that a fit by
#: sampled pairs reads them with no shuffled copy: twice the default batch
#: of :mod:`pac_particles.approx.vb` (10,000 pairs), the fewest rows at
#: which a class can be read in windows. Below it the input order is kept
#: (no class is read in windows, and a copy costs little).
WINDOW_ORDER_ROWS = 20_000


def window_positions(positives: np.ndarray) -> np.ndarray:
    """Where each row goes when each class is stored in the windows' order,
    positives first: an (n,) permutation ``positions`` such that row ``i``
    of the input is row ``positions[i]`` of the stored rows, and the
    stored positives are ``X[positives][window_order(n_pos)]`` (what
    :func:`shuffled_rows` makes of the class in input order; the
    negatives likewise, after them)."""
    positives = np.asarray(positives, dtype=bool)
    at_pos, at_neg = np.flatnonzero(positives), np.flatnonzero(~positives)
    positions = np.empty(positives.size, dtype=np.intp)
    positions[at_pos[window_order(at_pos.size)]] = np.arange(at_pos.size)
    positions[at_neg[window_order(at_neg.size)]] = np.arange(
        at_pos.size, positives.size)
    return positions


def shuffled_rows(X: np.ndarray, wrap: int = 0,
                  seed: int = SHUFFLE_SEED) -> np.ndarray:
    """A C-contiguous copy of the rows of ``X`` in the windows' fixed
    order (:func:`window_order`), followed by its first ``wrap`` rows
    again (at most ``len(X)``); a window that wraps around the end needs
    none (:class:`InMemoryRows` reads it through indices)."""
    n = X.shape[0]
    order = window_order(n, seed)
    if wrap:
        order = np.concatenate([order, order[:min(int(wrap), n)]])
    # np.take gathers rows faster than fancy indexing
    return np.ascontiguousarray(np.take(X, order, axis=0))


def pairs_by_positive(rng: np.random.Generator, n_pos: int, n_neg: int,
                      n_pairs: int) -> tuple:
    """``(i, j)``: ``n_pairs`` positive/negative pairs ``(i[b], j[b])``
    whose multiset has the law of ``n_pairs`` pairs drawn uniformly with
    replacement, ``i`` in increasing order. The ``i`` and the ``j`` are
    drawn i.i.d. uniform, then the ``i`` sorted (by their counts, O(n_pairs
    + n_pos)): the ``j`` are i.i.d. and independent of the order that sorts
    the ``i``, so pairing them with the sorted ``i`` leaves the law of the
    multiset of pairs as it was, and a mean over the pairs (an incomplete
    U-statistic at a fixed score, its Chernoff bound) is that of
    independent uniform pairs. A kernel then reads the positives' rows in
    address order (docs/benchmarks.md, "By size: the default fit on
    synthetic logistic data")."""
    i = rng.integers(0, n_pos, n_pairs)
    j = rng.integers(0, n_neg, n_pairs)
    counts = np.bincount(i, minlength=n_pos)
    return np.repeat(np.arange(n_pos, dtype=i.dtype), counts), j


class InMemoryRows:
    """The rows of each class as two arrays (``X_pos``, ``X_neg``).

    ``pairs(n_pairs)`` draws pairs uniform over all pairs: row indices
    uniform with replacement, or, for a class given its ``shuffled`` copy
    (:func:`shuffled_rows`) with at least ``n_pairs`` rows, a window of
    that copy (module docstring: its rows past the class's, if any, repeat
    its first; the copy may be the class array itself, when its rows are
    in the windows' order); ``draw(rng, k_pos, k_neg)`` returns that
    many rows of each class, i.i.d. uniform, in the order drawn (the source
    interface of :class:`RowPools`)."""

    def __init__(self, X_pos, X_neg, rng=None, shuffled=(None, None)):
        self.X_pos, self.X_neg, self.rng = X_pos, X_neg, rng
        self.n_pos, self.n_neg = X_pos.shape[0], X_neg.shape[0]
        self.shuffled = tuple(shuffled)
        self._aligned = np.arange(0)

    def pairs(self, n_pairs):
        """``(X_pos, X_neg, ip, jn)``: pairs ``(X_pos[ip[b]], X_neg[jn[b]])``
        uniform over all pairs (``X_pos``, ``X_neg``: the class arrays, or
        a window of a class's shuffled copy)."""
        X_pos, ip = self._side(self.X_pos, self.shuffled[0], n_pairs)
        X_neg, jn = self._side(self.X_neg, self.shuffled[1], n_pairs)
        return X_pos, X_neg, ip, jn

    def _side(self, X, shuffled, n_pairs):
        """One class's rows and indices of a step's pairs."""
        n = X.shape[0]
        if shuffled is None or n < n_pairs:
            return X, self.rng.integers(n, size=n_pairs)
        start = int(self.rng.integers(n))
        stop = start + n_pairs
        if stop > shuffled.shape[0]:
            # the window wraps: its rows by index modulo n (rows past the
            # class's, if any, repeat its first), no copy of them
            return shuffled, (start + np.arange(n_pairs)) % n
        if self._aligned.size != n_pairs:
            self._aligned = np.arange(n_pairs)
        return shuffled[start:stop], self._aligned

    def draw(self, rng, k_pos, k_neg):
        return (self.X_pos[rng.integers(self.n_pos, size=k_pos)],
                self.X_neg[rng.integers(self.n_neg, size=k_neg)])


class RowPools:
    """Pairs drawn within each step's own rows, fetched in rounds (module
    docstring).

    Parameters
    ----------
    source : an object with ``n_pos``, ``n_neg`` and ``draw(rng, k_pos,
        k_neg)`` returning that many rows of each class, i.i.d. uniform (in
        any order).
    rng : numpy Generator of the rows and the pairs.
    rows : int, rows of each class per step (``k``).
    reuse : int, steps per round (one fetch).
    """

    def __init__(self, source, rng, rows, reuse=POOL_REUSE):
        self.source, self.rng = source, rng
        self.rows = check_count(rows, "rows")
        self.reuse = check_count(reuse, "reuse")
        self._pool, self._step = None, 0
        self.n_rounds = 0

    def pairs(self, n_pairs):
        """``(X_pos_rows, X_neg_rows, ip, jn)``: this step's ``k`` rows of
        each class and ``n_pairs`` pairs ``(X_pos_rows[ip[b]],
        X_neg_rows[jn[b]])`` uniform among them, hence over all pairs."""
        k = self.rows
        if self._pool is None or self._step == self.reuse:
            pos, neg = self.source.draw(self.rng, k * self.reuse,
                                        k * self.reuse)
            # a source may group its rows (by chunk): the steps' blocks
            # must be random, so shuffle the round's rows
            self._pool = (pos[self.rng.permutation(pos.shape[0])],
                          neg[self.rng.permutation(neg.shape[0])])
            self._step = 0
            self.n_rounds += 1
        block = slice(self._step * k, (self._step + 1) * k)
        self._step += 1
        X_pos = np.ascontiguousarray(self._pool[0][block])
        X_neg = np.ascontiguousarray(self._pool[1][block])
        return (X_pos, X_neg, self.rng.integers(k, size=n_pairs),
                self.rng.integers(k, size=n_pairs))
