"""MCMC steps for AUC Gibbs posteriors, as ``particles`` ``ArrayMCMC`` steps.

Each step moves a whole array of particles at once and plugs into
``particles.smc_samplers.MCMCSequenceWF`` (waste-free SMC) or
``AdaptiveMCMCSequence`` (standard SMC). The AUC Gibbs posterior is piecewise
constant in ``theta`` and invariant to ``theta -> c theta``: a Gaussian random
walk calibrated on the particle covariance mixes poorly on it as d grows.
Elliptical slice moves travel along ellipses through a Gaussian (the prior
``N(0, S)``, or a Gaussian fitted to the particles); they never reject and
have no step size to tune.

* :class:`EllipticalSlice` (Murray, Adams & MacKay, 2010): draw
  ``nu ~ N(0, S)``, a level under the current tempered likelihood, and shrink
  a bracket of angles on the ellipse ``theta cos phi + nu sin phi`` until the
  level is met. All particles advance together; each extra shrink costs one
  batched risk evaluation, only for the particles still shrinking.
* :class:`CalibratedEllipticalSlice` (generalised elliptical slice,
  Nishihara, Murray & Adams, 2014): the ellipse is centred on a Gaussian
  ``N(m, Sigma)`` fitted to the weighted particles at each tempering step,
  and the slice likelihood is ``lpost - log N(theta; m, Sigma)``. Exact for
  any continuous prior; when the target is close to the fitted Gaussian it
  accepts the first angle and makes nearly independent moves. The default
  move of :func:`pac_particles.posterior.run_smc` for Gaussian priors.
* :class:`ExactEllipseGibbs` (the kernel Gibbs sampler of Graepel & Herbrich,
  2001, on the same ellipse): the risk along the ellipse is piecewise constant
  with at most 2P break points (P = n_pos n_neg); sort them, sweep, and draw
  the angle exactly from its conditional. O(P log P) per particle and move:
  worth it when P is small and d large (a risk evaluation costs O(n d)).
* :class:`SpikeSlabMove`: for :class:`~pac_particles.priors.SpikeSlabPrior`,
  an exact Gibbs update of the indicators ``z | theta`` (closed form, George &
  McCulloch, 1993) followed by an elliptical slice move of ``theta | z`` under
  the Gaussian prior ``N(0, diag(v_z))``.
* :class:`RegularizedRandomWalk`: the Gaussian random walk Metropolis of
  ``particles``, calibrated on the weighted particle covariance, with a ridge
  so that calibration never fails when resampled particles are fewer than (or
  collinear in) the dimension — the failure reported for GP scores in the
  SMC-AUC student report.

The tempering exponent. ``particles`` applies a move with the target
``current_target(epn)``, ``epn = x.shared['exponents'][-1]``, but does not pass
``epn`` to the move. The slice moves never need it: they read the log target
``x.lpost`` that the target function computes and use
``lpost(theta) - log N(theta; 0, S)`` as the likelihood, which equals
``epn * loglik(theta)`` up to a constant when the prior is ``N(0, S)``, and
keeps the move exact for any target otherwise. :class:`ExactEllipseGibbs`
needs ``epn * lam`` explicitly: :func:`tempering_exponent` reads
``x.shared['exponents'][-1]`` and checks it against
``x.lpost - x.lprior = epn * x.llik``.

Example
-------
::

    from particles import smc_samplers as ssp
    from pac_particles.data import load_dataset
    from pac_particles.models import AUCGibbsModel
    from pac_particles.moves import EllipticalSlice, ExactEllipseGibbs

    X, y, _ = load_dataset("sonar")
    model = AUCGibbsModel(X, y, lam=len(y))
    move = ssp.MCMCSequenceWF(mcmc=EllipticalSlice.for_model(model), len_chain=10)
    exact = ExactEllipseGibbs(model, max_pairs=20_000)   # P = 10767 on Sonar
    # or simply pac_particles.posterior.run_smc(model), which uses
    # CalibratedEllipticalSlice() by default

Which move (``diagnostics/compare_moves.py``, 20 waste-free runs per move at
an equal budget of risk evaluations; variance x time relative to the random
walk, log Z / posterior mean of the first coefficient): Pima (d = 8):
prior slice 1.4 / 3.4, calibrated slice 0.14 / 0.38; Sonar (d = 60): prior
slice 1.1 / 1.9, calibrated slice 0.025 / 0.053, exact Gibbs 8.0 / 6.4. The
prior-based slice spends about 4 risk evaluations per move against 1.7-2.5
for the calibrated one, whose ellipses follow the posterior.

References
----------
Murray, I., Adams, R. P. and MacKay, D. J. C. (2010). Elliptical slice
sampling. AISTATS, JMLR W&CP 9, 541-548.

Nishihara, R., Murray, I. and Adams, R. P. (2014). Parallel MCMC with
generalized elliptical slice sampling. JMLR 15, 2087-2112.

Graepel, T. and Herbrich, R. (2001). The kernel Gibbs sampler. NIPS 13.

George, E. I. and McCulloch, R. E. (1993). Variable selection via Gibbs
sampling. JASA 88, 881-889.

Ridgway, J., Alquier, P., Chopin, N. and Liang, F. (2014). PAC-Bayesian AUC
classification and scoring. NIPS 27.
"""

