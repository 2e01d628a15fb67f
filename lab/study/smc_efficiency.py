"""Efficiency of the tempering SMC sampler: variance x time of log Z and of
the Bayes point over the schedule, the chain length, the move and where the
sampler starts.

A *cell* is one sampler configuration (:class:`Cell`: ``ESSrmin``, chain
length P, resampled particles M, options of
:class:`~pac_particles.smc.moves.CalibratedEllipticalSlice`, the ``evidence``
and the ``start`` of :func:`~pac_particles.smc.posterior.run_smc`).
:func:`default_cells` gives the study's cells:

* the grid, run from the prior (``start="prior"``): ``"default"``
  (``run_smc``'s ``ESSrmin`` and ``len_chain``), one factor at a time
  around it (``"ESSrmin=..."``, ``"P=..."`` at a fixed population M P,
  ``"ESSrmin=0.8,P=..."``), the move's options (``"center=zero"``,
  ``"shrinkage=0"``, ``"n_slices=2"``; linear models), the tempering
  estimate of log Z (``"tempering"``) and the earlier default of the
  sampler (``"unshrunk tempering"``; linear models);
* :data:`GAUSSIAN_CELLS`, from the Gaussian approximation: ``"EP +
  importance sampling"`` (``start="importance"``: EP's Gaussian and
  :func:`~pac_particles.smc.importance_evidence.importance_log_z` with
  ``M P`` draws, no SMC run), ``"new default"`` (``run_smc``'s default,
  ``start="auto"``: a scouting run from the prior, then importance draws
  from the Gaussian and the scout's fit, the posterior where their tail,
  their ESS and the scout's check pass, else tempering from the prior) and
  ``"former default"`` (``scout=False``: the draws from the Gaussian alone
  where their Pareto k is reliable, else the bridge from it).

:func:`efficiency_runs` runs independent samplers (waste-free [DC22], or
importance sampling alone) for every (problem, cell, seed), one CSV row per
run, checkpointed after each run so that an interrupted study resumes where
it stopped and a partial CSV is usable.
:func:`efficiency_table` compares each cell with a baseline cell on

* ``var(log Z) x time`` and
* ``sum_j var(bayes_point_j) x time`` (the posterior mean of the normalised
  direction ``theta / |theta|``, :mod:`pac_particles.core.weighted_particles`),

``time`` being the mean CPU time of a run. A ratio above 1 means the cell
is more efficient than the baseline. The 95% interval of the log Z ratio is
the F-distribution interval of a ratio of two normal variances [Sne07,
Sec. 5.4] (the time ratio taken as exact); that of the Bayes-point ratio, a
sum of variances, is a percentile bootstrap over runs.
:func:`coverage_table` checks the single-run error bars of
:func:`~pac_particles.smc.posterior.run_smc` (``log_z_se``,
``bayes_point_se``) against the spread over the runs of a cell.
``diagnostics/smc_efficiency.py`` runs the study; the measured ratios are
in docs/benchmarks.md ("Efficiency of the SMC sampler", and "Tempering
from the Gaussian approximation" for :data:`GAUSSIAN_CELLS`).

Example
-------
::

    from pac_particles.problem.datasets import load_dataset
    from pac_particles.smc.models import AUCGibbsModel
    from lab.study.smc_efficiency import (
        default_cells, efficiency_runs, efficiency_table)
    X, y, _ = load_dataset("pima")
    rows = efficiency_runs({"pima": AUCGibbsModel(X, y, lam=len(y))},
                           default_cells(n_particles=100)[:3], n_runs=20,
                           csv_path="/tmp/smc_efficiency.csv")
    for row in efficiency_table(rows):
        print(row)

References
----------
[DC22] Dau, H.-D. and Chopin, N. (2022). Waste-free sequential Monte Carlo.
Journal of the Royal Statistical Society B 84(1), 114-148.
[Sne07] Snedecor, G. W. and Cochran, W. G. (1989). Statistical Methods,
8th ed. Iowa State University Press.
"""

import csv
import dataclasses
import os
import time
from dataclasses import dataclass, field

import numpy as np
from scipy import stats

from pac_particles.core import parallel
from pac_particles.core.checks import InputError, check_choice, check_count
from pac_particles.smc.importance_evidence import (gaussian_approximation,
                                                   importance_log_z)
from pac_particles.smc.moves import CalibratedEllipticalSlice, default_move
from pac_particles.smc.posterior import SMCPosterior, run_smc
from pac_particles.apps.tables import write_rows

