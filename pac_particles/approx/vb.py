"""Gaussian variational approximations of the AUC Gibbs posterior.

The Gibbs pseudo-posterior of a linear score ``s_theta(x) = x . theta`` is::

    pi_lam(theta) ∝ prior(theta) exp(-lam R_n(theta)),   prior = N(0, prior_var I),

with ``R_n`` the fraction of mis-ordered positive/negative pairs (ties 1/2, see
:mod:`pac_particles.problem.auc`). Variational Bayes (Alquier, Ridgway & Chopin 2016,
Definition 5 / eq. (2) of the dissertation) replaces it by the Gaussian
``rho = N(m, S)`` that minimises::

    objective(rho) = lam * E_rho[R_n] + KL(rho || prior)
                   = -log Z + KL(rho || pi_lam)  >=  -log Z,

so ``elbo = -objective`` is a lower bound on ``log Z = log E_prior[exp(-lam R_n)]``
(Proposition 6). For a Gaussian ``rho`` the expected risk is in closed form::

    E_rho[R_n] = (1/P) sum_{i: y_i=1} sum_{j: y_j=0} Phi(-t_ij),
    t_ij = (d_ij . m) / sqrt(d_ij' S d_ij),

``d_ij = x_i - x_j``, ``P = n_pos n_neg``; pairs with ``d_ij = 0`` always tie and
contribute 1/2. Three families (Section 3.1 of the dissertation):

* ``isotropic`` (F1): ``S = sigma^2 I``, parameters ``(m, log sigma)``;
* ``diagonal``  (F2): ``S = diag(sigma_k^2)``, parameters ``(m, log sigma_k)``;
* ``full``      (F3): ``S = L L'``, ``L`` lower triangular with a log-parametrised
  diagonal.

The nesting F1 ⊂ F2 ⊂ F3 orders the optimal objectives (and so the bounds
``-objective <= log Z``); warm-start a family at a smaller family's optimum with
``init=`` to guarantee that order for the computed (local) optima too.

Computation
-----------
``E_rho[R_n]`` and its gradients in ``m`` and ``S`` come from
:class:`pac_particles.problem.probit_risk.GaussianPairRisk`: no difference vector is
materialised, one evaluation costs O(P d) time (plus O(n d^2) for the full
family) and O(block) memory whatever P.

For very large P, ``n_pairs=B`` estimates ``E_rho[R_n]`` and its gradient from B
pairs drawn uniformly with replacement (an incomplete U-statistic, Clémençon,
Colin & Bellet 2016): unbiased, with conditional variance ``sigma_f^2 / B`` where
``sigma_f^2 = (1/P) sum_ij (Phi_ij - E_rho[R_n])^2 <= 1/4``. By default the pairs
are redrawn at every iteration of a stochastic-gradient (Adam) optimiser with
iterate averaging; ``resample=False`` instead fixes one sample and runs L-BFGS on
it (sample-average approximation). The reported objective is always recomputed
exactly on all P pairs.

Normalisation
-------------
``lam`` multiplies the fraction of mis-ordered pos/neg pairs (our convention).
The dissertation's Section 5 risk ``r_n`` counts errors over all ``n (n - 1)``
ordered pairs (same-class pairs never count, a pos/neg pair counts in both
orders, a tie once), so ``r_n = q_n R_n`` with
``q_n = 2 n_pos n_neg / (n (n - 1))`` (:func:`ordered_pairs_factor`) and
``exp(-lam R_n) = exp(-lam' r_n)`` with ``lam' = lam / q_n``; KL terms are
unchanged. The default ``lam`` (``lam=None``) is the dissertation's Corollary 21
choice ``lam' = sqrt(d (n - 1)) / 2`` (with prior variance 1), i.e.
``lam = q_n sqrt(d (n - 1)) / 2`` here (:func:`corollary21_lam`). (The
dissertation's Section 5.1 objective divides by ``n_1 n_0`` while Corollary 21
is stated for ``r_n``: we follow the theorem.)

Example
-------
::

    from pac_particles.problem.data import load_dataset
    from pac_particles.approx.vb import GaussianVB
    X, y, _ = load_dataset("pima")
    vb = GaussianVB(X, y, family="full")        # lam from Corollary 21
    res = vb.fit()
    res.mean, res.cov, res.objective, res.elbo, res.converged
    scores = vb.predict(X)                       # x . m, training preprocessing

References
----------
Alquier, P., Ridgway, J. and Chopin, N. (2016). On the properties of variational
approximations of Gibbs posteriors. Journal of Machine Learning Research 17(239),
1-41.

[BGW17] Beirami, A., Razaviyayn, M., Shahrampour, S. and Tarokh, V. (2017). On
optimal generalizability in parametric learning. NeurIPS 30.

Catoni, O. (2007). PAC-Bayesian supervised classification: the thermodynamics of
statistical learning. IMS Lecture Notes Monograph Series 56.

Clémençon, S., Colin, I. and Bellet, A. (2016). Scaling-up empirical risk
minimization: optimization of incomplete U-statistics. Journal of Machine
Learning Research 17(76), 1-36.

[RM20] Rad, K. R. and Maleki, A. (2020). A scalable estimate of the
out-of-sample prediction error via approximate leave-one-out cross-validation.
Journal of the Royal Statistical Society B 82(4), 965-996.

Kingma, D. P. and Ba, J. (2015). Adam: a method for stochastic optimization. ICLR.
"""

