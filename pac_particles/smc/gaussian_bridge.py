"""Tempering from a Gaussian approximation to the Gibbs posterior: the
bridge ``q^(1 - t) pi^t``.

Adaptive tempering from the prior [Cho02] crosses the whole distance from
``prior`` to ``pi ∝ prior exp(-lam r_n)``: eight to thirteen steps at
``lam = n`` on the study's data sets. Started from a Gaussian ``q`` close to
``pi`` (EP's, or VB's where EP cannot run), the same sampler crosses only
the distance from ``q`` to ``pi``. The bridge is the static model

    prior_bridge = q,    loglik_bridge(theta) = log prior(theta) - lam r_n(theta) - log q(theta),

tempered by :class:`~pac_particles.smc.tempering.RobustAdaptiveTempering`
from exponent 0 to 1: its targets are ``q^(1 - t) (prior exp(-lam r_n))^t``
(normalised at ``t = 0`` since ``q`` is), exact for any ``q`` whose
support covers the target's, so its ``log Z`` at ``t = 1`` is the Gibbs
posterior's log evidence and its final particles are that posterior.
Where ``q`` is good the adaptive exponent reaches 1 in one or two steps
(the ESS of the weights ``pi / q`` of the first step is that of importance
sampling from ``q``); where it is poor, in more. (Where importance
sampling from ``q`` or from its refits alone passes the tail check,
:func:`~pac_particles.smc.posterior.run_smc` runs no bridge at all:
:func:`adaptive_importance_log_z`.) This is the path of
annealed importance sampling from a proposal [Nea01, Sec. 3] run as an
SMC sampler [DDJ06].

The moves target the tempered density through the log target the
tempering writes (``x.lpost``), as every slice move here does
(:mod:`pac_particles.smc.moves.base`): the generalised elliptical slice
around the particles' fit for linear scores (the default of the prior
path), elliptical slice around ``q`` itself for GP latent scores (the
particles' n x n covariance is refused there,
:func:`~pac_particles.smc.moves.check_move_fits`).

:func:`gaussian_approximation` fits ``q`` (EP's; VB's on fresh sampled
pairs where EP would need sampled pairs, above
:data:`~pac_particles.approx.ep.base.AUTO_MAX_PAIRS`), in the model's own
parameter. Where no Gaussian approximation applies (spike-and-slab priors, whose
prior is not Gaussian; priors other than a centred Gaussian; the losses EP
does not cover) :func:`bridge_approximation` gives None and
:func:`~pac_particles.smc.posterior.run_smc` keeps the prior path.

Example
-------
::

    from pac_particles.problem.datasets import load_dataset
    from pac_particles.smc.models import AUCGibbsModel
    from pac_particles.smc.posterior import run_smc

    X, y, _ = load_dataset("pima")
    model = AUCGibbsModel(X, y, lam=len(y))
    # EP's q is good on Pima: its importance draws are the posterior
    run_smc(model, seed=0).start                    # "importance"
    post = run_smc(model, seed=0, start="gaussian", evidence="tempering")
    post.start, post.n_steps                        # ("gaussian", 2)

References
----------
[Cho02] Chopin, N. (2002). A sequential particle filter method for static
models. Biometrika 89, 539-551.
[DDJ06] Del Moral, P., Doucet, A. and Jasra, A. (2006). Sequential Monte
Carlo samplers. JRSS B 68(3), 411-436.
[Nea01] Neal, R. M. (2001). Annealed importance sampling. Statistics and
Computing 11, 125-139.
[CGMR04] Cappe, O., Guillin, A., Marin, J.-M. and Robert, C. P. (2004).
Population Monte Carlo. Journal of Computational and Graphical Statistics
13(4), 907-929.
[RK04] Rubinstein, R. Y. and Kroese, D. P. (2004). The Cross-Entropy
Method. Springer.
"""

import dataclasses
import warnings

import numpy as np
from particles import distributions as dists
from particles import smc_samplers as ssp
from scipy import linalg

