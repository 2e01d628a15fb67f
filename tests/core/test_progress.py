import io

import numpy as np
import pytest

from builders import noisy_linear
from pac_particles.core.checks import InputError
from pac_particles.smc.models import AUCGibbsModel
from pac_particles.smc.posterior import run_smc
from pac_particles.core.progress import Progress, progress_mode
from pac_particles.sklearn.selection import (RefitScorer, cross_validate_lam, lam_grid,
                                     loo_lambda)
from pac_particles.approx.vb import GaussianVB


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_verbose_true_is_a_bar_on_a_terminal_and_lines_elsewhere():
    assert progress_mode(True, _Terminal()) == "bar"
    assert progress_mode(True, io.StringIO()) == "lines"
    assert progress_mode("auto", io.StringIO()) == "lines"
    assert progress_mode(False) == progress_mode(None) == "off"
    assert progress_mode("bar", io.StringIO()) == "bar"  # forced
    with pytest.raises(InputError, match="verbose must be one of"):
        progress_mode("loud")


@pytest.fixture(scope="module")
def model():
    X, y = noisy_linear(100, [1.0, -1.0], seed=0, d=3)
    return AUCGibbsModel(X, y, lam=100.0)


def test_library_calls_are_silent_by_default(model, capsys):
    run_smc(model, n_particles=20, len_chain=3, seed=0)
    captured = capsys.readouterr()
    assert captured.err == "" and captured.out == ""


def test_lines_give_one_line_per_tempering_step_on_stderr(model, capsys):
    post = run_smc(model, n_particles=20, len_chain=3, seed=0, verbose=True)
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert captured.out == ""
    assert len(lines) == post.n_steps
    assert all(line.startswith("[pac_particles] step") for line in lines)
    assert f"log Z {post.log_z_tempering:.3f}" in lines[-1]


def test_a_forced_bar_runs_the_exponent_to_one(model, capsys):
    post = run_smc(model, n_particles=20, len_chain=3, seed=0, verbose="bar")
    err = capsys.readouterr().err
    assert "SMC exponent" in err and "100%" in err and "1/1" in err
    assert f"step {post.n_steps}," in err
    assert "[pac_particles]" not in err


def test_the_bar_advances_by_counts_and_stops_at_the_total(capsys):
    with Progress("bar", total=3, desc="folds", unit="fold") as progress:
        for _ in range(4):
            progress.update(advance=1)
        assert progress._bar.n == 3
    assert "3/3" in capsys.readouterr().err


def test_cross_validation_reports_each_fold(capsys):
    X, y = noisy_linear(90, [1.0, -1.0], seed=1, d=2)
    grid = lam_grid(90.0, grid_size=3)
    scorer = RefitScorer(lambda X, y, lam: GaussianVB(X, y, lam=lam))
    result = cross_validate_lam(X, y, grid, scorer, n_folds=3, seed=0,
                                verbose="lines")
    err = capsys.readouterr().err
    assert [line.split(" (")[0] for line in err.strip().splitlines()] == [
        f"[pac_particles] fold {k}/3 done" for k in (1, 2, 3)]
    silent = cross_validate_lam(X, y, grid, scorer, n_folds=3, seed=0)
    np.testing.assert_array_equal(result.fold_auc, silent.fold_auc)
    loo_lambda(grid, lambda lam: 0.5, verbose="lines")
    assert capsys.readouterr().err.count("lam value") == 3
