"""A certificate of one linear score, derandomised from a Gaussian posterior.

A PAC-Bayes bound certifies a randomised score ``x . theta``, ``theta ~
rho``; the score a fitted estimator returns is one vector ``w``. For a
linear score the margin argument passes from one to the other
[LST02; BM21]: let ``S`` be a covariance and ``t > 0``, ``gamma > 0`` fixed
before the rows that certify, ``rho = N(c w, t^2 S)`` for any ``c > 0``
(the ranking, and the labels' signs, do not depend on ``c``). For a margin
row ``d`` (a positive minus a negative for the AUC, ``y x`` with ``y`` in
{-1, +1} for the error) with ``s_d = sqrt(d' S d) > 0``::

    1{d . w < 0} <= P_rho(d . theta < gamma t s_d) / Phi(gamma),

because ``d . theta ~ N(c d . w, t^2 s_d^2)`` and the right-hand side's
probability is ``Phi(gamma - c d . w / (t s_d)) >= Phi(gamma)`` when ``d . w
< 0``. The loss ``l(theta, d) = 1{d . theta < gamma t s_d}`` (1/2 for a row
with ``s_d = 0``, a tie for every ``theta``) is a fixed function of
``(theta, d)`` with values in [0, 1], so the PAC-Bayes-kl bound on the
certifying rows ``B`` holds for it, for every ``rho`` at once::

    R(w) <= kl^-1( mean_B Phi(gamma - c d . w / (t s_d)),
                   (KL(rho || prior) + log(xi(m) K / delta)) / m ) / Phi(gamma),

with ``prior = N(mu_A, t^2 S)`` and ``S``, ``mu_A`` fitted on the other
rows ``A``, ``K`` the size of the grid of ``(t, gamma)`` fixed in advance
(a union bound), and ``c`` the value that makes the KL smallest,
``c = w' S^-1 mu_A / w' S^-1 w`` (a function of ``w`` and of ``A``: the
bound holds for every ``rho``, so ``c`` may depend on every row). Ties of
``w`` (``d . w = 0``) count 1/2 in the AUC risk, and ``1/2 <= Phi(gamma) /
Phi(gamma)``: the pointwise inequality holds for them too.

When ``B`` has more pairs than ``max_pairs``, ``mean_B`` is replaced by its
upper confidence bound from ``max_pairs`` pairs drawn uniformly with
replacement (Chernoff, :func:`~pac_particles.bounds.held_out_bound`'s
inversion, at its own share of ``delta`` with the same union over the grid):
given the rows, the drawn pairs are independent of every choice above.

The union bound makes the statement hold for every grid point at once, so
the grid point certified may be chosen by any rule, one that reads the
rows included: the smallest bound is found without every grid point's
losses on every row. A pilot (every ``r``-th row, :data:`PILOT_ROWS` of
them) ranks the grid, and only the grid points whose pilot bound could
still be the smallest (their losses :data:`PILOT_Z` standard errors
apart) are evaluated on all the rows; the certificate is the smallest of
those, a value of the grid's union bound whichever point it is (the same
as the whole grid's smallest unless the pilot missed it).

References
----------
[LST02] Langford, J. and Shawe-Taylor, J. (2002). PAC-Bayes and margins.
NIPS 15.

[BM21] Biggs, F. and Guedj, B. (2021). Differentiable PAC-Bayes objectives
with partially aggregated neural networks. Entropy 23(10), 1280.
"""

import math

import numba
import numpy as np
from scipy import linalg
from scipy.special import ndtr

from pac_particles.bounds.kl import kl_inverse_upper, maurer_constant
from pac_particles.core import parallel
from pac_particles.core.normal import cdf_pdf
# s^2 below CANCELLATION_RTOL (|R' x_i|^2 + |R' x_j|^2) has lost its digits
# to cancellation (equal or nearly equal rows), as the pair kernels' Gram
# form does: the pair's d' S d is recomputed from its difference vector
from pac_particles.problem.probit_kernels import (CANCELLATION_RTOL,
                                                   difference_quadratic)
