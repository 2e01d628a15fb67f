"""The damped parallel Gaussian EP core shared by every EP model [RACL14, Alg. 4].

Every model runs the same computation on a factor ``C`` (n x r) of the prior
covariance of the training scores: whitened coordinates ``w`` with
``s = C w`` and a Gaussian approximation of precision

    Lambda = diag(prior_prec) + C' A' diag(W) A C,       eta = prior_shift + C' A' H,

where ``A`` is the margin operator of the risk (for the AUC risk,
``A' diag(W) A`` is the weighted Laplacian of the pair graph) and ``W``,
``H`` the precisions and shifts of the margin sites
(:mod:`pac_particles.approx.ep.sites`). Nothing is done site by site with r x r
algebra: ``Lambda`` comes from :meth:`~pac_particles.problem.risks.Risk.gram_times`
in O(P r), and every margin marginal from the score covariance
``C Lambda^-1 C' = B' B`` (its diagonal and
:meth:`~pac_particles.problem.risks.Risk.cross_block`). A sweep costs
O(P r + n r^2 + r^3).

All sites are updated in parallel from the same posterior, with damping.
Sites of this kind can get a negative precision (the tilted variance
exceeds the cavity variance when a pair is badly mis-ordered): a site whose
cavity is improper keeps its previous value; a damped step after which the
posterior precision is not positive definite (or not finite) is retried with
half the damping, and the damping recovers slowly afterwards. Convergence is
declared when no margin (or prior) marginal moves by more than ``tol``
(means in posterior standard deviations, variances relatively) times the
fraction ``step / damping`` of the requested damping still in use (a sweep
damped to almost nothing moves nothing without being near a fixed point);
otherwise ``converged`` is False and an :class:`EPConvergenceWarning` is
issued.

Failure at large ``kappa``. Every pair site is invariant to the scale of the
scores, so only the prior fixes the scale of the approximation, and at
every EP fixed point ``E_q ||w||^2 = r`` exactly (:func:`_scale_identity`).
When ``kappa = lam / P`` is large and the pairs cannot all be ordered, the
first parallel sweep from the prior lets every site cut the margin variance
at once (the sum over P sites overwhelms the prior), the mis-ordered pairs
then see sharp cavities and their sites swing between a hard truncation
(precision ~ tau_c z^2) and a negative precision; the damping is cut to
keep the posterior proper, and with the prior outweighed the state drifts
along the scale to ``w = 0`` with site precisions growing without bound.
Such a run is reported as failed: ``converged`` False, ``degenerate``
True, and a warning that names the cause.

``log_z`` is the EP energy [Min01; See05]: the Gaussian log-normaliser of
the approximation plus, per site, ``log Z_k + phi(cavity) - phi(marginal)``,
plus the prior sites' share, plus ``-kappa / 2`` per tied margin (ties count
1/2 and carry no site).

Fractional (power) EP [Min04; RACL14, Fig. 4]. With a fraction ``alpha`` in
(0, 1] (attribute of :class:`_Sites`) each margin site is refined through
``alpha`` of it: cavity ``q / q_k^alpha``, tilted ``cavity * t_k^alpha``
(the step site with ``kappa -> alpha kappa``), new site
``(proj[tilted] / cavity)^(1/alpha)``. A fixed point matches, for every
site, the moments of ``q`` with those of ``q * (t_k / q_k)^alpha``. The
energy is the power-EP one [Min04; See05]: the per-site term becomes
``(log Z_k,alpha + phi(cavity) - phi(marginal)) / alpha`` (the constant
``C_k`` of ``t_k^alpha ~ C_k^alpha q_k^alpha`` under the cavity); it is
stationary in the sites at a fixed point, so the hyper-parameter gradients
of the models stay exact, and ``E_q ||w||^2 = r`` still holds there (a power
of a scale-invariant site is scale-invariant). The prior sites of
spike-and-slab keep ``alpha = 1`` (a Dirac spike has no fractional power):
power EP with a power per factor [Min04]. ``alpha = 1`` is plain EP, bit for
bit.

Example
-------
::

    from pac_particles.problem.risks import AUCRisk, duplicate_groups
    from pac_particles.approx.ep.core import _Sites, _run_ep
    from pac_particles.approx.ep.prior_sites import _FixedGaussianPrior
    risk = AUCRisk(y)
    Xo = risk.ordered(X)
    sites = _Sites(risk, risk.tied_sites(duplicate_groups(Xo)), lam=len(y))
    run = _run_ep(Xo, sites, _FixedGaussianPrior(Xo.shape[1]), damping=0.7,
                  tol=1e-3, max_sweeps=500)      # prior N(0, I) on theta

References
----------
[RACL14] Ridgway, J., Alquier, P., Chopin, N. and Liang, F. (2014).
PAC-Bayesian AUC classification and scoring. NIPS 27, Algorithm 4 and
appendix B.2.

[Min01] Minka, T. (2001). Expectation Propagation for approximate Bayesian
inference. UAI 17, 362-369.

[See05] Seeger, M. (2005). Expectation propagation for exponential families.
Technical report, University of California at Berkeley.

[Min04] Minka, T. (2004). Power EP. Technical report MSR-TR-2004-149,
Microsoft Research.

van Gerven, M., Cseke, B., de Lange, F. and Heskes, T. (2010). Efficient
Bayesian multivariate fMRI analysis using a sparsifying spatio-temporal prior.
NeuroImage 50, 150-161 (parallel EP).
"""

