"""What deploying the all-rows score buys over the certified part-A score.

``PACBayesAUC(deploy="all_rows")`` (the default) returns the posterior's
point estimate fitted on every training row, certified by a derandomised
bound (looser); ``deploy="certified"`` returns the part-A score, a logistic
regression fitted on half the rows, certified by its test-set bound on the
other half (never looser than a test-set bound on the same rows). Which to
deploy is a trade: the test AUC the all-rows score gains by seeing twice the
rows, against the guarantee it gives up.

:func:`deployed_score_comparison` measures both on held-out rows: one
default fit per stratified split of the data (the part-A score does not
depend on the fit: it is read off the same fit, ``certified_decision_function``
where the certificate certifies it, else from :func:`~pac_particles.bounds.certify`
with ``score="part_a"``), the test AUC of each score, and each score's
certificate (the deployed one of each mode) on the training rows.
"""

import numpy as np
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import train_test_split

from pac_particles.bounds import certify
from pac_particles.problem.problem import GibbsProblem
from pac_particles.sklearn.binary import certificate_spec
from pac_particles.sklearn.estimator import PACBayesAUC

__all__ = ["deployed_score_comparison"]


def deployed_score_comparison(X, y, seeds=(0,), test_size=0.25,
                              **estimator_kwargs):
    """Per split (``seeds``: a stratified ``test_size`` held out, and the
    fit's ``random_state``): ``{"all_rows_auc", "part_a_auc",
    "all_rows_certified", "part_a_certified", "method"}``, test AUCs and
    certified AUCs (1 - bound) of the two scores. Returns the list."""
    X = np.asarray(X, dtype=float)
    y = np.asarray(y) == np.max(y)
    out = []
    for seed in seeds:
        X_tr, X_te, y_tr, y_te = train_test_split(
            X, y, test_size=test_size, stratify=y, random_state=seed)
        est = PACBayesAUC(random_state=seed, **estimator_kwargs).fit(
            X_tr, y_tr)
        # the part-A score at the whole delta: deploy="certified"'s
        problem = GibbsProblem.ranking(X_tr, y_tr, est.lam_, est.standardize)
        part_a = certify(est.posterior_, problem,
                         certificate_spec(est, "part_a"))
        coef, offset = problem.data.raw_linear(
            np.asarray(part_a.score_coefficients, dtype=float))
        all_rows = est.deployed_certificate_
        out.append({
            "method": est.method_,
            "all_rows_auc": float(roc_auc_score(
                y_te, est.decision_function(X_te))),
            "part_a_auc": float(roc_auc_score(y_te, X_te @ coef + offset)),
            "all_rows_certified": (None if all_rows is None
                                   else 1.0 - all_rows.bound),
            "part_a_certified": 1.0 - part_a.bound})
    return out
