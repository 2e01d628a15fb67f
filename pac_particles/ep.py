"""Expectation Propagation for AUC Gibbs pseudo-posteriors.

Implements three Gaussian EP approximations of

    pi_lam(theta)  ∝  prior(theta) * exp(-lam * R_n(theta)),

all built on one site-update core. The risk factorises over the ``P =
n_pos * n_neg`` positive/negative pairs, so the target has one *pair site* per
pair, a step function of the score difference ``u_ij = s_i - s_j``::

    t_ij(u) = exp(-kappa * 1{u < 0}),      kappa = lam / (n_pos * n_neg),

(``lam`` multiplies the *fraction* of mis-ordered pairs, the convention of the
whole package; the paper's EP section calls ``kappa`` ``gamma'``). Each site is
approximated by a one-dimensional Gaussian factor
``q_ij(u) = exp(-0.5 * site_precision * u^2 + site_shift * u)`` and its
tilted moments are available in closed form: under a cavity ``N(mu, s^2)``,
``Z_ij = exp(-kappa) + (1 - exp(-kappa)) Phi(mu / s)``.

* :class:`EPLinear` -- linear scores ``s = X theta``, Gaussian prior
  ``N(0, diag(prior_var))``; parallel EP with damping (paper Algorithm 4).
  Nothing is done pair by pair with d x d algebra: the site precisions form
  the weighted bipartite Laplacian ``L`` of the pair graph (built in O(P)),
  the posterior precision is ``S0^-1 + X' L X`` and all pair marginals come
  from the score covariance ``X V X'`` (only its pos x neg block and its
  diagonal). One sweep costs O(P r + n r^2 + r^3) with ``r = min(d, n)``:
  when d > n the same computation runs in score space (a GP with the linear
  kernel ``X S0 X'``), exactly.
* :class:`EPSpikeSlab` -- spike-and-slab prior
  ``prod_k [p N(0, v1) + (1 - p) N(0, v0)]`` (``v0 = 0``: Dirac spike), with
  the Bernoulli x Gaussian prior sites of Hernandez-Lobato et al. (2013) on
  top of the pair sites; outputs ``inclusion_probs``.
* :class:`EPGP` -- Gaussian-process scores ``s ~ N(0, K)``; the posterior
  covariance of the training scores is ``C (I + C' L C)^-1 C'`` with ``C`` the
  Cholesky factor of ``K`` (plus jitter, added geometrically until the
  factorisation succeeds); O(P + n^3) per sweep. ``predict`` gives the
  predictive mean and variance of new scores.

Internally every model is the same computation on a factor ``C`` (n x r) of
the prior covariance of the training scores: whitened coordinates ``w`` with
``s = C w``, posterior precision ``Lambda = prior_precision + C' L C``.

Each model returns an :class:`EPResult` (``mean``, ``cov``, ``log_z``, the EP
energy approximating ``log Z``, ``n_sweeps``, ``converged``, the site
parameters) and offers

* ``log_z_grad()``: the gradient of ``log_z`` with respect to the prior's
  hyper-parameters (exact at an EP fixed point, Seeger 2005), and
  ``fit_hyperparameters()`` which maximises ``log_z`` with L-BFGS-B;
* ``loo_scores()`` / ``loo_auc()``: approximate leave-one-out scores, obtained
  by removing from the global approximation *all* the sites that involve a
  data point (Opper & Winther 2000), hence an EP cross-validation AUC without
  refitting.

Scale invariance. The risk depends on the scores only through their order,
so ``theta -> c theta`` (c > 0) leaves it unchanged. Under an isotropic
Gaussian prior the evidence therefore does not depend on ``prior_var`` (and
the EP energy, evaluated at the EP fixed point, does not either); likewise the
GP amplitude, and a common scaling of the spike-and-slab variances
``(v0, v1)``, do not change ``log_z``. Only relative scales (ARD variances,
GP lengthscales, ``p`` and ``v0 / v1``) are worth fitting.

Robustness. Sites of this kind can get a negative precision (the tilted
variance exceeds the cavity variance when a pair is badly mis-ordered). Sites
are updated in parallel with damping; a site whose cavity is improper keeps
its previous value; a damped step after which the posterior precision is not
positive definite (or not finite) is retried with half the damping, and the
damping recovers slowly afterwards. Convergence is declared when no pair (or
prior) marginal moves by more than ``tol`` (means in posterior standard
deviations, variances relatively); otherwise ``converged`` is False and an
:class:`EPConvergenceWarning` is issued. Non-finite output raises
``FloatingPointError``.

Performance. The O(P) pair pass is one fused numba kernel (threaded with
``numba.prange`` above 250,000 pairs); BLAS is limited to one thread inside
the EP loop (attribute ``blas_threads`` of every model; ``None`` lifts the
limit), because the loop's many small triangular solves are much slower
with OpenBLAS threads waking up on every call.

Example
-------
::

    from pac_particles.data import load_dataset
    from pac_particles.ep import EPLinear, EPGP, SquaredExponential

    X, y, _ = load_dataset("pima")
    ep = EPLinear(X, y, lam=len(y))          # standardised, prior N(0, I)
    res = ep.fit()
    res.mean, res.log_z, res.n_sweeps, res.converged
    ep.loo_auc()                             # EP cross-validation AUC
    gp = EPGP(X, y, lam=len(y), kernel=SquaredExponential(lengthscale=3.0))
    gp.fit_hyperparameters()                 # maximise log_z over lengthscales
    mean, var = gp.predict(X[:5], return_var=True)

References
----------
Ridgway, J., Alquier, P., Chopin, N. and Liang, F. (2014). PAC-Bayesian AUC
classification and scoring. NIPS 27 (sections 3.3, 3.4, 4; appendix B.2-B.3).

Minka, T. (2001). Expectation Propagation for approximate Bayesian inference.
UAI 17, 362-369.

Hernandez-Lobato, D., Hernandez-Lobato, J. M. and Dupont, P. (2013).
Generalized spike-and-slab priors for Bayesian group feature selection using
expectation propagation. JMLR 14, 1891-1945.

Opper, M. and Winther, O. (2000). Gaussian processes for classification:
mean-field algorithms. Neural Computation 12(11), 2655-2684.

Seeger, M. (2005). Expectation propagation for exponential families.
Technical report, University of California at Berkeley.

van Gerven, M., Cseke, B., de Lange, F. and Heskes, T. (2010). Efficient
Bayesian multivariate fMRI analysis using a sparsifying spatio-temporal prior.
NeuroImage 50, 150-161 (parallel EP).
"""

import math
import warnings
from dataclasses import dataclass, field

import numba
import numpy as np
from scipy import linalg, optimize
from scipy.special import ndtr
from threadpoolctl import threadpool_limits

from .auc import pu_lam, split_risk
from .data import check_lam, validate_xy
from .priors import KernelJitterWarning, SquaredExponential, stable_cholesky

__all__ = ["EPLinear", "EPSpikeSlab", "EPGP", "EPResult", "SquaredExponential",
           "EPConvergenceWarning", "KernelJitterWarning",
           "pair_tilted_moments"]

_LOG_2PI = math.log(2.0 * math.pi)
# Memory budget (float64 entries) of the batched leave-one-out computations.
_LOO_BLOCK_ENTRIES = 4_000_000


class EPConvergenceWarning(RuntimeWarning):
    """EP stopped before its moments converged (see ``EPResult.converged``)."""


# --------------------------------------------------------------- pair sites

def pair_tilted_moments(mu, var, kappa):
    """Moments of a pair site times a Gaussian cavity, in closed form.

    For ``u ~ N(mu, var)`` and ``t(u) = exp(-kappa 1{u < 0})``::

        Z    = e^-kappa + (1 - e^-kappa) Phi(z),       z = mu / sqrt(var)
        mean = mu + sqrt(var) beta,                    beta = (1 - e^-kappa) phi(z) / Z
        var' = var (1 - beta (beta + z))

    Parameters
    ----------
    mu, var : arrays (broadcastable), ``var > 0``
    kappa : float > 0

    Returns
    -------
    log_z, mean, var : arrays of the tilted distribution ``t(u) N(u; mu, var)``.
    """
    mu = np.asarray(mu, dtype=float)
    var = np.asarray(var, dtype=float)
    s = np.sqrt(var)
    z = mu / s
    a = -np.expm1(-kappa)
    zz = np.exp(-kappa) + a * ndtr(z)
    beta = a * np.exp(-0.5 * z * z) / math.sqrt(2 * math.pi) / zz
    return np.log(zz), mu + s * beta, var * (1.0 - beta * (beta + z))


