"""The estimators' ``backend``: SMC's risk on JAX's device (here the CPU)
gives the fit of the numba kernels, in every model the fit builds (the
folds of ``lam='cv'`` included); bad values and GP scores are refused."""

import numpy as np
import pytest
from sklearn.base import clone

from builders import noisy_linear
import pac_particles.sklearn.methods.smc as smc_method
from pac_particles.sklearn.classifier import PACBayesClassifier
from pac_particles.sklearn.estimator import PACBayesAUC

#: few particles: every batch of risks pads to one shape on the device, and
#: JAX compiles once per shape (about a second on the CPU)
SMALL = dict(n_particles=4, len_chain=2, random_state=0, n_jobs=1)


@pytest.fixture(scope="module")
def data():
    # 34 positives of 80: the two folds' training parts have the same
    # sizes, so the same compiled shapes
    return noisy_linear(80, [1.0, -0.5], seed=0, d=3)


@pytest.fixture
def jax():
    """JAX, or the test is skipped (the backend is an optional extra)."""
    return pytest.importorskip("jax")


def _assert_same_auc_fit(device, host):
    """As tests/smc/test_accelerated_smc.py: equal risks give the same run
    (the scores of two matrix products, the host's BLAS and XLA's, hence
    a tolerance)."""
    assert device.lam_ == host.lam_
    np.testing.assert_allclose(device.log_evidence_, host.log_evidence_,
                               rtol=1e-12)
    np.testing.assert_allclose(device.coef_, host.coef_, rtol=1e-10,
                               atol=1e-12)


def test_backend_is_a_parameter_that_round_trips():
    for cls in (PACBayesAUC, PACBayesClassifier):
        assert cls().get_params()["backend"] == "numba"
        est = cls(backend="jax")
        assert clone(est).get_params()["backend"] == "jax"
        assert est.set_params(backend="numba").backend == "numba"


@pytest.mark.parametrize("cls", [PACBayesAUC, PACBayesClassifier])
def test_an_unknown_backend_is_refused_naming_it(data, cls):
    X, y = data
    with pytest.raises(ValueError, match="backend must be one of"):
        cls(method="smc", lam=10.0, backend="cuda", **SMALL).fit(X, y)


def test_gp_scores_have_no_device_backend(data):
    X, y = data
    est = PACBayesAUC(method="smc", lam=10.0, kernel="rbf", backend="jax",
                      **SMALL)
    with pytest.raises(ValueError, match="backend='jax'.*kernel"):
        est.fit(X, y)


def test_vb_ignores_the_backend(data):
    X, y = data
    fits = [PACBayesAUC(method="vb", lam=10.0, backend=backend,
                        random_state=0).fit(X, y)
            for backend in ("numba", "jax")]
    np.testing.assert_array_equal(fits[1].coef_, fits[0].coef_)


def test_smc_at_a_given_lam_on_the_device_repeats_the_numba_fit(data, jax):
    X, y = data
    host, device = (PACBayesAUC(method="smc", lam=40.0, backend=backend,
                                **SMALL).fit(X, y)
                    for backend in ("numba", "jax"))
    assert device.posterior_.predictor.backend == "jax"
    _assert_same_auc_fit(device, host)


def test_the_folds_of_lam_cv_run_on_the_device(data, jax, monkeypatch):
    """Every model of lam='cv' (the folds', the path refit's on the fit's
    own problem, the chosen step's) gets the backend."""
    X, y = data
    built = []
    for name in ("linear_score_model", "linear_score_model_for"):
        make = getattr(smc_method, name)

        def recording(*args, make=make, **kwargs):
            model = make(*args, **kwargs)
            built.append(model.backend)
            return model
        monkeypatch.setattr(smc_method, name, recording)
    settings = dict(SMALL, method="smc", lam="cv", n_folds=2, grid_size=4,
                    fold_particles=4, fold_len_chain=2)
    host, device = (PACBayesAUC(backend=backend, **settings).fit(X, y)
                    for backend in ("numba", "jax"))
    # two folds, the path refit and the chosen step
    assert built == ["numba"] * 4 + ["jax"] * 4
    assert device.posterior_.predictor.backend == "jax"
    np.testing.assert_allclose(device.cv_.mean_auc, host.cv_.mean_auc,
                               rtol=1e-12)
    _assert_same_auc_fit(device, host)


def test_the_classifier_on_the_device_matches_the_numba_fit(data, jax):
    """Point risks summed in another order (a few ulps apart): the fits
    agree to that order, as the models' runs do."""
    X, y = data
    host, device = (PACBayesClassifier(method="smc", lam=40.0,
                                       backend=backend, **SMALL).fit(X, y)
                    for backend in ("numba", "jax"))
    assert device.posterior_.predictor.backend == "jax"
    np.testing.assert_allclose(device.log_evidence_, host.log_evidence_,
                               rtol=1e-8)
    np.testing.assert_allclose(device.coef_, host.coef_, rtol=1e-6,
                               atol=1e-8)
    np.testing.assert_allclose(device.intercept_, host.intercept_, rtol=1e-6,
                               atol=1e-8)