import warnings
from dataclasses import dataclass, field

import numba
import numpy as np
from scipy import linalg

from pac_particles.core.checks import InputError, check_count, check_positive
from pac_particles.approx.ep.sites import pair_energy, pair_sweep
from pac_particles.approx.ep.sparse_sites import margin_energy, margin_sweep, n_chunks, site_weights

__all__ = ["EPConvergenceWarning"]


class EPConvergenceWarning(RuntimeWarning):
    """EP stopped before its moments converged (see ``EPResult.converged``)."""


def _check_alpha(alpha):
    """The power-EP fraction ``alpha`` as a float in (0, 1], or InputError."""
    try:
        value = float(alpha)
    except (TypeError, ValueError):
        raise InputError(f"alpha (the power-EP fraction) must be a number in "
                         f"(0, 1], got {alpha!r}")
    if not 0.0 < value <= 1.0:
        raise InputError(f"alpha (the power-EP fraction) must be in (0, 1] "
                         f"(1: plain EP), got {alpha!r}")
    return value


class _Sites:
    """The margins of a risk that carry an EP site, at inverse temperature
    ``lam`` (per-site weight ``kappa = risk.kappa(lam)``, a number or one per
    margin), refined by power EP with fraction ``alpha`` (1: plain EP).

    A margin in ``tied`` (``risk.site_shape`` bool) is 0 for every parameter
    (identical inputs): it contributes the constant ``exp(-kappa / 2)`` (ties
    count 1/2) and gets no site.

    The site pass is chosen by the risk: the fused pos x neg grid kernel
    (:func:`~pac_particles.approx.ep.sites.pair_sweep`) for the full pair grid of
    :class:`~pac_particles.problem.risks.AUCRisk`, the margin-list kernel
    (:func:`~pac_particles.approx.ep.sparse_sites.margin_sweep`) for a risk that
    lists its margins (``risk.margin_list()``: points, sampled pairs).
    """

    def __init__(self, risk, tied, lam, alpha=1.0):
        self.risk = risk
        self.active = np.ascontiguousarray(~tied)
        self.n_ties = int(tied.sum())
        self.lam = lam
        self.alpha = _check_alpha(alpha)
        self.kappa = risk.kappa(lam)
        kappa_tied = (self.kappa[tied] if np.ndim(self.kappa)
                      else np.full(self.n_ties, self.kappa))
        self.tie_energy = -0.5 * float(np.sum(kappa_tied))
        listing = getattr(risk, "margin_list", None)
        self.margins = None if listing is None else listing()
        if self.margins is not None:
            # the kernels' tilted distribution is cavity * t^alpha
            self.weights = site_weights(self.alpha * np.asarray(self.kappa))
        elif np.ndim(self.kappa):
            raise InputError("the pair-grid EP pass takes one kappa for all "
                             "sites")

    def at(self, lam):
        """The same sites at another ``lam``."""
        return _Sites(self.risk, ~self.active, lam, self.alpha)

    def bind(self, C, prior):
        """Called by :func:`_run_ep` with its factor and prior sites (the
        tied sites of :mod:`pac_particles.approx.ep.averaged` need them)."""

    def buffers(self):
        """Work arrays of the site pass: margin means and variances (the
        previous pass's on entry), undamped targets, per-block change and
        improper counts."""
        shape = self.risk.site_shape
        blocks = (shape[0] if self.margins is None
                  else n_chunks(self.active.size))
        return _Buffers(np.zeros(shape), np.ones(shape), np.empty(shape),
                        np.empty(shape), np.empty(blocks),
                        np.zeros(blocks, dtype=np.int64))

    def sweep(self, state, W, H, has_previous, buf):
        """One EP pass over every site from the posterior ``state``: targets
        in ``buf``; returns the largest moment change since the last pass."""
        if self.margins is None:
            pair_sweep(state.score_mean, state.score_var, state.cross, W, H,
                       self.active, self.kappa, has_previous, buf.mean,
                       buf.var, buf.W_target, buf.H_target, buf.change,
                       buf.improper, self.alpha)
        else:
            first, second, sign = self.margins
            Bt = state.cross if state.cross is not None else _NO_CROSS
            margin_sweep(first, second, sign, state.score_mean,
                         state.score_var, Bt, W, H, self.active,
                         self.weights, has_previous, buf.mean, buf.var,
                         buf.W_target, buf.H_target, buf.change,
                         buf.improper, self.alpha)
        return float(buf.change.max())

    def energy(self, buf, W, H):
        """The sites' share of the EP energy (tied margins included) and the
        number of improper cavities, at the marginals held in ``buf``."""
        if self.margins is None:
            rows, improper = pair_energy(buf.mean, buf.var, W, H, self.active,
                                         self.kappa, self.alpha)
            total, bad = float(rows.sum()), int(improper.sum())
        else:
            total, bad = margin_energy(buf.mean, buf.var, W, H, self.active,
                                       self.weights, self.alpha)
        return total + self.tie_energy, int(bad)


