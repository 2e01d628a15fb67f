"""The risk on an accelerator (JAX, here on the CPU): the numba kernel's
numbers from the device's counts, chunking, the scoped 64-bit mode, and
the errors of a missing or unknown backend."""

import pickle
import subprocess
import sys

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from pac_particles.core.checks import InputError
from pac_particles.problem.accelerated_risk import (
    BACKENDS, COUNT_METHODS, DeviceLinearRisk, check_backend, import_jax)
from pac_particles.problem.risks import (LOSSES, AUCRisk, ClassificationRisk,
                                         SampledAUCRisk)


def test_an_unknown_backend_is_refused_naming_the_choices():
    with pytest.raises(InputError, match="backend must be one of.*numba.*jax"):
        check_backend("cuda")
    assert check_backend("jax") == "jax" and BACKENDS == ("numba", "jax")


def test_without_jax_the_backend_says_how_to_install_it(monkeypatch):
    # a None entry in sys.modules makes the import fail, as when absent
    monkeypatch.setitem(sys.modules, "jax", None)
    with pytest.raises(InputError, match=r"pip install pac_particles\[jax\]"):
        import_jax()


def test_the_package_does_not_import_jax_unless_asked():
    code = ("import sys; import pac_particles.smc.models, "
            "pac_particles.sklearn.estimator, "
            "pac_particles.problem.accelerated_risk; "
            "print(sys.modules.get('jax') is not None)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True,
                         text=True, check=True).stdout
    assert out.strip() == "False"


@pytest.fixture
def jax():
    """JAX, or the test is skipped (the backend is an optional extra)."""
    return pytest.importorskip("jax")


def _tied_scores(rng, N, n):
    """Score rows with many ties (rounded), and -0.0 beside 0.0."""
    scores = rng.normal(size=(N, n)).round(1)
    scores[:, :3] = 0.0
    scores[:, 3:6] = -0.0
    return scores


@pytest.mark.parametrize("count", COUNT_METHODS)
@pytest.mark.parametrize("pi", [0.5, 0.04])
def test_auc_counts_equal_the_numba_kernel_bit_for_bit(rng, count, pi, jax):
    """Same scores, ties and unbalanced classes: the same float64 risks,
    for one row and for more rows than a chunk holds."""
    n = 301
    y = rng.random(n) < pi
    y[:2] = [True, False]
    risk = AUCRisk(y)
    device = DeviceLinearRisk(risk, np.zeros((n, 1)), chunk_particles=8,
                              count=count)
    for N in (1, 21):
        scores = _tied_scores(rng, N, n)
        numba = risk(scores)
        assert np.array_equal(device.rows(scores[:, risk.order]), numba)
        assert np.any(numba != numba.round(2))  # ties made half-counts


def test_minus_zero_ties_with_zero(jax):
    risk = AUCRisk([1, 0])
    device = DeviceLinearRisk(risk, np.zeros((2, 1)))
    assert device.rows([[-0.0, 0.0]])[0] == risk(np.array([-0.0, 0.0])) == 0.5


@pytest.mark.parametrize("count", COUNT_METHODS)
def test_linear_auc_risk_is_exact_on_integer_data(rng, count, jax):
    """Integer features and particles make every product exact in any
    summation order: the device's linear risks are the host's, bit for bit,
    across chunks, for a 1-D theta too."""
    n, d = 400, 3
    X = rng.integers(-2, 3, size=(n, d)).astype(float)
    y = rng.random(n) < 0.2
    risk = AUCRisk(y)
    X_ordered = risk.ordered(X)
    device = DeviceLinearRisk(risk, X_ordered, chunk_particles=8, count=count)
    theta = rng.integers(-2, 3, size=(19, d)).astype(float)
    assert np.array_equal(device.linear(theta), risk.linear(theta, X_ordered))
    one = device.linear(theta[0])
    assert isinstance(one, float) and one == risk.linear(theta[0], X_ordered)


def test_linear_auc_risk_is_one_minus_sklearn_auc(rng, jax):
    n, d = 500, 4
    X = rng.normal(size=(n, d)).round(1)
    y = X[:, 0] + rng.normal(size=n) > 0.8
    risk = AUCRisk(y)
    device = DeviceLinearRisk(risk, risk.ordered(X))
    theta = rng.normal(size=(5, d))
    expected = [1.0 - roc_auc_score(y, X @ t) for t in theta]
    np.testing.assert_allclose(device.linear(theta), expected, rtol=0,
                               atol=1e-12)


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("pu_prior", [None, 0.3])
def test_point_risks_equal_the_numba_kernel(rng, loss, pu_prior, jax):
    """The same losses and weights, summed in the device's order: equal to
    a few ulps, scores with margins of exactly 0 included."""
    n = 200
    y = rng.random(n) < 0.3
    risk = ClassificationRisk(y, loss, pu_prior)
    device = DeviceLinearRisk(risk, np.zeros((n, 1)), chunk_particles=8)
    scores = _tied_scores(rng, 11, n)
    np.testing.assert_allclose(device.rows(scores), risk(scores), rtol=1e-12)
    X = rng.normal(size=(n, 4))
    theta = rng.normal(size=(3, 4))
    device = DeviceLinearRisk(risk, X)
    np.testing.assert_allclose(device.linear(theta), risk(theta @ X.T),
                               rtol=1e-12)


def test_the_sampled_pair_risk_is_not_offered(rng, jax):
    y = rng.random(50) < 0.5
    with pytest.raises(InputError, match="SampledAUCRisk"):
        DeviceLinearRisk(SampledAUCRisk(y, 100, seed=0), np.zeros((50, 1)))


def test_64_bit_mode_stays_inside_the_backend(rng, jax):
    import jax.numpy as jnp
    if jax.config.jax_enable_x64:
        pytest.skip("the user's JAX runs in 64 bits already")
    risk = AUCRisk(rng.random(40) < 0.5)
    X = rng.normal(size=(40, 2))
    DeviceLinearRisk(risk, risk.ordered(X)).linear(rng.normal(size=(3, 2)))
    assert jnp.zeros(1).dtype == jnp.float32


def test_a_pickled_device_risk_puts_its_design_again(rng, jax):
    """joblib workers receive models by pickle: the device buffers are
    dropped and put again on first use."""
    y = rng.random(60) < 0.5
    risk = AUCRisk(y)
    X_ordered = risk.ordered(rng.normal(size=(60, 3)))
    device = DeviceLinearRisk(risk, X_ordered)
    theta = rng.normal(size=(4, 3))
    before = device.linear(theta)
    copy = pickle.loads(pickle.dumps(device))
    assert np.array_equal(copy.linear(theta), before)