__all__ = ["Cell", "default_cells", "efficiency_runs", "efficiency_table",
           "coverage_table", "variance_ratio_interval", "format_table",
           "CELL_STARTS", "GAUSSIAN_CELLS"]

#: where a cell's runs start: ``run_smc``'s ``start`` (``"prior"``,
#: ``"auto"``, ``"gaussian"``), or ``"importance"``: EP's Gaussian and
#: importance sampling from it alone, ``n_particles * len_chain`` draws, no
#: SMC run
CELL_STARTS = ("prior", "auto", "gaussian", "importance")
#: the cells of :func:`default_cells` that start from the Gaussian
#: approximation (the grid's cells start from the prior)
GAUSSIAN_CELLS = ("EP + importance sampling", "new default",
                  "former default")


@dataclass(frozen=True)
class Cell:
    """One sampler configuration: :func:`run_smc` arguments (``evidence``
    and ``start`` included) and options of the calibrated slice move
    (``move`` empty: the model's default move from the prior, ``run_smc``'s
    own from a Gaussian start).

    ``start`` is one of :data:`CELL_STARTS`: ``"prior"`` (default),
    ``"auto"`` and ``"gaussian"`` are passed to ``run_smc(start=...)``;
    ``"importance"`` is EP's Gaussian
    (:func:`~pac_particles.smc.importance_evidence.gaussian_approximation`)
    and :func:`~pac_particles.smc.importance_evidence.importance_log_z` with
    ``n_particles * len_chain`` draws, no SMC run (``ESSrmin`` unused).
    Move options go with the prior start only (a move of one's own makes
    ``run_smc``'s ``"auto"`` fall back to the prior), and importance
    sampling alone estimates log Z by importance: InputError otherwise."""

    name: str
    n_particles: int = 100
    len_chain: int = 10
    ESSrmin: float = 0.5
    move: dict = field(default_factory=dict)
    evidence: str = "importance"
    start: str = "prior"
    scout: bool = True

    def __post_init__(self):
        check_choice(self.start, "start", CELL_STARTS)
        check_choice(self.evidence, "evidence", ("importance", "tempering"))
        if self.move and self.start != "prior":
            raise InputError(f"cell {self.name!r}: move options "
                             f"{self.move!r} need start='prior', got "
                             f"start={self.start!r} (run_smc moves from a "
                             f"Gaussian start with the bridge's own move)")
        if self.start == "importance" and self.evidence != "importance":
            raise InputError(f"cell {self.name!r}: start='importance' "
                             f"estimates log Z by importance sampling, not "
                             f"evidence={self.evidence!r}")

    def build_move(self, model):
        """The move passed to ``run_smc``: None from a Gaussian start (the
        bridge's move), else the cell's calibrated slice, or the model's
        default move when ``move`` is empty (move options with another
        start: refused by the validation and by :func:`_one_run`)."""
        if self.start != "prior":
            return None
        if not self.move:
            return default_move(model)
        return CalibratedEllipticalSlice(**self.move)