import numba
import numpy as np
from scipy import linalg
from particles import resampling as rs
from particles import smc_samplers as ssp

from . import parallel
from .priors import (SpikeSlabPrior, param_array, param_field,
                     prior_gaussian_factor)

__all__ = ["RegularizedRandomWalk", "EllipticalSlice", "CalibratedEllipticalSlice",
           "ExactEllipseGibbs",
           "SpikeSlabMove", "tempering_exponent", "ellipse_angle_draws",
           "MOVES", "make_move", "default_move"]

_TWO_PI = 2.0 * np.pi
# Arcs shorter than this (radians) are rounding artefacts, see _arc_draw.
_MIN_ARC = 1e-12
# Entry angles per block in ExactEllipseGibbs (block x P floats, 32 MB).
_BLOCK_ENTRIES = 4_000_000


# ------------------------------------------------------------------ helpers

def _one_blas_thread():
    """Run small BLAS/LAPACK calls on one thread: OpenBLAS workers keep
    spinning after a call and slow the numba risk kernel that follows (as in
    :mod:`pac_particles.auc`); measured 10x on the slice loop at d = 2."""
    return parallel.one_blas_thread()


_theta_field = param_array


def _set_theta_field(arr, values):
    field = param_field(arr)
    field[...] = np.reshape(values, field.shape)


def tempering_exponent(x, rtol=1e-8):
    """Exponent ``epn`` of the tempered target under which ``x`` was evaluated.

    ``particles``' (adaptive) tempering moves particles with the target
    ``prior * exp(epn * loglik)``, ``epn = x.shared['exponents'][-1]``, without
    passing ``epn`` to the move. This reads it and checks it against the
    fields the target wrote, ``x.lpost - x.lprior = epn * x.llik``.

    Raises
    ------
    ValueError
        if ``x`` carries no tempering exponent, or its fields contradict it
        (the move is then used with a target it cannot handle).
    """
    exponents = x.shared.get("exponents") if x.shared else None
    if not exponents:
        raise ValueError(
            "this move needs the tempering exponent: x.shared['exponents'] is "
            "missing (use it within particles' Tempering/AdaptiveTempering)")
    epn = float(exponents[-1])
    fields = [getattr(x, k, None) for k in ("lpost", "lprior", "llik")]
    if all(f is not None for f in fields):
        lpost, lprior, llik = fields
        ok = np.isfinite(lpost)
        gap = (lpost - lprior - epn * llik)[ok]
        scale = 1.0 + np.abs(lpost[ok]) + np.abs(lprior[ok])
        if np.any(np.abs(gap) > rtol * scale):
            raise ValueError(
                f"x.lpost - x.lprior != {epn:.6g} * x.llik: the target is not "
                "prior * exp(exponent * loglik) at the exponent "
                "x.shared['exponents'][-1]")
    return epn


