"""What the Gibbs models of :mod:`pac_particles.smc.models` share once
built: the pseudo-likelihood, and the parametrisations they are sampled in
(:class:`SpanData`: the span coordinates of the design).

Every model holds a :class:`~pac_particles.problem.problem.GibbsProblem`
(validated data, empirical risk ``r_n``, ``lam``), kept by its one
constructor path in :mod:`pac_particles.smc.models`, and targets

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
from particles import smc_samplers as ssp

from pac_particles.core.checks import InputError
from pac_particles.core.gaussian import gp_predictive
from pac_particles.core.kernels import kernel_diag
from pac_particles.problem.accelerated_risk import (DeviceLinearRisk,
                                                   check_backend)
from pac_particles.problem.data import AUCData
from pac_particles.problem.priors import param_array

# the bases are private: the models of pac_particles.smc.models are the API
__all__ = ["check_gibbs_model", "SpanData"]


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
    """What every Gibbs model shares: ``loglik = -lam * risk`` with the
    bookkeeping that ``run_smc`` reports, on the problem
    (:class:`~pac_particles.problem.problem.GibbsProblem`) its constructor
    kept as ``problem`` and its parts ``data``, ``empirical_risk``,
    ``lam``, ``lam_pn`` and ``pu_prior`` (:mod:`pac_particles.smc.models`:
    the constructor ``(X, y, lam, ...)`` sets the problem up,
    ``from_problem`` takes one already set up, so that a fit's SMC, EP and
    VB see the same data and the same ``lam``)."""

    #: the task (``GibbsProblem.task``) of the problems the model takes
    task = "ranking"
    #: ``"primal"`` (theta are coefficients of the design), ``"score"``
    #: (coordinates in its span) or ``"gp"`` (latent training scores)
    space = "primal"

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

    def _use_backend(self, backend):
        """Where :meth:`risk` runs: ``"numba"`` (the host's kernels, on the
        design where it is) or ``"jax"`` (``device_risk``, the design put
        on the device once)."""
        self.backend = check_backend(backend)
        self.device_risk = (None if self.backend == "numba" else
                            DeviceLinearRisk(self.empirical_risk,
                                             self._X_ordered))

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



class SpanData(AUCData):
    """The data of a :class:`SpanAUCModel`: ``X`` holds the coordinates
    ``B = U_r Sigma_r`` of the training scores in an orthonormal basis of
    the span of the (preprocessed, prior-scaled) design, and
    :meth:`transform` maps new raw inputs to the same coordinates,
    ``transform(x) = design.transform(x) @ basis`` (``basis = S0^1/2 V_r``),
    so that ``x . theta = transform(x) . w`` for ``theta = basis w``."""

    def __init__(self, design, coordinates, basis):
        self.design = design
        self.basis = basis
        r = coordinates.shape[1]
        super().__init__(X=np.ascontiguousarray(coordinates), y=design.y,
                         columns=design.columns, center=np.zeros(r),
                         scale=np.ones(r),
                         feature_names=[f"span{k + 1}" for k in range(r)],
                         n_raw_features=design.n_raw_features)

    def transform(self, X_new):
        return self.design.transform(X_new) @ self.basis

    def raw_linear(self, w):
        """``(coef, offset)`` of the score ``transform(x) . w`` on the raw
        inputs: the design's of ``theta = basis w``. ``w`` (r,) or (m, r)."""
        return self.design.raw_linear(np.asarray(w, dtype=float) @ self.basis.T)


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
