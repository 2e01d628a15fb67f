"""The command line used twice (issue 31): ``fit --save-model`` then
``predict``, model files that run no code, CSVs read with pandas, the help,
the version, and what ``fit`` writes. Small CSVs, fixed ``lam``, few
particles: every fit here takes a second or two."""

import json
import pickle
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from builders import noisy_linear
from pac_particles.core.checks import InputError
from pac_particles.apps.cli import main
from pac_particles.sklearn.model_file import load_model, save_model

SMALL = ["--n-particles", "30", "--len-chain", "3", "--quiet"]
#: equal up to floating-point rounding (a few units in the last place)
EXACT = dict(rtol=1e-13, atol=1e-14)


def _frame(n=80, seed=0, labels=(0, 1)):
    """Three features (f3 irrelevant), labels ``labels[y]``, the label
    column between the features."""
    X, y = noisy_linear(n, [1.0, -1.0], seed, d=3)
    frame = pd.DataFrame(X, columns=["f1", "f2", "f3"])
    frame.insert(1, "outcome", np.asarray(labels, dtype=object)[y])
    return frame


def _csv(path, frame, **kwargs):
    frame.to_csv(path, index=False, **kwargs)
    return str(path)


def _exit_2(capsys, argv):
    """``main(argv)`` exits with code 2 and a one-line error (warnings
    before it are one line each); returns the error line."""
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines[-1].startswith("pac-particles: error:"), lines
    assert all(line.startswith("pac-particles: warning:") for line in lines[:-1])
    return lines[-1]


# ------------------------------------------------------- fit, then predict

@pytest.mark.parametrize("method", ["ep", "smc"])
def test_fit_save_model_then_predict_gives_the_estimators_predictions(
        tmp_path, monkeypatch, method):
    import pac_particles.apps.cli as cli
    from pac_particles.sklearn.estimator import PACBayesAUC
    fitted = []

    class Recording(PACBayesAUC):
        def fit(self, X, y):
            fitted.append(self)
            return super().fit(X, y)
    monkeypatch.setattr(cli, "PACBayesAUC", Recording)
    frame = _frame(labels=("healthy", "sick"))
    train = _csv(tmp_path / "train.csv", frame)
    new = frame.drop(columns="outcome").sample(frac=1.0, random_state=1)
    new = new[["f3", "f1", "f2"]] + 0.1            # other order, new rows
    new.insert(0, "id", np.arange(len(new)))
    _csv(tmp_path / "new.csv", new)
    model, preds = tmp_path / "model.json", tmp_path / "preds.csv"
    main(["fit", train, "--target", "outcome", "--method", method, "--lam",
          "40", "--test-size", "0", "--seed", "3", "--out",
          str(tmp_path / "out"), "--save-model", str(model)] + SMALL)
    main(["predict", str(model), str(tmp_path / "new.csv"), "--out",
          str(preds)])
    written = pd.read_csv(preds)
    # the estimator the command fitted, on the 0/1 codes of the labels
    # ('sick' positive: the lexicographically larger)
    (est,) = fitted
    assert est.get_params()["method"] == method and est.lam_ == 40.0
    X_new = new[["f1", "f2", "f3"]].to_numpy()
    assert list(written.columns) == ["row", "score", "label",
                                     "probability_sick"]
    # the same arithmetic: equal up to the order BLAS sums in (which
    # depends on memory alignment, so two copies of coef_ may differ in
    # the last bit)
    np.testing.assert_allclose(written["score"],
                               est.decision_function(X_new), **EXACT)
    np.testing.assert_allclose(written["probability_sick"],
                               est.predict_proba(X_new)[:, 1], **EXACT)
    np.testing.assert_array_equal(
        written["label"], np.where(est.predict(X_new) == 1, "sick", "healthy"))
    assert written["row"].tolist() == list(range(1, len(new) + 1))