from pac_particles.approx.ep import EPClassification, EPGP, EPLinear
from pac_particles.approx.ep.base import AUTO_MAX_PAIRS
from pac_particles.approx.variational import ADAM_MAX_STEPS
from pac_particles.approx.vb import GaussianVB
from pac_particles.core.checks import InputError, check_count, check_gaussian
from pac_particles.core.gaussian import jittered_cholesky
from pac_particles.problem.priors import param_array, prior_gaussian_factor
from pac_particles.smc.gibbs_model import check_gibbs_model
from pac_particles.smc.models import (AUCGibbsModel, ClassificationGibbsModel,
                                      GPAUCModel)
from pac_particles.smc.moves import CalibratedEllipticalSlice, EllipticalSlice
from pac_particles.smc.moves.base import weighted_gaussian_fit

__all__ = ["GaussianBridgeModel", "gaussian_approximation",
           "bridge_approximation", "bridge_move", "STARTS", "PROPOSAL_TOL",
           "PROPOSAL_VB_STEPS", "adaptive_importance_log_z",
           "refined_proposal", "radially_resolved", "RADIAL_SPREAD",
           "REFINEMENT_ROUNDS", "REFINEMENT_ESS_PER_DIMENSION"]

#: where :func:`~pac_particles.smc.posterior.run_smc` tempers from:
#: ``"prior"``, ``"gaussian"`` (this module) or ``"auto"`` (the Gaussian
#: where one applies)
STARTS = ("auto", "gaussian", "prior")


#: EP's tolerance for a proposal: a proposal need not be converged to the
#: last digit, only close to the posterior
PROPOSAL_TOL = 1e-2

#: Adam steps of VB's proposal on fresh pairs (above ``AUTO_MAX_PAIRS``
#: pairs), the second half averaged (``GaussianVB(max_iter=...)``): as
#: many as the stopping rule's cap, which the full family reaches at
#: 1e4-1e6 rows and where it returns its last iterate. At 1e6 rows x 10
#: (``lam = n``) that iterate's mean was 18 posterior standard deviations
#: off and its variances 0.01-340 times the posterior's; the average's,
#: 2.6 and 7-11 (too wide: the covariance's share of the pairs' noise),
#: close enough for one refit of adaptive importance sampling
#: (:func:`adaptive_importance_log_z`).
#: The pairs' noise is what limits VB here (a rough count: a pair's
#: gradient is of order ``1 / sd`` on a fraction ``sd`` of the pairs, so
#: the mean's error in posterior sds grows as ``lam^(3/4) / sqrt(pairs
#: seen)``; measured 0.8 at 1e5 rows, 2.6-2.8 at 1e6)
PROPOSAL_VB_STEPS = ADAM_MAX_STEPS

#: weighing directions, each Gaussian of the proposal has a whitened
#: conditional standard deviation along its mean of at least
#: ``RADIAL_SPREAD |m| / d`` (:func:`radially_resolved`; the posterior's
#: radial spread, chi_d's, is about ``|m| / sqrt(2 d)``)
RADIAL_SPREAD = 0.5
#: adaptive importance sampling (:func:`adaptive_importance_log_z`): at most
#: this many refits of the proposal after the first draws
REFINEMENT_ROUNDS = 2
#: ... each from the draws' weights tempered down to an ESS of this many
#: per dimension (:func:`refined_proposal`), and none where that is more
#: than a quarter of the draws
REFINEMENT_ESS_PER_DIMENSION = 10


