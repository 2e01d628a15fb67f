"""SMC with the risk on JAX's device (here the CPU): the same run as with
the numba kernels, through run_smc and through particles itself."""

import sys

import numpy as np
import particles
import pytest
from particles import smc_samplers as ssp

from builders import noisy_linear
from pac_particles.core.checks import InputError
from pac_particles.smc.models import (AUCGibbsModel, ClassificationGibbsModel,
                                      SpanAUCModel)
from pac_particles.smc.posterior import run_smc

@pytest.fixture(scope="module")
def data():
    return noisy_linear(150, [1.0, -0.5, 0.25], seed=4, d=4)


@pytest.fixture
def jax():
    """JAX, or the test is skipped (the backend is an optional extra)."""
    return pytest.importorskip("jax")


def test_a_bad_backend_name_is_refused(data):
    X, y = data
    with pytest.raises(InputError, match="backend must be one of"):
        AUCGibbsModel(X, y, lam=len(y), backend="gpu")


def test_the_jax_backend_without_jax_says_how_to_install_it(data,
                                                             monkeypatch):
    X, y = data
    monkeypatch.setitem(sys.modules, "jax", None)  # as when not installed
    with pytest.raises(InputError, match=r"pip install pac_particles\[jax\]"):
        ClassificationGibbsModel(X, y, lam=len(y), backend="jax")


def test_auc_smc_on_the_device_repeats_the_numba_run(data, jax):
    """Equal risks give the same run under the same seed: log Z, the
    tempering path and the particles. (The scores come from two matrix
    products, the host's BLAS and XLA's, hence a tolerance rather than
    equality; a flipped pair order would change the whole run.)"""
    X, y = data
    runs = [run_smc(AUCGibbsModel(X, y, lam=len(y), backend=backend),
                    n_particles=50, len_chain=5, seed=7)
            for backend in ("numba", "jax")]
    numba, device = runs
    assert device.n_steps == numba.n_steps
    assert device.n_risk_evaluations == numba.n_risk_evaluations
    np.testing.assert_allclose(device.log_z, numba.log_z, rtol=1e-12)
    np.testing.assert_allclose(device.theta, numba.theta, rtol=1e-10,
                               atol=1e-12)


def test_classification_smc_on_the_device_matches_the_numba_run(data, jax):
    """Hinge risks summed in another order (a few ulps apart): the runs
    agree to that order."""
    X, y = data
    runs = [run_smc(ClassificationGibbsModel(X, y, lam=len(y), loss="hinge",
                                             backend=backend),
                    n_particles=50, len_chain=5, seed=7,
                    evidence="tempering")
            for backend in ("numba", "jax")]
    np.testing.assert_allclose(runs[1].log_z, runs[0].log_z, rtol=1e-8)
    np.testing.assert_allclose(runs[1].theta, runs[0].theta, rtol=1e-6,
                               atol=1e-8)


def test_particles_own_tempering_runs_on_the_device(data, jax):
    """The model stays a plain particles StaticModel: particles'
    AdaptiveTempering reaches exponent 1 with the risk on the device."""
    X, y = data
    model = SpanAUCModel(X, y, lam=len(y), backend="jax")
    np.random.seed(0)
    smc = particles.SMC(fk=ssp.AdaptiveTempering(model, len_chain=5), N=50,
                        verbose=False)
    smc.run()
    assert smc.X.shared["exponents"][-1] == 1.0
    assert model.n_risk_evaluations > 0
