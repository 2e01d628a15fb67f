"""The dissertation's Corollary 19 for AUC scoring, kept for reference.

The certificates reported by default are the PAC-Bayes-kl and Catoni bounds
of :mod:`pac_particles.bounds.ranking`; this linear (Hoeffding) form is
vacuous on most real data sets. Every bound field of :class:`PACBayesBound`
is clipped to [0, 1] (the terms are not).

Risks of the theorem
--------------------
The bound is stated for the ranking risk over *all ordered pairs* (Alquier,
Ridgway & Chopin 2016; Section 5 of the dissertation), with
``f_theta(x, x') = 2 * 1{<theta, x> > <theta, x'>} - 1``::

    r_n(theta) = 1/(n(n-1)) sum_{i != j} 1{(Y_i - Y_j) f_theta(X_i, X_j) < 0},
    R(theta)   = P((Y_1 - Y_2) f_theta(X_1, X_2) < 0).

Same-class pairs never count and a mis-ordered pos/neg pair counts in both
orders (a tie in one), so with our ``R_n`` (fraction of mis-ordered pos/neg
pairs, ties 1/2) and ``AUC(theta) = P(s(X+) > s(X-)) + P(tie)/2``::

    r_n = q_n R_n,          q_n = 2 n_pos n_neg / (n (n - 1))       (exact)
    R   = 2 pi (1 - pi) (1 - AUC(theta)),   pi = P(Y = 1)           (exact)

and the Gibbs posterior ``exp(-lam R_n)`` (our ``lam``) is ``exp(-lam' r_n)``
with ``lam' = lam / q_n`` (``lam_pairs``); KL terms do not change.

The certificate
---------------
Under the Hoeffding assumption with ``f(lam', n) = lam'^2 / (n - 1)``
(Proposition 18), Theorem 8 gives Corollary 19: with probability at least
``1 - eps`` over the sample, simultaneously for every distribution ``rho``,::

    E_rho[R] <= E_rho[r_n] + lam' / (n - 1) + (KL(rho, prior) + log(1/eps)) / lam'.

* Gaussian ``rho`` (VB, EP): ``E_rho[r_n] = q_n E_rho[R_n]`` in closed form
  (:func:`pac_particles.approx.vb.expected_auc_risk`) and ``KL`` in closed form
  (:func:`pac_particles.core.gaussian.gaussian_kl`): linear scores with a Gaussian
  prior (:func:`pac_bayes_bound_gaussian`), or GP latent training scores
  ``s ~ N(m, S)`` with the prior ``N(0, K)`` (:func:`pac_bayes_bound_gp`; the
  pairs' differences are ``e_i - e_j``).
* The Gibbs posterior itself (SMC): ``lam E[R_n] + KL = lam' E[r_n] + KL = -log Z``
  (Proposition 6 with ``rho`` the Gibbs posterior), so the bound is
  ``-log Z / lam' + lam' / (n - 1) + log(1/eps) / lam'``
  (:func:`pac_bayes_bound_gibbs`). For an SMC run, linear or GP,
  :func:`smc_certificate` certifies the exact Gibbs posterior with a lower
  confidence bound on ``log Z`` in place of ``log Z`` (its level added to
  ``eps`` by a union bound); SMC's estimates of ``log Z`` and ``E[R_n]``
  are not plugged in. EP's spike-and-slab approximation is a Gaussian
  ``rho`` like the others, with its KL to the mixture prior
  (:meth:`pac_particles.problem.priors.SpikeSlabPrior.kl_gaussian`), not EP's
  ``log Z``, which is not that of the Gibbs posterior.
* ``lam`` chosen from a grid of ``K`` values *using the data*: a union bound over
  the grid replaces ``log(1/eps)`` by ``log(K / eps)`` (``grid_size=K``);
  :func:`pac_particles.sklearn.selection.lam_grid` is that grid. The bound's ``lam``
  must be a grid value: ``lam_grid=`` evaluates it there for the same
  ``rho`` when the posterior's ``lam`` is off the grid (a tempering step).

Sample sizes come either as bare class counts ``n_pos, n_neg`` or from the
empirical risk itself (``risk=``, a :class:`pac_particles.problem.risks.Risk`): its
class counts give ``q_n`` and its ``n_independent`` the two-sample term below.

The theorem needs ``lam'`` fixed before seeing the sample. The Corollary 21
default (:func:`pac_particles.approx.vb.corollary21_lam`) fixes ``lam' = sqrt(d(n-1))/2``
and is fine. A ``lam`` fixed on *our* scale makes ``lam' = lam / q_n`` depend on
the class counts; strictly, count it as a grid over the ``n - 1`` possible
values of ``n_pos`` (multiply ``grid_size`` by ``n - 1``).

From ``R`` to ``1 - AUC``
-------------------------
``E_rho[1 - AUC] = E_rho[R] / (2 pi (1 - pi))`` with ``pi`` unknown, so:

* ``auc_risk_bound = bound / q_n`` is a *plug-in*: ``q_n`` is the unbiased
  estimate of ``2 pi (1 - pi)``, not a bound on it;
* ``auc_risk_bound_rigorous = bound / q_lo`` with ``q_lo`` the smallest value of
  ``2 pi (1 - pi)`` over the Clopper-Pearson interval for ``pi`` at level
  ``1 - eps_prevalence``: it holds with probability at least
  ``1 - eps - eps_prevalence`` (union bound).

A sharper certificate on our scale (not in the dissertation)
------------------------------------------------------------
Conditionally on the labels, positives and negatives are two independent iid
samples and ``R_n(theta)`` is a two-sample U-statistic with mean
``1 - AUC(theta)`` and kernel in [0, 1]. Hoeffding (1963, Section 5b) writes it
as an average of means of ``k = min(n_pos, n_neg)`` independent terms, so the
Hoeffding assumption holds with ``f(lam) = lam^2 / (8 k)`` for *our* ``lam``, and
Theorem 8 gives, with probability at least ``1 - eps``, for every ``rho``::

    E_rho[1 - AUC] <= E_rho[R_n] + lam / (8 k) + (KL + log(grid_size/eps)) / lam

(``auc_risk_bound_two_sample``; for the Gibbs posterior the first and third
terms combine into ``(-log Z + log(grid_size/eps)) / lam``). It needs no
prevalence correction and ``lam`` may depend on the class counts. Against
Corollary 19 divided by ``q_n``, the ``(KL + log)/lam`` term is the same and the
term linear in ``lam`` is 16 times smaller for balanced classes (at least 13.5
times in general): ``lam / (8 k)`` against ``lam n^2 (n-1) / (4 n_pos^2 n_neg^2)``
(part of the gap is that ``f = lam'^2/(n-1)`` is 4 times the one-sample
U-statistic constant of Hoeffding 1963).

``R <= P(Y_1 != Y_2) = 2 pi (1 - pi) <= 1/2`` for every score, so a bound on
``R`` of 1/2 or more is vacuous (``trivial``); on the AUC scale a bound below 1/2
certifies a ranking better than chance. The certificate is for the *randomised*
score ``x . theta``, ``theta ~ rho``, not for the score of the posterior mean.

Usage
-----
::

    from pac_particles.bounds import pac_bayes_bound_gaussian, pac_bayes_bound_gibbs
    from pac_particles.approx.vb import GaussianVB

    # Gaussian rho, lam from Corollary 21; EP: EPLinear(X, y, lam).fit(), same call
    res = GaussianVB(X, y, family="full", standardize=False).fit()
    cert = pac_bayes_bound_gaussian(res.mean, res.cov, X, y, lam=res.lam,
                                    prior_var=res.prior_var, standardize=False,
                                    eps=0.05)
    cert.bound, cert.auc_risk_bound, cert.auc_risk_bound_rigorous
    cert.auc_risk_bound_two_sample       # the sharpest rigorous bound on 1 - AUC

    # Gibbs posterior from SMC (post = run_smc(model, ...), model.lam = lam);
    # lam_grid=grid if lam was picked on that grid with the data
    cert = smc_certificate(post, eps=0.05, lam_grid=grid)
    # the same, by hand: log Z from below at 0.005, the bound at 0.045
    log_z, how = post.log_z_lower_bound(0.005)
    cert = pac_bayes_bound_gibbs(log_z, post.lam, risk=model.empirical_risk,
                                 eps=0.045, lam_grid=grid)

Data-dependent priors
---------------------
The prior must not depend on the sample. ``standardize=True`` rescales the
columns by their sample standard deviations, which makes the prior on the raw
scale ``N(0, diag(1/scale^2) prior_var)`` data-dependent: the certificate is
then approximate (the dependence is through d scales that concentrate at rate
``1/sqrt(n)``). For a rigorous certificate fit with ``standardize=False`` on
inputs scaled in advance (or with scales from a separate sample). Centring is
harmless: the risk is invariant to shifts.

References
----------
[ARC16] Alquier, P., Ridgway, J. and Chopin, N. (2016). On the properties of
variational approximations of Gibbs posteriors. Journal of Machine Learning
Research 17(239), 1-41.

Catoni, O. (2007). PAC-Bayesian supervised classification: the thermodynamics of
statistical learning. IMS Lecture Notes Monograph Series 56.

Clopper, C. J. and Pearson, E. S. (1934). The use of confidence or fiducial
limits illustrated in the case of the binomial. Biometrika 26(4), 404-413.

Hoeffding, W. (1963). Probability inequalities for sums of bounded random
variables. Journal of the American Statistical Association 58(301), 13-30.

McAllester, D. A. (1998). Some PAC-Bayesian theorems. Proceedings of COLT, 230-234.
"""