import math
from dataclasses import dataclass
from typing import Optional

import numpy as np
from scipy import optimize

from pac_particles.core import parallel
from pac_particles.core.checks import (InputError, check_count, check_finite_array,
                     check_positive, resolve_lam)
from pac_particles.problem.data import validate_xy
from pac_particles.core.gaussian import gaussian_kl, positive_probability
from pac_particles.problem.gaussian_losses import GaussianPointRisk
from pac_particles.problem.data import classification_data
from pac_particles.problem.auc import auc_risk
from pac_particles.approx.loo import star_removal_scores
from pac_particles.problem.probit_risk import GaussianPairRisk, expected_auc_risk
from pac_particles.problem.risks import AUCRisk, ClassificationRisk

__all__ = ["GaussianVB", "ClassificationVB", "VBResult", "FAMILIES", "expected_auc_risk",
           "gaussian_kl", "ordered_pairs_factor", "corollary21_lam",
           "auto_pairs", "AUTO_PAIRS_ABOVE", "AUTO_PAIRS_PER_POINT"]

FAMILIES = ("isotropic", "diagonal", "full")

#: ``n_pairs="auto"`` keeps all pairs up to this many positive/negative pairs
AUTO_PAIRS_ABOVE = 1_000_000
#: ... and above it samples this many pairs per member of the larger class
AUTO_PAIRS_PER_POINT = 20

# Box on the log standard deviations, so that L-BFGS line searches cannot
# overflow exp(2 * log_sigma).
_LOG_SD_BOUNDS = (-25.0, 25.0)
#: L-BFGS's default iteration cap. The small sets converge in 20-250
#: iterations; all 14,980 Eeg rows (165,000 sampled pairs, diagonal
#: family, lam = n) need about 3,000, where the former cap of 2,000 left
#: the fit unconverged.
LBFGS_MAX_ITER = 5000


# ------------------------------------------------------------ normalisation

def ordered_pairs_factor(n_pos, n_neg):
    """``q_n = 2 n_pos n_neg / (n (n - 1))``: the factor from ``R_n`` to ``r_n``.

    ``R_n`` (ours) averages over the ``n_pos n_neg`` positive/negative pairs;
    the dissertation's ``r_n`` averages over all ``n (n - 1)`` ordered pairs
    ``i != j`` with the loss ``1{(Y_i - Y_j) f_theta(X_i, X_j) < 0}``,
    ``f_theta(x, x') = 2 * 1{<theta, x> > <theta, x'>} - 1``. Same-class pairs
    never count; a mis-ordered pos/neg pair counts in both orders and a tie in
    one, hence ``r_n = q_n R_n`` exactly (ties 1/2 in both conventions).
    ``q_n`` is also the unbiased U-statistic estimate of
    ``P(Y_1 != Y_2) = 2 pi (1 - pi)``, ``pi = P(Y = 1)``.
    """
    n_pos, n_neg = int(n_pos), int(n_neg)
    if n_pos < 1 or n_neg < 1:
        raise InputError(f"need at least one positive and one negative, got "
                         f"n_pos={n_pos}, n_neg={n_neg}")
    n = n_pos + n_neg
    return 2.0 * n_pos * n_neg / (n * (n - 1.0))


