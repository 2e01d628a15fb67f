"""Log evidence by importance sampling from a Gaussian approximation of the
Gibbs posterior: the refinement of a tempering run's ``log Z``.

A tempering run's product of mean incremental weights is unbiased for
``Z`` when its exponents and moves are fixed in advance (adaptive tempering
chooses them from the particles: only asymptotically so), but at
:func:`~pac_particles.smc.posterior.run_smc`'s default size its
variance is large, and where the M chains of a step miss part of the
posterior it falls short of ``log Z`` by more than its error bar
(docs/benchmarks.md, "Efficiency of the SMC sampler": Sonar, d = 60).
Importance sampling from a good Gaussian approximation ``q`` of the
posterior (EP's) has neither problem: its draws are independent, its
weights ``prior x exp(-lam R_n) / q`` nearly constant where ``q`` fits,
their mean unbiased for ``Z`` (where ``q`` misses posterior mass, no
draw sees it: :class:`~pac_particles.smc.adaptive_importance.MassCheck`
is the check run_smc makes). The estimate reported
is that of the Pareto-smoothed weights (below): smoothing trades a small
bias (downwards: the largest weights shrink) for a bounded variance, so it
is *not* unbiased; its error bar is read off the draws. The certificates
use the raw, unbiased weights (:func:`log_z_lower_bound`).

The proposal is a defensive mixture [Hes95]: Gaussians, weight ``1 - a``,
and a t with 4 degrees of freedom scaled wider, weight ``a``, whose tails
are heavier than the target's (the Gaussian prior's times a likelihood at
most 1): bounded weights, a finite variance. The Gaussians are EP's
approximation and the run's particles' fit in equal shares where EP covers
the model (:func:`gaussian_approximation`), else the particles' fit alone.
For the scale-invariant risks the draws' directions alone are weighted
(:mod:`pac_particles.smc.direction_weights`), the prior taking the t's place,
each Gaussian first widened along its mean (:func:`radially_resolved`).

Whether the estimate can be trusted is read off the tail of the weights:
the shape ``k`` of a generalised Pareto distribution fitted to the largest
weights by the empirical Bayes estimator of [ZS09], with the weak prior of
[VSGY24] (:func:`pareto_k`); those weights are replaced by the fit's
expected order statistics before they are used (Pareto-smoothed importance
sampling, :func:`pareto_smooth`), which is what the threshold below is for. Below ``1 - 1 / log10(S)`` (0.70 at ``S = 2000``
draws) the estimate is reliable [VSGY24, Sec. 3]; above it the tempering
estimate is kept (:func:`refine_log_z`). Between ``k = 0.5`` and that
threshold the raw weights have an infinite variance, but the smoothed ones
do not: the delta method on the smoothed weights is the standard error of
the smoothed estimate (:func:`smoothed_log_z_se`), whose small downward
bias grows with ``k``.

References
----------
[Hes95] Hesterberg, T. (1995). Weighted average importance sampling and
defensive mixture distributions. Technometrics 37(2), 185-194.
[VSGY24] Vehtari, A., Simpson, D., Gelman, A., Yao, Y. and Gabry, J.
(2024). Pareto smoothed importance sampling. JMLR 25(72), 1-58.
[CR96] Casella, G. and Robert, C. P. (1996). Rao-Blackwellisation of
sampling schemes. Biometrika 83(1), 81-94.
[ZS09] Zhang, J. and Stephens, M. A. (2009). A new and efficient
estimation method for the generalized Pareto distribution. Technometrics
51(3), 316-325.
"""

import dataclasses
import math
import time
from dataclasses import dataclass, field

import numpy as np
from scipy import linalg
from scipy.special import gammaln, logsumexp

from pac_particles.core.checks import InputError, check_count, check_finite_array
from pac_particles.core.gaussian import gaussian_draws
# the Gaussian q of a model lives with the bridge that starts from it;
# importable from here, where it was first the proposal of refine_log_z
from pac_particles.smc.gaussian_bridge import (PROPOSAL_TOL,
                                               gaussian_approximation)
from pac_particles.smc.direction_weights import (direction_log_weights,
                                                 radially_resolved,
                                                 weigh_directions)
from pac_particles.smc.moves.base import weighted_gaussian_fit
from pac_particles.core.parallel import one_blas_thread
from pac_particles.problem.priors import prior_gaussian_factor

