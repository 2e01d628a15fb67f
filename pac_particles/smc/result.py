"""What a tempering SMC run returns: :class:`SMCPosterior`.

An :class:`SMCPosterior` is the weighted population of the run's last step
(:class:`~pac_particles.core.weighted_particles.WeightedParticles`: moments,
ESS, point estimates, equally weighted resampling for ``sample``), with
the run's estimate of ``log Z`` and its single-run standard errors [DC22,
Sec. 3.4], the tempering path (the Gibbs posteriors at
``gamma_t = lam * exponent_t`` and their ``log Z_t`` [RACL14, Sec. 4]) and
the model that produced it (``predictor``). It follows the protocol of
every fitted posterior
(:class:`~pac_particles.core.posterior_result.PosteriorResult`):
``log_evidence``, ``data``, ``lam``, ``space``, ``sample``,
``linear_coefficients``, ``raw_coefficients``; ``at_step(t)`` gives the
same for step ``t`` of the path (:class:`StepParticles`).
:func:`~pac_particles.smc.posterior.run_smc` makes one;
:meth:`SMCPosterior.from_smc` summarises a ``particles.SMC`` run made by
hand.

References
----------
[DC22] Dau, H.-D. and Chopin, N. (2022). Waste-free sequential Monte Carlo.
Journal of the Royal Statistical Society B 84(1), 114-148.
[RACL14] Ridgway, J., Alquier, P., Chopin, N. and Liang, F. (2014).
PAC-Bayesian AUC classification and scoring. NIPS 27.
"""

import dataclasses
import math
from dataclasses import dataclass

import numpy as np
from particles import collectors

from pac_particles.core.checks import InputError, check_count
from pac_particles.core.gaussian import row_variances
from pac_particles.core.inference_data import to_inference_data
from pac_particles.core.weighted_particles import WeightedParticles, directions
from pac_particles.problem.priors import SpikeSlabPrior, param_array
from pac_particles.smc.gibbs_model import check_gibbs_model
from pac_particles.smc.adaptive_importance import REFINEMENT_ROUNDS
from pac_particles.smc.importance_evidence import (log_z_lower_bound,
                                                   weighted_mean_se)
from pac_particles.smc.single_run_variance import (lineage_groups,
                                                   log_z_standard_error,
                                                   mean_standard_error,
                                                   single_run_errors)

__all__ = ["SMCPosterior", "StepParticles", "IMPORTANCE_CANDIDATES",
           "EQUILIBRIUM_Z"]