def corollary21_lam(n_pos, n_neg, d):
    """Default ``lam`` (our scale) from Corollary 21 of the dissertation.

    Corollary 21 takes ``lam' = sqrt(d (n - 1)) / 2`` for the risk ``r_n`` over
    ordered pairs (with prior variance ``nu^2 = 1``); the same Gibbs posterior
    in our normalisation has ``lam = q_n lam'``, ``q_n`` from
    :func:`ordered_pairs_factor`.
    """
    d = int(d)
    if d < 1:
        raise InputError(f"d must be at least 1, got {d}")
    n = int(n_pos) + int(n_neg)
    return ordered_pairs_factor(n_pos, n_neg) * math.sqrt(d * (n - 1.0)) / 2.0


def auto_pairs(n_pos, n_neg):
    """The pairs ``n_pairs="auto"`` samples: None (all ``P = n_pos n_neg``)
    up to :data:`AUTO_PAIRS_ABOVE` pairs, else
    ``AUTO_PAIRS_PER_POINT * max(n_pos, n_neg)``.

    The incomplete U-statistic on B pairs drawn uniformly with replacement
    has ``Var(U_B) = (1 - 1/B) Var(U_n) + Var(h) / B`` around the population
    risk (Clemencon, Colin & Bellet 2016), ``Var(h) <= 1/4``, while
    ``Var(U_n)`` is of order ``1 / min(n_pos, n_neg)``: B of 20 per member
    of the larger class adds at most ``1 / (80 max(n_pos, n_neg))``, a few
    per cent of ``Var(U_n)``.
    """
    n_pos, n_neg = int(n_pos), int(n_neg)
    if n_pos * n_neg <= AUTO_PAIRS_ABOVE:
        return None
    return min(n_pos * n_neg, AUTO_PAIRS_PER_POINT * max(n_pos, n_neg))


# ------------------------------------------------------------ the families

class _Family:
    """Map an unconstrained parameter vector to ``(m, cov)`` and back.

    ``cov`` is a (d,) vector of variances for F1/F2 and a (d, d) matrix for F3.
    """

    def __init__(self, name, d):
        self.name, self.d = name, d
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

    def bounds(self):
        free = [(None, None)] * self.n_params
        if self.name == "full":
            for k in self.diag_pos:
                free[self.d + k] = _LOG_SD_BOUNDS
        else:
            for k in range(self.d, self.n_params):
                free[k] = _LOG_SD_BOUNDS
        return free

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


# ------------------------------------------------------------ the estimator

@dataclass
class VBResult:
    """Outcome of a :class:`GaussianVB` fit: ``rho = N(mean, cov)``.

    Attributes
    ----------
    mean : (d,) array ``m``, on the (standardised) scale of ``GaussianVB.data``.
    cov : (d, d) array ``S``.
    objective : float
        ``lam E_rho[R_n] + KL(rho || prior)`` at the optimum, computed exactly
        on all pairs.
    elbo : float
        ``-objective``, a lower bound on ``log Z = log E_prior[exp(-lam R_n)]``.
    expected_risk : float
        ``E_rho[R_n]`` (exact, all pairs).
    kl : float
        ``KL(rho || prior)``.
    lam, prior_var : float
    family : str
    converged : bool
        Optimiser's convergence flag (always True for the Adam run, which has
        no stopping test: look at ``grad_norm``).
    n_iter, n_fev : int
        Optimiser iterations and objective evaluations.
    grad_norm : float
        Max-norm of the exact gradient at the optimum (unconstrained
        parameters).
    message : str
    risk_sd : float or None
        With ``n_pairs``: standard deviation of the per-pair terms of the last
        pair sample; ``risk_sd / sqrt(n_pairs)`` is the standard error of one
        subsampled estimate of ``E_rho[R_n]``.
    """

    mean: np.ndarray
    cov: np.ndarray
    objective: float
    elbo: float
    expected_risk: float
    kl: float
    lam: float
    prior_var: float
    family: str
    converged: bool
    n_iter: int
    n_fev: int
    grad_norm: float
    message: str
    risk_sd: Optional[float] = None

    def sample(self, size, seed=None):
        """Draw ``size`` parameter vectors ``theta ~ rho``; shape (size, d)."""
        rng = np.random.default_rng(seed)
        chol = np.linalg.cholesky(self.cov)
        return self.mean + rng.standard_normal((int(size), self.mean.size)) @ chol.T

    def __repr__(self):
        return (f"VBResult(family={self.family!r}, lam={self.lam:.4g}, "
                f"objective={self.objective:.6g}, converged={self.converged}, "
                f"mean={np.array2string(self.mean[:5], precision=4)}"
                f"{'...' if self.mean.size > 5 else ''})")