def test_predict_reports_the_auc_when_the_csv_holds_the_labels(tmp_path,
                                                               capsys):
    from pac_particles.problem.auc import auc_risk
    frame = _frame()
    train = _csv(tmp_path / "train.csv", frame)
    model = str(tmp_path / "m.json")
    main(["fit", train, "--target", "outcome", "--method", "ep", "--lam",
          "40", "--test-size", "0", "--out", str(tmp_path / "out"),
          "--save-model", model] + SMALL)
    capsys.readouterr()
    main(["predict", model, train, "--out", str(tmp_path / "p.csv")])
    out = capsys.readouterr().out
    scores = pd.read_csv(tmp_path / "p.csv")["score"].to_numpy()
    auc = 1 - auc_risk(scores, frame["outcome"].to_numpy())
    assert f"AUC {auc:.4f}" in out and "'outcome'" in out


def test_a_saved_model_predicts_as_the_estimator_from_python(tmp_path):
    from pac_particles.sklearn.estimator import PACBayesAUC
    X, y = noisy_linear(60, [1.0, -1.0, 0.5], 2, d=4)
    labels = np.where(y == 1, "yes", "no")
    est = PACBayesAUC(method="vb", lam=30.0).fit(X, labels)
    path = save_model(est, tmp_path / "sub" / "m.json")
    scorer = load_model(path)
    X_new = np.random.default_rng(5).standard_normal((25, 4)) * 3
    np.testing.assert_allclose(scorer.decision_function(X_new),
                               est.decision_function(X_new), **EXACT)
    np.testing.assert_allclose(scorer.predict_proba(X_new),
                               est.predict_proba(X_new), **EXACT)
    np.testing.assert_array_equal(scorer.predict(X_new), est.predict(X_new))
    np.testing.assert_array_equal(scorer.coef_, est.coef_)
    assert (scorer.intercept_, scorer.proba_slope_, scorer.threshold_) == (
        est.intercept_, est.proba_slope_, est.threshold_)
    assert scorer.fit["method"] == "vb" and scorer.fit["lam"] == 30.0
    # a DataFrame is matched by column name
    named = pd.DataFrame(X_new, columns=["x1", "x2", "x3", "x4"])
    np.testing.assert_allclose(
        scorer.decision_function(named[["x4", "x2", "x1", "x3"]]),
        est.decision_function(X_new), **EXACT)


# ------------------------------------------------ model files are only data

def _saved(tmp_path):
    from pac_particles.sklearn.estimator import PACBayesAUC
    X, y = noisy_linear(40, [1.0, -1.0], 0, d=2)
    est = PACBayesAUC(method="ep", lam=20.0).fit(X, y)
    path = str(save_model(est, tmp_path / "m.json"))
    X_new = tmp_path / "new.csv"
    pd.DataFrame(X, columns=["x1", "x2"]).to_csv(X_new, index=False)
    return path, str(X_new)


def test_a_model_file_with_an_edited_number_is_refused(tmp_path, capsys):
    path, new = _saved(tmp_path)
    payload = json.loads(open(path).read())
    payload["coef"][0] = payload["coef"][0] * 1.5
    with open(path, "w") as fh:
        json.dump(payload, fh)
    err = _exit_2(capsys, ["predict", path, new, "--out",
                           str(tmp_path / "p.csv")])
    assert "checksum does not match" in err
    assert not (tmp_path / "p.csv").exists()
    with pytest.raises(InputError, match="checksum"):
        load_model(path)


def test_a_model_file_reformatted_but_unchanged_still_loads(tmp_path):
    path, _ = _saved(tmp_path)
    payload = json.loads(open(path).read())
    with open(path, "w") as fh:
        json.dump(payload, fh, indent=4, sort_keys=True)
    assert load_model(path).n_features_in_ == 2


