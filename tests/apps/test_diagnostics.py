"""Diagnostics: the repeated-runs machinery, the figures, and a smoke test of
every script in diagnostics/ (``--quick``)."""
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import matplotlib
import numpy as np
import pytest

from pac_particles.smc.models import AUCGibbsModel
from pac_particles.apps.plots import (plot_adjusted_variance, plot_boxplots_vs_k,
                                 plot_spike_slab_path, save_rows)
from lab.study import (RepeatedRuns, SpikeSlabPath,
                                 adjusted_variance, matched_sizes,
                                 repeated_runs, spike_slab_path)

from builders import two_d_problem

ROOT = Path(__file__).resolve().parents[2]


# ------------------------------------------------------- adjusted variance

def test_adjusted_variance_is_k_times_variance_over_runs_over_mean_posterior_variance():
    estimates = np.array([[[1.0, 0.0], [2.0, 0.0], [3.0, 3.0]],     # K = 1
                          [[2.0, 1.0], [2.0, 3.0], [2.0, 5.0]]])    # K = 4
    post_var = np.array([[[0.5, 1.0], [0.5, 2.0], [0.5, 3.0]],
                         [[1.0, 4.0], [1.0, 4.0], [1.0, 4.0]]])
    # by hand: K=1: var(1,2,3) = 1, / 0.5 -> 2; var(0,0,3) = 3, / 2 -> 1.5;
    #          K=4: var(2,2,2) = 0 -> 0; 4 * var(1,3,5) / 4 = 4 * 4 / 4 = 4
    expected = np.array([[2.0, 1.5], [0.0, 4.0]])
    np.testing.assert_allclose(adjusted_variance(estimates, post_var, [1, 4]),
                               expected)


def test_adjusted_variance_refuses_a_single_run_and_mismatched_shapes():
    one_run = np.ones((2, 1, 3))
    with pytest.raises(ValueError, match="2 runs"):
        adjusted_variance(one_run, one_run, [1, 2])
    with pytest.raises(ValueError, match="same shape"):
        adjusted_variance(np.ones((2, 3, 3)), np.ones((2, 3, 2)), [1, 2])


def _fake_runs(wastefree):
    shape = (2, 3)
    return RepeatedRuns(
        move="random_walk", wastefree=wastefree, len_chain=np.array([2, 5]),
        n_particles=np.array([10, 4]), seeds=np.arange(3),
        log_z=np.zeros(shape), mean=np.arange(12.0).reshape(2, 3, 2) ** 2,
        var=np.arange(1.0, 13.0).reshape(2, 3, 2), wall_time=np.ones(shape),
        cpu_time=np.ones(shape),
        evaluations=np.full(shape, 400.0), n_steps=np.full(shape, 4),
        evaluations_per_move=np.ones(shape))


def test_k_is_mcmc_steps_for_standard_smc_and_chain_length_for_waste_free():
    assert _fake_runs(wastefree=False).k.tolist() == [1, 4]
    assert _fake_runs(wastefree=True).k.tolist() == [2, 5]
    # population: M (standard), M * P (waste-free)
    assert _fake_runs(wastefree=True).population.tolist() == [20, 20]


def test_adjusted_variance_of_runs_charges_k_or_evaluations_per_particle():
    runs = _fake_runs(wastefree=False)
    ratio = runs.mean.var(axis=1, ddof=1) / runs.var.mean(axis=1)
    np.testing.assert_allclose(runs.adjusted_variance(), [[1], [4]] * ratio)
    # 400 evaluations per run / 10 and / 4 particles
    np.testing.assert_allclose(runs.adjusted_variance(cost="evaluations"),
                               [[40], [100]] * ratio)
    # the denominator taken at the largest K for every K
    common = runs.mean.var(axis=1, ddof=1) / runs.var[1].mean(axis=0)
    np.testing.assert_allclose(runs.adjusted_variance(variance="largest_k"),
                               [[1], [4]] * common)
    summary = runs.summary(names=["a", "b"])
    assert len(summary) == 4 and summary[1]["coefficient"] == "b"
    assert summary[3]["adjusted_variance"] == pytest.approx(4 * ratio[1, 1])
    assert len(runs.rows()) == 6 and runs.rows()[4]["k"] == 4


