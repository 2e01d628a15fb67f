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
"""

import warnings

import numpy as np
from particles import distributions as dists
from particles import smc_samplers as ssp
from scipy import linalg

from pac_particles.approx.ep import EPClassification, EPGP, EPLinear
from pac_particles.approx.ep.base import AUTO_MAX_PAIRS
from pac_particles.approx.variational import ADAM_MAX_STEPS
from pac_particles.approx.vb import GaussianVB
from pac_particles.core.checks import InputError, check_gaussian
from pac_particles.core.gaussian import jittered_cholesky
from pac_particles.core.parallel import one_blas_thread
from pac_particles.problem.priors import param_array, prior_gaussian_factor
from pac_particles.problem.problem import GibbsProblem
from pac_particles.smc.direction_weights import scale_invariant
from pac_particles.smc.gibbs_model import check_gibbs_model
from pac_particles.smc.models import (AUCGibbsModel, ClassificationGibbsModel,
                                      GPAUCModel)
from pac_particles.smc.moves import (CalibratedEllipticalSlice, EllipticalSlice,
                                     tempering_exponent)
from pac_particles.smc.moves.base import set_param_field

__all__ = ["GaussianBridgeModel", "gaussian_approximation",
           "bridge_approximation", "bridge_move", "RadialBridgeStep",
           "RADIAL_PROPOSAL_WIDENING", "STARTS", "PROPOSAL_TOL",
           "PROPOSAL_VB_STEPS"]

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
#: (:func:`~pac_particles.smc.adaptive_importance.adaptive_importance_log_z`).
#: The pairs' noise is what limits VB here (a rough count: a pair's
#: gradient is of order ``1 / sd`` on a fraction ``sd`` of the pairs, so
#: the mean's error in posterior sds grows as ``lam^(3/4) / sqrt(pairs
#: seen)``; measured 0.8 at 1e5 rows, 2.6-2.8 at 1e6)
PROPOSAL_VB_STEPS = ADAM_MAX_STEPS

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
    whitened = False
    if isinstance(model, GPAUCModel):
        ep = EPGP(model.problem, kernel=model.gram, tol=tol)
    elif isinstance(model, AUCGibbsModel):
        sampled = model.empirical_risk.n_pairs > AUTO_MAX_PAIRS
        scales = np.diag(L)
        # a diagonal prior factor is EP's own ARD prior (VB's: isotropic),
        # so the model's problem, set up once, serves as it is; any other
        # factor whitens the design
        # (a model in the span of its design has coordinates of its own)
        whitened = not (model.data is model.problem.data
                        and np.array_equal(L, np.diag(scales))
                        and (not sampled or np.all(scales == scales[0])))
        problem, prior_var = model.problem, scales ** 2
        if whitened:
            problem = GibbsProblem.ranking(data.X @ L, data.y, model.lam,
                                           standardize=False)
            prior_var = np.ones(model.d)
        if sampled:
            # EP's O(P) sites would be a sample of the pairs: VB's
            # stochastic optimisation over fresh pairs targets all of them
            # for a proposal, a fixed number of steps with the second half
            # of the iterates averaged (PROPOSAL_VB_STEPS): the stopping rule
            # of the full family's fit runs to its cap there and returns
            # the last, unaveraged iterate
            source = "vb"
            ep = GaussianVB(problem, prior_var=float(prior_var[0]),
                            n_pairs="auto", seed=seed,
                            max_iter=PROPOSAL_VB_STEPS)
        else:
            ep = EPLinear(problem, prior_var=prior_var, tol=tol)
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
    if whitened:
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


class RadialBridgeStep(ssp.ArrayMCMC):
    """A step of the bridge's move followed by an independence
    Metropolis-Hastings draw of each particle's radius along its ray, for
    a scale-invariant risk (:func:`~pac_particles.smc.direction_weights.
    scale_invariant`) of linear scores.

    Along the ray ``theta = r u`` (``|u| = 1``) the risk is constant, so
    the bridge's target ``q^(1 - t) (prior exp(-lam r_n))^t`` is, in
    ``r > 0``, ``r^(d - 1) exp(-a r^2 / 2 + b r)`` with ``a = (1 - t) u'
    Q^-1 u + t u' S^-1 u`` and ``b = (1 - t) u' Q^-1 m`` (``q = N(m, Q)``,
    the prior ``N(0, S)``): a one-dimensional density known in closed
    form, drawn with no risk evaluation. The proposal is the Gaussian at
    its mode, :data:`RADIAL_PROPOSAL_WIDENING` times its Laplace standard
    deviation. The slice moves travel the radius slowly where ``q`` is
    radially narrow, as EP's Gaussian of a scale-invariant posterior is
    (the prior's chi_d radius is the posterior's); the fields ``lprior``
    (``log q``), ``llik`` and ``lpost`` are updated as the target would
    write them, the risk term carried over.

    Parameters
    ----------
    inner : particles ArrayMCMC, the move of the directions.
    bridge : GaussianBridgeModel of a linear-score model.
    """

    def __init__(self, inner, bridge):
        self.inner = inner
        self.bridge = bridge
        self.prior_chol = prior_gaussian_factor(bridge.gibbs.prior)
        if self.prior_chol is None or bridge.gibbs.is_gp:
            raise InputError("RadialBridgeStep needs linear scores under a "
                             "centred Gaussian prior")
        self.white_mean = linalg.solve_triangular(bridge.chol, bridge.mean,
                                                  lower=True)
        self.acceptance = []

    def calibrate(self, W, x):
        self.inner.calibrate(W, x)

    def step(self, x, target=None):
        """The inner step, then the radial draw (in place); returns the
        inner step's rate."""
        rate = self.inner.step(x, target=target)
        self.move_radii(x)
        return rate

    @staticmethod
    def log_radial(radius, a, b, d):
        """Log density, up to a constant, of the radius along a ray:
        ``(d - 1) log r - a r^2 / 2 + b r`` (the Jacobian ``r^(d - 1)``
        of ``theta = r u``)."""
        return (d - 1) * np.log(radius) - 0.5 * a * radius ** 2 + b * radius

    def move_radii(self, x):
        """The radial Metropolis-Hastings draw of every particle (in
        place)."""
        t = tempering_exponent(x)
        theta = np.array(param_array(x.theta), dtype=float)
        d = theta.shape[1]
        r = np.linalg.norm(theta, axis=1)
        u = theta / r[:, None]
        with one_blas_thread():
            uq = linalg.solve_triangular(self.bridge.chol, u.T, lower=True)
            us = linalg.solve_triangular(self.prior_chol, u.T, lower=True)
        a = (1 - t) * np.sum(uq * uq, axis=0) + t * np.sum(us * us, axis=0)
        b = (1 - t) * (self.white_mean @ uq)
        mode = (b + np.sqrt(b * b + 4 * a * (d - 1))) / (2 * a)
        sd = RADIAL_PROPOSAL_WIDENING / np.sqrt((d - 1) / mode ** 2 + a)
        new = mode + sd * np.random.normal(size=r.size)
        positive = new > 0
        safe = np.where(positive, new, 1.0)
        log_ratio = (self.log_radial(safe, a, b, d) - self.log_radial(r, a, b, d)
                     + 0.5 * ((safe - mode) ** 2 - (r - mode) ** 2) / sd ** 2)
        accept = positive & (np.log(np.random.uniform(size=r.size)) < log_ratio)
        self.acceptance.append(float(np.mean(accept)))
        if not np.any(accept):
            return
        moved = x.theta.copy()
        set_param_field(moved, np.where(accept[:, None],
                                        u * safe[:, None], theta))
        log_q = self.bridge.prior.logpdf(moved)
        log_prior_change = (self.bridge.gibbs.prior.logpdf(moved)
                            - self.bridge.gibbs.prior.logpdf(x.theta))
        llik = x.llik + log_prior_change - (log_q - x.lprior)
        x.theta, x.lprior, x.llik = moved, log_q, llik
        x.lpost = log_q + t * llik


#: the radial proposal's standard deviation over the Laplace one at the
#: mode (:class:`RadialBridgeStep`): a little wider, for the density's skew
RADIAL_PROPOSAL_WIDENING = 1.2


def bridge_move(bridge):
    """The move of the bridge: the generalised elliptical slice around the
    particles' Gaussian fit for linear scores
    (:class:`~pac_particles.smc.moves.CalibratedEllipticalSlice`), each
    step followed by a draw of the radius (:class:`RadialBridgeStep`)
    where the risk is scale-invariant, and for GP latent scores (no n x n
    covariance fit) elliptical slice along the ellipses of ``q`` centred
    on its mean (:class:`~pac_particles.smc.moves.EllipticalSlice` with
    ``center``): all read the tempered target from ``x.lpost``, so all
    are exact for ``q^(1 - t) pi^t``."""
    if bridge.gibbs.is_gp:
        return EllipticalSlice(prior_chol=bridge.chol, center=bridge.mean)
    if scale_invariant(bridge.gibbs) and bridge.gibbs.d >= 2:
        return RadialBridgeStep(CalibratedEllipticalSlice(), bridge)
    return CalibratedEllipticalSlice()