class _Trap:
    """Unpickling this creates a file: proof that code ran."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def test_a_pickle_passed_as_a_model_is_refused_without_running_it(tmp_path,
                                                                  capsys):
    marker = tmp_path / "code_ran"
    model = tmp_path / "model.pkl"
    model.write_bytes(pickle.dumps(_Trap(str(marker))))
    _, new = _saved(tmp_path)
    err = _exit_2(capsys, ["predict", str(model), new, "--out",
                           str(tmp_path / "p.csv")])
    assert "not JSON" in err and "never" in err
    assert not marker.exists()
    # a pickle smuggled into a field is a string: the checksum refuses it
    path, _ = _saved(tmp_path)
    payload = json.loads(open(path).read())
    payload["fit"]["method"] = pickle.dumps(_Trap(str(marker))).hex()
    with open(path, "w") as fh:
        json.dump(payload, fh)
    _exit_2(capsys, ["predict", path, new, "--out", str(tmp_path / "p.csv")])
    assert not marker.exists()


def test_each_kind_is_written_at_its_layouts_version(tmp_path):
    """A score's file keeps format 1 (its layout is unchanged: readers of 1
    read it); a classifier's is format 2 (its rule beside its vote)."""
    from pac_particles.sklearn.classifier import PACBayesClassifier
    path, _ = _saved(tmp_path)
    assert json.loads(open(path).read())["format_version"] == 1
    X, y = noisy_linear(60, [1.0, -1.0], 0, d=2)
    est = PACBayesClassifier(method="vb", lam=30.0).fit(X, y)
    classifier = save_model(est, tmp_path / "c.json")
    assert json.loads(open(classifier).read())["format_version"] == 2


def test_model_files_of_a_newer_format_are_refused(tmp_path):
    from pac_particles import model_file
    path, _ = _saved(tmp_path)
    payload = json.loads(open(path).read())
    del payload["checksum"]
    payload["format_version"] = model_file.FORMAT_VERSION + 1
    payload["checksum"] = model_file._checksum(payload)
    with open(path, "w") as fh:
        json.dump(payload, fh)
    with pytest.raises(InputError, match="newer"):
        load_model(path)


def test_gp_kernel_fits_and_unfitted_estimators_are_not_saved(tmp_path):
    from pac_particles.sklearn.classifier import PACBayesClassifier
    from pac_particles.sklearn.estimator import PACBayesAUC
    X, y = noisy_linear(30, [1.0, -1.0], 0, d=2)
    gp = PACBayesAUC(method="ep", lam=20.0, kernel="rbf").fit(X, y)
    with pytest.raises(InputError, match="GP-kernel fit cannot be saved"):
        save_model(gp, tmp_path / "gp.json")
    for unfitted in (PACBayesAUC(), PACBayesClassifier()):
        with pytest.raises(InputError, match="fit it first"):
            save_model(unfitted, tmp_path / "none.json")
    with pytest.raises(InputError, match="PACBayesAUC or PACBayesClassifier"):
        save_model(object(), tmp_path / "other.json")
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("method", ["vb", "ep", "smc"])
def test_a_saved_classifier_predicts_as_the_estimator(tmp_path, method):
    """The posterior on the raw inputs (particles' vote, or the Gaussian):
    the estimator's probabilities up to rounding, on unstandardised
    columns."""
    from pac_particles.sklearn.classifier import PACBayesClassifier
    X, y = noisy_linear(80, [1.0, -1.0], 0, d=3)
    X = X * [1.0, 5.0, 0.2] + [0.0, 3.0, -1.0]
    est = PACBayesClassifier(method=method, lam=30.0, n_particles=30,
                             len_chain=3, random_state=0).fit(X, y)
    back = load_model(save_model(est, tmp_path / "c.json"))
    np.testing.assert_allclose(back.decision_function(X),
                               est.decision_function(X), **EXACT)
    np.testing.assert_allclose(back.predict_proba(X), est.predict_proba(X),
                               rtol=0, atol=1e-12)
    np.testing.assert_allclose(back.vote_probability(X),
                               est.vote_probability(X), rtol=0, atol=1e-12)
    assert back.threshold_ == est.threshold_
    clear = np.abs(est.decision_function(X)) > 1e-9
    np.testing.assert_array_equal(back.predict(X)[clear],
                                  est.predict(X)[clear])
    assert back.fit["method"] == method and back.fit["loss"] == est.loss_


