"""EP for linear scores ``s = X theta`` under a Gaussian prior [RACL14, section 3.3].

Target ``N(theta; 0, diag(prior_var)) * exp(-lam R_n(X theta))``, one site
per positive/negative pair (:mod:`pac_particles.approx.ep.sites`), parallel EP with
damping [RACL14, Alg. 4] (:mod:`pac_particles.approx.ep.core`). The prior factor of
the training scores is ``C = X S0^1/2`` (primal space, whitened
``w = S0^-1/2 theta``), or, when d > n, ``C = R'`` from the thin QR
``S0^1/2 X' = Q R`` (score space: the same posterior as a GP with the linear
kernel ``X S0 X'``, exactly). A sweep costs O(P r + n r^2 + r^3),
``r = min(d, n)``.

``log_z_grad`` is the gradient of the EP energy in the prior variances
(exact at an EP fixed point [See05]) and ``fit_hyperparameters`` maximises
``log_z`` over relative (ARD) prior variances: under an isotropic prior
neither ``log_z`` nor the posterior direction depends on the prior scale
(the risk is invariant to ``theta -> c theta``).

Example
-------
::

    from pac_particles.problem.datasets import load_dataset
    from pac_particles.approx.ep import EPLinear
    X, y, _ = load_dataset("pima")
    ep = EPLinear(X, y, lam=len(y))          # standardised, prior N(0, I)
    res = ep.fit()
    res.mean, res.log_z, res.n_sweeps, res.converged
    ep.loo_auc()                             # EP cross-validation AUC
    ep.predict(X[:5], return_var=True)

References
----------
[RACL14] Ridgway, J., Alquier, P., Chopin, N. and Liang, F. (2014).
PAC-Bayesian AUC classification and scoring. NIPS 27, section 3.3,
Algorithm 4, appendix B.2.

[See05] Seeger, M. (2005). Expectation propagation for exponential families.
Technical report, University of California at Berkeley.

[DB18] Dehaene, G. and Barthelme, S. (2018). Expectation propagation in the
large data limit. JRSS B 80(1), 199-217.

[Min04] Minka, T. (2004). Power EP. Technical report MSR-TR-2004-149,
Microsoft Research.
"""

import functools

import numpy as np
from scipy import linalg

from pac_particles.core.checks import InputError, check_choice
from pac_particles.core.gaussian import span_factor
from pac_particles.problem.problem import as_problem
from pac_particles.approx.ep.base import _EPBase, _check_bounds, _maximise, site_layout
from pac_particles.approx.ep.core import _check_alpha, _check_finite_result, check_fit_options
from pac_particles.approx.ep.prior_sites import _FixedGaussianPrior


def _theta_cov(chol, sd, Q=None):
    """Posterior covariance of theta from the whitened posterior precision
    ``chol chol'`` and the prior standard deviations ``sd``.

    Primal (``Q`` None): ``S0^1/2 (chol chol')^-1 S0^1/2``. Score space:
    ``S0^1/2 (I - Q Q' + Q (chol chol')^-1 Q') S0^1/2``, the prior outside
    the span of the data plus the posterior inside it (d x d, so
    :class:`~pac_particles.approx.ep.EPResult` computes it on first access).
    """
    if Q is None:
        inv_chol = linalg.solve_triangular(chol, np.diag(sd), lower=True)
        return inv_chol.T @ inv_chol
    T = linalg.solve_triangular(chol, Q.T, lower=True)
    inner = np.eye(Q.shape[0]) - Q @ Q.T + T.T @ T
    return sd[:, None] * inner * sd[None, :]