import dataclasses
import math
from dataclasses import dataclass
from typing import Optional

import numpy as np
from scipy.stats import beta

from pac_particles.core.checks import (InputError, check_count, check_positive,
                     check_probability)
from pac_particles.problem.data import check_lam, validate_xy
from pac_particles.core.gaussian import gaussian_kl
from pac_particles.problem.risks import AUCRisk
# about the bound's normalisation, kept next to the VB default lam they serve
from pac_particles.approx.vb import expected_auc_risk, ordered_pairs_factor
from pac_particles.bounds.ranking import EVIDENCE_SHARE, check_log_z, gibbs_kl

__all__ = ["PACBayesBound", "pac_bayes_bound", "pac_bayes_bound_gaussian",
           "pac_bayes_bound_gp", "pac_bayes_bound_gibbs",
           "prevalence_factor_lower", "smc_certificate"]

# R <= P(Y_1 != Y_2) = 2 pi (1 - pi) <= 1/2 for every score
TRIVIAL_BOUND = 0.5


@dataclass(frozen=True)
class PACBayesBound:
    """Terms of the Corollary 19 certificate ``bound = empirical + kl + complexity``.

    Attributes
    ----------
    bound : float in [0, 1]
        Upper bound on ``E_rho[R]``, the population risk over all ordered pairs;
        holds with probability at least ``1 - eps`` (clipped; so are the
        ``auc_risk_bound*`` fields).
    empirical_term : float or None
        ``E_rho[r_n] = q_n E_rho[R_n]`` (None for a Gibbs posterior given by
        ``log Z`` alone).
    kl_term : float or None
        ``KL(rho, prior) / lam_pairs`` (None as above).
    free_energy_term : float
        ``empirical_term + kl_term = (lam E_rho[R_n] + KL) / lam_pairs``
        (``-log Z / lam_pairs`` for the Gibbs posterior).
    complexity_term : float
        ``lam_pairs / (n - 1) + log(grid_size / eps) / lam_pairs``.
    trivial : float
        1/2: every score has ``R <= 1/2``; the bound is informative below it.
    eps : float
    grid_size : int
    lam : float
        Inverse temperature on our scale (multiplies ``R_n``).
    lam_pairs : float
        ``lam / q_n``, the dissertation's ``lambda`` (multiplies ``r_n``).
    pair_factor : float
        ``q_n = 2 n_pos n_neg / (n (n - 1))``.
    n_pos, n_neg : int
    kl : float or None
        ``KL(rho, prior)``.
    expected_risk : float or None
        ``E_rho[R_n]`` on our scale (fraction of mis-ordered pos/neg pairs).
    auc_risk_bound : float
        ``bound / q_n``: plug-in bound on ``E_rho[1 - AUC]`` (``q_n`` estimates
        ``2 pi (1 - pi)``).
    auc_risk_bound_rigorous : float
        ``bound / q_lo``: bound on ``E_rho[1 - AUC]`` holding with probability
        at least ``1 - eps - eps_prevalence``.
    eps_prevalence : float
    auc_risk_bound_two_sample : float
        ``E_rho[R_n] + lam / (8 min(n_pos, n_neg)) + (KL + log(grid_size/eps))
        / lam``: bound on ``E_rho[1 - AUC]`` from the two-sample Hoeffding
        inequality given the labels (module docstring); holds with
        probability at least ``1 - eps`` on its own.
    posterior_lam : float or None
        The inverse temperature ``rho`` was fitted at, when the bound's
        ``lam`` is another value: a value of the grid fixed in advance
        (``lam_grid``); None when they are the same.
    delta_shares : tuple of (part, delta)
        What each part of the statement spent of ``eps`` when more than
        the inequality needed a share (a Monte Carlo confidence bound on
        ``log Z``); empty otherwise.
    note : str
        How terms estimated by Monte Carlo entered the bound.
    """

    bound: float
    empirical_term: Optional[float]
    kl_term: Optional[float]
    free_energy_term: float
    complexity_term: float
    trivial: float
    eps: float
    grid_size: int
    lam: float
    lam_pairs: float
    pair_factor: float
    n_pos: int
    n_neg: int
    kl: Optional[float]
    expected_risk: Optional[float]
    auc_risk_bound: float
    auc_risk_bound_rigorous: float
    eps_prevalence: float
    auc_risk_bound_two_sample: float
    posterior_lam: Optional[float] = None
    delta_shares: tuple = ()
    note: str = ""

    @property
    def n(self):
        return self.n_pos + self.n_neg

    @property
    def non_vacuous(self):
        """True when the bound on ``R`` is below the trivial value 1/2."""
        return self.bound < self.trivial

    @property
    def vacuous(self):
        """True when the two-sample bound on ``E_rho[1 - AUC]`` (the one
        reported) is 1/2 or more: no better than a coin."""
        return self.auc_risk_bound_two_sample >= TRIVIAL_BOUND


