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

from .models import RobustAdaptiveTempering, check_reached_target
from .moves import (CalibratedEllipticalSlice, EllipticalSlice,
                    ExactEllipseGibbs, SpikeSlabMove, default_move, make_move)
from .priors import SpikeSlabPrior

__all__ = ["run_smc", "SMCPosterior", "POINT_ESTIMATES", "compare_moves",
           "format_move_table"]

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
        field = getattr(model, "param_name", "theta")
        theta = np.array(th[field], dtype=float).reshape(len(th), -1)
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
        norms = np.linalg.norm(self.theta, axis=1, keepdims=True)
        return self.theta / np.where(norms > 0, norms, 1.0)

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


# ----------------------------------------------------- efficiency of moves

def _study_run(model, move_name, n_particles, len_chain, seed, numba_threads):
    """One waste-free run for :func:`compare_moves` (runs in a worker)."""
    import numba
    threads_before = numba.get_num_threads()
    if numba_threads:
        numba.set_num_threads(min(numba_threads, numba.config.NUMBA_NUM_THREADS))
    try:
        move = make_move(move_name, model)
        cpu = time.process_time()
        post = run_smc(model, n_particles=n_particles, len_chain=len_chain,
                       move=move, seed=seed)
        cpu = time.process_time() - cpu
    finally:  # the pilot runs in the caller's process
        numba.set_num_threads(threads_before)
    return {"log_z": post.log_z, "mean_0": float(post.mean[0]),
            "wall_time": post.wall_time, "cpu_time": cpu,
            "evaluations": post.n_risk_evaluations, "n_steps": post.n_steps,
            "evaluations_per_move": float(getattr(move, "evaluations_per_move",
                                                  1.0))}


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
    from joblib import Parallel, delayed

    moves = list(moves)
    if reference not in moves:
        raise ValueError(f"reference move {reference!r} is not among {moves}")
    if int(n_runs) < 2:
        raise ValueError(f"n_runs must be >= 2 to estimate a variance, got {n_runs}")
    if same_chain_as is None:
        same_chain_as = {"exact_gibbs": "elliptical_slice"}
    threads = (int(numba_threads) if numba_threads
               else max(1, (os.cpu_count() or 1) // max(1, int(n_jobs))))
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
        runs = Parallel(n_jobs=n_jobs)(
            delayed(_study_run)(model, name, n_particles, chains[name],
                                seed + r, threads)
            for r in range(int(n_runs)))
        col = {key: np.array([run[key] for run in runs]) for key in runs[0]}
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
