"""Single-run error bars of run_smc against exact quadrature, and the
efficiency study's bookkeeping (ratios, intervals, resumable CSV)."""
import numpy as np
import pytest
from builders import two_d_problem
from lab.reference.quadrature import AngularQuadrature

from pac_particles.smc.models import AUCGibbsModel
from pac_particles.smc.posterior import run_smc
from lab.study.smc_efficiency import (GAUSSIAN_CELLS, Cell,
                                                coverage_table,
                                                default_cells,
                                                efficiency_runs,
                                                efficiency_table,
                                                variance_ratio_interval)
from pac_particles.core.checks import InputError


def test_single_run_error_bars_cover_the_exact_values():
    """Over 40 independent small waste-free runs in d = 2, log Z +- 1.96 se
    and bayes_point +- 1.96 se cover the quadrature values about 95% of the
    time, and the single-run se matches the spread over runs."""
    X, y = two_d_problem(n=80, seed=5)
    lam = float(len(y))
    exact = AngularQuadrature(X, y, lam)
    model = AUCGibbsModel(X, y, lam=lam, standardize=False)
    runs = [run_smc(model, n_particles=25, len_chain=8, seed=s)
            for s in range(40)]
    log_z = np.array([p.log_z for p in runs])
    log_z_se = np.array([p.log_z_se for p in runs])
    bp = np.array([p.bayes_point for p in runs])
    bp_se = np.array([p.bayes_point_se for p in runs])
    assert np.mean(np.abs(log_z - exact.log_z) <= 1.96 * log_z_se) >= 0.85
    assert np.mean(np.abs(bp - exact.mean_u) <= 1.96 * bp_se) >= 0.85
    # calibrated, not merely wide: the se is the spread over runs
    assert 0.6 < log_z_se.mean() / log_z.std(ddof=1) < 1.6
    spread = bp.std(axis=0, ddof=1)
    assert np.all((0.6 < bp_se.mean(axis=0) / spread)
                  & (bp_se.mean(axis=0) / spread < 1.6))


def test_standard_smc_has_no_single_run_error_bars():
    # the tempering estimate alone: a reliable importance estimate would
    # bring its own log_z_se (whether 50 draws are reliable is chance)
    X, y = two_d_problem(n=40)
    post = run_smc(AUCGibbsModel(X, y, lam=40.0), n_particles=50, len_chain=3,
                   wastefree=False, seed=0, evidence="tempering")
    assert post.log_z_se is None and post.mean_se is None
    assert post.bayes_point_se is None


def test_variance_ratio_interval_covers_the_true_ratio_95_percent():
    """Monte Carlo: the F interval of var(b) / var(a) contains the true
    ratio 4 in about 95% of 2000 pairs of normal samples of 21."""
    rng = np.random.default_rng(0)
    hits = []
    for _ in range(2000):
        ratio, (lo, hi) = variance_ratio_interval(rng.normal(size=21),
                                                  2.0 * rng.normal(size=21))
        assert lo < ratio < hi
        hits.append(lo < 4.0 < hi)
    assert 0.93 < np.mean(hits) < 0.97


def test_efficiency_runs_resume_from_their_csv_and_compare_with_the_baseline(tmp_path):
    X, y = two_d_problem(n=40)
    models = {"toy": AUCGibbsModel(X, y, lam=40.0)}
    cells = [Cell("default", 10, 4), Cell("ESSrmin=0.8", 10, 4, 0.8),
             Cell("n_slices=2", 10, 4, 0.5, {"n_slices": 2})]
    path = str(tmp_path / "runs.csv")
    lines = []
    first = efficiency_runs(models, cells, n_runs=2, csv_path=path,
                            log=lines.append)
    assert len(first) == len(lines) == 6
    lines.clear()
    rows = efficiency_runs(models, cells, n_runs=3, csv_path=path,
                           log=lines.append)
    assert len(rows) == 9 and len(lines) == 3  # only the third seed ran
    # the rows read back are those written, and runs are reproducible
    again = efficiency_runs(models, cells[:1], n_runs=2, seed=0)
    assert np.isclose(float(rows[0]["log_z"]), again[0]["log_z"])
    table = {r["cell"]: r for r in efficiency_table(rows)}
    assert table["default"]["eff_log_z"] == 1.0
    assert table["default"]["eff_bayes_point"] == 1.0
    for r in table.values():
        assert r["eff_log_z_lo"] < r["eff_log_z"] < r["eff_log_z_hi"]
    cover = coverage_table(rows)
    assert {c["cell"] for c in cover} == set(table)
    assert all(0.0 <= c["cover_log_z"] <= 1.0 for c in cover)