def _check_counts(n_pos, n_neg):
    n_pos = check_count(n_pos, "n_pos", minimum=0)
    n_neg = check_count(n_neg, "n_neg", minimum=0)
    if n_pos + n_neg < 2:
        raise InputError(f"n = n_pos + n_neg must be at least 2, got "
                         f"{n_pos + n_neg}")
    if n_pos < 1 or n_neg < 1:
        raise InputError(f"need at least one positive and one negative, got "
                         f"n_pos={n_pos}, n_neg={n_neg}")
    return n_pos, n_neg


def _sample_sizes(n_pos, n_neg, risk):
    """``(n_pos, n_neg, n_independent)`` from bare class counts or from the
    empirical risk (a :class:`pac_particles.problem.risks.Risk`); bare counts are
    those of the AUC risk, whose ``n_independent`` is ``min(n_pos, n_neg)``."""
    if risk is None:
        if n_pos is None or n_neg is None:
            raise InputError("give the class counts n_pos and n_neg, or risk")
        n_pos, n_neg = _check_counts(n_pos, n_neg)
        return n_pos, n_neg, min(n_pos, n_neg)
    if n_pos is not None or n_neg is not None:
        raise InputError("give either risk or n_pos and n_neg, not both")
    n_pos, n_neg = _check_counts(risk.n_pos, risk.n_neg)
    return n_pos, n_neg, check_count(risk.n_independent, "n_independent")