_SQRT_HALF = math.sqrt(0.5)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


@numba.njit(cache=True, inline="always")
def _pair_tilted(tau_c, nu_c, c, a):
    """EP update of one pair site from its cavity ``N(nu_c/tau_c, 1/tau_c)``.

    Returns ``(Z, site_precision, site_shift)`` of the full update, in the
    form ``site_precision = tau_c rho / (1 - rho)``, ``site_shift =
    (z rho + beta) / (s_c (1 - rho))``, ``rho = beta (beta + z)``, which
    avoids the cancellation of ``1/var_tilted - 1/var_cavity`` for weak
    sites (see :func:`pair_tilted_moments` for the notation).
    """
    s_c = math.sqrt(1.0 / tau_c)
    z = nu_c * s_c                       # mu_c / s_c
    zz = c + a * 0.5 * math.erfc(-z * _SQRT_HALF)
    beta = a * _INV_SQRT_2PI * math.exp(-0.5 * z * z) / zz
    rho = beta * (beta + z)
    if not rho < 1.0:
        # the tilted variance var_c (1 - rho) is positive in exact arithmetic
        return zz, math.inf, math.inf
    inv = 1.0 / (1.0 - rho)
    return zz, tau_c * rho * inv, (z * rho + beta) * inv / s_c


@numba.njit(cache=True, inline="always")
def _pair_row(i, score_mean, score_var, cov_pn, site_prec, site_shift, active,
              c, a, has_previous, pair_mean, pair_var, target_prec,
              target_shift, row_change, row_improper):
    """The pairs (i, .) of positive i: see :func:`_pair_sweep`."""
    n_pos, n_neg = site_prec.shape
    worst = 0.0
    bad = 0
    for j in range(n_neg):
        target_prec[i, j] = site_prec[i, j]
        target_shift[i, j] = site_shift[i, j]
        if not active[i, j]:
            continue
        m = score_mean[i] - score_mean[n_pos + j]
        both = score_var[i] + score_var[n_pos + j]
        v = both - 2.0 * cov_pn[i, j]
        # rounding in a difference of nearly equal terms must not give v <= 0
        if v < 1e-13 * both:
            v = 1e-13 * both
        inv_v = 1.0 / v
        if has_previous:
            dm = m - pair_mean[i, j]
            ch = max(dm * dm * inv_v, ((v - pair_var[i, j]) * inv_v) ** 2)
            if not ch <= worst:       # also catches NaN
                worst = ch
        pair_mean[i, j] = m
        pair_var[i, j] = v
        tau_c = inv_v - site_prec[i, j]
        nu_c = m * inv_v - site_shift[i, j]
        if not (tau_c > 0.0 and math.isfinite(tau_c) and math.isfinite(nu_c)):
            bad += 1
            continue
        _, prec, shift = _pair_tilted(tau_c, nu_c, c, a)
        if not (math.isfinite(prec) and math.isfinite(shift)):
            bad += 1
            continue
        target_prec[i, j] = prec
        target_shift[i, j] = shift
    row_change[i] = math.sqrt(worst)
    row_improper[i] = bad


@numba.njit(cache=True)
def _pair_sweep_serial(score_mean, score_var, cov_pn, site_prec, site_shift,
                       active, kappa, has_previous, pair_mean, pair_var,
                       target_prec, target_shift, row_change, row_improper):
    c, a = math.exp(-kappa), -math.expm1(-kappa)
    for i in range(site_prec.shape[0]):
        _pair_row(i, score_mean, score_var, cov_pn, site_prec, site_shift,
                  active, c, a, has_previous, pair_mean, pair_var, target_prec,
                  target_shift, row_change, row_improper)


@numba.njit(cache=True, parallel=True)
def _pair_sweep_parallel(score_mean, score_var, cov_pn, site_prec, site_shift,
                         active, kappa, has_previous, pair_mean, pair_var,
                         target_prec, target_shift, row_change, row_improper):
    c, a = math.exp(-kappa), -math.expm1(-kappa)
    for i in numba.prange(site_prec.shape[0]):
        _pair_row(i, score_mean, score_var, cov_pn, site_prec, site_shift,
                  active, c, a, has_previous, pair_mean, pair_var, target_prec,
                  target_shift, row_change, row_improper)


# Below this many pairs a sweep is a few milliseconds and waking numba's
# worker threads costs more than it saves (much more on a loaded machine).
_PARALLEL_MIN_PAIRS = 250_000


def _pair_sweep(*args):
    """One fused O(P) pass over the pairs.

    From the node marginals (``score_mean``, ``score_var``, positives first)
    and the pos x neg block ``cov_pn`` of the score covariance it computes
    every pair marginal ``u_ij ~ N(pair_mean, pair_var)``, its change since
    the previous sweep (``|d mean| / sd`` and ``|d var| / var``, per row of
    positives in ``row_change``; the buffers hold the previous values on
    entry) and the undamped EP update of each site (``target_*``). A site
    whose cavity is improper keeps its value (removing it would not define a
    tilted distribution) and is counted in ``row_improper``.
    """
    if args[3].size >= _PARALLEL_MIN_PAIRS:
        _pair_sweep_parallel(*args)
    else:
        _pair_sweep_serial(*args)


@numba.njit(cache=True)
def _pair_energy(pair_mean, pair_var, site_prec, site_shift, active, kappa):
    """Per-row sums of ``log Z_ij + phi(cavity) - phi(posterior)``.

    ``phi(tau, nu) = nu^2 / (2 tau) - log(tau) / 2`` is the log-normaliser of
    a 1-D Gaussian in natural parameters (the 2 pi cancels). Returns
    ``(row energies, row counts of improper cavities)``.
    """
    c = math.exp(-kappa)
    a = -math.expm1(-kappa)
    n_pos, n_neg = site_prec.shape
    energy = np.zeros(n_pos)
    improper = np.zeros(n_pos, dtype=np.int64)
    for i in range(n_pos):
        total = 0.0
        bad = 0
        for j in range(n_neg):
            if not active[i, j]:
                continue
            tau = 1.0 / pair_var[i, j]
            tau_c = tau - site_prec[i, j]
            nu_c = pair_mean[i, j] * tau - site_shift[i, j]
            if not (tau_c > 0.0 and math.isfinite(tau_c)):
                bad += 1
                continue
            mu_c = nu_c / tau_c
            zz, _, _ = _pair_tilted(tau_c, nu_c, c, a)
            total += (math.log(zz) + 0.5 * mu_c * nu_c - 0.5 * math.log(tau_c)
                      - 0.5 * pair_mean[i, j] ** 2 * tau + 0.5 * math.log(tau))
        energy[i] = total
        improper[i] = bad
    return energy, improper


class _PairGraph:
    """The bipartite graph of positive/negative pairs that carry a site.

    Rows of every n-sized array are ordered positives first. A pair whose two
    inputs have identical prior scores (``x_i == x_j``) is a tie for every
    theta: it contributes the constant ``exp(-kappa / 2)`` (ties count 1/2)
    and gets no site.
    """

    def __init__(self, n_pos, n_neg, tied, lam):
        self.n_pos, self.n_neg = n_pos, n_neg
        self.active = np.ascontiguousarray(~tied)
        self.n_ties = int(tied.sum())
        self.lam = lam
        self.kappa = lam / (n_pos * n_neg)

    def laplacian_times(self, W, C):
        """``L C`` for the Laplacian ``L`` with edge weights ``W`` (O(P r))."""
        Cp, Cn = C[:self.n_pos], C[self.n_pos:]
        return np.vstack([W.sum(axis=1)[:, None] * Cp - W @ Cn,
                          W.sum(axis=0)[:, None] * Cn - W.T @ Cp])

    def laplacian(self, W):
        """Dense ``L`` (n x n), for the hyper-parameter gradients."""
        n = self.n_pos + self.n_neg
        L = np.zeros((n, n))
        L[:self.n_pos, self.n_pos:] = -W
        L[self.n_pos:, :self.n_pos] = -W.T
        L[np.arange(n), np.arange(n)] = np.concatenate([W.sum(axis=1),
                                                        W.sum(axis=0)])
        return L

    def node_vector(self, H):
        """``g`` with ``sum_ij h_ij (s_i - s_j) = g . s``."""
        return np.concatenate([H.sum(axis=1), -H.sum(axis=0)])