def _small_pima():
    from pac_particles.problem.datasets import load_dataset
    X, y, _ = load_dataset("pima")
    X, y = X[:60], y[:60]
    return AUCGibbsModel(X, y, lam=float(len(y)))


def test_default_cells_start_the_grid_from_the_prior_and_add_the_gaussian_cells():
    for gp in (False, True):
        cells = {c.name: c for c in default_cells(20, 4, gp=gp)}
        assert set(GAUSSIAN_CELLS) <= set(cells)
        assert cells["EP + importance sampling"].start == "importance"
        assert cells["new default"].start == "auto" and cells["new default"].scout
        assert (cells["former default"].start == "auto"
                and not cells["former default"].scout)
        assert all(c.start == "prior" for name, c in cells.items()
                   if name not in GAUSSIAN_CELLS)
        assert {"default", "tempering", "ESSrmin=0.8"} <= set(cells)
        assert ("unshrunk tempering" in cells) == (not gp)


def test_the_gaussian_cells_and_a_prior_cell_run_through_efficiency_runs(tmp_path):
    """On 60 rows of Pima: importance sampling alone is one step of M P
    draws with EP's proposal, the new default starts from the Gaussian
    approximation, the prior cell tempers from the prior; every row has the
    same columns and a finite log Z."""
    model = _small_pima()
    cells = [Cell("default", 10, 4, start="prior"),
             Cell("EP + importance sampling", 10, 4, start="importance"),
             Cell("new default", 10, 4, start="auto")]
    path = str(tmp_path / "runs.csv")
    rows = efficiency_runs({"pima60": model}, cells, n_runs=2, csv_path=path)
    assert [r["cell"] for r in rows] == [c.name for c in cells] * 2
    assert len({tuple(r) for r in rows}) == 1      # the same columns
    by_cell = {}
    for r in rows:
        by_cell.setdefault(r["cell"], []).append(r)
        assert np.isfinite(r["log_z"]) and np.isfinite(r["log_z_se"])
        assert np.isfinite(r["cpu_time"]) and np.isfinite(r["wall_time"])
        assert r["evaluations"] > 0
    for r in by_cell["default"]:
        assert r["start"] == "prior" and r["n_steps"] > 1
    for r in by_cell["EP + importance sampling"]:
        assert r["start"] == "importance" and r["n_steps"] == 1
        assert r["proposal"] == "ep" and np.isfinite(r["pareto_k"])
        assert r["evaluations"] == 40          # M P draws, nothing else
    for r in by_cell["new default"]:
        assert r["start"] in ("importance", "prior")
    # the tables take the new cells, against either baseline
    for base in ("default", "EP + importance sampling"):
        table = {r["cell"]: r for r in efficiency_table(rows, baseline=base)}
        assert set(table) == {c.name for c in cells}
        assert table[base]["eff_log_z"] == 1.0


def test_a_cell_with_move_options_runs_from_the_prior_only():
    with pytest.raises(InputError, match="start='prior'"):
        Cell("bad", 10, 4, move={"n_slices": 2}, start="auto")
    with pytest.raises(InputError, match="start"):
        Cell("bad", 10, 4, start="bridge")
    with pytest.raises(InputError, match="evidence"):
        Cell("bad", 10, 4, start="importance", evidence="tempering")
    # a cell that slipped past the validation is refused by the run itself
    cell = Cell("bad", 10, 4, move={"n_slices": 2})
    object.__setattr__(cell, "start", "importance")
    with pytest.raises(InputError, match="start='prior'"):
        efficiency_runs({"pima60": _small_pima()}, [cell], n_runs=2)


