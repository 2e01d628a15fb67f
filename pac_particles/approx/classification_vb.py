"""Gaussian variational approximation of the Gibbs posterior of a linear
classifier [ARC16, Sec. 3.3, 4.1, 4.2]: the classification counterpart of
:class:`pac_particles.approx.vb.GaussianVB`, on the same families and
optimisers (:mod:`pac_particles.approx.variational`), with the closed-form
expected losses of :mod:`pac_particles.problem.gaussian_losses`.

References
----------
[ARC16] Alquier, P., Ridgway, J. and Chopin, N. (2016). On the properties of
variational approximations of Gibbs posteriors. Journal of Machine Learning
Research 17(239), 1-41.
"""

import math

import numpy as np

from pac_particles.core.checks import check_count, check_positive
from pac_particles.core.gaussian import positive_probability, row_variances
from pac_particles.problem.gaussian_losses import GaussianPointRisk
from pac_particles.problem.problem import as_problem
from pac_particles.approx.variational import _GaussianVariational

__all__ = ["ClassificationVB", "PILOT_FACTOR"]

#: a cold fit starts from a pilot fit on ``pilot_rows`` rows once it has
#: more than this many times as many (ClassificationVB)
PILOT_FACTOR = 8


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
    decrement_tol : float, optional
        L-BFGS also stops once the objective's predicted decrease to its
        optimum is at most this many nats (families ``isotropic`` and
        ``diagonal``; :meth:`~pac_particles.approx.gaussian_family.GaussianFamily.decrement`),
        and a fit from ``init`` runs in the family's metric there (the mean
        scaled by the start's standard deviations), ``tol`` on the scaled
        gradient.
    pilot_rows : int, optional
        With ``decrement_tol``, a fit without ``init`` of ``n`` rows, more
        than :data:`PILOT_FACTOR` times this many, starts from a fit on
        ``n / PILOT_FACTOR`` of them, drawn uniformly (``seed``), on the
        same scale and at the same ``lam`` (the risk is a mean over the
        rows, so its optimum is near theirs): a cold start's many
        evaluations on a sample, a warm start's few in the metric on all
        rows. (A sample of a fixed size, at the ``lam`` of ten million
        rows, made a rugged 0-1 objective of too few rows: hundreds of
        evaluations.)
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
    _task = "classification"

    def __init__(self, X, y=None, lam=None, loss="zero_one", prior_var=None,
                 family="full", fit_intercept=True, standardize=True,
                 batch_size=None, resample=True, seed=None, max_iter=None,
                 tol=1e-6, step_size=0.02, pu_prior=None, decrement_tol=None,
                 pilot_rows=None):
        # the default lam = sqrt(n d) needs the design (d with the
        # intercept): set the problem up at lam = 1, then move it there; the
        # PU risk is reweighted per point, so lam is used as given
        problem = as_problem(
            X, y, lam, self._task, type(self).__name__,
            default_lam=lambda data: math.sqrt(data.n * data.d), loss=loss,
            standardize=standardize, fit_intercept=fit_intercept,
            pu_prior=pu_prior)
        self._configure(problem, prior_var, family, batch_size, resample,
                        seed, max_iter, tol, step_size, decrement_tol,
                        pilot_rows)

    def _configure(self, problem, prior_var=None, family="full",
                   batch_size=None, resample=True, seed=None, max_iter=None,
                   tol=1e-6, step_size=0.02, decrement_tol=None,
                   pilot_rows=None):
        self._setup_problem(problem, family)
        self.risk = problem.risk
        self.prior_var = check_positive(1.0 / self.data.d if prior_var is None
                                        else prior_var, "prior_var")
        self.batch_size = (None if batch_size is None
                           else check_count(batch_size, "batch_size"))
        self.max_iter = (None if max_iter is None
                         else check_count(max_iter, "max_iter"))
        self.resample, self.seed = bool(resample), seed
        self.tol = check_positive(tol, "tol")
        self.decrement_tol = (None if decrement_tol is None else
                              check_positive(decrement_tol, "decrement_tol"))
        self.pilot_rows = (None if pilot_rows is None
                           else check_count(pilot_rows, "pilot_rows"))
        self.step_size = check_positive(step_size, "step_size")
        self._expected = GaussianPointRisk(self.data.X, self.risk)

    def fit(self, init=None):
        """Optimise (:meth:`_GaussianVariational.fit`), from a pilot fit on
        a sample of the rows where ``pilot_rows`` asks for one."""
        n = self.data.n
        if (init is None and self.pilot_rows is not None
                and self.decrement_tol is not None and self._batch is None
                and n > PILOT_FACTOR * self.pilot_rows):
            rng = np.random.default_rng(self.seed)
            sample = np.zeros(n, dtype=bool)
            sample[rng.choice(n, n // PILOT_FACTOR, replace=False)] = True
            # the sample on these data's scale: its fit is a start here
            init = ClassificationVB.from_problem(
                self.problem.part(sample, own_scale=False),
                prior_var=self.prior_var, family=self.family, tol=self.tol,
                decrement_tol=self.decrement_tol).fit()
        return super().fit(init)

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
        return self.design_probability(self.data.transform(X_new))

    def design_probability(self, Z):
        """:meth:`predict_proba` of rows ``Z`` of the design already (these
        data's coordinates, with the intercept column)."""
        res = self._require_fit()
        return positive_probability(Z @ res.mean,
                                    row_variances(Z, res.compact_cov))

    def __repr__(self):
        state = (f", objective={self.result_.objective:.6g}"
                 if self.result_ is not None else ", not fitted")
        return (f"ClassificationVB(loss={self.loss!r}, family="
                f"{self.family!r}, lam={self.lam:.4g}{state})")
