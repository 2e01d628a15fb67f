"""The Gaussian families F1-F3 of variational Bayes [ARC16, eqs. (4)-(6)]:
their parameters, the objective ``lam E_rho[r_n] + KL(rho || prior)`` of
[ARC16, eq. (2)] with its gradient in them, and the predicted decrease of
that objective to its optimum (:meth:`GaussianFamily.decrement`: how far
an optimiser still is, in nats).

* ``isotropic`` (F1): ``S = sigma^2 I``, parameters ``(m, log sigma)``;
* ``diagonal``  (F2): ``S = diag(sigma_k^2)``, parameters ``(m, log sigma_k)``;
* ``full``      (F3): ``S = L L'``, ``L`` lower triangular with a
  log-parametrised diagonal.

The optimisers and the result are :mod:`pac_particles.approx.variational`.

[ARC16] Alquier, P., Ridgway, J. and Chopin, N. (2016). On the properties of
variational approximations of Gibbs posteriors. Journal of Machine Learning
Research 17(239), 1-41.
"""

import math

import numpy as np

from pac_particles.core.checks import check_choice

__all__ = ["GaussianFamily", "FAMILIES"]

#: the Gaussian families, smallest first: F1, F2, F3 [ARC16, eqs. (4)-(6)]
FAMILIES = ("isotropic", "diagonal", "full")

# Box on the log standard deviations, so that L-BFGS line searches cannot
# overflow exp(2 * log_sigma).
_LOG_SD_BOUNDS = (-25.0, 25.0)


