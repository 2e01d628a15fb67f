"""Finite feature maps of a squared-exponential kernel: the reduced-rank
GP prior.

A feature map ``phi: R^d -> R^r`` with ``phi(x) . phi(x') ~ k(x, x')``
turns the GP prior on scores into a linear one: ``s(x) = phi(x) . w``,
``w ~ N(0, I_r)``, has covariance ``Phi Phi'`` on any rows. The Gibbs
posterior then lives in ``r`` dimensions, and every sampler, approximation
and certificate of linear scores applies to ``w`` unchanged.

* :class:`NystromFeatures` -- ``phi(x) = k(x, Z) K_ZZ^{-1/2}`` on inducing
  inputs ``Z`` [WS01]: on the rows of ``Z`` themselves ``Phi Phi' = K_ZZ``
  exactly, so with every training row as an inducing input the prior of
  the training scores is the exact GP's; with fewer it is the Nystrom
  approximation ``K_nZ K_ZZ^-1 K_Zn``, the prior of the subset-of-regressors
  model (the prior of GPflow's SVGP conditioned on its inducing values).
* :class:`RandomFourierFeatures` -- ``phi(x) = sqrt(2 a / r) cos(W x + b)``
  with ``W ~ N(0, diag(lengthscale)^-2)``, ``b ~ U(0, 2 pi)`` [RR07]: an
  unbiased Monte Carlo estimate of the kernel, independent of the rows.
* :func:`median_lengthscale` -- the median of the pairwise distances of a
  sample of rows, the usual starting point of a lengthscale grid.

Example
-------
::

    from pac_particles.core.feature_maps import NystromFeatures
    from pac_particles.core.kernels import SquaredExponential
    phi = NystromFeatures(SquaredExponential(3.0), X[:200])
    Phi = phi(X)                       # (n, r), Phi @ Phi.T ~ K

References
----------
[WS01] Williams, C. K. I. and Seeger, M. (2001). Using the Nystrom method
to speed up kernel machines. NIPS 13.

[RR07] Rahimi, A. and Recht, B. (2007). Random features for large-scale
kernel machines. NIPS 20.
"""

from typing import Optional

import numpy as np

from pac_particles.core.checks import InputError, check_count
from pac_particles.core.kernels import SquaredExponential, gram_matrix

__all__ = ["NystromFeatures", "RandomFourierFeatures", "median_lengthscale",
           "NYSTROM_RTOL", "BLOCK_ROWS"]

#: eigenvalues of ``K_ZZ`` below this times the largest are dropped from
#: ``K_ZZ^{-1/2}`` (a pseudo-inverse square root): near-duplicate inducing
#: inputs then lose a feature instead of blowing up the others by rounding
NYSTROM_RTOL = 1e-10
#: rows mapped at once: the (rows, r) kernel block and its temporaries stay
#: in cache, several times faster than one block of all the rows, the same
#: numbers (docs/benchmarks.md, "GP scores at scale: the reduced-rank prior")
BLOCK_ROWS = 1024


class NystromFeatures:
    """Nystrom features ``phi(x) = k(x, Z) U diag(e)^{-1/2}`` of a kernel on
    inducing inputs ``Z``, ``K_ZZ = U diag(e) U'`` (module docstring).

    Parameters
    ----------
    kernel : callable ``kernel(X1, X2) -> Gram``
    inducing : array of shape (m, d), the inducing inputs ``Z``.
    rtol : float, eigenvalues of ``K_ZZ`` kept relative to the largest
        (:data:`NYSTROM_RTOL`).

    Attributes
    ----------
    rank : the number of features r (at most m: eigenvalues of ``K_ZZ``
        below ``rtol`` times the largest are dropped).
    projection : (m, r) ``U_r diag(e_r)^{-1/2}``.
    """

    def __init__(self, kernel, inducing: np.ndarray, rtol: float = NYSTROM_RTOL):
        Z = np.asarray(inducing, dtype=float)
        if Z.ndim != 2 or Z.shape[0] == 0:
            raise InputError(f"inducing inputs must be a non-empty 2-D array, "
                             f"got shape {Z.shape}")
        if not callable(kernel):
            raise InputError("kernel must be callable: kernel(X1, X2) -> Gram")
        self.kernel, self.inducing = kernel, Z
        eig, U = np.linalg.eigh(gram_matrix(kernel, Z, label="kernel on the "
                                            "inducing inputs"))
        keep = eig > rtol * eig[-1]
        self.projection = U[:, keep] / np.sqrt(eig[keep])

    def __repr__(self):
        return f"NystromFeatures({self.kernel!r}, m={self.inducing.shape[0]}, r={self.rank})"

    @property
    def rank(self) -> int:
        return self.projection.shape[1]

    def __call__(self, X: np.ndarray) -> np.ndarray:
        """``Phi`` (n, r) of the rows of ``X``."""
        X = np.asarray(X, dtype=float)
        out = np.empty((X.shape[0], self.rank))
        for lo in range(0, X.shape[0], BLOCK_ROWS):
            block = np.asarray(self.kernel(X[lo:lo + BLOCK_ROWS],
                                           self.inducing), dtype=float)
            out[lo:lo + BLOCK_ROWS] = block @ self.projection
        return out


class RandomFourierFeatures:
    """Random Fourier features of the squared-exponential kernel
    ``amplitude * exp(-|x - x'|^2_lengthscale / 2)`` (module docstring).

    Parameters
    ----------
    kernel : :class:`~pac_particles.core.kernels.SquaredExponential`
    d : int, input dimension; rank : int, number of features r.
    seed : int or numpy Generator, the draw of the frequencies.
    """

    def __init__(self, kernel: SquaredExponential, d: int, rank: int,
                 seed=None):
        if not isinstance(kernel, SquaredExponential):
            raise InputError("random Fourier features are those of a "
                             "SquaredExponential kernel, got "
                             f"{type(kernel).__name__}")
        d, rank = check_count(d, "d"), check_count(rank, "rank")
        rng = np.random.default_rng(seed)
        self.kernel = kernel
        self.frequencies = (rng.standard_normal((d, rank))
                            / np.broadcast_to(kernel.lengthscale, (d,))[:, None])
        self.phases = rng.uniform(0.0, 2.0 * np.pi, rank)

    @property
    def rank(self) -> int:
        return self.phases.size

    def __call__(self, X: np.ndarray) -> np.ndarray:
        X = np.asarray(X, dtype=float)
        scale = np.sqrt(2.0 * self.kernel.amplitude / self.rank)
        return scale * np.cos(X @ self.frequencies + self.phases)


def median_lengthscale(X: np.ndarray, max_rows: int = 1000,
                       seed: Optional[int] = None) -> float:
    """The median distance between distinct rows of a sample of at most
    ``max_rows`` rows of ``X`` (the median heuristic; drawn from ``seed``)."""
    X = np.asarray(X, dtype=float)
    rng = np.random.default_rng(seed)
    if X.shape[0] > max_rows:
        X = X[rng.choice(X.shape[0], max_rows, replace=False)]
    sq = np.sum(X * X, axis=1)
    dist2 = sq[:, None] + sq[None, :] - 2.0 * X @ X.T
    dist2 = dist2[np.triu_indices(X.shape[0], k=1)]
    dist2 = dist2[dist2 > 0]
    if dist2.size == 0:
        raise InputError("the median lengthscale needs two distinct rows")
    return float(np.sqrt(np.median(dist2)))
