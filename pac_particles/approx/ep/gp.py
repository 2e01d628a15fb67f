"""EP for Gaussian-process scores [RACL14, section 4].

Target on the training scores ``N(s; 0, K) * exp(-lam R_n(s))``, one site
per positive/negative pair on ``s_i - s_j``. With ``C`` the Cholesky factor
of ``K`` (plus jitter, added geometrically until the factorisation succeeds:
:func:`pac_particles.core.gaussian.jittered_cholesky`) the core
(:mod:`pac_particles.approx.ep.core`) runs on ``s = C w``, ``w ~ N(0, I)``, and the
posterior covariance of the training scores is ``C (I + C' L C)^-1 C'``:
O(P + n^3) per sweep. A pair whose two prior scores are identical (zero
prior variance of ``s_i - s_j``, e.g. duplicated inputs) is a tie for every
draw and carries no site.

``predict`` is the GP predictive of new scores,
``k_*' K^-1 E[s]`` and ``k_** - k_*' K^-1 k_* + k_*' K^-1 Cov[s] K^-1 k_*``
(:func:`pac_particles.core.gaussian.gp_predictive`); ``log_z_grad`` /
``fit_hyperparameters`` work on the kernel's log-lengthscales (``log_z``
does not depend on the amplitude: scores are scale free).

Example
-------
::

    from pac_particles.approx.ep import EPGP, SquaredExponential
    gp = EPGP(X, y, lam=len(y), kernel=SquaredExponential(lengthscale=3.0))
    gp.fit_hyperparameters()                 # maximise log_z over lengthscales
    mean, var = gp.predict(X[:5], return_var=True)

References
----------
[RACL14] Ridgway, J., Alquier, P., Chopin, N. and Liang, F. (2014).
PAC-Bayesian AUC classification and scoring. NIPS 27, section 4.

Seeger, M. (2005). Expectation propagation for exponential families.
Technical report, University of California at Berkeley.

Rasmussen, C. E. and Williams, C. K. I. (2006). Gaussian Processes for
Machine Learning. MIT Press, eqs. (3.24), (3.74).

[Min04] Minka, T. (2004). Power EP. Technical report MSR-TR-2004-149,
Microsoft Research.
"""

import numpy as np
from scipy import linalg

from pac_particles.core.checks import InputError
from pac_particles.problem.problem import as_problem, prior_hyperparameters
from pac_particles.core.gaussian import gp_predictive, jittered_cholesky
from pac_particles.core.kernels import SquaredExponential, kernel_diag
from pac_particles.approx.ep.base import _EPBase, _check_bounds, _maximise
from pac_particles.approx.ep.core import (_check_alpha, _check_finite_result, check_fit_options,
                   _Sites)
from pac_particles.approx.ep.prior_sites import _FixedGaussianPrior


