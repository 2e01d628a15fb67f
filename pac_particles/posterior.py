"""Running tempering SMC on an AUC model, and summarising the result.

:func:`run_smc` runs waste-free (default) or standard adaptive-tempering SMC on
an :class:`~pac_particles.models.AUCGibbsModel`, checks that the final exponent
reached 1, and returns an :class:`SMCPosterior`. ``SMCPosterior.from_smc``
summarises a ``particles.SMC`` object that you ran yourself.

Point estimates. The AUC risk is invariant to ``theta -> c theta`` (c > 0):
only the direction of ``theta`` matters for ranking. Available point estimates:

* ``mean``: the posterior mean of theta;
* ``bayes_point``: the posterior mean of ``theta / ||theta||`` (the centre of
  mass of directions; the classical Bayes-point of Herbrich et al.);
* ``componentwise_mode``: the mode of each marginal (weighted kernel density),
  the choice of the SMC-AUC student report.

The tempering path gives, for free, the Gibbs posteriors at
``gamma_t = lam * exponent_t`` and their log evidences ``log Z_t``.

Example
-------
::

    from pac_particles.data import load_dataset
    from pac_particles.models import AUCGibbsModel
    from pac_particles.posterior import run_smc

    X, y, _ = load_dataset("pima")
    post = run_smc(AUCGibbsModel(X, y, lam=len(y)), n_particles=200,
                   len_chain=10, seed=1)
    post.log_z, post.n_steps
    scores = post.score(X, point="bayes_point")
"""

import sys
import time
from dataclasses import dataclass

import numpy as np
import particles
from particles import smc_samplers as ssp
from scipy import stats

from .models import RobustAdaptiveTempering, check_reached_target
from .moves import RegularizedRandomWalk

__all__ = ["run_smc", "SMCPosterior", "POINT_ESTIMATES"]

POINT_ESTIMATES = ("bayes_point", "mean", "componentwise_mode")


