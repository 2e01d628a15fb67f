"""Exact Gibbs draw of the angle on a prior ellipse: the kernel Gibbs sampler.

On the ellipse ``theta cos phi + nu sin phi`` (``nu`` drawn from the prior
``N(0, S)``) the AUC risk of linear scores is piecewise constant in ``phi``
with at most 2P break points (P = n_pos n_neg pairs): pair (i, j) is
mis-ordered on a half-circle of angles. Sort the break points, sweep them
counting mis-ordered pairs, and draw the angle exactly from its conditional,
an arc with probability ``length * exp(-epn lam R_arc)`` and a uniform
position inside it. Valid because the prior of ``(theta, nu)`` is invariant
under rotations of the ellipse: the kernel Gibbs sampler of [GH01] in the
parametrisation of elliptical slice sampling [MAM10].

O(P log P) per particle and move, against O(n d + n log n) per risk
evaluation of the slice moves (which need several): worth it when P is small
and d large.

Example
-------
::

    from particles import smc_samplers as ssp
    from pac_particles.data import load_dataset
    from pac_particles.models import AUCGibbsModel
    from pac_particles.moves import ExactEllipseGibbs

    X, y, _ = load_dataset("sonar")
    model = AUCGibbsModel(X, y, lam=len(y))
    exact = ExactEllipseGibbs(model, max_pairs=20_000)   # P = 10767 on Sonar
    move = ssp.MCMCSequenceWF(mcmc=exact, len_chain=10)

References
----------
[GH01] Graepel, T. and Herbrich, R. (2001). The kernel Gibbs sampler.
NIPS 13.

[MAM10] Murray, I., Adams, R. P. and MacKay, D. J. C. (2010). Elliptical
slice sampling. AISTATS, JMLR W&CP 9, 541-548.
"""

import numba
import numpy as np

from .. import parallel
from ..checks import InputError
from ..priors import param_array, prior_gaussian_factor
from .base import (TWO_PI, PriorEllipseMove, gaussian_reference,
                   set_param_field, tempering_exponent)

__all__ = ["ExactEllipseGibbs", "ellipse_angle_draws"]

# Arcs shorter than this (radians) are rounding artefacts, see _arc_draw.
_MIN_ARC = 1e-12
# Entry angles per block in ExactEllipseGibbs (block x P floats, 32 MB).
_BLOCK_ENTRIES = 4_000_000


# ------------------------------------------------------------ numba kernels

@numba.njit(cache=True, nogil=True)
def _entry_row(a_pos, a_neg, b_pos, b_neg, out):
    """Angles where each pair starts to be mis-ordered, on one ellipse.

    Pair (i, j) has score difference ``a cos phi + b sin phi`` with
    ``a = a_pos[i] - a_neg[j]``, ``b = b_pos[i] - b_neg[j]``, negative on the
    half-circle ``(e, e + pi)``, ``e = atan2(b, a) + pi/2`` (mod 2 pi). Ties
    (``a = b = 0``: identical feature vectors) contribute a constant 1/2 and
    get NaN, which sorts last.
    """
    n_neg = a_neg.shape[0]
    for i in range(a_pos.shape[0]):
        for j in range(n_neg):
            a = a_pos[i] - a_neg[j]
            b = b_pos[i] - b_neg[j]
            if a == 0.0 and b == 0.0:
                e = np.nan
            else:
                e = np.arctan2(b, a) + 0.5 * np.pi
                if e < 0.0:
                    e += TWO_PI
                elif e >= TWO_PI:
                    e -= TWO_PI
            out[i * n_neg + j] = e


@numba.njit(cache=True, parallel=True)
def _entry_angles_parallel(a_pos, a_neg, b_pos, b_neg):
    """Entry angles of every pair, one row per ellipse (see :func:`_entry_row`)."""
    out = np.empty((a_pos.shape[0], a_pos.shape[1] * a_neg.shape[1]))
    for r in numba.prange(a_pos.shape[0]):
        _entry_row(a_pos[r], a_neg[r], b_pos[r], b_neg[r], out[r])
    return out


@numba.njit(cache=True)
def _entry_angles_serial(a_pos, a_neg, b_pos, b_neg):
    """Same as :func:`_entry_angles_parallel` on one thread."""
    out = np.empty((a_pos.shape[0], a_pos.shape[1] * a_neg.shape[1]))
    for r in range(a_pos.shape[0]):
        _entry_row(a_pos[r], a_neg[r], b_pos[r], b_neg[r], out[r])
    return out


