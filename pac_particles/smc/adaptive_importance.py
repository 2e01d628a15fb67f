"""Adaptive importance sampling: a Gaussian proposal refitted to its own
weighted draws, a round or two, before a sampler trusts it.

:func:`~pac_particles.smc.posterior.run_smc` draws from the Gaussian
approximation ``q`` first (:mod:`pac_particles.smc.gaussian_bridge`); where
the Pareto tail of the weights says ``q`` is poor,
:func:`adaptive_importance_log_z` refits ``q`` to the weighted draws
(:func:`refined_proposal`: population Monte Carlo [CGMR04] with the
weights tempered as in the cross-entropy method [RK04]) and draws afresh.
Each round's estimate uses its own draws alone, from a proposal fixed
before them: importance sampling from a fixed ``q``, exact as
:func:`~pac_particles.smc.importance_evidence.importance_log_z` is.

References
----------
[CGMR04] Cappe, O., Guillin, A., Marin, J.-M. and Robert, C. P. (2004).
Population Monte Carlo. Journal of Computational and Graphical Statistics
13(4), 907-929.
[RK04] Rubinstein, R. Y. and Kroese, D. P. (2004). The Cross-Entropy
Method. Springer.
"""

import dataclasses

import numpy as np
from particles.resampling import essl

from pac_particles.core.checks import check_count, check_positive
from pac_particles.smc.importance_evidence import (MIN_DRAWS,
                                                   gaussian_approximation,
                                                   importance_log_z,
                                                   refine_log_z, reliable_k,
                                                   unsmoothed)
from pac_particles.smc.moves.base import weighted_gaussian_fit

__all__ = ["adaptive_importance_log_z", "refined_proposal", "MassCheck",
           "MASS_CHECK_Z", "piloted_refinement",
           "REFINEMENT_ROUNDS", "REFINEMENT_ESS_PER_DIMENSION"]

#: adaptive importance sampling (:func:`adaptive_importance_log_z`): at most
#: this many refits of the proposal after the first draws
REFINEMENT_ROUNDS = 2
#: ... each from the draws' weights tempered down to an ESS of this many
#: per dimension (:func:`refined_proposal`), and none where that is more
#: than a quarter of the draws
REFINEMENT_ESS_PER_DIMENSION = 10


def refined_proposal(estimate, min_ess):
    """``(mean, cov, beta)``: the Gaussian fitted to the weighted draws of
    an importance sampler (an
    :class:`~pac_particles.smc.importance_evidence.ImportanceEvidence`),
    one round of population Monte Carlo [CGMR04] with the weights tempered
    as in the cross-entropy method [RK04]: ``w^beta``, ``beta`` the largest
    in [0, 1] whose Kish ESS is at least ``min_ess`` (bisection), so that a
    pilot whose weights sit on a few draws moves its Gaussian part of the
    way towards the posterior (``beta < 1``) rather than onto those draws.
    The draws are the estimate's posterior draws (``theta``; for the
    scale-invariant risks each direction with a fresh chi_d radius, so
    that the fit has the posterior's radial spread), the weights its
    Pareto-smoothed ones, the covariance with a ridge of ``1e-8`` times
    its mean variance
    (:func:`~pac_particles.smc.moves.base.weighted_gaussian_fit`)."""
    min_ess = check_positive(min_ess, "min_ess")
    log_w = np.log(np.maximum(estimate.weights, np.finfo(float).tiny))
    log_w -= log_w.max()
    beta = 1.0
    if essl(log_w) < min_ess:
        low, high = 0.0, 1.0
        for _ in range(40):
            mid = 0.5 * (low + high)
            low, high = ((mid, high) if essl(mid * log_w) >= min_ess
                         else (low, mid))
        beta = low
    w = np.exp(beta * log_w)
    mean, chol = weighted_gaussian_fit(w / w.sum(), estimate.theta, ridge=1e-8)
    return mean, chol @ chol.T, beta


