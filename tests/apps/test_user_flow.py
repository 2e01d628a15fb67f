"""What a user reads and runs: the command-line flow fit -> save -> predict
--id -> classify -> save -> predict, outputs that name the method that ran
and how ``lam`` was chosen, ``cv``'s cross-validated AUC beside the logistic
regression's, the certificate read beside the test figure, and figures with
titles, axis labels and legends that hide no data. Small CSVs, few
particles: each command runs in a second or two."""

import csv
import json

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from builders import noisy_linear
from pac_particles.apps import cli
from pac_particles.apps.cli import (classify_command, demo_command,
                                    fit_command, main)
from pac_particles.apps.cli.fit_command import (certificate_reading,
                                                cv_auc_at, rows_to_inform)
from pac_particles.bounds.certificates import kl_bound

SMALL = ["--n-particles", "30", "--len-chain", "3", "--quiet"]


def _csv(path, n=120, seed=0):
    """Three features, string labels, and a key column whose leading zeros
    a numeric reading would lose."""
    X, y = noisy_linear(n, [1.0, -1.0], seed, d=3)
    frame = pd.DataFrame(X, columns=["f1", "f2", "f3"])
    frame.insert(0, "customer_id", [f"{k:05d}" for k in range(n)])
    frame["churned"] = np.where(y == 1, "yes", "no")
    frame.to_csv(path, index=False)
    return str(path), frame