class _GaussianReference:
    """Centred Gaussian ``N(0, S)`` driving the elliptical moves.

    ``S = L L'`` (``chol``, shared by all particles) or ``diag(std**2)`` with
    ``std`` of shape (d,) (shared) or (N, d) (one prior per particle, as for
    ``theta | z`` under a spike-and-slab prior).
    """

    def __init__(self, chol=None, std=None):
        self.chol, self.std = chol, std

    @property
    def dim(self):
        return self.chol.shape[0] if self.chol is not None else self.std.shape[-1]

    def draw(self, n):
        z = np.random.standard_normal((n, self.dim))
        if self.chol is None:
            return z * self.std
        with _one_blas_thread():
            return z @ self.chol.T

    def half_quad(self, theta, rows):
        """``0.5 theta' S^-1 theta`` for the particles ``rows`` (so that
        ``log N(theta; 0, S) = const - half_quad``)."""
        if self.chol is not None:
            if getattr(self, "_chol_inv", None) is None:
                # one inversion per reference; then a plain matmul per call,
                # several times faster than a triangular solve on small d
                self._chol_inv = linalg.solve_triangular(
                    self.chol, np.eye(self.chol.shape[0]), lower=True)
            with _one_blas_thread():
                w = theta @ self._chol_inv.T
            return 0.5 * np.sum(w * w, axis=1)
        std = self.std if self.std.ndim == 1 else self.std[rows]
        return 0.5 * np.sum((theta / std) ** 2, axis=1)


def _slice_along_ellipses(x, target, nu, reference, max_shrinks, center=None):
    """One elliptical slice step (Murray et al. 2010, Fig. 2) for every
    particle of ``x``, in place, along the ellipses
    ``center + (theta - center) cos + nu sin``.

    The likelihood is ``x.lpost - log N(theta; center, S)`` (S of
    ``reference``): the tempered log-likelihood of the target when its prior
    is N(0, S) and ``center`` is 0; for any other Gaussian the step is the
    generalised elliptical slice of Nishihara et al. (2014), still exact.
    Rejected particles shrink their bracket and are evaluated again, in one
    batch. Returns the number of target evaluations of each particle and the
    mask of particles that ran out of shrinks (they keep their position).
    """
    n = x.N
    theta0 = np.array(_theta_field(x.theta), dtype=float)
    if center is not None:
        theta0 -= center
    all_rows = np.arange(n)
    log_level = (x.lpost + reference.half_quad(theta0, all_rows)
                 + np.log(np.random.uniform(size=n)))
    phi = np.random.uniform(0.0, _TWO_PI, size=n)
    lo, hi = phi - _TWO_PI, phi.copy()
    evaluations = np.zeros(n, dtype=np.int64)
    active = all_rows
    for _ in range(max_shrinks):
        if active.size == 0:
            break
        c, s = np.cos(phi[active])[:, None], np.sin(phi[active])[:, None]
        proposal = theta0[active] * c + nu[active] * s
        prop_arr = x.theta[active]  # fancy indexing: a copy
        _set_theta_field(prop_arr, proposal if center is None else proposal + center)
        xprop = x.__class__(theta=prop_arr)
        target(xprop)
        evaluations[active] += 1
        log_lik = xprop.lpost + reference.half_quad(proposal, active)
        accept = log_lik > log_level[active]
        done = active[accept]
        for key, value in xprop.dict_fields.items():
            getattr(x, key)[done] = value[accept]
        active = active[~accept]
        below = phi[active] < 0.0
        lo[active] = np.where(below, phi[active], lo[active])
        hi[active] = np.where(below, hi[active], phi[active])
        phi[active] = np.random.uniform(lo[active], hi[active])
    exhausted = np.zeros(n, dtype=bool)
    exhausted[active] = True
    return evaluations, exhausted


class _EvaluationCounter:
    """Bookkeeping shared by the moves: target evaluations per move."""

    def _reset_counts(self):
        self.n_moves = 0
        self.n_evaluations = 0
        self.n_exhausted = 0
        self.history = []

    def _record(self, evaluations, exhausted=None):
        self.n_moves += evaluations.size
        self.n_evaluations += int(evaluations.sum())
        if exhausted is not None:
            self.n_exhausted += int(exhausted.sum())
        mean = float(evaluations.mean())
        self.history.append(mean)
        return mean

    @property
    def evaluations_per_move(self):
        """Mean number of target (risk) evaluations per particle and move."""
        return self.n_evaluations / self.n_moves if self.n_moves else float("nan")


# ------------------------------------------------------ elliptical slice

class _PriorEllipseMove(ssp.ArrayMCMC, _EvaluationCounter):
    """A move along ellipses of the fixed Gaussian ``self.reference``."""

    @property
    def dim(self):
        return self.reference.dim

    def calibrate(self, W, x):
        d = _theta_field(x.theta).shape[1]
        if d != self.dim:
            raise ValueError(f"particles have dimension {d}, the move's "
                             f"Gaussian prior {self.dim}")