def gaussian_approximation(model, tol=PROPOSAL_TOL, with_source=False,
                           seed=0):
    """EP's Gaussian approximation ``(mean, cov)`` of ``model``'s Gibbs
    posterior in its own parameter (VB's where EP would need sampled
    pairs), or None where neither covers the model: linear AUC scores under
    a centred Gaussian prior (:class:`~pac_particles.approx.ep.EPLinear` on
    ``X L``, ``L`` the prior's factor, mapped back; above
    :data:`~pac_particles.approx.ep.base.AUTO_MAX_PAIRS` pairs
    :class:`~pac_particles.approx.vb.GaussianVB` on fresh sampled pairs,
    :data:`PROPOSAL_VB_STEPS` Adam steps with the second half of the
    iterates averaged, ``seed`` seeding the pairs), GP AUC scores
    (:class:`~pac_particles.approx.ep.EPGP` on the model's kernel matrix),
    the 0-1 classification risk of a linear score under an isotropic
    Gaussian prior without PU labels
    (:class:`~pac_particles.approx.ep.EPClassification`). A fit that ends
    degenerate or with non-finite moments gives None. ``with_source``:
    ``(mean, cov, "ep" or "vb")``."""
    L = prior_gaussian_factor(model.prior)
    if L is None:
        return None
    data = model.data
    source = "ep"
    if isinstance(model, GPAUCModel):
        ep = EPGP(data.X, data.y, model.lam, kernel=model.gram,
                  standardize=False, tol=tol)
    elif isinstance(model, AUCGibbsModel):
        if model.empirical_risk.n_pairs > AUTO_MAX_PAIRS:
            # EP's O(P) sites would be a sample of the pairs: VB's
            # stochastic optimisation over fresh pairs targets all of them
            # for a proposal, a fixed number of steps with the second half
            # of the iterates averaged (PROPOSAL_VB_STEPS): the stopping rule
            # of the full family's fit runs to its cap there and returns
            # the last, unaveraged iterate
            source = "vb"
            ep = GaussianVB(data.X @ L, data.y, model.lam, standardize=False,
                            n_pairs="auto", seed=seed,
                            max_iter=PROPOSAL_VB_STEPS)
        else:
            ep = EPLinear(data.X @ L, data.y, model.lam, standardize=False,
                          tol=tol)
    elif (isinstance(model, ClassificationGibbsModel)
          and model.loss == "zero_one" and model.pu_prior is None):
        X = data.X[:, :-1] if data.intercept else data.X
        # EPClassification puts the intercept back last, as the model does
        if not np.allclose(L, np.eye(data.d)):
            return None
        ep = EPClassification(X, data.y, model.lam, standardize=False,
                              fit_intercept=data.intercept, tol=tol)
    else:
        return None
    try:
        with warnings.catch_warnings():
            # an unconverged or jittered fit is still a proposal; the
            # weights' tail says whether it was good enough
            warnings.simplefilter("ignore")
            res = ep.fit()
    except (InputError, np.linalg.LinAlgError):
        return None
    mean, cov = np.asarray(res.mean, dtype=float), np.asarray(res.cov, dtype=float)
    if (getattr(res, "degenerate", False) or mean.shape != (model.d,)
            or not (np.all(np.isfinite(mean)) and np.all(np.isfinite(cov)))):
        return None
    if isinstance(model, AUCGibbsModel):
        mean, cov = L @ mean, L @ cov @ L.T
    return (mean, cov, source) if with_source else (mean, cov)


def bridge_approximation(model, seed=0):
    """``(mean, cov, source)`` of the Gaussian ``q`` the bridge starts
    from (:func:`gaussian_approximation`:
    EP's, VB's where EP would need sampled pairs), or None where none
    applies (spike-and-slab and non-Gaussian priors, losses EP does not
    cover). ``seed`` seeds VB's sampled pairs."""
    check_gibbs_model(model)
    return gaussian_approximation(model, with_source=True, seed=seed)


