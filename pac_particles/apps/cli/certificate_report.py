"""The certificate as the command reports it: plain fields for the JSON
summaries (:func:`certificate_fields`, :func:`test_set_fields`) and one
sentence a user reads (:func:`certificate_sentence`), on the AUC scale,
labelled when vacuous.
"""

import numpy as np

from pac_particles.bounds.certificates import held_out_bound

__all__ = ["certificate_fields", "certificate_sentence", "test_set_fields"]


def certificate_fields(estimator):
    """The certificates of a fitted :class:`PACBayesAUC` as plain fields
    (for the demo and the JSON summaries), on the AUC scale:
    ``certified_auc = 1 - certified_auc_risk_``, with which bound, prior and
    delta, the score it certifies (``score``), whether it is vacuous (AUC
    1/2 or less: no better than a coin), the ``sentence`` a user reads
    (:func:`certificate_sentence`), and the deployed score's certificate
    (``deployed``: the score ``decision_function`` returns)."""
    cert = estimator.certificate_
    certified_auc = 1.0 - estimator.certified_auc_risk_
    level = f"{100 * (1 - cert.delta):g}%"
    if cert.vacuous:
        statement = (f"VACUOUS: at {level} the certified AUC {certified_auc:.4f}"
                     " is no better than a coin (0.5); the sample is too "
                     "small for this posterior to be certified")
    else:
        statement = (f"with probability >= {1 - cert.delta:g}, "
                     f"{cert.posterior} has expected AUC >= "
                     f"{certified_auc:.4f}")
    fields = {
        "bound": cert.name, "prior": cert.prior, "delta": cert.delta,
        "score": cert.posterior, "certified_auc": certified_auc,
        "expected_auc_risk_bound": estimator.certified_auc_risk_,
        "vacuous": cert.vacuous,
        "empirical_randomized_auc": 1.0 - cert.empirical_randomized_risk,
        "kl": cert.kl, "m": cert.m,
        # what the certificate rests on: the score it certifies, how its
        # prior's hyper-parameters were chosen, and each part's share of delta
        "posterior": cert.posterior, "prior_fraction": cert.prior_fraction,
        "hyperparameters": dict(cert.hyperparameters),
        "hyperparameters_tuned_on": cert.hyperparameters_tuned_on,
        "delta_shares": dict(cert.delta_shares), "note": cert.note,
        "candidates": {name: 1.0 - b for name, b in cert.alternatives},
        "corollary19_certified_auc": 1.0 - estimator.bound_.auc_risk_bound_rigorous,
        "corollary19_vacuous": estimator.bound_.auc_risk_bound_rigorous >= 0.5,
        "statement": statement}
    deployed = getattr(estimator, "deployed_certificate_", None)
    fields["deployed"] = None if deployed is None else {
        "score": deployed.posterior, "certified_auc": 1.0 - deployed.bound,
        "delta": deployed.delta, "vacuous": deployed.vacuous,
        "m": deployed.m, "note": deployed.note}
    fields["sentence"] = certificate_sentence(fields)
    return {"certificate": fields}


def certificate_sentence(cert, test_set=None):
    """The certificate (fields of :func:`certificate_fields`) in one plain
    sentence: the score certified, the level, the bound, and the test-set
    bound of held-out rows next to it when ``test_set``
    (:func:`test_set_fields`) is given."""
    level = f"{100 * (1 - cert['delta']):g}%"
    beside = ("" if test_set is None else
              f" (the test-set bound on the held-out rows: AUC >= "
              f"{test_set['certified_auc']:.3f})")
    if cert["vacuous"]:
        return (f"No useful guarantee: at {level} confidence the certificate "
                f"only says AUC >= {cert['certified_auc']:.3f}, no better "
                "than a coin (0.5); the smaller class has too few rows "
                f"(m = {cert['m']} used by the bound) to certify this fit"
                f"{beside}.")
    score = cert.get("score") or "the fitted posterior's randomised score"
    return (f"With {level} confidence, {score} ranks a random positive "
            "above a random negative of new data (from the same source) "
            f"with probability at least {cert['certified_auc']:.3f}"
            f"{beside}.")


def test_set_fields(test_auc, y_test, delta):
    """Held-out bound for the deterministic point estimate (fixed before the
    test sample is seen): ``m = min(n_pos, n_neg)`` of the test sample."""
    positives = np.asarray(y_test) == np.max(y_test)
    held_out = held_out_bound(1.0 - test_auc, int(min(positives.sum(),
                                                      (~positives).sum())),
                              delta, trivial=0.5)
    return {"certified_auc": 1.0 - held_out.bound, "delta": delta,
            "vacuous": held_out.vacuous}