class _GaussianVariational:
    """What the Gaussian VB of every risk shares: the families, L-BFGS on
    the exact expected risk or Adam on fresh minibatches, the initial
    point, the result. Subclasses set ``data``, ``family``, ``lam``,
    ``prior_var``, ``resample``, ``seed``, ``max_iter``, ``tol``,
    ``step_size`` and provide ``_expected`` (exact ``(risk, g_m, g_cov)``
    terms), ``_batch`` (None: exact) and ``_sampled_terms(rng)``."""

    #: what a minibatch is made of (for messages)
    _unit = "pairs"

    # -------------------------------------------------------------- fitting
    def fit(self, init=None):
        """Optimise; store and return the :class:`VBResult`.

        Parameters
        ----------
        init : object with ``mean`` and ``cov`` attributes, optional
            Starting point (e.g. another ``VBResult``, an ``EPResult``), on the
            same scale, projected onto the family. Default: ``m`` along the
            difference of the class means with norm ``sqrt(prior_var)`` and
            ``S = prior_var I / 4``. The objective is not convex: warm-start a
            larger family at a smaller family's optimum to guarantee the
            nested ordering of the computed optima.
        """
        fam = _Family(self.family, self.data.d)
        x0 = self._initial_point(fam, init)
        self._risk_sd = None
        # the pair kernels supply the threads (pac_particles.core.parallel)
        with parallel.one_blas_thread():
            if self._batch is None:
                x, info = self._lbfgs(fam, x0, self._expected)
            elif not self.resample:
                rng = np.random.default_rng(self.seed)
                x, info = self._lbfgs(fam, x0, self._sampled_terms(rng))
            else:
                x, info = self._adam(fam, x0)
            # report exact values (all terms) whatever the optimiser saw
            value, grad, risk, kl = fam.objective(x, self.lam, self.prior_var,
                                                  self._expected)
        m, cov, _ = fam.unpack(x)
        converged, n_iter, n_fev, message = info
        self.result_ = VBResult(
            mean=m.copy(), cov=np.diag(cov) if cov.ndim == 1 else cov,
            objective=float(value), elbo=-float(value),
            expected_risk=float(risk), kl=float(kl), lam=self.lam,
            prior_var=self.prior_var, family=self.family, converged=converged,
            n_iter=n_iter, n_fev=n_fev, grad_norm=float(np.max(np.abs(grad))),
            message=message, risk_sd=self._risk_sd)
        return self.result_

    def _initial_point(self, fam, init):
        d, v = self.data.d, self.prior_var
        if init is not None:
            if not (hasattr(init, "mean") and hasattr(init, "cov")):
                raise InputError("init must have mean and cov attributes (a "
                                 "VBResult, EPResult or SMCPosterior)")
            mean = check_finite_array(init.mean, "init.mean")
            cov = check_finite_array(init.cov, "init.cov")
            if mean.shape != (d,) or cov.shape not in ((d,), (d, d)):
                raise InputError(f"init has mean {mean.shape}, cov {cov.shape};"
                                 f" expected ({d},) and ({d}, {d})")
            variances = cov if cov.ndim == 1 else np.diag(cov)
            if not np.all(variances > 0):
                raise InputError("init.cov must have positive variances")
            return fam.pack(mean, cov)
        # class-mean difference: Fisher's direction up to whitening
        direction = self.data.X_pos.mean(axis=0) - self.data.X_neg.mean(axis=0)
        norm = np.linalg.norm(direction)
        direction = direction / norm if norm > 0 else np.ones(d) / math.sqrt(d)
        return fam.pack(math.sqrt(v) * direction, np.full(d, 0.25 * v))

    def _lbfgs(self, fam, x0, pair_terms):
        lam, v = self.lam, self.prior_var

        def fun(x):
            value, grad, _, _ = fam.objective(x, lam, v, pair_terms)
            return value, grad

        res = optimize.minimize(
            fun, x0, jac=True, method="L-BFGS-B", bounds=fam.bounds(),
            options=dict(maxiter=self.max_iter or LBFGS_MAX_ITER, gtol=self.tol,
                         ftol=1e-12, maxcor=20))
        return res.x, (bool(res.success), int(res.nit), int(res.nfev),
                       str(res.message))

    def _adam(self, fam, x0):
        """Adam on fresh pairs each step; average the iterates of the 2nd half."""
        rng = np.random.default_rng(self.seed)
        n_steps = self.max_iter or 3000
        box = fam.bounds()
        lo = np.array([-np.inf if b[0] is None else b[0] for b in box])
        hi = np.array([np.inf if b[1] is None else b[1] for b in box])
        beta1, beta2 = 0.9, 0.999
        x = x0.copy()
        first, second = np.zeros_like(x), np.zeros_like(x)
        average, n_avg = np.zeros_like(x), 0
        for t in range(1, n_steps + 1):
            terms = self._sampled_terms(rng)
            _, grad, _, _ = fam.objective(x, self.lam, self.prior_var, terms)
            first = beta1 * first + (1 - beta1) * grad
            second = beta2 * second + (1 - beta2) * grad**2
            step = self.step_size * (first / (1 - beta1**t)) \
                / (np.sqrt(second / (1 - beta2**t)) + 1e-8)
            x = np.clip(x - step, lo, hi)
            if t > n_steps // 2:
                n_avg += 1
                average += (x - average) / n_avg
        message = (f"Adam: {n_steps} steps on {self._batch} fresh "
                   f"{self._unit} each, "
                   f"last {n_avg} iterates averaged")
        return average, (True, n_steps, n_steps, message)

    # ------------------------------------------------------------ using it
    def _require_fit(self):
        if not hasattr(self, "result_"):
            raise InputError(f"{type(self).__name__} is not fitted yet: call "
                             f"fit() first")
        return self.result_

    def predict(self, X_new):
        """Scores ``x . m`` of new raw inputs (training preprocessing applied)."""
        return self.data.transform(X_new) @ self._require_fit().mean