_NO_CROSS = np.zeros((0, 1))


@dataclass
class _Buffers:
    """Work arrays of the site pass (see :meth:`_Sites.buffers`)."""
    mean: np.ndarray
    var: np.ndarray
    W_target: np.ndarray
    H_target: np.ndarray
    change: np.ndarray
    improper: np.ndarray


@dataclass
class _State:
    """Gaussian approximation in whitened coordinates ``w`` (``s = C w``)."""
    chol: np.ndarray          # lower Cholesky factor of Lambda
    eta: np.ndarray           # Lambda w_mean
    w_mean: np.ndarray
    score_mean: np.ndarray    # (n,), in risk.order
    score_var: np.ndarray     # (n,)
    cross: np.ndarray         # risk.cross_block of the score covariance
    coord_var: np.ndarray = None   # diag(Lambda^-1), when the prior needs it

    @property
    def logdet(self):
        return 2.0 * np.sum(np.log(np.diag(self.chol)))


def _posterior(C, sites, W, H, prior_prec, prior_shift, need_coord_var=False):
    """Posterior given all sites; None if its precision is not positive definite.

    ``Lambda = diag(prior_prec) + C' A' diag(W) A C``, ``eta = prior_shift +
    C' A' H``. Score covariance ``C Lambda^-1 C' = B' B`` with ``B = chol^-1
    C'``: its diagonal and the risk's cross block give every margin marginal
    in O(P r).
    """
    risk = sites.risk
    lam_mat = C.T @ risk.gram_times(W, C)
    lam_mat = 0.5 * (lam_mat + lam_mat.T)
    lam_mat[np.diag_indices_from(lam_mat)] += prior_prec
    eta = prior_shift + C.T @ risk.adjoint(H)
    if not (np.all(np.isfinite(lam_mat)) and np.all(np.isfinite(eta))):
        return None
    try:
        chol = np.linalg.cholesky(lam_mat)
    except np.linalg.LinAlgError:
        return None
    w_mean = linalg.cho_solve((chol, True), eta)
    B = linalg.solve_triangular(chol, C.T, lower=True, check_finite=False)
    score_mean = C @ w_mean
    score_var = np.einsum("ij,ij->j", B, B)
    coord_var = None
    if need_coord_var:
        inv_chol = linalg.solve_triangular(chol, np.eye(chol.shape[0]),
                                           lower=True, check_finite=False)
        coord_var = np.einsum("ij,ij->j", inv_chol, inv_chol)
    if not (np.all(np.isfinite(w_mean)) and np.all(np.isfinite(score_var))
            and np.all(score_var > 0)):
        return None
    return _State(chol, eta, w_mean, score_mean, score_var,
                  risk.cross_block(B), coord_var)


