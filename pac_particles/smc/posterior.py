"""Running tempering SMC on an AUC model, and summarising the result.

:func:`run_smc` runs waste-free [DC22] (default) or standard
adaptive-tempering SMC on an :class:`~pac_particles.smc.models.AUCGibbsModel`
(or :class:`~pac_particles.smc.models.GPAUCModel`), checks that the final
exponent reached 1, and returns an :class:`SMCPosterior`.
``SMCPosterior.from_smc`` summarises a ``particles.SMC`` object that you ran
yourself.

The MCMC move defaults to :func:`pac_particles.smc.moves.default_move`: elliptical
slice sampling [MAM10] around a Gaussian fitted to the particles
(:class:`~pac_particles.smc.moves.CalibratedEllipticalSlice`) under a Gaussian
prior, the spike-and-slab Gibbs/slice move
under :class:`~pac_particles.problem.priors.SpikeSlabPrior` (whose posterior
inclusion probabilities are ``SMCPosterior.inclusion_probs``), the random walk
otherwise. Studies of the sampler (efficiency of moves, repeated runs,
the spike-and-slab path) live in :mod:`pac_particles.apps.study`.

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

    from pac_particles.problem.data import load_dataset
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
[MAM10] Murray, I., Adams, R. P. and MacKay, D. J. C. (2010). Elliptical
slice sampling. AISTATS 2010.
[RACL14] Ridgway, J., Alquier, P., Chopin, N. and Liang, F. (2014).
PAC-Bayesian AUC classification and scoring. NIPS 27.
"""

import dataclasses
import math
import time
from dataclasses import dataclass

import numpy as np
import particles
from joblib import Parallel, delayed
from particles import collectors
from particles import smc_samplers as ssp

from pac_particles.core.checks import InputError, check_choice, check_count, check_probability
from pac_particles.smc.importance_evidence import (log_z_lower_bound, refine_log_z,
                                  weighted_mean_se)
from pac_particles.core.inference_data import to_inference_data
from pac_particles.smc.models import RobustAdaptiveTempering, check_reached_target
from pac_particles.problem.priors import SpikeSlabPrior, param_array
from pac_particles.core.parallel import concurrent_folds, limited_threads, one_blas_thread
from pac_particles.core.progress import Progress, tracked
from pac_particles.smc.single_run_variance import (LineageVariance, lineage_groups,
                                  log_z_standard_error, mean_standard_error,
                                  single_run_errors)
from pac_particles.core.weighted_particles import POINT_ESTIMATES, WeightedParticles, directions

__all__ = ["run_smc", "run_smc_chains", "chain_seeds", "SMCPosterior",
           "StepParticles", "single_run_errors", "POINT_ESTIMATES",
           "directions"]


def run_smc(model, n_particles=200, len_chain=10, wastefree=True, move=None,
            ESSrmin=0.5, max_iter=1000, seed=None, verbose=False,
            collect=None, keep_steps=False, evidence="importance",
            evidence_draws=None):
    """Adaptive-tempering SMC from the prior to the Gibbs posterior of ``model``.

    Parameters
    ----------
    model : AUCGibbsModel (or any StaticModel whose prior has a field theta)
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
        steps' mean incremental weights. ``"importance"`` (default): after
        the run, ``evidence_draws`` draws from a defensive mixture around
        EP's Gaussian approximation and the particles' Gaussian fit (the
        latter alone where EP does not cover the model) give a
        Pareto-smoothed importance-sampling estimate
        (:func:`~pac_particles.smc.importance_evidence.refine_log_z`); when the
        tail of its weights says it is reliable (Pareto ``k`` at most
        ``min(1 - 1 / log10 S, 0.7)``, 0.70 at 2000 draws) it is ``log_z``
        and its draws are pooled with the particles (weights in inverse
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

    Returns
    -------
    SMCPosterior
        Waste-free runs carry single-run standard errors of ``log_z``,
        ``mean`` and ``bayes_point`` (``log_z_se``, ``mean_se``,
        ``bayes_point_se``) [DC22, Sec. 3.4]; ``log_z_tempering`` and
        ``importance`` keep both estimates of ``log Z``.
    """
    if not isinstance(model, ssp.StaticModel):
        raise InputError(f"model must be a particles StaticModel (e.g. "
                         f"AUCGibbsModel), got {type(model).__name__}")
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
    if evidence_draws is not None:
        evidence_draws = check_count(evidence_draws, "evidence_draws",
                                     minimum=10)
    if seed is not None:
        np.random.seed(seed)
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
    fk = RobustAdaptiveTempering(model, wastefree=wastefree, len_chain=len_chain,
                                 move=move, ESSrmin=ESSrmin, max_iter=max_iter)
    evaluations_before = getattr(model, "n_risk_evaluations", 0)
    smc = particles.SMC(fk=fk, N=n_particles, ESSrmin=1.0, verbose=False,
                        collect=collect)
    start = time.perf_counter()
    # BLAS on one thread during the run: the risk kernels' prange supplies the
    # parallelism, and spinning BLAS workers slow the prior's small solves
    with Progress(verbose, total=1.0, desc="SMC exponent", unit="",
                  float_position=True) as progress, one_blas_thread():
        for _ in smc:
            _report_step(progress, smc, model.lam)
    check_reached_target(smc)
    post = SMCPosterior.from_smc(smc, model)
    if evidence == "importance":
        draws = evidence_draws or post.theta.shape[0]
        # seeded from the global generator: reproducible under ``seed``
        with one_blas_thread():
            post = post.with_importance(refine_log_z(
                model, post.theta, post.weights, draws,
                seed=np.random.randint(2 ** 31)))
    return dataclasses.replace(
        post, wall_time=time.perf_counter() - start,
        n_risk_evaluations=getattr(model, "n_risk_evaluations", 0)
        - evaluations_before)


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