# ------------------------------------------------------- repeated runs

def test_repeated_runs_is_reproducible_with_the_same_seed():
    X, y = two_d_problem(n=100)
    model = AUCGibbsModel(X, y, lam=50.0)
    kwargs = dict(move_name="random_walk", len_chains=[2, 4], n_runs=2,
                  wastefree=False, n_particles=30, n_coefficients=2)
    first = repeated_runs(model, seed=5, **kwargs)
    again = repeated_runs(model, seed=5, **kwargs)
    other = repeated_runs(model, seed=7, **kwargs)
    assert first.log_z.shape == (2, 2) and first.mean.shape == (2, 2, 2)
    assert first.k.tolist() == [1, 3] and first.seeds.tolist() == [5, 6]
    for key in ("log_z", "mean", "var", "evaluations", "n_steps"):
        np.testing.assert_array_equal(getattr(first, key), getattr(again, key))
    assert not np.allclose(first.log_z, other.log_z)
    # run r uses seed + r at every grid point: different runs differ
    assert first.log_z[0, 0] != first.log_z[0, 1]


def test_repeated_runs_give_the_same_numbers_in_worker_processes():
    X, y = two_d_problem(n=100)
    model = AUCGibbsModel(X, y, lam=50.0)
    kwargs = dict(move_name="calibrated_slice", len_chains=[3], n_runs=2,
                  wastefree=True, n_particles=20, seed=1, numba_threads=1)
    serial = repeated_runs(model, n_jobs=1, **kwargs)
    parallel = repeated_runs(model, n_jobs=2, **kwargs)
    np.testing.assert_allclose(serial.log_z, parallel.log_z, rtol=1e-12)
    np.testing.assert_allclose(serial.mean, parallel.mean, rtol=1e-12)


def test_matched_sizes_pair_standard_and_waste_free_runs():
    ks, m, chains = matched_sizes([1, 2, 5], 100, wastefree=False)
    assert ks.tolist() == [1, 2, 5] and m.tolist() == [100] * 3
    assert chains.tolist() == [2, 3, 6]
    # waste-free: P = K >= 2; M P ~ N particles, or M (P - 1) = N K MCMC steps
    ks, m, chains = matched_sizes([1, 2, 5], 100, wastefree=True)
    assert ks.tolist() == [2, 5] and chains.tolist() == [2, 5]
    assert m.tolist() == [50, 20]
    ks, m, chains = matched_sizes([2, 5], 100, wastefree=True, match="budget")
    assert (m * (chains - 1)).tolist() == [200, 500]
    with pytest.raises(ValueError, match="match"):
        matched_sizes([2], 100, wastefree=True, match="time")


# ------------------------------------------------------- spike-and-slab path

def test_spike_slab_path_gives_means_and_inclusion_probabilities_per_v0():
    X, y = two_d_problem(n=100)
    path = spike_slab_path(X, y, lam=50.0, v0_grid=[1e-3, 1e-1], p=0.5,
                           n_particles=30, len_chain=3, seed=0)
    assert path.means.shape == (2, 2) and path.inclusion_probs.shape == (2, 2)
    assert np.all((path.inclusion_probs >= 0) & (path.inclusion_probs <= 1))
    # the first feature carries the signal (coefficient 1 vs 0.5)
    assert path.inclusion_probs[0, 0] > 0.5
    assert len(path.rows(["a", "b"])) == 4 and path.rows()[0]["method"] == "smc"


def test_spike_slab_path_collects_fitted_approximations():
    fits = [SimpleNamespace(mean=np.array([1.0, 0.0]), log_z=-3.0,
                            inclusion_probs=np.array([0.9, 0.1]))] * 3
    path = SpikeSlabPath.from_fits([0.0, 1e-3, 1e-1], fits, p=0.5, v1=1.0)
    assert path.method == "ep" and path.means.shape == (3, 2)
    assert {row["method"] for row in path.rows()} == {"ep"}


# ------------------------------------------------------- figures

