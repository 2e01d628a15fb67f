"""The certificate of a fitted linear classifier's Gibbs posterior.

:func:`fitted_classifier_certificate` turns the posterior that
:class:`~pac_particles.sklearn.classifier.PACBayesClassifier` fitted into
the PAC-Bayes certificate of its randomised classifier (``theta`` drawn
from the posterior at each use) on the population misclassification rate,
from quantities that need no Monte Carlo estimate:

* VB and EP: the Gaussian ``rho`` itself, its expected 0-1 training error
  (:class:`~pac_particles.problem.gaussian_losses.GaussianPointRisk`) and
  its KL to the prior, in closed form
  (:func:`~pac_particles.bounds.classification_certificate`, ``m = n``);
* SMC: the tighter, at ``eps / 2`` each, of the Gaussian fitted to the
  particles (which have no density) and the exact Gibbs posterior of the
  fitted loss (:func:`~pac_particles.bounds.gibbs_certificate`, ``-log Z``
  from a lower confidence bound at a tenth of its share; the fitted loss,
  0-1 or ramp, is at least the 0-1 loss, so ``lam E[r01] + KL <= -log Z``
  and the worst case over ``E[r01]`` holds). The unbounded hinge and
  exponential losses have no such certificate by SMC (None).

None with PU labels: the PU risk is not a mean of ``n`` i.i.d. losses in
[0, 1].
"""

import dataclasses

from pac_particles.bounds import (CLASSIFICATION_TRIVIAL, EVIDENCE_SHARE,
                                  classification_certificate,
                                  gibbs_certificate, tightest)
from pac_particles.core.gaussian import gaussian_kl
from pac_particles.problem.gaussian_losses import GaussianPointRisk
from pac_particles.problem.priors import prior_gaussian_factor
from pac_particles.problem.risks import ClassificationRisk
from pac_particles.smc.moves.base import weighted_gaussian_fit

__all__ = ["fitted_classifier_certificate"]

#: ``Certificate.posterior`` of SMC's Gaussian candidate
PARTICLE_GAUSSIAN = "Gaussian fitted to the particles"


def _clipped(value):
    return min(max(float(value), 0.0), 1.0)


def fitted_classifier_certificate(method, loss, posterior, data, eps,
                                  prior_var=1.0, pu_prior=None):
    """The certificate of a fitted classification posterior (module
    docstring), or None where there is none.

    ``posterior``: the fitted
    :class:`~pac_particles.core.posterior_result.PosteriorResult` of
    ``method`` (``"smc"``, ``"vb"``, ``"ep"``); ``data`` its validated
    design (intercept column included); ``prior_var`` the Gaussian prior's
    variance of EP (VB's result carries its own KL)."""
    if pu_prior is not None:
        return None
    n = data.n
    zero_one = ClassificationRisk(data.y, "zero_one")
    if method != "smc":
        expected = GaussianPointRisk(data.X, zero_one)(posterior.mean,
                                                       posterior.cov)[0]
        kl = (posterior.kl if method == "vb" else max(
            gaussian_kl(posterior.mean, posterior.cov, float(prior_var)), 0.0))
        return classification_certificate(_clipped(expected), kl, n,
                                          delta=eps)
    if loss not in ("zero_one", "ramp"):
        return None
    mean, chol = weighted_gaussian_fit(posterior.weights, posterior.theta,
                                       ridge=1e-8)
    cov = chol @ chol.T
    L = prior_gaussian_factor(posterior.prior)
    kl = max(gaussian_kl(mean, cov, L @ L.T), 0.0)
    expected = GaussianPointRisk(data.X, zero_one)(mean, cov)[0]

    def gaussian(delta):
        cert = classification_certificate(_clipped(expected), kl, n,
                                          delta=delta)
        return dataclasses.replace(cert, posterior=PARTICLE_GAUSSIAN)

    def gibbs(delta):
        delta_log_z = EVIDENCE_SHARE * delta
        log_z, how = posterior.log_z_lower_bound(delta_log_z)
        cert = gibbs_certificate(log_z, posterior.lam, risk=zero_one,
                                 delta=delta - delta_log_z,
                                 trivial=CLASSIFICATION_TRIVIAL)
        return dataclasses.replace(
            cert, delta=delta, note=how,
            delta_shares=(("kl", delta - delta_log_z),
                          ("log Z", delta_log_z)))
    return tightest([gaussian, gibbs], eps)