from pac_particles.problem.row_pools import pairs_by_positive

__all__ = ["covariance_root", "margin_rows", "margin_losses",
           "derandomised_bound"]

def covariance_root(S):
    """``R`` with ``R R' = S`` (up to rounding) for a symmetric positive
    semi-definite ``S``: ``d' S d = |R' d|^2``. Its Cholesky factor where
    ``S`` is positive definite (a fraction of the eigendecomposition's cost
    at large d); singular included, the eigendecomposition (eigenvalues
    below 0 from rounding taken as 0)."""
    S = 0.5 * (S + S.T)
    try:
        return np.linalg.cholesky(S)
    except np.linalg.LinAlgError:
        values, vectors = np.linalg.eigh(S)
        return np.ascontiguousarray(vectors
                                    * np.sqrt(np.maximum(values, 0.0)))


# fastmath "reassoc" (and "contract"): the pair's sum of squared differences
# in SIMD lanes, about 2.5x faster at d = 100; a sum of non-negative terms
# keeps a relative error below d epsilon in any order (rounding, not digits
# lost), and equal rows still give exactly 0
@numba.njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
def _margin_range(lo, hi, i, j, n_neg, v_pos, v_neg, R_pos, R_neg, q_pos,
                  q_neg, X_pos, X_neg, S, rtol, u, s):
    """Margins and scales of the pairs ``lo..hi-1``: ``d' S d`` of the pair
    ``d = x_a - x_b`` from its rows' projections ``R' x`` (O(d); ``q = |R'
    x|^2``), or from ``d`` itself (O(d^2)) where the projections cancel.
    The pair loop passes no array to a helper (a helper's array arguments
    cost reference counting per pair, more than the loop's own work at
    small d)."""
    every = i.shape[0] == 0          # every pair, in row-major order
    r = R_pos.shape[1]
    for k in range(lo, hi):
        if every:
            a = k // n_neg
            b = k - a * n_neg
        else:
            a = i[k]
            b = j[k]
        s2 = 0.0
        for l in range(r):
            diff = R_pos[a, l] - R_neg[b, l]
            s2 += diff * diff
        if s2 <= rtol * (q_pos[a] + q_neg[b]):
            s2 = difference_quadratic(X_pos, a, X_neg, b, S)
        u[k] = v_pos[a] - v_neg[b]
        s[k] = math.sqrt(max(s2, 0.0))


@numba.njit(cache=True, parallel=True)
def _margin_rows_parallel(i, j, n_neg, v_pos, v_neg, R_pos, R_neg, q_pos,
                          q_neg, X_pos, X_neg, S, rtol, u, s, n_chunks):
    n = u.shape[0]
    for c in numba.prange(n_chunks):
        _margin_range(c * n // n_chunks, (c + 1) * n // n_chunks, i, j,
                      n_neg, v_pos, v_neg, R_pos, R_neg, q_pos, q_neg, X_pos,
                      X_neg, S, rtol, u, s)


@numba.njit(cache=True, nogil=True)
def _margin_rows_serial(i, j, n_neg, v_pos, v_neg, R_pos, R_neg, q_pos,
                        q_neg, X_pos, X_neg, S, rtol, u, s, n_chunks):
    _margin_range(0, u.shape[0], i, j, n_neg, v_pos, v_neg, R_pos, R_neg,
                  q_pos, q_neg, X_pos, X_neg, S, rtol, u, s)


