"""Gibbs pseudo-posteriors of the AUC risk as ``particles`` static models.

:class:`AUCGibbsModel` targets, for linear scores ``s_theta(x) = x . theta``,

    pi_lam(theta)  ∝  prior(theta) * exp(-lam * R_n(theta)),

with ``R_n`` the empirical AUC risk (fraction of mis-ordered positive/negative
pairs, ties 1/2; see :mod:`pac_particles.auc`). ``particles`` tempers from
exponent 0 to 1, so the model's log-likelihood is ``-lam * R_n(theta)`` and the
tempering path visits the Gibbs posteriors at ``gamma_t = lam * exponent_t``.

Scale of ``lam``: it multiplies the *fraction* of mis-ordered pairs
(``P = n_pos * n_neg`` pairs). The SMC section of Ridgway et al. (2014)
normalises by the ``n (n - 1)`` ordered pairs instead; their ``gamma`` equals
our ``lam * n (n - 1) / (2 n_pos n_neg)``. Their EP section uses
``gamma' = gamma / (n_pos n_neg)`` per pair, which is our convention.

:class:`~pac_particles.tempering.RobustAdaptiveTempering` (re-exported here)
is ``particles``' adaptive tempering with a bracket for the next exponent that
cannot fail on steep targets.

Example
-------
::

    import particles
    from particles import smc_samplers as ssp
    from pac_particles.data import load_dataset
    from pac_particles.models import AUCGibbsModel, RobustAdaptiveTempering

    X, y, _ = load_dataset("pima")
    model = AUCGibbsModel(X, y, lam=len(y))
    fk = RobustAdaptiveTempering(model, wastefree=True, len_chain=10)
    smc = particles.SMC(fk=fk, N=200)     # 200 x 10 particles
    smc.run()
    smc.X.shared["exponents"][-1]          # 1.0

References
----------
Ridgway, J., Alquier, P., Chopin, N. and Liang, F. (2014). PAC-Bayesian AUC
classification and scoring. NIPS 27.

Dau, H.-D. and Chopin, N. (2022). Waste-free Sequential Monte Carlo. JRSS B 84,
114-148.
"""

import time

import numpy as np
from particles import distributions as dists
from particles import smc_samplers as ssp

from .checks import InputError, resolve_lam
from .data import validate_xy
from .gaussian import gp_predictive
from .kernels import SquaredExponential, gram_matrix, kernel_diag
from .priors import (CholeskyNormal, gaussian_prior, param_array,
                     stable_cholesky)
from .risks import AUCRisk
# the tempering Feynman-Kac model, importable from here as in the README
from .tempering import RobustAdaptiveTempering, check_reached_target

__all__ = ["AUCGibbsModel", "GPAUCModel", "RobustAdaptiveTempering",
           "check_reached_target"]


class _GibbsModel(ssp.StaticModel):
    """What every Gibbs model shares: validated data, ``lam`` (resolved once
    for PU labels), its empirical risk, and ``loglik = -lam * risk`` with the
    bookkeeping that ``run_smc`` reports."""

    def _setup(self, X, y, lam, standardize, pu_prior):
        data = validate_xy(X, y, standardize=standardize)
        self.lam, self.lam_pn = resolve_lam(lam, pu_prior)
        self.pu_prior = pu_prior
        self.empirical_risk = AUCRisk(data.y)
        self.n_risk_evaluations = 0
        self.loglik_seconds = 0.0
        return data

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


class AUCGibbsModel(_GibbsModel):
    """AUC Gibbs posterior for linear scores, a ``particles`` static model.

    Parameters
    ----------
    X : array of shape (n, d)
    y : array of shape (n,), binary labels
    lam : float > 0
        Inverse temperature multiplying the AUC risk ``R_n`` (a fraction in
        [0, 1]); ``lam`` of the order of n is a common choice.
    prior : particles.distributions.StructDist, optional
        A distribution with a field ``theta`` of dimension d (after constant
        columns are dropped). Default: iid N(0, 1).
    standardize : bool
        Standardise the columns of X (recommended with an isotropic prior,
        which otherwise weighs features by their units).
    pu_prior : float in [0, 1), optional
        Positive-unlabelled data: ``y = 1`` marks labelled positives, ``y = 0``
        the unlabelled points, of which a fraction ``pu_prior`` is positive.
        The model then uses ``lam / (1 - pu_prior)`` on the observed (PU) risk,
        which targets ``lam`` on the positive-vs-negative risk (see
        :mod:`pac_particles.auc`); ``self.lam`` is that observed-scale value,
        ``self.lam_pn`` the one you gave.

    Attributes
    ----------
    data : pac_particles.data.AUCData
        The validated data (``data.transform`` maps new inputs).
    n_risk_evaluations : int
        Number of score vectors whose risk was computed so far.
    loglik_seconds : float
        Wall time spent inside :meth:`loglik` so far.
    """

    #: linear scores ``x . theta`` (GP models have latent scores ``s``)
    is_gp = False

    def __init__(self, X, y, lam, prior=None, standardize=True, pu_prior=None):
        data = self._setup(X, y, lam, standardize, pu_prior)
        self._X_ordered = self.empirical_risk.ordered(data.X)
        if prior is None:
            prior = gaussian_prior(data.d)
        _check_theta_prior(prior, data.d)
        super().__init__(data=data, prior=prior)

    @property
    def d(self):
        return self.data.d

    def risk(self, theta):
        """AUC risk ``R_n`` of particles ``theta`` ((N, d) array or a
        structured array with field ``theta``)."""
        return self.empirical_risk.linear(param_array(theta), self._X_ordered)

    def predict_scores(self, X_new, point):
        """Scores ``X_new @ point`` of preprocessed inputs (``data.transform``)."""
        return X_new @ point


