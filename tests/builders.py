"""Synthetic data for the tests: one builder per kind of data set.

Builders are plain functions of ``(n, ..., seed)`` (import them with
``from builders import two_d_problem``) so that every test states the size
and seed of its data; ``conftest.py`` holds the fixtures (the seeded
generator, the Pima data loaded once per session). The independent references (quadrature,
exact draws, pairwise definitions) live in ``lab/reference/quadrature.py``,
the helpers that check against them in ``reference.py``.

* :func:`two_d_problem`, :func:`sparse_two_d_problem`: d = 2 data for the
  comparisons with the exact quadrature posterior.
* :func:`noisy_linear`: ``y = 1{X[:, :k] w + noise * eps > 0}``, X standard
  normal (optionally rounded, which ties feature values).
* :func:`tied_data`: linear data with one positive identical to one
  negative (a pair with ``d_ij = 0``).
* :func:`two_blobs`, :func:`gaussian_classes`: Gaussian classes, positives
  shifted (fixed class sizes, or Bernoulli labels).
* :func:`ellipse_problem`: features, ellipses and uniforms for the
  exact-ellipse angle draws.
* :func:`tempered_particles`: particles at the tempered target
  ``prior * exp(epn * loglik)``, as the SMC sampler hands them to a move.
"""

import numpy as np
from particles import smc_samplers as ssp


# ------------------------------------------------------------------ d = 2


def two_d_problem(n=200, seed=3):
    """X ~ N(0, I_2), y = 1{x . (1, 0.5) + 0.8 eps > 0}."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = (X @ [1.0, 0.5] + 0.8 * rng.normal(size=n) > 0).astype(int)
    return X, y


def sparse_two_d_problem(n=200, seed=3):
    """As :func:`two_d_problem` but y depends mostly on the first feature."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    rng.normal(size=n)  # same stream as the other d = 2 tests' noise draw
    y = (X @ [1.0, 0.15] + 0.8 * rng.normal(size=n) > 0).astype(int)
    return X, y


# ------------------------------------------------------------ linear labels


def noisy_linear(n, weights, seed=0, d=None, noise=1.0, decimals=None):
    """X ~ N(0, I_d) (rounded to ``decimals``: tied feature values), labels
    ``1{X[:, :k] @ weights + noise * eps > 0}``, k = len(weights); d
    defaults to k, ``noise=0`` gives separable data (no draw)."""
    weights = np.asarray(weights, dtype=float)
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, weights.size if d is None else d))
    if decimals is not None:
        X = X.round(decimals)
    score = X[:, :weights.size] @ weights
    if noise:
        score = score + noise * rng.normal(size=n)
    return X, (score > 0).astype(int)


def tied_data(n, d, seed=1):
    """Small data set with one positive identical to one negative (boolean
    labels)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = X @ np.linspace(1.0, -0.5, d) + rng.normal(size=n) > 0
    X[3], y[3], y[10] = X[10], True, False
    return X, y


# --------------------------------------------------------- Gaussian classes


def two_blobs(n, d, seed, shift=1.0, n_pos=None):
    """Positives (the first ``n_pos``, default n // 2) shifted by ``shift``
    along a fixed unit direction; labels in {0, 1}."""
    rng = np.random.default_rng(seed)
    n_pos = n // 2 if n_pos is None else n_pos
    y = (np.arange(n) < n_pos).astype(int)
    X = rng.standard_normal((n, d))
    direction = np.linspace(1.0, 0.2, d)
    X[y == 1] += shift * direction / np.linalg.norm(direction)
    return X, y


def gaussian_classes(n, pi, delta, rng):
    """X | Y ~ N(Y delta, I), Y ~ Bernoulli(pi) (boolean labels)."""
    y = rng.random(n) < pi
    return rng.normal(size=(n, len(delta))) + np.outer(y, delta), y


def ellipse_problem(rng, binary, n_rows, n_pos=12, n_neg=15, d=3):
    """Inputs of the exact-ellipse angle draws: ``X_pos, X_neg`` (binary
    features: coincident break points and ties, else normal), ``n_rows``
    ellipses ``theta cos + nu sin`` and two uniforms per ellipse."""
    if binary:
        X_pos = rng.integers(0, 2, size=(n_pos, d)).astype(float)
        X_neg = rng.integers(0, 2, size=(n_neg, d)).astype(float)
    else:
        X_pos, X_neg = rng.normal(size=(n_pos, d)), rng.normal(size=(n_neg, d))
    theta, nu = rng.normal(size=(n_rows, d)), rng.normal(size=(n_rows, d))
    u_arc, u_within = rng.uniform(size=n_rows), rng.uniform(size=n_rows)
    return X_pos, X_neg, theta, nu, u_arc, u_within


# --------------------------------------------------------------- particles


def tempered_particles(model, theta, epn, **fields):
    """Particles with parameters ``theta`` (and other prior ``fields``, e.g.
    ``z``) at the target ``prior * exp(epn * loglik)``, evaluated by
    particles' own tempering target as AdaptiveTempering hands them to a
    move (exponent in x.shared). Returns ``(x, target)``."""
    target = ssp.AdaptiveTempering(model).current_target(epn)
    arr = np.empty(theta.shape[0], dtype=model.prior.rvs(size=1).dtype)
    arr["theta"] = theta
    for name, values in fields.items():
        arr[name] = values
    x = ssp.ThetaParticles(theta=arr, shared={"exponents": [0.0, epn]})
    target(x)
    return x, target


def every_pair(ep):
    """Make the sampled risk of ``ep`` list each of the P pairs once."""
    risk = ep.risk
    i, j = np.divmod(np.arange(risk.n_pairs), risk.n_neg)
    risk.first[:] = i
    risk.second[:] = risk.n_pos + j
    risk.pair_pos[:], risk.pair_neg[:] = i, j
    ep._sites = ep._input_sites()