@pytest.mark.parametrize("min_groups", [3, 20])
def test_lineage_variance_groups_the_chains_by_their_ancestor_lag_steps_back(
        min_groups):
    """LineageVariance against a direct computation: each chain's share of
    the relative weight error; for each step s, the shares of steps
    a = max(0, s - lag) .. s summed by ancestor at step a, giving step s's
    variance and its covariances with the steps before it; and the groups
    of the current chains for the means: their ancestors at the oldest
    step where min(min_groups, M) distinct ones remain, or lag steps back
    where that is older."""
    from types import SimpleNamespace
    from pac_particles.smc.single_run_variance import LineageVariance
    rng = np.random.default_rng(3)
    m, p, steps, lag = 6, 4, 7, 2
    collector = LineageVariance(lag=lag, min_groups=min_groups)
    shares, parents, expected, depths = [], [], 0.0, set()
    for t in range(steps):
        lw = rng.normal(size=m * p)
        # into the last population, few parents: the genealogy narrows
        ancestors = rng.integers(0, m * p // 2, size=m)
        smc = SimpleNamespace(N=m, t=t, wgts=SimpleNamespace(lw=lw),
                              rs_flag=t > 0, A=ancestors)
        var, groups = collector.fetch(smc)
        w = np.exp(lw).reshape(p, m)           # particle i is chain i % m
        shares.append([(w[:, j] / w.mean() - 1.0).sum() / w.size
                       for j in range(m)])
        parents.append([a % m for a in ancestors])
        start = max(0, t - lag)

        def ancestor(step, j, back_to):         # chain j of step, at back_to
            for r in range(step, back_to, -1):
                j = parents[r][j]
            return j

        totals = np.zeros((t - start + 1, m))
        for step in range(start, t + 1):
            for j in range(m):
                totals[step - start, ancestor(step, j, start)] += shares[step][j]
        expected += totals[-1] @ totals[-1] + 2 * sum(
            totals[-1] @ row for row in totals[:-1])
        assert var == pytest.approx(expected, rel=1e-12)
        oldest = min(s for s in range(t + 1) if len(
            {ancestor(t, j, s) for j in range(m)}) >= min(min_groups, m))
        oldest = min(oldest, start)
        depths.add(t - oldest)
        assert list(groups) == [ancestor(t, j, oldest) for j in range(m)]
    # the case where the genealogy is followed beyond the lag is exercised
    assert max(depths) > lag if min_groups == 3 else max(depths) == lag


def test_lineage_mean_variance_is_the_jackknife_over_the_ancestor_groups():
    """The delete-a-group jackknife, by deleting each group's rows and
    recomputing the weighted mean: sum_g (1 - w_g) (mean_-g - mean)^2."""
    from pac_particles.smc.single_run_variance import lineage_mean_variance
    rng = np.random.default_rng(0)
    m, p = 5, 3
    values = rng.normal(size=(m * p, 2))
    weights = rng.random(m * p)
    groups = np.array([0, 0, 2, 2, 4])
    mean = weights @ values / weights.sum()
    expected = np.zeros(2)
    for g in set(groups):
        rows = np.array([i for i in range(m * p) if groups[i % m] == g])
        rest = np.setdiff1d(np.arange(m * p), rows)
        left_out = weights[rest] @ values[rest] / weights[rest].sum()
        expected += (weights[rest].sum() / weights.sum()
                     * (left_out - mean) ** 2)
    np.testing.assert_allclose(lineage_mean_variance(values, weights, groups),
                               expected, rtol=1e-12)
    # one group holds everything: nothing to compare it with, variance 0
    np.testing.assert_allclose(
        lineage_mean_variance(values, weights, np.zeros(m, dtype=int)), 0.0,
        atol=1e-30)


def test_single_run_errors_are_the_larger_of_the_chain_and_lineage_estimates():
    """On a particles.SMC run: the means' chain estimate is particles'
    ``var_wf / N``, and every error bar is the larger of it (``Var_logLt``
    for log Z) and the lineage estimate."""
    import particles
    from particles import smc_samplers as ssp
    from pac_particles.smc.tempering import RobustAdaptiveTempering
    from pac_particles.smc.moves import default_move
    from pac_particles.problem.priors import param_array
    from pac_particles.smc.single_run_variance import (
        LineageVariance, chain_mean_variance, lineage_mean_variance,
        single_run_errors)
    X, y = two_d_problem(n=60, seed=2)
    model = AUCGibbsModel(X, y, lam=60.0)
    np.random.seed(1)
    fk = RobustAdaptiveTempering(model, wastefree=True, len_chain=4,
                                 move=ssp.MCMCSequenceWF(
                                     mcmc=default_move(model), len_chain=4))
    smc = particles.SMC(fk=fk, N=20, ESSrmin=1.0, verbose=False,
                        collect=[ssp.Var_logLt(), LineageVariance()])
    smc.run()
    theta = np.array(param_array(smc.X.theta), dtype=float)
    n = theta.shape[0]
    chain = chain_mean_variance(theta, smc.W, smc.N)
    np.testing.assert_allclose(chain, [ssp.var_wf(smc, lambda x, j=j:
                                                  theta[:, j]) / n
                                       for j in range(2)], rtol=1e-10)
    log_z_se, mean_se, _ = single_run_errors(smc, theta)
    lineage = smc.summaries.lineage[-1]
    assert log_z_se == pytest.approx(np.sqrt(max(
        smc.summaries.var_logLt[-1] / n, lineage[0])))
    np.testing.assert_allclose(mean_se ** 2, np.maximum(
        chain, lineage_mean_variance(theta, smc.W, lineage[1])), rtol=1e-12)


def test_run_smc_keeps_a_users_lineage_collector_and_its_lag():
    from pac_particles.smc.single_run_variance import LineageVariance
    X, y = two_d_problem(n=60, seed=2)
    post = run_smc(AUCGibbsModel(X, y, lam=60.0), n_particles=20, len_chain=4,
                   seed=1, collect=[LineageVariance(lag=1)])
    mine = [c for c in post.summaries._collectors
            if isinstance(c, LineageVariance)]
    assert [c.lag for c in mine] == [1]
    default = run_smc(AUCGibbsModel(X, y, lam=60.0), n_particles=20,
                      len_chain=4, seed=1, start="prior")
    assert default.log_z == pytest.approx(post.log_z, rel=1e-12)  # same run
    assert (post.summaries.lineage[-1][0]
            != default.summaries.lineage[-1][0])   # another lag


def test_lineage_variance_is_nan_after_a_step_without_resampling():
    """The lineage estimate needs a resampling at every step; after one
    without, it is nan and log_z_se falls back on the per-step estimate."""
    from types import SimpleNamespace
    from pac_particles.smc.single_run_variance import (LineageVariance,
                                                   log_z_standard_error)
    rng = np.random.default_rng(0)
    collector = LineageVariance()
    for t, resampled in enumerate([False, True, False, True]):
        smc = SimpleNamespace(N=4, t=t, rs_flag=resampled,
                              wgts=SimpleNamespace(lw=rng.normal(size=12)),
                              A=rng.integers(0, 12, size=4))
        var, _ = collector.fetch(smc)
        assert np.isnan(var) == (t >= 2)
    summaries = SimpleNamespace(var_logLt=[0.4], lineage=[(np.nan, None)])
    assert log_z_standard_error(summaries, 10, -1) == pytest.approx(0.2)


@pytest.mark.parametrize("args, message", [
    ((np.ones((6, 2)), np.ones(5) / 5, np.arange(3)), "rows"),
    ((np.ones((6, 2)), np.ones(6) / 6, np.arange(4)), "rows"),
    ((np.full((6, 2), np.nan), np.ones(6) / 6, np.arange(3)), "NaN"),
    ((np.ones(6), np.ones(6) / 6, np.arange(3)), "2-D"),
    ((np.ones((6, 2)), np.ones(6) / 6, np.array([0, 1, 5])), "groups"),
])
def test_chain_variances_name_bad_input(args, message):
    from pac_particles.smc.single_run_variance import (chain_mean_variance,
                                                   lineage_mean_variance)
    with pytest.raises(ValueError, match=message):
        lineage_mean_variance(*args)
    if message != "groups":
        with pytest.raises(ValueError, match=message):
            chain_mean_variance(args[0], args[1], args[2].size)