def test_figures_return_axes(tmp_path):
    ax = plot_adjusted_variance([1, 5, 10], np.random.rand(3, 4) + 0.1,
                                names=list("abcd"))
    assert isinstance(ax, matplotlib.axes.Axes) and len(ax.get_lines()) == 4
    values = np.random.rand(2, 5)
    values[1, 0] = np.nan  # dropped
    ax = plot_boxplots_vs_k({"standard": ([1, 2], values),
                             "waste-free": ([2], values[:1])}, ylabel="log Z")
    assert isinstance(ax, matplotlib.axes.Axes)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1", "2"]
    axes = plot_spike_slab_path(
        [1e-4, 1e-2], np.random.rand(2, 3), np.random.rand(2, 3),
        ep=([0.0, 1e-4, 1e-2], np.random.rand(3, 3), np.random.rand(3, 3)))
    assert len(axes) == 2 and all(isinstance(a, matplotlib.axes.Axes) for a in axes)
    path = save_rows([{"a": 1}, {"a": 2, "b": 3}], str(tmp_path / "x" / "t.csv"))
    assert open(path).read().splitlines() == ["a,b", "1,", "2,3"]


# ------------------------------------------------------- scripts (smoke)

SCRIPTS = {
    # script: (extra arguments, files written into --out)
    "adjusted_variance.py": ([], ["adjusted_variance.png", "adjusted_variance.csv",
                                  "adjusted_variance_runs.csv"]),
    "marginal_likelihood_boxplots.py": ([], ["marginal_likelihood_boxplots.png",
                                             "marginal_likelihood_boxplots.csv"]),
    "spike_slab_path.py": (["--n-flips", "3"], ["spike_slab_path.png",
                                                 "spike_slab_path.csv"]),
    # compare_moves writes a table only (no figure); one dataset keeps it short
    "compare_moves.py": (["--datasets", "pima"], ["compare_moves.csv"]),
    "roc_curves.py": ([], ["roc_curves.png", "roc_curves.csv"]),
    # power EP at two fractions beside plain EP ([RACL14, Fig. 4])
    "ep_vs_smc.py": (["--alpha", "1", "0.5"], ["ep_vs_smc.png", "ep_vs_smc.csv"]),
    "kgs_boundaries.py": ([], ["kgs_boundaries.png"]),
    "vb_convexity.py": ([], ["vb_convexity.png"]),
    "kgs_figure1.py": ([], ["kgs_figure1.png"]),
    "kgs_label_noise.py": ([], ["kgs_label_noise.png", "kgs_label_noise.csv",
                                "kgs_label_noise_summary.csv"]),
    "kgs_breast_cancer.py": ([], ["kgs_breast_cancer.png", "kgs_breast_cancer.csv",
                                  "kgs_breast_cancer_reject.csv"]),
    "kgs_active_learning.py": (["--ranking"], ["kgs_active_learning.png",
                                               "kgs_active_learning.csv"]),
}


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_diagnostics_script_runs_quick_and_writes_its_files(script, tmp_path):
    extra, outputs = SCRIPTS[script]
    env = dict(os.environ, MPLBACKEND="Agg")
    proc = subprocess.run(
        [sys.executable, str(ROOT / "diagnostics" / script), "--quick",
         "--out", str(tmp_path)] + extra,
        capture_output=True, text=True, cwd=str(tmp_path), env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    for name in outputs:
        assert (tmp_path / name).is_file(), f"{script} did not write {name}"
        assert (tmp_path / name).stat().st_size > 0, f"{name} is empty"


# ------------------------------------------------------- progress and new figures

def test_repeated_runs_report_each_run_when_asked(capsys):
    X, y = two_d_problem(n=60)
    kwargs = dict(move_name="random_walk", len_chains=[2, 3], n_runs=2,
                  wastefree=False, n_particles=20, n_coefficients=1, seed=0)
    runs = repeated_runs(AUCGibbsModel(X, y, lam=30.0), verbose="lines", **kwargs)
    lines = capsys.readouterr().err.strip().splitlines()
    assert [line.split(" (")[0] for line in lines] == [
        f"[pac_particles] run {k}/4 done" for k in range(1, 5)]
    quiet = repeated_runs(AUCGibbsModel(X, y, lam=30.0), **kwargs)
    np.testing.assert_array_equal(runs.log_z, quiet.log_z)
    assert capsys.readouterr().err == ""


def test_marginal_plot_overlays_one_density_per_gaussian():
    """A dict of Gaussians (power EP at several alpha) gives one curve each,
    and each curve is the normal density of its (mean, var)."""
    from scipy.stats import norm
    from pac_particles.apps.plots import plot_marginals
    theta = np.random.default_rng(0).normal(size=(400, 2))
    gaussians = {"a": (np.array([0.0, 1.0]), np.array([1.0, 0.5])),
                 "b": (np.array([0.2, 0.0]), np.array([2.0, 1.0]))}
    axes = plot_marginals(theta, np.full(400, 1 / 400), gaussians=gaussians)
    for j, ax in enumerate(axes):
        assert [line.get_label() for line in ax.get_lines()] == ["a", "b"]
        for line, (mean, var) in zip(ax.get_lines(), gaussians.values()):
            x, density = line.get_data()
            np.testing.assert_allclose(
                density, norm.pdf(x, mean[j], np.sqrt(var[j])), rtol=1e-12)


def test_direction_plot_sorts_features_by_the_absolute_posterior_mean():
    from pac_particles.apps.plots import plot_directions
    from pac_particles.core.weighted_particles import weighted_quantiles
    rng = np.random.default_rng(0)
    theta = rng.normal([0.2, -3.0, 1.0], 0.3, size=(500, 3))
    directions = theta / np.linalg.norm(theta, axis=1, keepdims=True)
    weights = rng.uniform(size=500)
    weights /= weights.sum()
    ax = plot_directions(directions, weights, names=["a", "b", "c"])
    # bottom to top: the largest |mean| is drawn on the top row
    assert [t.get_text() for t in ax.get_yticklabels()] == ["a", "c", "b"]
    assert "||theta||" in ax.get_xlabel()
    # weighted quantiles against a large equally weighted resample
    draws = directions[rng.choice(500, size=200000, p=weights), 1]
    np.testing.assert_allclose(
        weighted_quantiles(directions[:, 1], weights, [0.025, 0.5, 0.975]),
        np.quantile(draws, [0.025, 0.5, 0.975]), atol=0.01)


def test_tempering_path_plot_shows_log_z_and_the_cv_curve():
    from pac_particles.apps.plots import plot_tempering_path
    from pac_particles.sklearn.selection import LamCVResult
    gammas, log_z = np.array([0.0, 1.0, 10.0, 100.0]), np.array([0, -1, -5, -20.0])
    ax = plot_tempering_path(gammas, log_z)
    np.testing.assert_array_equal(ax.get_lines()[0].get_xdata(), gammas[1:])
    grid = np.geomspace(0.1, 100.0, 5)
    cv = LamCVResult(grid=grid, fold_auc=np.array([[0.6, 0.7, 0.8, 0.75, 0.7],
                                                   [0.62, 0.7, 0.78, 0.7, 0.7]]),
                     best_lam=float(grid[2]))
    ax = plot_tempering_path(gammas, log_z, cv=cv)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels[0] == "log Z (SMC)" and labels[-1].startswith("chosen lam")


def _checkout_on_path_before_lab(path):
    """Whether ``path`` puts the checkout on ``sys.path`` before its first
    ``lab`` import (lab/ is outside the wheel: without it a script run from
    an installed package fails with ModuleNotFoundError)."""
    import ast
    for node in ast.parse(path.read_text()).body:
        text = ast.unparse(node)
        if "sys.path.insert" in text:
            return True
        if isinstance(node, (ast.Import, ast.ImportFrom)) and (
                text.startswith("from lab") or text.startswith("import lab")):
            return False
    return True


def test_scripts_that_use_the_lab_find_it_from_a_checkout(tmp_path):
    scripts = sorted((ROOT / "scripts").glob("*.py")) + sorted(
        (ROOT / "diagnostics").glob("*.py"))
    missing = [p.name for p in scripts if not _checkout_on_path_before_lab(p)]
    assert not missing, f"import lab before putting the checkout on sys.path: {missing}"
    # the check sees a script that imports the lab first
    bad = tmp_path / "bad.py"
    bad.write_text("import sys\nfrom lab.study import speed\n")
    assert not _checkout_on_path_before_lab(bad)
