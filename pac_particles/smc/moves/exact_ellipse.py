"""Exact Gibbs draw of the angle on a prior ellipse: the kernel Gibbs sampler.

On the ellipse ``theta cos phi + nu sin phi`` (``nu`` drawn from the prior
``N(0, S)``) every margin is ``a cos phi + b sin phi``: negative on a
half-circle of angles, so a risk that counts negative margins is piecewise
constant in ``phi`` with two break points per margin. Sort the break points,
sweep them counting negative margins, and draw the angle exactly from its
conditional: an arc with probability ``length * exp(-epn lam R_arc)`` and a
uniform position inside it. Valid because the prior of ``(theta, nu)`` is
invariant under rotations of the ellipse: the kernel Gibbs sampler of [GH01,
Sec. 3] in the parametrisation of elliptical slice sampling [MAM10].

Two risks have such margins, and share the sweep-and-draw kernel:

* the 0-1 classification risk (:class:`~pac_particles.problem.risks.ClassificationRisk`
  with ``loss="zero_one"``): ``2n`` break points of the point margins
  ``y_i s_i`` -- the sampler of [GH01] itself; O(n d + n log n) per
  particle and move;
* the AUC risk (:class:`~pac_particles.problem.risks.AUCRisk`): ``2P`` break points
  of the pair margins ``s_i - s_j`` (P = n_pos n_neg); O(n d + P log P), worth
  it only when P is small and d large.

The scores ``s`` are linear (``X theta``, :class:`~pac_particles.smc.models.
ClassificationGibbsModel`, :class:`~pac_particles.smc.models.AUCGibbsModel`) or
the latent scores of a GP prior, moved directly on ellipses of ``N(0, K)``
(:class:`~pac_particles.smc.models.GPClassificationModel`,
:class:`~pac_particles.smc.models.GPAUCModel`): the dual form of [GH01, Sec. 3].

Example
-------
::

    from sklearn.datasets import load_breast_cancer
    from pac_particles.smc.models import ClassificationGibbsModel
    from pac_particles.smc.moves import ExactEllipseGibbs
    from pac_particles.smc.posterior import run_smc

    X, y = load_breast_cancer(return_X_y=True)
    model = ClassificationGibbsModel(X, y, lam=len(y), loss="zero_one")
    post = run_smc(model, move=ExactEllipseGibbs(model), seed=0)

References
----------
[GH01] Graepel, T. and Herbrich, R. (2001). The kernel Gibbs sampler.
NIPS 13.

[MAM10] Murray, I., Adams, R. P. and MacKay, D. J. C. (2010). Elliptical
slice sampling. AISTATS, JMLR W&CP 9, 541-548.
"""

import numba
import numpy as np

from pac_particles.core import parallel
from pac_particles.core.checks import InputError
from pac_particles.problem.priors import param_array, prior_gaussian_factor
from pac_particles.problem.risks import AUCRisk, ClassificationRisk
from pac_particles.smc.gibbs_model import check_gibbs_model
from pac_particles.smc.moves.base import (TWO_PI, PriorEllipseMove, gaussian_reference,
                   set_param_field, tempering_exponent)

__all__ = ["ExactEllipseGibbs", "ellipse_angle_draws", "point_angle_draws"]

# Arcs shorter than this (radians) are rounding artefacts, see _arc_draw.
_MIN_ARC = 1e-12
# Entry angles per block in ExactEllipseGibbs (block x terms floats, 32 MB).
_BLOCK_ENTRIES = 4_000_000


# ------------------------------------------------------------ numba kernels

@numba.njit(cache=True, nogil=True, inline="always")
def _entry_angle(a, b):
    """Angle where the margin ``a cos phi + b sin phi`` turns negative: it is
    negative on the half-circle ``(e, e + pi)``, ``e = atan2(b, a) + pi/2``
    (mod 2 pi). A margin that is 0 on the whole ellipse (``a = b = 0``: a
    tie, worth a constant 1/2) gets NaN, which sorts last."""
    if a == 0.0 and b == 0.0:
        return np.nan
    e = np.arctan2(b, a) + 0.5 * np.pi
    if e < 0.0:
        e += TWO_PI
    elif e >= TWO_PI:
        e -= TWO_PI
    return e


