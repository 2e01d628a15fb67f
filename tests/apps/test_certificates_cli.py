"""The certificate as the command line shows it: fields of the JSON summary,
the demo's lines, vacuous certificates labelled as such."""

import json

import numpy as np

from builders import noisy_linear
from pac_particles.apps.cli import certificate_fields, main, print_demo
from pac_particles.apps.cli.fit_command import certificate_reading
from pac_particles.sklearn.estimator import PACBayesAUC


def _csv(path, n, seed=0):
    X, y = noisy_linear(n, [1.0, -1.0], seed, d=3)
    with open(path, "w") as fh:
        fh.write("f1,f2,f3,y\n")
        for row, label in zip(X, y):
            fh.write(f"{row[0]},{row[1]},{row[2]},{label}\n")


def test_fit_summary_carries_the_certificate_and_the_held_out_bound(tmp_path):
    _csv(tmp_path / "d.csv", 400)
    main(["fit", str(tmp_path / "d.csv"), "--method", "ep", "--lam", "200",
          "--out", str(tmp_path / "out"), "--quiet"])
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    cert = summary["certificate"]
    assert cert["bound"] in ("kl", "held_out") and cert["delta"] == 0.05
    assert 0.5 < cert["certified_auc"] <= cert["empirical_randomized_auc"]
    assert cert["certified_auc"] == 1 - cert["expected_auc_risk_bound"]
    assert cert["vacuous"] is False
    # 300 training rows: B's m is below 100, the part-A score alone
    assert sorted(cert["candidates"]) == ["part-A score"]
    assert cert["statement"].startswith("with probability >= 0.95")
    assert cert["score"] in cert["sentence"]
    assert 0.0 <= cert["deployed"]["certified_auc"] <= 1.0
    held_out = summary["test_set_certificate"]
    assert 0 <= held_out["certified_auc"] <= summary["test_auc"]


def test_a_vacuous_certificate_is_labelled_everywhere(tmp_path, capsys):
    _csv(tmp_path / "d.csv", 24)
    main(["fit", str(tmp_path / "d.csv"), "--method", "ep", "--lam", "20",
          "--test-size", "0", "--out", str(tmp_path / "out"), "--quiet"])
    cert = json.loads((tmp_path / "out" / "summary.json").read_text())["certificate"]
    assert cert["vacuous"] is True and cert["statement"].startswith("VACUOUS")
    assert 0 <= cert["certified_auc"] <= 0.5
    X, y = noisy_linear(24, [1.0, -1.0], 0, d=3)
    est = PACBayesAUC(method="ep", lam=20.0).fit(X, y)
    result = {"dataset": "toy", "n_train": 24, "n_test": 8, "d": 3, "lam": 20.0,
              "method": "ep", "lam_rule": "given (--lam)", "importance": None,
              "certificate_reading": certificate_reading(
                  est.certificate_, "AUC", 0.8, 8),
              "train_auc_bayes_point": 0.9, "test_auc_bayes_point": 0.8,
              "train_auc_mean": 0.9, "test_auc_mean": 0.8,
              "test_auc_logistic": 0.8, "gibbs_expected_test_auc": 0.7,
              "log_evidence": -3.0, "log_evidence_se": 0.1,
              "n_tempering_steps": 4,
              "n_particles_total": 100, "wall_time_s": 1.0,
              "likelihood_share": 0.5, "roc_png": "roc.png",
              "marginals_png": "m.png", "tempering_path_png": "t.png",
              "test_set_certificate": {"certified_auc": 0.3, "delta": 0.05,
                                       "vacuous": True},
              **certificate_fields(est)}
    capsys.readouterr()                 # the fit command printed its JSON
    print_demo(result)
    out = capsys.readouterr().out
    # the certificate's sentence says it is no use, the held-out bound is
    # labelled; Corollary 19 is left out of the headline when vacuous (it
    # stays in the JSON)
    assert "certificate: No useful guarantee" in out
    assert out.count("VACUOUS") == 1 and "Corollary 19" not in out
    # and says what would make it informative
    assert "more rows of the smaller class make it informative" in out
    assert "95% confidence" in out and "held-out bound" in out
    assert result["certificate"]["m"] >= 1