def prevalence_factor_lower(n_pos, n_neg, eps_prevalence):
    """Lower confidence bound on ``2 pi (1 - pi)`` at level ``1 - eps_prevalence``.

    The minimum of the concave ``2 p (1 - p)`` over the two-sided
    Clopper-Pearson interval for ``pi`` from ``n_pos`` successes in ``n`` trials.
    """
    n_pos, n_neg = _check_counts(n_pos, n_neg)
    alpha = check_probability(eps_prevalence, "eps_prevalence")
    n = n_pos + n_neg
    lo = beta.ppf(alpha / 2.0, n_pos, n - n_pos + 1)
    hi = beta.ppf(1.0 - alpha / 2.0, n_pos + 1, n - n_pos)
    return float(min(2.0 * lo * (1.0 - lo), 2.0 * hi * (1.0 - hi)))


def _certificate(free_energy, lam, sizes, eps, grid_size, eps_prevalence,
                 expected_risk=None, kl=None):
    """Assemble the Corollary 19 bound from ``lam E_rho[R_n] + KL``;
    ``sizes = (n_pos, n_neg, n_independent)`` from :func:`_sample_sizes`."""
    lam = check_lam(lam)
    n_pos, n_neg, n_independent = sizes
    eps = check_probability(eps, "eps")
    grid_size = check_count(grid_size, "grid_size")
    eps_prevalence = eps if eps_prevalence is None \
        else check_probability(eps_prevalence, "eps_prevalence")
    if eps + eps_prevalence >= 1.0:
        raise InputError(f"eps + eps_prevalence must be below 1, got "
                         f"{eps + eps_prevalence}")
    n = n_pos + n_neg
    q_n = ordered_pairs_factor(n_pos, n_neg)
    lam_pairs = lam / q_n
    free_energy_term = free_energy / lam_pairs
    complexity = lam_pairs / (n - 1.0) + math.log(grid_size / eps) / lam_pairs
    bound = free_energy_term + complexity
    q_lo = prevalence_factor_lower(n_pos, n_neg, eps_prevalence)
    log_term = math.log(grid_size / eps)
    two_sample = ((free_energy + log_term) / lam
                  + lam / (8.0 * n_independent))
    # every reported bound on a risk lies in [0, 1]; the terms stay raw
    return PACBayesBound(
        bound=_clip(bound),
        empirical_term=None if expected_risk is None else q_n * expected_risk,
        kl_term=None if kl is None else kl / lam_pairs,
        free_energy_term=free_energy_term,
        complexity_term=complexity,
        trivial=TRIVIAL_BOUND,
        eps=eps, grid_size=grid_size, lam=lam, lam_pairs=lam_pairs,
        pair_factor=q_n, n_pos=n_pos, n_neg=n_neg, kl=kl,
        expected_risk=expected_risk,
        auc_risk_bound=_clip(bound / q_n),
        auc_risk_bound_rigorous=_clip(bound / q_lo),
        eps_prevalence=eps_prevalence,
        auc_risk_bound_two_sample=_clip(two_sample))