def test_a_classifier_file_of_format_1_predicts_by_its_vote(tmp_path):
    """A file written before the rule was saved (the posterior alone at the
    top level) loads, predicts by the vote as it then did, and has no
    decision_function; one of the part-A rule alone has no vote."""
    from pac_particles import model_file
    from pac_particles.sklearn.classifier import PACBayesClassifier
    X, y = noisy_linear(80, [1.0, -1.0], 0, d=3)
    est = PACBayesClassifier(method="vb", lam=30.0, random_state=0).fit(X, y)
    payload = json.loads(open(save_model(est, tmp_path / "c.json")).read())
    old = {k: v for k, v in payload.items()
           if k not in ("checksum", "vote", "coef", "intercept",
                        "threshold", "proba_slope")}
    old.update(payload["vote"], format_version=1)
    old["checksum"] = model_file._checksum(old)
    (tmp_path / "old.json").write_text(json.dumps(old))
    back = load_model(tmp_path / "old.json")
    np.testing.assert_allclose(back.predict_proba(X)[:, 1],
                               est.vote_probability(X), rtol=0, atol=1e-12)
    with pytest.raises(InputError, match="format 1.*save the model again"):
        back.decision_function(X)
    rule = {k: v for k, v in old.items() if k not in ("mean", "cov")}
    rule.update(predictive="logistic", coef=payload["coef"],
                intercept=payload["intercept"])
    del rule["checksum"]
    rule["checksum"] = model_file._checksum(rule)
    (tmp_path / "rule.json").write_text(json.dumps(rule))
    back = load_model(tmp_path / "rule.json")
    f = X @ est.coef_ + est.intercept_
    np.testing.assert_allclose(back.predict_proba(X)[:, 1],
                               1.0 / (1.0 + np.exp(-f)), rtol=1e-12)
    with pytest.raises(InputError, match="no posterior to vote with"):
        back.vote_probability(X)


def test_a_certified_deployment_is_saved_and_used_by_predict(tmp_path):
    """deploy='certified': the model files hold the part-A score (AUC) or
    rule (classifier), say so, record both certificates, and predict as
    the estimator."""
    from pac_particles.sklearn.classifier import PACBayesClassifier
    from pac_particles.sklearn.estimator import PACBayesAUC
    X, y = noisy_linear(120, [1.0, -1.0], 0, d=3)
    X = X * [1.0, 5.0, 0.2] + [0.0, 3.0, -1.0]
    for est in (PACBayesAUC(method="ep", lam=30.0, deploy="certified",
                            random_state=0),
                PACBayesClassifier(method="vb", lam=30.0, deploy="certified",
                                   random_state=0)):
        est.fit(X, y)
        back = load_model(save_model(est, tmp_path / "m.json"))
        np.testing.assert_allclose(back.predict_proba(X),
                                   est.predict_proba(X), rtol=0, atol=1e-12)
        assert back.fit["deploy"] == "certified"
        deployed = est.deployed_certificate_.bound
        recorded = (back.fit.get("deployed_certified_error")
                    if "loss" in back.fit
                    else 1.0 - back.fit["deployed_certified_auc"])
        assert recorded == pytest.approx(deployed, abs=1e-12)
    assert back.proba_slope_ == 1.0 and back.vote["predictive"] == "gaussian"


@pytest.mark.parametrize("command", ["fit", "classify"])
def test_the_command_line_deploys_the_certified_score(tmp_path, capsys,
                                                      command):
    """``--deploy certified``: summary.json records which score is deployed
    and both certificates, the headline names the deployed one, the model
    file says which score it holds, and predict scores with it."""
    csv = _csv(tmp_path / "d.csv", _frame(n=160))
    out = tmp_path / "out"
    model = str(tmp_path / "m.json")
    main([command, csv, "--method", "ep" if command == "fit" else "vb",
          "--lam", "30", "--test-size", "0", "--out", str(out),
          "--deploy", "certified", "--save-model", model,
          "--target", "outcome"] + SMALL)
    printed = capsys.readouterr().out
    assert "deployed score (certified)" in printed or \
        "deployed rule (certified)" in printed
    summary = json.loads((out / "summary.json").read_text())
    assert summary["deploy"] == "certified"
    deployed = summary["certificate"]["deployed"]
    assert "part-A score" in deployed["score"]
    assert summary["certificate"] is not None
    back = load_model(model)
    assert back.fit["deploy"] == "certified"
    main(["predict", model, csv, "--out", str(tmp_path / "p.csv")])
    said = capsys.readouterr()
    assert "deployed score certified" in said.out + said.err
    rows = pd.read_csv(tmp_path / "p.csv")
    frame = _frame(n=160)
    X = frame[["f1", "f2", "f3"]].to_numpy(float)
    np.testing.assert_allclose(rows.filter(like="probability").to_numpy()[:, 0],
                               back.predict_proba(X)[:, 1], rtol=1e-12)


