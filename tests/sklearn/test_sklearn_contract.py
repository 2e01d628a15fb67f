"""The scikit-learn contract at the defaults users get.

Every ``method`` of both estimators, built with no other argument, passes
scikit-learn's estimator checks (tiny data, one feature, one sample,
pickling, ...: the choice of ``lam`` by cross-validation included), and a
fitted estimator of every method, and of each EP model (linear in primal
and in score space, GP, spike-and-slab), survives pickle and joblib with
identical predictions.
"""

import io
import pickle

import joblib
import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from builders import noisy_linear
from pac_particles.approx.ep import EPLinear
from pac_particles.sklearn.methods import method_names
from pac_particles.sklearn.classifier import PACBayesClassifier
from pac_particles.sklearn.estimator import PACBayesAUC

# "auto" resolves to SMC at the checks' sizes (a few dozen rows): its
# checks would be SMC's again
AUC_METHODS = method_names("ranking", auto=False)
CLASSIFIER_METHODS = method_names("classification", auto=False)
DEFAULTS = ([PACBayesAUC(method=method) for method in AUC_METHODS]
            + [PACBayesClassifier(method=method)
               for method in CLASSIFIER_METHODS])


@parametrize_with_checks(DEFAULTS)
def test_defaults_of_every_method_pass_the_scikit_learn_checks(estimator,
                                                               check):
    check(estimator)


def _round_trips(est):
    """``est`` back from pickle and from joblib."""
    buffer = io.BytesIO()
    joblib.dump(est, buffer)
    buffer.seek(0)
    return [pickle.loads(pickle.dumps(est)), joblib.load(buffer)]


def _outputs(est, X):
    """Everything a fitted estimator predicts on ``X``."""
    out = {"predict": est.predict(X), "predict_proba": est.predict_proba(X)}
    if hasattr(est, "decision_function"):
        out["decision_function"] = est.decision_function(X)
    return out


def _assert_same_predictions(est, X):
    expected = _outputs(est, X)
    for back in _round_trips(est):
        for name, values in _outputs(back, X).items():
            np.testing.assert_array_equal(values, expected[name], err_msg=name)


# SMC with small populations: the round trip does not depend on their size
AUC_FITS = {
    "smc": dict(method="smc", n_particles=30, len_chain=3, grid_size=5),
    "smc_gp": dict(method="smc", kernel="rbf", lam=60.0, n_particles=30,
                   len_chain=3),
    "ep": dict(method="ep"),
    "ep_gp": dict(method="ep", kernel="rbf"),
    "ep_spike_slab": dict(method="ep", prior="spike_slab", lam=60.0),
    "ep_ard": dict(method="ep", lam=60.0, hyperparameters="evidence"),
    "vb": dict(method="vb"),
}


@pytest.mark.parametrize("name", list(AUC_FITS))
def test_fitted_auc_estimator_predicts_the_same_after_pickle_and_joblib(name):
    X, y = noisy_linear(60, [1.0, -0.5, 0.0], seed=0)
    est = PACBayesAUC(random_state=0, **AUC_FITS[name]).fit(X[:40], y[:40])
    _assert_same_predictions(est, X[40:])


def test_ep_in_score_space_predicts_the_same_after_a_round_trip():
    X, y = noisy_linear(30, [1.0, -0.5], seed=1, d=40)
    est = PACBayesAUC(method="ep", random_state=0).fit(X, y)
    assert est.approximation_.space_ == "score"
    _assert_same_predictions(est, X)


def test_ep_covariance_left_for_first_access_is_computed_after_a_round_trip():
    """With d > n EP's covariance of theta (d x d) is computed on first
    access; a model pickled before that computes the same one."""
    X, y = noisy_linear(30, [1.0, -0.5], seed=1, d=40)
    model = EPLinear(X, y, lam=30.0)
    model.fit()
    assert model.space_ == "score"
    assert model.result_._cov is None       # not computed yet: the lazy path
    backs = _round_trips(model)
    for back in backs:
        np.testing.assert_array_equal(back.result_.cov, model.result_.cov)
        np.testing.assert_array_equal(back.predict(X, return_var=True),
                                      model.predict(X, return_var=True))


@pytest.mark.parametrize("method", CLASSIFIER_METHODS)
def test_fitted_classifier_predicts_the_same_after_pickle_and_joblib(method):
    X, y = noisy_linear(60, [1.0, -0.5, 0.0], seed=0)
    kwargs = dict(n_particles=30, len_chain=3) if method == "smc" else {}
    est = PACBayesClassifier(method=method, random_state=0,
                             **kwargs).fit(X[:40], y[:40])
    _assert_same_predictions(est, X[40:])
