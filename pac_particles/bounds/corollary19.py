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

* The posteriors of the methods -- a Gaussian ``rho`` (VB, EP; linear or GP
  scores) in closed form, the Gibbs posterior from ``log Z``, an SMC run --
  are :mod:`pac_particles.bounds.corollary19_posteriors`; this module holds
  the bound for any ``rho`` given ``E_rho[R_n]`` and ``KL``
  (:func:`pac_bayes_bound`) and its record (:class:`PACBayesBound`).
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

    from pac_particles.bounds import pac_bayes_bound
    cert = pac_bayes_bound(0.1, 5.0, lam=20.0, n_pos=500, n_neg=500)
    cert.bound, cert.auc_risk_bound, cert.auc_risk_bound_two_sample

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
from pac_particles.problem.data import check_lam
# about the bound's normalisation, kept next to the VB default lam they serve
from pac_particles.approx.vb import ordered_pairs_factor

__all__ = ["TRIVIAL_BOUND", "PACBayesBound", "pac_bayes_bound",
           "prevalence_factor_lower"]

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
