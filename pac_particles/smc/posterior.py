"""Running tempering SMC on a Gibbs model: one run, or independent chains.

:func:`run_smc` runs waste-free [DC22] (default) or standard
adaptive-tempering SMC on a Gibbs model of :mod:`pac_particles.smc.models`
(:class:`~pac_particles.smc.models.AUCGibbsModel`,
:class:`~pac_particles.smc.models.GPAUCModel`, ...), checks that the final
exponent reached 1, and returns an
:class:`~pac_particles.smc.result.SMCPosterior` (defined in
:mod:`pac_particles.smc.result`, importable from here);
:func:`run_smc_chains` makes independent runs of one model.
``SMCPosterior.from_smc`` summarises a ``particles.SMC`` object that you ran
yourself.

Where a Gaussian approximation ``q`` of the posterior exists (EP's, VB's),
the default run starts from it rather than from the prior
(``start="auto"``), and checks it: a small tempering run from the prior
(the scout, an eighth of the particles) reaches the posterior mass that
``q`` may miss (other modes, arcs of a large ``lam``), its particles'
Gaussian fit joins ``q`` in a defensive mixture with the prior, and
importance draws from that mixture come first [Hes95]. Where their
weights are light-tailed (Pareto ``k`` at most 0.7, ESS at least a fifth
of the draws) and their ``log Z`` is not below the scout's
(:class:`~pac_particles.smc.adaptive_importance.MassCheck`) they are the
posterior; where the tail is heavy, the proposal is refitted to the
weighted draws and drawn from afresh (adaptive importance sampling, a
round or two); otherwise the sampler tempers from the prior, with a
warning where the check failed (``mass_check`` on the result).

The MCMC move defaults to :func:`pac_particles.smc.moves.default_move`: elliptical
slice sampling [MAM10] around a Gaussian fitted to the particles
(:class:`~pac_particles.smc.moves.CalibratedEllipticalSlice`) under a Gaussian
prior, the spike-and-slab Gibbs/slice move
under :class:`~pac_particles.problem.priors.SpikeSlabPrior` (whose posterior
inclusion probabilities are ``SMCPosterior.inclusion_probs``), the random walk
otherwise. Studies of the sampler (efficiency of moves, repeated runs,
the spike-and-slab path) live beside the package, in ``lab/study``.

Point estimates (``mean``, ``bayes_point``, ``componentwise_mode``; see
:mod:`pac_particles.core.weighted_particles`) come from the weighted particles:
:class:`SMCPosterior` is a
:class:`~pac_particles.core.weighted_particles.WeightedParticles`.

The tempering path gives, for free, the Gibbs posteriors at
``gamma_t = lam * exponent_t`` and their log evidences ``log Z_t``
[RACL14, Sec. 4].

Example
-------
::

    from pac_particles.problem.datasets import load_dataset
    from pac_particles.smc.models import AUCGibbsModel
    from pac_particles.smc.posterior import run_smc

    X, y, _ = load_dataset("pima")
    post = run_smc(AUCGibbsModel(X, y, lam=len(y)), n_particles=200,
                   len_chain=10, seed=1)
    post.log_z, post.n_steps
    scores = post.score(X, point="bayes_point")

References
----------
[DC22] Dau, H.-D. and Chopin, N. (2022). Waste-free sequential Monte Carlo.
Journal of the Royal Statistical Society B 84(1), 114-148.
[MAM10]: see :mod:`pac_particles.smc.moves`.
[RACL14] Ridgway, J., Alquier, P., Chopin, N. and Liang, F. (2014).
PAC-Bayesian AUC classification and scoring. NIPS 27.
[VSGY24] Vehtari, A., Simpson, D., Gelman, A., Yao, Y. and Gabry, J.
(2024). Pareto smoothed importance sampling. JMLR 25(72), 1-58.
[Hes95] Hesterberg, T. (1995). Weighted average importance sampling and
defensive mixture distributions. Technometrics 37(2), 185-194.
"""

import dataclasses
import time
import warnings

import numpy as np
import particles
from joblib import Parallel, delayed
from particles import smc_samplers as ssp

