"""The certificate as the command reports it: plain fields for the JSON
summaries (:func:`certificate_fields`, :func:`test_set_fields`) and one
sentence a user reads (:func:`certificate_sentence`), on the AUC scale,
labelled when vacuous.
"""

import numpy as np

from pac_particles.bounds.certificates import held_out_bound

__all__ = ["certificate_fields", "certificate_sentence", "test_set_fields"]


def certificate_fields(estimator):
    """The certificate of a fitted :class:`PACBayesAUC` as plain fields (for
    the demo and the JSON summaries), on the AUC scale: ``certified_auc = 1 -
    certified_auc_risk_``, with which bound, prior and delta, whether it
    is vacuous (AUC 1/2 or less: no better than a coin), and the
    ``sentence`` a user reads (:func:`certificate_sentence`)."""
    cert = estimator.certificate_
    certified_auc = 1.0 - estimator.certified_auc_risk_
    level = f"{100 * (1 - cert.delta):g}%"
    if cert.vacuous:
        statement = (f"VACUOUS: at {level} the certified AUC {certified_auc:.4f}"
                     " is no better than a coin (0.5); the sample is too "
                     "small for this posterior to be certified")
    else:
        posterior = cert.posterior or "the fitted posterior"
        statement = (f"with probability >= {1 - cert.delta:g}, the randomised "
                     f"score (theta drawn from {posterior} at each use) has "
                     f"expected AUC >= {certified_auc:.4f}")
    fields = {
        "bound": cert.name, "prior": cert.prior, "delta": cert.delta,
        "certified_auc": certified_auc,
        "expected_auc_risk_bound": estimator.certified_auc_risk_,
        "vacuous": cert.vacuous,
        "empirical_randomized_auc": 1.0 - cert.empirical_randomized_risk,
        "kl": cert.kl, "m": cert.m,
        # what the certificate rests on: the posterior it certifies, how its
        # prior's hyper-parameters were chosen, and each part's share of delta
        "posterior": cert.posterior, "prior_fraction": cert.prior_fraction,
        "hyperparameters": dict(cert.hyperparameters),
        "hyperparameters_tuned_on": cert.hyperparameters_tuned_on,
        "delta_shares": dict(cert.delta_shares), "note": cert.note,
        "candidates": {name: 1.0 - b for name, b in cert.alternatives},
        "corollary19_certified_auc": 1.0 - estimator.bound_.auc_risk_bound_rigorous,
        "corollary19_vacuous": estimator.bound_.auc_risk_bound_rigorous >= 0.5,
        "statement": statement}
    fields["sentence"] = certificate_sentence(fields)
    return {"certificate": fields}


def certificate_sentence(cert):
    """The certificate (fields of :func:`certificate_fields`) in one plain
    sentence."""
    level = f"{100 * (1 - cert['delta']):g}%"
    if cert["vacuous"]:
        return (f"No useful guarantee: at {level} confidence the certificate "
                f"only says AUC >= {cert['certified_auc']:.3f}, no better "
                "than a coin (0.5); the smaller class has too few rows "
                f"(m = {cert['m']} used by the bound) to certify this fit.")
    posterior = cert.get("posterior") or "fitted posterior"
    return (f"With {level} confidence, a score drawn from the {posterior} "
            "for each use ranks a random positive above a random negative "
            f"of new data (from the same source) with probability at least "
            f"{cert['certified_auc']:.3f} (its training AUC: "
            f"{cert['empirical_randomized_auc']:.3f}).")


def test_set_fields(test_auc, y_test, delta):
    """Held-out bound for the deterministic point estimate (fixed before the
    test sample is seen): ``m = min(n_pos, n_neg)`` of the test sample."""
    positives = np.asarray(y_test) == np.max(y_test)
    held_out = held_out_bound(1.0 - test_auc, int(min(positives.sum(),
                                                      (~positives).sum())),
                              delta, trivial=0.5)
    return {"certified_auc": 1.0 - held_out.bound, "delta": delta,
            "vacuous": held_out.vacuous}