class GaussianFamily:
    """One of the Gaussian families F1-F3 [ARC16, eqs. (4)-(6)]: maps an
    unconstrained parameter vector to ``(m, cov)`` and back, and gives the
    objective ``lam E_rho[r_n] + KL(rho || prior)`` of eq. (2) with its
    gradient in those parameters.

    ``cov`` is a (d,) vector of variances for F1/F2 and a (d, d) matrix for F3.
    """

    def __init__(self, name, d):
        self.name = check_choice(name, "family", FAMILIES)
        self.d = d
        if name == "full":
            self.tril = np.tril_indices(d)
            self.diag_pos = np.flatnonzero(self.tril[0] == self.tril[1])
            self.n_params = d + d * (d + 1) // 2
        else:
            self.n_params = d + (1 if name == "isotropic" else d)

    def unpack(self, x):
        d = self.d
        m = x[:d]
        if self.name == "full":
            L = np.zeros((d, d))
            L[self.tril] = x[d:]
            L[np.diag_indices(d)] = np.exp(np.diag(L))
            return m, L @ L.T, L
        var = np.exp(2.0 * x[d:]) * np.ones(d)
        return m, var, None

    def pack(self, mean, cov):
        """Project ``N(mean, cov)`` onto the family (moment-matched scales)."""
        cov = np.asarray(cov, dtype=float)
        var = cov if cov.ndim == 1 else np.diag(cov)
        if self.name == "isotropic":
            return np.concatenate([mean, [0.5 * np.log(var.mean())]])
        if self.name == "diagonal":
            return np.concatenate([mean, 0.5 * np.log(var)])
        L = np.linalg.cholesky(np.diag(var) if cov.ndim == 1 else cov)
        L[np.diag_indices(self.d)] = np.log(np.diag(L))
        return np.concatenate([mean, L[self.tril]])

    def rescale(self, x, prior_var):
        """``x`` with ``(m, S^(1/2))`` scaled jointly by the ``c > 0`` that
        minimises ``KL(rho || N(0, prior_var I))`` along that ray:
        ``c^2 = d prior_var / (|m|^2 + tr S)``.

        A risk of the normalised margins ``x . m / sqrt(x' S x)`` (the AUC
        pairs, the 0-1 loss) is the same at every ``c``, and so is each of
        its minibatch estimates: this is then the exact minimiser of the
        objective along the ray, which first-order optimisers otherwise
        approach slowly (only the KL, O(1) against the risk's O(lam)
        curvature, pins the joint scale). The log standard deviations stay
        in their box."""
        d = self.d
        m, cov, _ = self.unpack(x)
        trace = np.trace(cov) if cov.ndim == 2 else cov.sum()
        log_c = 0.5 * math.log(d * prior_var / (m @ m + trace))
        lo, hi = _LOG_SD_BOUNDS
        out = x.copy()
        out[:d] *= math.exp(log_c)
        if self.name == "full":
            scale = out[d:]
            diag = np.zeros(scale.size, dtype=bool)
            diag[self.diag_pos] = True
            scale[~diag] *= math.exp(log_c)
            scale[diag] = np.clip(scale[diag] + log_c, lo, hi)
        else:
            out[d:] = np.clip(out[d:] + log_c, lo, hi)
        return out

    def bounds(self):
        """The box of the parameters as ``(lo, hi)`` arrays: the log standard
        deviations within :data:`_LOG_SD_BOUNDS`, the rest free."""
        lo = np.full(self.n_params, -np.inf)
        hi = np.full(self.n_params, np.inf)
        logs = (self.d + np.asarray(self.diag_pos) if self.name == "full"
                else np.arange(self.d, self.n_params))
        lo[logs], hi[logs] = _LOG_SD_BOUNDS
        return lo, hi

    def metric_root(self, x):
        """The diagonal ``P`` (an array of the parameters' shape) of the
        family's metric at ``x``, the objective's Hessian at its optimum as
        the family knows it, ``H ~ P^-2``: ``sigma_k`` in the mean (at the
        optimum ``1 / sigma_k^2`` is the curvature in ``m_k``: ``2 lam G_kk
        + 1 / v``, the root of the log-sd gradient, and ``2 dE/dS = d^2 E /
        dm^2`` for a Gaussian) and ``1 / sqrt 2`` per log standard
        deviation (``-t + exp(2 t) c / 2`` has curvature 2 at its minimum;
        ``2 d`` for the one of F1), cross terms left out; None for F3,
        whose factor's entries have no such scale."""
        if self.name == "full":
            return None
        d = self.d
        root = np.empty(x.size)
        root[:d] = np.exp(x[d:]) * np.ones(d)
        root[d:] = math.sqrt(0.5 / (d if self.name == "isotropic" else 1))
        return root

    def decrement(self, x, grad):
        """The objective's predicted decrease from ``x`` to its optimum,
        ``grad' H^-1 grad / 2 = |P grad|^2 / 2`` in nats with ``P`` the
        family's :meth:`metric_root` at ``x``; None for F3. An optimiser
        within ``eps`` of it is within about ``sqrt(2 eps)`` posterior
        standard deviations of the optimum in each mean coordinate."""
        root = self.metric_root(x)
        if root is None:
            return None
        step = root * grad
        return 0.5 * float(step @ step)

    def objective(self, x, lam, prior_var, pair_terms):
        """``lam E_rho[R_n] + KL(rho || prior)`` and its gradient in ``x``."""
        d, v = self.d, prior_var
        m, cov, L = self.unpack(x)
        risk, g_m, g_cov = pair_terms(m, cov)
        if self.name == "full":
            logdet = 2.0 * x[d:][self.diag_pos].sum()
            kl = 0.5 * (np.trace(cov) / v + m @ m / v - d + d * math.log(v)
                        - logdet)
            # dE/dL = 2 G L; KL: L / v - diag(1/L_kk); log-diagonal chain rule
            g_L = lam * 2.0 * (g_cov @ L) + L / v
            g_L[np.diag_indices(d)] = (g_L[np.diag_indices(d)] - 1.0 / np.diag(L)) \
                * np.diag(L)
            g_scale = g_L[self.tril]
        else:
            kl = 0.5 * (cov.sum() / v + m @ m / v - d + d * math.log(v)
                        - np.log(cov).sum())
            # d/d log sigma_k of lam E + KL: 2 sigma_k^2 (lam G_kk + 1/(2v)) - 1
            g_log_sd = 2.0 * cov * (lam * g_cov + 0.5 / v) - 1.0
            g_scale = g_log_sd.sum(keepdims=True) if self.name == "isotropic" \
                else g_log_sd
        grad = np.concatenate([lam * g_m + m / v, g_scale])
        return lam * risk + kl, grad, risk, kl