from pac_particles.core.checks import InputError, check_choice, check_count, check_probability
from pac_particles.core.parallel import concurrent_folds, limited_threads, one_blas_thread
from pac_particles.core.progress import Progress, tracked
from pac_particles.core.weighted_particles import POINT_ESTIMATES, directions
from pac_particles.smc.adaptive_importance import (MASS_CHECK_Z, MassCheck,
                                                    adaptive_importance_log_z,
                                                    piloted_refinement)
from pac_particles.smc.gaussian_bridge import (STARTS, GaussianBridgeModel,
                                               bridge_approximation, bridge_move)
from pac_particles.smc.gibbs_model import check_gibbs_model
from pac_particles.smc.importance_evidence import (MIN_DRAWS,
                                                   PARTICLES_PER_DIMENSION,
                                                   importance_applies,
                                                   reliable_k)
from pac_particles.smc.moves.base import weighted_gaussian_fit
from pac_particles.smc.moves.decorrelated_chains import DecorrelatedChainsWF
# SMCPosterior lives in smc/result.py; importable from here as the docs show
from pac_particles.smc.result import SMCPosterior, StepParticles
from pac_particles.smc.single_run_variance import LineageVariance, single_run_errors
from pac_particles.smc.tempering import RobustAdaptiveTempering, check_reached_target

__all__ = ["run_smc", "run_smc_chains", "chain_seeds", "SMCPosterior",
           "StepParticles", "single_run_errors", "POINT_ESTIMATES",
           "directions", "IMPORTANCE_ALONE_K", "IMPORTANCE_ALONE_ESS",
           "scout_particles", "SCOUT_SHARE", "MIN_SCOUT_PARTICLES",
           "SCOUT_WEIGHT", "SCOUT_WIDENING", "with_refinement"]

#: a Gaussian start's importance draws are the posterior, with no tempering
#: run, when the Pareto tail shape of their weights is reliable (at most
#: ``reliable_k(S)``, 0.7 from 2154 draws [VSGY24, Sec. 3]) and at most
#: this (the GP problem of the efficiency study, d = 150, has k of 0.5 to
#: 0.7: its importance draws alone were 1.7x more efficient on log Z than
#: the bridge run that a threshold of 0.5 sent a fifth of its runs to)
IMPORTANCE_ALONE_K = 0.7
#: ... and when their Kish ESS is at least this share of the draws: on a
#: posterior of several arcs, draws of a light tail and a small ESS can
#: miss the far arcs while the scout's check passes (the scout's own
#: error bar is wide), where tempering from the prior is exact; on Sonar
#: at 10 n (d = 60) such draws were 0.7 nats low, where the bridge is
#: exact; the draws of a Gaussian that fits have a far larger ESS
#: (docs/benchmarks.md, "Exactness of the default against quadrature")
IMPORTANCE_ALONE_ESS = 0.2