@numba.njit(cache=True, nogil=True)
def _arc_draw(enter, kappa_per_pair, u_arc, u_within):
    """Exact draw of the angle from sorted entry angles (NaN last).

    The mis-ordered count is piecewise constant between the 2m break points
    (entries ``e`` and exits ``e + pi``); arcs get weight
    ``length * exp(-kappa_per_pair * count)``, ``u_arc`` picks one by inverse
    CDF, ``u_within`` the position inside it. Returns phi in [0, 2 pi].
    """
    m = enter.shape[0]
    while m > 0 and np.isnan(enter[m - 1]):
        m -= 1
    # exits, sorted: e - pi for e >= pi (half-circles that wrap through
    # phi = 0, hence mis-ordered at phi = 0), then e + pi for e < pi
    split = np.searchsorted(enter[:m], np.pi)
    leave = np.empty(m)
    for r in range(split, m):
        leave[r - split] = enter[r] - np.pi
    for r in range(split):
        leave[m - split + r] = enter[r] + np.pi
    # sweep the merged break points: arc k is [start[k], start[k] + length[k])
    start = np.empty(2 * m + 1)
    length = np.empty(2 * m + 1)
    count = np.empty(2 * m + 1, dtype=np.int64)
    ie, il, k = 0, 0, 0
    current, prev = m - split, 0.0
    while ie < m or il < m:
        if il >= m or (ie < m and enter[ie] <= leave[il]):
            point, change = enter[ie], 1
            ie += 1
        else:
            point, change = leave[il], -1
            il += 1
        start[k], length[k], count[k] = prev, point - prev, current
        k += 1
        current += change
        prev = point
    start[k], length[k], count[k] = prev, max(TWO_PI - prev, 0.0), current
    k += 1
    # Break points that coincide mathematically (pairs with parallel
    # differences: common with discrete features) differ by rounding; the
    # arcs between them are ~1e-16 long and hold transient counts off by one.
    # Drop arcs shorter than _MIN_ARC so that they neither set the lowest
    # count nor get drawn.
    lowest, highest = m, 0
    for r in range(k):
        if length[r] > _MIN_ARC:
            lowest = min(lowest, count[r])
            highest = max(highest, count[r])
    # exp(-kappa (c - lowest)) for each integer count c, by products: one
    # exp instead of one per arc (underflow to 0 is harmless: decreasing)
    factor = np.exp(-kappa_per_pair)
    table = np.empty(highest - lowest + 1)
    table[0] = 1.0
    for c in range(1, highest - lowest + 1):
        table[c] = table[c - 1] * factor
    weight = np.zeros(k)
    total = 0.0
    for r in range(k):
        if length[r] > _MIN_ARC:
            weight[r] = length[r] * table[count[r] - lowest]
            total += weight[r]
    goal = u_arc * total
    acc = 0.0
    chosen = -1
    for r in range(k):
        if weight[r] > 0.0:
            chosen = r
            acc += weight[r]
            if acc > goal:
                break
    return start[chosen] + u_within * length[chosen]


@numba.njit(cache=True, parallel=True)
def _arc_draws_parallel(enter_sorted, kappa_per_pair, u_arc, u_within):
    """One exact angle per row of sorted entry angles (see :func:`_arc_draw`)."""
    out = np.empty(enter_sorted.shape[0])
    for r in numba.prange(enter_sorted.shape[0]):
        out[r] = _arc_draw(enter_sorted[r], kappa_per_pair, u_arc[r], u_within[r])
    return out


@numba.njit(cache=True)
def _arc_draws_serial(enter_sorted, kappa_per_pair, u_arc, u_within):
    """Same as :func:`_arc_draws_parallel` on one thread."""
    out = np.empty(enter_sorted.shape[0])
    for r in range(enter_sorted.shape[0]):
        out[r] = _arc_draw(enter_sorted[r], kappa_per_pair, u_arc[r], u_within[r])
    return out


def ellipse_angle_draws(a_pos, a_neg, b_pos, b_neg, kappa_per_pair, u_arc,
                        u_within):
    """Exact angle draws on N ellipses (one per row), see
    :class:`ExactEllipseGibbs`.

    Parameters
    ----------
    a_pos, a_neg : (N, n_pos), (N, n_neg) arrays
        Scores ``X theta`` of positives and negatives at angle 0.
    b_pos, b_neg : (N, n_pos), (N, n_neg) arrays
        Scores ``X nu`` (angle pi / 2).
    kappa_per_pair : float
        ``epn * lam / P``: log-weight lost per mis-ordered pair.
    u_arc, u_within : (N,) uniforms on [0, 1)
        Choice of the arc, and of the position inside it.

    Returns
    -------
    (N,) array of angles in [0, 2 pi].

    Entry angles come from a numba kernel, are sorted row-wise by numpy
    (whose vectorised sort beats numba's here), and the sweep and draw run in
    a second numba kernel; both kernels run serially or in parallel by
    :func:`pac_particles.parallel.dispatch` on the number of entries.
    """
    as_c = np.ascontiguousarray
    a_pos, a_neg = as_c(a_pos, dtype=float), as_c(a_neg, dtype=float)
    b_pos, b_neg = as_c(b_pos, dtype=float), as_c(b_neg, dtype=float)
    entries = a_pos.shape[0] * a_pos.shape[1] * a_neg.shape[1]
    entry_angles = parallel.dispatch(_entry_angles_serial,
                                     _entry_angles_parallel, entries)
    enter = entry_angles(a_pos, a_neg, b_pos, b_neg)
    enter.sort(axis=1)
    arc_draws = parallel.dispatch(_arc_draws_serial, _arc_draws_parallel,
                                  entries)
    return arc_draws(enter, float(kappa_per_pair), as_c(u_arc, dtype=float),
                     as_c(u_within, dtype=float))