class GaussianBridgeModel(ssp.StaticModel):
    """The static model whose tempering path runs from ``q = N(mean, cov)``
    to the Gibbs posterior of ``model`` (module docstring).

    ``prior`` is ``q`` (over the model's own parameter field, ``theta``
    or ``s``); :meth:`loglik` is ``log prior - lam r_n - log q``, one risk
    evaluation per particle, counted by ``model``. ``lam`` and ``gibbs``
    (the Gibbs model) are kept for the result.

    Parameters
    ----------
    model : a Gibbs model of :mod:`pac_particles.smc.models` with a
        density prior (any prior with ``logpdf``).
    mean : (d,) array; cov : (d, d) positive definite array.
    """

    def __init__(self, model, mean, cov):
        self.gibbs = check_gibbs_model(model)
        self.lam = model.lam
        field = model.prior.rvs(size=1).dtype.names[0]
        mean, cov = check_gaussian(mean, cov, model.d, "q's mean and cov")
        # the same factor for the draws, the density and the move
        self.chol = jittered_cholesky(0.5 * (cov + cov.T),
                                      label="Gaussian approximation q",
                                      warn=False)[0]
        self.mean = mean
        # particles stores a one-dimensional field as (N,), which MvNormal's
        # (N, 1) draws do not fit
        q = (dists.Normal(loc=mean[0], scale=self.chol[0, 0]) if model.d == 1
             else dists.MvNormal(loc=mean, cov=self.chol @ self.chol.T))
        super().__init__(data=None, prior=dists.StructDist({field: q}))

    def loglik(self, theta, t=None):
        """``log prior(theta) - lam r_n(theta) - log q(theta)``: the log
        density ratio of the Gibbs target to ``q`` (``t`` ignored)."""
        return (self.gibbs.prior.logpdf(theta) + self.gibbs.loglik(theta)
                - self.prior.logpdf(theta))

    def particle_risks(self, x):
        """``r_n`` of evaluated particles ``x`` read off their fields, no
        risk evaluated: ``llik = log prior - lam r_n - lprior`` (``lprior``
        is ``log q`` here)."""
        log_prior = self.gibbs.prior.logpdf(x.theta)
        return (log_prior - np.asarray(x.lprior) - np.asarray(x.llik)) / self.lam

    def parameters(self, x):
        """(N, d) parameters of particles ``x``."""
        return np.array(param_array(x.theta), dtype=float)


def bridge_move(bridge):
    """The move of the bridge: the generalised elliptical slice around the
    particles' Gaussian fit for linear scores
    (:class:`~pac_particles.smc.moves.CalibratedEllipticalSlice`), and for
    GP latent scores (no n x n covariance fit) elliptical slice along the
    ellipses of ``q`` centred on its mean
    (:class:`~pac_particles.smc.moves.EllipticalSlice` with ``center``):
    both read the tempered target from ``x.lpost``, so both are exact for
    ``q^(1 - t) pi^t``."""
    if bridge.gibbs.is_gp:
        return EllipticalSlice(prior_chol=bridge.chol, center=bridge.mean)
    return CalibratedEllipticalSlice()


def radially_resolved(mean, cov, L):
    """``cov`` plus ``c (L v)(L v)'``, ``v`` the unit whitened mean
    ``L^-1 mean``, ``c >= 0`` the least that makes ``1 / (v' S^-1 v)`` (``S``
    the whitened covariance) at least ``(RADIAL_SPREAD |L^-1 mean| / d)^2``:
    a Gaussian whose direction density the 65-point trapezoid rule in
    ``log r`` of
    :func:`~pac_particles.smc.direction_weights.log_direction_density`
    resolves (that rule's step exceeds the radial spread below about
    ``0.4 / d`` relative, and its log is then off by a near-constant, which
    shifts ``log Z`` and not the Pareto ``k``: +0.41 and +0.50 nats for VB's
    diagonal Gaussians at 1e5 rows x 10, -15.9 for the full family's last
    iterate at 1e6). Accurate to 5e-6 from d = 2 to 200; the directions
    barely change and the draws are the widened Gaussian's (exact). The
    rule now resolves such peaks itself (a rule of its own for a narrow
    peak); the widening stays as the proposal the figures at 1e6 rows were
    measured with (docs/gpu.md). EP's
    Gaussians and particle fits (the prior's spread, ``|m| / sqrt(2 d)``) and
    a mean at the origin are left as they are."""
    d = mean.size
    white = linalg.solve_triangular(L, mean, lower=True)
    norm = float(np.linalg.norm(white))
    if not norm > 0:
        return cov
    v = white / norm
    Lv = L @ v
    # v' S^-1 v with S = L^-1 cov L^-T: |chol(cov)^-1 L v|^2
    z = linalg.solve_triangular(
        linalg.cholesky(0.5 * (cov + cov.T), lower=True), Lv, lower=True)
    radial = 1.0 / float(z @ z)
    target = (RADIAL_SPREAD * norm / d) ** 2
    if radial >= target:
        return cov
    return cov + (target - radial) * np.outer(Lv, Lv)


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
    log_w = np.log(np.maximum(estimate.weights, np.finfo(float).tiny))
    log_w -= log_w.max()

    def kish(beta):
        w = np.exp(beta * log_w)
        return w.sum() ** 2 / np.sum(w * w)

    beta = 1.0
    if kish(1.0) < min_ess:
        low, high = 0.0, 1.0
        for _ in range(40):
            mid = 0.5 * (low + high)
            low, high = (mid, high) if kish(mid) >= min_ess else (low, mid)
        beta = low
    w = np.exp(beta * log_w)
    mean, chol = weighted_gaussian_fit(w / w.sum(), estimate.theta, ridge=1e-8)
    return mean, chol @ chol.T, beta