@numba.njit(cache=True, nogil=True)
def _pair_entry_row(a_pos, a_neg, b_pos, b_neg, out):
    """Entry angles of the pair margins ``s_i - s_j`` on one ellipse."""
    n_neg = a_neg.shape[0]
    for i in range(a_pos.shape[0]):
        for j in range(n_neg):
            out[i * n_neg + j] = _entry_angle(a_pos[i] - a_neg[j],
                                              b_pos[i] - b_neg[j])


@numba.njit(cache=True, parallel=True)
def _pair_entries_parallel(a_pos, a_neg, b_pos, b_neg):
    """Entry angles of every pair, one row per ellipse."""
    out = np.empty((a_pos.shape[0], a_pos.shape[1] * a_neg.shape[1]))
    for r in numba.prange(a_pos.shape[0]):
        _pair_entry_row(a_pos[r], a_neg[r], b_pos[r], b_neg[r], out[r])
    return out


@numba.njit(cache=True)
def _pair_entries_serial(a_pos, a_neg, b_pos, b_neg):
    """Same as :func:`_pair_entries_parallel` on one thread."""
    out = np.empty((a_pos.shape[0], a_pos.shape[1] * a_neg.shape[1]))
    for r in range(a_pos.shape[0]):
        _pair_entry_row(a_pos[r], a_neg[r], b_pos[r], b_neg[r], out[r])
    return out


@numba.njit(cache=True, nogil=True)
def _point_entry_row(a, b, signs, out):
    """Entry angles of the point margins ``y_i s_i`` on one ellipse."""
    for i in range(signs.shape[0]):
        out[i] = _entry_angle(signs[i] * a[i], signs[i] * b[i])


@numba.njit(cache=True, parallel=True)
def _point_entries_parallel(a, b, signs):
    """Entry angles of every point margin, one row per ellipse."""
    out = np.empty(a.shape)
    for r in numba.prange(a.shape[0]):
        _point_entry_row(a[r], b[r], signs, out[r])
    return out


@numba.njit(cache=True)
def _point_entries_serial(a, b, signs):
    """Same as :func:`_point_entries_parallel` on one thread."""
    out = np.empty(a.shape)
    for r in range(a.shape[0]):
        _point_entry_row(a[r], b[r], signs, out[r])
    return out


@numba.njit(cache=True, nogil=True)
def _arc_draw(enter, kappa_per_term, u_arc, u_within):
    """Exact draw of the angle from sorted entry angles (NaN last).

    The count of negative margins is piecewise constant between the 2m
    break points (entries ``e`` and exits ``e + pi``); arcs get weight
    ``length * exp(-kappa_per_term * count)``, ``u_arc`` picks one by inverse
    CDF, ``u_within`` the position inside it. Returns phi in [0, 2 pi].
    The same sweep serves pair margins (AUC) and point margins (0-1
    classification) [GH01, Sec. 3, steps 4-7].
    """
    m = enter.shape[0]
    while m > 0 and np.isnan(enter[m - 1]):
        m -= 1
    # exits, sorted: e - pi for e >= pi (half-circles that wrap through
    # phi = 0, hence negative at phi = 0), then e + pi for e < pi
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
    # Break points that coincide mathematically (parallel margin vectors:
    # common with discrete features) differ by rounding; the arcs between
    # them are ~1e-16 long and hold transient counts off by one. Drop arcs
    # shorter than _MIN_ARC so that they neither set the lowest count nor
    # get drawn.
    lowest, highest = m, 0
    for r in range(k):
        if length[r] > _MIN_ARC:
            lowest = min(lowest, count[r])
            highest = max(highest, count[r])
    # exp(-kappa (c - lowest)) for each integer count c, by products: one
    # exp instead of one per arc (underflow to 0 is harmless: decreasing)
    factor = np.exp(-kappa_per_term)
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
def _arc_draws_parallel(enter_sorted, kappa_per_term, u_arc, u_within):
    """One exact angle per row of sorted entry angles (see :func:`_arc_draw`)."""
    out = np.empty(enter_sorted.shape[0])
    for r in numba.prange(enter_sorted.shape[0]):
        out[r] = _arc_draw(enter_sorted[r], kappa_per_term, u_arc[r], u_within[r])
    return out