def _clip(value):
    return float(min(max(value, 0.0), 1.0))


def _check_risk(expected_risk):
    # a fraction of pos/neg pairs
    return check_probability(expected_risk, "expected_risk", closed=True)


def pac_bayes_bound(expected_risk, kl, lam, n_pos=None, n_neg=None, eps=0.05,
                    grid_size=1, eps_prevalence=None, risk=None,
                    lam_grid=None):
    """Corollary 19 bound for any ``rho`` from ``E_rho[R_n]`` and ``KL(rho, prior)``.

    With probability at least ``1 - eps``::

        E_rho[R] <= q_n E_rho[R_n] + lam'/(n - 1) + (KL + log(grid_size/eps))/lam',

    ``lam' = lam / q_n``, ``q_n = 2 n_pos n_neg / (n (n - 1))``, ``R`` the
    population risk over all ordered pairs (see the module docstring).

    The inequality holds for every ``rho`` at once, but its ``lam`` must be
    fixed in advance. When ``rho`` was fitted at a ``lam`` chosen with the
    data, give the grid fixed in advance it was chosen on (``lam_grid``):
    the bound is then evaluated at every grid value (a union bound,
    ``grid_size = len(lam_grid)``) for the same ``rho``, and the record at
    the value where ``auc_risk_bound_two_sample`` is tightest is returned,
    with ``lam`` that grid value and ``posterior_lam`` the ``lam`` given
    (None when equal). A ``lam`` off the grid (a tempering step of SMC) is
    thus never the bound's.

    Parameters
    ----------
    expected_risk : float
        ``E_rho[R_n]``, our scale: expected fraction of mis-ordered pos/neg
        pairs of the training sample.
    kl : float
        ``KL(rho || prior)``, >= 0.
    lam : float
        Our inverse temperature (multiplies ``R_n``), > 0.
    n_pos, n_neg : int
        Class counts of the training sample (or give ``risk``).
    eps : float in (0, 1), default 0.05
    grid_size : int >= 1, default 1
        Number of candidate values ``lam`` was chosen from using the data
        (``lam`` one of them); with ``lam_grid``, 1 or its length.
    eps_prevalence : float in (0, 1), optional
        Level of the class-prevalence interval behind
        ``auc_risk_bound_rigorous`` (default ``eps``).
    risk : pac_particles.problem.risks.Risk, optional
        The empirical risk of the training sample, instead of ``n_pos,
        n_neg``: its class counts and ``n_independent``.
    lam_grid : 1-D array of lam > 0, optional
        The grid, fixed before seeing the data, that ``lam`` was chosen
        on (:func:`pac_particles.sklearn.selection.lam_grid`).

    Returns
    -------
    PACBayesBound

    Examples
    --------
    >>> cert = pac_bayes_bound(0.1, 5.0, lam=20.0, n_pos=500, n_neg=500)
    >>> round(cert.pair_factor, 4), round(cert.lam_pairs, 2)
    (0.5005, 39.96)
    >>> round(cert.bound, 4), cert.non_vacuous, round(cert.auc_risk_bound, 4)
    (0.2901, True, 0.5797)
    """
    expected_risk = _check_risk(expected_risk)
    kl = check_positive(kl, "kl", allow_zero=True)
    lam = check_lam(lam)
    sizes = _sample_sizes(n_pos, n_neg, risk)
    if lam_grid is None:
        return _certificate(lam * expected_risk + kl, lam, sizes, eps,
                            grid_size, eps_prevalence, expected_risk, kl)
    return _on_grid(lambda g: g * expected_risk + kl, lam, lam_grid,
                    grid_size, sizes, eps, eps_prevalence, expected_risk, kl)