@numba.njit(cache=True)
def _damped_kernel(old, target, step, out):
    for k in range(out.size):
        out[k] = old[k] + step * (target[k] - old[k])


def _damped(old, target, step, out):
    """``old + step (target - old)`` into ``out`` (same shape), in one pass
    where the three are contiguous."""
    if not (old.flags.c_contiguous and target.flags.c_contiguous
            and out.flags.c_contiguous):
        out[...] = old + step * (target - old)
        return out
    _damped_kernel(old.reshape(-1), target.reshape(-1), float(step),
                   out.reshape(-1))
    return out


def _coord_change(old, new):
    """Largest change of the coordinate marginals (spike-and-slab)."""
    if new.coord_var is None:
        return 0.0
    dm = np.abs(new.w_mean - old.w_mean) / np.sqrt(new.coord_var)
    dv = np.abs(new.coord_var - old.coord_var) / new.coord_var
    return float(np.max(np.maximum(dm, dv)))


@dataclass
class _Run:
    """Raw outcome of the EP loop (internal)."""
    state: _State
    W: np.ndarray
    H: np.ndarray
    log_z: float
    n_sweeps: int
    converged: bool
    damping: float
    max_change: float
    n_improper: int
    history: list = field(default_factory=list)
    scale_identity: float = 1.0
    degenerate: bool = False


def _log_z(state, sites, prior, buf, W, H, label):
    """EP's log evidence at the end of a run (nan, with a warning, where a
    cavity is improper or the energy not finite)."""
    site_energy, improper_end = sites.energy(buf, W, H)
    log_z = (0.5 * float(state.eta @ state.w_mean) - 0.5 * state.logdet
             + site_energy + prior.energy(state))
    if improper_end:
        warnings.warn(f"{label}: {improper_end} pair site(s) have an improper "
                      "cavity at the end; log_z is not defined (nan)",
                      EPConvergenceWarning, stacklevel=5)
        return np.nan
    if not np.isfinite(log_z):
        warnings.warn(f"{label}: the EP energy is not finite (a prior-site "
                      "cavity is improper); log_z is nan",
                      EPConvergenceWarning, stacklevel=5)
    return log_z