#: sets of importance draws a run's reported ``log Z`` draws are chosen
#: among, fixed in advance: the rounds of adaptive importance sampling
#: (the first and ``REFINEMENT_ROUNDS`` refits, chosen by their Pareto
#: tails) and the fresh draws after a tempering run; the lower bound on
#: ``log Z`` pays for the choice by a union bound over them
IMPORTANCE_CANDIDATES = REFINEMENT_ROUNDS + 2
#: a tempering run's ``log Z`` this many combined standard errors below the
#: pilot of its importance refinement fell short of its targets: its chains
#: lagged behind them, which biases its particles' means and narrows their
#: error bars as well (tempering from the prior on Sonar, d = 60, at
#: ``lam = n`` with chains of 10: docs/benchmarks.md, "A tempering run short
#: of its targets"), and the draws stand alone (:meth:`with_importance`)
EQUILIBRIUM_Z = 3.0


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
    holds (``loglik = -lam R_n`` for every Gibbs model of
    :mod:`pac_particles.smc.models`; a bridge from a Gaussian reads its
    own, :meth:`~pac_particles.smc.gaussian_bridge.GaussianBridgeModel.
    particle_risks`)."""
    model = smc.fk.model
    if hasattr(model, "particle_risks"):
        return np.asarray(model.particle_risks(smc.X), dtype=float)
    return -np.asarray(smc.X.llik, dtype=float) / float(model.lam)


@dataclass
class SMCPosterior(WeightedParticles):
    """Weighted particle approximation of a Gibbs posterior (module
    docstring: the protocol it follows).

    The moments, ``ess``, point estimates (``mean``, ``cov``,
    ``directions``, ``bayes_point``, ``componentwise_mode``,
    ``point_estimate``) and equally weighted draws (``sample``) are those
    of :class:`~pac_particles.core.weighted_particles.WeightedParticles`.

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
        estimate that groups those chains by ancestor, as far back as
        enough ancestors remain, the jackknife over the groups
        (:func:`~pac_particles.smc.single_run_variance.single_run_errors`).
        Their coverage is measured in docs/benchmarks.md ("Single-run error bars").
    summaries : the ``particles`` summaries of the run (one entry per
        tempering step for each collector).
    prior : the model's prior (used for Rao-Blackwellised inclusion
        probabilities).
    predictor : the model, whose ``predict_scores`` maps a point estimate to
        scores of new inputs (``x . theta`` for linear scores, the GP
        conditional mean for :class:`~pac_particles.smc.models.GPAUCModel`, whose
        particles ``theta`` are the latent training scores ``s``), whose
        ``space`` is the posterior's and whose ``linear_coefficients`` maps
        the particles to coefficients of the design. None: a bare sample of
        coefficients (``space`` ``"primal"``).
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
    start : ``"prior"``, ``"gaussian"`` or ``"importance"``: where the
        tempering started (:func:`~pac_particles.smc.posterior.run_smc`);
        ``"importance"``: no tempering, the weighted draws of importance
        sampling from a Gaussian (:meth:`from_importance`). From the prior,
        ``exponents`` and ``log_z_path`` are those of the Gibbs posteriors
        at ``gammas``; from a Gaussian ``q`` they are those of the bridge
        ``q^(1 - t) pi^t`` (:mod:`pac_particles.smc.gaussian_bridge`), and
        only the last step is a Gibbs posterior.
    mass_check : the :class:`~pac_particles.smc.adaptive_importance.
        MassCheck` of a Gaussian start (``run_smc(scout=True)``): whether
        the importance estimate saw the mass that a tempering run from the
        prior found; ``passed`` False (with a warning) where it did not,
        and the result is then a run from the prior (``start="auto"``) or
        along the bridge (``start="gaussian"``). None without a check.
    tempering_z : ``(log_z_tempering - pilot's log Z) / combined standard
        error``, the tempering run against the pilot of its reliable
        importance refinement (None without one); below
        ``-EQUILIBRIUM_Z`` the run fell short of its targets and its
        particles have weight 0 in the pooled sample (:meth:`with_importance`).
    chain_lengths, start_correlations : (T - 1,) the states each move's
        chains reached and the mean correlation between their starts and
        their last states, where the chains run until they forget their
        start (:class:`~pac_particles.smc.moves.decorrelated_chains.
        DecorrelatedChainsWF`: a waste-free run along the bridge); None
        otherwise. A correlation above the threshold at the longest
        chains says the run may not have equilibrated.
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
    risks: np.ndarray = None
    n_chains: int = None
    log_z_tempering: float = None
    log_z_tempering_se: float = None
    importance: object = None
    start: str = "prior"
    mass_check: object = None
    chain_lengths: np.ndarray = None
    start_correlations: np.ndarray = None
    tempering_z: float = None

    @classmethod
    def from_smc(cls, smc, model, wall_time=float("nan"),
                 n_risk_evaluations=None):
        """Summarise a finished ``particles.SMC`` run of adaptive tempering
        of ``model``, a Gibbs model of :mod:`pac_particles.smc.models`.

        ``n_risk_evaluations`` defaults to the model's running count."""
        check_gibbs_model(model)
        if n_risk_evaluations is None:
            n_risk_evaluations = model.n_risk_evaluations
        th = smc.X.theta
        names = th.dtype.names or ()
        z = np.asarray(th["z"], dtype=bool) if "z" in names else None
        exps = np.asarray(smc.X.shared["exponents"], dtype=float)
        log_z_path = np.concatenate([[0.0], smc.summaries.logLts])
        theta = np.array(param_array(th), dtype=float)
        log_z_se, mean_se, bayes_point_se = single_run_errors(smc, theta)
        lengths = smc.X.shared.get("chain_lengths")
        correlations = smc.X.shared.get("start_correlations")
        return cls(theta=theta, weights=smc.W.copy(),
                   lam=float(model.lam), log_z=float(smc.logLt), exponents=exps,
                   log_z_path=log_z_path, data=model.data,
                   wall_time=wall_time, n_risk_evaluations=n_risk_evaluations,
                   z=z, log_z_se=log_z_se, mean_se=mean_se,
                   bayes_point_se=bayes_point_se, summaries=smc.summaries,
                   prior=model.prior, predictor=model,
                   risks=_particle_risks(smc), n_chains=int(smc.N),
                   chain_lengths=None if lengths is None
                   else np.asarray(lengths, dtype=int),
                   start_correlations=None if correlations is None
                   else np.asarray(correlations, dtype=float))

    @classmethod
    def from_importance(cls, estimate, model):
        """The Gibbs posterior of ``model`` as the weighted draws of an
        importance sampler (an
        :class:`~pac_particles.smc.importance_evidence.ImportanceEvidence`
        judged good enough that no tempering run follows,
        :func:`~pac_particles.smc.posterior.run_smc`): ``log_z`` and the
        standard errors are the estimate's (delta method), the path is the
        single step from ``q`` to the target (whose estimate is also
        ``log_z_tempering``), ``start`` is ``"importance"``;
        ``n_particles`` counts the draws."""
        check_gibbs_model(model)
        theta, weights = estimate.theta, estimate.weights
        return cls(theta=theta, weights=weights, lam=float(model.lam),
                   log_z=estimate.log_z, exponents=np.array([0.0, 1.0]),
                   log_z_path=np.array([0.0, estimate.log_z]),
                   data=model.data, log_z_se=estimate.log_z_se,
                   mean_se=weighted_mean_se(theta, weights),
                   bayes_point_se=weighted_mean_se(directions(theta), weights),
                   prior=model.prior, predictor=model, risks=estimate.risks,
                   importance=estimate, start="importance",
                   # the path's one step from q to the target is this
                   # importance sampler
                   log_z_tempering=estimate.log_z,
                   log_z_tempering_se=estimate.log_z_se)

    # ------------------------------------------------------------ protocol
    @property
    def lam_pn(self):
        """``lam`` on the positive-vs-negative scale: the model's
        ``lam_pn / lam`` times :attr:`lam` (a tempering step's too). With PU
        labels the target's ``lam`` is ``lam_pn / (1 - pi)`` on the observed
        risk; otherwise the two are equal."""
        model = self.predictor
        return self.lam if model is None else self.lam * model.lam_pn / model.lam

    @property
    def space(self):
        """What ``theta`` is: the model's ``space`` (``"primal"``,
        ``"score"``, ``"gp"``); ``"primal"`` without a model."""
        return "primal" if self.predictor is None else self.predictor.space

    @property
    def log_evidence(self):
        """``log_z``: the importance-sampling estimate where it is reliable,
        else the tempering one (:attr:`evidence_method` says which)."""
        return self.log_z

    @property
    def evidence_method(self):
        """``"importance sampling"`` or ``"tempering"``: which estimate
        ``log_z`` is."""
        reliable = self.importance is not None and self.importance.reliable
        return "importance sampling" if reliable else "tempering"

    @property
    def log_evidence_se(self):
        """``log_z_se``; NaN for a run without one (standard SMC)."""
        return float("nan") if self.log_z_se is None else float(self.log_z_se)

    @property
    def tempering_path(self):
        """The path over the steps ``t = 0..T``: ``beta`` (the exponents),
        ``gamma = lam * beta``, ``log_z`` (``log Z_t``) and, from the run's
        summaries, ``ess`` (the ESS of the weights; the prior draws of
        ``t = 0`` are equally weighted, ESS = N)."""
        path = {"beta": self.exponents, "gamma": self.gammas,
                "log_z": self.log_z_path}
        if self.summaries is not None:   # None: built by hand, not by a run
            path["ess"] = np.concatenate(
                [[self.n_particles], self.summaries.ESSs[:self.n_steps]])
        elif self.start == "importance":     # the draws, then their weights
            path["ess"] = np.array([self.n_particles, self.ess])
        return path

    def linear_coefficients(self, theta=None):
        """Coefficients on the validated design of particles ``theta`` (d,)
        or (m, d) (default: the mean), through the model: ``theta`` itself,
        in score space ``E[theta | w]``
        (:meth:`~pac_particles.smc.models.SpanAUCModel.linear_coefficients`).
        InputError for GP latent scores."""
        coefficients = super().linear_coefficients(theta)
        if self.predictor is None:
            return coefficients
        return self.predictor.linear_coefficients(coefficients)

    def raw_coefficients(self, theta=None):
        """``(coef, offset)``: the score of ``theta`` (default the mean) on
        the raw inputs, ``X_raw @ coef + offset``, read off the design on
        which :meth:`linear_coefficients` lives (the model's
        ``design_data``: ``data`` itself except in score space)."""
        design = self.data if self.predictor is None else self.predictor.design_data
        return design.raw_linear(self.linear_coefficients(theta))

    def with_importance(self, estimate):
        """This posterior with an importance-sampling estimate of ``log Z``
        (:class:`~pac_particles.smc.importance_evidence.ImportanceEvidence`, or
        None). A reliable estimate replaces ``log_z`` and ``log_z_se``, and
        its draws join the particles: the pooled weights are ``alpha W``
        and ``(1 - alpha) w``, ``alpha = v_is / (v_smc + v_is)`` with ``v``
        the summed variances of the two Bayes points (single-run errors
        for the particles, the delta method for the draws), which makes the
        pooled Bayes point the inverse-variance combination of the two;
        ``alpha = 0`` where the run's own ``log Z`` lies more than
        :data:`EQUILIBRIUM_Z` combined standard errors below the pilot's
        (``tempering_z``): a run that fell short of its targets carries
        that bias into its means, which its single-run errors do not see.
        The pilot decides, not the estimate, whose draws it would select.
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
            tempering_z = _tempering_z(self.log_z, self.log_z_se, estimate)
            if tempering_z is not None and tempering_z < -EQUILIBRIUM_Z:
                alpha = 0.0

            def pooled_se(se_smc, se_is):
                if se_smc is None:
                    return None
                return np.sqrt((alpha * se_smc) ** 2
                               + ((1 - alpha) * se_is) ** 2)

            changes = dict(
                log_z=estimate.log_z, log_z_se=estimate.log_z_se,
                tempering_z=tempering_z,
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
        importance draws, if any, follow them); without a tempering run
        (``start="importance"``) the draws themselves."""
        pooled = self.importance is not None and self.start != "importance"
        return self.theta.shape[0] - (self.importance.n_draws if pooled else 0)

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
        draws, at ``delta / IMPORTANCE_CANDIDATES`` (a union bound): the
        draws reported are one of at most that many sets, each from a
        proposal fixed before it, chosen by their Pareto tails (the rounds
        of :func:`~pac_particles.smc.adaptive_importance.
        adaptive_importance_log_z`) or by the run (those rounds, else the
        fresh draws after tempering). Otherwise from the tempering estimate ``Z_hat``, as
        ``log Z_hat - log(1/delta)`` (Markov): exact for exponents and
        moves fixed in advance, for adaptive tempering only as far as its
        estimate is unbiased (asymptotically; the ``how`` says so)."""
        imp = self.importance
        if imp is not None and imp.log_weights is not None:
            value = log_z_lower_bound(imp.log_weights,
                                      delta / IMPORTANCE_CANDIDATES)
            how = (f"log Z: Markov lower bound from {imp.n_draws} raw "
                   f"importance weights ({imp.proposal} proposal) at level "
                   f"{delta:.3g}, a union over the "
                   f"{IMPORTANCE_CANDIDATES} sets of draws it was chosen "
                   f"among")
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
        if self.start != "prior":
            raise InputError("at_step needs a run tempered from the prior "
                             "(run_smc(..., start='prior')): the steps of a "
                             "bridge from a Gaussian are not Gibbs posteriors")
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
        if self.is_gp:      # the space of a GP model: predictor is the model
            return self.predictor.predictive(
                X_new, self.mean, self.cov if return_var else None,
                return_var=return_var)
        mean = X_new @ self.mean
        if not return_var:
            return mean
        var = row_variances(X_new, np.atleast_2d(self.cov))
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


def _tempering_z(log_z, log_z_se, estimate):
    """``(log_z - pilot's log Z) / combined se`` of a tempering run's
    estimate against the pilot of its refinement, or None where either
    has no standard error (a standard run, a refinement without a
    pilot)."""
    if log_z_se is None or estimate.pilot_log_z_se is None:
        return None
    scale = math.hypot(log_z_se, estimate.pilot_log_z_se)
    return (log_z - estimate.pilot_log_z) / scale if scale > 0 else None
