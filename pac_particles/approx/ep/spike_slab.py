"""EP for linear scores under a spike-and-slab prior [RACL14, section 3.4].

Prior ``prod_k [p N(theta_k; 0, v1) + (1 - p) N(theta_k; 0, v0)]`` with
latent ``z_k ~ Bernoulli(p)`` [GM93]; ``v0 = 0`` is a Dirac spike. On top of
the pair sites, each coordinate gets a Bernoulli x Gaussian prior site
[HHD13] (:class:`pac_particles.approx.ep.prior_sites._SpikeSlabSites`); the
approximation is ``N(theta; mean, cov) * prod_k Bernoulli(z_k;
inclusion_probs_k)``. Always in the primal space (the prior sites live on the
coordinates of theta): O(P d + n d^2 + d^3) per sweep.

``log_z`` is invariant to ``(v0, v1) -> (c v0, c v1)``, so
``fit_hyperparameters`` moves ``p`` and the ratio ``v0 / v1`` only.

Example
-------
::

    from pac_particles.approx.ep import EPSpikeSlab
    ep = EPSpikeSlab(X, y, lam=len(y), p=0.1, v0=0.0, v1=1.0)
    res = ep.fit()
    res.inclusion_probs                  # posterior P(z_k = 1)
    ep.fit_hyperparameters()             # maximise log_z over p

References
----------
[RACL14], [HHD13] and [GM93]: see :mod:`pac_particles.approx.ep.prior_sites`.

[Min04] Minka, T. (2004). Power EP. Technical report MSR-TR-2004-149,
Microsoft Research.
"""

import math
import warnings

import numpy as np
from scipy import linalg

from pac_particles.core.checks import InputError
from pac_particles.core.gaussian import row_variances
from pac_particles.problem.problem import as_problem
from pac_particles.problem.priors import SpikeSlabPrior
from pac_particles.approx.ep.base import _EPBase, _maximise
from pac_particles.approx.ep.core import (EPConvergenceWarning, _check_alpha, _check_finite_result,
                   check_fit_options)
from pac_particles.approx.ep.prior_sites import _SpikeSlabSites