def test_predict_names_missing_feature_columns(tmp_path, capsys):
    path, _ = _saved(tmp_path)
    other = tmp_path / "other.csv"
    other.write_text("x1,z\n1,2\n3,4\n")
    err = _exit_2(capsys, ["predict", path, str(other), "--out",
                           str(tmp_path / "p.csv")])
    assert "'x2'" in err and "lacks" in err


# ------------------------------------------------------------- CSV reading

def _fit_args(tmp_path, csv, *extra):
    return (["fit", csv, "--method", "ep", "--lam", "30", "--test-size", "0",
             "--out", str(tmp_path / "out")] + list(extra) + SMALL)


@pytest.mark.parametrize("content, extra, expected", [
    # a missing value: the column, the 1-based data row, what to do
    ("a,b,y\n1,2,0\n2,,1\n3,1,0\n4,2,1\n", [], ["column 'b'", "data row 2",
                                                "fill in"]),
    # a string feature column: the column, the row, the value, --drop
    ("a,b,y\n1,low,0\n2,high,1\n3,low,0\n4,high,1\n", [],
     ["column 'b' is not numeric", "data row 1", "'low'", "--drop"]),
    # another separator: which one, and the option that reads it
    ("a;b;y\n1;2;0\n2;1;1\n3;1;0\n", [], ["';'-separated", "--sep ';'"]),
    # a row longer than the header
    ("a,b,y\n1,2,0\n2,1,1,7\n3,1,0\n", [], ["fields", "line 3"]),
    # a column named twice
    ("a,a,y\n1,2,0\n2,1,1\n3,1,0\n", [], ["'a' twice"]),
    # three labels
    ("a,b,y\n1,2,0\n2,1,1\n3,1,2\n", [], ["column 'y'", "binary", "--target"]),
    # a positive label that is not there
    ("a,b,y\n1,2,no\n2,1,yes\n3,1,no\n", ["--positive-label", "Yes"],
     ["'Yes' is not one of the labels"]),
    ("a,b,y\n1,2,0\n2,1,1\n3,1,0\n", ["--features", "a,c"], ["'c' not in"]),
])
def test_csv_mistakes_are_one_line_naming_column_row_and_fix(
        tmp_path, capsys, content, extra, expected):
    path = tmp_path / "d.csv"
    path.write_text(content)
    err = _exit_2(capsys, _fit_args(tmp_path, str(path), *extra))
    for text in expected:
        assert text in err, err


def _summary(tmp_path):
    return json.loads((tmp_path / "out" / "summary.json").read_text())


def test_a_semicolon_file_is_read_with_sep(tmp_path):
    frame = _frame()
    csv = _csv(tmp_path / "d.csv", frame, sep=";")
    main(_fit_args(tmp_path, csv, "--target", "outcome", "--sep", ";"))
    assert set(_summary(tmp_path)["coefficients"]) == {"f1", "f2", "f3"}


def test_string_labels_take_the_larger_as_positive_unless_told(tmp_path,
                                                               capsys):
    frame = _frame(labels=("benign", "malignant"))
    csv = _csv(tmp_path / "d.csv", frame)
    main(_fit_args(tmp_path, csv, "--target", "outcome"))
    err = capsys.readouterr().err
    assert "'malignant' (the lexicographically larger)" in err
    assert "--positive-label" in err
    default = _summary(tmp_path)
    assert default["classes"] == {"negative": "benign",
                                  "positive": "malignant"}
    main(_fit_args(tmp_path, csv, "--target", "outcome", "--positive-label",
                   "benign"))
    assert "lexicographically" not in capsys.readouterr().err
    flipped = _summary(tmp_path)
    assert flipped["classes"] == {"negative": "malignant",
                                  "positive": "benign"}
    # the other class ranked first: the score changes sign
    assert flipped["coefficients"]["f1"] < 0 < default["coefficients"]["f1"]
    assert flipped["train_auc"] == pytest.approx(default["train_auc"],
                                                 abs=0.02)


