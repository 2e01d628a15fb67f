"""The certificate's part-A prior: the Laplace Gaussian of a logistic
regression fitted on the rows ``A`` alone (:mod:`pac_particles.bounds.
certification`'s module docstring).

Its covariance is the inverse of the penalised Hessian ``H = [Z, 1]' W [Z,
1] + diag(1/v, ..., 1/v, 0)`` (``W = diag(p (1 - p))``, ``v`` the prior
variance, the intercept unpenalised), by blocks: the coefficients' block is
the inverse of the Schur complement ``P = I / v + Zc' W Zc`` (``Zc``: the
rows of ``Z`` centred at their ``W``-weighted mean), the intercept's row and
column follow from it in O(d^2). ``P^-1`` is a dense ``d x d`` inversion
when ``A`` has at least ``d`` rows and the Woodbury identity ``P^-1 = v (I
- v B' (I + v B B')^-1 B)``, ``B = W^1/2 Zc``, with one ``n_A x n_A``
Cholesky factor when it has fewer (wide data): O(n_A^2 d + n_A d^2), no
O(d^3) step. The map back to the coordinates of ``X`` (a diagonal scaling
and, with the intercept, one row) is applied in O(d^2).
"""

from typing import Optional

import numpy as np
from scipy import linalg
from scipy.special import expit
from sklearn import config_context
from sklearn.linear_model import LogisticRegression, LogisticRegressionCV

from pac_particles.problem.data import AUCData

__all__ = ["part_a_prior", "schur_covariance", "PRIOR_VAR_GRID",
           "PRIOR_VAR_FOLDS", "GRAM_BLOCK_ROWS"]

#: prior variances (the logistic regression's C) a cross-validation on A
#: chooses among with ``prior_var="cv"``
PRIOR_VAR_GRID = tuple(np.geomspace(1e-3, 1e2, 11))
#: folds of that cross-validation (within A)
PRIOR_VAR_FOLDS = 5


#: rows per block of :func:`schur_covariance`'s weighted Gram matrix (a
#: block of ``B``'s rows stays in cache between its forming and its product)
GRAM_BLOCK_ROWS = 1024


def schur_covariance(Z: np.ndarray, prior_var: float,
                     shift: Optional[np.ndarray] = None,
                     weight_root: Optional[np.ndarray] = None) -> np.ndarray:
    """``(I / prior_var + B' B)^-1`` for the ``(n, d)`` array ``B =
    diag(weight_root) (Z - shift)`` (``B = Z`` without them), symmetric:
    by the Woodbury identity (one ``n x n`` Cholesky factor) where ``n <
    d``, else by a dense ``d x d`` inversion of ``B' B``, summed over
    blocks of :data:`GRAM_BLOCK_ROWS` rows, each formed and multiplied
    while in cache (one pass over ``Z``, no ``n x d`` copy of it)."""
    n, d = Z.shape
    v = float(prior_var)
    if n < d:
        B = Z if shift is None else Z - shift
        if weight_root is not None:
            B = B * weight_root[:, None]
        M = B @ B.T
        M *= v
        M[np.diag_indices(n)] += 1.0
        C = linalg.solve_triangular(np.linalg.cholesky(M), B, lower=True)
        cov = C.T @ C
        cov *= -v * v
        cov[np.diag_indices(d)] += v
        return 0.5 * (cov + cov.T)
    if shift is None and weight_root is None:
        P = Z.T @ Z                  # NumPy's symmetric rank-n update
    else:
        P = np.zeros((d, d))
        for start in range(0, n, GRAM_BLOCK_ROWS):
            block = Z[start:start + GRAM_BLOCK_ROWS]
            if shift is not None:
                block = block - shift
            if weight_root is not None:
                block = block * weight_root[start:start + GRAM_BLOCK_ROWS,
                                            None]
            P += block.T @ block
    P[np.diag_indices(d)] += 1.0 / v
    cov = np.linalg.inv(0.5 * (P + P.T))
    return 0.5 * (cov + cov.T)