def _check_grid(lam_grid, grid_size):
    grid = np.atleast_1d(np.asarray(lam_grid, dtype=float))
    if grid.ndim != 1 or grid.size == 0 or not np.all(np.isfinite(grid)) \
            or np.any(grid <= 0):
        raise InputError("lam_grid must be a non-empty 1-D array of lam > 0")
    if check_count(grid_size, "grid_size") not in (1, grid.size):
        raise InputError(f"grid_size must be 1 or len(lam_grid) = "
                         f"{grid.size} with lam_grid, got {grid_size}")
    return grid


def _on_grid(free_energy_at, lam, lam_grid, grid_size, sizes, eps,
             eps_prevalence, expected_risk, kl):
    """The record at the value ``g`` of ``lam_grid`` where the two-sample
    bound on ``1 - AUC`` (the one ``vacuous`` reads) is tightest, every
    field at that ``g`` (union bound: ``grid_size = len(lam_grid)``);
    ``free_energy_at(g)`` is an upper bound on ``g E_rho[R_n] + KL`` for
    the one ``rho``."""
    grid = _check_grid(lam_grid, grid_size)
    eps = check_probability(eps, "eps")
    log_term = math.log(grid.size / eps)
    # unclipped, so that ties at 1 still pick the best
    two_sample = [(free_energy_at(g) + log_term) / g + g / (8.0 * sizes[2])
                  for g in grid]
    g = float(grid[int(np.argmin(two_sample))])
    best = _certificate(free_energy_at(g), g, sizes, eps, grid.size,
                        eps_prevalence, expected_risk, kl)
    same = math.isclose(g, lam, rel_tol=1e-12)
    return dataclasses.replace(best, posterior_lam=None if same else lam)


def _gaussian_bound(mean, cov, prior_var, X_pos, X_neg, lam, risk, eps,
                    grid_size, eps_prevalence):
    """Corollary 19 for ``rho = N(mean, cov)`` on parameters whose scores
    are ``X @ theta``: closed-form ``E_rho[R_n]`` and KL to ``N(0, prior_var)``."""
    kl = gaussian_kl(mean, cov, prior_var)
    expected_risk = expected_auc_risk(mean, cov, X_pos, X_neg)
    return pac_bayes_bound(expected_risk, max(kl, 0.0), lam, eps=eps,
                           grid_size=grid_size, eps_prevalence=eps_prevalence,
                           risk=risk)