def default_cells(n_particles=100, len_chain=10, gp=False):
    """The study's cells: a grid from the prior, one factor at a time
    around ``(M, P, ESSrmin) = (n_particles, len_chain, 0.5)`` (the
    ``"default"`` cell), and two cells from the Gaussian approximation:

    * ``ESSrmin`` in 0.3, 0.7, 0.8, 0.9;
    * the chain length P at a fixed population ``M P``: P / 5, P / 2, 2 P,
      4 P;
    * move variants (not for GP models, whose move is the prior slice):
      ellipses centred on 0 instead of the weighted mean, no covariance
      shrinkage (the default is 0.3; 0 was the default before), two slice
      steps per chain link;
    * combinations of the schedule with the chain length;
    * ``log Z`` from the tempering run alone (``evidence="tempering"``, the
      default before importance sampling) and, for linear models, the
      earlier default of the sampler (that and no covariance shrinkage:
      ``"unshrunk tempering"``);
    * :data:`GAUSSIAN_CELLS`, linear and GP models alike: ``"EP +
      importance sampling"`` (EP's Gaussian and ``M P`` importance draws,
      no SMC run: ``start="importance"``), ``"new default"``
      (``run_smc``'s default, ``start="auto"``: from the Gaussian
      approximation, checked by a scouting run from the prior) and
      ``"former default"`` (the same without the scout, ``scout=False``).

    Every grid cell runs from the prior (``start="prior"``).
    """
    m, p = int(n_particles), int(len_chain)
    cells = [Cell("default", m, p, 0.5)]
    cells += [Cell(f"ESSrmin={e}", m, p, e) for e in (0.3, 0.7, 0.8, 0.9)]
    cells += [Cell(f"P={q}", max(2, round(m * p / q)), q, 0.5)
              for q in sorted({max(2, p // 5), max(2, p // 2), 2 * p, 4 * p})]
    cells += [Cell(f"ESSrmin=0.8,P={q}", max(2, round(m * p / q)), q, 0.8)
              for q in (max(2, p // 2), 2 * p)]
    cells += [Cell("tempering", m, p, 0.5, evidence="tempering")]
    if not gp:
        cells += [Cell("unshrunk tempering", m, p, 0.5, {"shrinkage": 0.0},
                       evidence="tempering"),
                  Cell("center=zero", m, p, 0.5, {"center": "zero"}),
                  Cell("shrinkage=0", m, p, 0.5, {"shrinkage": 0.0}),
                  Cell("n_slices=2", m, p, 0.5, {"n_slices": 2})]
    importance, new_default, former_default = GAUSSIAN_CELLS
    cells += [Cell(importance, m, p, 0.5, start="importance"),
              Cell(new_default, m, p, 0.5, start="auto"),
              Cell(former_default, m, p, 0.5, start="auto", scout=False)]
    return cells


def _importance_alone(model, n_draws, seed):
    """EP's Gaussian and importance sampling from it, nothing else: an
    :class:`~pac_particles.smc.result.SMCPosterior` of ``start``
    ``"importance"``."""
    fit = gaussian_approximation(model, with_source=True)
    if fit is None:
        raise InputError("start='importance': no Gaussian approximation "
                         "covers this model")
    mean, cov, source = fit
    return SMCPosterior.from_importance(
        importance_log_z(model, mean, cov, n_draws, seed=seed,
                         proposal=source), model)


def _one_run(model, problem, cell, seed):
    """One run of ``cell`` (waste-free SMC, or importance sampling alone): a
    CSV row with log Z, the Bayes point, their single-run standard errors,
    the path that ran (``start``: ``"prior"``, ``"gaussian"`` or
    ``"importance"``), the importance proposal and the costs; the same
    columns for every cell."""
    if cell.move and cell.start != "prior":
        raise InputError(f"cell {cell.name!r}: move options need "
                         f"start='prior', got {cell.start!r}")
    evaluations = model.n_risk_evaluations
    cpu, wall = time.process_time(), time.perf_counter()
    if cell.start == "importance":
        post = _importance_alone(model, cell.n_particles * cell.len_chain,
                                 seed)
    else:
        post = run_smc(model, n_particles=cell.n_particles,
                       len_chain=cell.len_chain, ESSrmin=cell.ESSrmin,
                       move=cell.build_move(model), seed=seed,
                       evidence=cell.evidence, start=cell.start,
                       scout=cell.scout)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    if cell.start == "importance":
        # from_importance leaves the costs to its caller
        post = dataclasses.replace(
            post, wall_time=wall,
            n_risk_evaluations=model.n_risk_evaluations - evaluations)
    imp = post.importance
    row = {"problem": problem, "cell": cell.name, "seed": int(seed),
           "n_particles": cell.n_particles, "len_chain": cell.len_chain,
           "ESSrmin": cell.ESSrmin, "start": post.start, "log_z": post.log_z,
           "log_z_se": (float("nan") if post.log_z_se is None
                        else float(post.log_z_se)),
           "log_z_tempering": post.log_z_tempering,
           "pareto_k": imp.pareto_k if imp else float("nan"),
           "proposal": imp.proposal if imp else "",
           "n_steps": post.n_steps,
           "evaluations": post.n_risk_evaluations,
           "wall_time": post.wall_time, "cpu_time": cpu}
    for j, (b, s) in enumerate(zip(post.bayes_point, post.bayes_point_se)):
        row[f"bp_{j}"], row[f"bp_se_{j}"] = float(b), float(s)
    return row


def _read_rows(path):
    if not path or not os.path.exists(path):
        return []
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def efficiency_runs(models, cells, n_runs=20, seed=0, csv_path=None,
                    numba_threads=1, log=None):
    """Independent runs of every cell on every problem (:func:`_one_run`:
    waste-free SMC from the cell's ``start``, or importance sampling alone).

    Run ``r`` of every cell uses the seed ``seed + r``; the seeds are the
    outermost loop (seed ``seed + r`` of every problem and cell, then the
    next), so that the cells share the machine's load alike and a partial
    study has as many runs of each. With ``csv_path``, the rows already in
    that CSV (same problem, cell and seed) are kept and not run again, and
    the CSV is rewritten after every run: stop the study at any time and
    rerun to resume.

    Parameters
    ----------
    models : dict ``{problem name: model}``
    cells : sequence of :class:`Cell` (or a dict ``{problem: cells}``)
    n_runs : int
    seed : int
    csv_path : str, optional
    numba_threads : int
        numba (and BLAS) threads of each run; one on a shared machine.
    log : callable, optional
        Called with a progress line after each run.

    Returns
    -------
    list of dict, one per run (values read back from the CSV are strings;
    :func:`efficiency_table` converts them).
    """
    n_runs = check_count(n_runs, "n_runs", minimum=2)
    rows = _read_rows(csv_path)
    done = {(r["problem"], r["cell"], int(r["seed"])) for r in rows}
    # seeds outermost: every cell of every problem grows together, and the
    # cells of a seed run side by side under the same machine load
    for r in range(n_runs):
        for problem, model in models.items():
            problem_cells = cells[problem] if isinstance(cells, dict) else cells
            for cell in problem_cells:
                if (problem, cell.name, seed + r) in done:
                    continue
                with parallel.limited_threads(numba_threads):
                    rows.append(_one_run(model, problem, cell, seed + r))
                if csv_path:
                    write_rows(rows, csv_path)
                if log:
                    last = rows[-1]
                    log(f"{problem} {cell.name} seed {seed + r}: log Z "
                        f"{last['log_z']:.3f} +- {last['log_z_se']:.3f}, "
                        f"{last['n_steps']} steps from {last['start']}, "
                        f"{last['cpu_time']:.1f} s")
    return rows


def variance_ratio_interval(a, b, level=0.95):
    """Ratio ``var(b) / var(a)`` of the sample variances of two independent
    normal samples and its F-distribution interval at ``level``
    (``var(a) / var(b) * var(b) / var(a)`` follows F(n_a - 1, n_b - 1))."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    if a.size < 2 or b.size < 2:
        raise InputError("a variance ratio needs >= 2 values in each sample")
    ratio = np.var(b, ddof=1) / np.var(a, ddof=1)
    q = (1.0 - level) / 2.0
    dfa, dfb = a.size - 1, b.size - 1
    return ratio, (ratio * stats.f.ppf(q, dfa, dfb),
                   ratio * stats.f.ppf(1.0 - q, dfa, dfb))


def _bootstrap_ratio(a, b, n_boot, rng, level=0.95):
    """``sum_j var(b[:, j]) / sum_j var(a[:, j])`` and its percentile
    bootstrap interval (runs resampled independently in a and b)."""
    def total(x):
        return np.var(x, axis=-2, ddof=1).sum(axis=-1)

    ratio = total(b) / total(a)
    q = 100 * (1.0 - level) / 2.0
    ia = rng.integers(0, len(a), size=(n_boot, len(a)))
    ib = rng.integers(0, len(b), size=(n_boot, len(b)))
    with np.errstate(divide="ignore", invalid="ignore"):
        # a resample of identical runs (few runs) has variance 0
        boot = total(b[ib]) / total(a[ia])
        bounds = tuple(np.percentile(boot, [q, 100 - q]))
    return ratio, bounds


def _by_cell(rows):
    cells = {}
    for row in rows:
        cells.setdefault((row["problem"], row["cell"]), []).append(row)
    return cells


def _column(runs, key):
    return np.array([float(r[key]) for r in runs])


def _bayes_points(runs, prefix="bp_"):
    # rows read back from a CSV shared by problems of several dimensions
    # have empty cells beyond their own d
    d = sum(1 for k, v in runs[0].items() if k.startswith(prefix)
            and k[len(prefix):].isdigit() and v not in ("", None))
    return np.array([[float(r[f"{prefix}{j}"]) for j in range(d)]
                     for r in runs])


def efficiency_table(rows, baseline="default", n_boot=2000, seed=0):
    """Variance x time of each cell relative to ``baseline`` (same problem).

    One dict per (problem, cell): runs, mean tempering steps, risk
    evaluations and CPU time per run, var(log Z), ``eff_log_z`` =
    ``var_base(log Z) t_base / (var(log Z) t)`` with its F interval
    ``eff_log_z_lo/hi``, and ``eff_bayes_point`` likewise for the sum of the
    variances of the Bayes point's coordinates (bootstrap interval). Above
    1: more efficient than the baseline.
    """
    rng = np.random.default_rng(seed)
    cells = _by_cell(rows)
    out = []
    for (problem, name), runs in cells.items():
        base = cells.get((problem, baseline))
        if base is None or len(runs) < 2 or len(base) < 2:
            continue
        t, t0 = _column(runs, "cpu_time").mean(), _column(base, "cpu_time").mean()
        # efficiency = 1 / (var x time): the ratio var_base t_base / (var t)
        r_z, (lo_z, hi_z) = variance_ratio_interval(
            _column(runs, "log_z"), _column(base, "log_z"))
        r_b, (lo_b, hi_b) = _bootstrap_ratio(
            _bayes_points(runs), _bayes_points(base), n_boot, rng)
        scale = t0 / t
        out.append({
            "problem": problem, "cell": name, "runs": len(runs),
            "n_steps": _column(runs, "n_steps").mean(),
            "evaluations": _column(runs, "evaluations").mean(),
            "cpu_time": t, "mean_log_z": _column(runs, "log_z").mean(),
            "var_log_z": np.var(_column(runs, "log_z"), ddof=1),
            "eff_log_z": r_z * scale, "eff_log_z_lo": lo_z * scale,
            "eff_log_z_hi": hi_z * scale,
            "eff_bayes_point": r_b * scale, "eff_bayes_point_lo": lo_b * scale,
            "eff_bayes_point_hi": hi_b * scale})
    return out


def coverage_table(rows, level=0.95):
    """Coverage of the single-run intervals ``estimate +- z se`` over the
    runs of each (problem, cell).

    The reference value of log Z for a problem is the mean of its most
    precise cell (smallest standard error of the mean): a precision-weighted
    mean of all cells would assume they are all unbiased, and tempering
    cells of few particles fall short of log Z by more than their spread
    (Sonar, docs/benchmarks.md). That of the Bayes point is the mean over the runs of
    the cell. ``cover_log_z`` is the
    fraction of runs whose interval contains the reference,
    ``cover_bayes_point`` the same over all runs and coordinates; ``se_ratio``
    is the mean single-run ``log_z_se`` over the standard deviation of
    ``log Z`` across runs (1 for a calibrated error bar).
    """
    z = stats.norm.ppf(0.5 + level / 2.0)
    cells = _by_cell(rows)
    reference, best = {}, {}
    for (problem, _), runs in cells.items():
        lz = _column(runs, "log_z")
        if lz.size > 1 and np.var(lz, ddof=1) / lz.size < best.get(problem, np.inf):
            best[problem] = np.var(lz, ddof=1) / lz.size
            reference[problem] = lz.mean()
    out = []
    for (problem, name), runs in cells.items():
        if len(runs) < 2:
            continue
        lz, se = _column(runs, "log_z"), _column(runs, "log_z_se")
        bp, bp_se = _bayes_points(runs), _bayes_points(runs, "bp_se_")
        out.append({
            "problem": problem, "cell": name, "runs": len(runs),
            "cover_log_z": np.mean(np.abs(lz - reference[problem]) <= z * se),
            "se_ratio": se.mean() / np.std(lz, ddof=1),
            "cover_bayes_point": np.mean(np.abs(bp - bp.mean(axis=0))
                                         <= z * bp_se)})
    return out


def format_table(table, coverage=None):
    """The efficiency table (and coverage) as aligned text lines."""
    cover = {(c["problem"], c["cell"]): c for c in coverage or []}
    lines = [f"{'problem':10s} {'cell':24s} {'runs':>4s} {'steps':>5s} "
             f"{'cpu s':>6s} {'mean log Z':>10s} {'eff log Z [95% CI]':>22s} "
             f"{'eff bayes pt [95% CI]':>22s} {'cov Z':>5s} {'cov bp':>6s}"]
    for r in table:
        c = cover.get((r["problem"], r["cell"]), {})
        lines.append(
            f"{r['problem']:10s} {r['cell']:24s} {r['runs']:4d} "
            f"{r['n_steps']:5.1f} {r['cpu_time']:6.2f} {r['mean_log_z']:10.3f} "
            f"{r['eff_log_z']:6.2f} [{r['eff_log_z_lo']:5.2f}, "
            f"{r['eff_log_z_hi']:5.2f}] "
            f"{r['eff_bayes_point']:6.2f} [{r['eff_bayes_point_lo']:5.2f}, "
            f"{r['eff_bayes_point_hi']:5.2f}] "
            f"{c.get('cover_log_z', np.nan):5.2f} "
            f"{c.get('cover_bayes_point', np.nan):6.2f}")
    return "\n".join(lines)