def _run_ep(C, sites, prior, damping, tol, max_sweeps, init=None,
            min_damping=1e-4, label="EP", with_log_z=True):
    """Parallel EP with damping [RACL14, Alg. 4] on the factor ``C``.

    All sites are updated from the same posterior. A damped step that makes
    the posterior precision indefinite (or non-finite) is retried with half
    the damping ("a sweep fails") and the damping then grows back (x1.5 per 5
    good sweeps). A moment change that grows for 3 sweeps in a row, goes up
    and down for 6, or does not improve its best value by 10% in 10 sweeps
    means the parallel iteration is unstable (or cycling) at this damping:
    its ceiling is halved.
    Convergence: no marginal moved by more than ``tol`` in the last sweep.

    ``prior`` holds the sites of the prior on ``w``
    (:mod:`pac_particles.approx.ep.prior_sites`); ``init`` optional ``(W, H)`` to
    warm-start the margin sites from.
    """
    shape = sites.risk.site_shape
    sites.bind(C, prior)
    if init is None:
        W, H = np.zeros(shape), np.zeros(shape)
    else:
        W, H = init[0].copy(), init[1].copy()
        W[~sites.active] = 0.0
        H[~sites.active] = 0.0
    state = _posterior(C, sites, W, H, prior.prec, prior.shift,
                       prior.need_coord_var)
    if state is None and init is not None:
        # a warm start that is not valid for these hyper-parameters: restart
        W, H = np.zeros(shape), np.zeros(shape)
        state = _posterior(C, sites, W, H, prior.prec, prior.shift,
                           prior.need_coord_var)
    if state is None:
        raise FloatingPointError(f"{label}: the prior precision is not "
                                 "positive definite")
    buf = sites.buffers()
    # the damped parameters are written into the spare pair of arrays:
    # allocating them each sweep cost 4% of an EP fit on Pima
    spare_W, spare_H = np.empty_like(W), np.empty_like(H)
    ceiling = step = damping
    good_sweeps = rising = flips = stalled = 0
    best_change = np.inf
    was_up = False
    converged = False
    change = previous_change = np.inf
    coord_change = 0.0
    history = []
    n_sweeps = 0
    while True:
        site_change = sites.sweep(state, W, H, n_sweeps > 0, buf)
        if n_sweeps > 0:
            change = max(site_change, coord_change)
            history.append(change)
            # A damped sweep moves the marginals by about ``step`` times the
            # distance to the fixed point: after the damping has been cut,
            # a small change is not convergence (the collapse at large
            # kappa stalls with step ~ 1e-6 and changes below tol).
            if change < tol * min(1.0, step / damping):
                converged = True
                break
            up = change > previous_change
            rising = rising + 1 if up else 0
            # period-2 oscillation: the change alternates up and down
            flips = flips + 1 if (n_sweeps > 1 and up != was_up) else 0
            previous_change, was_up = change, up
            # any longer cycle: no 10% progress on the best change in 10 sweeps
            if change < 0.9 * best_change:
                best_change, stalled = change, 0
            else:
                stalled += 1
            if rising >= 3 or flips >= 5 or stalled >= 10:
                ceiling *= 0.5
                step = min(step, ceiling)
                rising = flips = stalled = 0
                best_change = change
                if ceiling < min_damping:
                    break       # no damping makes progress: a failed run
        if n_sweeps >= max_sweeps:
            break
        prior_old = prior.params()
        prior_target = prior.targets(state)
        while True:
            W_new = _damped(W, buf.W_target, step, spare_W)
            H_new = _damped(H, buf.H_target, step, spare_H)
            if prior_target is not None:
                prior.set(tuple(o + step * (t - o)
                                for o, t in zip(prior_old, prior_target)))
            new = _posterior(C, sites, W_new, H_new, prior.prec, prior.shift,
                             prior.need_coord_var)
            if new is not None or step < min_damping:
                break
            step *= 0.5
            good_sweeps = 0
        if new is None:
            if prior_target is not None:
                prior.set(prior_old)
            warnings.warn(f"{label}: no damped step keeps the posterior "
                          f"proper (damping < {min_damping}); stopping after "
                          f"{n_sweeps} sweeps", EPConvergenceWarning,
                          stacklevel=4)
            break       # the pair buffers already hold this state's marginals
        coord_change = _coord_change(state, new)
        spare_W, spare_H = W, H
        W, H, state = W_new, H_new, new
        n_sweeps += 1
        good_sweeps += 1
        if good_sweeps >= 5 and step < ceiling:
            step = min(ceiling, 1.5 * step)
            good_sweeps = 0
    # the energy is one more O(P) pass, skipped (log_z nan) where the caller
    # needs the fit only: a grid path scored by leave-one-out
    log_z = _log_z(state, sites, prior, buf, W, H, label) if with_log_z \
        else np.nan
    scale, second_moment = _scale_identity(state, prior)
    # off by a few percent once the moments stopped moving, or outside
    # [0.1, 1.9] at any point, or E||w||^2 near 0: the run collapsed (an
    # unfinished run that is still on its way is merely not converged)
    degenerate = (not (abs(scale - 1.0) <= (_SCALE_TOLERANCE if converged
                                            else _SCALE_COLLAPSE))
                  or not second_moment > prior.collapse_floor)
    if degenerate:
        warnings.warn(f"{label} failed: the approximation is degenerate "
                      f"(E||w||^2 = {second_moment:.3g}, scale identity "
                      f"{scale:.3g}, 1 at any EP fixed point: "
                      "the sites drove the posterior scale away, as happens "
                      "when lam / P is too large for EP on data the score "
                      "cannot separate); use a smaller lam or SMC",
                      EPConvergenceWarning, stacklevel=4)
        converged = False
        log_z = np.nan
    elif not converged:
        warnings.warn(f"{label} did not converge in {n_sweeps} sweeps (largest "
                      f"moment change {change:.3g} > tol = {tol:g}, damping "
                      f"{step:.3g}); increase max_sweeps or lower damping",
                      EPConvergenceWarning, stacklevel=4)
    return _Run(state, W, H, log_z, n_sweeps, converged, step, change,
                int(buf.improper.sum()), history, scale, degenerate)


