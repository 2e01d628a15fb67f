"""Covariance functions of the Gaussian-process priors on latent scores.

A GP prior puts ``s = (s(x_1), ..., s(x_n)) ~ N(0, K)``, ``K_ij = k(x_i, x_j)``
on the scores of the training points [RACL14, Sec. 4]; the AUC Gibbs
posterior of ``s`` is then sampled by SMC (:class:`~pac_particles.smc.models.GPAUCModel`)
or approximated by EP (:class:`~pac_particles.approx.ep.EPGP`), and new inputs are
scored by the GP predictive (:func:`~pac_particles.core.gaussian.gp_predictive`).

* :class:`SquaredExponential` -- ARD squared-exponential kernel, with the
  derivatives EP's evidence maximisation needs;
* :class:`LinearKernel` -- ``x' S0 x``: the GP form of the linear-score model
  with prior ``theta ~ N(0, S0)`` (used when ``d > n``);
* :func:`gram_matrix` -- ``kernel(X, X)`` checked and symmetrised.

Example
-------
::

    from pac_particles.core.kernels import SquaredExponential, gram_matrix
    k = SquaredExponential(lengthscale=[1.0, 2.0])
    K = gram_matrix(k, X)            # (n, n)

References
----------
[RACL14] Ridgway, J., Alquier, P., Chopin, N. and Liang, F. (2014).
PAC-Bayesian AUC classification and scoring. NIPS 27, section 4.

[RW06] Rasmussen, C. E. and Williams, C. K. I. (2006). Gaussian Processes
for Machine Learning. MIT Press, chapter 4 (kernels) and 5.4 (evidence
gradients).
"""

import numpy as np

from pac_particles.core.checks import InputError

__all__ = ["SquaredExponential", "LinearKernel", "gram_matrix", "kernel_diag"]


class SquaredExponential:
    """Squared-exponential kernel with ARD lengthscales.

    ``k(x, x') = amplitude * exp(-0.5 * sum_k (x_k - x'_k)^2 / lengthscale_k^2)``

    Parameters
    ----------
    lengthscale : float or array of shape (d,), > 0
    amplitude : float > 0
        Irrelevant to the AUC (scores are scale free) but kept for predictive
        variances.

    ``log_params`` is ``[log lengthscale(s)..., log amplitude]``.
    """

    def __init__(self, lengthscale=1.0, amplitude=1.0):
        ls = np.atleast_1d(np.asarray(lengthscale, dtype=float))
        if ls.ndim != 1 or not np.all(np.isfinite(ls)) or np.any(ls <= 0):
            raise InputError("lengthscale must be a positive number or a 1-D "
                             "array of positive numbers")
        amplitude = float(amplitude)
        if not (np.isfinite(amplitude) and amplitude > 0):
            raise InputError(f"amplitude must be > 0, got {amplitude}")
        self.lengthscale = ls
        self.amplitude = amplitude

    def __repr__(self):
        return (f"SquaredExponential(lengthscale="
                f"{np.array2string(self.lengthscale, precision=4)}, "
                f"amplitude={self.amplitude:.4g})")

    @property
    def log_params(self):
        return np.concatenate([np.log(self.lengthscale), [np.log(self.amplitude)]])

    @log_params.setter
    def log_params(self, value):
        value = np.asarray(value, dtype=float)
        self.lengthscale = np.exp(value[:-1])
        self.amplitude = float(np.exp(value[-1]))

    def _scaled(self, X):
        X = np.asarray(X, dtype=float)
        if self.lengthscale.size not in (1, X.shape[1]):
            raise InputError(f"{self.lengthscale.size} lengthscales for "
                             f"{X.shape[1]} input columns")
        return X / self.lengthscale

    def __call__(self, X1, X2=None):
        A = self._scaled(X1)
        B = A if X2 is None else self._scaled(X2)
        sq = (np.sum(A * A, 1)[:, None] + np.sum(B * B, 1)[None, :]
              - 2.0 * A @ B.T)
        return self.amplitude * np.exp(-0.5 * np.maximum(sq, 0.0))

    def diag(self, X):
        return np.full(np.asarray(X).shape[0], self.amplitude)

    def gradients(self, X):
        """``dK / d log_params``: array (n_params, n, n) (small problems)."""
        X = np.asarray(X, dtype=float)
        K = self(X)
        out = []
        cols = ([X] if self.lengthscale.size == 1
                else [X[:, [k]] for k in range(X.shape[1])])
        for k, Xk in enumerate(cols):
            sq = np.sum((Xk[:, None, :] - Xk[None, :, :]) ** 2, axis=-1)
            out.append(K * sq / self.lengthscale[k] ** 2)
        out.append(K)
        return np.stack(out)

    def contract_gradients(self, X, M):
        """``sum_ab M_ab dK_ab / d log_params`` for symmetric M in O(n^2 d),
        without forming the n x n derivative matrices."""
        X = np.asarray(X, dtype=float)
        MK = M * self(X)
        row = MK.sum(axis=1)
        # sum_ab MK_ab (x_ak - x_bk)^2 = 2 (row . x_k^2 - x_k' MK x_k)
        per_col = 2.0 * (row @ (X * X) - np.einsum("ak,ak->k", X, MK @ X))
        if self.lengthscale.size == 1:
            g_len = np.array([per_col.sum() / self.lengthscale[0] ** 2])
        else:
            g_len = per_col / self.lengthscale ** 2
        return np.concatenate([g_len, [np.sum(MK)]])