__all__ = ["ImportanceEvidence", "importance_log_z", "refine_log_z",
           "gaussian_approximation", "pareto_k", "pareto_smooth", "reliable_k",
           "weighted_mean_se", "mixture_draws", "unsmoothed",
           "smoothed_log_z_se", "log_z_lower_bound", "importance_applies", "EVIDENCE_BATCHES",
           "MIN_BATCH_DRAWS", "DEFENSIVE_WEIGHT", "DEFENSIVE_DF", "MAX_DIMENSION", "SINGULAR_PRIOR",
           "MIN_DRAWS", "PARTICLES_PER_DIMENSION", "PROPOSAL_TOL"]

#: weight ``a`` of the t component of the defensive mixture
DEFENSIVE_WEIGHT = 0.1
#: degrees of freedom of the t component
DEFENSIVE_DF = 4.0
#: no refinement above this many parameters (the proposal's d x d factor and
#: its S x d draws would cost more than the run; a GP's parameter is its n
#: latent scores)
MAX_DIMENSION = 1000
#: no refinement when the prior's smallest variance along a Cholesky pivot is
#: below this fraction of its largest: the near-null directions of the
#: kernel (a linear kernel on centred inputs has the constant vector there;
#: linear scores with d > n are sampled in the design's span instead) carry
#: rounding noise in EP's covariance, and the weights were
#: biased low by 3-5 standard errors while passing the tail check
SINGULAR_PRIOR = 1e-10
#: fewer draws than this give no tail to fit (pareto_k is inf below 25)
MIN_DRAWS = 25
#: the particles' Gaussian fit joins EP's in the proposal when the particles
#: number at least this many per dimension (Kish's ESS): below, its
#: covariance is mostly estimation noise (a 150-point GP problem)
PARTICLES_PER_DIMENSION = 20


@dataclass(frozen=True)
class ImportanceEvidence:
    """An importance-sampling estimate of ``log Z``.

    Attributes
    ----------
    log_z : ``log mean(w)`` over the draws, ``w`` the Pareto-smoothed
        weights (:func:`pareto_smooth`).
    log_z_se : its standard error, ``sd(w) / (mean(w) sqrt(S))`` (delta
        method on the smoothed weights, :func:`smoothed_log_z_se`);
        meaningful when ``reliable``.
    pareto_k : the tail shape of the weights (:func:`pareto_k`).
    reliable : ``pareto_k <= reliable_k(n_draws)``; for a refinement
        after a run, the pilot's verdict instead (and after the bridge its
        ESS, :func:`~pac_particles.smc.adaptive_importance.piloted_refinement`).
    ess : Kish's effective sample size of the weights.
    n_draws : S.
    proposal : ``"ep+particles"``, ``"ep"`` or ``"particles"``: where the
        Gaussian part of the proposal came from (:func:`refine_log_z`).
    seconds : time of the proposal's fit and of the draws.
    theta, weights, risks : the draws (S, d), their normalised weights and
        their empirical risks ``R_n``: a weighted sample of the posterior
        (self-normalised importance sampling).
    log_weights : (S,) the raw (unsmoothed) log weights ``log prior +
        loglik - log q`` of the draws, in the order drawn: ``exp`` of each
        is unbiased for ``Z`` (:func:`log_z_lower_bound`).
    rounds, earlier_draws : refits of ``q`` before these draws and their
        draws (``adaptive_importance.adaptive_importance_log_z``); mean, cov: q.
    pilot_log_z, pilot_log_z_se : for a refinement decided on a pilot set
        of draws (:func:`~pac_particles.smc.adaptive_importance.
        piloted_refinement`), the pilot's estimate and its standard error,
        independent of these draws given the proposal; None otherwise.
    """

    log_z: float
    log_z_se: float
    pareto_k: float
    reliable: bool
    ess: float
    n_draws: int
    proposal: str
    seconds: float = float("nan")
    theta: np.ndarray = field(default=None, repr=False)
    weights: np.ndarray = field(default=None, repr=False)
    risks: np.ndarray = field(default=None, repr=False)
    log_weights: np.ndarray = field(default=None, repr=False)
    rounds: int = 0
    earlier_draws: int = 0
    mean: np.ndarray = field(default=None, repr=False)
    cov: np.ndarray = field(default=None, repr=False)
    pilot_log_z: float = None
    pilot_log_z_se: float = None