@numba.njit(cache=True)
def _arc_draws_serial(enter_sorted, kappa_per_term, u_arc, u_within):
    """Same as :func:`_arc_draws_parallel` on one thread."""
    out = np.empty(enter_sorted.shape[0])
    for r in range(enter_sorted.shape[0]):
        out[r] = _arc_draw(enter_sorted[r], kappa_per_term, u_arc[r], u_within[r])
    return out


def _draws_from_entries(enter, kappa_per_term, u_arc, u_within):
    """Sort the entry angles row-wise (numpy's vectorised sort beats
    numba's here) and draw one angle per row by the sweep kernel."""
    enter.sort(axis=1)
    arc_draws = parallel.dispatch(_arc_draws_serial, _arc_draws_parallel,
                                  enter.size)
    return arc_draws(enter, float(kappa_per_term),
                     np.ascontiguousarray(u_arc, dtype=float),
                     np.ascontiguousarray(u_within, dtype=float))


def ellipse_angle_draws(a_pos, a_neg, b_pos, b_neg, kappa_per_pair, u_arc,
                        u_within):
    """Exact angle draws on N ellipses (one per row) for the AUC risk, see
    :class:`ExactEllipseGibbs`.

    Parameters
    ----------
    a_pos, a_neg : (N, n_pos), (N, n_neg) arrays
        Scores of positives and negatives at angle 0 (``X theta``).
    b_pos, b_neg : (N, n_pos), (N, n_neg) arrays
        Scores at angle pi / 2 (``X nu``).
    kappa_per_pair : float
        ``epn * lam / P``: log-weight lost per mis-ordered pair.
    u_arc, u_within : (N,) uniforms on [0, 1)
        Choice of the arc, and of the position inside it.

    Returns
    -------
    (N,) array of angles in [0, 2 pi].

    Both kernels (entry angles, sweep and draw) run serially or in parallel
    by :func:`pac_particles.core.parallel.dispatch` on the number of entries.
    """
    as_c = np.ascontiguousarray
    a_pos, a_neg = as_c(a_pos, dtype=float), as_c(a_neg, dtype=float)
    b_pos, b_neg = as_c(b_pos, dtype=float), as_c(b_neg, dtype=float)
    entries = parallel.dispatch(_pair_entries_serial, _pair_entries_parallel,
                                a_pos.shape[0] * a_pos.shape[1] * a_neg.shape[1])
    return _draws_from_entries(entries(a_pos, a_neg, b_pos, b_neg),
                               kappa_per_pair, u_arc, u_within)


def point_angle_draws(a, b, signs, kappa_per_point, u_arc, u_within):
    """Exact angle draws on N ellipses (one per row) for the 0-1
    classification risk [GH01, Sec. 3], see :class:`ExactEllipseGibbs`.

    Parameters
    ----------
    a, b : (N, n) arrays
        Scores of the training points at angles 0 and pi / 2.
    signs : (n,) labels in {-1, +1} (margins ``signs * scores``).
    kappa_per_point : float
        ``epn * lam / n``: log-weight lost per misclassified point.
    u_arc, u_within : (N,) uniforms on [0, 1).

    Returns
    -------
    (N,) array of angles in [0, 2 pi].
    """
    as_c = np.ascontiguousarray
    a, b = as_c(a, dtype=float), as_c(b, dtype=float)
    entries = parallel.dispatch(_point_entries_serial, _point_entries_parallel,
                                a.size)
    return _draws_from_entries(entries(a, b, as_c(signs, dtype=float)),
                               kappa_per_point, u_arc, u_within)


# --------------------------------------------------------------------- move