def _tied_rows(X_pos, X_neg):
    """Boolean (n_pos, n_neg): the pair's two inputs are identical."""
    _, inverse = np.unique(np.vstack([X_pos, X_neg]), axis=0,
                           return_inverse=True)
    inverse = inverse.ravel()
    return inverse[:X_pos.shape[0], None] == inverse[None, X_pos.shape[0]:]


# ------------------------------------------------------- the Gaussian core

@dataclass
class _State:
    """Gaussian approximation in whitened coordinates ``w`` (``s = C w``)."""
    chol: np.ndarray          # lower Cholesky factor of Lambda
    eta: np.ndarray           # Lambda w_mean
    w_mean: np.ndarray
    score_mean: np.ndarray    # (n,), positives first
    score_var: np.ndarray     # (n,)
    cov_pn: np.ndarray        # (n_pos, n_neg) block of the score covariance
    coord_var: np.ndarray = None   # diag(Lambda^-1), when the prior needs it

    @property
    def logdet(self):
        return 2.0 * np.sum(np.log(np.diag(self.chol)))


def _posterior(C, graph, W, H, prior_prec, prior_shift, need_coord_var=False):
    """Posterior given all sites; None if its precision is not positive definite.

    ``Lambda = diag(prior_prec) + C' L C``, ``eta = prior_shift + C' g``.
    Score covariance ``C Lambda^-1 C' = B' B`` with ``B = chol^-1 C'``: its
    diagonal and pos x neg block give every pair marginal in O(P r).
    """
    LC = graph.laplacian_times(W, C)
    lam_mat = C.T @ LC
    lam_mat = 0.5 * (lam_mat + lam_mat.T)
    lam_mat[np.diag_indices_from(lam_mat)] += prior_prec
    eta = prior_shift + C.T @ graph.node_vector(H)
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
    n_pos = graph.n_pos
    cov_pn = B[:, :n_pos].T @ B[:, n_pos:]
    coord_var = None
    if need_coord_var:
        inv_chol = linalg.solve_triangular(chol, np.eye(chol.shape[0]),
                                           lower=True, check_finite=False)
        coord_var = np.einsum("ij,ij->j", inv_chol, inv_chol)
    if not (np.all(np.isfinite(w_mean)) and np.all(np.isfinite(score_var))
            and np.all(score_var > 0)):
        return None
    return _State(chol, eta, w_mean, score_mean, score_var, cov_pn, coord_var)


class _FixedGaussianPrior:
    """Whitened Gaussian prior ``N(0, I_r)``: exact, no site to update."""

    need_coord_var = False

    def __init__(self, r):
        self.prec = np.ones(r)
        self.shift = np.zeros(r)

    def targets(self, state):
        return None

    def set(self, params):
        pass

    def params(self):
        return None

    def energy(self, state):
        # Phi(Lambda, eta) - Phi(I, 0): the (r/2) log 2 pi terms cancel
        return 0.0


class _SpikeSlabPrior:
    """Bernoulli x Gaussian EP sites for ``p N(0, v1) + (1 - p) N(0, v0)``.

    Site k is ``exp(rho_k z_k - u_k theta_k^2 / 2 + w_k theta_k)``; the
    Bernoulli prior of ``z_k`` is kept exactly, so the ``z`` part of the
    approximation is ``Bernoulli(sigmoid(logit p + rho_k))`` (Hernandez-Lobato
    et al. 2013, section 4; paper appendix B.3).
    """

    need_coord_var = True

    def __init__(self, d, p, v0, v1):
        self.p, self.v0, self.v1 = p, v0, v1
        # initial sites: the prior's moment-matched Gaussian, z at its prior
        self.prec = np.full(d, 1.0 / (p * v1 + (1 - p) * v0))
        self.shift = np.zeros(d)
        self.log_odds = np.zeros(d)
        self.n_improper = 0

    def params(self):
        return (self.prec.copy(), self.shift.copy(), self.log_odds.copy())

    def set(self, params):
        self.prec, self.shift, self.log_odds = (np.array(a) for a in params)

    def _cavity(self, state):
        tau = 1.0 / state.coord_var
        tau_c = tau - self.prec
        nu_c = state.w_mean * tau - self.shift
        proper = (tau_c > 0) & np.isfinite(tau_c)
        return tau, tau_c, nu_c, proper

    def _components(self, mu_c, var_c):
        """log N(mu_c; 0, v_z + var_c) for the spike (0) and the slab (1)."""
        s0 = self.v0 + var_c
        s1 = self.v1 + var_c
        log_n0 = -0.5 * (_LOG_2PI + np.log(s0) + mu_c ** 2 / s0)
        log_n1 = -0.5 * (_LOG_2PI + np.log(s1) + mu_c ** 2 / s1)
        return log_n0, log_n1, s0, s1

    def targets(self, state):
        tau, tau_c, nu_c, proper = self._cavity(state)
        self.n_improper = int(np.sum(~proper))
        prec, shift, log_odds = self.params()
        k = proper
        var_c = 1.0 / tau_c[k]
        mu_c = nu_c[k] * var_c
        log_n0, log_n1, s0, s1 = self._components(mu_c, var_c)
        log_p1 = np.log(self.p) + log_n1
        log_p0 = np.log1p(-self.p) + log_n0
        log_z = np.logaddexp(log_p0, log_p1)
        w1 = np.exp(log_p1 - log_z)
        # component posteriors N(m_z, c_z); the Dirac spike (v0 = 0) gives 0, 0
        m0, m1 = mu_c * self.v0 / s0, mu_c * self.v1 / s1
        c0, c1 = self.v0 * var_c / s0, self.v1 * var_c / s1
        mean = w1 * m1 + (1 - w1) * m0
        var = w1 * (c1 + m1 ** 2) + (1 - w1) * (c0 + m0 ** 2) - mean ** 2
        # a coordinate pinned at 0 by a Dirac spike: keep a finite precision
        var = np.maximum(var, 1e-10 * var_c)
        prec[k] = 1.0 / var - tau_c[k]
        shift[k] = mean / var - nu_c[k]
        log_odds[k] = log_n1 - log_n0
        return prec, shift, log_odds

    def inclusion_probs(self):
        logit = math.log(self.p) - math.log1p(-self.p) + self.log_odds
        return 1.0 / (1.0 + np.exp(-logit))

    def energy(self, state):
        tau, tau_c, nu_c, proper = self._cavity(state)
        if not np.all(proper):
            return np.nan
        var_c = 1.0 / tau_c
        mu_c = nu_c * var_c
        log_n0, log_n1, _, _ = self._components(mu_c, var_c)
        log_z = np.logaddexp(np.log1p(-self.p) + log_n0, np.log(self.p) + log_n1)
        mu = state.w_mean
        terms = (log_z + 0.5 * mu_c * nu_c - 0.5 * np.log(tau_c)
                 - 0.5 * mu ** 2 * tau + 0.5 * np.log(tau))
        # Phi(Lambda, eta) carries (d/2) log 2 pi that no prior term cancels
        return float(np.sum(terms) + 0.5 * tau.size * _LOG_2PI)

    def grad(self, state):
        """d log_z / d (p, v0, v1) with the cavities fixed (exact at a fixed
        point: the EP energy is stationary in the site parameters)."""
        tau, tau_c, nu_c, proper = self._cavity(state)
        var_c = 1.0 / tau_c
        mu_c = nu_c * var_c
        log_n0, log_n1, s0, s1 = self._components(mu_c, var_c)
        log_p0 = np.log1p(-self.p) + log_n0
        log_p1 = np.log(self.p) + log_n1
        log_z = np.logaddexp(log_p0, log_p1)
        w0, w1 = np.exp(log_p0 - log_z), np.exp(log_p1 - log_z)
        g_p = np.sum(w1 / self.p - w0 / (1 - self.p))
        # d log N(mu; 0, s) / ds = (mu^2 / s - 1) / (2 s)
        g_v0 = np.sum(w0 * (mu_c ** 2 / s0 - 1) / (2 * s0))
        g_v1 = np.sum(w1 * (mu_c ** 2 / s1 - 1) / (2 * s1))
        return {"p": float(g_p), "v0": float(g_v0), "v1": float(g_v1)}


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