class StepParticles(collectors.Collector):
    """Collector: the weighted particles of every tempering step (parameter
    array, normalised weights and each particle's risk), so that the Gibbs posterior at any
    ``gamma_t`` of the path can be used afterwards
    (:meth:`SMCPosterior.at_step`). Memory: one copy of the particles and
    of their risks per step."""

    def fetch(self, smc):
        return (np.array(param_array(smc.X.theta), dtype=float), smc.W.copy(),
                _particle_risks(smc))


def _particle_risks(smc):
    """``R_n`` of the current particles from the log-likelihoods the run
    holds (``loglik = -lam R_n``, :class:`~pac_particles.smc.models.AUCGibbsModel`);
    None for a model without ``lam``."""
    lam = getattr(smc.fk.model, "lam", None)
    llik = getattr(smc.X, "llik", None)
    if lam is None or llik is None:
        return None
    return -np.asarray(llik, dtype=float) / float(lam)


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


@dataclass
class SMCPosterior(WeightedParticles):
    """Weighted particle approximation of an AUC Gibbs posterior.

    The moments, ``ess`` and point estimates (``mean``, ``cov``,
    ``directions``, ``bayes_point``, ``componentwise_mode``,
    ``point_estimate``) are those of
    :class:`~pac_particles.core.weighted_particles.WeightedParticles`.

    Attributes
    ----------
    theta : (N, d) particles; ``weights`` : (N,) normalised weights.
    lam : the inverse temperature of the target.
    log_z : estimate of the log evidence ``log Z(lam)``.
    exponents : tempering exponents 0 = e_0 < ... < e_T = 1.
    log_z_path : ``log Z`` at each exponent (0 at exponent 0).
    n_steps : number of tempering steps T.
    wall_time : seconds spent in the run.
    n_risk_evaluations : risk evaluations made by the model in the run.
    z : (N, d) bool inclusion indicators for spike-and-slab priors, else None.
    log_z_se : single-run standard error of ``log_z`` (waste-free runs of
        :func:`run_smc`; None otherwise): the square root of the larger of
        the sum over tempering steps of the chain-based variances of the log
        mean weights [DC22, Sec. 3.4] (``particles.smc_samplers.Var_logLt``)
        and the lineage variance that adds their covariances
        (:class:`~pac_particles.smc.single_run_variance.LineageVariance`).
    mean_se, bayes_point_se : (d,) single-run standard errors of ``mean`` and
        ``bayes_point`` (waste-free runs; None otherwise): the larger of
        the initial-sequence estimate over the M chains of the last move
        [DC22, Sec. 3.4] (``particles.smc_samplers.var_wf``) and the lineage
        estimate that groups those chains by ancestor
        (:func:`~pac_particles.smc.single_run_variance.single_run_errors`).
        Their coverage is measured in docs/benchmarks.md ("Single-run error bars").
    summaries : the ``particles`` summaries of the run (one entry per
        tempering step for each collector).
    prior : the model's prior (used for Rao-Blackwellised inclusion
        probabilities).
    predictor : the model, whose ``predict_scores`` maps a point estimate to
        scores of new inputs (``x . theta`` for linear scores, the GP
        conditional mean for :class:`~pac_particles.smc.models.GPAUCModel`, whose
        particles ``theta`` are the latent training scores ``s``).
    is_gp : whether the particles are GP latent scores (the model's
        ``is_gp``): :meth:`predict` then uses the GP predictive.
    risks : (N,) the empirical risk ``R_n`` of each particle, read from the
        run's log-likelihoods (``-llik / lam``: no new risk evaluation), so
        that certificates need not evaluate it again; None when unknown.
    n_chains : the number M of resampled particles (waste-free: the M
        chains of each step).
    log_z_tempering, log_z_tempering_se : the tempering run's own estimate
        of ``log Z`` (the end of ``log_z_path``) and its standard error.
    importance : the
        :class:`~pac_particles.smc.importance_evidence.ImportanceEvidence` of
        ``run_smc(evidence="importance")`` (None otherwise, or where it
        does not apply). When it is reliable, ``log_z`` and ``log_z_se``
        are its own, and ``theta``, ``weights`` and ``risks`` pool the
        final particles (first ``N`` rows) with its draws (last ``S``
        rows; :meth:`with_importance`).
    """

    theta: np.ndarray
    weights: np.ndarray
    lam: float
    log_z: float
    exponents: np.ndarray
    log_z_path: np.ndarray
    data: object = None
    wall_time: float = float("nan")
    n_risk_evaluations: int = 0
    z: np.ndarray = None
    log_z_se: float = None
    mean_se: np.ndarray = None
    bayes_point_se: np.ndarray = None
    summaries: object = None
    prior: object = None
    predictor: object = None
    is_gp: bool = False
    risks: np.ndarray = None
    n_chains: int = None
    log_z_tempering: float = None
    log_z_tempering_se: float = None
    importance: object = None

    @classmethod
    def from_smc(cls, smc, model, wall_time=float("nan"),
                 n_risk_evaluations=None):
        """Summarise a finished ``particles.SMC`` run of adaptive tempering.

        ``n_risk_evaluations`` defaults to the model's running count."""
        if n_risk_evaluations is None:
            n_risk_evaluations = getattr(model, "n_risk_evaluations", 0)
        th = smc.X.theta
        names = th.dtype.names or ()
        z = np.asarray(th["z"], dtype=bool) if "z" in names else None
        exps = np.asarray(smc.X.shared["exponents"], dtype=float)
        log_z_path = np.concatenate([[0.0], smc.summaries.logLts])
        theta = np.array(param_array(th), dtype=float)
        log_z_se, mean_se, bayes_point_se = single_run_errors(smc, theta)
        return cls(theta=theta, weights=smc.W.copy(),
                   lam=float(model.lam), log_z=float(smc.logLt), exponents=exps,
                   log_z_path=log_z_path, data=getattr(model, "data", None),
                   wall_time=wall_time, n_risk_evaluations=n_risk_evaluations,
                   z=z, log_z_se=log_z_se, mean_se=mean_se,
                   bayes_point_se=bayes_point_se, summaries=smc.summaries,
                   prior=getattr(model, "prior", None),
                   predictor=model if hasattr(model, "predict_scores") else None,
                   is_gp=bool(getattr(model, "is_gp", False)),
                   risks=_particle_risks(smc), n_chains=int(smc.N))

    def with_importance(self, estimate):
        """This posterior with an importance-sampling estimate of ``log Z``
        (:class:`~pac_particles.smc.importance_evidence.ImportanceEvidence`, or
        None). A reliable estimate replaces ``log_z`` and ``log_z_se``, and
        its draws join the particles: the pooled weights are ``alpha W``
        and ``(1 - alpha) w``, ``alpha = v_is / (v_smc + v_is)`` with ``v``
        the summed variances of the two Bayes points (single-run errors
        for the particles, the delta method for the draws), which makes the
        pooled Bayes point the inverse-variance combination of the two.
        The draws of an unreliable one join with weight 0 (every run of a
        model then holds ``N + S`` rows); its ``log Z`` is only kept in
        ``importance``."""
        post = dataclasses.replace(self, log_z_tempering=self.log_z,
                                   log_z_tempering_se=self.log_z_se,
                                   importance=estimate)
        if estimate is None:
            return post
        changes, alpha = {}, 1.0     # unreliable: the draws get weight 0
        if estimate.reliable:
            dirs_is = directions(estimate.theta)
            bp_is_se = weighted_mean_se(dirs_is, estimate.weights)
            if self.bayes_point_se is not None:
                v_smc = float(np.sum(self.bayes_point_se ** 2))
            else:   # standard SMC: Kish's ESS of the particles
                dirs = directions(self.theta)
                centred = dirs - self.weights @ dirs
                v_smc = float(self.weights @ (centred ** 2).sum(axis=1)) / self.ess
            v_is = float(np.sum(bp_is_se ** 2))
            alpha = v_is / (v_smc + v_is) if v_smc + v_is > 0 else 0.5

            def pooled_se(se_smc, se_is):
                if se_smc is None:
                    return None
                return np.sqrt((alpha * se_smc) ** 2
                               + ((1 - alpha) * se_is) ** 2)

            changes = dict(
                log_z=estimate.log_z, log_z_se=estimate.log_z_se,
                mean_se=pooled_se(self.mean_se, weighted_mean_se(
                    estimate.theta, estimate.weights)),
                bayes_point_se=pooled_se(self.bayes_point_se, bp_is_se))
        # every run of one model holds N + S rows, reliable or not (chains
        # of an export, stacked runs)
        risks = (None if self.risks is None
                 else np.concatenate([self.risks, estimate.risks]))
        return dataclasses.replace(
            post, theta=np.vstack([self.theta, estimate.theta]),
            weights=np.concatenate([alpha * self.weights,
                                    (1 - alpha) * estimate.weights]),
            risks=risks, **changes)

    @property
    def n_particles(self):
        """The tempering run's particles: the first rows of ``theta`` (the
        importance draws, if any, follow them)."""
        extra = self.importance.n_draws if self.importance is not None else 0
        return self.theta.shape[0] - extra

    @property
    def expected_risk(self):
        """``E_rho[R_n]``, the weighted mean of the particles' empirical
        risks: from :attr:`risks` when the run recorded them, else evaluated
        by the model (``predictor.risk``)."""
        risks = self.risks
        if risks is None:
            if self.predictor is None:
                raise InputError("the expected risk needs the particles' "
                                 "risks or the posterior's model "
                                 "(predictor)")
            risks = self.predictor.risk(self.theta)
        return float(self.weights @ risks)

    def log_z_lower_bound(self, delta):
        """``(bound, how)``: a lower confidence bound on ``log Z`` at level
        ``1 - delta``, clipped to ``[-lam, 0]`` (where ``log Z`` lies), and
        a sentence saying where it comes from.

        From the raw weights of the importance draws when the run has them
        (``importance``, reliable or not: choosing on their tail would
        break the argument), :func:`~pac_particles.smc.importance_evidence.
        log_z_lower_bound`: it holds for any proposal fixed before the
        draws. Otherwise from the tempering estimate ``Z_hat``, as
        ``log Z_hat - log(1/delta)`` (Markov): exact for exponents and
        moves fixed in advance, for adaptive tempering only as far as its
        estimate is unbiased (asymptotically; the ``how`` says so)."""
        imp = self.importance
        if imp is not None and getattr(imp, "log_weights", None) is not None:
            value = log_z_lower_bound(imp.log_weights, delta)
            how = (f"log Z: Markov lower bound from {imp.n_draws} raw "
                   f"importance weights ({imp.proposal} proposal) at level "
                   f"{delta:.3g}")
        else:
            tempering = (self.log_z if self.log_z_tempering is None
                         else self.log_z_tempering)
            value = tempering - math.log(1.0 / delta)
            how = (f"log Z: Markov lower bound from the adaptive tempering "
                   f"estimate at level {delta:.3g} (unbiased only "
                   f"asymptotically: no importance draws for this model)")
        return float(min(max(value, -self.lam), 0.0)), how

    # ---------------------------------------------------------------- path
    @property
    def n_steps(self):
        return len(self.exponents) - 1

    @property
    def gammas(self):
        """``gamma_t = lam * exponent_t`` along the tempering path."""
        return self.lam * self.exponents

    def at_step(self, t, standard_errors=True):
        """The Gibbs posterior at ``gamma_t = lam * exponents[t]`` of this
        run's tempering path, ``t`` in ``1..n_steps``: the weighted particles
        of step ``t`` (the run must have collected
        :class:`StepParticles`, ``run_smc(..., keep_steps=True)``), its
        ``log Z_t`` and the path up to it. Every step of a tempering run
        targets its own Gibbs posterior, so these are as valid as the final
        particles, and so are their single-run standard errors (``log_z_se``
        up to step ``t``, ``mean_se`` and ``bayes_point_se`` of that step's
        chains, as :func:`single_run_errors` computes them at the end;
        ``standard_errors=False`` skips the means' errors, None then, for a
        quick look at many steps)."""
        if self.z is not None:
            raise InputError("at_step does not keep spike-and-slab inclusion "
                             "indicators")
        steps = getattr(self.summaries, "stepParticles", None)
        if steps is None:
            raise InputError("at_step needs the particles of every step: run "
                             "run_smc(..., keep_steps=True)")
        t = check_count(t, "t")
        if t > self.n_steps:
            raise InputError(f"t must be at most n_steps = {self.n_steps}, "
                             f"got {t}")
        if t == self.n_steps:
            return self
        theta, weights, risks = steps[t - 1]
        exponent = float(self.exponents[t])
        groups = lineage_groups(self.summaries, t - 1)
        # waste-free runs have M chains a step to read the errors from
        chains = standard_errors and self.mean_se is not None

        def se(values):
            return (mean_standard_error(values, weights, self.n_chains, groups)
                    if chains else None)

        return dataclasses.replace(
            self, theta=theta, weights=weights, risks=risks,
            lam=self.lam * exponent,
            log_z=float(self.log_z_path[t]),
            exponents=self.exponents[:t + 1] / exponent,
            log_z_path=self.log_z_path[:t + 1],
            log_z_se=log_z_standard_error(self.summaries, weights.shape[0],
                                          t - 1),
            mean_se=se(theta), bayes_point_se=se(directions(theta)),
            # the final step's evidence is not this step's
            importance=None, log_z_tempering=None, log_z_tempering_se=None)

    # ------------------------------------------------- spike-and-slab
    @property
    def inclusion_probs(self):
        """Posterior inclusion probabilities ``P(z_k = 1 | data)``
        (spike-and-slab priors only).

        Rao-Blackwellised when the prior is a
        :class:`~pac_particles.problem.priors.SpikeSlabPrior`: the likelihood does not
        involve z, so ``P(z_k = 1 | theta, data) = P(z_k = 1 | theta_k)`` in
        closed form, and its posterior mean has a smaller variance than the
        frequency of ``z_k`` (:attr:`inclusion_frequencies`).
        """
        if self.z is None:
            raise InputError("inclusion probabilities need a spike-and-slab "
                             "prior (a field 'z')")
        if isinstance(self.prior, SpikeSlabPrior):
            cond = self.prior.inclusion_conditional(self.theta)
            return np.average(cond, weights=self.weights, axis=0)
        return self.inclusion_frequencies

    @property
    def inclusion_frequencies(self):
        """Weighted frequency of ``z_k = 1`` among the particles."""
        if self.z is None:
            raise InputError("inclusion probabilities need a spike-and-slab "
                             "prior (a field 'z')")
        return np.average(self.z, weights=self.weights, axis=0)

    # ------------------------------------------------------ new inputs
    def score(self, X_new, point="bayes_point", raw=True):
        """Scores ``x . theta_hat`` of new inputs.

        ``raw=True``: ``X_new`` has the columns of the training input and
        goes through the training preprocessing (``data.transform``);
        ``raw=False``: it is already preprocessed.
        """
        X_new = self.data.transform(X_new) if raw else np.asarray(X_new, float)
        if self.predictor is None:
            return X_new @ self.point_estimate(point)
        return self.predictor.predict_scores(X_new, self.point_estimate(point))

    def predict(self, X_new, return_var=False, raw=True):
        """Posterior predictive mean (and variance) of the scores of new inputs.

        Linear scores: ``E[x . theta]`` and ``Var[x . theta]``. GP scores
        (:class:`~pac_particles.smc.models.GPAUCModel`): the mean
        ``k_*' K^-1 E[s]`` and the variance ``Var[k_*' K^-1 s]`` over the
        particles plus the GP conditional variance ``k_** - k_*' K^-1 k_*``.
        """
        X_new = self.data.transform(X_new) if raw else np.asarray(X_new, float)
        if self.is_gp:
            if self.predictor is None:
                raise InputError("the GP predictive needs the model "
                                 "(SMCPosterior.predictor)")
            return self.predictor.predictive(
                X_new, self.mean, self.cov if return_var else None,
                return_var=return_var)
        mean = X_new @ self.mean
        if not return_var:
            return mean
        var = np.einsum("ij,jk,ik->i", X_new, np.atleast_2d(self.cov), X_new)
        return mean, var

    # ------------------------------------------------------------ export
    def to_inference_data(self, n_draws=None, seed=0, feature_names=None):
        """ArviZ ``InferenceData`` of this posterior: equally weighted draws
        resampled (seeded systematic resampling) from the weighted particles,
        ``log_marginal_likelihood = log_z`` and the tempering path in
        ``sample_stats``; see
        :func:`pac_particles.core.inference_data.to_inference_data`."""
        return to_inference_data(self, n_draws=n_draws, seed=seed,
                                 feature_names=feature_names)

    def posterior_mean_score(self, X_new, raw=True):
        """Posterior mean of the score, ``E[x . theta]`` (equals scoring with
        ``mean``)."""
        return self.score(X_new, point="mean", raw=raw)
