"""Expected classification losses of a Gaussian margin, and the point-risk
terms of Gaussian variational Bayes.

For a linear classifier ``theta ~ rho = N(m, S)`` the margin of a point is
``u_i = y_i x_i . theta ~ N(mu_i, v_i)``, ``mu_i = y_i x_i . m``,
``v_i = x_i' S x_i``, and every built-in loss of
:class:`pac_particles.problem.risks.ClassificationRisk` has a closed-form
expectation (:func:`expected_margin_loss`), declared with the loss in
:mod:`pac_particles.problem.losses` (the hinge's [ARC16, Sec. 4.1] is
written there for ``S = sigma^2 I``, ``v = sigma^2 |x|^2``).

The hinge and exponential expectations are convex in ``(m, S^(1/2))``
(a convex loss composed with an affine map of ``(m, S^(1/2) z)``,
averaged over z). :class:`GaussianPointRisk` sums them over the points
with their gradients in ``m`` and ``S``::

    d/dm = sum_i w_i y_i (dE/dmu)_i x_i = X' (w y dE/dmu),
    d/dS = sum_i w_i (dE/dv)_i x_i x_i' = X' diag(w dE/dv) X,

one pass over the rows for a diagonal ``S``, the margins, the closed form
and both sums fused
(:func:`~pac_particles.problem.point_kernels.gaussian_point_sums`; a loss
with a numpy closed form only: the margins' and the sums' passes,
:func:`~pac_particles.problem.point_kernels.moment_sums`), O(n d)
(BLAS, O(n d^2), for a full ``S``), and an unbiased estimate
on a minibatch of points drawn uniformly with replacement (the stochastic
optimiser of :class:`pac_particles.approx.classification_vb.ClassificationVB`). Rows ``x_i = 0``
have margin 0 whatever ``theta`` and add the constant ``w_i loss(0)``.

Example
-------
::

    import numpy as np
    from pac_particles.problem.gaussian_losses import expected_margin_loss
    value, d_mu, d_var = expected_margin_loss("hinge", np.array([0.5]),
                                              np.array([0.25]))

References
----------
[ARC16] Alquier, P., Ridgway, J. and Chopin, N. (2016). On the properties of
variational approximations of Gibbs posteriors. JMLR 17(239), 1-41.
"""

import numpy as np

from pac_particles.core.checks import InputError
from pac_particles.core.gaussian import row_variances
from pac_particles.problem.losses import get_loss
from pac_particles.problem.point_kernels import (gaussian_closed_form,
                                                gaussian_point_sums,
                                                margin_moments, moment_sums)
from pac_particles.problem.risks import ClassificationRisk

__all__ = ["expected_margin_loss", "GaussianPointRisk"]


def expected_margin_loss(loss, mu, var):
    """``E[loss(u)]`` for ``u ~ N(mu, var)`` (arrays, ``var > 0``), with its
    derivatives in ``mu`` and in ``var``: the loss's closed form in
    :data:`pac_particles.problem.losses.LOSSES`, its scalar
    ``gaussian_point`` compiled over the arrays
    (:func:`~pac_particles.problem.point_kernels.gaussian_closed_form`, the
    function the fused point-risk kernel inlines), or else its numpy
    ``gaussian``.

    Returns ``(value, d_mu, d_var)``, arrays of the shape of ``mu``.
    """
    entry = get_loss(loss)
    if not entry.has_gaussian:
        raise InputError(f"the loss {loss!r} declares no Gaussian closed form "
                         "(MarginLoss.gaussian_point or .gaussian): "
                         "Gaussian VB cannot fit it; "
                         "use method='smc'")
    mu = np.asarray(mu, dtype=float)
    var = np.asarray(var, dtype=float)
    if np.any(var <= 0):
        raise InputError("margin variances must be > 0")
    if entry.gaussian_point is not None:
        return gaussian_closed_form(entry, mu, var)
    return entry.gaussian(mu, var)