def adaptive_importance_log_z(model, mean, cov, n_draws=2000, seed=None,
                              proposal="ep", max_k=None,
                              rounds=REFINEMENT_ROUNDS):
    """Importance sampling from ``N(mean, cov)``
    (:func:`~pac_particles.smc.importance_evidence.importance_log_z`, its
    defensive mixture) and, while the Pareto tail shape of the weights
    exceeds ``max_k`` (default
    :func:`~pac_particles.smc.importance_evidence.reliable_k`), up to
    ``rounds`` more samplers, each from the Gaussian refitted to the
    previous one's weighted draws (:func:`refined_proposal`; population
    Monte Carlo [CGMR04]).

    Every round draws afresh from a proposal fixed before its draws, and
    the estimate returned is that of one round alone (the first whose tail
    passes, else the one of least ``k``): importance sampling from a fixed
    ``q``, exact as ``importance_log_z`` is. The earlier rounds' draws
    chose ``q`` and are not reused (their weights are relative to other
    proposals); they are counted in ``earlier_draws`` and in the model's
    risk evaluations. A round is refitted only where
    ``REFINEMENT_ESS_PER_DIMENSION x d`` is at most a quarter of the draws.

    At 1e6 rows x d = 10 (``lam = n``, ``scripts/bench_accelerator.py``'s
    data) VB's Gaussian gave ``k`` = 2.8 (its mean 2.6 posterior standard
    deviations off, its variances 7-11 times the posterior's: the noise of
    sampled pairs); one refit (``beta`` = 0.25) gave ``k`` = 0.16 and the
    log Z of a long reference within its standard error
    (docs/benchmarks.md, "The risk on an accelerator").

    Returns
    -------
    ImportanceEvidence, with ``rounds`` and ``earlier_draws`` set; its
    ``mean, cov`` the Gaussian of the round returned.
    """
    # importance_evidence imports this module (q lives here)
    from pac_particles.smc.importance_evidence import (
        MIN_DRAWS, importance_log_z, reliable_k)
    n_draws = check_count(n_draws, "n_draws", minimum=MIN_DRAWS)
    rounds = check_count(rounds, "rounds", minimum=0)
    max_k = reliable_k(n_draws) if max_k is None else float(max_k)
    rng = np.random.default_rng(seed)
    min_ess = REFINEMENT_ESS_PER_DIMENSION * model.d
    if 4 * min_ess > n_draws:
        rounds = 0
    best = est = importance_log_z(model, mean, cov, n_draws, seed=rng,
                                  proposal=proposal)
    spent = 0
    for r in range(1, rounds + 1):
        if est.pareto_k <= max_k:
            break
        spent += est.n_draws
        mean, cov, _ = refined_proposal(est, min_ess)
        est = dataclasses.replace(
            importance_log_z(model, mean, cov, n_draws, seed=rng,
                             proposal=f"{proposal}, refitted"),
            rounds=r, earlier_draws=spent)
        if not est.pareto_k > best.pareto_k:
            best = est
    return est if est.pareto_k <= max_k else best