def run_smc(model, n_particles=200, len_chain=10, wastefree=True, move=None,
            ESSrmin=0.5, max_iter=1000, seed=None, verbose=False,
            collect=None, keep_steps=False, evidence="importance",
            evidence_draws=None, start="auto", scout=True):
    """Adaptive-tempering SMC to the Gibbs posterior of ``model``, from a
    Gaussian approximation of it where one applies, else from the prior.

    Parameters
    ----------
    model : a Gibbs model of :mod:`pac_particles.smc.models`
        (AUCGibbsModel, SpanAUCModel, GPAUCModel, ClassificationGibbsModel,
        GPClassificationModel), with any prior
    n_particles : int
        Number M of resampled particles; a waste-free run holds
        ``M * len_chain`` particles, a standard run ``M``.
    len_chain : int
        Length of the MCMC chains (waste-free: the P of Dau & Chopin, 2022;
        standard SMC: 1 + number of MCMC steps per move).
    wastefree : bool
    move : ArrayMCMC, optional
        MCMC step applied after resampling (or a whole ``MCMCSequence``, whose
        ``len_chain`` must equal ``len_chain``). Default
        (:func:`~pac_particles.smc.moves.default_move`): elliptical slice sampling
        around a Gaussian fitted to the particles
        (:class:`~pac_particles.smc.moves.CalibratedEllipticalSlice`) for a centred
        Gaussian prior, :class:`~pac_particles.smc.moves.SpikeSlabMove` for a
        spike-and-slab prior, the random walk
        (:class:`~pac_particles.smc.moves.RegularizedRandomWalk`) otherwise. A
        slice step costs a few risk evaluations per particle
        (``SMCPosterior.n_risk_evaluations``), a random walk step one.
    ESSrmin : float in (0, 1)
        Target ESS ratio for choosing the next exponent.
    max_iter : int
        Maximum number of tempering steps.
    seed : int, optional
        Seeds numpy's global generator, which ``particles`` draws from.
    verbose : bool or str
        Progress of the tempering exponent from 0 to 1 on stderr
        (:mod:`pac_particles.core.progress`): ``False`` (default) nothing;
        ``True`` a tqdm bar on a terminal, else one line per tempering step
        (step, exponent, gamma, ESS before resampling, mean acceptance rate
        of the last move -- for slice moves 1 / risk evaluations per move --,
        log Z, elapsed time); ``"bar"`` or ``"lines"`` to force either.
    collect : list of particles.collectors.Collector, optional
        Extra summaries computed at every tempering step (e.g.
        :class:`pac_particles.sklearn.selection.PathScores`); available afterwards
        as ``SMCPosterior.summaries``.
    keep_steps : bool
        Keep the weighted particles of every tempering step
        (:class:`StepParticles`), for ``SMCPosterior.at_step``.
    evidence : {"importance", "tempering"}
        How ``log_z`` is estimated. ``"tempering"``: the product of the
        steps' mean incremental weights. ``"importance"`` (default): with
        a Gaussian start, importance draws from ``q`` first (``start``);
        after a tempering run, ``evidence_draws`` draws from a defensive mixture around
        EP's Gaussian approximation and the particles' Gaussian fit (the
        latter alone where EP does not cover the model) give a
        Pareto-smoothed importance-sampling estimate
        (:func:`~pac_particles.smc.importance_evidence.refine_log_z`); when the
        tail of the weights of a pilot set of as many draws says it is
        reliable (Pareto ``k`` at most ``min(1 - 1 / log10 S, 0.7)``, 0.70
        at 2000 draws), the estimate of fresh draws
        (:func:`~pac_particles.smc.adaptive_importance.piloted_refinement`)
        is ``log_z`` and its draws are pooled with the particles (weights in inverse
        proportion to the two Bayes points' variances), else the
        tempering estimate stays. Measured on the study's four problems:
        docs/benchmarks.md, "Efficiency of the SMC sampler". Spike-and-slab priors,
        near-singular GP priors and models of more than
        :data:`~pac_particles.smc.importance_evidence.MAX_DIMENSION` parameters
        keep the tempering estimate.
    evidence_draws : int, optional
        Draws of the importance sampler (one risk evaluation each); default
        the population size (``n_particles * len_chain`` waste-free); below
        :data:`~pac_particles.smc.importance_evidence.MIN_DRAWS` the tempering
        estimate stays. Ignored with ``evidence="tempering"``.
    start : {"auto", "gaussian", "prior"}
        Where the tempering starts. ``"prior"``: the prior, and the path
        visits the Gibbs posteriors at ``gamma_t = lam * exponent_t``.
        ``"gaussian"``: the Gaussian approximation ``q`` of
        :func:`~pac_particles.smc.gaussian_bridge.bridge_approximation`
        (EP's, VB's where EP would need sampled pairs). With
        ``evidence="importance"`` the budget follows ``q``'s quality:
        ``evidence_draws`` importance draws from ``q`` (and the fit of
        the ``scout``) come first
        (:func:`~pac_particles.smc.importance_evidence.importance_log_z`,
        the directions alone for the scale-invariant risks); where the
        Pareto tail shape of their weights is reliable (at most
        :data:`IMPORTANCE_ALONE_K` and ``reliable_k(S)``), their ESS at
        least :data:`IMPORTANCE_ALONE_ESS` of the draws and the scout's
        check passes, they are the posterior, the population of the run,
        and no tempering runs
        (``start`` of the result: ``"importance"``, one step). Where it is
        not, ``q`` is refitted to the weighted draws and ``evidence_draws``
        fresh draws are made from the refit, up to
        :data:`~pac_particles.smc.adaptive_importance.REFINEMENT_ROUNDS`
        times (adaptive importance sampling,
        :func:`~pac_particles.smc.adaptive_importance.adaptive_importance_log_z`):
        the first round whose tail passes is the posterior (its own draws
        alone, from a proposal fixed before them: exact; ``importance.rounds``
        says which round, and ``n_risk_evaluations`` counts every round's
        draws). At a million rows this replaces a 27-step bridge by 4,000
        risk evaluations (docs/gpu.md). Otherwise the sampler tempers along the bridge
        ``q^(1 - t) pi^t`` (:mod:`pac_particles.smc.gaussian_bridge`), from
        the Gaussian of least ``k`` among those tried: the
        same target and ``log Z``, in fewer steps than from the prior; its
        path is not a path of Gibbs posteriors (``at_step`` refuses it); it
        cannot reach mass that ``q`` misses. Without a ``move`` of the
        caller's, a waste-free bridge's chains run until they forget their
        start (:class:`~pac_particles.smc.moves.decorrelated_chains.
        DecorrelatedChainsWF`, at least ``len_chain`` states) and, for the
        scale-invariant risks, each slice step is followed by a draw of
        the radius (:class:`~pac_particles.smc.gaussian_bridge.
        RadialBridgeStep`); after the run the importance refinement
        replaces its ``log Z`` only with an ESS of
        :data:`IMPORTANCE_ALONE_ESS` of the draws. ``"auto"``
        (default): ``"gaussian"`` where ``q`` exists, importance sampling
        handles the prior (:func:`~pac_particles.smc.importance_evidence.importance_applies`:
        up to 1000 parameters, not near-singular) and nothing asks for the
        Gibbs path (``collect``, ``keep_steps``), a move of its own
        (``move``) or the tempering estimate (``evidence="tempering"``:
        the plain sampler from the prior), else ``"prior"``; unlike
        ``"gaussian"``, where importance sampling does not pass (its
        tail, its ESS, or the check of ``scout``) the run tempers from the
        prior, not along the bridge (unless the scout fell more than
        ``MASS_CHECK_Z`` standard errors short of the importance estimate:
        tempering from the prior then misses what ``q`` found).
        Spike-and-slab priors and the models EP does not cover keep the
        prior path.
    scout : bool
        With a Gaussian start and ``evidence="importance"`` (default True):
        first a tempering run from the prior of
        :func:`scout_particles` resampled particles (an eighth), whose
        particles' Gaussian fit joins the importance proposal (where
        they number at least ``PARTICLES_PER_DIMENSION`` per dimension)
        and whose ``log Z`` checks the importance estimate
        (:class:`~pac_particles.smc.adaptive_importance.MassCheck`: one
        sided, at :data:`~pac_particles.smc.adaptive_importance.
        MASS_CHECK_Z` standard errors). A failed check warns
        (RuntimeWarning), is kept in ``mass_check`` and, under
        ``start="auto"``, sends the run to tempering from the prior.
        Importance draws from ``q`` alone can miss posterior mass that
        their Pareto ``k`` cannot see (a mode with no draws). False: the
        former default, ``q`` alone and the bridge from it, faster and
        not exact where ``q`` misses mass (docs/benchmarks.md,
        "Exactness of the default against quadrature").

    Returns
    -------
    SMCPosterior
        ``start`` says which path ran. Waste-free runs carry single-run standard errors of ``log_z``,
        ``mean`` and ``bayes_point`` (``log_z_se``, ``mean_se``,
        ``bayes_point_se``) [DC22, Sec. 3.4]; ``log_z_tempering`` and
        ``importance`` keep both estimates of ``log Z``; ``mass_check``
        the scout's check (None without one).
    """
    check_gibbs_model(model)
    n_particles = check_count(n_particles, "n_particles", minimum=2)
    len_chain = check_count(len_chain, "len_chain", minimum=2 if wastefree
                            else 1)
    max_iter = check_count(max_iter, "max_iter")
    ESSrmin = check_probability(ESSrmin, "ESSrmin")
    if seed is not None and not 0 <= check_count(seed, "seed", minimum=0) < 2 ** 32:
        raise InputError(f"seed must be below 2**32 (numpy's global "
                         f"generator), got {seed}")
    if move is not None and not isinstance(move, (ssp.ArrayMCMC,
                                                  ssp.MCMCSequence)):
        raise InputError(f"move must be a particles ArrayMCMC or "
                         f"MCMCSequence (see pac_particles.smc.moves), got "
                         f"{move!r}")
    if collect is not None and (not isinstance(collect, (list, tuple))
                                or not all(callable(c) for c in collect)):
        raise InputError("collect must be a list of particles collectors "
                         "(callables)")
    evidence = check_choice(evidence, "evidence", ("importance", "tempering"))
    if not isinstance(scout, (bool, np.bool_)):
        raise InputError(f"scout must be True or False, got {scout!r}")
    if evidence_draws is not None:
        evidence_draws = check_count(evidence_draws, "evidence_draws",
                                     minimum=10)
    start = requested = check_choice(start, "start", STARTS)
    if start == "gaussian" and (collect or keep_steps):
        raise InputError("start='gaussian' tempers along the bridge from q, "
                         "not along the Gibbs posteriors that collect and "
                         "keep_steps read: use start='prior'")
    if start == "auto":
        # the Gaussian start where importance sampling handles the prior:
        # at most MAX_DIMENSION parameters, not near-singular (the rounding
        # noise of EP's covariance along a singular kernel's null space)
        start = ("gaussian" if importance_applies(model, MIN_DRAWS)
                 and evidence == "importance" and not (
                     collect or keep_steps or move is not None) else "prior")
    if seed is not None:
        np.random.seed(seed)
    clock = time.perf_counter()
    evaluations_before = model.n_risk_evaluations
    fit = None
    if start == "gaussian":
        # seeded from the global generator: reproducible under ``seed``
        fit = bridge_approximation(model, seed=np.random.randint(2 ** 31))
        if fit is None and requested == "gaussian":
            raise InputError("start='gaussian': no Gaussian approximation "
                             "covers this model (spike-and-slab or non-"
                             "Gaussian prior, or a loss EP does not cover)")
        start = "prior" if fit is None else "gaussian"
    draws = evidence_draws or n_particles * (len_chain if wastefree else 1)
    check = None
    if (fit is not None and evidence == "importance"
            and importance_applies(model, draws)):
        # a small tempering run from the prior reaches the posterior mass
        # that q may miss (other modes, arcs, the far side of a ridge): its
        # Gaussian fit joins the proposal, and its log Z checks the
        # importance estimate (MassCheck)
        scouted = scout and run_smc(
            model, n_particles=scout_particles(n_particles),
            len_chain=len_chain, wastefree=wastefree, ESSrmin=ESSrmin,
            max_iter=max_iter, evidence="tempering", start="prior")
        # the budget follows q's quality: where the weights of q's draws
        # are light-tailed, they are the posterior and no tempering runs;
        # where not, q is refitted to its weighted draws and drawn from
        # afresh (adaptive importance sampling, up to REFINEMENT_ROUNDS)
        with one_blas_thread():
            pilot = adaptive_importance_log_z(
                model, fit[0], fit[1], draws,
                seed=np.random.randint(2 ** 31), proposal=fit[2],
                max_k=min(IMPORTANCE_ALONE_K, reliable_k(draws)),
                second=_scout_fit(scouted, model.d) if scout else None)
        check = MassCheck.compare(pilot, scouted) if scout else None
        if pilot.rounds:
            # the bridge, if it runs, starts from the best Gaussian tried
            fit = (pilot.mean, pilot.cov, fit[2])
        passed = check is None or check.passed
        # few effective draws send the run to tempering: from the prior,
        # or along the bridge where the scout fell far short (tempering
        # from the prior misses what q found: Sonar at 10 n)
        scout_short = check is not None and check.z > MASS_CHECK_Z
        enough = pilot.ess >= IMPORTANCE_ALONE_ESS * pilot.n_draws
        if (pilot.reliable and pilot.pareto_k <= IMPORTANCE_ALONE_K
                and enough and passed):
            post = SMCPosterior.from_importance(pilot, model)
            with Progress(verbose, total=1.0, desc="SMC exponent", unit="",
                          float_position=True) as progress:
                _report_importance(progress, post, time.perf_counter() - clock)
            return dataclasses.replace(
                post, wall_time=time.perf_counter() - clock, mass_check=check,
                n_risk_evaluations=model.n_risk_evaluations - evaluations_before)
        if not passed:
            warnings.warn(
                f"importance sampling from the Gaussian approximation fell "
                f"{-check.z:.1f} standard errors below a tempering run from "
                f"the prior: it misses posterior mass; "
                + ("the result is a tempering run from the prior"
                   if requested == "auto" else
                   "the bridge from it (start='gaussian') may miss it too: "
                   "use start='prior'"), RuntimeWarning, stacklevel=2)
        if requested == "auto" and scout and not scout_short:
            # the bridge from q cannot reach the mass q misses (nor change
            # the radius that q fixes): tempering from the prior instead,
            # unless the scout showed that tempering from the prior misses
            # what q found (Sonar at 10 n)
            start = "prior"
    if wastefree:
        # the single-run variance of log Z needs every step's weights
        collect = list(collect or []) + [ssp.Var_logLt()]
        if not any(isinstance(c, LineageVariance) for c in collect):
            collect.append(LineageVariance())
    if keep_steps:
        collect = list(collect or []) + [StepParticles()]
    if isinstance(move, ssp.MCMCSequence) and move.nsteps != len_chain - 1:
        raise InputError(
            f"the MCMCSequence has len_chain = {move.nsteps + 1} but run_smc "
            f"got len_chain = {len_chain}: they must agree (particles "
            "sizes the waste-free population from the Feynman-Kac object)")
    target = model
    if fit is not None and start == "gaussian":
        target = GaussianBridgeModel(model, fit[0], fit[1])
        if move is None:
            # the bridge starts from a Gaussian that may lie far from the
            # target's shape (a thin cone in d = 60): its chains run until
            # they forget their start, where P states do not suffice
            move = bridge_move(target)
            if wastefree:
                move = DecorrelatedChainsWF(move, len_chain=len_chain)
    fk = RobustAdaptiveTempering(target, wastefree=wastefree, len_chain=len_chain,
                                 move=move, ESSrmin=ESSrmin, max_iter=max_iter)
    smc = particles.SMC(fk=fk, N=n_particles, ESSrmin=1.0, verbose=False,
                        collect=collect)
    # BLAS on one thread during the run: the risk kernels' prange supplies the
    # parallelism, and spinning BLAS workers slow the prior's small solves
    with Progress(verbose, total=1.0, desc="SMC exponent", unit="",
                  float_position=True) as progress, one_blas_thread():
        for _ in smc:
            _report_step(progress, smc, model.lam)
    check_reached_target(smc)
    post = dataclasses.replace(SMCPosterior.from_smc(smc, model), start=start,
                               mass_check=check)
    if evidence == "importance":
        post = with_refinement(post, model, draws,
                               seed=np.random.randint(2 ** 31),
                               fit=None if fit is None else fit[:2])
    return dataclasses.replace(
        post, wall_time=time.perf_counter() - clock,
        n_risk_evaluations=model.n_risk_evaluations - evaluations_before)