class GaussianVB(_GaussianVariational):
    """Gaussian variational approximation of the AUC Gibbs posterior.

    Minimises ``lam * E_rho[R_n] + KL(rho || N(0, prior_var I))`` over
    ``rho = N(m, S)`` in one of the families F1 (``isotropic``), F2
    (``diagonal``) or F3 (``full``), with analytic gradients and scipy's
    L-BFGS-B (eq. (2) of the dissertation; Alquier, Ridgway & Chopin 2016).
    Like ``EPLinear``: the constructor validates, :meth:`fit` runs.

    Parameters
    ----------
    X : array-like of shape (n, d)
    y : array-like of shape (n,), binary labels (see ``validate_xy``).
    lam : float, optional
        Inverse temperature multiplying the *fraction* of mis-ordered pos/neg
        pairs ``R_n``. Default: Corollary 21 of the dissertation,
        ``lam = q_n sqrt(d (n - 1)) / 2`` with ``q_n = 2 n_pos n_neg / (n (n-1))``
        (see :func:`corollary21_lam`; ``d`` after dropping constant columns).
    prior_var : float, default 1.0
        Variance ``nu^2`` of the isotropic Gaussian prior (Corollary 21: 1).
    family : {'isotropic', 'diagonal', 'full'}, default 'full'
        ``full`` has ``d (d + 1) / 2`` covariance parameters and costs
        O(n d^2 + d^3) more per evaluation (L-BFGS memory ~ 40 d^2 floats):
        prefer ``diagonal`` when d is in the hundreds or more.
    standardize : bool, default True
        Centre and scale the columns (``validate_xy``); ``mean`` and ``cov``
        then live on the standardised scale.
    n_pairs : int, optional
        Estimate ``E_rho[R_n]`` from ``n_pairs`` random pos/neg pairs (uniform,
        with replacement) instead of all ``P``: an incomplete U-statistic,
        unbiased given the data, with variance ``sigma_f^2 / n_pairs`` where
        ``sigma_f^2 = (1/P) sum_ij (Phi_ij - E_rho[R_n])^2 <= 1/4`` (the
        objective's noise has standard deviation ``lam sigma_f / sqrt(n_pairs)``).
        Around the population risk the variances add:
        ``Var(R_n) + E[sigma_f^2] / n_pairs``, with
        ``Var(R_n) = O(1/n_pos + 1/n_neg)``; ``n_pairs`` a few times
        ``n_pos n_neg / min(n_pos, n_neg)`` makes the extra noise negligible.
        Use it when P is in the hundreds of millions. ``"auto"``: all pairs
        up to :data:`AUTO_PAIRS_ABOVE`, else :func:`auto_pairs` pairs in
        one sample with L-BFGS (``resample`` is then False).
    resample : bool, default True
        With ``n_pairs``: draw fresh pairs at every iteration and optimise with
        Adam, averaging the iterates of the second half; if False, draw one
        sample and run L-BFGS on it (sample-average approximation).
    seed : int, optional
        Seed of the pair subsampling (ignored without ``n_pairs``).
    max_iter : int, optional
        L-BFGS iterations (default :data:`LBFGS_MAX_ITER`) or Adam steps
        (default 3000).
    tol : float, default 1e-6
        L-BFGS tolerance on the projected gradient.
    step_size : float, default 0.02
        Adam step size (``n_pairs`` with ``resample=True`` only).
    block_entries : int, optional
        Pair entries per block of the exact computation (memory: two float64
        buffers of this size; default 10^6).
    pu_prior : float in [0, 1), optional
        Positive-unlabelled labels (1 = labelled positive, 0 = unlabelled, a
        fraction ``pu_prior`` of which is positive): ``lam / (1 - pu_prior)``
        is used on the observed risk (see :mod:`pac_particles.problem.auc`).

    Attributes
    ----------
    data : AUCData
    lam : float (filled in when defaulted)
    result_ : VBResult, after :meth:`fit`.

    Raises
    ------
    InputError
        (a ``ValueError``) for bad data (see ``validate_xy``), ``lam <= 0``,
        ``prior_var <= 0``, an unknown family, ``n_pairs < 1``.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 3))
    >>> y = X @ [1.0, -1.0, 0.5] + rng.normal(size=60) > 0
    >>> res = GaussianVB(X, y, lam=20.0, family="diagonal").fit()
    >>> res.converged, res.mean.shape, res.cov.shape
    (True, (3,), (3, 3))
    >>> bool(res.elbo == -res.objective)
    True
    """

    def __init__(self, X, y, lam=None, prior_var=1.0, family="full",
                 standardize=True, n_pairs=None, resample=True, seed=None,
                 max_iter=None, tol=1e-6, step_size=0.02, block_entries=None,
                 pu_prior=None):
        if family not in FAMILIES:
            raise InputError(f"unknown family {family!r}; choose from "
                             f"{list(FAMILIES)}")
        self.prior_var = check_positive(prior_var, "prior_var")
        self.data = validate_xy(X, y, standardize=standardize,
                                drop_constant=True)
        self.family = family
        if lam is None:
            lam = corollary21_lam(self.data.n_pos, self.data.n_neg,
                                  self.data.d)
        # PU labels: lam / (1 - pi) on the observed risk (pac_particles.problem.auc)
        self.pu_prior = pu_prior
        self.lam, self.lam_pn = resolve_lam(lam, pu_prior)
        if isinstance(n_pairs, str) and n_pairs == "auto":
            n_pairs = auto_pairs(self.data.n_pos, self.data.n_neg)
            resample = resample and n_pairs is None
        elif n_pairs is not None:
            n_pairs = check_count(n_pairs, "n_pairs")
        if max_iter is not None:
            max_iter = check_count(max_iter, "max_iter")
        if seed is not None:
            seed = check_count(seed, "seed", minimum=0)
        self.n_pairs, self.resample, self.seed = n_pairs, bool(resample), seed
        self.max_iter = max_iter
        self.tol = check_positive(tol, "tol")
        self.step_size = check_positive(step_size, "step_size")
        self._pairs = GaussianPairRisk(self.data.X_pos, self.data.X_neg,
                                       block_entries)
        self._risk = AUCRisk(self.data.y)

    # ------------------------------------------------ what the base reads
    @property
    def _expected(self):
        """Exact expected risk with gradients (all P pairs)."""
        return self._pairs

    @property
    def _batch(self):
        return self.n_pairs

    def _sampled_terms(self, rng):
        """Pair terms on one sample of ``n_pairs`` pairs drawn from ``rng``."""
        ip, jn = self._risk.draw_pairs(rng, self.n_pairs)

        def terms(m, cov, need_grad=True):
            risk, g_m, g_cov, self._risk_sd = self._pairs.sampled(
                ip, jn, m, cov, need_grad)
            return risk, g_m, g_cov
        return terms

    # ------------------------------------------------------ leave-one-out
    def loo_scores(self, return_var=False):
        """Approximate leave-one-out scores of the training points, without
        refitting.

        Removing point i's pairs from the objective and taking one Newton
        step in the mean from the fitted ``m`` (``S`` held fixed) is the
        approximate leave-one-out of M-estimators [BGW17, RM20]: with ``W``
        the pairs' curvatures ``(lam / P) d^2 Phi_ij / dmu_ij^2`` and ``H =
        (lam / P) (d^2 Phi_ij / dmu_ij^2 mu_ij - dPhi_ij / dmu_ij)``, the
        Hessian in ``m`` is ``Lambda = I / prior_var + C' A' diag(W) A C``,
        ``Lambda m = C' A' H`` at the optimum, and the step is EP's removal
        of point i's star (:func:`pac_particles.approx.loo.star_removal_scores`)
        with these pseudo-sites. O(P d^2 + n d^3), against n refits; all
        pairs only (not ``n_pairs``). On 80 points, d = 4, the leave-one-out
        AUC matched that of exact refits within 0.0013 at lam = 10, 80, 300
        (the training AUC was 0.015-0.03 higher).

        Returns
        -------
        mean : (n,) LOO scores, in input order; NaN where the LOO Hessian
            is not positive definite
        var : (n,) their variances under the fixed-``S`` step (if
            ``return_var``)
        """
        res = self._require_fit()
        if self.n_pairs is not None:
            raise InputError("GaussianVB.loo_scores needs all pairs "
                             "(n_pairs=None): its Newton step removes each "
                             "point's pairs")
        risk = self._risk
        C = risk.ordered(self.data.X)
        cov = np.diag(res.cov) if self.family != "full" else res.cov
        w, u, mu = self._pairs.pair_terms(res.mean, cov)
        kappa = self.lam / risk.n_pairs
        W = 2.0 * kappa * u                   # d^2 Phi / dmu^2 = 2 dPhi/dvar
        H = W * mu - kappa * w
        lam_mat = C.T @ risk.gram_times(W, C)
        lam_mat = 0.5 * (lam_mat + lam_mat.T)
        lam_mat[np.diag_indices_from(lam_mat)] += 1.0 / self.prior_var
        try:
            chol = np.linalg.cholesky(lam_mat)
        except np.linalg.LinAlgError:
            raise InputError("the VB objective's Hessian in the mean is not "
                             "positive definite at the fit (not a minimum?): "
                             "no leave-one-out scores") from None
        mean, var = star_removal_scores(C, risk, W, H, chol, lam_mat @ res.mean)
        mean, var = mean[risk.inverse_order], var[risk.inverse_order]
        return (mean, var) if return_var else mean

    def loo_auc(self):
        """The AUC of :meth:`loo_scores` (points whose leave-one-out
        Hessian is not positive definite keep their fitted score)."""
        mean = self.loo_scores()
        bad = ~np.isfinite(mean)
        if np.any(bad):
            mean[bad] = (self.data.X @ self.result_.mean)[bad]
        return 1.0 - auc_risk(mean, self.data.y)

    def __repr__(self):
        state = (f", objective={self.result_.objective:.6g}"
                 if hasattr(self, "result_") else ", not fitted")
        return (f"GaussianVB(family={self.family!r}, lam={self.lam:.4g}, "
                f"prior_var={self.prior_var:.4g}{state})")