class ExactEllipseGibbs(PriorEllipseMove):
    """Exact Gibbs draw of the angle on the ellipse ``theta cos + nu sin``.

    Along a prior ellipse the 0-1 classification risk is piecewise constant
    with 2n break points, the AUC risk with at most 2P (P = n_pos n_neg);
    the conditional of the angle is drawn exactly: an arc with probability
    proportional to ``length * exp(-epn lam R_arc)``, a uniform position
    inside it. Valid because the prior of ``(theta, nu)`` is invariant under
    rotations of the ellipse ([GH01, Sec. 3], in the parametrisation of
    [MAM10]).

    Parameters
    ----------
    model : ClassificationGibbsModel or GPClassificationModel with
        ``loss="zero_one"``, or AUCGibbsModel or GPAUCModel
        Provides the risk (``model.empirical_risk``), ``lam``, the centred
        Gaussian prior ``N(0, S)`` of ``theta`` (or ``N(0, K)`` of the GP
        latent scores) and, for linear scores, the design ``model.data.X``.
    max_pairs : int
        AUC only: refuse models with more than this many pairs.

    Notes
    -----
    Cost per particle and move: two score products (O(n d); none for GP
    latent scores) and the sort of the break points, O(n log n) for
    classification and O(P log P) for the AUC, against O(n d + n log n) per
    risk evaluation of :class:`~pac_particles.smc.moves.EllipticalSlice` (which
    needs several). For the AUC, prefer it when P is small and d large. The
    position update calls the target once (one risk evaluation) so that
    ``lpost``, ``lprior``, ``llik`` are exactly the target's. The exponent is
    read with :func:`~pac_particles.smc.moves.tempering_exponent`. Positive-
    unlabelled classification risks (per-point weights) are refused.
    """

    def __init__(self, model, max_pairs=20_000):
        risk = check_gibbs_model(model).empirical_risk
        data = model.data
        self.is_gp = model.is_gp
        if isinstance(risk, ClassificationRisk):
            if risk.loss != "zero_one":
                raise InputError(
                    f"ExactEllipseGibbs needs a piecewise-constant risk: the "
                    f"{risk.loss} loss changes continuously along the ellipse "
                    f"(use loss='zero_one', or the elliptical slice moves)")
            if risk.pu_prior is not None:
                raise InputError(
                    "ExactEllipseGibbs counts misclassified points with one "
                    "weight lam / n; the positive-unlabelled risk weighs them "
                    "unequally (use the elliptical slice moves)")
        elif not isinstance(risk, AUCRisk):
            raise InputError("ExactEllipseGibbs needs a Gibbs model of the AUC "
                             "or of the 0-1 classification risk "
                             "(model.empirical_risk)")
        self.max_pairs = max_pairs
        self.pairs = isinstance(risk, AUCRisk)
        if self.pairs and risk.n_terms > max_pairs:
            raise InputError(
                f"ExactEllipseGibbs costs O(P log P) per particle and move; "
                f"P = n_pos * n_neg = {risk.n_terms} exceeds max_pairs = "
                f"{max_pairs}. Use EllipticalSlice, or raise max_pairs")
        chol = prior_gaussian_factor(model.prior)
        if chol is None:
            raise InputError("ExactEllipseGibbs needs a centred Gaussian prior "
                             "on theta (or on the GP latent scores)")
        self.risk = risk
        self.X = None if self.is_gp else np.ascontiguousarray(data.X, dtype=float)
        self.n_terms = risk.n_terms
        self.lam = float(model.lam)
        self.reference = gaussian_reference(prior_chol=chol)
        self._reset_counts()

    @property
    def n_pairs(self):
        """Number of margins whose break points are sorted (P for the AUC,
        n for classification)."""
        return self.n_terms

    def _scores(self, theta):
        if self.is_gp:
            return theta
        with parallel.one_blas_thread():
            return theta @ self.X.T

    def draw_angles(self, theta, nu, epn):
        """Exact angle draws on the ellipses through ``theta`` (N, d) with
        directions ``nu`` (N, d) for the target at exponent ``epn``."""
        n = theta.shape[0]
        u_arc = np.random.uniform(size=n)
        u_within = np.random.uniform(size=n)
        kappa = epn * self.risk.kappa(self.lam)
        block = max(1, _BLOCK_ENTRIES // self.n_terms)
        pos = self.risk.positives
        phi = np.empty(n)
        for lo in range(0, n, block):
            sl = slice(lo, lo + block)
            a, b = self._scores(theta[sl]), self._scores(nu[sl])
            if self.pairs:
                phi[sl] = ellipse_angle_draws(a[:, pos], a[:, ~pos], b[:, pos],
                                              b[:, ~pos], kappa, u_arc[sl],
                                              u_within[sl])
            else:
                phi[sl] = point_angle_draws(a, b, self.risk.signs, kappa,
                                            u_arc[sl], u_within[sl])
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
