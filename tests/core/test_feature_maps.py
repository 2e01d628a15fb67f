"""Finite feature maps of the squared-exponential kernel: Nystrom features
reproduce the kernel on their inducing rows and the Nystrom approximation
elsewhere; random Fourier features converge to the kernel."""

import numpy as np
import pytest
from scipy.spatial.distance import pdist

from pac_particles.core.checks import InputError
from pac_particles.core.feature_maps import (NystromFeatures,
                                             RandomFourierFeatures,
                                             median_lengthscale)
from pac_particles.core.kernels import SquaredExponential


def _rows(n, d=3, seed=0):
    return np.random.default_rng(seed).standard_normal((n, d))


def test_nystrom_on_every_row_reproduces_the_gram_matrix():
    X = _rows(40)
    kernel = SquaredExponential([1.0, 2.0, 0.5], amplitude=1.5)
    Phi = NystromFeatures(kernel, X)(X)
    np.testing.assert_allclose(Phi @ Phi.T, kernel(X), atol=1e-8)


def test_nystrom_on_a_subset_is_the_nystrom_approximation():
    X, Z = _rows(50), _rows(12, seed=1)
    kernel = SquaredExponential(1.3)
    Phi = NystromFeatures(kernel, Z)(X)
    K_nz = kernel(X, Z)
    reference = K_nz @ np.linalg.solve(kernel(Z), K_nz.T)
    np.testing.assert_allclose(Phi @ Phi.T, reference, atol=1e-8)
    # and it misses part of the kernel: the test can tell the two apart
    assert np.max(np.abs(kernel(X) - Phi @ Phi.T)) > 1e-2


def test_nystrom_drops_a_duplicated_inducing_row_instead_of_inverting_it():
    Z = _rows(10)
    Z = np.vstack([Z, Z[:1]])
    phi = NystromFeatures(SquaredExponential(1.0), Z)
    assert phi.rank == 10
    Phi = phi(Z)
    assert np.all(np.isfinite(Phi))
    np.testing.assert_allclose(Phi @ Phi.T, SquaredExponential(1.0)(Z),
                               atol=1e-6)


def test_random_fourier_features_converge_to_the_kernel():
    X = _rows(20)
    kernel = SquaredExponential([0.8, 1.5, 2.0], amplitude=2.0)
    errors = []
    for rank in (50, 20000):
        Phi = RandomFourierFeatures(kernel, 3, rank, seed=0)(X)
        errors.append(np.max(np.abs(Phi @ Phi.T - kernel(X))))
    # Monte Carlo error of order amplitude * sqrt(2 / r)
    assert errors[1] < 0.1 < errors[0]


def test_median_lengthscale_is_the_median_pairwise_distance():
    X = _rows(60)
    assert median_lengthscale(X) == pytest.approx(np.median(pdist(X)))


def test_feature_maps_refuse_bad_input():
    with pytest.raises(InputError, match="inducing"):
        NystromFeatures(SquaredExponential(1.0), np.empty((0, 2)))
    with pytest.raises(InputError, match="SquaredExponential"):
        RandomFourierFeatures(lambda a, b: a @ b.T, 2, 10)
    with pytest.raises(InputError, match="distinct"):
        median_lengthscale(np.ones((5, 2)))