class EPSpikeSlab(_EPBase):
    """EP for linear scores under a spike-and-slab prior.

    Prior ``prod_k [p N(theta_k; 0, v1) + (1 - p) N(theta_k; 0, v0)]``
    written with latent ``z_k ~ Bernoulli(p)`` [RACL14, section 3.4,
    appendix B.3]. On top of the pair sites, each coordinate gets a
    Bernoulli x Gaussian site [HHD13]; the approximation is
    ``N(theta; mean, cov) * prod_k Bernoulli(z_k; inclusion_probs_k)``.
    Always in the primal space: O(P d + n d^2 + d^3) per sweep.

    Parameters
    ----------
    X, y, lam, standardize, damping, tol, max_sweeps, pu_prior :
        as :class:`~pac_particles.approx.ep.EPLinear`.
    p : float in (0, 1)
        Prior inclusion probability.
    v0 : float >= 0
        Spike variance (0: Dirac mass at zero).
    v1 : float > v0
        Slab variance.
    alpha : float in (0, 1], default 1
        Fractional (power) EP of the pair sites [Min04], as
        :class:`~pac_particles.approx.ep.EPLinear` (1 is plain EP). Only the
        pair sites take the power; the prior sites stay plain EP (a Dirac
        spike has no fractional power).

    Notes
    -----
    ``log_z`` is invariant to ``(v0, v1) -> (c v0, c v1)``; with ``v0 = 0``
    it does not depend on ``v1`` at all.
    """

    _label = "EPSpikeSlab"

    def __init__(self, X, y=None, lam=None, p=0.5, v0=0.0, v1=1.0,
                 standardize=True,
                 damping=0.7, tol=1e-3, max_sweeps=500, pu_prior=None,
                 alpha=1.0):
        self._configure(as_problem(X, y, lam, self._task, type(self).__name__,
                                   standardize=standardize, pu_prior=pu_prior),
                        p, v0, v1, damping, tol, max_sweeps, alpha)

    def _configure(self, problem, p=0.5, v0=0.0, v1=1.0, damping=0.7,
                   tol=1e-3, max_sweeps=500, alpha=1.0):
        self._setup_problem(problem)
        self.alpha = _check_alpha(alpha)
        for value, name in ((p, "p"), (v0, "v0"), (v1, "v1")):
            try:
                np.asarray(value, dtype=float)
            except (TypeError, ValueError):
                raise InputError(f"{name} must be a number, got {value!r}")
        # the prior's own checks: 0 < p < 1, 0 <= v0 < v1, finite
        prior = SpikeSlabPrior(self.data.d, p=p, v0=v0, v1=v1)
        if any(np.ndim(v) for v in (prior.p, prior.v0, prior.v1)):
            raise InputError("EPSpikeSlab takes scalar p, v0 and v1")
        self.p, self.v0, self.v1 = (float(prior.p), float(prior.v0),
                                    float(prior.v1))
        self.damping, self.tol, self.max_sweeps = check_fit_options(
            damping, tol, max_sweeps)
        self._sites = self._input_sites()

    def fit(self, warm_start=False):
        """Run EP; store and return the :class:`~pac_particles.approx.ep.EPResult`
        (with ``inclusion_probs``)."""
        prior = _SpikeSlabSites(self.data.d, self.p, self.v0, self.v1)
        if warm_start and self._run is not None:
            prior.set(self._prior.params())
        try:
            res = self._fit_core(self._Xs, prior, "primal", warm_start)
        except FloatingPointError:
            if not warm_start:
                raise
            # the kept prior sites (of a fit that did not converge, or at
            # other hyper-parameters) give no proper start: from the prior
            prior = _SpikeSlabSites(self.data.d, self.p, self.v0, self.v1)
            self._run = None
            res = self._fit_core(self._Xs, prior, "primal", False)
        st = self._run.state
        res.mean = st.w_mean.copy()
        inv_chol = linalg.solve_triangular(st.chol, np.eye(st.chol.shape[0]),
                                           lower=True)
        res._cov = inv_chol.T @ inv_chol
        res.inclusion_probs = prior.inclusion_probs()
        res.prior_site_precision = prior.prec.copy()
        res.prior_site_shift = prior.shift.copy()
        res.prior_site_log_odds = prior.log_odds.copy()
        _check_finite_result(res, self._label)
        if prior.n_improper:
            warnings.warn(f"{self._label}: {prior.n_improper} prior site(s) "
                          "kept their value because their cavity was improper",
                          EPConvergenceWarning, stacklevel=2)
        self.result_ = res
        return res

    def log_z_grad(self):
        """Gradient of ``log_z`` with respect to ``p``, ``v0`` and ``v1``.

        At an EP fixed point only the explicit dependence of the prior sites'
        tilted normalisers ``Z_k = p N(mu_k; 0, v1 + s_k) + (1 - p)
        N(mu_k; 0, v0 + s_k)`` counts (cavities ``N(mu_k, s_k)`` held fixed).

        Returns
        -------
        dict with keys ``"p"``, ``"v0"``, ``"v1"``.
        """
        self._require_fit()
        return self._prior.grad(self._run.state)

    def fit_hyperparameters(self, fit_v0=True, options=None, ep_tol=1e-6):
        """Maximise ``log_z`` over ``p`` and the ratio ``v0 / v1``.

        ``v1`` is held fixed: a common scaling of ``(v0, v1)`` does not change
        ``log_z``. With ``v0 = 0`` (or ``fit_v0=False``) only ``p`` moves.
        Parameters are optimised on the logit scale with L-BFGS-B;
        ``options`` takes its stopping rules (``maxiter``, ``maxfun``,
        ``maxcor``, ``maxls``, ``ftol``, ``gtol``), anything else is an
        InputError.

        Returns
        -------
        scipy.optimize.OptimizeResult; the model keeps the optimum.
        """
        use_ratio = fit_v0 and self.v0 > 0

        def unpack(x):
            p = 1 / (1 + np.exp(-x[0]))
            v0 = self.v1 / (1 + np.exp(-x[1])) if use_ratio else self.v0
            return p, v0

        def objective(x):
            self.p, self.v0 = unpack(x)
            res = self.fit(warm_start=True)
            g = self.log_z_grad()
            grad = [g["p"] * self.p * (1 - self.p)]
            if use_ratio:
                r = self.v0 / self.v1
                grad.append(g["v0"] * self.v1 * r * (1 - r))
            return res.log_z, np.array(grad)

        x0 = [math.log(self.p / (1 - self.p))]
        if use_ratio:
            r = self.v0 / self.v1
            x0.append(math.log(r / (1 - r)))
        bounds = [(-9.0, 9.0)] * len(x0)
        opt = _maximise(self, objective, np.array(x0), bounds, options, ep_tol)
        self.p, self.v0 = unpack(opt.x)
        self.fit(warm_start=True)
        return opt

    def predict(self, X_new, return_var=False):
        """Posterior mean (and variance) of new scores (Gaussian part)."""
        self._require_fit()
        Xn = self.data.transform(X_new)
        mean = Xn @ self.result_.mean
        if not return_var:
            return mean
        return mean, row_variances(Xn, self.result_.cov)