def part_a_prior(X, y, in_a, prior_var=1.0, intercept=False):
    """``(mean, cov, prior_var)`` of the part-A prior in the coordinates of
    ``X`` (``prior_var`` the one used): the
    Laplace approximation of the L2-penalised logistic regression (penalty
    ``|w|^2 / (2 prior_var)``, intercept unpenalised) fitted on the rows
    ``in_a`` centred and scaled with their own moments, mapped back
    exactly (``theta = w / s_A``; with ``intercept`` the last column of
    ``X`` is the constant 1 and takes ``b - w . c_A / s_A``). A column
    constant on ``A`` is left unscaled. ``prior_var="cv"``: chosen among
    :data:`PRIOR_VAR_GRID` by a cross-validated AUC within ``A``. ``X``:
    an (n, d) array, or the validated data (``AUCData``: A's rows read
    from its class-ordered copy, ``X`` in input order never built); with
    ``in_a=None``, A's rows and labels themselves, a float array the
    function may overwrite (the certificate's own gather of them). The
    covariance by blocks of the Hessian (module docstring)."""
    y = np.asarray(y, dtype=bool)
    # A's rows, one copy centred and scaled in place (with the intercept
    # column: a contiguous copy for the solver); their squares summed
    # without a buffer of them
    if in_a is None:
        part, labels = X, y
    else:
        part = (X.rows(in_a) if isinstance(X, AUCData)
                else np.asarray(X, dtype=float)[in_a])
        labels = y[in_a]
    features = part[:, :-1] if intercept else part
    centre = features.mean(axis=0)
    Z = features - centre if intercept else np.subtract(part, centre,
                                                        out=part)
    scale = np.sqrt(np.einsum("ij,ij->j", Z, Z) / Z.shape[0])
    scale[scale == 0] = 1.0
    Z /= scale
    if labels.all() or not labels.any():
        # one class in A (a uniform split of a rare class): the zero score,
        # a tie everywhere, and the penalty's Gaussian around it
        prior_var = 1.0 if prior_var == "cv" else float(prior_var)
        d = Z.shape[1] + int(intercept)
        return np.zeros(d), np.diag(np.full(d, prior_var)), prior_var
    # Z is finite (validated rows, finite moments): scikit-learn's check of
    # it, a pass over the rows, is skipped
    with config_context(assume_finite=True):
        if prior_var == "cv":
            # chosen on A alone (A's folds, A's AUC): free in a bound on B
            fit = LogisticRegressionCV(Cs=PRIOR_VAR_GRID, cv=PRIOR_VAR_FOLDS,
                                       scoring="roc_auc", max_iter=2000).fit(
                                           Z, labels)
            prior_var = float(fit.C_[0])
        else:
            fit = LogisticRegression(C=float(prior_var), max_iter=2000).fit(
                Z, labels)
    w, b = fit.coef_[0], float(fit.intercept_[0])
    # predict_proba's probabilities, without its validation pass
    p = expit(Z @ w + b)
    weight = p * (1 - p)
    total = float(weight.sum())
    # the Hessian's intercept column over its corner: the weighted mean of
    # Z's rows; B = W^1/2 (Z - that mean), formed a block at a time
    mean_z = (weight @ Z) / total
    cov_w = schur_covariance(Z, prior_var, mean_z, np.sqrt(weight))
    if not intercept:
        # the AUC ignores the intercept: the coefficients' marginal
        return w / scale, cov_w / np.outer(scale, scale), prior_var
    # the blocks of H^-1: (cov_w, -cov_w h / c; ., 1/c + h' cov_w h / c^2)
    # with h / c = mean_z; then T H^-1 T' for T = [diag(1/s), 0; -c_A/s, 1]
    cross = -(cov_w @ mean_z)
    corner = 1.0 / total - float(mean_z @ cross)
    a = -centre / scale
    d = Z.shape[1]
    cov = np.empty((d + 1, d + 1))
    cov[:d, :d] = cov_w / np.outer(scale, scale)
    side = (cov_w @ a + cross) / scale
    cov[:d, d] = cov[d, :d] = side
    cov[d, d] = float(a @ (cov_w @ a)) + 2.0 * float(a @ cross) + corner
    mean = np.append(w / scale, b + float(a @ w))
    return mean, cov, prior_var