def _rows(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


# ------------------------------------------------------------ the whole flow

def test_fit_save_predict_id_classify_save_predict(tmp_path, capsys):
    data, frame = _csv(tmp_path / "d.csv")
    read = ["--target", "churned", "--drop", "customer_id",
            "--positive-label", "yes"]
    main(["fit", data, *read, "--lam", "50", "--save-model",
          str(tmp_path / "score.json"), "--out", str(tmp_path / "fit"),
          *SMALL])
    main(["predict", str(tmp_path / "score.json"), data, "--id",
          "customer_id", "--out", str(tmp_path / "scores.csv")])
    main(["classify", data, *read, "--method", "vb", "--lam", "50",
          "--save-model", str(tmp_path / "classifier.json"), "--out",
          str(tmp_path / "classify"), *SMALL])
    main(["predict", str(tmp_path / "classifier.json"), data, "--id",
          "customer_id,churned", "--out", str(tmp_path / "labels.csv")])
    out = capsys.readouterr().out
    # the same headline style: the command, the file, the method, lam
    for command in ("fit d.csv:", "classify d.csv:", "predict d.csv:"):
        assert command in out
    assert "method vb, hinge loss; lam 50, given (--lam)" in out
    scores, labels = _rows(tmp_path / "scores.csv"), _rows(
        tmp_path / "labels.csv")
    # the key comes back verbatim, in order, first
    assert [r["customer_id"] for r in scores] == list(frame.customer_id)
    assert list(scores[0])[:2] == ["customer_id", "row"]
    assert list(labels[0]) == ["customer_id", "churned", "row", "score",
                               "label", "probability_yes"]
    assert [r["churned"] for r in labels] == list(frame.churned)
    # the classifier's file predicts as the classifier does
    summary = json.loads((tmp_path / "classify" / "summary.json").read_text())
    assert summary["model_file"] == str(tmp_path / "classifier.json")
    accuracy = np.mean([r["label"] == r["churned"] for r in labels])
    assert accuracy > 0.7


def test_predict_names_an_id_column_the_file_lacks(tmp_path, capsys):
    data, _ = _csv(tmp_path / "d.csv", n=60)
    main(["fit", data, "--target", "churned", "--drop", "customer_id",
          "--method", "ep", "--lam", "30", "--test-size", "0",
          "--save-model", str(tmp_path / "m.json"), "--out", str(tmp_path),
          *SMALL])
    capsys.readouterr()
    with pytest.raises(SystemExit) as info:
        main(["predict", str(tmp_path / "m.json"), data, "--id", "account",
              "--out", str(tmp_path / "p.csv")])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "no column 'account' for --id" in err and "customer_id" in err


# ------------------------------------------------- the method that ran, lam

def test_outputs_name_the_method_auto_chose(tmp_path, capsys, monkeypatch):
    data, _ = _csv(tmp_path / "d.csv")
    legends = []
    real = fit_command.plot_roc

    def recording(y, scores, **kwargs):
        legends.extend(scores)
        return real(y, scores, **kwargs)
    monkeypatch.setattr(fit_command, "plot_roc", recording)
    main(["fit", data, "--target", "churned", "--drop", "customer_id",
          "--lam", "40", "--out", str(tmp_path), *SMALL])
    summary = json.loads((tmp_path / "summary.json").read_text())
    # auto resolves to SMC at this size: every output says smc
    assert summary["method"] == "smc" and summary["method_requested"] == "auto"
    assert summary["lam_rule"] == "given (--lam)"
    assert legends[0] == "PAC-Bayes smc"
    assert "method smc (chosen by --method auto); lam 40, given (--lam)" in (
        capsys.readouterr().out)


# ------------------------------------------------------------ cv's AUC

def test_cv_reports_the_cv_auc_at_the_chosen_lam_beside_logistic(tmp_path,
                                                                  capsys):
    from pac_particles.sklearn.baselines import fit_logistic
    from pac_particles.sklearn.selection.folds import stratified_folds
    data, frame = _csv(tmp_path / "d.csv")
    main(["cv", data, "--target", "churned", "--drop", "customer_id",
          "--lam-max", "300", "--folds", "3", "--seed", "2", "--out",
          str(tmp_path), *SMALL])
    s = json.loads((tmp_path / "summary.json").read_text())
    # the spread is over folds: recomputed from the per-fold table
    table = pd.read_csv(tmp_path / "cv_curve.csv")
    at = [np.interp(np.log(s["lam_certified"]), np.log(table.gamma),
                    table[f"fold{k + 1}"]) for k in range(3)]
    assert s["cv_auc_at_lam_certified"] == pytest.approx(np.mean(at))
    assert s["cv_auc_sd_at_lam_certified"] == pytest.approx(np.std(at, ddof=1))
    # the baseline on the same folds, scored by sklearn.metrics
    X = frame[["f1", "f2", "f3"]].to_numpy()
    y = (frame.churned == "yes").to_numpy().astype(int)
    aucs = [roc_auc_score(y[va], fit_logistic(X[tr], y[tr], random_state=2)
                          .decision_function(X[va]))
            for tr, va in stratified_folds(y == 1, 3, 2)]
    assert s["cv_auc_logistic"] == pytest.approx(np.mean(aucs))
    assert s["cv_auc_sd_logistic"] == pytest.approx(np.std(aucs, ddof=1))
    out = capsys.readouterr().out
    assert "logistic regression" in out and "mean +- sd over folds" in out


def test_cv_auc_at_interpolates_each_fold_then_averages():
    from pac_particles.sklearn.selection.folds import LamCVResult
    cv = LamCVResult(grid=np.array([1.0, 100.0]),
                     fold_auc=np.array([[0.6, 0.8], [0.7, 0.7], [0.5, 0.9]]),
                     best_lam=100.0)
    mean, sd = cv_auc_at(cv, 10.0)         # halfway in log lam
    assert mean == pytest.approx(0.7)
    assert sd == pytest.approx(np.std([0.7, 0.7, 0.7], ddof=1))
    assert cv_auc_at(cv, 100.0) == pytest.approx((0.8, 0.1))


# ------------------------------------------------- reading the certificate

def test_rows_to_inform_is_the_least_m_that_certifies():
    cert = kl_bound(0.2, kl=40.0, m=30, trivial=0.5)
    assert cert.vacuous
    needed = rows_to_inform(cert)
    assert kl_bound(0.2, 40.0, needed, trivial=0.5).bound < 0.5
    # one row less does not: the advice is not inflated
    assert kl_bound(0.2, 40.0, needed - 1, trivial=0.5).bound >= 0.5
    # nothing to extrapolate without a KL, or from a risk at the coin
    assert rows_to_inform(kl_bound(0.5, 1.0, 30, trivial=0.5)) is None


def test_a_vacuous_certificate_says_what_would_make_it_informative():
    reading = certificate_reading(kl_bound(0.2, kl=40.0, m=30, trivial=0.5),
                                  "AUC", test_value=0.81, n_test=50)
    assert "vacuous" in reading["vacuous_advice"]
    assert "more rows of the smaller class" in reading["vacuous_advice"]
    assert "0.810" in reading["beside_test"] and "50 held-out rows" in (
        reading["beside_test"])
    informative = certificate_reading(kl_bound(0.1, 2.0, 500, trivial=0.5),
                                      "AUC")
    assert informative == {"beside_test": None, "vacuous_advice": None}


# -------------------------------------------------------------- the figures

def _record_figures(monkeypatch, module):
    """The figures ``module`` saves, kept open for inspection."""
    figures = {}
    real = module.save

    def keep(fig, path):
        figures[path.rsplit("/", 1)[-1]] = fig
        return real(fig, path)
    monkeypatch.setattr(module, "save", keep)
    return figures


def _assert_readable(name, fig):
    """A title, axis labels, and a legend that hides nothing drawn: it lies
    outside every axes of the figure."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    canvas = FigureCanvasAgg(fig)          # save() closed the figure
    canvas.draw()
    renderer = canvas.get_renderer()
    main_axes = fig.axes[0]
    assert main_axes.get_title(), f"{name}: no title"
    assert main_axes.get_xlabel() and main_axes.get_ylabel(), (
        f"{name}: an axis without a label")
    legends = [ax.get_legend() for ax in fig.axes if ax.get_legend()]
    assert legends, f"{name}: no legend"
    for legend in legends:
        box = legend.get_window_extent(renderer)
        for ax in fig.axes:
            assert not box.overlaps(ax.get_window_extent(renderer)), (
                f"{name}: the legend covers the plot")


def test_the_demo_figures_have_titles_labels_and_legends_off_the_data(
        tmp_path, monkeypatch):
    figures = _record_figures(monkeypatch, demo_command)
    # a steep lam: several tempering steps, so the path is drawn
    cli.demo(dataset="sonar", lam=3000.0, n_particles=30, len_chain=3,
             out=str(tmp_path), verbose=False)
    assert set(figures) == {"roc.png", "marginals.png", "tempering_path.png"}
    for name, fig in figures.items():
        _assert_readable(name, fig)
    roc = figures["roc.png"].axes[0]
    # the two PAC-Bayes curves do not hide each other: distinct styles
    styles = {(line.get_linestyle(), line.get_linewidth())
              for line in roc.get_lines()[:2]}
    assert len(styles) == 2
    assert "smc" in figures["marginals.png"].axes[0].get_title()


def test_a_one_step_run_reports_importance_instead_of_a_path(tmp_path,
                                                             monkeypatch,
                                                             capsys):
    figures = _record_figures(monkeypatch, demo_command)
    r = cli.demo(dataset="pima", n_particles=30, len_chain=3,
                 out=str(tmp_path), verbose=False)
    if r["n_tempering_steps"] > 1:
        pytest.skip("this run tempered: its path is drawn")
    assert "tempering_path.png" not in figures
    assert r["tempering_path_png"] is None
    cli.print_demo(r)
    assert "importance sampling" in capsys.readouterr().out


def test_the_fit_and_classify_figures_are_readable(tmp_path, monkeypatch):
    data, _ = _csv(tmp_path / "d.csv")
    fit_figures = _record_figures(monkeypatch, fit_command)
    cli.fit_csv(data, target="churned", method="ep", lam="cv",
                out=str(tmp_path / "fit"), verbose=False,
                csv_options={"drop": ["customer_id"],
                             "positive_label": "yes"})
    assert set(fit_figures) == {"roc.png", "marginals.png", "cv_curve.png"}
    classify_figures = _record_figures(monkeypatch, classify_command)
    cli.classify_csv(data, target="churned", method="vb", lam="cv",
                     out=str(tmp_path / "classify"),
                     csv_options={"drop": ["customer_id"],
                                  "positive_label": "yes"})
    for name, fig in {**fit_figures, **{
            f"classify {k}": v for k, v in classify_figures.items()}}.items():
        _assert_readable(name, fig)