class EPGP(_EPBase):
    """EP for Gaussian-process scores [RACL14, section 4].

    Target on the training scores ``N(s; 0, K) * exp(-lam R_n(s))``, pair
    sites on ``s_i - s_j``. With ``C`` the Cholesky factor of ``K`` (+ jitter)
    the posterior covariance is ``C (I + C' L C)^-1 C'``: O(P + n^3) per
    sweep.

    Parameters
    ----------
    X, y, lam, standardize, damping, tol, max_sweeps, pu_prior :
        as :class:`~pac_particles.approx.ep.EPLinear`.
    kernel : callable, array of shape (n, n), or 'rbf'
        ``kernel(X1, X2) -> Gram matrix`` (applied to the preprocessed
        inputs), e.g. :class:`~pac_particles.core.kernels.SquaredExponential`; or a
        precomputed Gram matrix of the training inputs in input order (then
        :meth:`predict` takes cross-kernel matrices); or ``'rbf'``, the
        squared-exponential kernel of
        :func:`~pac_particles.problem.problem.prior_hyperparameters`, as in
        :class:`~pac_particles.sklearn.estimator.PACBayesAUC`.
    alpha : float in (0, 1], default 1
        Fractional (power) EP of the pair sites [Min04], as
        :class:`~pac_particles.approx.ep.EPLinear` (1 is plain EP).

    Notes
    -----
    ``log_z`` does not depend on the kernel amplitude (scores are scale free).
    """

    _label = "EPGP"

    def __init__(self, X, y=None, lam=None, kernel=None, standardize=True,
                 damping=0.7, tol=1e-3, max_sweeps=500, pu_prior=None,
                 alpha=1.0):
        self._configure(as_problem(X, y, lam, self._task, type(self).__name__,
                                   standardize=standardize, pu_prior=pu_prior),
                        kernel, damping, tol, max_sweeps, alpha)

    def _configure(self, problem, kernel, damping=0.7, tol=1e-3,
                   max_sweeps=500, alpha=1.0):
        self._setup_problem(problem)
        self.alpha = _check_alpha(alpha)
        self.damping, self.tol, self.max_sweeps = check_fit_options(
            damping, tol, max_sweeps)
        n = self.data.n
        if kernel is None:
            raise InputError("EPGP needs a kernel: a callable, a precomputed "
                             "(n, n) matrix or 'rbf'")
        if isinstance(kernel, str):
            if kernel != "rbf":
                raise InputError(f"kernel must be a callable, a precomputed "
                                 f"(n, n) matrix or 'rbf', got {kernel!r}")
            # as PACBayesAUC(kernel='rbf')
            kernel = prior_hyperparameters(self.data.d, kernel)["kernel"]
        if callable(kernel):
            self.kernel = kernel
            self._gram = None
        else:
            try:
                K = np.asarray(kernel, dtype=float)
            except (TypeError, ValueError):
                raise InputError(f"kernel must be a callable, a precomputed "
                                 f"(n, n) matrix or 'rbf', got {kernel!r}")
            if K.shape != (n, n):
                raise InputError(f"a precomputed kernel must have shape "
                                 f"({n}, {n}), got {K.shape}")
            if not np.all(np.isfinite(K)):
                raise InputError("the kernel matrix contains NaN or inf")
            if not np.allclose(K, K.T, rtol=1e-10, atol=1e-12 * np.abs(K).max()):
                raise InputError("the kernel matrix is not symmetric")
            self.kernel = None
            self._gram = K

    def _kernel_matrix(self):
        """The prior covariance of the training scores, in ``risk.order``."""
        if self._gram is not None:
            return self._gram[np.ix_(self._perm, self._perm)]
        K = np.asarray(self.kernel(self._Xs, self._Xs), dtype=float)
        n = self.data.n
        if K.shape != (n, n) or not np.all(np.isfinite(K)):
            raise InputError(f"kernel(X, X) must return a finite ({n}, {n}) "
                             f"array, got shape {K.shape}")
        return 0.5 * (K + K.T)

    def prior_cov(self):
        """The prior covariance of the training scores in input order, with
        the jitter the last fit added to its diagonal (the ``N(0, K)`` a
        PAC-Bayes certificate of the fit measures its KL against)."""
        K = self._kernel_matrix()[np.ix_(self._inv_perm, self._inv_perm)]
        jitter = getattr(self, "jitter_", 0.0)
        return K + jitter * np.eye(self.data.n) if jitter else K

    def _prior_sites(self, K):
        """Sites of the pairs with a positive prior variance of
        ``s_i - s_j``: the others are tied for every draw of the scores."""
        n_pos = self.n_pos
        k = np.diag(K)
        prior_pair_var = k[:n_pos, None] + k[None, n_pos:] - 2 * K[:n_pos, n_pos:]
        return _Sites(self.risk, prior_pair_var <= 1e-12 * np.mean(k),
                      self.lam, self.alpha)

    def fit(self, warm_start=False):
        """Run EP; store and return the :class:`~pac_particles.approx.ep.EPResult`
        (``mean``/``cov`` are those of the training scores, in input order)."""
        K = self._kernel_matrix()
        C, self.jitter_ = jittered_cholesky(
            K, label=f"{self._label}: kernel matrix")
        self._sites = self._prior_sites(K)
        prior = _FixedGaussianPrior(C.shape[1])
        res = self._fit_core(C, prior, "gp", warm_start)
        st = self._run.state
        res.mean = res.score_mean.copy()
        B = linalg.solve_triangular(st.chol, C.T, lower=True)
        self._score_cov = B.T @ B
        res._cov = self._score_cov[np.ix_(self._inv_perm, self._inv_perm)]
        _check_finite_result(res, self._label)
        self.result_ = res
        return res

    def log_z_grad(self):
        """Gradient of ``log_z`` with respect to the kernel's ``log_params``.

        At an EP fixed point ``d log_z = 1/2 tr[(b b' - L (I + K L)^-1) dK]``
        with ``b = (I + L K)^-1 g`` (Seeger 2005; Rasmussen & Williams 2006,
        eq. 3.74), computed through ``C`` in O(n^3).

        Returns
        -------
        dict with ``"log_params"``: array, one entry per kernel log-parameter
        (a kernel object with ``contract_gradients`` or ``gradients`` is
        required).
        """
        run = self._require_fit()
        M = self._gradient_matrix(run)
        if hasattr(self.kernel, "contract_gradients"):
            g = self.kernel.contract_gradients(self._Xs, M)
        elif hasattr(self.kernel, "gradients"):
            g = np.einsum("ab,kab->k", M, self.kernel.gradients(self._Xs))
        else:
            raise InputError("log_z_grad needs a kernel object with "
                             "gradients(X) (e.g. SquaredExponential)")
        return {"log_params": 0.5 * np.asarray(g)}

    def _gradient_matrix(self, run):
        C, st = self._C, run.state
        L = self.risk.gram(run.W)
        g = self.risk.adjoint(run.H)
        LC = L @ C
        b = g - LC @ st.w_mean
        Y = linalg.solve_triangular(st.chol, LC.T, lower=True)
        # L (I + K L)^-1 = L - L C Lambda^-1 C' L
        return np.outer(b, b) - L + Y.T @ Y

    def fit_hyperparameters(self, bounds=(1e-2, 1e3), options=None,
                            ep_tol=1e-6):
        """Maximise ``log_z`` over the kernel lengthscales (L-BFGS-B on the
        log scale, EP warm-started between evaluations). The amplitude is
        left alone: ``log_z`` does not depend on it. ``options`` takes
        L-BFGS-B's stopping rules (``maxiter``, ``maxfun``, ``maxcor``,
        ``maxls``, ``ftol``, ``gtol``), anything else is an InputError.

        Returns
        -------
        scipy.optimize.OptimizeResult; the kernel keeps the optimum.
        """
        bounds = _check_bounds(bounds)
        if not hasattr(self.kernel, "log_params"):
            raise InputError("fit_hyperparameters needs a kernel object with "
                             "log_params and gradients (SquaredExponential)")
        full = self.kernel.log_params.copy()
        n_len = full.size - 1

        def objective(x):
            params = full.copy()
            params[:n_len] = x
            self.kernel.log_params = params
            res = self.fit(warm_start=True)
            return res.log_z, self.log_z_grad()["log_params"][:n_len]

        opt = _maximise(self, objective, full[:n_len],
                        [tuple(np.log(bounds))] * n_len, options, ep_tol)
        params = full.copy()
        params[:n_len] = opt.x
        self.kernel.log_params = params
        self.fit(warm_start=True)
        return opt

    def predict(self, X_new, return_var=False, k_diag=None):
        """Predictive mean (and variance) of the latent scores at new inputs.

        ``mean = k_*' K^-1 E[s]``,
        ``var = k_** - k_*' K^-1 k_* + k_*' K^-1 Sigma K^-1 k_*``
        (:func:`pac_particles.core.gaussian.gp_predictive`).

        Parameters
        ----------
        X_new : array (m, d_raw) of raw inputs; with a precomputed kernel, the
            cross Gram matrix ``K(X_new, X_train)`` of shape (m, n) (training
            columns in input order).
        return_var : bool
        k_diag : array (m,), prior variances ``k(x, x)`` of the new inputs;
            needed for variances with a precomputed kernel.
        """
        run = self._require_fit()
        if self.kernel is None:
            Ks = np.asarray(X_new, dtype=float)
            if Ks.ndim != 2 or Ks.shape[1] != self.data.n:
                raise InputError(f"with a precomputed kernel, X_new must be "
                                 f"the (m, {self.data.n}) cross Gram matrix")
            Ks = Ks[:, self._perm]
            if return_var and k_diag is None:
                raise InputError("k_diag is needed for predictive variances "
                                 "with a precomputed kernel")
        else:
            Xn = self.data.transform(X_new)
            Ks = np.asarray(self.kernel(Xn, self._Xs), dtype=float)
            if return_var and k_diag is None:
                k_diag = kernel_diag(self.kernel, Xn)
        if not return_var:
            return gp_predictive(self._C, Ks, run.state.score_mean)
        return gp_predictive(self._C, Ks, run.state.score_mean,
                             latent_cov=self._score_cov, k_diag=k_diag)