class LinearKernel:
    """Linear kernel ``k(x, x') = x' S0 x`` with ``S0 = diag(prior_var)``.

    A GP with this kernel on the training inputs is the linear-score model
    with prior ``theta ~ N(0, S0)``: ``s = X theta ~ N(0, X S0 X')``.
    """

    def __init__(self, prior_var=1.0):
        prior_var = np.asarray(prior_var, dtype=float)
        if not np.all(np.isfinite(prior_var)) or np.any(prior_var <= 0):
            raise InputError("prior_var must be finite and > 0")
        self.prior_var = prior_var

    def __repr__(self):
        return f"LinearKernel(prior_var={self.prior_var})"

    def __call__(self, X1, X2=None):
        X1 = np.asarray(X1, dtype=float)
        X2 = X1 if X2 is None else np.asarray(X2, dtype=float)
        if self.prior_var.ndim == 1 and self.prior_var.size != X1.shape[1]:
            raise InputError(f"{self.prior_var.size} prior variances for "
                             f"{X1.shape[1]} input columns")
        return (X1 * self.prior_var) @ X2.T

    def diag(self, X):
        X = np.asarray(X, dtype=float)
        return np.sum(X * X * self.prior_var, axis=1)


def gram_matrix(kernel, X, label="kernel"):
    """``kernel(X, X)`` checked: finite, square, symmetrised."""
    K = np.asarray(kernel(X, X), dtype=float)
    n = np.asarray(X).shape[0]
    if K.shape != (n, n):
        raise InputError(f"{label} returned a matrix of shape {K.shape}, "
                         f"expected ({n}, {n})")
    if not np.all(np.isfinite(K)):
        raise InputError(f"{label} returned NaN or infinite entries")
    return 0.5 * (K + K.T)


def kernel_diag(kernel, X):
    """Prior variances ``k(x, x)`` of the rows of ``X``: the kernel's own
    ``diag`` when it has one, else one 1 x 1 evaluation per row (never the
    m x m matrix)."""
    if hasattr(kernel, "diag"):
        return np.asarray(kernel.diag(X), dtype=float)
    X = np.asarray(X, dtype=float)
    return np.array([np.asarray(kernel(x[None], x[None]), dtype=float)[0, 0]
                     for x in X])