def margin_rows(X_pos, X_neg, w, S, max_pairs, rng, root=None):
    """``(u, s, sampled)``: the margins ``u = d . w`` and scales ``s =
    sqrt(d' S d)`` of the pair rows ``d = x_i - x_j`` (positive ``i``,
    negative ``j``), every pair (row-major: ``i`` slowest) when there are
    at most ``max_pairs``, else ``max_pairs`` pairs drawn uniformly with
    replacement by ``rng`` (``sampled`` True; in the order of their
    positive rows, :func:`~pac_particles.problem.row_pools.pairs_by_positive`).

    ``s^2 = |R' x_i - R' x_j|^2`` with ``R R' = S``
    (:func:`covariance_root`): O(d) a pair instead of O(d^2), in one numba
    pass over the pairs; a pair whose projections cancel (equal rows: scale
    0 exactly) is recomputed from its difference. ``root``: ``R`` if the
    caller has it already."""
    X_pos = np.ascontiguousarray(X_pos, dtype=float)
    X_neg = np.ascontiguousarray(X_neg, dtype=float)
    n_pos, n_neg = len(X_pos), len(X_neg)
    if n_pos * n_neg <= max_pairs:
        i = j = np.zeros(0, dtype=np.int64)
        n = n_pos * n_neg
        sampled = False
    else:
        i, j = pairs_by_positive(rng, n_pos, n_neg, max_pairs)
        n = max_pairs
        sampled = True
    S = np.ascontiguousarray(S, dtype=float)
    R = covariance_root(S) if root is None else root
    u, s = np.empty(n), np.empty(n)
    kernel = parallel.dispatch(_margin_rows_serial, _margin_rows_parallel,
                               n * X_pos.shape[1])
    R_pos, R_neg = X_pos @ R, X_neg @ R
    kernel(i, j, n_neg, X_pos @ w, X_neg @ w, R_pos, R_neg,
           np.einsum("kd,kd->k", R_pos, R_pos),
           np.einsum("kd,kd->k", R_neg, R_neg), X_pos, X_neg, S,
           CANCELLATION_RTOL, u, s, numba.get_num_threads())
    return u, s, sampled


#: rows per partial sum of :func:`margin_losses` (the sum of millions of
#: terms in one accumulator would lose digits that numpy's pairwise sum
#: keeps)
SUM_BLOCK = 1024


@numba.njit(cache=True, nogil=True)
def _margin_loss_range(lo, hi, u, s, ratios, margins, acc):
    n_grid = ratios.shape[0]
    block = np.zeros(n_grid)
    for start in range(lo, hi, SUM_BLOCK):
        block[:] = 0.0
        for k in range(start, min(start + SUM_BLOCK, hi)):
            if s[k] > 0.0:
                z = u[k] / s[k]
                for g in range(n_grid):
                    block[g] += cdf_pdf(margins[g] - ratios[g] * z)[0]
            else:
                for g in range(n_grid):
                    block[g] += 0.5
        for g in range(n_grid):
            acc[g] += block[g]


@numba.njit(cache=True, parallel=True)
def _margin_losses_parallel(u, s, ratios, margins, acc):
    n_chunks = acc.shape[0]
    n = u.shape[0]
    for c in numba.prange(n_chunks):
        _margin_loss_range(c * n // n_chunks, (c + 1) * n // n_chunks, u, s,
                           ratios, margins, acc[c])


@numba.njit(cache=True, nogil=True)
def _margin_losses_serial(u, s, ratios, margins, acc):
    _margin_loss_range(0, u.shape[0], u, s, ratios, margins, acc[0])


def margin_losses(u, s, ratios, margins):
    """``mean_k P_rho(d_k . theta < gamma t s_k)`` for ``d_k . theta ~ N(c
    u_k, t^2 s_k^2)``, one value per grid point (``ratios[g] = c / t_g``,
    ``margins[g] = gamma_g``), rows with ``s = 0`` counting 1/2: the whole
    grid in one numba pass over the rows."""
    u = np.ascontiguousarray(u, dtype=float)
    s = np.ascontiguousarray(s, dtype=float)
    ratios = np.ascontiguousarray(ratios, dtype=float)
    margins = np.ascontiguousarray(margins, dtype=float)
    work = u.size * ratios.size * parallel.NORMAL_CDF_ITEMS
    chunks = numba.get_num_threads() if parallel.use_parallel(work) else 1
    acc = np.zeros((chunks, ratios.size))
    kernel = parallel.dispatch(_margin_losses_serial, _margin_losses_parallel,
                               work)
    kernel(u, s, ratios, margins, acc)
    return acc.sum(axis=0) / max(u.size, 1)