def run_smc(model, n_particles=200, len_chain=10, wastefree=True, move=None,
            ESSrmin=0.5, max_iter=1000, seed=None, verbose=False,
            collect=None):
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
        MCMC step applied after resampling (or a whole ``MCMCSequence``);
        default: Gaussian random walk calibrated on the particle covariance,
        with a ridge (:class:`~pac_particles.moves.RegularizedRandomWalk`).
    ESSrmin : float in (0, 1)
        Target ESS ratio for choosing the next exponent.
    max_iter : int
        Maximum number of tempering steps.
    seed : int, optional
        Seeds numpy's global generator, which ``particles`` draws from.
    verbose : bool
        Print one progress line per tempering step to stderr.
    collect : list of particles.collectors.Collector, optional
        Extra summaries computed at every tempering step (e.g.
        :class:`pac_particles.selection.PathScores`); available afterwards
        as ``SMCPosterior.summaries``.

    Returns
    -------
    SMCPosterior
    """
    n_particles, len_chain = int(n_particles), int(len_chain)
    if n_particles < 2:
        raise ValueError(f"n_particles must be >= 2, got {n_particles}")
    if len_chain < 1 or (wastefree and len_chain < 2):
        raise ValueError(f"len_chain must be >= 2 (waste-free) or >= 1, got "
                         f"{len_chain}")
    if not 0 < ESSrmin < 1:
        raise ValueError(f"ESSrmin must be in (0, 1), got {ESSrmin}")
    if seed is not None:
        np.random.seed(seed)
    if move is None:
        move = RegularizedRandomWalk()
    if isinstance(move, ssp.MCMCSequence):
        seq = move
    elif wastefree:
        seq = ssp.MCMCSequenceWF(mcmc=move, len_chain=len_chain)
    else:
        seq = ssp.AdaptiveMCMCSequence(mcmc=move, len_chain=len_chain)
    fk = RobustAdaptiveTempering(model, wastefree=wastefree, len_chain=len_chain,
                                 move=seq, ESSrmin=ESSrmin, max_iter=max_iter)
    smc = particles.SMC(fk=fk, N=n_particles, ESSrmin=1.0, verbose=False,
                        collect=collect)
    start = time.perf_counter()
    for _ in smc:
        if verbose:
            exps = smc.X.shared["exponents"]
            print(f"[pac_particles] step {smc.t:3d}  exponent {exps[-1]:.4g}  "
                  f"gamma {model.lam * exps[-1]:.4g}  log Z {smc.logLt:.3f}  "
                  f"{time.perf_counter() - start:.1f} s", file=sys.stderr,
                  flush=True)
    check_reached_target(smc)
    return SMCPosterior.from_smc(smc, model, wall_time=time.perf_counter() - start)


@dataclass
class SMCPosterior:
    """Weighted particle approximation of an AUC Gibbs posterior.

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
    summaries : the ``particles`` summaries of the run (one entry per
        tempering step for each collector).
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
    summaries: object = None

    @classmethod
    def from_smc(cls, smc, model, wall_time=float("nan")):
        """Summarise a finished ``particles.SMC`` run of adaptive tempering."""
        th = smc.X.theta
        names = th.dtype.names or ()
        z = np.asarray(th["z"], dtype=bool) if "z" in names else None
        exps = np.asarray(smc.X.shared["exponents"], dtype=float)
        log_z_path = np.concatenate([[0.0], smc.summaries.logLts])
        theta = np.array(th["theta"], dtype=float).reshape(len(th), -1)
        return cls(theta=theta, weights=smc.W.copy(),
                   lam=float(model.lam), log_z=float(smc.logLt), exponents=exps,
                   log_z_path=log_z_path, data=getattr(model, "data", None),
                   wall_time=wall_time,
                   n_risk_evaluations=getattr(model, "n_risk_evaluations", 0),
                   z=z, summaries=smc.summaries)

    # ---------------------------------------------------------------- path
    @property
    def n_steps(self):
        return len(self.exponents) - 1

    @property
    def gammas(self):
        """``gamma_t = lam * exponent_t`` along the tempering path."""
        return self.lam * self.exponents

    @property
    def ess(self):
        return 1.0 / np.sum(self.weights ** 2)

    # ------------------------------------------------------ point estimates
    @property
    def mean(self):
        return np.average(self.theta, weights=self.weights, axis=0)

    @property
    def cov(self):
        return np.cov(self.theta, rowvar=False, aweights=self.weights, ddof=0)

    @property
    def directions(self):
        norms = np.linalg.norm(self.theta, axis=1, keepdims=True)
        return self.theta / np.where(norms > 0, norms, 1.0)

    @property
    def bayes_point(self):
        return np.average(self.directions, weights=self.weights, axis=0)

    @property
    def inclusion_probs(self):
        """Posterior inclusion probabilities ``P(z_k = 1 | data)``
        (spike-and-slab priors only)."""
        if self.z is None:
            raise ValueError("inclusion probabilities need a spike-and-slab "
                             "prior (a field 'z')")
        return np.average(self.z, weights=self.weights, axis=0)

    def componentwise_mode(self, grid_size=512):
        """Mode of each weighted marginal (Gaussian kernel density)."""
        modes = np.empty(self.theta.shape[1])
        for k, col in enumerate(self.theta.T):
            if np.ptp(col) == 0:
                modes[k] = col[0]
                continue
            kde = stats.gaussian_kde(col, weights=self.weights)
            grid = np.linspace(col.min(), col.max(), grid_size)
            modes[k] = grid[np.argmax(kde(grid))]
        return modes

    def point_estimate(self, point="bayes_point"):
        """One of ``POINT_ESTIMATES`` as a (d,) array."""
        if point == "bayes_point":
            return self.bayes_point
        if point == "mean":
            return self.mean
        if point == "componentwise_mode":
            return self.componentwise_mode()
        raise ValueError(f"unknown point estimate {point!r}; choose from "
                         f"{POINT_ESTIMATES}")

    def score(self, X_new, point="bayes_point", raw=True):
        """Scores ``x . theta_hat`` of new inputs.

        ``raw=True``: ``X_new`` has the columns of the training input and
        goes through the training preprocessing (``data.transform``);
        ``raw=False``: it is already preprocessed.
        """
        X_new = self.data.transform(X_new) if raw else np.asarray(X_new, float)
        return X_new @ self.point_estimate(point)

    def posterior_mean_score(self, X_new, raw=True):
        """Posterior mean of the score, ``E[x . theta]`` (equals scoring with
        ``mean``)."""
        return self.score(X_new, point="mean", raw=raw)