# |E||w||^2 / r - 1| above this: the EP state is not near a fixed point
# (after convergence of the moments; at any point).
_SCALE_TOLERANCE = 0.05
_SCALE_COLLAPSE = 0.9


def _scale_identity(state, prior):
    """``(E_q[sum_k prec_k w_k^2 - shift_k w_k] / r, E_q ||w||^2)``: the
    first is 1 at every EP fixed point.

    The risk depends on the scores only through their signs, so each pair
    site is invariant to ``u -> c u``; for its tilted distribution ``p``
    integration by parts gives ``tau_c E_p[u^2] - nu_c E_p[u] = 1``, the same
    as for the Gaussian marginal once the moments match, so each site adds
    ``W E[u^2] - H E[u] = 0`` to Stein's identity
    ``E_q[w' (Lambda w - eta)] = r`` of the Gaussian approximation. What is
    left is the prior sites' share (``E_q ||w||^2 = r`` under ``N(0, I)``:
    the radius keeps its prior law, as under the exact posterior). A state
    far from 1 has collapsed (or blown up) along the scale, where only the
    prior holds the sites back.
    """
    coord_var = state.coord_var
    if coord_var is None:
        inv_chol = linalg.solve_triangular(state.chol, np.eye(state.chol.shape[0]),
                                           lower=True, check_finite=False)
        coord_var = np.einsum("ij,ij->j", inv_chol, inv_chol)
    m = state.w_mean
    second = coord_var + m * m
    total = np.sum(prior.prec * second - prior.shift * m)
    return float(total / m.size), float(np.sum(second))


def _check_finite_result(res, label):
    arrays = {"mean": res.mean, "score_mean": res.score_mean,
              "score_var": res.score_var, "site_precision": res.site_precision,
              "site_shift": res.site_shift}
    for name, arr in arrays.items():
        if not np.all(np.isfinite(arr)):
            raise FloatingPointError(f"{label}: {name} is not finite")


def check_fit_options(damping, tol, max_sweeps):
    """``(damping, tol, max_sweeps)`` checked: damping in (0, 1], tol > 0,
    max_sweeps an integer >= 1."""
    damping = check_positive(damping, "damping")
    if damping > 1:
        raise InputError(f"damping must be in (0, 1], got {damping}")
    return (damping, check_positive(tol, "tol"),
            check_count(max_sweeps, "max_sweeps"))