def pac_bayes_bound_gaussian(mean, cov, X, y, lam, prior_var=1.0,
                             standardize=True, eps=0.05, grid_size=1,
                             eps_prevalence=None):
    """Corollary 19 bound for a Gaussian ``rho = N(mean, cov)`` (VB, EP).

    ``E_rho[R_n]`` and ``KL(rho || N(0, prior_var I))`` are computed exactly.
    ``X, y, standardize`` must be those ``mean`` and ``cov`` were fitted with
    (they are validated by ``validate_xy`` the same way).

    Parameters
    ----------
    mean : (d,) array
    cov : (d, d) array
    X, y : training data (raw scale).
    lam : float
        Our inverse temperature for the bound (usually the one ``rho`` was
        fitted with; any value fixed in advance is valid).
    prior_var : float or (d,) array, default 1.0
        Isotropic or ARD (diagonal) prior variances.
    standardize : bool, default True
    eps, grid_size, eps_prevalence : see :func:`pac_bayes_bound`.

    Returns
    -------
    PACBayesBound
    """
    data = validate_xy(X, y, standardize=standardize, drop_constant=True)
    mean = np.asarray(mean, dtype=float)
    cov = np.asarray(cov, dtype=float)
    if mean.shape != (data.d,) or cov.shape != (data.d, data.d):
        raise InputError(f"mean and cov must have shapes ({data.d},) and "
                         f"({data.d}, {data.d}) (columns kept by validate_xy), "
                         f"got {mean.shape} and {cov.shape}")
    return _gaussian_bound(mean, cov, prior_var, data.X_pos, data.X_neg, lam,
                           AUCRisk(data.y), eps, grid_size, eps_prevalence)


def pac_bayes_bound_gp(mean, cov, kernel_matrix, y, lam, eps=0.05, grid_size=1,
                       eps_prevalence=None):
    """Corollary 19 bound for a Gaussian ``rho = N(mean, cov)`` on the latent
    training scores of a GP prior ``N(0, K)`` (GP-EP).

    The parameters are the scores themselves, so the pairs' differences are
    ``e_i - e_j``: ``E_rho[R_n]`` is :func:`pac_particles.approx.vb.expected_auc_risk`
    with identity rows and ``KL(rho || N(0, K))`` is in closed form with the
    full prior covariance.

    Parameters
    ----------
    mean : (n,) array, in the order of ``y``.
    cov : (n, n) array.
    kernel_matrix : (n, n) array
        ``K`` (plus the jitter the fit used), in the order of ``y``.
    y : (n,) binary labels of the training points.
    lam : float
    eps, grid_size, eps_prevalence : see :func:`pac_bayes_bound`.

    Returns
    -------
    PACBayesBound
    """
    risk = AUCRisk(y)
    n = risk.n
    mean = np.asarray(mean, dtype=float)
    cov = np.asarray(cov, dtype=float)
    K = np.asarray(kernel_matrix, dtype=float)
    if mean.shape != (n,) or cov.shape != (n, n) or K.shape != (n, n):
        raise InputError(f"mean, cov and kernel_matrix must have shapes "
                         f"({n},), ({n}, {n}), ({n}, {n}), got {mean.shape}, "
                         f"{cov.shape}, {K.shape}")
    eye = np.eye(n)
    return _gaussian_bound(mean, cov, K, eye[risk.positives],
                           eye[~risk.positives], lam, risk, eps, grid_size,
                           eps_prevalence)