class GPAUCModel(_GibbsModel):
    """AUC Gibbs posterior with a Gaussian-process prior on the scores.

    The parameter is the vector ``s`` of latent scores of the n training
    points, with prior ``N(0, K)``, ``K = kernel(X, X)``, and
    ``loglik(s) = -lam * R_n(s)``, computed by the risk kernel directly on
    ``s`` (no matrix product). Scores of new inputs are the GP conditional
    mean ``k_*' K^-1 s`` (Ridgway et al. 2014, section 4).

    The Gram matrix is symmetrised and factorised once, with jitter added
    geometrically until the Cholesky factorisation succeeds (duplicated rows
    make K singular); the factor ``kernel_chol`` drives the default move,
    :class:`~pac_particles.moves.EllipticalSlice` (one batched triangular
    product per step for all particles). The random walk calibrated on the
    particle covariance is refused: in dimension n it needs more particles
    than n to estimate a covariance at all (the failure of the SMC-AUC
    student report), and it ignores the prior correlations that the
    elliptical move follows exactly.

    Parameters
    ----------
    X : array of shape (n, d); y : binary labels
    lam : float > 0
    kernel : callable ``kernel(X1, X2) -> Gram``, e.g.
        :class:`~pac_particles.priors.SquaredExponential` (default, lengthscale
        ``sqrt(d)`` on standardised inputs) or
        :class:`~pac_particles.priors.LinearKernel`.
    standardize : bool
    pu_prior : float in [0, 1), optional (see :class:`AUCGibbsModel`)

    Attributes
    ----------
    data, kernel, gram (K), kernel_chol (C, K + jitter = C C'), jitter.
    """

    #: the parameter is the vector of latent training scores ``s``
    is_gp = True

    def __init__(self, X, y, lam, kernel=None, standardize=True, pu_prior=None):
        data = self._setup(X, y, lam, standardize, pu_prior)
        if kernel is None:
            kernel = SquaredExponential(lengthscale=np.sqrt(data.d))
        if not callable(kernel):
            raise InputError("kernel must be callable: kernel(X1, X2) -> Gram "
                             "matrix (e.g. pac_particles.priors.SquaredExponential)")
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
        """AUC risk of latent score vectors ((N, n) array or structured
        array with field ``s``)."""
        return self.empirical_risk(param_array(s))

    def predict_scores(self, X_new, point, return_var=False):
        """GP conditional mean ``k_*' K^-1 s`` at preprocessed inputs for a
        latent score vector ``point`` (and ``k_** - k_*' K^-1 k_*`` if
        ``return_var``)."""
        return self.predictive(X_new, point, return_var=return_var)

    def predictive(self, X_new, latent_mean, latent_cov=None, return_var=True):
        """GP predictive at preprocessed inputs for latent training scores
        ``s ~ N(latent_mean, latent_cov)``
        (:func:`pac_particles.gaussian.gp_predictive`)."""
        K_star = np.asarray(self.kernel(X_new, self.data.X), dtype=float)
        k_diag = kernel_diag(self.kernel, X_new) if return_var else None
        return gp_predictive(self.kernel_chol, K_star, latent_mean, latent_cov,
                             k_diag)


def _check_theta_prior(prior, d):
    if not hasattr(prior, "rvs") or not hasattr(prior, "logpdf"):
        raise InputError("prior must be a particles distribution with rvs and "
                         "logpdf (e.g. pac_particles.priors.gaussian_prior(d))")
    sample = prior.rvs(size=2)
    names = getattr(sample.dtype, "names", None) or ()
    if "theta" not in names:
        raise InputError("prior must be a StructDist with a field 'theta'")
    if np.reshape(sample["theta"], (2, -1)).shape != (2, d):
        raise InputError(f"prior field 'theta' must have dimension d = {d} "
                         f"(columns after dropping constants), got "
                         f"{sample['theta'].shape[1:]}")