#: rows of the pilot that ranks the grid of :func:`derandomised_bound`
#: (module docstring): 200,000 rows put a margin loss within 0.004 (four
#: standard errors) of its value on all the rows
PILOT_ROWS = 200_000
#: standard errors of a pilot loss within which a grid point is kept
PILOT_Z = 4.0


def derandomised_bound(u, s, sampled, w, mu_a, S_inv, m, delta, widths,
                       margins, sample_share=0.1, root=None):
    """The bound of the module docstring: ``(bound, details)``.

    ``u, s, sampled`` from :func:`margin_rows` (or the signed rows of a
    point risk), ``w`` the certified score's coefficients, ``mu_a`` and
    ``S_inv = S^-1`` the part-A prior's mean and precision, ``m`` the
    independent terms of ``B``'s risk, ``widths`` and ``margins`` the grid
    of ``t`` and ``gamma`` fixed in advance. ``sample_share``: the share of
    ``delta`` spent on the sampled rows' confidence bound when ``sampled``.
    ``details``: the chosen ``t``, ``gamma``, ``c``, KL, margin risk, the
    grid size and how many grid points were evaluated on every row (the
    others ruled out by the pilot, module docstring). ``root``: the lower
    Cholesky factor ``L`` of ``S`` (``S = L L'``) in place of ``S_inv``
    (None): ``x' S^-1 y = (L^-1 x) . (L^-1 y)``, two triangular solves
    (O(d^2)) instead of an inverse (O(d^3))."""
    # the Gram matrix of (w, mu_a) in the precision S^-1, from S^-1 or from
    # L^-1 (w, mu_a); the distance |c w - mu_a|^2 in it expanded
    pair = np.column_stack([w, mu_a])
    if root is None:
        gram = pair.T @ S_inv @ pair
    else:
        white = linalg.solve_triangular(root, pair, lower=True)
        gram = white.T @ white
    c = max(float(gram[0, 1]) / max(float(gram[0, 0]), 1e-300), 1e-12)
    distance = max(float(c * c * gram[0, 0] - 2.0 * c * gram[0, 1]
                         + gram[1, 1]), 0.0)
    grid = [(t, g) for t in widths for g in margins]
    k = len(grid)
    delta_kl = delta * (1.0 - sample_share) if sampled else delta
    delta_rows = delta - delta_kl
    xi = maurer_constant(m)
    ratios = np.array([c / t for t, _ in grid])
    gammas = np.array([g for _, g in grid])

    def raw(point, q):
        t, g = grid[point]
        q = min(max(float(q), 0.0), 1.0)
        if sampled:
            q = kl_inverse_upper(q, math.log(k / delta_rows) / u.size)
        kl = 0.5 * distance / t ** 2
        value = kl_inverse_upper(q, (kl + math.log(xi * k / delta_kl)) / m) \
            / ndtr(g)
        return value, dict(width=t, margin=g, scale=c, kl=kl, margin_risk=q,
                           grid_size=k)

    kept = list(range(k))
    stride = u.size // PILOT_ROWS
    if k > 1 and stride >= 2:
        pilot = margin_losses(u[::stride], s[::stride], ratios, gammas)
        se = PILOT_Z * np.sqrt(pilot * (1.0 - pilot) / u[::stride].size)
        best = min(raw(p, pilot[p] + se[p])[0] for p in kept)
        kept = [p for p in kept if raw(p, pilot[p] - se[p])[0] <= best]
    losses = margin_losses(u, s, ratios[kept], gammas[kept])
    value, how = min((raw(p, q) for p, q in zip(kept, losses)),
                     key=lambda found: found[0])
    how["evaluated"] = len(kept)
    return min(max(value, 0.0), 1.0), how