def test_an_index_column_written_by_pandas_is_dropped_with_a_warning(
        tmp_path, capsys):
    frame = _frame()
    csv = tmp_path / "d.csv"
    frame.to_csv(csv)                      # index=True: an unnamed column
    assert open(csv).readline().startswith(",f1,")
    main(_fit_args(tmp_path, str(csv), "--target", "outcome"))
    err = capsys.readouterr().err
    assert "row index" in err and "dropped" in err
    assert list(_summary(tmp_path)["coefficients"]) == ["f1", "f2", "f3"]


def test_features_drop_and_no_header_choose_the_columns(tmp_path):
    frame = _frame()
    frame.insert(0, "patient_id", [f"p{k}" for k in range(len(frame))])
    csv = _csv(tmp_path / "d.csv", frame)
    main(_fit_args(tmp_path, csv, "--target", "outcome", "--drop",
                   "patient_id"))
    assert list(_summary(tmp_path)["coefficients"]) == ["f1", "f2", "f3"]
    main(_fit_args(tmp_path, csv, "--target", "outcome", "--features",
                   "f2", "--features", "f1"))
    assert list(_summary(tmp_path)["coefficients"]) == ["f2", "f1"]
    bare = _csv(tmp_path / "bare.csv", frame.drop(columns="patient_id"),
                header=False)
    main(_fit_args(tmp_path, bare, "--no-header", "--target", "2"))
    summary = _summary(tmp_path)
    assert summary["target"] == "col2"
    assert list(summary["coefficients"]) == ["col1", "col3", "col4"]


def test_a_constant_column_is_named_as_in_the_csv(tmp_path, capsys):
    frame = _frame()
    frame["site"] = 3.0
    csv = _csv(tmp_path / "d.csv", frame)
    main(_fit_args(tmp_path, csv, "--target", "outcome"))
    err = capsys.readouterr().err
    assert "constant column(s) ['site']" in err and "'x" not in err
    assert _summary(tmp_path)["coefficients"]["site"] == 0.0


# ------------------------------------------------------ what fit writes

def test_fit_writes_marginals_coefficient_intervals_and_a_plain_certificate(
        tmp_path, capsys):
    from pac_particles.sklearn.estimator import PACBayesAUC
    frame = _frame(n=100)
    csv = _csv(tmp_path / "d.csv", frame)
    main(_fit_args(tmp_path, csv, "--target", "outcome"))
    out = capsys.readouterr().out
    assert (tmp_path / "out" / "marginals.png").stat().st_size > 1000
    table = pd.read_csv(tmp_path / "out" / "coefficients.csv")
    assert list(table.columns) == ["feature", "coefficient", "lower_95",
                                   "upper_95"]
    assert table["feature"].tolist() == ["f1", "f2", "f3"]
    # EP: the Gaussian's marginal intervals, mean -+ 1.96 sd, on raw inputs
    X = frame[["f1", "f2", "f3"]].to_numpy()
    est = PACBayesAUC(method="ep", lam=30.0).fit(
        X, frame["outcome"].astype(int))
    sd = np.sqrt(np.diag(est.posterior_.cov)) / est.approximation_.data.scale
    np.testing.assert_allclose(table["coefficient"], est.coef_)
    np.testing.assert_allclose(table["upper_95"] - table["coefficient"],
                               1.959964 * sd, rtol=1e-6)
    np.testing.assert_allclose(table["coefficient"] - table["lower_95"],
                               1.959964 * sd, rtol=1e-6)
    # f1 and f2 matter (intervals away from 0), in opposite directions
    assert table["lower_95"][0] > 0 > table["upper_95"][1]
    # the certificate as one sentence; Corollary 19 not in the headline
    line = next(l for l in out.splitlines() if "certificate:" in l)
    assert ("With 95% confidence" in line) or ("No useful guarantee" in line)
    assert "AUC >= 0.000" not in out and "Corollary" not in out
    assert _summary(tmp_path)["certificate"]["sentence"] in line