def with_refinement(post, model, n_draws, seed=None, fit=None):
    """``post``, a finished tempering run of ``model`` (or a step of its
    path, ``SMCPosterior.at_step``, with the model of that step), with the
    importance refinement of ``log Z`` that :func:`run_smc` makes after a
    run: ``n_draws`` draws around the particles (and ``fit``, a Gaussian
    ``(mean, cov)``; default EP's, where it covers the model), decided on
    a pilot set of as many draws and estimated on fresh ones
    (:func:`~pac_particles.smc.adaptive_importance.piloted_refinement`:
    deciding on the estimate's own draws kept the high ones); after the
    bridge (``post.start == "gaussian"``), which runs where ``q``'s draws
    failed, the pilot also needs an ESS of :data:`IMPORTANCE_ALONE_ESS` of
    its draws. A reliable refinement replaces ``log_z`` and joins the
    particles (``SMCPosterior.with_importance``)."""
    with one_blas_thread():
        refined = piloted_refinement(
            model, post.theta, post.weights, n_draws, seed=seed, fit=fit,
            min_ess_share=IMPORTANCE_ALONE_ESS * (post.start == "gaussian"))
    return post.with_importance(refined)


#: the scouting run from the prior (:class:`~pac_particles.smc.
#: adaptive_importance.MassCheck`) has ``n_particles / SCOUT_SHARE``
#: resampled particles (at least :data:`MIN_SCOUT_PARTICLES`), the run's
#: chain length
SCOUT_SHARE = 8
MIN_SCOUT_PARTICLES = 20
#: the share of the scout's Gaussian fit in the importance proposal (EP's
#: Gaussian ``1 - SCOUT_WEIGHT - DEFENSIVE_WEIGHT``, the prior or the t
#: ``DEFENSIVE_WEIGHT``): a defensive component [Hes95] that bounds the
#: weights where only the scout found mass, while EP's Gaussian keeps most
#: of the draws where it fits
SCOUT_WEIGHT = 0.1
#: ... its covariance that of the scout's particles times this: a scout of
#: an eighth of the particles may hold few particles in a far mode (an arc
#: of a large lam), and twice the standard deviation puts draws around it
SCOUT_WIDENING = 4.0