class EPLinear(_EPBase):
    """EP for linear scores ``x . theta`` under a Gaussian prior.

    Target ``N(theta; 0, diag(prior_var)) * exp(-lam R_n(X theta))``; pair
    sites as in :mod:`pac_particles.approx.ep.sites`; parallel EP with damping
    [RACL14, Alg. 4] in O(P r + n r^2 + r^3) per sweep, r = min(d, n).

    Parameters
    ----------
    X : array of shape (n, d)
    y : array of shape (n,), binary labels
    lam : float > 0
        Multiplies the fraction of mis-ordered pairs; ``kappa = lam / P``.
    prior_var : float or array of shape (d,), > 0
        Prior variance(s) of theta (after constant columns are dropped). A
        scalar is the isotropic prior, whose value does not change ``log_z``
        nor the posterior direction.
    standardize : bool, default True
        Centre and scale the columns (see :func:`~pac_particles.problem.data.validate_xy`).
    space : {"auto", "primal", "score"}
        ``"primal"``: d-dimensional theta; ``"score"``: the equivalent GP with
        kernel ``X diag(prior_var) X'`` (exact, n-dimensional); ``"auto"``
        picks score space when d > n.
    damping : float in (0, 1]
        Fraction of the full EP update taken per sweep (1 = undamped).
    tol : float > 0
        Convergence tolerance on the marginal moments.
    max_sweeps : int
    pu_prior : float in [0, 1), optional
        Positive-unlabelled labels (1 = labelled positive, 0 = unlabelled,
        a fraction ``pu_prior`` of which is positive): ``lam / (1 - pu_prior)``
        is used on the observed risk (see :mod:`pac_particles.problem.auc`). The same
        argument is accepted by :class:`~pac_particles.approx.ep.EPSpikeSlab` and
        :class:`~pac_particles.approx.ep.EPGP`.
    n_pairs : None, "all" or int
        The pairs EP runs on. ``"all"``: the ``P = n_pos n_neg`` pairs;
        an int B: the incomplete U-statistic on B sampled pairs
        (:class:`~pac_particles.problem.risks.SampledAUCRisk`, ``kappa = lam / B``,
        a sweep in O(B r + n r^2)); None (default): all pairs up to
        ``AUTO_MAX_PAIRS = 5e6`` (:data:`pac_particles.approx.ep.base.AUTO_MAX_PAIRS`),
        that many sampled pairs above. Sampling adds
        ``(Var(h) - Var(U_n)) / B`` to the variance of the risk (see
        :class:`~pac_particles.problem.risks.SampledAUCRisk`).
    pair_sampling : {"stratified", "uniform"}
        Balanced over the points (default) or uniform with replacement.
    seed : int, optional, the draw of the pairs.
    sites : {"auto", "per_pair", "averaged"}
        ``"per_pair"``: one site per pair, parallel EP [RACL14, Alg. 4];
        ``"averaged"``: on sampled pairs only, every pair site tied to one
        average factor with a common cavity, averaged EP [DB18]
        (:mod:`pac_particles.approx.ep.averaged`), O(B r^2) per iteration.
        ``"auto"`` is ``"per_pair"``: averaged EP always has a proper
        cavity, but at ``lam = n`` on sampled pairs (``kappa = 0.2``) its
        radial variance cycles and the run does not converge either (the
        mean direction does settle); see the module docstring.
    alpha : float in (0, 1], default 1
        Fractional (power) EP [Min04; RACL14, Fig. 4]: each pair site is
        refined through its power ``alpha`` (cavity ``q / q_ij^alpha``,
        tilted ``cavity * t_ij^alpha``, i.e. ``kappa -> alpha kappa``, site
        ``(q_new / cavity)^(1/alpha)``) and ``log_z`` is the power-EP energy.
        1 is plain EP (bit for bit); ``alpha -> 0`` tends to Gaussian VB.
        A smaller ``alpha`` is not closer to SMC on the data measured,
        nor a cure for large ``kappa`` (``scripts/bench_power_ep.py``;
        the user guide, "Fractional (power) EP").
        ``sites="averaged"`` takes ``alpha = 1`` only.

    Examples
    --------
    >>> import numpy as np
    >>> from pac_particles.approx.ep import EPLinear
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((60, 3)); y = X[:, 0] + rng.standard_normal(60) > 0
    >>> res = EPLinear(X, y, lam=60).fit()
    >>> bool(res.converged), res.mean.shape
    (True, (3,))
    """

    _label = "EPLinear"

    def __init__(self, X, y=None, lam=None, prior_var=1.0, standardize=True,
                 space="auto", damping=0.7, tol=1e-3, max_sweeps=500,
                 pu_prior=None, n_pairs=None, pair_sampling="stratified",
                 seed=None, sites="auto", alpha=1.0):
        self._configure(as_problem(X, y, lam, self._task, type(self).__name__,
                                   standardize=standardize, pu_prior=pu_prior),
                        prior_var, space, damping, tol, max_sweeps, n_pairs,
                        pair_sampling, seed, sites, alpha)

    def _configure(self, problem, prior_var=1.0, space="auto", damping=0.7,
                   tol=1e-3, max_sweeps=500, n_pairs=None,
                   pair_sampling="stratified", seed=None, sites="auto",
                   alpha=1.0):
        self._setup_problem(problem, n_pairs, pair_sampling, seed)
        self.alpha = _check_alpha(alpha)
        self.sites = sites
        self.sites_ = site_layout(sites, self.risk)
        self._setup_prior(prior_var, space, damping, tol, max_sweeps)

    def _setup_prior(self, prior_var, space, damping, tol, max_sweeps):
        d = self.data.d
        try:
            pv = np.asarray(prior_var, dtype=float)
        except (TypeError, ValueError):
            raise InputError(f"prior_var must be a positive number or an "
                             f"array of them, got {prior_var!r}")
        if pv.ndim == 0:
            pv = np.full(d, float(pv))
        if pv.shape != (d,):
            raise InputError(f"prior_var must be a scalar or have shape ({d},) "
                             f"(columns kept after dropping constants), got "
                             f"{pv.shape}")
        if not np.all(np.isfinite(pv)) or np.any(pv <= 0):
            raise InputError("prior_var must be finite and > 0")
        self.prior_var = pv
        self.space = check_choice(space, "space", ("auto", "primal", "score"))
        self.damping, self.tol, self.max_sweeps = check_fit_options(
            damping, tol, max_sweeps)
        self._sites = self._input_sites()

    @property
    def space_(self):
        """The space actually used: "primal" or "score"."""
        if self.space == "auto":
            return "score" if self.data.d > self.data.n else "primal"
        return self.space

    def _factor(self):
        """Factor C of the prior score covariance ``X S0 X' = C C'``, and the
        basis ``Q`` (None: the identity) of the coordinates ``w`` it acts on.

        Primal: ``C = X S0^1/2`` (w = whitened theta). Where that matrix has
        rank r < d (one-hot groups, collinear columns; German credit: 48 of
        61), its thin SVD ``U_r Sigma_r V_r'`` gives ``C = U_r Sigma_r`` and
        ``Q = V_r``: the sites see only ``Q' w``, the other directions keep
        their prior exactly, and every sweep and leave-one-out costs as for
        r columns. Score space: thin QR ``S0^1/2 X' = Q R`` and ``C = R'``
        (n x n, exact even when X S0 X' is singular, e.g. centred columns);
        w = Q' S0^-1/2 theta. Kept while ``prior_var`` is unchanged (a path
        over ``lam`` factors once).
        """
        key = (self.space_, self.prior_var.tobytes())
        kept = getattr(self, "_kept_factor", None)
        if kept is not None and kept[0] == key and kept[1] is self._Xs:
            return kept[2]
        A = self._Xs * np.sqrt(self.prior_var)
        if self.space_ == "primal":
            factor = span_factor(A)
        else:
            Q, R = np.linalg.qr(A.T)
            factor = (R.T, Q)
        self._kept_factor = (key, self._Xs, factor)
        return factor

    def fit(self, warm_start=False):
        """Run EP; store and return the :class:`~pac_particles.approx.ep.EPResult`.

        Parameters
        ----------
        warm_start : bool
            Start from the pair sites of the previous fit (used by
            :meth:`fit_hyperparameters`).
        """
        C, Q = self._factor()
        self._Q = Q
        prior = _FixedGaussianPrior(C.shape[1])
        res = self._fit_core(C, prior, self.space_, warm_start)
        st = self._run.state
        sd = np.sqrt(self.prior_var)
        res.mean = sd * (st.w_mean if Q is None else Q @ st.w_mean)
        # a module-level function, not a closure: a fitted model (and an
        # estimator holding it) must pickle
        res._cov_fn = functools.partial(_theta_cov, st.chol, sd, Q)
        if Q is None:
            res._cov = res._cov_fn()
        _check_finite_result(res, self._label)
        self.result_ = res
        return res

    def _theta_moments_diag(self):
        """Posterior mean and marginal variances of theta (no d x d work)."""
        st = self._run.state
        sd = np.sqrt(self.prior_var)
        if self._Q is None:
            inv_chol = linalg.solve_triangular(st.chol, np.eye(st.chol.shape[0]),
                                               lower=True)
            w_var = np.einsum("ij,ij->j", inv_chol, inv_chol)
            return sd * st.w_mean, self.prior_var * w_var
        Q = self._Q
        T = linalg.solve_triangular(st.chol, Q.T, lower=True)
        w_var = 1.0 - np.einsum("ij,ij->i", Q, Q) + np.einsum("ij,ij->j", T, T)
        return sd * (Q @ st.w_mean), self.prior_var * w_var

    def log_z_grad(self):
        """Gradient of ``log_z`` with respect to the prior variances.

        At an EP fixed point [See05] it is the gradient of the Gaussian
        evidence with the sites held fixed::

            d log_z / d v_k = (V_kk + m_k^2 - v_k) / (2 v_k^2).

        Returns
        -------
        dict with ``"prior_var"``: array (d,). For an isotropic prior the
        derivative along ``v -> c v`` is ``sum_k v_k g_k``, zero up to the EP
        tolerance (``log_z`` does not depend on the prior scale).
        """
        self._require_fit()
        m, var = self._theta_moments_diag()
        v = self.prior_var
        return {"prior_var": (var + m ** 2 - v) / (2 * v ** 2)}

    def fit_hyperparameters(self, bounds=(1e-3, 1e3), options=None,
                            ep_tol=1e-6):
        """ARD: maximise ``log_z`` over per-coordinate prior variances.

        The overall scale is not identified (``log_z`` is invariant to
        ``prior_var -> c prior_var``), so the geometric mean of ``prior_var``
        is held at its current value and only the relative scales move
        (within ``bounds`` relative to that mean).

        Returns
        -------
        scipy.optimize.OptimizeResult (``x`` = log relative variances); the
        model keeps the optimum in ``prior_var`` and its fit in ``result_``.
        """
        bounds = _check_bounds(bounds)
        gm = np.exp(np.mean(np.log(self.prior_var)))
        x0 = np.log(self.prior_var / gm)

        def objective(x):
            x = x - x.mean()
            self.prior_var = gm * np.exp(x)
            res = self.fit(warm_start=True)
            g = self.log_z_grad()["prior_var"] * self.prior_var
            return res.log_z, g - g.mean()

        opt = _maximise(self, objective, x0,
                        [tuple(np.log(bounds))] * x0.size, options, ep_tol)
        x = opt.x - opt.x.mean()
        self.prior_var = gm * np.exp(x)
        self.fit(warm_start=True)
        return opt

    def predict(self, X_new, return_var=False):
        """Posterior mean (and variance) of the scores ``x . theta`` of new
        inputs (raw columns, preprocessed like the training data)."""
        self._require_fit()
        Xn = self.data.transform(X_new)
        mean = Xn @ self.result_.mean
        if not return_var:
            return mean
        # x' V x through the factorisation: no d x d matrix in score space
        chol = self._run.state.chol
        A = Xn * np.sqrt(self.prior_var)
        if self._Q is None:
            T = linalg.solve_triangular(chol, A.T, lower=True)
            return mean, np.einsum("ij,ij->j", T, T)
        QA = self._Q.T @ A.T
        T = linalg.solve_triangular(chol, QA, lower=True)
        var = (np.einsum("ij,ij->i", A, A) - np.einsum("ij,ij->j", QA, QA)
               + np.einsum("ij,ij->j", T, T))
        return mean, np.maximum(var, 0.0)