def test_smc_coefficient_intervals_are_weighted_quantiles_of_the_particles():
    from pac_particles.sklearn.estimator import PACBayesAUC
    from pac_particles.core.weighted_particles import directions
    X, y = noisy_linear(60, [1.0, -1.0], 1, d=3)
    est = PACBayesAUC(method="smc", lam=40.0, n_particles=40, len_chain=3,
                      random_state=0).fit(X * [1.0, 10.0, 0.1], y)
    table = est.coefficient_intervals(0.9)
    post = est.posterior_
    # the Bayes point is the mean direction: intervals of directions, mapped
    # through the standardisation as coef_ is
    raw = directions(post.theta) / post.data.scale
    for k, name in enumerate(table.index):
        below = post.weights[raw[:, k] < table.loc[name, "lower"]].sum()
        above = post.weights[raw[:, k] > table.loc[name, "upper"]].sum()
        assert below == pytest.approx(0.05, abs=0.03)
        assert above == pytest.approx(0.05, abs=0.03)
    np.testing.assert_allclose(table["coefficient"], est.coef_)
    assert list(table.index) == ["x1", "x2", "x3"]


def test_the_demo_reads_a_csv(tmp_path, capsys):
    csv = _csv(tmp_path / "d.csv", _frame(n=60))
    main(["demo", "--csv", csv, "--target", "outcome", "--lam", "30",
          "--out", str(tmp_path / "demo"), "--n-particles", "20",
          "--len-chain", "2", "--quiet"])
    out = capsys.readouterr().out
    assert out.startswith("dataset d.csv: n_train 45, n_test 15, d 3")
    assert (tmp_path / "demo" / "marginals.png").exists()


def test_the_demo_headline_shows_corollary_19_only_when_informative(capsys):
    from pac_particles.apps.cli import print_demo as _print_demo
    cert = {"delta": 0.05, "bound": "kl", "prior": "data-free", "vacuous": False,
            "posterior": "exact Gibbs posterior", "certified_auc": 0.7,
            "empirical_randomized_auc": 0.8, "corollary19_certified_auc": 0.0,
            "corollary19_vacuous": True,
            "sentence": "With 95% confidence, the score has AUC >= 0.7."}
    result = {"dataset": "toy", "n_train": 24, "n_test": 8, "d": 3,
              "method": "smc", "lam_rule": "given (--lam)",
              "importance": None,
              "certificate_reading": {"beside_test": None,
                                      "vacuous_advice": None},
              "lam": 20.0, "train_auc_bayes_point": 0.9,
              "test_auc_bayes_point": 0.8, "train_auc_mean": 0.9,
              "test_auc_mean": 0.8, "test_auc_logistic": 0.8,
              "gibbs_expected_test_auc": 0.7, "log_evidence": -3.0,
              "log_evidence_se": 0.1, "n_tempering_steps": 4,
              "n_particles_total": 100, "wall_time_s": 1.0,
              "likelihood_share": 0.5, "roc_png": "r", "marginals_png": "m",
              "tempering_path_png": "t", "certificate": cert,
              "test_set_certificate": {"certified_auc": 0.6, "delta": 0.05,
                                       "vacuous": False}}
    _print_demo(result)
    assert "Corollary 19" not in capsys.readouterr().out
    cert.update(corollary19_certified_auc=0.62, corollary19_vacuous=False)
    _print_demo(result)
    assert "Corollary 19: AUC >= 0.620" in capsys.readouterr().out


# ----------------------------------------------- cv and fit agree on lam

def test_cv_reports_both_rules_and_fit_uses_the_certified_one(tmp_path):
    frame = _frame(n=60, seed=4)
    csv = _csv(tmp_path / "d.csv", frame)
    common = ["--target", "outcome", "--seed", "2", "--n-particles", "20",
              "--len-chain", "2", "--quiet"]
    main(["cv", csv, "--out", str(tmp_path / "cv")] + common)
    cv = json.loads((tmp_path / "cv" / "summary.json").read_text())
    main(["fit", csv, "--lam", "cv", "--test-size", "0", "--out",
          str(tmp_path / "fit")] + common)
    fit = json.loads((tmp_path / "fit" / "summary.json").read_text())
    assert fit["lam"] == pytest.approx(cv["lam_certified"])
    assert fit["cv"]["lam_best_mean_cv_auc"] == pytest.approx(cv["best_lam"])
    assert "certified rule" in fit["lam_rule"]
    assert cv["fit_uses"] == {"--cv-rule certified (default)":
                              cv["lam_certified"],
                              "--cv-rule best": cv["best_lam"]}
    assert (tmp_path / "fit" / "cv_curve.png").exists()