def _run_ep(C, graph, prior, damping, tol, max_sweeps, init=None,
            min_damping=1e-4, label="EP"):
    """Parallel EP with damping (paper Algorithm 4) on the factor ``C``.

    All sites are updated from the same posterior. A damped step that makes
    the posterior precision indefinite (or non-finite) is retried with half
    the damping ("a sweep fails") and the damping then grows back (x1.5 per 5
    good sweeps). A moment change that grows for 3 sweeps in a row, goes up
    and down for 6, or does not improve its best value by 10% in 10 sweeps
    means the parallel iteration is unstable (or cycling) at this damping:
    its ceiling is halved.
    Convergence: no marginal moved by more than ``tol`` in the last sweep.
    """
    shape = (graph.n_pos, graph.n_neg)
    if init is None:
        W, H = np.zeros(shape), np.zeros(shape)
    else:
        W, H = init[0].copy(), init[1].copy()
        W[~graph.active] = 0.0
        H[~graph.active] = 0.0
    state = _posterior(C, graph, W, H, prior.prec, prior.shift,
                       prior.need_coord_var)
    if state is None and init is not None:
        # a warm start that is not valid for these hyper-parameters: restart
        W, H = np.zeros(shape), np.zeros(shape)
        state = _posterior(C, graph, W, H, prior.prec, prior.shift,
                           prior.need_coord_var)
    if state is None:
        raise FloatingPointError(f"{label}: the prior precision is not "
                                 "positive definite")
    pair_mean, pair_var = np.zeros(shape), np.ones(shape)
    W_target, H_target = np.empty(shape), np.empty(shape)
    row_change = np.empty(graph.n_pos)
    row_improper = np.zeros(graph.n_pos, dtype=np.int64)
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
        _pair_sweep(state.score_mean, state.score_var, state.cov_pn, W, H,
                    graph.active, graph.kappa, n_sweeps > 0, pair_mean,
                    pair_var, W_target, H_target, row_change, row_improper)
        if n_sweeps > 0:
            change = max(float(row_change.max()), coord_change)
            history.append(change)
            if change < tol:
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
        if n_sweeps >= max_sweeps:
            break
        prior_old = prior.params()
        prior_target = prior.targets(state)
        while True:
            W_new = W + step * (W_target - W)
            H_new = H + step * (H_target - H)
            if prior_target is not None:
                prior.set(tuple(o + step * (t - o)
                                for o, t in zip(prior_old, prior_target)))
            new = _posterior(C, graph, W_new, H_new, prior.prec, prior.shift,
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
        W, H, state = W_new, H_new, new
        n_sweeps += 1
        good_sweeps += 1
        if good_sweeps >= 5 and step < ceiling:
            step = min(ceiling, 1.5 * step)
            good_sweeps = 0
    rows, improper_rows = _pair_energy(pair_mean, pair_var, W, H, graph.active,
                                       graph.kappa)
    improper_end = int(improper_rows.sum())
    log_z = (0.5 * float(state.eta @ state.w_mean) - 0.5 * state.logdet
             + float(rows.sum()) + prior.energy(state)
             - 0.5 * graph.kappa * graph.n_ties)
    if improper_end:
        warnings.warn(f"{label}: {improper_end} pair site(s) have an improper "
                      "cavity at the end; log_z is not defined (nan)",
                      EPConvergenceWarning, stacklevel=4)
        log_z = np.nan
    elif not np.isfinite(log_z):
        warnings.warn(f"{label}: the EP energy is not finite (a prior-site "
                      "cavity is improper); log_z is nan",
                      EPConvergenceWarning, stacklevel=4)
    if not converged:
        warnings.warn(f"{label} did not converge in {n_sweeps} sweeps (largest "
                      f"moment change {change:.3g} > tol = {tol:g}, damping "
                      f"{step:.3g}); increase max_sweeps or lower damping",
                      EPConvergenceWarning, stacklevel=4)
    return _Run(state, W, H, log_z, n_sweeps, converged, step, change,
                int(row_improper.sum()), history)


def _loo_scores(C, graph, W, H, state):
    """Leave-one-out score marginals: remove every site of a data point.

    For node i with star Laplacian ``L_i`` (its own sites only),
    ``Lambda_i = Lambda - C' L_i C`` and ``eta_i = eta - C' g_i``; the LOO
    score of point i is ``c_i' w`` under ``N(Lambda_i^-1 eta_i,
    Lambda_i^-1)`` (Opper & Winther 2000), where

        C' L_i C = a_i c_i c_i' - c_i z_i' - z_i c_i' + sum_j W_ij c_j c_j',

    ``a_i = sum_j W_ij`` and ``z_i = sum_j W_ij c_j`` over the partners j of
    i. Small r: the r x r systems are formed and solved in batches,
    O(P r^2 + n r^3). Large r (GP, score space): preconditioned conjugate
    gradients with ``Lambda`` as preconditioner, all n systems at once, each
    iteration O(n r^2 + P r).
    """
    if C.shape[1] <= _LOO_DIRECT_MAX_RANK:
        return _loo_direct(C, graph, W, H, state)
    return _loo_cg(C, graph, W, H, state)


_LOO_DIRECT_MAX_RANK = 96


def _star_parts(C, graph, W, H):
    """Per-node pieces of the star of every node (positives first)."""
    n_pos = graph.n_pos
    Cp, Cn = C[:n_pos], C[n_pos:]
    a = np.concatenate([W.sum(axis=1), W.sum(axis=0)])
    z = np.vstack([W @ Cn, W.T @ Cp])
    # C' g_i: sum_j h_ij (c_i - c_j) for a positive, -sum_i h_ij (c_j - c_i)
    star_g = np.vstack([H.sum(axis=1)[:, None] * Cp - H @ Cn,
                        -(H.sum(axis=0)[:, None] * Cn - H.T @ Cp)])
    return a, z, star_g


def _loo_direct(C, graph, W, H, state):
    chol = state.chol
    lam_mat = chol @ chol.T
    n_pos = graph.n_pos
    a_all, z_all, g_all = _star_parts(C, graph, W, H)
    mean = np.empty(C.shape[0])
    var = np.empty(C.shape[0])
    r = C.shape[1]
    # positives: partners are the negatives (rows of W); negatives: columns
    for partners, Wt, offset, count in ((C[n_pos:], W, 0, n_pos),
                                        (C[:n_pos], W.T, n_pos, graph.n_neg)):
        m = partners.shape[0]
        block = max(1, _LOO_BLOCK_ENTRIES // max(1, r * max(m, r)))
        for start in range(0, count, block):
            idx = np.arange(start, min(count, start + block)) + offset
            ci, a, z = C[idx], a_all[idx], z_all[idx]
            Wb = Wt[idx - offset]
            M = np.matmul(partners.T[None, :, :] * Wb[:, None, :], partners)
            star = (a[:, None, None] * ci[:, :, None] * ci[:, None, :]
                    - ci[:, :, None] * z[:, None, :]
                    - z[:, :, None] * ci[:, None, :] + M)
            rhs = np.stack([state.eta[None] - g_all[idx], ci], axis=-1)
            try:
                sol = np.linalg.solve(lam_mat[None] - star, rhs)
            except np.linalg.LinAlgError:
                sol = np.full(rhs.shape, np.nan)
            mean[idx] = np.einsum("bk,bk->b", ci, sol[..., 0])
            var[idx] = np.einsum("bk,bk->b", ci, sol[..., 1])
    return mean, var


def _loo_cg(C, graph, W, H, state, rtol=1e-10, max_iter=500):
    n_pos = graph.n_pos
    Cp, Cn = C[:n_pos], C[n_pos:]
    a, z, star_g = _star_parts(C, graph, W, H)
    chol = state.chol
    lam_mat = chol @ chol.T

    def apply(X):
        """Column i of the output is (Lambda - C' L_i C) x_i."""
        cx = np.einsum("ik,ik->i", C, X)
        zx = np.einsum("ik,ik->i", z, X)
        out = X @ lam_mat
        out -= C * (a * cx - zx)[:, None] - z * cx[:, None]
        out[:n_pos] -= (W * (X[:n_pos] @ Cn.T)) @ Cn
        out[n_pos:] -= (W.T * (X[n_pos:] @ Cp.T)) @ Cp
        return out

    def precondition(R):
        return linalg.cho_solve((chol, True), R.T).T

    results = []
    for B in (state.eta[None, :] - star_g, C):
        # rows of B are the right-hand sides, one per node
        X = precondition(B)
        R = B - apply(X)
        Zr = precondition(R)
        Pd = Zr.copy()
        rz = np.einsum("ik,ik->i", R, Zr)
        norm_b = np.sqrt(np.einsum("ik,ik->i", B, B))
        done = np.sqrt(np.einsum("ik,ik->i", R, R)) <= rtol * norm_b
        for _ in range(max_iter):
            if np.all(done):
                break
            AP = apply(Pd)
            pap = np.einsum("ik,ik->i", Pd, AP)
            # an indefinite LOO precision shows up as p' A p <= 0
            alpha = np.where(done | (pap <= 0), 0.0, rz / np.where(pap > 0, pap, 1))
            X += alpha[:, None] * Pd
            R -= alpha[:, None] * AP
            Zr = precondition(R)
            rz_new = np.einsum("ik,ik->i", R, Zr)
            beta = np.where(done, 0.0, rz_new / np.where(rz > 0, rz, 1))
            Pd = Zr + beta[:, None] * Pd
            rz = rz_new
            done |= (np.sqrt(np.einsum("ik,ik->i", R, R)) <= rtol * norm_b) | (pap <= 0)
        X[~done] = np.nan
        results.append(np.einsum("ik,ik->i", C, X))
    mean, var = results
    return mean, var


# ------------------------------------------------------------ the results

@dataclass
class EPResult:
    """Outcome of an EP fit.

    Attributes
    ----------
    mean, cov : posterior mean and covariance of the parameter: theta (d,)
        for the linear models, the latent training scores (n,) for
        :class:`EPGP` (in the order of the input rows). ``cov`` of a
        score-space linear fit with large d is computed on first access.
    log_z : the EP energy, an approximation of ``log Z`` (``Z`` = normaliser
        of ``prior * exp(-lam R_n)``, the prior being a probability).
    n_sweeps : number of parallel sweeps run.
    converged : whether every marginal moved by less than ``tol`` in the last
        sweep.
    damping : damping in use at the end (lower than requested if sweeps
        failed).
    max_change : largest moment change of the last sweep.
    site_precision, site_shift : (n_pos, n_neg) parameters of the pair sites
        ``q_ij(u) = exp(-site_precision u^2 / 2 + site_shift u)``, rows the
        positives and columns the negatives in input order; 0 for tied pairs.
    score_mean, score_var : (n,) posterior marginals of the training scores.
    n_improper : pair sites left unchanged in the last sweep because their
        cavity was improper.
    space : ``"primal"``, ``"score"`` or ``"gp"``.
    inclusion_probs : (d,) posterior inclusion probabilities (spike-and-slab).
    prior_site_precision, prior_site_shift, prior_site_log_odds : (d,)
        spike-and-slab prior sites.
    history : largest moment change at each sweep.
    """

    mean: np.ndarray
    log_z: float
    n_sweeps: int
    converged: bool
    damping: float
    max_change: float
    site_precision: np.ndarray
    site_shift: np.ndarray
    score_mean: np.ndarray
    score_var: np.ndarray
    n_improper: int
    space: str
    inclusion_probs: np.ndarray = None
    prior_site_precision: np.ndarray = None
    prior_site_shift: np.ndarray = None
    prior_site_log_odds: np.ndarray = None
    history: list = field(default_factory=list, repr=False)
    _cov: np.ndarray = field(default=None, repr=False)
    _cov_fn: object = field(default=None, repr=False)

    @property
    def cov(self):
        if self._cov is None:
            self._cov = self._cov_fn()
        return self._cov

    def __repr__(self):
        return (f"EPResult(space={self.space!r}, log_z={self.log_z:.6g}, "
                f"n_sweeps={self.n_sweeps}, converged={self.converged}, "
                f"mean={np.array2string(self.mean[:5], precision=4)}"
                f"{'...' if self.mean.size > 5 else ''})")


def _check_finite_result(res, label):
    arrays = {"mean": res.mean, "score_mean": res.score_mean,
              "score_var": res.score_var, "site_precision": res.site_precision,
              "site_shift": res.site_shift}
    for name, arr in arrays.items():
        if not np.all(np.isfinite(arr)):
            raise FloatingPointError(f"{label}: {name} is not finite")


def _check_fit_options(damping, tol, max_sweeps):
    damping = float(damping)
    if not 0 < damping <= 1:
        raise ValueError(f"damping must be in (0, 1], got {damping}")
    tol = float(tol)
    if not tol > 0:
        raise ValueError(f"tol must be > 0, got {tol}")
    if int(max_sweeps) != max_sweeps or max_sweeps < 1:
        raise ValueError(f"max_sweeps must be a positive integer, got "
                         f"{max_sweeps}")
    return damping, tol, int(max_sweeps)


# ------------------------------------------------------------------ models

class _EPBase:
    """Shared plumbing: data order, the EP loop, LOO, result assembly."""

    _label = "EP"

    def _setup_data(self, X, y, lam, standardize, pu_prior=None):
        self.data = validate_xy(X, y, standardize=standardize)
        # PU labels: lam / (1 - pi) on the observed risk (pac_particles.auc)
        self.lam_pn = check_lam(lam)
        self.pu_prior = pu_prior
        self.lam = pu_lam(self.lam_pn, pu_prior)
        self.standardize = bool(standardize)
        y_bool = self.data.y
        self._perm = np.concatenate([np.flatnonzero(y_bool),
                                     np.flatnonzero(~y_bool)])
        self._inv_perm = np.empty_like(self._perm)
        self._inv_perm[self._perm] = np.arange(self._perm.size)
        self.n_pos, self.n_neg = self.data.n_pos, self.data.n_neg
        self.result_ = None
        self._run = None
        # BLAS threads inside the EP loop: its many small triangular solves
        # and products run far slower multi-threaded (OpenBLAS wakes idle
        # threads per call, and they compete with numba's threads); the O(P)
        # pair pass is parallelised with numba instead. None = no limit.
        self.blas_threads = 1

    def _fit_core(self, C, prior, space, warm_start):
        init = None
        if warm_start and self._run is not None:
            init = (self._run.W, self._run.H)
        with threadpool_limits(limits=self.blas_threads, user_api="blas"):
            run = _run_ep(C, self._graph, prior, self.damping, self.tol,
                          self.max_sweeps, init=init, label=self._label)
        self._run = run
        self._C = C
        self._prior = prior
        st = run.state
        res = EPResult(
            mean=None, log_z=float(run.log_z), n_sweeps=run.n_sweeps,
            converged=run.converged, damping=run.damping,
            max_change=run.max_change, site_precision=run.W, site_shift=run.H,
            score_mean=st.score_mean[self._inv_perm],
            score_var=st.score_var[self._inv_perm], n_improper=run.n_improper,
            space=space, history=run.history)
        return res

    def _require_fit(self):
        if self._run is None:
            self.fit()
        return self._run

    def loo_scores(self, return_var=False):
        """Approximate leave-one-out scores of the training points.

        All the pair sites involving point i are removed from the global EP
        approximation (not refitted), as in Opper & Winther (2000); the
        resulting Gaussian gives the predictive score of point i. Cost
        O(P r^2 + n r^3), r = min(d, n) (r = n for EPGP), against n refits.

        Returns
        -------
        mean : (n,) LOO score means, in input order
        var : (n,) LOO score variances (if ``return_var``)
        """
        run = self._require_fit()
        with threadpool_limits(limits=self.blas_threads, user_api="blas"):
            mean, var = _loo_scores(self._C, self._graph, run.W, run.H,
                                    run.state)
        bad = ~(np.isfinite(mean) & (var > 0))
        if np.any(bad):
            warnings.warn(f"{int(bad.sum())} leave-one-out cavities are "
                          "improper; their posterior marginal is used instead",
                          EPConvergenceWarning, stacklevel=2)
            mean[bad] = run.state.score_mean[bad]
            var[bad] = run.state.score_var[bad]
        mean, var = mean[self._inv_perm], var[self._inv_perm]
        return (mean, var) if return_var else mean

    def loo_auc(self):
        """EP cross-validation AUC: ``1 - R_n`` of the leave-one-out scores."""
        s = self.loo_scores()
        return 1.0 - split_risk(s[self.data.y], s[~self.data.y])


def _maximise(model, objective, x0, bounds, options, ep_tol):
    """Maximise ``log_z`` with L-BFGS-B; ``objective(x) -> (log_z, grad)``.

    EP runs warm-started at a tolerance ``ep_tol`` tighter than the model's:
    the gradient is exact only at the fixed point, and a loosely converged
    objective makes the line search fail.
    """
    def neg(x):
        with warnings.catch_warnings():
            # trial points may need jitter or more sweeps: report at the end
            warnings.simplefilter("ignore", EPConvergenceWarning)
            warnings.simplefilter("ignore", KernelJitterWarning)
            val, grad = objective(x)
        if not np.isfinite(val):
            # an EP failure at a trial point: push the line search back
            return 1e10, np.zeros_like(x)
        return -val, -grad

    tol = model.tol
    model.tol = min(tol, ep_tol)
    try:
        return optimize.minimize(neg, x0, jac=True, method="L-BFGS-B",
                                 bounds=bounds, options=options)
    finally:
        model.tol = tol


class EPLinear(_EPBase):
    """EP for linear scores ``x . theta`` under a Gaussian prior.

    Target ``N(theta; 0, diag(prior_var)) * exp(-lam R_n(X theta))``; pair
    sites as in the module docstring; parallel EP with damping (Ridgway et
    al. 2014, Algorithm 4) in O(P r + n r^2 + r^3) per sweep, r = min(d, n).

    Parameters
    ----------
    X : array of shape (n, d)
    y : array of shape (n,), binary labels
    lam : float > 0
        Multiplies the fraction of mis-ordered pairs; ``kappa = lam / P``.
    prior_var : float or array of shape (d,), > 0
        Prior variance(s) of theta (after constant columns are dropped). A
        scalar is the isotropic prior, whose value does not change ``log_z``
        nor the posterior direction.
    standardize : bool, default True
        Centre and scale the columns (see :func:`~pac_particles.data.validate_xy`).
    space : {"auto", "primal", "score"}
        ``"primal"``: d-dimensional theta; ``"score"``: the equivalent GP with
        kernel ``X diag(prior_var) X'`` (exact, n-dimensional); ``"auto"``
        picks score space when d > n.
    damping : float in (0, 1]
        Fraction of the full EP update taken per sweep (1 = undamped).
    tol : float > 0
        Convergence tolerance on the marginal moments.
    max_sweeps : int
    pu_prior : float in [0, 1), optional
        Positive-unlabelled labels (1 = labelled positive, 0 = unlabelled,
        a fraction ``pu_prior`` of which is positive): ``lam / (1 - pu_prior)``
        is used on the observed risk (see :mod:`pac_particles.auc`). The same
        argument is accepted by :class:`EPSpikeSlab` and :class:`EPGP`.

    Examples
    --------
    >>> import numpy as np
    >>> from pac_particles.ep import EPLinear
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((60, 3)); y = X[:, 0] + rng.standard_normal(60) > 0
    >>> res = EPLinear(X, y, lam=60).fit()
    >>> bool(res.converged), res.mean.shape
    (True, (3,))
    """

    _label = "EPLinear"

    def __init__(self, X, y, lam, prior_var=1.0, standardize=True,
                 space="auto", damping=0.7, tol=1e-3, max_sweeps=500,
                 pu_prior=None):
        self._setup_data(X, y, lam, standardize, pu_prior)
        d = self.data.d
        pv = np.asarray(prior_var, dtype=float)
        if pv.ndim == 0:
            pv = np.full(d, float(pv))
        if pv.shape != (d,):
            raise ValueError(f"prior_var must be a scalar or have shape ({d},) "
                             f"(columns kept after dropping constants), got "
                             f"{pv.shape}")
        if not np.all(np.isfinite(pv)) or np.any(pv <= 0):
            raise ValueError("prior_var must be finite and > 0")
        self.prior_var = pv
        if space not in ("auto", "primal", "score"):
            raise ValueError(f"space must be 'auto', 'primal' or 'score', got "
                             f"{space!r}")
        self.space = space
        self.damping, self.tol, self.max_sweeps = _check_fit_options(
            damping, tol, max_sweeps)
        Xs = self.data.X[self._perm]
        self._Xs = Xs
        self._graph = _PairGraph(self.n_pos, self.n_neg,
                                 _tied_rows(self.data.X_pos, self.data.X_neg),
                                 self.lam)

    @property
    def space_(self):
        """The space actually used: "primal" or "score"."""
        if self.space == "auto":
            return "score" if self.data.d > self.data.n else "primal"
        return self.space

    def _factor(self):
        """Factor C of the prior score covariance ``X S0 X' = C C'``.

        Primal: ``C = X S0^1/2`` (w = whitened theta). Score space: thin QR
        ``S0^1/2 X' = Q R`` and ``C = R'`` (n x n, exact even when X S0 X' is
        singular, e.g. centred columns); w = Q' S0^-1/2 theta.
        """
        sd = np.sqrt(self.prior_var)
        if self.space_ == "primal":
            return self._Xs * sd, None
        Q, R = np.linalg.qr((self._Xs * sd).T)
        return R.T, Q

    def fit(self, warm_start=False):
        """Run EP; store and return the :class:`EPResult`.

        Parameters
        ----------
        warm_start : bool
            Start from the pair sites of the previous fit (used by
            :meth:`fit_hyperparameters`).
        """
        C, Q = self._factor()
        self._Q = Q
        prior = _FixedGaussianPrior(C.shape[1])
        res = self._fit_core(C, prior, self.space_, warm_start)
        st = self._run.state
        sd = np.sqrt(self.prior_var)
        if Q is None:
            res.mean = sd * st.w_mean
            chol = st.chol

            def cov():
                inv_chol = linalg.solve_triangular(chol, np.diag(sd), lower=True)
                return inv_chol.T @ inv_chol
        else:
            res.mean = sd * (Q @ st.w_mean)
            chol = st.chol

            def cov():
                # S0^1/2 (I - Q Q' + Q Lambda^-1 Q') S0^1/2
                T = linalg.solve_triangular(chol, Q.T, lower=True)
                inner = np.eye(Q.shape[0]) - Q @ Q.T + T.T @ T
                return sd[:, None] * inner * sd[None, :]
        res._cov_fn = cov
        if Q is None:
            res._cov = cov()
        _check_finite_result(res, self._label)
        self.result_ = res
        return res

    def _theta_moments_diag(self):
        """Posterior mean and marginal variances of theta (no d x d work)."""
        st = self._run.state
        sd = np.sqrt(self.prior_var)
        if self._Q is None:
            inv_chol = linalg.solve_triangular(st.chol, np.eye(st.chol.shape[0]),
                                               lower=True)
            w_var = np.einsum("ij,ij->j", inv_chol, inv_chol)
            return sd * st.w_mean, self.prior_var * w_var
        Q = self._Q
        T = linalg.solve_triangular(st.chol, Q.T, lower=True)
        w_var = 1.0 - np.einsum("ij,ij->i", Q, Q) + np.einsum("ij,ij->j", T, T)
        return sd * (Q @ st.w_mean), self.prior_var * w_var

    def log_z_grad(self):
        """Gradient of ``log_z`` with respect to the prior variances.

        At an EP fixed point (Seeger 2005) it is the gradient of the Gaussian
        evidence with the sites held fixed::

            d log_z / d v_k = (V_kk + m_k^2 - v_k) / (2 v_k^2).

        Returns
        -------
        dict with ``"prior_var"``: array (d,). For an isotropic prior the
        derivative along ``v -> c v`` is ``sum_k v_k g_k``, zero up to the EP
        tolerance (``log_z`` does not depend on the prior scale).
        """
        self._require_fit()
        m, var = self._theta_moments_diag()
        v = self.prior_var
        return {"prior_var": (var + m ** 2 - v) / (2 * v ** 2)}

    def fit_hyperparameters(self, bounds=(1e-3, 1e3), options=None,
                            ep_tol=1e-6):
        """ARD: maximise ``log_z`` over per-coordinate prior variances.

        The overall scale is not identified (``log_z`` is invariant to
        ``prior_var -> c prior_var``), so the geometric mean of ``prior_var``
        is held at its current value and only the relative scales move
        (within ``bounds`` relative to that mean).

        Returns
        -------
        scipy.optimize.OptimizeResult (``x`` = log relative variances); the
        model keeps the optimum in ``prior_var`` and its fit in ``result_``.
        """
        gm = np.exp(np.mean(np.log(self.prior_var)))
        x0 = np.log(self.prior_var / gm)

        def objective(x):
            x = x - x.mean()
            self.prior_var = gm * np.exp(x)
            res = self.fit(warm_start=True)
            g = self.log_z_grad()["prior_var"] * self.prior_var
            return res.log_z, g - g.mean()

        opt = _maximise(self, objective, x0,
                        [tuple(np.log(bounds))] * x0.size, options, ep_tol)
        x = opt.x - opt.x.mean()
        self.prior_var = gm * np.exp(x)
        self.fit(warm_start=True)
        return opt

    def predict(self, X_new, return_var=False):
        """Posterior mean (and variance) of the scores ``x . theta`` of new
        inputs (raw columns, preprocessed like the training data)."""
        self._require_fit()
        Xn = self.data.transform(X_new)
        mean = Xn @ self.result_.mean
        if not return_var:
            return mean
        # x' V x through the factorisation: no d x d matrix in score space
        chol = self._run.state.chol
        A = Xn * np.sqrt(self.prior_var)
        if self._Q is None:
            T = linalg.solve_triangular(chol, A.T, lower=True)
            return mean, np.einsum("ij,ij->j", T, T)
        QA = self._Q.T @ A.T
        T = linalg.solve_triangular(chol, QA, lower=True)
        var = (np.einsum("ij,ij->i", A, A) - np.einsum("ij,ij->j", QA, QA)
               + np.einsum("ij,ij->j", T, T))
        return mean, np.maximum(var, 0.0)


class EPSpikeSlab(_EPBase):
    """EP for linear scores under a spike-and-slab prior.

    Prior ``prod_k [p N(theta_k; 0, v1) + (1 - p) N(theta_k; 0, v0)]``
    written with latent ``z_k ~ Bernoulli(p)`` (paper section 3.4, appendix
    B.3). On top of the pair sites, each coordinate gets a Bernoulli x
    Gaussian site (Hernandez-Lobato et al. 2013); the approximation is
    ``N(theta; mean, cov) * prod_k Bernoulli(z_k; inclusion_probs_k)``.
    Always in the primal space: O(P d + n d^2 + d^3) per sweep.

    Parameters
    ----------
    X, y, lam, standardize, damping, tol, max_sweeps : as :class:`EPLinear`.
    p : float in (0, 1)
        Prior inclusion probability.
    v0 : float >= 0
        Spike variance (0: Dirac mass at zero).
    v1 : float > v0
        Slab variance.

    Notes
    -----
    ``log_z`` is invariant to ``(v0, v1) -> (c v0, c v1)``; with ``v0 = 0``
    it does not depend on ``v1`` at all.
    """

    _label = "EPSpikeSlab"

    def __init__(self, X, y, lam, p=0.5, v0=0.0, v1=1.0, standardize=True,
                 damping=0.7, tol=1e-3, max_sweeps=500, pu_prior=None):
        self._setup_data(X, y, lam, standardize, pu_prior)
        self.p, self.v0, self.v1 = _check_spike_slab(p, v0, v1)
        self.damping, self.tol, self.max_sweeps = _check_fit_options(
            damping, tol, max_sweeps)
        self._Xs = self.data.X[self._perm]
        self._graph = _PairGraph(self.n_pos, self.n_neg,
                                 _tied_rows(self.data.X_pos, self.data.X_neg),
                                 self.lam)

    def fit(self, warm_start=False):
        """Run EP; store and return the :class:`EPResult` (with
        ``inclusion_probs``)."""
        prior = _SpikeSlabPrior(self.data.d, self.p, self.v0, self.v1)
        if warm_start and self._run is not None:
            prior.set(self._prior.params())
        res = self._fit_core(self._Xs, prior, "primal", warm_start)
        st = self._run.state
        res.mean = st.w_mean.copy()
        inv_chol = linalg.solve_triangular(st.chol, np.eye(st.chol.shape[0]),
                                           lower=True)
        res._cov = inv_chol.T @ inv_chol
        res.inclusion_probs = prior.inclusion_probs()
        res.prior_site_precision = prior.prec.copy()
        res.prior_site_shift = prior.shift.copy()
        res.prior_site_log_odds = prior.log_odds.copy()
        _check_finite_result(res, self._label)
        if prior.n_improper:
            warnings.warn(f"{self._label}: {prior.n_improper} prior site(s) "
                          "kept their value because their cavity was improper",
                          EPConvergenceWarning, stacklevel=2)
        self.result_ = res
        return res

    def log_z_grad(self):
        """Gradient of ``log_z`` with respect to ``p``, ``v0`` and ``v1``.

        At an EP fixed point only the explicit dependence of the prior sites'
        tilted normalisers ``Z_k = p N(mu_k; 0, v1 + s_k) + (1 - p)
        N(mu_k; 0, v0 + s_k)`` counts (cavities ``N(mu_k, s_k)`` held fixed).

        Returns
        -------
        dict with keys ``"p"``, ``"v0"``, ``"v1"``.
        """
        self._require_fit()
        return self._prior.grad(self._run.state)

    def fit_hyperparameters(self, fit_v0=True, options=None, ep_tol=1e-6):
        """Maximise ``log_z`` over ``p`` and the ratio ``v0 / v1``.

        ``v1`` is held fixed: a common scaling of ``(v0, v1)`` does not change
        ``log_z``. With ``v0 = 0`` (or ``fit_v0=False``) only ``p`` moves.
        Parameters are optimised on the logit scale with L-BFGS-B.

        Returns
        -------
        scipy.optimize.OptimizeResult; the model keeps the optimum.
        """
        use_ratio = fit_v0 and self.v0 > 0

        def unpack(x):
            p = 1 / (1 + np.exp(-x[0]))
            v0 = self.v1 / (1 + np.exp(-x[1])) if use_ratio else self.v0
            return p, v0

        def objective(x):
            self.p, self.v0 = unpack(x)
            res = self.fit(warm_start=True)
            g = self.log_z_grad()
            grad = [g["p"] * self.p * (1 - self.p)]
            if use_ratio:
                r = self.v0 / self.v1
                grad.append(g["v0"] * self.v1 * r * (1 - r))
            return res.log_z, np.array(grad)

        x0 = [math.log(self.p / (1 - self.p))]
        if use_ratio:
            r = self.v0 / self.v1
            x0.append(math.log(r / (1 - r)))
        bounds = [(-9.0, 9.0)] * len(x0)
        opt = _maximise(self, objective, np.array(x0), bounds, options, ep_tol)
        self.p, self.v0 = unpack(opt.x)
        self.fit(warm_start=True)
        return opt

    def predict(self, X_new, return_var=False):
        """Posterior mean (and variance) of new scores (Gaussian part)."""
        self._require_fit()
        Xn = self.data.transform(X_new)
        mean = Xn @ self.result_.mean
        if not return_var:
            return mean
        return mean, np.einsum("ij,jk,ik->i", Xn, self.result_.cov, Xn)


def _check_spike_slab(p, v0, v1):
    try:
        p, v0, v1 = float(p), float(v0), float(v1)
    except (TypeError, ValueError):
        raise ValueError("p, v0 and v1 must be numbers")
    if not 0 < p < 1:
        raise ValueError(f"p must be in (0, 1), got {p}")
    if not (np.isfinite(v0) and v0 >= 0):
        raise ValueError(f"v0 (spike variance) must be >= 0, got {v0}")
    if not (np.isfinite(v1) and v1 > v0):
        raise ValueError(f"v1 (slab variance) must be finite and > v0 = {v0}, "
                         f"got {v1}")
    return p, v0, v1


def _cholesky_with_jitter(K, label):
    """Lower Cholesky factor of K with geometric jitter (one implementation:
    :func:`pac_particles.priors.stable_cholesky`)."""
    return stable_cholesky(K, label=f"{label}: kernel matrix")


class EPGP(_EPBase):
    """EP for Gaussian-process scores (paper section 4).

    Target on the training scores ``N(s; 0, K) * exp(-lam R_n(s))``, pair
    sites on ``s_i - s_j``. With ``C`` the Cholesky factor of ``K`` (+ jitter)
    the posterior covariance is ``C (I + C' L C)^-1 C'``: O(P + n^3) per
    sweep.

    Parameters
    ----------
    X, y, lam, standardize, damping, tol, max_sweeps : as :class:`EPLinear`.
    kernel : callable or array of shape (n, n)
        ``kernel(X1, X2) -> Gram matrix`` (applied to the preprocessed
        inputs), e.g. :class:`SquaredExponential`; or a precomputed Gram
        matrix of the training inputs in input order (then :meth:`predict`
        takes cross-kernel matrices).

    Notes
    -----
    ``log_z`` does not depend on the kernel amplitude (scores are scale free).
    """

    _label = "EPGP"

    def __init__(self, X, y, lam, kernel, standardize=True, damping=0.7,
                 tol=1e-3, max_sweeps=500, pu_prior=None):
        self._setup_data(X, y, lam, standardize, pu_prior)
        self.damping, self.tol, self.max_sweeps = _check_fit_options(
            damping, tol, max_sweeps)
        n = self.data.n
        if callable(kernel):
            self.kernel = kernel
            self._gram = None
        else:
            K = np.asarray(kernel, dtype=float)
            if K.shape != (n, n):
                raise ValueError(f"a precomputed kernel must have shape "
                                 f"({n}, {n}), got {K.shape}")
            if not np.all(np.isfinite(K)):
                raise ValueError("the kernel matrix contains NaN or inf")
            if not np.allclose(K, K.T, rtol=1e-10, atol=1e-12 * np.abs(K).max()):
                raise ValueError("the kernel matrix is not symmetric")
            self.kernel = None
            self._gram = K
        self._Xs = self.data.X[self._perm]

    def _kernel_matrix(self):
        if self._gram is not None:
            return self._gram[np.ix_(self._perm, self._perm)]
        K = np.asarray(self.kernel(self._Xs, self._Xs), dtype=float)
        n = self.data.n
        if K.shape != (n, n) or not np.all(np.isfinite(K)):
            raise ValueError(f"kernel(X, X) must return a finite ({n}, {n}) "
                             f"array, got shape {K.shape}")
        return 0.5 * (K + K.T)

    def fit(self, warm_start=False):
        """Run EP; store and return the :class:`EPResult` (``mean``/``cov``
        are those of the training scores, in input order)."""
        K = self._kernel_matrix()
        C, self.jitter_ = _cholesky_with_jitter(K, self._label)
        n_pos = self.n_pos
        prior_pair_var = (np.diag(K)[:n_pos, None] + np.diag(K)[None, n_pos:]
                          - 2 * K[:n_pos, n_pos:])
        tied = prior_pair_var <= 1e-12 * np.mean(np.diag(K))
        self._graph = _PairGraph(n_pos, self.n_neg, tied, self.lam)
        prior = _FixedGaussianPrior(C.shape[1])
        res = self._fit_core(C, prior, "gp", warm_start)
        st = self._run.state
        res.mean = res.score_mean.copy()
        B = linalg.solve_triangular(st.chol, C.T, lower=True)
        cov = B.T @ B
        res._cov = cov[np.ix_(self._inv_perm, self._inv_perm)]
        _check_finite_result(res, self._label)
        self.result_ = res
        return res

    def log_z_grad(self):
        """Gradient of ``log_z`` with respect to the kernel's ``log_params``.

        At an EP fixed point ``d log_z = 1/2 tr[(b b' - L (I + K L)^-1) dK]``
        with ``b = (I + L K)^-1 g`` (Seeger 2005; Rasmussen & Williams 2006,
        eq. 3.74), computed through ``C`` in O(n^3).

        Returns
        -------
        dict with ``"log_params"``: array, one entry per kernel log-parameter
        (a kernel object with ``contract_gradients`` or ``gradients`` is
        required).
        """
        run = self._require_fit()
        M = self._gradient_matrix(run)
        if hasattr(self.kernel, "contract_gradients"):
            g = self.kernel.contract_gradients(self._Xs, M)
        elif hasattr(self.kernel, "gradients"):
            g = np.einsum("ab,kab->k", M, self.kernel.gradients(self._Xs))
        else:
            raise ValueError("log_z_grad needs a kernel object with "
                             "gradients(X) (e.g. SquaredExponential)")
        return {"log_params": 0.5 * np.asarray(g)}

    def _gradient_matrix(self, run):
        C, st = self._C, run.state
        L = self._graph.laplacian(run.W)
        g = self._graph.node_vector(run.H)
        LC = L @ C
        b = g - LC @ st.w_mean
        Y = linalg.solve_triangular(st.chol, LC.T, lower=True)
        # L (I + K L)^-1 = L - L C Lambda^-1 C' L
        return np.outer(b, b) - L + Y.T @ Y

    def fit_hyperparameters(self, bounds=(1e-2, 1e3), options=None,
                            ep_tol=1e-6):
        """Maximise ``log_z`` over the kernel lengthscales (L-BFGS-B on the
        log scale, EP warm-started between evaluations). The amplitude is
        left alone: ``log_z`` does not depend on it.

        Returns
        -------
        scipy.optimize.OptimizeResult; the kernel keeps the optimum.
        """
        if not hasattr(self.kernel, "log_params"):
            raise ValueError("fit_hyperparameters needs a kernel object with "
                             "log_params and gradients (SquaredExponential)")
        full = self.kernel.log_params.copy()
        n_len = full.size - 1

        def objective(x):
            params = full.copy()
            params[:n_len] = x
            self.kernel.log_params = params
            res = self.fit(warm_start=True)
            return res.log_z, self.log_z_grad()["log_params"][:n_len]

        opt = _maximise(self, objective, full[:n_len],
                        [tuple(np.log(bounds))] * n_len, options, ep_tol)
        params = full.copy()
        params[:n_len] = opt.x
        self.kernel.log_params = params
        self.fit(warm_start=True)
        return opt

    def predict(self, X_new, return_var=False, k_diag=None):
        """Predictive mean (and variance) of the latent scores at new inputs.

        ``mean = k_*' K^-1 E[s]``,
        ``var = k_** - k_*' K^-1 k_* + k_*' K^-1 Sigma K^-1 k_*``.

        Parameters
        ----------
        X_new : array (m, d_raw) of raw inputs; with a precomputed kernel, the
            cross Gram matrix ``K(X_new, X_train)`` of shape (m, n) (training
            columns in input order).
        return_var : bool
        k_diag : array (m,), prior variances ``k(x, x)`` of the new inputs;
            needed for variances with a precomputed kernel.
        """
        run = self._require_fit()
        if self.kernel is None:
            Ks = np.asarray(X_new, dtype=float)
            if Ks.ndim != 2 or Ks.shape[1] != self.data.n:
                raise ValueError(f"with a precomputed kernel, X_new must be the "
                                 f"(m, {self.data.n}) cross Gram matrix")
            Ks = Ks[:, self._perm]
            if return_var and k_diag is None:
                raise ValueError("k_diag is needed for predictive variances "
                                 "with a precomputed kernel")
        else:
            Xn = self.data.transform(X_new)
            Ks = np.asarray(self.kernel(Xn, self._Xs), dtype=float)
            if return_var and k_diag is None:
                k_diag = (self.kernel.diag(Xn) if hasattr(self.kernel, "diag")
                          else np.array([self.kernel(x[None], x[None])[0, 0]
                                         for x in Xn]))
        A = linalg.solve_triangular(self._C, Ks.T, lower=True)
        mean = A.T @ run.state.w_mean
        if not return_var:
            return mean
        T = linalg.solve_triangular(run.state.chol, A, lower=True)
        var = (np.asarray(k_diag, dtype=float) - np.einsum("ij,ij->j", A, A)
               + np.einsum("ij,ij->j", T, T))
        return mean, np.maximum(var, 0.0)
