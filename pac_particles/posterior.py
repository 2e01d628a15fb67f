"""Running tempering SMC on an AUC model, and summarising the result.

:func:`run_smc` runs waste-free (default) or standard adaptive-tempering SMC on
an :class:`~pac_particles.models.AUCGibbsModel`, checks that the final exponent
reached 1, and returns an :class:`SMCPosterior`. ``SMCPosterior.from_smc``
summarises a ``particles.SMC`` object that you ran yourself.

The MCMC move defaults to :func:`pac_particles.moves.default_move`: elliptical
slice sampling around a Gaussian fitted to the particles
(:class:`~pac_particles.moves.CalibratedEllipticalSlice`) under a Gaussian
prior, the spike-and-slab Gibbs/slice move
under :class:`~pac_particles.priors.SpikeSlabPrior` (whose posterior
inclusion probabilities are ``SMCPosterior.inclusion_probs``), the random walk
otherwise. :func:`compare_moves` measures the efficiency of moves at an equal
budget of risk evaluations (``diagnostics/compare_moves.py``).

Repeated runs. :func:`repeated_runs` runs independent SMC samplers over a grid
of chain lengths (standard or waste-free, joblib processes, seeds
``seed + r``) and returns tidy arrays (:class:`RepeatedRuns`): log Z, posterior
means and variances of the first coefficients, costs. It serves
:func:`compare_moves`, :func:`adjusted_variance` (``K x var over runs of the
posterior-mean estimates / mean estimated posterior variance``, the SMC-AUC
student report's figure 4; ``diagnostics/adjusted_variance.py``) and the box
plots of log Z vs K (``diagnostics/marginal_likelihood_boxplots.py``;
:func:`matched_sizes` pairs standard and waste-free runs).
:func:`spike_slab_path` gives the regularisation path in the spike variance
``v0`` (Ridgway et al. 2014, figure 3; ``diagnostics/spike_slab_path.py``).

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

import os
import sys
import time
from dataclasses import dataclass

import numpy as np
import particles
from particles import smc_samplers as ssp
from scipy import stats

from .data import validate_xy
from .models import (AUCGibbsModel, RobustAdaptiveTempering,
                     check_reached_target)
from .moves import (CalibratedEllipticalSlice, EllipticalSlice,
                    ExactEllipseGibbs, SpikeSlabMove, default_move, make_move)
from .priors import SpikeSlabPrior, param_array

__all__ = ["run_smc", "SMCPosterior", "POINT_ESTIMATES", "compare_moves",
           "format_move_table", "repeated_runs", "RepeatedRuns",
           "adjusted_variance", "matched_sizes", "MATCHES", "spike_slab_path",
           "SpikeSlabPath"]

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
        MCMC step applied after resampling (or a whole ``MCMCSequence``, whose
        ``len_chain`` must equal ``len_chain``). Default
        (:func:`~pac_particles.moves.default_move`): elliptical slice sampling
        around a Gaussian fitted to the particles
        (:class:`~pac_particles.moves.CalibratedEllipticalSlice`) for a centred
        Gaussian prior, :class:`~pac_particles.moves.SpikeSlabMove` for a
        spike-and-slab prior, the random walk
        (:class:`~pac_particles.moves.RegularizedRandomWalk`) otherwise. A
        slice step costs a few risk evaluations per particle (1.7-2.5 for the
        default on Pima and Sonar; ``SMCPosterior.n_risk_evaluations``), a
        random walk step one.
    ESSrmin : float in (0, 1)
        Target ESS ratio for choosing the next exponent.
    max_iter : int
        Maximum number of tempering steps.
    seed : int, optional
        Seeds numpy's global generator, which ``particles`` draws from.
    verbose : bool
        Print one progress line per tempering step to stderr: step, exponent,
        gamma, ESS before resampling, mean acceptance rate of the last move
        (for slice moves, 1 / risk evaluations per move), log Z, elapsed time.
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
        move = default_move(model)
    if isinstance(move, ssp.MCMCSequence):
        if move.nsteps != len_chain - 1:
            raise ValueError(
                f"the MCMCSequence has len_chain = {move.nsteps + 1} but run_smc "
                f"got len_chain = {len_chain}: they must agree (particles "
                "sizes the waste-free population from the Feynman-Kac object)")
        seq = move
    elif wastefree:
        seq = ssp.MCMCSequenceWF(mcmc=move, len_chain=len_chain)
    else:
        seq = ssp.AdaptiveMCMCSequence(mcmc=move, len_chain=len_chain)
    _check_move_fits_prior(seq.mcmc, getattr(model, "prior", None))
    fk = RobustAdaptiveTempering(model, wastefree=wastefree, len_chain=len_chain,
                                 move=seq, ESSrmin=ESSrmin, max_iter=max_iter)
    evaluations_before = getattr(model, "n_risk_evaluations", 0)
    smc = particles.SMC(fk=fk, N=n_particles, ESSrmin=1.0, verbose=False,
                        collect=collect)
    start = time.perf_counter()
    for _ in smc:
        if verbose:
            exps = smc.X.shared["exponents"]
            rates = smc.X.shared.get("acc_rates") or [[np.nan]]
            print(f"[pac_particles] step {smc.t:3d}  exponent {exps[-1]:.4g}  "
                  f"gamma {model.lam * exps[-1]:.4g}  ESS {smc.wgts.ESS:.0f}  "
                  f"acceptance {np.mean(rates[-1]) if rates[-1] else np.nan:.3f}  "
                  f"log Z {smc.logLt:.3f}  {time.perf_counter() - start:.1f} s",
                  file=sys.stderr, flush=True)
    check_reached_target(smc)
    return SMCPosterior.from_smc(
        smc, model, wall_time=time.perf_counter() - start,
        n_risk_evaluations=getattr(model, "n_risk_evaluations", 0)
        - evaluations_before)


def _check_move_fits_prior(mcmc, prior):
    """Refuse move/prior pairs that cannot work, with a clear message."""
    if "s" in getattr(prior, "laws", {}) and isinstance(
            mcmc, (ssp.ArrayRandomWalk, CalibratedEllipticalSlice)):
        raise ValueError(
            f"{type(mcmc).__name__} is refused for GP latent scores: it "
            "calibrates on the n x n covariance of the particles, which is "
            "singular or unstable unless there are many more particles than "
            "training points (the failure reported for GP scores in the SMC-AUC "
            "student report). Use the default, EllipticalSlice on the kernel's "
            "Cholesky factor (model.kernel_chol), which follows the GP prior "
            "exactly and needs no tuning")
    if isinstance(prior, SpikeSlabPrior):
        if np.any(prior.v0 <= 0):
            raise ValueError(
                "spike variance v0 = 0 (a Dirac spike) is not supported by SMC: "
                "use v0 > 0, or EP (pac_particles.ep) for v0 = 0")
        if isinstance(mcmc, (ssp.ArrayRandomWalk, ssp.ArrayIndependentMetropolis,
                             EllipticalSlice, CalibratedEllipticalSlice,
                             ExactEllipseGibbs)):
            raise ValueError(
                f"{type(mcmc).__name__} cannot move spike-and-slab particles "
                "(a float field theta and a bool field z; the random walk needs "
                "plain float arrays, the Gaussian elliptical moves never update "
                "z): use pac_particles.moves.SpikeSlabMove (the default)")
    elif isinstance(mcmc, SpikeSlabMove):
        raise ValueError("SpikeSlabMove needs a SpikeSlabPrior")


def directions(theta):
    """Rows of ``theta`` scaled to unit norm (zero rows stay zero): the AUC
    only sees the direction of a linear score."""
    norms = np.linalg.norm(theta, axis=1, keepdims=True)
    return theta / np.where(norms > 0, norms, 1.0)


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
    prior : the model's prior (used for Rao-Blackwellised inclusion
        probabilities).
    predictor : the model, whose ``predict_scores`` maps a point estimate to
        scores of new inputs (``x . theta`` for linear scores, the GP
        conditional mean for :class:`~pac_particles.models.GPAUCModel`, whose
        particles ``theta`` are the latent training scores ``s``).
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
    prior: object = None
    predictor: object = None

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
        return cls(theta=theta, weights=smc.W.copy(),
                   lam=float(model.lam), log_z=float(smc.logLt), exponents=exps,
                   log_z_path=log_z_path, data=getattr(model, "data", None),
                   wall_time=wall_time, n_risk_evaluations=n_risk_evaluations,
                   z=z, summaries=smc.summaries,
                   prior=getattr(model, "prior", None),
                   predictor=model if hasattr(model, "predict_scores") else None)

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
        return directions(self.theta)

    @property
    def bayes_point(self):
        return np.average(self.directions, weights=self.weights, axis=0)

    @property
    def inclusion_probs(self):
        """Posterior inclusion probabilities ``P(z_k = 1 | data)``
        (spike-and-slab priors only).

        Rao-Blackwellised when the prior is a
        :class:`~pac_particles.priors.SpikeSlabPrior`: the likelihood does not
        involve z, so ``P(z_k = 1 | theta, data) = P(z_k = 1 | theta_k)`` in
        closed form, and its posterior mean has a smaller variance than the
        frequency of ``z_k`` (:attr:`inclusion_frequencies`).
        """
        if self.z is None:
            raise ValueError("inclusion probabilities need a spike-and-slab "
                             "prior (a field 'z')")
        if isinstance(self.prior, SpikeSlabPrior):
            cond = self.prior.inclusion_conditional(self.theta)
            return np.average(cond, weights=self.weights, axis=0)
        return self.inclusion_frequencies

    @property
    def inclusion_frequencies(self):
        """Weighted frequency of ``z_k = 1`` among the particles."""
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
        if self.predictor is None:
            return X_new @ self.point_estimate(point)
        return self.predictor.predict_scores(X_new, self.point_estimate(point))

    def predict(self, X_new, return_var=False, raw=True):
        """Posterior predictive mean (and variance) of the scores of new inputs.

        Linear scores: ``E[x . theta]`` and ``Var[x . theta]``. GP scores
        (:class:`~pac_particles.models.GPAUCModel`): the mean
        ``k_*' K^-1 E[s]`` and the variance ``Var[k_*' K^-1 s]`` over the
        particles plus the GP conditional variance ``k_** - k_*' K^-1 k_*``.
        """
        X_new = self.data.transform(X_new) if raw else np.asarray(X_new, float)
        cov = self.cov
        if self.predictor is None or not hasattr(self.predictor, "kernel"):
            mean = X_new @ self.mean
            var = np.einsum("ij,jk,ik->i", X_new, np.atleast_2d(cov), X_new)
            return (mean, var) if return_var else mean
        mean, cond_var = self.predictor.predict_scores(X_new, self.mean,
                                                       return_var=True)
        if not return_var:
            return mean
        from scipy.linalg import cho_solve
        A = cho_solve((self.predictor.kernel_chol, True),
                      np.asarray(self.predictor.kernel(X_new, self.data.X)).T)
        return mean, np.einsum("ji,jk,ki->i", A, cov, A) + cond_var

    def posterior_mean_score(self, X_new, raw=True):
        """Posterior mean of the score, ``E[x . theta]`` (equals scoring with
        ``mean``)."""
        return self.score(X_new, point="mean", raw=raw)


# ----------------------------------------------------- repeated runs

def _study_run(model, move_name, n_particles, len_chain, seed, numba_threads,
               wastefree=True, n_coefficients=1, ESSrmin=0.5):
    """One SMC run for the repeated-runs studies (runs in a worker).

    Returns the scalars of :func:`compare_moves` (``log_z``, ``mean_0``,
    times, evaluations, ...), plus the posterior means ``mean`` and variances
    ``var`` of the first ``n_coefficients`` coefficients (all if None) and,
    under a spike-and-slab prior, their ``inclusion_probs``."""
    import numba
    threads_before = numba.get_num_threads()
    if numba_threads:
        numba.set_num_threads(min(numba_threads, numba.config.NUMBA_NUM_THREADS))
    try:
        move = (default_move(model) if move_name is None
                else make_move(move_name, model))
        cpu = time.process_time()
        post = run_smc(model, n_particles=n_particles, len_chain=len_chain,
                       wastefree=wastefree, move=move, ESSrmin=ESSrmin, seed=seed)
        cpu = time.process_time() - cpu
    finally:  # the pilot runs in the caller's process
        numba.set_num_threads(threads_before)
    keep = slice(None) if n_coefficients is None else slice(0, n_coefficients)
    return {"log_z": post.log_z, "mean_0": float(post.mean[0]),
            "mean": post.mean[keep],
            "var": np.atleast_1d(np.diag(np.atleast_2d(post.cov)))[keep],
            "inclusion_probs": (post.inclusion_probs[keep]
                                if post.z is not None else None),
            "wall_time": post.wall_time, "cpu_time": cpu,
            "evaluations": post.n_risk_evaluations, "n_steps": post.n_steps,
            "evaluations_per_move": float(getattr(move, "evaluations_per_move",
                                                  1.0))}


def _numba_threads(numba_threads, n_jobs):
    """numba threads per run: given, or the cores shared among the jobs."""
    if numba_threads:
        return int(numba_threads)
    return max(1, (os.cpu_count() or 1) // max(1, int(n_jobs)))


def adjusted_variance(estimates, posterior_variances, cost):
    """Adjusted variance of posterior-expectation estimates (SMC-AUC student
    report, figure 4).

    For each grid point ``k`` and coefficient ``j``::

        cost[k] * var_r(estimates[k, r, j]) / mean_r(posterior_variances[k, r, j])

    where ``var_r`` is the sample variance over the independent runs ``r``
    (``ddof = 1``) and ``posterior_variances`` are each run's estimates of the
    posterior variance of coefficient ``j``. The ratio is the variance of the
    estimator in units of the posterior variance (about ``IF / N`` for an
    inefficiency factor ``IF`` and ``N`` particles), and ``cost`` (``K``, the
    number of MCMC steps, in the report) charges for the work: the larger,
    the worse. At a fixed number of particles ``N``; ``N`` times it is
    comparable across ``N``. An average of ``N`` independent posterior draws
    would give ``cost / N``.

    Parameters
    ----------
    estimates : array (n_grid, n_runs, n_coefficients)
        Per-run estimates of the posterior expectations (``n_runs >= 2``).
    posterior_variances : array of the same shape
        Per-run estimates of the posterior variances.
    cost : array (n_grid,) or float

    Returns
    -------
    array (n_grid, n_coefficients)

    Examples
    --------
    >>> import numpy as np
    >>> est = np.array([[[1.0], [3.0]]])      # one K, two runs, one coefficient
    >>> adjusted_variance(est, np.full_like(est, 4.0), cost=[5])
    array([[2.5]])
    """
    estimates = np.asarray(estimates, dtype=float)
    posterior_variances = np.asarray(posterior_variances, dtype=float)
    if estimates.ndim != 3 or estimates.shape != posterior_variances.shape:
        raise ValueError(
            "estimates and posterior_variances must have the same shape "
            f"(n_grid, n_runs, n_coefficients), got {estimates.shape} and "
            f"{posterior_variances.shape}")
    if estimates.shape[1] < 2:
        raise ValueError(f"need >= 2 runs to estimate a variance, got "
                         f"{estimates.shape[1]}")
    cost = np.broadcast_to(np.asarray(cost, dtype=float), estimates.shape[:1])
    mean_var = posterior_variances.mean(axis=1)
    if np.any(mean_var <= 0):
        raise ValueError("posterior variance estimates must be > 0 (a "
                         "degenerate particle system?)")
    return cost[:, None] * estimates.var(axis=1, ddof=1) / mean_var


@dataclass
class RepeatedRuns:
    """Independent SMC runs over a grid of chain lengths (tidy arrays).

    Grid point ``k`` ran ``run_smc(model, n_particles[k], len_chain[k],
    wastefree)``; run ``r`` used the seed ``seeds[r]`` at every grid point
    (common random numbers across the grid and across moves).

    The number of MCMC steps ``K`` (:attr:`k`): for standard SMC
    (``AdaptiveMCMCSequence``, non-adaptive) the number of MCMC steps applied
    to every particle after each resampling, ``len_chain - 1``; for waste-free
    SMC the chain length ``P = len_chain`` (each of the ``n_particles``
    resampled particles starts a chain of ``P`` states, ``P - 1`` moves, all
    kept: ``n_particles * P`` particles).

    Attributes
    ----------
    move : str, the move name (a key of :data:`pac_particles.moves.MOVES`, or
        ``"default"``).
    wastefree : bool
    len_chain, n_particles : int arrays (n_grid,), the :func:`run_smc`
        arguments (``n_particles`` = resampled particles M).
    seeds : int array (n_runs,)
    log_z : (n_grid, n_runs) log evidence estimates.
    mean, var : (n_grid, n_runs, n_coefficients) estimated posterior means
        and variances of the first coefficients.
    inclusion_probs : same shape, or None (spike-and-slab priors only).
    wall_time, cpu_time, evaluations, n_steps, evaluations_per_move :
        (n_grid, n_runs) seconds, risk evaluations, tempering steps, and risk
        evaluations per particle and MCMC step.
    label : str, e.g. the dataset name.
    """

    move: str
    wastefree: bool
    len_chain: np.ndarray
    n_particles: np.ndarray
    seeds: np.ndarray
    log_z: np.ndarray
    mean: np.ndarray
    var: np.ndarray
    wall_time: np.ndarray
    cpu_time: np.ndarray
    evaluations: np.ndarray
    n_steps: np.ndarray
    evaluations_per_move: np.ndarray
    inclusion_probs: np.ndarray = None
    label: str = ""

    @property
    def k(self):
        """Number of MCMC steps K of each grid point (see the class notes)."""
        return self.len_chain if self.wastefree else self.len_chain - 1

    @property
    def population(self):
        """Particles held by a run: ``M * P`` (waste-free) or ``M``."""
        return self.n_particles * (self.len_chain if self.wastefree else 1)

    @property
    def evaluations_per_particle(self):
        """Mean risk evaluations per run divided by :attr:`population`
        (n_grid,): the cost of a run per particle it returns."""
        return self.evaluations.mean(axis=1) / self.population

    def adjusted_variance(self, cost="k", variance="own"):
        """:func:`adjusted_variance` of the posterior means.

        ``cost="k"``: K (the student report's definition);
        ``cost="evaluations"``: :attr:`evaluations_per_particle`, which also
        charges for the tempering steps and the risk evaluations per MCMC step
        (slice moves spend several); or an array (n_grid,).

        ``variance="own"``: divide by each grid point's mean estimated
        posterior variance (the report's definition); ``"largest_k"``: by the
        one at the largest K, for every grid point. Too few MCMC steps leave
        a collapsed particle system that underestimates the posterior
        variance (standard SMC on Sonar: 0.11 for theta_1 at K = 1 against
        0.50 at K = 50 with the random walk), which inflates the report's
        ratio at small K; neither version sees the bias of the estimates.
        """
        if isinstance(cost, str):
            if cost == "k":
                cost = self.k
            elif cost == "evaluations":
                cost = self.evaluations_per_particle
            else:
                raise ValueError(f"cost must be 'k', 'evaluations' or an "
                                 f"array, got {cost!r}")
        if variance == "own":
            post_var = self.var
        elif variance == "largest_k":
            post_var = np.broadcast_to(self.var[np.argmax(self.k)], self.var.shape)
        else:
            raise ValueError(f"variance must be 'own' or 'largest_k', got "
                             f"{variance!r}")
        return adjusted_variance(self.mean, post_var, cost)

    def summary(self, names=None):
        """One dict per (grid point, coefficient), for a CSV: the adjusted
        variances (:meth:`adjusted_variance` with cost K, with cost
        :attr:`evaluations_per_particle`, and with the posterior variance at
        the largest K; needs >= 2 runs), the mean
        and variance over runs of the posterior-mean estimates, the mean
        estimated posterior variance, mean tempering steps and wall time."""
        n_coef = self.mean.shape[2]
        names = names or [f"theta[{j}]" for j in range(n_coef)]
        adj = {}
        if len(self.seeds) > 1:
            adj = {"adjusted_variance": self.adjusted_variance(),
                   "adjusted_variance_evaluations":
                       self.adjusted_variance(cost="evaluations"),
                   "adjusted_variance_largest_k_var":
                       self.adjusted_variance(variance="largest_k")}
        out = []
        for g in range(len(self.len_chain)):
            for j in range(n_coef):
                est = self.mean[g, :, j]
                out.append({
                    "dataset": self.label, "move": self.move,
                    "scheme": "waste-free" if self.wastefree else "standard",
                    "k": int(self.k[g]), "n_particles": int(self.n_particles[g]),
                    "n_runs": len(self.seeds), "coefficient": names[j],
                    **{key: value[g, j] for key, value in adj.items()},
                    "mean_estimate": est.mean(),
                    "var_estimates": est.var(ddof=1) if est.size > 1 else np.nan,
                    "mean_posterior_variance": self.var[g, :, j].mean(),
                    "evaluations_per_particle": self.evaluations_per_particle[g],
                    "mean_n_steps": self.n_steps[g].mean(),
                    "mean_wall_time": self.wall_time[g].mean()})
        return out

    def rows(self):
        """One dict per (grid point, run), for a CSV: scheme, K, sizes, seed,
        log Z, posterior mean and variance of each coefficient, costs."""
        out = []
        scheme = "waste-free" if self.wastefree else "standard"
        for g in range(len(self.len_chain)):
            for r, seed in enumerate(self.seeds):
                row = {"dataset": self.label, "move": self.move,
                       "scheme": scheme, "k": int(self.k[g]),
                       "len_chain": int(self.len_chain[g]),
                       "n_particles": int(self.n_particles[g]),
                       "population": int(self.population[g]),
                       "run": r, "seed": int(seed),
                       "log_z": float(self.log_z[g, r])}
                for j in range(self.mean.shape[2]):
                    row[f"mean_{j}"] = float(self.mean[g, r, j])
                    row[f"var_{j}"] = float(self.var[g, r, j])
                for key in ("n_steps", "evaluations", "evaluations_per_move",
                            "wall_time", "cpu_time"):
                    row[key] = getattr(self, key)[g, r].item()
                out.append(row)
        return out


def repeated_runs(model, move_name=None, len_chains=(10,), n_runs=20,
                  wastefree=True, n_particles=200, seed=0, n_jobs=1,
                  numba_threads=None, n_coefficients=10, ESSrmin=0.5,
                  label=""):
    """Independent SMC runs of ``model`` for each chain length of a grid.

    Runs ``run_smc(model, n_particles, len_chain, wastefree, move)`` with
    seeds ``seed, seed + 1, ..., seed + n_runs - 1`` at every grid point (all
    (grid point, run) pairs are spread over ``n_jobs`` joblib processes) and
    collects tidy arrays. The workhorse of :func:`compare_moves` and of the
    diagnostics ``adjusted_variance.py`` and ``marginal_likelihood_boxplots.py``.

    Parameters
    ----------
    model : AUCGibbsModel (picklable: it is sent to the workers)
    move_name : str or None
        A key of :data:`pac_particles.moves.MOVES`; None:
        :func:`~pac_particles.moves.default_move`. A fresh move per run.
    len_chains : sequence of int
        ``len_chain`` of :func:`run_smc` at each grid point (standard SMC:
        ``1 + K`` MCMC steps; waste-free: the chain length ``P``).
    n_runs : int
    wastefree : bool
    n_particles : int or sequence of int
        Resampled particles M, one for all grid points or one per grid point
        (see :func:`matched_sizes`).
    seed : int
    n_jobs : int
        joblib processes (``n_jobs = 1`` runs in this process).
    numba_threads : int, optional
        numba threads per run; default ``cores // n_jobs``.
    n_coefficients : int or None
        Keep the means and variances of the first ``n_coefficients``
        coefficients (None: all).
    ESSrmin : float
        As in :func:`run_smc`.
    label : str

    Returns
    -------
    RepeatedRuns

    Examples
    --------
    >>> from pac_particles.data import load_dataset
    >>> from pac_particles.models import AUCGibbsModel
    >>> X, y, _ = load_dataset("pima")
    >>> runs = repeated_runs(AUCGibbsModel(X, y, lam=len(y)), "random_walk",
    ...                      len_chains=[2, 3], n_runs=2, wastefree=False,
    ...                      n_particles=30, n_coefficients=2)
    >>> runs.k.tolist(), runs.log_z.shape, runs.mean.shape
    ([1, 2], (2, 2), (2, 2, 2))
    """
    from joblib import Parallel, delayed

    len_chains = np.atleast_1d(np.asarray(len_chains, dtype=int))
    sizes = np.broadcast_to(np.atleast_1d(np.asarray(n_particles, dtype=int)),
                            len_chains.shape).copy()
    n_runs = int(n_runs)
    if len_chains.ndim != 1 or len_chains.size == 0:
        raise ValueError(f"len_chains must be a non-empty sequence, got "
                         f"{len_chains}")
    if n_runs < 1:
        raise ValueError(f"n_runs must be >= 1, got {n_runs}")
    threads = _numba_threads(numba_threads, n_jobs)
    seeds = seed + np.arange(n_runs)
    runs = Parallel(n_jobs=n_jobs)(
        delayed(_study_run)(model, move_name, int(m), int(chain), int(s),
                            threads, wastefree, n_coefficients, ESSrmin)
        for chain, m in zip(len_chains, sizes) for s in seeds)

    def stack(key):
        values = np.array([run[key] for run in runs])
        return values.reshape((len(len_chains), n_runs) + values.shape[1:])

    probs = (stack("inclusion_probs") if runs[0]["inclusion_probs"] is not None
             else None)
    return RepeatedRuns(
        move=move_name or "default", wastefree=bool(wastefree),
        len_chain=len_chains, n_particles=sizes, seeds=seeds,
        log_z=stack("log_z"), mean=stack("mean"), var=stack("var"),
        wall_time=stack("wall_time"), cpu_time=stack("cpu_time"),
        evaluations=stack("evaluations"), n_steps=stack("n_steps"),
        evaluations_per_move=stack("evaluations_per_move"),
        inclusion_probs=probs, label=label)


MATCHES = ("particles", "budget")


def matched_sizes(ks, n_particles, wastefree, match="particles"):
    """:func:`run_smc` sizes ``(n_particles, len_chains)`` for a grid of K.

    Standard SMC: ``n_particles`` particles and ``len_chain = K + 1`` (K MCMC
    steps per tempering step). Waste-free SMC: chains of length ``P = K``
    (``K >= 2``) started from M resampled particles, with

    * ``match="particles"``: ``M = round(N / K)``, so that the run holds
      ``M K ~ N`` particles like a standard run of ``N = n_particles`` (the
      comparison of Dau & Chopin, 2022, at a fixed number of particles); it
      costs ``M (K - 1) ~ N`` MCMC steps per tempering step against ``N K``;
    * ``match="budget"``: ``M = round(N K / (K - 1))``, so that the
      ``M (K - 1)`` MCMC steps per tempering step equal the ``N K`` of the
      standard run.

    Waste-free grid points with ``K < 2`` are dropped.

    Returns
    -------
    ks, n_particles, len_chains : int arrays of the kept grid points.
    """
    ks = np.atleast_1d(np.asarray(ks, dtype=int))
    n = int(n_particles)
    if np.any(ks < 1) or n < 2:
        raise ValueError(f"need K >= 1 and n_particles >= 2, got K = {ks}, "
                         f"n_particles = {n}")
    if not wastefree:
        return ks, np.full(ks.shape, n), ks + 1
    if match not in MATCHES:
        raise ValueError(f"match must be one of {MATCHES}, got {match!r}")
    ks = ks[ks >= 2]
    if match == "particles":
        sizes = np.maximum(2, np.rint(n / ks)).astype(int)
    else:
        sizes = np.rint(n * ks / (ks - 1)).astype(int)
    return ks, sizes, ks.copy()


# ----------------------------------------------------- spike-and-slab path

@dataclass
class SpikeSlabPath:
    """Posterior summaries along a grid of spike variances ``v0``.

    Attributes
    ----------
    v0 : (n_v0,) spike variances; ``p``, ``v1`` : the other prior parameters.
    means : (n_v0, d) posterior means of theta.
    inclusion_probs : (n_v0, d) posterior inclusion probabilities (SMC:
        Rao-Blackwellised, :attr:`SMCPosterior.inclusion_probs`).
    log_z : (n_v0,) log evidence.
    wall_time : (n_v0,) seconds per run (NaN if unknown).
    method : str, e.g. ``"smc"`` or ``"ep"``.
    """

    v0: np.ndarray
    p: float
    v1: float
    means: np.ndarray
    inclusion_probs: np.ndarray
    log_z: np.ndarray
    wall_time: np.ndarray = None
    method: str = "smc"

    @classmethod
    def from_fits(cls, v0, fits, p, v1, method="ep"):
        """Collect fitted approximations with attributes ``mean``,
        ``inclusion_probs`` and ``log_z`` (e.g. the results of
        :meth:`pac_particles.ep.EPSpikeSlab.fit`), one per ``v0``."""
        return cls(v0=np.asarray(v0, dtype=float), p=float(p), v1=float(v1),
                   means=np.array([f.mean for f in fits]),
                   inclusion_probs=np.array([f.inclusion_probs for f in fits]),
                   log_z=np.array([f.log_z for f in fits]),
                   wall_time=np.full(len(fits), np.nan), method=method)

    def rows(self, names=None):
        """One dict per (v0, coefficient), for a CSV."""
        names = names or [f"theta[{j}]" for j in range(self.means.shape[1])]
        return [{"method": self.method, "v0": float(v0),
                 "coefficient": names[j], "index": j,
                 "mean": float(self.means[i, j]),
                 "inclusion_prob": float(self.inclusion_probs[i, j]),
                 "log_z": float(self.log_z[i])}
                for i, v0 in enumerate(self.v0)
                for j in range(self.means.shape[1])]


def spike_slab_path(X, y, lam, v0_grid, p=None, v1=1.0, n_particles=200,
                    len_chain=10, wastefree=True, seed=0, n_jobs=1,
                    numba_threads=None, standardize=True):
    """Regularisation path of the spike-and-slab Gibbs posterior in ``v0``.

    One SMC run (:class:`~pac_particles.moves.SpikeSlabMove`) of
    ``AUCGibbsModel(X, y, lam, prior=SpikeSlabPrior(d, p, v0, v1))`` per
    spike variance, all with the same ``seed`` (common random numbers make
    the path smoother): Ridgway et al. (2014), figure 3.

    As ``v0 / v1`` shrinks the indicators ``z`` become sticky under MCMC
    (see :class:`~pac_particles.moves.SpikeSlabMove`): the inclusion
    probabilities at the small end of the grid rest on the reweighting of the
    initial population and need many particles; compare with
    :class:`pac_particles.ep.EPSpikeSlab`.

    Parameters
    ----------
    X, y, lam, standardize : as :class:`~pac_particles.models.AUCGibbsModel`.
    v0_grid : sequence of float in (0, v1)
    p, v1 : as :class:`~pac_particles.priors.SpikeSlabPrior` (default ``p``:
        ``1 - exp(-1/d)``).
    n_particles, len_chain, wastefree, seed : as :func:`run_smc`.
    n_jobs, numba_threads : as :func:`repeated_runs`.

    Returns
    -------
    SpikeSlabPath
    """
    from joblib import Parallel, delayed

    v0_grid = np.atleast_1d(np.asarray(v0_grid, dtype=float))
    d = validate_xy(X, y, standardize=standardize).d
    priors = [SpikeSlabPrior(d, p=p, v0=v0, v1=v1) for v0 in v0_grid]
    threads = _numba_threads(numba_threads, n_jobs)
    runs = Parallel(n_jobs=n_jobs)(
        delayed(_study_run)(AUCGibbsModel(X, y, lam, prior=prior,
                                          standardize=standardize),
                            "spike_slab", n_particles, len_chain, seed,
                            threads, wastefree, None)
        for prior in priors)
    return SpikeSlabPath(
        v0=v0_grid, p=float(priors[0].p), v1=float(v1),
        means=np.array([run["mean"] for run in runs]),
        inclusion_probs=np.array([run["inclusion_probs"] for run in runs]),
        log_z=np.array([run["log_z"] for run in runs]),
        wall_time=np.array([run["wall_time"] for run in runs]))


# ----------------------------------------------------- efficiency of moves

def compare_moves(model, moves=("random_walk", "elliptical_slice",
                                "calibrated_slice"), n_runs=20,
                  n_particles=200, len_chain=50, reference="random_walk",
                  same_chain_as=None, n_jobs=1, numba_threads=None, seed=0,
                  label=""):
    """Efficiency of MCMC moves in waste-free SMC at an equal budget of risk
    evaluations.

    The ``reference`` move runs with ``len_chain``; the risk evaluations of
    its pilot run set the budget. Every other move gets the chain length that
    spends the same budget in its own pilot run (an elliptical slice step
    costs several evaluations, so its chains are shorter). Then ``n_runs``
    independent runs per move (seeds ``seed, seed + 1, ...``, the same for
    every move) give the variance of ``log Z`` and of the posterior mean of
    the first coefficient, and the mean wall and CPU times.

    Parameters
    ----------
    model : AUCGibbsModel
    moves : sequence of names in :data:`pac_particles.moves.MOVES`
    n_runs : int (>= 2)
    n_particles : int
        Resampled particles M (the same for all moves).
    len_chain : int
        Chain length of the reference move.
    reference : str
        The move whose budget the others match, and the denominator of the
        ratios.
    same_chain_as : dict, optional
        ``{move: other}``: run ``move`` with the chain length of ``other``
        instead of matching the budget. Default
        ``{"exact_gibbs": "elliptical_slice"}``: the cost of
        :class:`ExactEllipseGibbs` is in sorting break points, not in risk
        evaluations (one per move), so an equal evaluation budget would give
        it absurdly long chains; the variance x time ratio accounts for its
        true cost.
    n_jobs : int
        joblib processes.
    numba_threads : int, optional
        numba threads per run; default ``cores // n_jobs``. On a machine
        shared with other jobs, one thread per process (and
        ``n_jobs = cores``) avoids parallel regions waiting for descheduled
        threads; compare ``cpu_time`` then.
    seed : int
    label : str
        Dataset name copied into the rows.

    Returns
    -------
    list of dict, one per move. A move that refuses the model (e.g.
    ``exact_gibbs`` above its ``max_pairs``) gets a row with only
    ``dataset``, ``move`` and ``skipped`` (the reason). Other rows hold
    ``len_chain``, mean ``evaluations`` per
    run, ``evaluations_per_move``, ``n_steps``, ``var_log_z``,
    ``var_mean_0``, ``wall_time``, ``cpu_time`` (means per run), and
    ``ratio_log_z`` / ``ratio_mean_0``: (variance x wall time) relative to the
    reference (< 1: better than the reference); ``ratio_*_cpu`` use CPU time.
    """
    moves = list(moves)
    if reference not in moves:
        raise ValueError(f"reference move {reference!r} is not among {moves}")
    if int(n_runs) < 2:
        raise ValueError(f"n_runs must be >= 2 to estimate a variance, got {n_runs}")
    if same_chain_as is None:
        same_chain_as = {"exact_gibbs": "elliptical_slice"}
    threads = _numba_threads(numba_threads, n_jobs)
    pilot_seed = seed + 10_000
    skipped = {}
    for name in moves:
        try:
            make_move(name, model)
        except ValueError as err:
            if name == reference:
                raise
            skipped[name] = str(err)
    moves = [name for name in moves if name not in skipped]
    same_chain_as = {k: v for k, v in same_chain_as.items()
                     if k in moves and v in moves}

    def pilot(name, chain):
        return _study_run(model, name, n_particles, chain, pilot_seed, threads)

    budget = pilot(reference, len_chain)["evaluations"]
    chains = {reference: len_chain}
    for name in moves:
        if name == reference or name in same_chain_as:
            continue
        spent = pilot(name, len_chain)["evaluations"]
        chains[name] = max(2, int(round(1 + (len_chain - 1) * budget / spent)))
    for name, other in same_chain_as.items():
        chains[name] = chains[other]

    rows = []
    for name in moves:
        runs = repeated_runs(model, name, len_chains=[chains[name]],
                             n_runs=n_runs, wastefree=True,
                             n_particles=n_particles, seed=seed, n_jobs=n_jobs,
                             numba_threads=threads, n_coefficients=1)
        col = {key: getattr(runs, key)[0] for key in
               ("log_z", "evaluations", "evaluations_per_move", "n_steps",
                "wall_time", "cpu_time")}
        col["mean_0"] = runs.mean[0, :, 0]
        rows.append({
            "dataset": label, "move": name, "n_runs": int(n_runs),
            "n_particles": int(n_particles), "len_chain": chains[name],
            "evaluations": float(col["evaluations"].mean()),
            "evaluations_per_move": float(col["evaluations_per_move"].mean()),
            "n_steps": float(col["n_steps"].mean()),
            "mean_log_z": float(col["log_z"].mean()),
            "var_log_z": float(np.var(col["log_z"], ddof=1)),
            "mean_mean_0": float(col["mean_0"].mean()),
            "var_mean_0": float(np.var(col["mean_0"], ddof=1)),
            "wall_time": float(col["wall_time"].mean()),
            "cpu_time": float(col["cpu_time"].mean()),
        })
    ref = next(row for row in rows if row["move"] == reference)
    for row in rows:
        for stat in ("log_z", "mean_0"):
            var, var_ref = row[f"var_{stat}"], ref[f"var_{stat}"]
            row[f"ratio_{stat}"] = (var * row["wall_time"]) / (var_ref * ref["wall_time"])
            row[f"ratio_{stat}_cpu"] = (var * row["cpu_time"]) / (var_ref * ref["cpu_time"])
    rows += [{"dataset": label, "move": name, "skipped": reason}
             for name, reason in skipped.items()]
    return rows


def format_move_table(rows):
    """Plain-text table of :func:`compare_moves` rows."""
    head = (f"{'dataset':<8} {'move':<17} {'chain':>5} {'evals/run':>10} "
            f"{'evals/move':>10} {'steps':>6} {'var logZ':>10} {'var mean0':>10} "
            f"{'wall s':>7} {'cpu s':>7} {'VxT logZ':>9} {'VxT mean0':>9} "
            f"{'cpu logZ':>9} {'cpu mean0':>9}")
    lines = [head, "-" * len(head)]
    for r in rows:
        if "skipped" in r:
            lines.append(f"{r['dataset']:<8} {r['move']:<17} skipped: "
                         f"{r['skipped']}")
            continue
        lines.append(
            f"{r['dataset']:<8} {r['move']:<17} {r['len_chain']:>5d} "
            f"{r['evaluations']:>10.3g} {r['evaluations_per_move']:>10.2f} "
            f"{r['n_steps']:>6.1f} {r['var_log_z']:>10.3g} {r['var_mean_0']:>10.3g} "
            f"{r['wall_time']:>7.2f} {r['cpu_time']:>7.2f} "
            f"{r['ratio_log_z']:>9.3f} {r['ratio_mean_0']:>9.3f} "
            f"{r['ratio_log_z_cpu']:>9.3f} {r['ratio_mean_0_cpu']:>9.3f}")
    lines.append("VxT = variance x wall time per run, relative to the reference "
                 "move (< 1: more efficient); cpu = the same with CPU time")
    return "\n".join(lines)