def adaptive_importance_log_z(model, mean, cov, n_draws=2000, seed=None,
                              proposal="ep", max_k=None,
                              rounds=REFINEMENT_ROUNDS, second=None):
    """Importance sampling from ``N(mean, cov)``
    (:func:`~pac_particles.smc.importance_evidence.importance_log_z`, its
    defensive mixture) and, while the Pareto tail shape of the weights
    exceeds ``max_k`` (default
    :func:`~pac_particles.smc.importance_evidence.reliable_k`), up to
    ``rounds`` more samplers, each from the Gaussian refitted to the
    previous one's weighted draws (:func:`refined_proposal`; population
    Monte Carlo [CGMR04]). ``second``: the ``(mean, cov)`` of a Gaussian
    that every round's proposal keeps beside its own (``importance_log_z``'s
    ``second``: the fit of a scouting run from the prior, which covers
    modes that ``N(mean, cov)`` misses), with an optional share.

    Every round draws afresh from a proposal fixed before its draws, and
    the estimate returned is that of one round alone (the first whose tail
    passes, else the one of least ``k``): importance sampling from a fixed
    ``q``, exact as ``importance_log_z`` is. The earlier rounds' draws
    chose ``q`` and are not reused (their weights are relative to other
    proposals); they are counted in ``earlier_draws`` and in the model's
    risk evaluations. A round is refitted only where
    ``REFINEMENT_ESS_PER_DIMENSION x d`` is at most a quarter of the draws.

    Where VB's Gaussian is poor (a million rows: the noise of sampled
    pairs), one refit brings ``k`` below the threshold and the log Z of a
    long reference within its standard error (docs/benchmarks.md, "The
    risk on an accelerator").

    Returns
    -------
    ImportanceEvidence, with ``rounds`` and ``earlier_draws`` set; its
    ``mean, cov`` the Gaussian of the round returned.
    """
    n_draws = check_count(n_draws, "n_draws", minimum=MIN_DRAWS)
    rounds = check_count(rounds, "rounds", minimum=0)
    max_k = reliable_k(n_draws) if max_k is None else float(max_k)
    rng = np.random.default_rng(seed)
    min_ess = REFINEMENT_ESS_PER_DIMENSION * model.d
    if 4 * min_ess > n_draws:
        rounds = 0
    best = est = importance_log_z(model, mean, cov, n_draws, seed=rng,
                                  proposal=proposal, second=second)
    spent = 0
    for r in range(1, rounds + 1):
        if est.pareto_k <= max_k:
            break
        spent += est.n_draws
        mean, cov, _ = refined_proposal(est, min_ess)
        est = dataclasses.replace(
            importance_log_z(model, mean, cov, n_draws, seed=rng,
                             proposal=f"{proposal}, refitted",
                             second=second),
            rounds=r, earlier_draws=spent)
        if not est.pareto_k > best.pareto_k:
            best = est
    return est if est.pareto_k <= max_k else best


#: the importance estimate fails the missing-mass check when it lies more
#: than this many combined standard errors below the scouting run's
#: tempering estimate (:class:`MassCheck`)
MASS_CHECK_Z = 3.0