class ClassificationVB(_GaussianVariational):
    """Gaussian variational approximation of the Gibbs posterior of a linear
    classifier [ARC16, Sec. 3.3, 4.1, 4.2].

    Minimises ``lam E_rho[r_n] + KL(rho || N(0, prior_var I))`` over
    ``rho = N(m, S)`` in the family F1, F2 or F3, with the closed-form
    expected losses of :mod:`pac_particles.problem.gaussian_losses` (0-1:
    ``mean_i Phi(-y_i x_i m / sqrt(x_i S x_i))``; hinge, exponential, ramp)
    and their analytic gradients; ``elbo = -objective <= log Z``. The hinge
    and exponential objectives are convex in ``(m, S^(1/2))``, the 0-1 and
    ramp ones are not (warm-start with ``init=``).

    Parameters
    ----------
    X, y : data (labels as everywhere; positives have margin ``x . theta``).
    lam : float, optional. Default ``sqrt(n d)`` [ARC16, Cor. 13, 15 with
        ``c_x = 1``], d with the intercept.
    loss : one of :data:`pac_particles.problem.risks.LOSSES`.
    prior_var : float, optional. Default ``1 / d`` (``nu = 1 / sqrt(d)``,
        [ARC16, Cor. 13]).
    family : {'isotropic', 'diagonal', 'full'}.
    fit_intercept, standardize : as
        :class:`~pac_particles.smc.models.ClassificationGibbsModel`.
    batch_size : int, optional
        Minibatches of points drawn uniformly with replacement, fresh at
        every Adam step (``resample=True``) or one sample for L-BFGS: an
        unbiased estimate of ``E_rho[r_n]`` and its gradient, for large n.
    resample, seed, max_iter, tol, step_size : as :class:`GaussianVB`.
    pu_prior : float in [0, 1), optional: the PU risk of
        :class:`~pac_particles.problem.risks.ClassificationRisk`.

    Example
    -------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(80, 2))
    >>> y = X @ [1.0, -1.0] + 0.5 * rng.normal(size=80) > 0
    >>> res = ClassificationVB(X, y, lam=80.0, loss="hinge").fit()
    >>> bool(res.converged and res.elbo == -res.objective)
    True
    """

    _unit = "points"

    def __init__(self, X, y, lam=None, loss="zero_one", prior_var=None,
                 family="full", fit_intercept=True, standardize=True,
                 batch_size=None, resample=True, seed=None, max_iter=None,
                 tol=1e-6, step_size=0.02, pu_prior=None):
        if family not in FAMILIES:
            raise InputError(f"unknown family {family!r}; choose from "
                             f"{list(FAMILIES)}")
        self.family = family
        self.data = classification_data(X, y, standardize, fit_intercept)
        self.risk = ClassificationRisk(self.data.y, loss, pu_prior)
        n, d = self.data.n, self.data.d
        self.lam = check_positive(math.sqrt(n * d) if lam is None else lam,
                                  "lam")
        self.prior_var = check_positive(1.0 / d if prior_var is None
                                        else prior_var, "prior_var")
        self.batch_size = (None if batch_size is None
                           else check_count(batch_size, "batch_size"))
        self.max_iter = (None if max_iter is None
                         else check_count(max_iter, "max_iter"))
        self.resample, self.seed = bool(resample), seed
        self.tol = check_positive(tol, "tol")
        self.step_size = check_positive(step_size, "step_size")
        self._expected = GaussianPointRisk(self.data.X, self.risk)

    @property
    def loss(self):
        return self.risk.loss

    @property
    def _batch(self):
        return self.batch_size

    def _sampled_terms(self, rng):
        """Point terms on ``batch_size`` points drawn from ``rng``."""
        idx = rng.integers(self._expected.n, size=self.batch_size)

        def terms(m, cov, need_grad=True):
            risk, g_m, g_cov, self._risk_sd = self._expected.sampled(
                idx, m, cov, need_grad)
            return risk, g_m, g_cov
        return terms

    def predict_proba(self, X_new):
        """``P_rho(x . theta > 0) = Phi(x m / sqrt(x S x))`` for new raw
        inputs: the posterior predictive of the randomised classifier."""
        res = self._require_fit()
        Z = self.data.transform(X_new)
        return positive_probability(Z @ res.mean,
                                    np.einsum("ij,jk,ik->i", Z, res.cov, Z))

    def __repr__(self):
        state = (f", objective={self.result_.objective:.6g}"
                 if hasattr(self, "result_") else ", not fitted")
        return (f"ClassificationVB(loss={self.loss!r}, family="
                f"{self.family!r}, lam={self.lam:.4g}{state})")