# --------------------------------------------------------------------- move

class ExactEllipseGibbs(PriorEllipseMove):
    """Exact Gibbs draw of the angle on the ellipse ``theta cos + nu sin``.

    Along the ellipse the AUC risk is piecewise constant with at most 2P break
    points (P = n_pos n_neg); the conditional of the angle is drawn exactly:
    arc with probability proportional to ``length * exp(-epn lam R_arc)``,
    uniform position inside it. Valid because the prior of ``(theta, nu)`` is
    invariant under rotations of the ellipse ([GH01], in the parametrisation
    of [MAM10]).

    Parameters
    ----------
    model : AUCGibbsModel
        Provides the pairs (``model.empirical_risk``), the break points
        (``model.data.X_pos``, ``X_neg``), ``lam`` and the centred Gaussian
        prior ``N(0, S)`` of ``theta``.
    max_pairs : int
        Refuse models with more than this many pairs.

    Notes
    -----
    Cost per particle and move: two score products (O(n d)) and
    O(P log P) for the break points, against O(n d + n log n) per risk
    evaluation of :class:`~pac_particles.moves.EllipticalSlice` (which needs
    several). Prefer it when P is small and d large; with thousands of pairs
    and moderate d the elliptical slice is more efficient. The position
    update calls the target once (one risk evaluation) so that ``lpost``,
    ``lprior``, ``llik`` are exactly the target's. The exponent is read with
    :func:`~pac_particles.moves.tempering_exponent`.
    """

    def __init__(self, model, max_pairs=20_000):
        risk = getattr(model, "empirical_risk", None)
        data = getattr(model, "data", None)
        if (getattr(model, "is_gp", False) or risk is None
                or not hasattr(data, "X_pos")):
            raise InputError("ExactEllipseGibbs needs an AUCGibbsModel (linear "
                             "scores, data.X_pos / data.X_neg)")
        self.max_pairs = max_pairs
        if risk.n_terms > max_pairs:
            raise InputError(
                f"ExactEllipseGibbs costs O(P log P) per particle and move; "
                f"P = n_pos * n_neg = {risk.n_terms} exceeds max_pairs = "
                f"{max_pairs}. Use EllipticalSlice, or raise max_pairs")
        chol = prior_gaussian_factor(model.prior)
        if chol is None:
            raise InputError("ExactEllipseGibbs needs a centred Gaussian prior "
                             "on theta")
        self.risk = risk
        self.X_pos, self.X_neg = data.X_pos, data.X_neg
        self.n_pairs = risk.n_terms
        self.lam = float(model.lam)
        self.reference = gaussian_reference(prior_chol=chol)
        self._reset_counts()

    def draw_angles(self, theta, nu, epn):
        """Exact angle draws on the ellipses through ``theta`` (N, d) with
        directions ``nu`` (N, d) for the target at exponent ``epn``."""
        n = theta.shape[0]
        u_arc = np.random.uniform(size=n)
        u_within = np.random.uniform(size=n)
        kappa = epn * self.risk.kappa(self.lam)
        block = max(1, _BLOCK_ENTRIES // self.n_pairs)
        phi = np.empty(n)
        for lo in range(0, n, block):
            sl = slice(lo, lo + block)
            with parallel.one_blas_thread():
                scores = (theta[sl] @ self.X_pos.T, theta[sl] @ self.X_neg.T,
                          nu[sl] @ self.X_pos.T, nu[sl] @ self.X_neg.T)
            phi[sl] = ellipse_angle_draws(*scores, kappa, u_arc[sl], u_within[sl])
        return phi

    def move_along(self, x, target, nu):
        """Exact Gibbs step along the given ellipses (in place); returns the
        angles drawn."""
        epn = tempering_exponent(x)
        theta = np.array(param_array(x.theta), dtype=float)
        phi = self.draw_angles(theta, nu, epn)
        set_param_field(x.theta, theta * np.cos(phi)[:, None]
                        + nu * np.sin(phi)[:, None])
        target(x)
        self._record(np.ones(x.N, dtype=np.int64))
        return phi

    def step(self, x, target=None):
        """One exact Gibbs step for all particles (in place); returns 1 (one
        target evaluation per particle, nothing is rejected)."""
        self.move_along(x, target, self.reference.draw(x.N))
        return 1.0