def _gpd_fit(exceedances):
    """``(k, sigma)`` of a generalised Pareto fit to sorted positive
    exceedances: the posterior mean of ``b = -k / sigma`` over the grid of
    [ZS09] (profile likelihood weights), then ``k = mean(log(1 - b x))``
    and ``sigma = -k / b``; the ``k`` returned is shrunk towards 0.5 as if
    by 10 prior observations [VSGY24, App. C]."""
    x = exceedances
    n = x.size
    m = 30 + int(np.sqrt(n))
    quartile = x[max(int(n / 4 + 0.5) - 1, 0)]
    grid = 1.0 / x[-1] + (1.0 - np.sqrt(m / (np.arange(1, m + 1) - 0.5))) / (3.0 * quartile)
    k_grid = np.log1p(-grid[:, None] * x).mean(axis=1)
    profile = n * (np.log(-grid / k_grid) - k_grid - 1.0)
    weights = np.exp(profile - logsumexp(profile))
    b = np.sum(grid * weights)
    k = np.log1p(-b * x).mean()
    return (n * k + 10 * 0.5) / (n + 10), -k / b


def pareto_smooth(log_weights):
    """Pareto-smoothed log weights and the tail shape ``k`` [VSGY24,
    Sec. 3]: a generalised Pareto distribution is fitted to the
    ``min(S / 5, 3 sqrt(S))`` largest weights above the next one, and they
    are replaced by its expected order statistics (capped at the largest
    raw weight), which bounds the variance of the estimates that use them.
    ``k < 0.5``: the raw weights have a finite variance; ``k`` up to
    :func:`reliable_k`: the smoothed estimate is reliable. ``k`` is inf
    (and nothing is smoothed) when the tail is too short (fewer than 5
    weights above the cut) or flat."""
    lw = check_finite_array(log_weights, "log_weights", ndim=1)
    out = lw.copy()
    s = lw.size
    tail = int(np.ceil(min(0.2 * s, 3.0 * np.sqrt(s))))
    if tail < 5:
        return out, float("inf")
    top = np.argsort(lw)[-(tail + 1):]
    top_lw = lw[top]
    peak = top_lw[-1]
    cut = np.exp(top_lw[0] - peak)
    above = top[1:][top_lw[1:] > top_lw[0]]    # ties with the cut stay
    exceed = np.exp(lw[above] - peak) - cut
    if above.size < 5 or not exceed[-1] > exceed[0]:
        return out, float("inf")
    k, sigma = _gpd_fit(exceed)
    p = (np.arange(above.size) + 0.5) / above.size
    quantiles = (sigma * np.expm1(-k * np.log1p(-p)) / k if k != 0
                 else -sigma * np.log1p(-p))
    out[above] = np.minimum(np.log(cut + quantiles), 0.0) + peak
    return out, float(k)


def pareto_k(log_weights):
    """Tail shape ``k`` of log weights (:func:`pareto_smooth`)."""
    return pareto_smooth(log_weights)[1]


def reliable_k(n_draws):
    """The largest reliable tail shape for ``n_draws`` draws,
    ``min(1 - 1 / log10(S), 0.7)`` [VSGY24, Sec. 3.2]."""
    return min(1.0 - 1.0 / np.log10(max(n_draws, 11)), 0.7)


def smoothed_log_z_se(log_weights):
    """Standard error of ``log mean(w)`` for Pareto-smoothed log weights
    ``log_weights`` (S,): the delta method on the smoothed weights,
    ``sd(w) / (mean(w) sqrt(S))``.

    For a tail shape ``k`` above 0.5 the raw weights have an infinite
    variance, and the raw estimate's error shrinks more slowly than
    ``S^-1/2`` [VSGY24, Sec. 3.2, App. B]; the smoothed weights have a
    finite variance, and the spread of the smoothed estimate over
    independent draws is what the delta method on them says (the
    calibration test in ``tests/smc/test_importance_evidence.py``). A rule
    that widens it by ``S^((1 - r) / 2)``, ``r`` the relative convergence
    rate of [VSGY24, App. B], describes the raw estimate's slower
    convergence, not the smoothed estimate's spread, and gave error bars
    several times too wide (docs/benchmarks.md, "Single-run error bars").
    What the smoothing costs is a downward bias that grows with ``k``."""
    lw = check_finite_array(log_weights, "log_weights", ndim=1)
    w = np.exp(lw - lw.max())
    return float(np.std(w) / (np.mean(w) * np.sqrt(lw.size)))