def pac_bayes_bound_gibbs(log_z, lam, n_pos=None, n_neg=None,
                          expected_risk=None, eps=0.05, grid_size=1,
                          eps_prevalence=None, risk=None, lam_grid=None):
    """Corollary 19 bound for the Gibbs posterior ``∝ prior exp(-lam R_n)``.

    Since ``lam E[R_n] + KL(Gibbs, prior) = -log Z``,::

        E_Gibbs[R] <= -log Z / lam' + lam'/(n - 1) + log(grid_size/eps)/lam',

    ``lam' = lam / q_n``. ``log Z = log E_prior[exp(-lam R_n)]`` exactly
    (quadrature), or a lower confidence bound on it: the bound then holds
    with probability at least ``1 - eps`` minus that bound's level
    (:func:`smc_certificate` does this for an SMC run; an estimate plugged
    in is not a certificate).

    With ``lam_grid`` (``lam`` chosen with the data; see
    :func:`pac_bayes_bound`) the bound is evaluated at the grid values
    ``g`` for the same Gibbs posterior, whose free energy there is ``g
    E[R_n] + KL = -log Z + (g - lam) E[R_n]``. Without ``expected_risk``
    that is bounded by ``-log Z max(1, g / lam)``: ``0 <= lam E[R_n] <=
    -log Z`` since ``KL >= 0``.

    Parameters
    ----------
    log_z : float
        In ``[-lam, 0]``.
    lam : float
        Our inverse temperature of the Gibbs posterior.
    n_pos, n_neg : int
        Class counts (or give ``risk``).
    expected_risk : float, optional
        Posterior mean of ``R_n``, exact (quadrature); splits the free
        energy into empirical and KL terms. An estimate (the particles'
        weighted risks) would make the bound a plug-in: leave it out.
    eps, grid_size, eps_prevalence, risk, lam_grid : see
        :func:`pac_bayes_bound`.

    Returns
    -------
    PACBayesBound
    """
    log_z, lam = check_log_z(log_z, lam)
    kl = None
    if expected_risk is not None:
        expected_risk = _check_risk(expected_risk)
        kl = gibbs_kl(log_z, lam, expected_risk)
        free_energy = lam * expected_risk + kl      # >= -log_z
    else:
        free_energy = -log_z
    sizes = _sample_sizes(n_pos, n_neg, risk)
    if lam_grid is None:
        return _certificate(free_energy, lam, sizes, eps, grid_size,
                            eps_prevalence, expected_risk, kl)
    if expected_risk is None:
        def free_energy_at(g):
            return free_energy * max(1.0, g / lam)
    else:
        def free_energy_at(g):
            return free_energy + (g - lam) * expected_risk
    return _on_grid(free_energy_at, lam, lam_grid, grid_size, sizes, eps,
                    eps_prevalence, expected_risk, kl)


def smc_certificate(post, eps=0.05, grid_size=1, eps_prevalence=None,
                    lam_grid=None, evidence_share=EVIDENCE_SHARE):
    """Corollary 19 for the exact Gibbs posterior an SMC run of an AUC
    Gibbs model approximates, linear or GP.

    ``post`` is a :class:`pac_particles.smc.posterior.SMCPosterior` (its
    ``lam``, evidence and model ``post.predictor``, whose
    ``empirical_risk`` gives the sample sizes). The certified posterior is
    the Gibbs posterior itself, not the particles (an empirical measure has
    no density, hence no finite KL). Its free energy ``-log Z`` is bounded
    from above by a lower confidence bound on ``log Z`` at level
    ``evidence_share * eps``
    (:meth:`~pac_particles.smc.posterior.SMCPosterior.log_z_lower_bound`: the
    raw importance weights' Markov bound, or the tempering estimate's), and
    Corollary 19 runs at the rest of ``eps``: by a union bound the
    statement holds with probability at least ``1 - eps``
    (``delta_shares`` and ``note`` record it). The particles' ``E[R_n]`` is
    not used (an estimate, see :func:`pac_bayes_bound_gibbs`).
    ``lam_grid``: the grid ``lam`` was chosen on (:func:`pac_bayes_bound`);
    the bound's ``lam`` is then a grid value.
    """
    model = post.predictor
    if model is None:
        raise InputError("smc_certificate needs the posterior's model "
                         "(post.predictor): its risk's sample sizes")
    eps = check_probability(eps, "eps")
    eps_log_z = check_probability(evidence_share, "evidence_share") * eps
    eps_prevalence = eps if eps_prevalence is None else eps_prevalence
    log_z, how = post.log_z_lower_bound(eps_log_z)
    cert = pac_bayes_bound_gibbs(log_z, post.lam, eps=eps - eps_log_z,
                                 grid_size=grid_size,
                                 eps_prevalence=eps_prevalence,
                                 risk=model.empirical_risk, lam_grid=lam_grid)
    return dataclasses.replace(
        cert, eps=eps, note=how,
        delta_shares=(("Corollary 19", eps - eps_log_z), ("log Z", eps_log_z)))