def test_cv_progress_says_fold_k_of_k_then_refit(capsys):
    from pac_particles.sklearn.selection import cross_validate_lam, lam_grid
    X, y = noisy_linear(40, [1.0], 0, d=2)
    grid = lam_grid(10.0, 5)

    def scorer(X_tr, y_tr, X_val, y_val, grid, seed):
        return grid, np.linspace(0.6, 0.7, grid.size)
    cross_validate_lam(X, y, grid, scorer, n_folds=3, seed=0,
                       verbose="lines", alongside=lambda: "refit")
    lines = capsys.readouterr().err.splitlines()
    labels = [line.split("] ")[1].split(" done")[0] for line in lines]
    assert labels == ["refit on all rows", "fold 1/3", "fold 2/3", "fold 3/3"]


# ------------------------------------------------------- help and version

def _parser_actions():
    from pac_particles.apps.cli import build_parser
    parser = build_parser()
    sub = next(a for a in parser._actions
               if isinstance(a, __import__("argparse")._SubParsersAction))
    return sub.choices


def test_every_option_of_every_command_is_described():
    for name, command in _parser_actions().items():
        for action in command._actions:
            assert action.help, (name, action.dest)


def test_help_lists_the_defaults(capsys):
    with pytest.raises(SystemExit) as info:
        main(["fit", "--help"])
    assert info.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    for default in ("(default: 200)", "(default: 10)", "(default: cv)",
                    "Bayes (default: auto)", "(default: 0.25)",
                    "(default: certified)", "(default: auto)",
                    "(default: the last column)"):
        assert default in text, default


def test_version_prints_the_package_version(capsys):
    import pac_particles
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.strip() == (
        f"pac-particles {pac_particles.__version__}")


@pytest.mark.parametrize("flag", ["--help", "--version"])
def test_help_and_version_import_nothing_heavy(flag):
    # the 3 s of --help were numpy, scikit-learn, numba and particles
    code = ("import sys\nfrom pac_particles.apps.cli import main\n"
            f"try:\n    main([{flag!r}])\nexcept SystemExit:\n    pass\n"
            "heavy = [m for m in ('numpy', 'sklearn', 'numba', 'particles', "
            "'pandas', 'scipy', 'matplotlib') if m in sys.modules]\n"
            "print('HEAVY', heavy)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().endswith("HEAVY []")


def test_the_choices_help_shows_are_the_librarys():
    from pac_particles import cli
    from pac_particles.problem.datasets import DATASETS
    from pac_particles.sklearn.estimator import CV_RULES
    from pac_particles.sklearn.methods import method_names
    from pac_particles.core.progress import PROGRESS_MODES
    from pac_particles.problem.risks import LOSSES
    # --help imports nothing heavy, so it lists the registry's names itself
    assert set(cli._AUC_METHODS) == set(method_names("ranking"))
    assert set(cli._CLASSIFIER_METHODS) == set(
        method_names("classification", auto=False))
    assert cli._LOSSES == LOSSES and cli._CV_RULES == CV_RULES
    from pac_particles.sklearn.binary import DEPLOYS
    assert cli._DEPLOYS == DEPLOYS
    assert cli._PROGRESS_MODES == PROGRESS_MODES
    assert cli._DATASETS == tuple(sorted(DATASETS))


# ----------------------------------------------------------- classify

def test_classify_errors_and_plot_speak_of_classes_not_auc(tmp_path, capsys):
    from pac_particles.apps.plots import CV_XLABELS
    path = tmp_path / "d.csv"
    path.write_text("a,b,y\n1,2,0\n2,1,0\n3,1,0\n")
    err = _exit_2(capsys, ["classify", str(path), "--lam", "10", "--out",
                           str(tmp_path / "out"), "--quiet"])
    assert "one class" in err and "AUC" not in err
    assert "tempering" not in CV_XLABELS["grid"]