@dataclasses.dataclass(frozen=True)
class MassCheck:
    """Whether importance sampling from a Gaussian ``q`` saw the posterior
    mass that a scouting run from the prior found.

    A proposal that misses a mode gives weights that look light-tailed
    (the Pareto ``k`` sees only the draws made) and a ``log Z`` too low by
    the log of the missed share. A small tempering run from the prior
    (the scout) reaches every region of the posterior with mass, and its
    particles' Gaussian fit joins the proposal
    (:func:`adaptive_importance_log_z`'s ``second``); its own estimate
    ``log_z_scout`` is then compared with the importance estimate: missing
    mass shows as ``z = (log_z_importance - log_z_scout) / se < -``
    :data:`MASS_CHECK_Z`, ``se`` the two standard errors combined. The
    comparison is one-sided: a tempering run of few particles falls
    short of ``log Z`` rather than above it.

    Attributes
    ----------
    passed : bool, ``z >= -MASS_CHECK_Z``.
    z : the standardised difference.
    log_z_importance, log_z_importance_se : the importance estimate.
    log_z_scout, log_z_scout_se : the scout's tempering estimate.
    scout_particles : the scout's resampled particles M.
    """

    passed: bool
    z: float
    log_z_importance: float
    log_z_importance_se: float
    log_z_scout: float
    log_z_scout_se: float
    scout_particles: int

    @classmethod
    def compare(cls, estimate, scout):
        """The check of an importance ``estimate``
        (:class:`~pac_particles.smc.importance_evidence.ImportanceEvidence`)
        against a ``scout`` run
        (:class:`~pac_particles.smc.result.SMCPosterior` from the prior,
        tempering estimate)."""
        scout_se = scout.log_z_se if scout.log_z_se is not None else 0.0
        se = float(np.hypot(estimate.log_z_se, scout_se))
        z = (estimate.log_z - scout.log_z) / se if se > 0 else 0.0
        return cls(passed=bool(z >= -MASS_CHECK_Z), z=float(z),
                   log_z_importance=float(estimate.log_z),
                   log_z_importance_se=float(estimate.log_z_se),
                   log_z_scout=float(scout.log_z),
                   log_z_scout_se=float(scout_se),
                   scout_particles=int(scout.n_chains or 0))


def piloted_refinement(model, theta, weights, n_draws, seed=None, fit=None,
                       min_ess_share=0.0):
    """The importance refinement of a finished run
    (:func:`~pac_particles.smc.importance_evidence.refine_log_z`), whether
    to use it decided on a pilot set of draws and the estimate made on
    fresh draws from the same proposal.

    Deciding on the estimate's own draws selects estimates: where the
    weights are two-valued in effect (draws inside or outside a narrow
    posterior), the Pareto ``k`` of the largest weights is light when more
    draws than usual hit the posterior, so the kept estimates were high and
    their spread smaller than their error bars said (docs/benchmarks.md,
    "The refinement decided on a pilot"). The pilot's draws
    (``n_draws`` of them, from the same proposal) decide: ``reliable`` of
    the result is the pilot's ``k <= reliable_k(n_draws)`` and its Kish
    ESS at least ``min_ess_share`` of the draws; the result's ``log_z``,
    ``log_z_se``, ``pareto_k`` and draws are the fresh set's, independent
    of that decision given the proposal; ``earlier_draws`` counts the
    pilot's. The fresh set's weights are Pareto-smoothed only where its
    own ``k`` lies in (0.5, ``reliable_k``], where the raw weights' variance
    is infinite: at a light ``k`` the raw weights have a finite variance
    and smoothing them only biases (a tail of two values in effect, draws
    inside or outside the posterior's arc, fits ``k`` of -1.8 to -0.3 or of
    2-3; smoothed, the separated design at 50 n read 0.02-0.06 nats low at
    the first and 0.33-0.41 at the second: docs/benchmarks.md, "The
    refinement decided on a pilot"), and above ``reliable_k`` the pilot's
    light tail vouches for the proposal.
    """
    rng = np.random.default_rng(seed)
    pilot_seed, estimate_seed = (int(s) for s in rng.integers(2 ** 31, size=2))
    if fit is None:
        # once for both sets of draws (refine_log_z would fit it each time)
        fit = gaussian_approximation(model)
    pilot = refine_log_z(model, theta, weights, n_draws, seed=pilot_seed,
                         fit=fit)
    if pilot is None:
        return None
    if not (pilot.reliable and pilot.ess >= min_ess_share * pilot.n_draws):
        return dataclasses.replace(pilot, reliable=False)
    estimate = refine_log_z(model, theta, weights, n_draws,
                            seed=estimate_seed, fit=fit)
    if not 0.5 < estimate.pareto_k <= reliable_k(n_draws):
        estimate = unsmoothed(estimate)
    return dataclasses.replace(estimate, reliable=True,
                               earlier_draws=pilot.n_draws,
                               pilot_log_z=pilot.log_z,
                               pilot_log_z_se=pilot.log_z_se,
                               seconds=pilot.seconds + estimate.seconds)
