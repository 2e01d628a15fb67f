"""What the Gibbs models of :mod:`pac_particles.smc.models` share: the
problem, the pseudo-likelihood, and the two parametrisations they are
sampled in.

Every model holds a :class:`~pac_particles.problem.problem.GibbsProblem`
(validated data, empirical risk ``r_n``, ``lam``), set up by its
constructor or given to ``from_problem``, and targets

    pi_lam(theta)  ∝  prior(theta) * exp(-lam * r_n(theta))

as a ``particles`` static model: ``loglik = -lam * r_n``, tempered from
exponent 0 to 1. The parameter is either the coefficient vector ``theta``
of linear scores ``x . theta`` (:class:`_LinearGibbsModel`, ``space``
``"primal"``; ``"score"`` for the span coordinates of
:class:`~pac_particles.smc.models.SpanAUCModel`) or the vector ``s`` of
latent training scores under a Gaussian-process prior
(:class:`_GPGibbsModel`, ``space`` ``"gp"``). The concrete models pair a
risk with one of these.
"""

import time

import numpy as np
from particles import distributions as dists
from particles import smc_samplers as ssp

from pac_particles.core.checks import InputError
from pac_particles.core.gaussian import gp_predictive
from pac_particles.core.kernels import SquaredExponential, gram_matrix, kernel_diag
from pac_particles.problem.accelerated_risk import device_linear_risk
from pac_particles.problem.priors import (CholeskyNormal, gaussian_prior,
                                          param_array, stable_cholesky)
from pac_particles.problem.problem import check_problem

# the bases are private: the models of pac_particles.smc.models are the API
__all__ = ["check_gibbs_model"]


def check_gibbs_model(model):
    """``model`` if it is a Gibbs model of :mod:`pac_particles.smc.models`
    (what the sampler and its result read: ``lam``, ``data``, ``prior``,
    ``space``, the risk counters), else InputError."""
    if not isinstance(model, _GibbsModel):
        raise InputError(
            f"model must be a Gibbs model of pac_particles.smc.models (e.g. "
            f"AUCGibbsModel, GPAUCModel, ClassificationGibbsModel), got "
            f"{type(model).__name__}")
    return model


class _GibbsModel(ssp.StaticModel):
    """What every Gibbs model shares: its problem
    (:class:`~pac_particles.problem.problem.GibbsProblem`: the validated
    data, the empirical risk and ``lam``, resolved once for PU labels), and
    ``loglik = -lam * risk`` with the bookkeeping that ``run_smc`` reports.

    The constructor ``(X, y, lam, ...)`` sets the problem up
    (:meth:`GibbsProblem.ranking` or :meth:`GibbsProblem.classification`);
    :meth:`from_problem` takes one already set up, so that a fit's SMC, EP
    and VB see the same data and the same ``lam``. Either way the model
    keeps it as ``problem`` and its parts as ``data``, ``empirical_risk``,
    ``lam``, ``lam_pn`` and ``pu_prior``."""

    #: the task (``GibbsProblem.task``) of the problems the model takes
    task = "ranking"
    #: ``"primal"`` (theta are coefficients of the design), ``"score"``
    #: (coordinates in its span) or ``"gp"`` (latent training scores)
    space = "primal"

    @classmethod
    def from_problem(cls, problem, **options):
        """The model of a :class:`~pac_particles.problem.problem.GibbsProblem`
        of the model's ``task``; ``options`` are the constructor's arguments
        beyond the problem's (``prior``, ``kernel``, ``prior_var``)."""
        return cls(check_problem(problem, cls.task, cls.__name__), **options)

    def _adopt(self, problem):
        """Keep ``problem`` and its parts; the validated data."""
        self.problem = problem
        self.pu_prior = problem.pu_prior
        self.lam, self.lam_pn = problem.lam, problem.lam_pn
        self.empirical_risk = problem.risk
        self.n_risk_evaluations = 0
        self.loglik_seconds = 0.0
        return problem.data

    @property
    def is_gp(self):
        """Whether the parameter is the vector of latent training scores."""
        return self.space == "gp"

    def risk(self, theta):
        raise NotImplementedError

    def loglik(self, theta, t=None):
        """``-lam * R_n`` for each particle (``t`` is ignored: the
        pseudo-likelihood does not factorise over data points)."""
        start = time.perf_counter()
        out = -self.lam * np.atleast_1d(self.risk(theta))
        self.n_risk_evaluations += out.shape[0]
        self.loglik_seconds += time.perf_counter() - start
        return out