class EllipticalSlice(_PriorEllipseMove):
    """Elliptical slice sampling for a target ``N(0, S) * L(theta)``.

    Give the prior covariance ``S`` in exactly one form: its lower Cholesky
    factor, the full matrix, or diagonal variances (scalar or (d,)). For an
    AUC model use :meth:`for_model`.

    Parameters
    ----------
    prior_chol : (d, d) array, optional
        Lower-triangular ``L`` with ``S = L L'``.
    prior_cov : (d, d) array, optional
        Positive definite ``S``.
    prior_var : float or (d,) array, optional
        ``S = diag(prior_var)``.
    max_shrinks : int
        Bound on the target evaluations of one particle in one move. A
        particle that reaches it keeps its position (counted in
        ``n_exhausted``); on these targets the bracket reaches machine
        precision within about 60 shrinks, so this never happens in practice.

    Notes
    -----
    ``step`` returns ``1 / (mean evaluations per particle)``, which
    ``particles`` records as the acceptance rate of the step
    (``x.shared['acc_rates']``); ``evaluations_per_move`` and ``history`` hold
    the counts. The likelihood used on the slice is
    ``x.lpost - log N(theta; 0, S)``, read from the target: the move is exact
    for whatever exponent the tempering target uses, and remains exact (but
    less efficient) if ``S`` is not the model's prior.

    Examples
    --------
    >>> import numpy as np
    >>> from particles import smc_samplers as ssp
    >>> from pac_particles.moves import EllipticalSlice
    >>> move = EllipticalSlice(prior_var=np.ones(3))
    >>> seq = ssp.MCMCSequenceWF(mcmc=move, len_chain=5)
    """

    def __init__(self, prior_chol=None, prior_cov=None, prior_var=None,
                 max_shrinks=200):
        given = [a is not None for a in (prior_chol, prior_cov, prior_var)]
        if sum(given) != 1:
            raise ValueError("give exactly one of prior_chol, prior_cov, "
                             "prior_var (the Gaussian prior N(0, S))")
        if int(max_shrinks) < 1:
            raise ValueError(f"max_shrinks must be >= 1, got {max_shrinks}")
        self.max_shrinks = int(max_shrinks)
        self.reference = _as_reference(prior_chol, prior_cov, prior_var)
        self._reset_counts()

    @classmethod
    def for_model(cls, model, **kwargs):
        """Elliptical slice under the Gaussian prior of ``model.prior``."""
        chol = prior_gaussian_factor(model.prior)
        if chol is None:
            raise ValueError(
                "EllipticalSlice needs a centred Gaussian prior on theta "
                "(pac_particles.priors.gaussian_prior or MvNormal); use "
                "SpikeSlabMove for a SpikeSlabPrior, RegularizedRandomWalk "
                "otherwise")
        return cls(prior_chol=chol, **kwargs)

    def move_along(self, x, target, nu):
        """Slice step along the given ellipses ``theta cos + nu sin`` (one
        ``nu`` per particle); returns the evaluations of each particle."""
        evaluations, exhausted = _slice_along_ellipses(
            x, target, nu, self.reference, self.max_shrinks)
        self._record(evaluations, exhausted)
        return evaluations

    def step(self, x, target=None):
        """One elliptical slice step for all particles (in place); returns
        ``1 / mean evaluations``."""
        evaluations = self.move_along(x, target, self.reference.draw(x.N))
        return 1.0 / evaluations.mean()


