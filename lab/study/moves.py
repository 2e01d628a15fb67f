"""Efficiency of MCMC moves in waste-free SMC at an equal budget of risk
evaluations.

:func:`compare_moves` gives every move of :data:`pac_particles.smc.moves.MOVES`
the chain length that spends the reference move's budget of risk
evaluations (an elliptical slice step [MAM10] costs several, a random-walk
step one), runs independent waste-free samplers [DC22] with each
(:func:`~lab.study.repeated_runs`) and reports the variance x time
of log Z and of a posterior mean relative to the reference;
:func:`format_move_table` prints the rows (``diagnostics/compare_moves.py``).

Example
-------
::

    from pac_particles.problem.datasets import load_dataset
    from pac_particles.smc.models import AUCGibbsModel
    from lab.study import compare_moves, format_move_table
    X, y, _ = load_dataset("pima")
    rows = compare_moves(AUCGibbsModel(X, y, lam=len(y)), n_runs=20,
                         label="pima")
    print(format_move_table(rows))

References
----------
[DC22] Dau, H.-D. and Chopin, N. (2022). Waste-free sequential Monte Carlo.
Journal of the Royal Statistical Society B 84(1), 114-148.
[MAM10] Murray, I., Adams, R. P. and MacKay, D. J. C. (2010). Elliptical
slice sampling. AISTATS 2010.
"""

import numpy as np

from pac_particles.core.checks import InputError, check_count
from pac_particles.smc.moves import make_move
from pac_particles.core import parallel
from lab.study.repeated_runs import _study_run, repeated_runs

__all__ = ["compare_moves", "format_move_table"]


def compare_moves(model, moves=("random_walk", "elliptical_slice",
                                "calibrated_slice"), n_runs=20,
                  n_particles=200, len_chain=50, reference="random_walk",
                  same_chain_as=None, n_jobs=1, numba_threads=None, seed=0,
                  label="", verbose=False):
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
    moves : sequence of names in :data:`pac_particles.smc.moves.MOVES`
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
        :class:`~pac_particles.smc.moves.ExactEllipseGibbs` is in sorting break
        points, not in risk evaluations (one per move), so an equal
        evaluation budget would give it absurdly long chains; the variance x
        time ratio accounts for its true cost.
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
        raise InputError(f"reference move {reference!r} is not among {moves}")
    n_runs = check_count(n_runs, "n_runs (>= 2 to estimate a variance)", 2)
    if same_chain_as is None:
        same_chain_as = {"exact_gibbs": "elliptical_slice"}
    threads = parallel.threads_per_job(n_jobs, numba_threads)
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
                             numba_threads=threads, n_coefficients=1,
                             verbose=verbose)
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