class _LinearGibbsModel(_GibbsModel):
    """Gibbs posteriors of linear scores ``x . theta``: the parameter is
    ``theta`` (field ``theta`` of the prior), the risk is evaluated on the
    rows of ``X`` in the risk's order (:meth:`Risk.linear`), by the numba
    kernels or, with ``backend="jax"``, on JAX's device
    (:class:`~pac_particles.problem.accelerated_risk.DeviceLinearRisk`)."""

    def _build(self, problem, prior=None, backend="numba"):
        data = self._adopt(problem)
        self._X_ordered = self.empirical_risk.ordered(data.X)
        if prior is None:
            prior = gaussian_prior(data.d)
        _check_theta_prior(prior, data.d)
        self._use_backend(backend)
        super().__init__(data=data, prior=prior)

    def _use_backend(self, backend):
        """Where :meth:`risk` runs: ``"numba"`` (the host's kernels) or
        ``"jax"`` (``device_risk``, the design put on the device once)."""
        self.device_risk = device_linear_risk(self.empirical_risk,
                                              self._X_ordered, backend)
        self.backend = backend

    @property
    def d(self):
        return self.data.d

    def risk(self, theta):
        """Empirical risk of particles ``theta`` ((N, d) array or a
        structured array with field ``theta``)."""
        if self.device_risk is not None:
            return self.device_risk.linear(param_array(theta))
        return self.empirical_risk.linear(param_array(theta), self._X_ordered)

    def predict_scores(self, X_new, point):
        """Scores ``X_new @ point`` of preprocessed inputs (``data.transform``)."""
        return X_new @ point

    @property
    def design_data(self):
        """The validated design on which ``theta`` lives: ``data``."""
        return self.data

    def linear_coefficients(self, theta):
        """``theta`` itself: the parameter is the coefficient vector
        (:meth:`SpanAUCModel.linear_coefficients` maps its own)."""
        return np.asarray(theta, dtype=float)

    def sample_linear_coefficients(self, theta, rng):
        """``theta`` itself (``rng`` unused; see :class:`SpanAUCModel`)."""
        return np.atleast_2d(np.asarray(theta, dtype=float))


class _GPGibbsModel(_GibbsModel):
    """Gibbs posteriors with a Gaussian-process prior ``N(0, K)`` on the
    latent training scores ``s``: the parameter is ``s`` (field ``s``), the
    risk is evaluated on ``s`` directly (no matrix product), and new inputs
    are scored by the GP conditional mean ``k_*' K^-1 s``."""

    #: the parameter is the vector of latent training scores ``s``
    space = "gp"

    def _build(self, problem, kernel=None):
        data = self._adopt(problem)
        if kernel is None:
            kernel = SquaredExponential(lengthscale=np.sqrt(data.d))
        if not callable(kernel):
            raise InputError("kernel must be callable: kernel(X1, X2) -> Gram "
                             "matrix (e.g. pac_particles.core.kernels.SquaredExponential)")
        self.kernel = kernel
        self.gram = gram_matrix(kernel, data.X, label="GP kernel")
        self.kernel_chol, self.jitter = stable_cholesky(
            self.gram, label="GP kernel matrix")
        prior = dists.StructDist({"s": CholeskyNormal(self.kernel_chol)})
        super().__init__(data=data, prior=prior)

    @property
    def d(self):
        """Dimension of the parameter: the number of training points."""
        return self.data.n

    def risk(self, s):
        """Empirical risk of latent score vectors ((N, n) array or
        structured array with field ``s``)."""
        return self.empirical_risk(param_array(s))

    def predict_scores(self, X_new, point, return_var=False):
        """GP conditional mean ``k_*' K^-1 s`` at preprocessed inputs for a
        latent score vector ``point`` (and ``k_** - k_*' K^-1 k_*`` if
        ``return_var``); ``point`` may also be (n, N), one column per
        latent vector."""
        return self.predictive(X_new, point, return_var=return_var)

    def predictive(self, X_new, latent_mean, latent_cov=None, return_var=True):
        """GP predictive at preprocessed inputs for latent training scores
        ``s ~ N(latent_mean, latent_cov)``
        (:func:`pac_particles.core.gaussian.gp_predictive`)."""
        K_star = np.asarray(self.kernel(X_new, self.data.X), dtype=float)
        k_diag = kernel_diag(self.kernel, X_new) if return_var else None
        return gp_predictive(self.kernel_chol, K_star, latent_mean, latent_cov,
                             k_diag)



def _check_theta_prior(prior, d):
    if not hasattr(prior, "rvs") or not hasattr(prior, "logpdf"):
        raise InputError("prior must be a particles distribution with rvs and "
                         "logpdf (e.g. pac_particles.problem.priors.gaussian_prior(d))")
    sample = prior.rvs(size=2)
    names = getattr(sample.dtype, "names", None) or ()
    if "theta" not in names:
        raise InputError("prior must be a StructDist with a field 'theta'")
    if np.reshape(sample["theta"], (2, -1)).shape != (2, d):
        raise InputError(f"prior field 'theta' must have dimension d = {d} "
                         f"(columns after dropping constants), got "
                         f"{sample['theta'].shape[1:]}")