def scout_particles(n_particles):
    """Resampled particles of the scouting run of a run of
    ``n_particles``: ``max(n_particles // SCOUT_SHARE,
    MIN_SCOUT_PARTICLES)``, at most ``n_particles``."""
    return min(max(n_particles // SCOUT_SHARE, MIN_SCOUT_PARTICLES),
               n_particles)


def _scout_fit(scout, d):
    """``(mean, cov, share)`` of the Gaussian fitted to the scouting run's
    weighted particles, its covariance widened by :data:`SCOUT_WIDENING`,
    its share :data:`SCOUT_WEIGHT` of the proposal, or None where they number fewer than
    ``PARTICLES_PER_DIMENSION`` per dimension (Kish's ESS; the fit would be
    mostly noise)."""
    if scout.ess < PARTICLES_PER_DIMENSION * d:
        return None
    mean, chol = weighted_gaussian_fit(scout.weights, scout.theta, ridge=1e-8)
    return mean, SCOUT_WIDENING * (chol @ chol.T), SCOUT_WEIGHT


def chain_seeds(seed, chains):
    """Seeds of ``chains`` independent runs: chain 0 gets ``seed`` itself
    (so that it is ``run_smc(model, seed=seed)``), chain ``c >= 1`` the
    ``c``-th child of ``numpy.random.SeedSequence(seed)`` (fresh entropy
    when ``seed`` is None), a 32-bit integer as :func:`run_smc` takes.
    Children of a seed sequence are independent streams, where ``seed + c``
    would collide with the seeds the package gives folds (``seed + k``)."""
    chains = check_count(chains, "chains")
    if seed is not None:
        seed = check_count(seed, "seed", minimum=0)
    children = np.random.SeedSequence(seed).spawn(chains)
    return [seed] + [int(child.generate_state(1, dtype=np.uint32)[0])
                     for child in children[1:]]


def _chain(model, seed, threads, kwargs):
    """One run of :func:`run_smc_chains`, on ``threads`` numba and BLAS
    threads (None: unchanged)."""
    with limited_threads(threads):
        return run_smc(model, seed=seed, **kwargs)


def run_smc_chains(model, chains=4, seed=None, n_jobs=None, verbose=False,
                   **kwargs):
    """Independent SMC runs of one model: the chains of an ArviZ export.

    ArviZ's ``r_hat`` compares chains, and one SMC run is one chain: the
    runs here differ only by their seed (:func:`chain_seeds`: chain 0 is
    ``run_smc(model, seed=seed)``, the others independent streams), as the
    chains of PyMC's ``sample_smc`` are independent runs. Pass the list to
    :func:`pac_particles.core.inference_data.to_inference_data`. Between runs
    of one target, the spread of ``log_z`` checks each run's ``log_z_se``.

    Parameters
    ----------
    model : a particles StaticModel (as :func:`run_smc`).
    chains : int >= 1, the number of runs.
    seed : int, list of ints, or None
        An int or None: :func:`chain_seeds`; a list: one seed per chain
        (its length must be ``chains``).
    n_jobs : int or None
        Runs in parallel through joblib (-1: all cores); None (default):
        one job per core up to ``chains``, the cores shared among the
        runs' numba and BLAS threads
        (:func:`pac_particles.core.parallel.concurrent_folds`).
    verbose : bool or str, progress over the chains
        (:mod:`pac_particles.core.progress`).
    **kwargs : passed to :func:`run_smc` (``n_particles``, ``len_chain``,
        ``move``, ``ESSrmin``, ``evidence``, ...).

    Returns
    -------
    list of SMCPosterior, chain 0 first.

    Example
    -------
    ::

        import arviz as az
        from pac_particles.core.inference_data import to_inference_data
        runs = run_smc_chains(AUCGibbsModel(X, y, lam=len(y)), chains=4,
                              seed=0, n_particles=100)
        az.summary(to_inference_data(runs))      # r_hat, ess over 4 chains
    """
    chains = check_count(chains, "chains")
    if isinstance(seed, (list, tuple, np.ndarray)):
        seeds = list(seed)
        if len(seeds) != chains:
            raise InputError(f"{len(seeds)} seeds for {chains} chains")
    else:
        seeds = chain_seeds(seed, chains)
    jobs, threads = concurrent_folds(chains, n_jobs)
    with Progress(verbose, total=chains, desc="SMC chains",
                  unit="chain") as progress:
        return list(tracked(Parallel(n_jobs=jobs, return_as="generator")(
            delayed(_chain)(model, s, threads, kwargs) for s in seeds),
            progress, "chain"))


def _report_step(progress, smc, lam):
    """One tempering step for :class:`~pac_particles.core.progress.Progress`: the
    bar moves to the current exponent; a line gives step, exponent, gamma, ESS
    before resampling, mean acceptance rate of the last move (for slice moves,
    1 / risk evaluations per move), log Z and the elapsed time."""
    if progress.mode == "off":
        return
    exponent = smc.X.shared["exponents"][-1]
    rates = smc.X.shared.get("acc_rates") or [[np.nan]]
    acceptance = np.mean(rates[-1]) if len(rates[-1]) else np.nan
    progress.update(
        position=exponent,
        text=(f"step {smc.t:3d}  exponent {exponent:.4g}  gamma "
              f"{lam * exponent:.4g}  ESS {smc.wgts.ESS:.0f}  acceptance "
              f"{acceptance:.3f}  log Z {smc.logLt:.3f}  "
              f"{progress.elapsed:.1f} s"),
        postfix=f"step {smc.t}, gamma {lam * exponent:.4g}, log Z {smc.logLt:.2f}")


def _report_importance(progress, post, seconds):
    """The one step of a run that is importance sampling from ``q``
    (``start="importance"``), as :func:`_report_step` reports a tempering
    step: exponent 1, the draws' ESS, their Pareto ``k``, log Z, the
    seconds since the run began (``q``'s fit included)."""
    if progress.mode == "off":
        return
    imp = post.importance
    progress.update(
        position=1.0,
        text=(f"step   1  exponent 1  gamma {post.lam:.4g}  ESS {imp.ess:.0f}"
              f"  importance draws {imp.n_draws} from q, Pareto k "
              f"{imp.pareto_k:.2f}  log Z {post.log_z:.3f}  {seconds:.1f} s"),
        postfix=f"step 1, gamma {post.lam:.4g}, log Z {post.log_z:.2f}")