class GaussianPointRisk:
    """``E_rho[r_n]`` of a :class:`~pac_particles.problem.risks.ClassificationRisk`
    for ``rho = N(m, S)`` over linear scores ``x . theta``, with gradients.

    Parameters
    ----------
    X : (n, d) design matrix (input order).
    risk : ClassificationRisk on the labels of ``X`` (loss, signs, weights).

    Calling it with ``(m, cov)`` -- ``cov`` (d,) variances (diagonal ``S``)
    or (d, d) -- returns ``(E_rho[r_n], dE/dm, dE/dS)``, the last of the
    shape of ``cov``.
    """

    def __init__(self, X, risk):
        if not isinstance(risk, ClassificationRisk):
            raise InputError("GaussianPointRisk needs a ClassificationRisk")
        X = np.ascontiguousarray(X, dtype=float)
        zero = risk.zero_margins(X)
        self.loss = risk.loss
        # loss(0), from the risk of the all-zero score vector
        loss_at_zero = (risk(np.zeros(risk.n)) - risk.offset) \
            / np.sum(risk.weights)
        self.constant = risk.offset + float(np.sum(risk.weights[zero])
                                            * loss_at_zero)
        keep = ~zero
        # every row kept (no all-zero row): the design itself, no copy
        self.X = X if keep.all() else np.ascontiguousarray(X[keep])
        self.signs = risk.signs[keep]
        self.weights = risk.weights[keep]
        self.n = self.X.shape[0]
        # the closed form compiled into the one-pass kernel, or numpy's
        self.fused = get_loss(self.loss).gaussian_point is not None

    def __call__(self, m, cov, need_grad=True):
        cov = np.asarray(cov, dtype=float)
        # a diagonal S > 0 (so every kept row's v_i > 0): the value and
        # both gradients in one pass over the rows, no n-sized temporaries
        if self.fused and cov.ndim == 1 and np.all(cov > 0):
            risk, g_m, g_cov = gaussian_point_sums(
                self.X, np.asarray(m, dtype=float), cov, self.signs,
                self.weights, get_loss(self.loss), need_grad)
            if not need_grad:
                return risk + self.constant, None, None
            return risk + self.constant, g_m, g_cov
        return self._terms(self.X, self.signs, self.weights, m, cov,
                           need_grad, spread=False)[:3]

    def sampled(self, idx, m, cov, need_grad=True):
        """Unbiased estimate from the points ``idx`` (drawn uniformly with
        replacement): ``(risk, dE/dm, dE/dS, sd)``, ``sd`` the standard
        deviation of the per-point terms ``n w_i E_i``."""
        scale = self.n / idx.size
        return self._terms(self.X[idx], self.signs[idx],
                           scale * self.weights[idx], m, cov, need_grad)

    def _terms(self, X, signs, weights, m, cov, need_grad, spread=True):
        cov = np.asarray(cov, dtype=float)
        m = np.asarray(m, dtype=float)
        diagonal = cov.ndim == 1
        # a diagonal S: the means and variances of the margins, then their
        # gradients' sums, in one pass over the rows each (point_kernels)
        if diagonal:
            scores, var = margin_moments(X, m, cov)
        else:
            scores, var = X @ m, row_variances(X, cov)
        mu = signs * scores
        value, d_mu, d_var = expected_margin_loss(self.loss, mu, var)
        terms = weights * value
        risk = float(terms.sum()) + self.constant
        # the terms' spread: a minibatch's standard error (none for a sum
        # over every point)
        sd = float(np.std(terms * terms.size)) if spread else None
        if not need_grad:
            return risk, None, None, sd
        a = weights * signs * d_mu
        wv = weights * d_var
        if diagonal:
            g_m, g_cov = moment_sums(X, a, wv)
        else:
            g_m, g_cov = X.T @ a, (X.T * wv) @ X
        return risk, g_m, g_cov, sd