def _as_reference(prior_chol, prior_cov, prior_var):
    if prior_var is not None:
        var = np.atleast_1d(np.asarray(prior_var, dtype=float))
        if var.ndim != 1 or not np.all(np.isfinite(var)) or np.any(var <= 0):
            raise ValueError("prior_var must be finite and > 0 (a scalar or a "
                             "1-D array)")
        return _GaussianReference(std=np.sqrt(var))
    if prior_cov is not None:
        cov = np.atleast_2d(np.asarray(prior_cov, dtype=float))
        if cov.shape[0] != cov.shape[1] or not np.allclose(cov, cov.T):
            raise ValueError("prior_cov must be a symmetric (d, d) matrix")
        try:
            chol = linalg.cholesky(cov, lower=True)
        except linalg.LinAlgError:
            raise ValueError("prior_cov is not positive definite")
    else:
        chol = np.atleast_2d(np.asarray(prior_chol, dtype=float))
        if (chol.shape[0] != chol.shape[1]
                or np.any(np.triu(chol, 1) != 0)
                or np.any(np.diag(chol) <= 0)):
            raise ValueError("prior_chol must be lower triangular (d, d) with a "
                             "positive diagonal")
    if not np.all(np.isfinite(chol)):
        raise ValueError("prior covariance contains NaN or inf")
    if np.all(np.tril(chol, -1) == 0):  # diagonal: O(d) per particle
        return _GaussianReference(std=np.diag(chol).copy())
    return _GaussianReference(chol=chol)


class CalibratedEllipticalSlice(ssp.ArrayMCMC, _EvaluationCounter):
    """Elliptical slice sampling around a Gaussian fitted to the particles.

    At each ``calibrate`` (before resampling, on the weighted particles of
    the new target) the move fits ``N(m, Sigma)`` (weighted mean and
    covariance, plus a relative ridge) and then moves every particle along
    ``m + (theta - m) cos phi + nu sin phi``, ``nu ~ N(0, Sigma)``, with the
    slice likelihood ``lpost(theta) - log N(theta; m, Sigma)``: the
    generalised elliptical slice of Nishihara, Murray & Adams (2014) with a
    Gaussian reference. Exact for any continuous target (the prior need not
    be Gaussian); when the target is close to ``N(m, Sigma)`` the first
    angle is nearly always accepted and successive states are nearly
    independent.

    Parameters
    ----------
    ridge : float >= 0
        Relative ridge ``ridge * mean(diag Sigma) I`` added to the weighted
        covariance, so that the fit never fails with few or collinear
        particles.
    max_shrinks : int
        As in :class:`EllipticalSlice`.

    Notes
    -----
    Needs plain float particles (like the random walk): not for the
    spike-and-slab prior.
    """

    def __init__(self, ridge=1e-6, max_shrinks=200):
        if ridge < 0:
            raise ValueError(f"ridge must be >= 0, got {ridge}")
        self.ridge = ridge
        self.max_shrinks = int(max_shrinks)
        self._reset_counts()

    def calibrate(self, W, x):
        arr = np.array(_theta_field(x.theta), dtype=float)
        with _one_blas_thread():
            mean, cov = rs.wmean_and_cov(W, arr)
            chol = _ridge_cholesky(np.atleast_2d(cov), self.ridge)
        x.shared["ess_mean"] = np.atleast_1d(mean)
        x.shared["ess_chol"] = chol

    def step(self, x, target=None):
        """One generalised elliptical slice step (in place); returns
        ``1 / mean evaluations``."""
        if "ess_chol" not in x.shared:
            raise ValueError("CalibratedEllipticalSlice.step before calibrate: "
                             "no fitted Gaussian in x.shared")
        reference = _GaussianReference(chol=x.shared["ess_chol"])
        evaluations, exhausted = _slice_along_ellipses(
            x, target, reference.draw(x.N), reference, self.max_shrinks,
            center=x.shared["ess_mean"])
        self._record(evaluations, exhausted)
        return 1.0 / evaluations.mean()


# ------------------------------------------------- exact elliptical Gibbs