#: numbers of batches among which :func:`log_z_lower_bound` takes the best
#: (fixed in advance: a union bound over their count)
EVIDENCE_BATCHES = (4, 16, 64)
#: fewest draws per batch of :func:`log_z_lower_bound`
MIN_BATCH_DRAWS = 10


def log_z_lower_bound(log_weights, delta):
    """A lower confidence bound on ``log Z`` from raw importance log
    weights: with probability at least ``1 - delta`` over the draws,
    ``log Z >= log_z_lower_bound(log_weights, delta)``.

    Parameters
    ----------
    log_weights : (S,) array
        ``log w_i = log prior(theta_i) + loglik(theta_i) - log q(theta_i)``
        of independent draws ``theta_i ~ q`` (not smoothed, not selected:
        every draw, in the order drawn), ``q`` chosen before the draws.
    delta : float in (0, 1)

    Returns
    -------
    float

    Notes
    -----
    Proof. Split the draws into ``M`` consecutive batches of equal size
    (a remainder is dropped); the batch means ``Z_j`` are independent,
    non-negative, and ``E Z_j = integral over {q > 0} of prior exp(-lam
    R_n) <= Z`` (equality when ``q`` covers the target). So ``E prod_j Z_j
    <= Z^M`` and Markov's inequality gives ``P(prod_j Z_j >= Z^M / d) <=
    d``, i.e. with probability at least ``1 - d``::

        log Z > (1/M) sum_j log Z_j - log(1/d) / M.

    The price of confidence falls as ``1/M``; the geometric mean of the
    batch means falls below ``log Z`` by about ``M`` times half the
    relative variance of one whole-sample estimate (Jensen), so a few
    values of ``M`` (:data:`EVIDENCE_BATCHES`, those with at least
    :data:`MIN_BATCH_DRAWS` draws a batch, or ``M = 1``), fixed by ``S``
    alone, are tried at ``d = delta / K`` each (union bound) and the
    largest bound is returned. No moment beyond the mean is needed: heavy
    tails (large Pareto ``k``) make the bound loose, never wrong. One batch
    (``M = 1``) is the stochastic lower bound ``log Z_hat - log(1/delta)``
    of an unbiased estimate [GGA15, Sec. 2]; the product of independent
    batch means extends it. The Pareto-smoothed estimate is biased and
    cannot be used here.

    [GGA15] Grosse, R. B., Ghahramani, Z. and Adams, R. P. (2015).
    Sandwiching the marginal likelihood using bidirectional Monte Carlo.
    arXiv:1511.02543.
    """
    lw = check_finite_array(log_weights, "log_weights", ndim=1)
    if not 0.0 < delta < 1.0:
        raise InputError(f"delta must be in (0, 1), got {delta}")
    s = lw.size
    counts = [m for m in EVIDENCE_BATCHES if s // m >= MIN_BATCH_DRAWS] or [1]
    price = math.log(len(counts) / delta)
    best = -np.inf
    for m in counts:
        size = s // m
        batches = lw[:m * size].reshape(m, size)
        log_means = logsumexp(batches, axis=1) - np.log(size)
        best = max(best, float(np.mean(log_means)) - price / m)
    return best


def _prior_factor(model):
    """Lower Cholesky factor ``L`` of the model's centred Gaussian prior
    (a GP's on its latent scores), or None."""
    return prior_gaussian_factor(model.prior)


def _log_density(theta, mean, chol, df):
    """Log density of ``N(mean, chol chol')`` (``df`` None) or of the t
    of that scale and ``df`` degrees of freedom, at the rows of ``theta``."""
    d = mean.size
    u = linalg.solve_triangular(chol, (theta - mean).T, lower=True)
    q2 = np.einsum("ij,ij->j", u, u)
    log_det = np.log(np.diag(chol)).sum()
    if df is None:
        return -0.5 * q2 - 0.5 * d * np.log(2 * np.pi) - log_det
    return (gammaln((df + d) / 2) - gammaln(df / 2) - 0.5 * d * np.log(df * np.pi)
            - log_det - 0.5 * (df + d) * np.log1p(q2 / df))


def mixture_draws(components, weights, n_draws, rng):
    """``(theta, log_q)``: ``n_draws`` draws of a mixture of Gaussians and
    multivariate t's, and their log densities under the whole mixture (the
    proposal of :func:`importance_log_z`).

    Parameters
    ----------
    components : list of ``(mean, cov, df)``: a (d,) mean, a (d, d)
        positive definite covariance (the scale matrix of a t), and ``df``
        None for a Gaussian, else the t's degrees of freedom.
    weights : the mixture weights, summing to 1.
    n_draws : int.
    rng : a ``numpy.random.Generator``.

    A Gaussian's draws are :func:`~pac_particles.core.gaussian.gaussian_draws`;
    a t's are centred Gaussian draws of its scale divided by
    ``sqrt(chi2_df / df)``, shifted by its mean.
    """
    n_draws = check_count(n_draws, "n_draws")
    d = np.size(components[0][0])
    # symmetrised once: the draws and the density see the same matrix
    components = [(check_finite_array(mean, "mean", ndim=1),
                   _symmetric(cov, "cov", d), df)
                  for mean, cov, df in components]
    factors = [_factor(cov, "cov", d) for _, cov, _ in components]
    which = rng.choice(len(components), size=n_draws, p=weights)
    theta = np.empty((n_draws, d))
    for c, (mean, cov, df) in enumerate(components):
        rows = which == c
        if df is None:
            theta[rows] = gaussian_draws(mean, cov, rows.sum(), rng)
            continue
        z = gaussian_draws(np.zeros(d), cov, rows.sum(), rng)
        theta[rows] = mean + z / np.sqrt(rng.chisquare(df, rows.sum()) / df)[:, None]
    log_q = logsumexp([np.log(w) + _log_density(theta, mean, chol, df)
                       for (mean, _, df), chol, w
                       in zip(components, factors, weights)], axis=0)
    return theta, log_q


def _symmetric(cov, name, d):
    """``(cov + cov') / 2`` of a finite (d, d) ``cov``, else InputError."""
    cov = check_finite_array(cov, name, ndim=2)
    if cov.shape != (d, d):
        raise InputError(f"{name} must have shape ({d}, {d}), got {cov.shape}")
    return 0.5 * (cov + cov.T)


def _factor(cov, name, d):
    """Lower Cholesky factor of the symmetrised ``cov``, else InputError."""
    try:
        return linalg.cholesky(_symmetric(cov, name, d), lower=True)
    except linalg.LinAlgError:
        raise InputError(f"{name} is not positive definite")


def importance_log_z(model, mean, cov, n_draws=2000, seed=None,
                     proposal="ep", wide_cov=None, second=None,
                     directions=True):
    """``log Z`` of ``model``'s Gibbs posterior by importance sampling from
    the defensive mixture around ``N(mean, cov)`` (module docstring):
    ``(1 - a) N(mean, cov) + a t_4(mean, wide_cov)``, or with ``second``
    ``(1 - a) / 2 [N(mean, cov) + N(second)] + a t_4(mean, wide_cov)``.

    Parameters
    ----------
    model : a Gibbs model with a centred Gaussian prior on its parameter
        (:class:`~pac_particles.smc.models.AUCGibbsModel` and the others of
        :mod:`pac_particles.smc.models`, spike-and-slab priors excepted).
    mean : (d,) array; cov : (d, d) positive definite array.
    wide_cov : (d, d) positive definite array, optional
        Scale of the t component (default ``cov``): a wider one covers
        what ``N(mean, cov)`` misses.
    second : ((d,), (d, d)) arrays and optionally a share, optional
        Mean, covariance (and share, default ``(1 - a) / 2``) of a second
        Gaussian component (the particles' fit beside EP's; a small share
        bounds the weights where only it covers the posterior [Hes95]).
    n_draws : int, the number S of draws (one risk evaluation each).
    seed : int or numpy Generator, optional.
    proposal : str, a label kept in the result.
    directions : bool
        Weigh the draws' directions alone where the risk is scale-invariant
        (:func:`~pac_particles.smc.direction_weights.weigh_directions`): the
        radius is the prior's in the posterior and integrates out. On Pima
        (``lam = n``, EP's Gaussian) the tail shape fell from 0.83 to 0.03
        and the spread of ``log Z`` over 20 estimates of 2000 draws from
        0.040 to 0.005. The draws returned are posterior draws (each
        direction with a fresh chi_d radius); the defensive component is
        the prior, in place of the t, which bounds the weights by ``1 / a``.
        False: the weights of ``theta`` itself.

    Returns
    -------
    ImportanceEvidence
    """
    L = _prior_factor(model)
    if L is None:
        raise InputError("importance_log_z needs a model with a centred "
                         "Gaussian prior (not spike-and-slab)")
    d = L.shape[0]
    mean = check_finite_array(mean, "mean", ndim=1)
    if mean.shape != (d,):
        raise InputError(f"mean must have shape ({d},), got {mean.shape}")
    n_draws = check_count(n_draws, "n_draws", minimum=MIN_DRAWS)
    rng = np.random.default_rng(seed)
    start = time.perf_counter()
    with one_blas_thread():
        # checked here, by name, before mixture_draws factors them again
        _factor(cov, "cov", d)
        wide = cov if wide_cov is None else wide_cov
        _factor(wide, "wide_cov", d)
        normals = [(mean, cov, None)]
        if second is not None:
            mean2 = check_finite_array(second[0], "second mean", ndim=1)
            if mean2.shape != (d,):
                raise InputError(f"second mean must have shape ({d},), got "
                                 f"{mean2.shape}")
            _factor(second[1], "second cov", d)
            normals.append((mean2, second[1], None))
        a = DEFENSIVE_WEIGHT
        direction_weights = directions and weigh_directions(model)
        if direction_weights:       # a radial spread the quadrature sees
            normals = [(m, radially_resolved(m, c, L), None)
                       for m, c, _ in normals]
        # weighting directions, the defensive component is the prior itself
        # [Hes95]: its direction is uniform, so every weight is at most 1 / a
        # (a t's direction density has no closed form)
        components = normals + [(np.zeros(d), L @ L.T, None)
                                if direction_weights
                                else (mean, wide, DEFENSIVE_DF)]
        shares = [(1 - a) / len(normals)] * len(normals) + [a]
        if second is not None and len(second) > 2:
            if not 0.0 < second[2] < 1.0 - a:
                raise InputError(f"second share not in (0, {1 - a})")
            shares = [1.0 - a - second[2], second[2], a]
        theta, log_q = mixture_draws(components, shares, n_draws, rng)
        # the prior N(0, L L') in the whitened coordinates L^-1 theta
        white = linalg.solve_triangular(L, theta.T, lower=True)
        log_prior = (-0.5 * np.einsum("ij,ij->j", white, white)
                     - 0.5 * d * np.log(2 * np.pi) - np.log(np.diag(L)).sum())
    loglik = model.loglik(theta)
    if direction_weights:
        # the radius is integrated out: the prior's radius (given the
        # direction) is the posterior's, so only the direction is weighted
        with one_blas_thread():
            raw, u = direction_log_weights(L, theta, loglik, components,
                                           shares)
            # posterior draws: the direction, weighted, with a fresh radius
            # from the prior's chi_d
            theta = (np.sqrt(rng.chisquare(d, n_draws))[:, None] * u) @ L.T
    else:
        raw = log_prior + loglik - log_q
    est = _smoothed_estimate(raw, theta, -loglik / model.lam, proposal,
                             time.perf_counter() - start)
    return dataclasses.replace(est, mean=mean, cov=0.5 * (cov + cov.T))


def _smoothed_estimate(raw, theta, risks, proposal, seconds):
    """The :class:`ImportanceEvidence` of raw log weights ``raw`` (S,)."""
    n_draws = raw.size
    # Pareto-smoothed weights: the reliability threshold of reliable_k is
    # that of the smoothed estimate, whose variance is bounded [VSGY24]
    log_w, k = pareto_smooth(raw)
    return ImportanceEvidence(
        pareto_k=k, reliable=bool(k <= reliable_k(n_draws)),
        n_draws=n_draws, proposal=proposal, seconds=seconds, theta=theta,
        risks=risks, log_weights=raw, **_weighted_fields(log_w))


def _weighted_fields(log_w):
    """``log_z``, ``log_z_se``, the normalised weights and Kish's ESS of
    the log weights ``log_w`` (S,)."""
    w = np.exp(log_w - log_w.max())
    return dict(log_z=float(logsumexp(log_w) - np.log(log_w.size)),
                log_z_se=smoothed_log_z_se(log_w), weights=w / w.sum(),
                ess=float(w.sum() ** 2 / np.sum(w * w)))


def unsmoothed(estimate):
    """``estimate`` (an :class:`ImportanceEvidence`) on its raw log weights:
    the same draws, ``log_z``, its standard error, the weights and the ESS
    without Pareto smoothing (``pareto_k`` and ``reliable`` as they were)."""
    return dataclasses.replace(estimate,
                               **_weighted_fields(estimate.log_weights))


def _check_weighted(values, weights, name):
    """``values`` (S, ...) and normalised ``weights`` (S,), else InputError."""
    values = check_finite_array(values, name)
    weights = check_finite_array(weights, "weights", ndim=1)
    if values.ndim not in (1, 2) or values.shape[0] != weights.size:
        raise InputError(f"{name} must have shape ({weights.size},) or "
                         f"({weights.size}, d) to match the weights, got "
                         f"{values.shape}")
    if np.any(weights < 0) or not np.isclose(weights.sum(), 1.0):
        raise InputError("weights must be >= 0 and sum to 1")
    return values, weights


def weighted_mean_se(values, weights):
    """Standard error of the self-normalised importance-sampling mean of
    ``values`` (S, d) with normalised ``weights`` (Pareto-smoothed where
    they are an estimate's): ``sqrt(sum_i w_i^2 (f_i - f_bar)^2)`` (delta
    method; as for ``log Z``, :func:`smoothed_log_z_se`, not widened for
    ``k`` above 0.5)."""
    values, weights = _check_weighted(values, weights, "values")
    return np.sqrt((weights ** 2) @ ((values - weights @ values) ** 2))


def importance_applies(model, n_draws):
    """Whether importance sampling estimates ``log Z`` of ``model`` with
    ``n_draws`` draws: a centred Gaussian prior, at most
    :data:`MAX_DIMENSION` parameters, a prior that is not near-singular
    (:data:`SINGULAR_PRIOR`), at least :data:`MIN_DRAWS` draws."""
    L = _prior_factor(model)
    if L is None or model.d > MAX_DIMENSION or n_draws < MIN_DRAWS:
        return False
    pivots = np.diag(L) ** 2
    return bool(pivots.min() >= SINGULAR_PRIOR * np.max(np.sum(L * L, axis=1)))


def refine_log_z(model, theta, weights, n_draws, seed=None, fit=None):
    """Importance-sampling estimate of ``log Z`` for a finished run with
    final particles ``theta`` (N, d) and normalised ``weights``.

    The proposal's Gaussian part is EP's approximation
    (:func:`gaussian_approximation`) and the particles' Gaussian fit in
    equal shares (EP's alone when the particles are fewer than
    :data:`PARTICLES_PER_DIMENSION` per dimension), its t component (weight :data:`DEFENSIVE_WEIGHT`)
    centred on EP's mean and scaled by the sum of both covariances: each
    covers what the other misses (docs/benchmarks.md, "Efficiency of the
    SMC sampler"). Where EP does not cover the model, the particles' fit
    alone, the t scaled by twice its covariance. None when the model has no centred Gaussian
    prior, more than :data:`MAX_DIMENSION` parameters, a near-singular
    prior (:data:`SINGULAR_PRIOR`), or ``n_draws`` below :data:`MIN_DRAWS`.
    ``fit``: the ``(mean, cov)`` of :func:`gaussian_approximation` when
    the caller has it already (a bridge run started from it)."""
    if not importance_applies(model, n_draws):
        return None
    theta, weights = _check_weighted(theta, weights, "theta")
    if theta.ndim != 2 or theta.shape[1] != model.d:
        raise InputError(f"theta must have shape (N, {model.d}), got "
                         f"{theta.shape}")
    start = time.perf_counter()
    mean, chol = weighted_gaussian_fit(weights, theta, ridge=1e-8)
    cov = chol @ chol.T
    if fit is None:
        fit = gaussian_approximation(model)
    enough = 1.0 / np.sum(weights ** 2) >= PARTICLES_PER_DIMENSION * model.d
    if fit is None:
        est = importance_log_z(model, mean, cov, n_draws, seed=seed,
                               proposal="particles", wide_cov=2.0 * cov)
    elif enough:
        est = importance_log_z(model, fit[0], fit[1], n_draws, seed=seed,
                               proposal="ep+particles", wide_cov=fit[1] + cov,
                               second=(mean, cov))
    else:
        est = importance_log_z(model, fit[0], fit[1], n_draws, seed=seed,
                               proposal="ep", wide_cov=fit[1] + cov)
    return dataclasses.replace(est, seconds=time.perf_counter() - start)
