"""Independent repeated SMC runs over a grid of chain lengths, and the
adjusted variance of their estimates.

:func:`repeated_runs` runs independent SMC samplers
(:func:`~pac_particles.smc.posterior.run_smc`, standard or waste-free [DC22])
over a grid of chain lengths, with seeds ``seed + r`` for run ``r`` at every
grid point, spread over joblib processes, and returns tidy arrays
(:class:`RepeatedRuns`): log Z, posterior means and variances of the first
coefficients, costs. It serves :func:`lab.study.compare_moves`,
:func:`adjusted_variance` (``K x var over runs of the posterior-mean
estimates / mean estimated posterior variance``, the SMC-AUC student report's
figure 4; ``diagnostics/adjusted_variance.py``) and the box plots of log Z vs
K (``diagnostics/marginal_likelihood_boxplots.py``; :func:`matched_sizes`
pairs standard and waste-free runs).

Threads. Each run uses ``numba_threads`` numba threads and as many BLAS
threads (:func:`pac_particles.core.parallel.blas_threads`); by default the cores
are shared among the ``n_jobs`` processes (:func:`pac_particles.core.parallel.threads_per_job`).

Example
-------
>>> from lab.study import matched_sizes
>>> ks, m, chains = matched_sizes([1, 2, 5], 100, wastefree=True)
>>> ks.tolist(), m.tolist(), chains.tolist()      # waste-free needs K >= 2
([2, 5], [50, 20], [2, 5])

References
----------
[DC22] Dau, H.-D. and Chopin, N. (2022). Waste-free sequential Monte Carlo.
Journal of the Royal Statistical Society B 84(1), 114-148.
"""

import time
from dataclasses import dataclass

import numpy as np
from joblib import Parallel, delayed

from pac_particles.core import parallel
from pac_particles.core.checks import InputError, check_choice, check_count
from pac_particles.smc.moves import default_move, make_move
from pac_particles.smc.posterior import run_smc
from pac_particles.core.progress import Progress, tracked

__all__ = ["repeated_runs", "RepeatedRuns", "adjusted_variance",
           "matched_sizes", "MATCHES"]

MATCHES = ("particles", "budget")


def _study_run(model, move_name, n_particles, len_chain, seed, numba_threads,
               wastefree=True, n_coefficients=1, ESSrmin=0.5, move_options=None):
    """One SMC run for the repeated-runs studies (runs in a worker).

    Returns the scalars of :func:`compare_moves` (``log_z``, ``mean_0``,
    times, evaluations, ...), plus the posterior means ``mean`` and variances
    ``var`` of the first ``n_coefficients`` coefficients (all if None) and,
    under a spike-and-slab prior, their ``inclusion_probs``."""
    with parallel.limited_threads(numba_threads):
        move = (default_move(model) if move_name is None
                else make_move(move_name, model, **(move_options or {})))
        cpu = time.process_time()
        # the sampler's own estimates: these studies compare moves and
        # chain lengths, which importance draws pooled in would blur
        post = run_smc(model, n_particles=n_particles, len_chain=len_chain,
                       wastefree=wastefree, move=move, ESSrmin=ESSrmin, seed=seed,
                       evidence="tempering")
        cpu = time.process_time() - cpu
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
        raise InputError(
            "estimates and posterior_variances must have the same shape "
            f"(n_grid, n_runs, n_coefficients), got {estimates.shape} and "
            f"{posterior_variances.shape}")
    if estimates.shape[1] < 2:
        raise InputError(f"need >= 2 runs to estimate a variance, got "
                         f"{estimates.shape[1]}")
    cost = np.broadcast_to(np.asarray(cost, dtype=float), estimates.shape[:1])
    mean_var = posterior_variances.mean(axis=1)
    if np.any(mean_var <= 0):
        raise InputError("posterior variance estimates must be > 0 (a "
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
    move : str, the move name (a key of :data:`pac_particles.smc.moves.MOVES`, or
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
        variance, which inflates the report's ratio at small K; neither
        version sees the bias of the estimates.
        """
        if isinstance(cost, str):
            if cost == "k":
                cost = self.k
            elif cost == "evaluations":
                cost = self.evaluations_per_particle
            else:
                raise InputError(f"cost must be 'k', 'evaluations' or an "
                                 f"array, got {cost!r}")
        check_choice(variance, "variance", ("own", "largest_k"))
        post_var = (self.var if variance == "own" else
                    np.broadcast_to(self.var[np.argmax(self.k)], self.var.shape))
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
                  label="", verbose=False):
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
        A key of :data:`pac_particles.smc.moves.MOVES`; None:
        :func:`~pac_particles.smc.moves.default_move`. A fresh move per run.
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
        As in :func:`~pac_particles.smc.posterior.run_smc`.
    label : str
    verbose : bool or str
        Progress over the (grid point, run) pairs, in the order they were
        submitted (:mod:`pac_particles.core.progress`).

    Returns
    -------
    RepeatedRuns

    Examples
    --------
    >>> from pac_particles.problem.datasets import load_dataset
    >>> from pac_particles.smc.models import AUCGibbsModel
    >>> X, y, _ = load_dataset("pima")
    >>> runs = repeated_runs(AUCGibbsModel(X, y, lam=len(y)), "random_walk",
    ...                      len_chains=[2, 3], n_runs=2, wastefree=False,
    ...                      n_particles=30, n_coefficients=2)
    >>> runs.k.tolist(), runs.log_z.shape, runs.mean.shape
    ([1, 2], (2, 2), (2, 2, 2))
    """
    len_chains = np.atleast_1d(np.asarray(len_chains, dtype=int))
    sizes = np.broadcast_to(np.atleast_1d(np.asarray(n_particles, dtype=int)),
                            len_chains.shape).copy()
    n_runs = check_count(n_runs, "n_runs", 1)
    if len_chains.ndim != 1 or len_chains.size == 0:
        raise InputError(f"len_chains must be a non-empty sequence, got "
                         f"{len_chains}")
    threads = parallel.threads_per_job(n_jobs, numba_threads)
    seeds = seed + np.arange(n_runs)
    with Progress(verbose, total=len(len_chains) * n_runs,
                  desc=f"runs {label}".strip(), unit="run") as progress:
        runs = list(tracked(Parallel(n_jobs=n_jobs, return_as="generator")(
            delayed(_study_run)(model, move_name, int(m), int(chain), int(s),
                                threads, wastefree, n_coefficients, ESSrmin)
            for chain, m in zip(len_chains, sizes) for s in seeds),
            progress, "run"))

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
        raise InputError(f"need K >= 1 and n_particles >= 2, got K = {ks}, "
                         f"n_particles = {n}")
    if not wastefree:
        return ks, np.full(ks.shape, n), ks + 1
    check_choice(match, "match", MATCHES)
    ks = ks[ks >= 2]
    if match == "particles":
        sizes = np.maximum(2, np.rint(n / ks)).astype(int)
    else:
        sizes = np.rint(n * ks / (ks - 1)).astype(int)
    return ks, sizes, ks.copy()