@numba.njit(cache=True, parallel=True)
def _entry_angles(a_pos, a_neg, b_pos, b_neg):
    """Angles where each pair starts to be mis-ordered, one row per ellipse.

    Pair (i, j) has score difference ``a cos phi + b sin phi`` with
    ``a = a_pos[i] - a_neg[j]``, ``b = b_pos[i] - b_neg[j]``, negative on the
    half-circle ``(e, e + pi)``, ``e = atan2(b, a) + pi/2`` (mod 2 pi). Ties
    (``a = b = 0``: identical feature vectors) contribute a constant 1/2 and
    get NaN, which sorts last.
    """
    n_rows, n_pos, n_neg = a_pos.shape[0], a_pos.shape[1], a_neg.shape[1]
    out = np.empty((n_rows, n_pos * n_neg))
    for r in numba.prange(n_rows):
        for i in range(n_pos):
            for j in range(n_neg):
                a = a_pos[r, i] - a_neg[r, j]
                b = b_pos[r, i] - b_neg[r, j]
                if a == 0.0 and b == 0.0:
                    e = np.nan
                else:
                    e = np.arctan2(b, a) + 0.5 * np.pi
                    if e < 0.0:
                        e += _TWO_PI
                    elif e >= _TWO_PI:
                        e -= _TWO_PI
                out[r, i * n_neg + j] = e
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
    start[k], length[k], count[k] = prev, max(_TWO_PI - prev, 0.0), current
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
def _arc_draws(enter_sorted, kappa_per_pair, u_arc, u_within):
    n_rows = enter_sorted.shape[0]
    out = np.empty(n_rows)
    for r in numba.prange(n_rows):
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

    Entry angles come from a numba kernel, are sorted row-wise by numpy (its
    vectorised sort is about 10x faster than numba's here), and the sweep and
    draw run in a second numba kernel.
    """
    as_c = np.ascontiguousarray
    enter = _entry_angles(as_c(a_pos, dtype=float), as_c(a_neg, dtype=float),
                          as_c(b_pos, dtype=float), as_c(b_neg, dtype=float))
    enter.sort(axis=1)
    return _arc_draws(enter, float(kappa_per_pair), as_c(u_arc, dtype=float),
                      as_c(u_within, dtype=float))


class ExactEllipseGibbs(_PriorEllipseMove):
    """Exact Gibbs draw of the angle on the ellipse ``theta cos + nu sin``.

    Along the ellipse the AUC risk is piecewise constant with at most 2P break
    points (P = n_pos n_neg); the conditional of the angle is drawn exactly:
    arc with probability proportional to ``length * exp(-epn lam R_arc)``,
    uniform position inside it. Valid because the prior of ``(theta, nu)`` is
    invariant under rotations of the ellipse (Graepel & Herbrich, 2001, in
    the parametrisation of Murray et al., 2010).

    Parameters
    ----------
    model : AUCGibbsModel
        Provides ``X_pos``, ``X_neg`` (the break points), ``lam`` and the
        centred Gaussian prior ``N(0, S)`` of ``theta``.
    max_pairs : int
        Refuse models with more than this many pairs.

    Notes
    -----
    Cost per particle and move: two score products (O(n d)) and
    O(P log P) for the break points, against O(n d + n log n) per risk
    evaluation of :class:`EllipticalSlice` (which needs several). Prefer it
    when P is small and d large: e.g. n = 62, d = 2000 (Colon): P ~ 900, one
    exact draw costs about two risk evaluations. On Sonar (P = 10767, d = 60)
    one draw costs about as much as a hundred risk evaluations, and the
    elliptical slice is more efficient. The position update calls the target
    once (one risk evaluation) so that ``lpost``, ``lprior``, ``llik`` are
    exactly the target's. The exponent is read with
    :func:`tempering_exponent`.
    """

    def __init__(self, model, max_pairs=20_000):
        data = getattr(model, "data", None)
        if data is None or not hasattr(data, "X_pos"):
            raise ValueError("ExactEllipseGibbs needs an AUCGibbsModel (linear "
                             "scores, data.X_pos / data.X_neg)")
        if data.n_pairs > max_pairs:
            raise ValueError(
                f"ExactEllipseGibbs costs O(P log P) per particle and move; "
                f"P = n_pos * n_neg = {data.n_pairs} exceeds max_pairs = "
                f"{max_pairs}. Use EllipticalSlice, or raise max_pairs")
        chol = prior_gaussian_factor(model.prior)
        if chol is None:
            raise ValueError("ExactEllipseGibbs needs a centred Gaussian prior "
                             "on theta")
        self.X_pos, self.X_neg = data.X_pos, data.X_neg
        self.n_pairs = data.n_pairs
        self.lam = float(model.lam)
        self.max_pairs = max_pairs
        self.reference = _as_reference(chol, None, None)
        self._reset_counts()

    def draw_angles(self, theta, nu, epn):
        """Exact angle draws on the ellipses through ``theta`` (N, d) with
        directions ``nu`` (N, d) for the target at exponent ``epn``."""
        n = theta.shape[0]
        u_arc = np.random.uniform(size=n)
        u_within = np.random.uniform(size=n)
        kappa = epn * self.lam / self.n_pairs
        block = max(1, _BLOCK_ENTRIES // self.n_pairs)
        phi = np.empty(n)
        for lo in range(0, n, block):
            sl = slice(lo, lo + block)
            with _one_blas_thread():
                scores = (theta[sl] @ self.X_pos.T, theta[sl] @ self.X_neg.T,
                          nu[sl] @ self.X_pos.T, nu[sl] @ self.X_neg.T)
            phi[sl] = ellipse_angle_draws(*scores, kappa, u_arc[sl], u_within[sl])
        return phi

    def move_along(self, x, target, nu):
        """Exact Gibbs step along the given ellipses (in place)."""
        epn = tempering_exponent(x)
        theta = np.array(_theta_field(x.theta), dtype=float)
        phi = self.draw_angles(theta, nu, epn)
        _set_theta_field(x.theta, theta * np.cos(phi)[:, None]
                         + nu * np.sin(phi)[:, None])
        target(x)
        evaluations = np.ones(x.N, dtype=np.int64)
        self._record(evaluations)
        return phi

    def step(self, x, target=None):
        """One exact Gibbs step for all particles (in place); returns 1 (one
        target evaluation per particle, nothing is rejected)."""
        self.move_along(x, target, self.reference.draw(x.N))
        return 1.0


# ------------------------------------------------------- spike-and-slab

class SpikeSlabMove(ssp.ArrayMCMC, _EvaluationCounter):
    """Gibbs ``z | theta`` then elliptical slice ``theta | z`` (spike-and-slab).

    1. ``z_k | theta_k ~ Bernoulli(p N(theta_k; 0, v1) / (p N(theta_k; 0, v1)
       + (1 - p) N(theta_k; 0, v0)))``: exact, no data (the likelihood does not
       depend on z);
    2. one elliptical slice step of ``theta`` under ``N(0, diag(v_z))``.

    Parameters
    ----------
    prior : pac_particles.priors.SpikeSlabPrior
        Must be the prior of the model; ``v0 > 0`` (a Dirac spike has no
        density: use EP, :mod:`pac_particles.ep`).
    max_shrinks : int
        As in :class:`EllipticalSlice`.

    Notes
    -----
    A narrow spike makes ``z`` sticky (George & McCulloch, 1993): with
    ``v0 / v1 = 1e-2`` a coefficient in the spike flips to the slab with
    probability of order ``p sqrt(v0 / v1)`` per move. SMC compensates
    through reweighting of the initial (prior) population, but expect the
    inclusion probabilities to need more particles as ``v0 / v1`` shrinks.
    """

    def __init__(self, prior, max_shrinks=200):
        if not isinstance(prior, SpikeSlabPrior):
            raise ValueError("SpikeSlabMove needs a "
                             "pac_particles.priors.SpikeSlabPrior")
        if np.any(prior.v0 <= 0):
            raise ValueError(
                "spike variance v0 = 0 (a Dirac spike) is not supported by SMC: "
                "the augmented prior has no density. Use v0 > 0, or EP "
                "(pac_particles.ep) for v0 = 0")
        self.prior = prior
        self.max_shrinks = int(max_shrinks)
        self._reset_counts()

    @classmethod
    def for_model(cls, model, **kwargs):
        return cls(model.prior, **kwargs)

    def calibrate(self, W, x):
        names = x.theta.dtype.names or ()
        if "z" not in names or x.theta["theta"].shape[1] != self.prior.d:
            raise ValueError("SpikeSlabMove needs particles with fields theta "
                             f"and z of dimension {self.prior.d}")

    def update_z(self, x):
        """Exact Gibbs update of ``z | theta`` (in place, fields kept
        consistent: ``lpost`` changes by the change of the prior)."""
        lprior_old = self.prior.logpdf(x.theta)
        if getattr(x, "lprior", None) is not None and not np.allclose(
                x.lprior, lprior_old, rtol=1e-10, atol=1e-8):
            raise ValueError("the target's prior is not this SpikeSlabMove's "
                             "prior (build it with SpikeSlabMove.for_model)")
        probs = self.prior.inclusion_conditional(x.theta["theta"])
        x.theta["z"] = np.random.uniform(size=probs.shape) < probs
        lprior_new = self.prior.logpdf(x.theta)
        x.lpost = x.lpost + (lprior_new - lprior_old)
        if getattr(x, "lprior", None) is not None:
            x.lprior = lprior_new

    def step(self, x, target=None):
        """One Gibbs-then-slice step (in place); returns ``1 / mean
        evaluations``."""
        self.update_z(x)
        reference = _GaussianReference(
            std=np.sqrt(self.prior.variances(x.theta["z"])))
        evaluations, exhausted = _slice_along_ellipses(
            x, target, reference.draw(x.N), reference, self.max_shrinks)
        self._record(evaluations, exhausted)
        return 1.0 / evaluations.mean()


# ------------------------------------------------------- random walk

class RegularizedRandomWalk(ssp.ArrayRandomWalk):
    """Random walk Metropolis with proposal covariance
    ``(2.38^2 / d) (Sigma_hat + ridge * mean(diag Sigma_hat) I)``.

    Parameters
    ----------
    ridge : float >= 0
        Relative ridge added to the weighted particle covariance.

    Notes
    -----
    Needs plain float particles (``view_2d_array``): not usable with the
    spike-and-slab prior, whose particles carry a bool field ``z``.
    """

    def __init__(self, ridge=1e-6):
        if ridge < 0:
            raise ValueError(f"ridge must be >= 0, got {ridge}")
        self.ridge = ridge

    def calibrate(self, W, x):
        arr = ssp.view_2d_array(x.theta)
        d = arr.shape[1]
        with _one_blas_thread():
            _, cov = rs.wmean_and_cov(W, arr)
            chol = _ridge_cholesky(np.atleast_2d(cov), self.ridge)
        x.shared["chol_cov"] = (2.38 / np.sqrt(d)) * chol

    def proposal(self, x, xprop):
        with _one_blas_thread():
            return super().proposal(x, xprop)


def _ridge_cholesky(cov, ridge):
    """Lower Cholesky factor of ``cov + jitter I``, ``jitter = ridge *
    mean(diag cov)``, raised tenfold until the factorisation succeeds."""
    d = cov.shape[0]
    jitter = ridge * max(np.mean(np.diag(cov)), 1e-300)
    while True:
        try:
            return linalg.cholesky(cov + jitter * np.eye(d), lower=True)
        except linalg.LinAlgError:
            jitter = 10 * jitter if jitter > 0 else 1e-12


# ------------------------------------------------------- registry

def _random_walk(model, **kwargs):
    return RegularizedRandomWalk(**kwargs)


def _calibrated_slice(model, **kwargs):
    return CalibratedEllipticalSlice(**kwargs)


MOVES = {
    "random_walk": _random_walk,
    "elliptical_slice": EllipticalSlice.for_model,
    "calibrated_slice": _calibrated_slice,
    "exact_gibbs": ExactEllipseGibbs,
    "spike_slab": SpikeSlabMove.for_model,
}


def make_move(name, model, **kwargs):
    """Build the move called ``name`` (a key of ``MOVES``) for ``model``."""
    if name not in MOVES:
        raise ValueError(f"unknown move {name!r}; choose from {sorted(MOVES)}")
    return MOVES[name](model, **kwargs)


def default_move(model):
    """The move :func:`~pac_particles.posterior.run_smc` uses by default.

    :class:`EllipticalSlice` on the kernel's Cholesky factor for a
    :class:`~pac_particles.models.GPAUCModel`;
    :class:`SpikeSlabMove` for a :class:`~pac_particles.priors.SpikeSlabPrior`;
    :class:`CalibratedEllipticalSlice` for a centred Gaussian prior (the most
    efficient move in ``diagnostics/compare_moves.py``: variance x time 2.6-7x
    smaller than the random walk's on Pima and 19-40x on Sonar, where the
    prior-based :class:`EllipticalSlice` was not better than the random
    walk); :class:`RegularizedRandomWalk` otherwise.
    """
    prior = getattr(model, "prior", None)
    if getattr(model, "kernel_chol", None) is not None:
        # GP latent scores: the exact prior ellipse, no n x n covariance fit
        return EllipticalSlice(prior_chol=model.kernel_chol)
    if isinstance(prior, SpikeSlabPrior):
        return SpikeSlabMove(prior)
    if prior is not None and prior_gaussian_factor(prior) is not None:
        return CalibratedEllipticalSlice()
    return RegularizedRandomWalk()
