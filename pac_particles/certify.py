"""The certificates of a fitted :class:`~pac_particles.estimator.PACBayesAUC`.

:class:`AUCCertificates` is the estimator's mixin that turns its fitted
posterior into PAC-Bayes certificates (:mod:`pac_particles.bounds`):

* the data-free terms ``E_rho[R_n]`` and ``KL(rho || prior)`` of a posterior
  (SMC particles, EP/VB Gaussians, GP latent scores), with ``E_rho[R_n]`` an
  upper confidence bound from sampled pairs when the pairs are too many to
  sum (:data:`~pac_particles.bounds.EXACT_RISK_MAX_PAIRS`);
* the headline certificate ``certificate_``: the kl bound under the
  data-free and the data-dependent prior, the tighter at ``eps / 2`` each;
* the dissertation's Corollary 19 (``bound_``) of the Gaussian
  approximations, from the same terms;
* SMC's ``cv_rule="certified"``: among the tempering steps the folds cannot
  tell apart from the best (one standard error), the Gibbs posterior with
  the tightest certificate, free in ``eps`` since the kl bound holds for
  every posterior at once.

It reads the estimator's parameters (``method``, ``prior``, ``kernel``,
``eps``, ``random_state``) and fitted attributes (``posterior_``,
``approximation_``, ``_prior_var()``).

Example
-------
::

    from pac_particles.estimator import PACBayesAUC
    est = PACBayesAUC().fit(X, y)        # certificate_ from this mixin
    est.certificate_.bound, est.certificate_.prior, est.lam_

References
----------
[PRST21] Perez-Ortiz, M., Rivasplata, O., Shawe-Taylor, J. and Szepesvari, C.
(2021). Tighter risk certificates for neural networks. JMLR 22(227), 1-40.

[HTF09] Hastie, T., Tibshirani, R. and Friedman, J. (2009). The Elements of
Statistical Learning, 2nd ed. Springer, section 7.10.
"""

import dataclasses

import numpy as np

from .bounds import (EXACT_RISK_MAX_PAIRS, RISK_SAMPLE_PAIRS,
                     auc_certificate, data_dependent_candidate,
                     data_dependent_prior, gibbs_kl, pac_bayes_bound,
                     pac_bayes_bound_gibbs, sampled_expected_risk_bound)
from .gaussian import gaussian_kl
from .probit_risk import expected_auc_risk
from .risks import AUCRisk

__all__ = ["AUCCertificates", "CERTIFICATE_BOUNDS", "RISK_SAMPLE_SHARE"]

# default of PACBayesAUC._certificate's prior: fit the data-dependent prior
_FIT_HERE = object()
#: The inequalities of the estimator's certificate candidates (each under
#: the data-free and, where it applies, the data-dependent prior).
CERTIFICATE_BOUNDS = ("kl",)
#: The share of ``eps`` spent on sampling ``E_rho[R_n]`` when the pairs are
#: too many to sum (:meth:`PACBayesAUC._data_free_terms`).
RISK_SAMPLE_SHARE = 0.1


class AUCCertificates:
    """Mixin of :class:`~pac_particles.estimator.PACBayesAUC`: its
    certificates (module docstring)."""

    def _gaussian_certificate(self, approx, grid_size, terms):
        """The dissertation's Corollary 19 for the fitted Gaussian
        approximation, from ``terms`` (:meth:`_data_free_terms`: its
        ``E_rho[R_n]``, exact or a sampled upper bound, and its KL) -- the
        values :func:`~pac_particles.bounds.pac_bayes_bound_gaussian` and
        ``pac_bayes_bound_gp`` would compute again."""
        expected, kl, data, _, risk_delta = terms
        if self.prior == "spike_slab":
            # the Gibbs bound through the evidence, lam E[R_n] + KL ~ -log Z,
            # with EP's log Z standing in for the exact one
            return pac_bayes_bound_gibbs(
                self.posterior_.log_z, approx.lam, risk=AUCRisk(data.y),
                expected_risk=expected, eps=self.eps, grid_size=grid_size)
        return pac_bayes_bound(expected, kl, approx.lam, risk=AUCRisk(data.y),
                               eps=self.eps - risk_delta, grid_size=grid_size)

    def _most_certified_step(self, cv):
        """Among the tempering steps of ``cv.posterior`` (the refit, kept
        step by step) whose ``gamma`` is on the grid and within one standard
        error of the best mean validation AUC (the curve interpolated in
        ``log gamma`` as for the folds), the Gibbs posterior with the
        tightest certificate (``cv_rule='certified'``)."""
        post = cv.posterior
        gammas = post.gammas
        steps = [t for t in range(1, post.n_steps + 1)
                 if gammas[t] >= cv.grid[0] * (1 - 1e-9)
                 and cv.mean_auc_at(gammas[t]) >= cv.one_se_floor]
        if not steps:
            # no step landed in the set (it can be narrow): the step nearest
            # to the best value, in log gamma
            steps = [1 + int(np.argmin(np.abs(np.log(gammas[1:])
                                              - np.log(cv.best_lam))))]
        prior = self._data_dependent_prior(post)
        # the chosen step's standard errors only (German credit: 0.3 s)
        bounds = [self._certificate(post.at_step(t, standard_errors=False),
                                    prior).bound for t in steps]
        return post.at_step(steps[int(np.argmin(bounds))])

    def _data_dependent_prior(self, post):
        """The EP prior of the data-dependent candidate for the posterior
        ``post``, fitted once per fit; None where that candidate does not
        apply: GP scores, SMC in score space (``d > n``: the particles are
        training scores, whose KL to a prior on ``theta`` is not the
        particles'), spike-and-slab prior, fewer than two points of a class.
        Its split is drawn from the seed alone, before any fit; the choice
        depends on the labels only, as the bound does. Kept for the fit's
        data (the certified rule's candidate steps and the headline
        certificate share it)."""
        data = post.data if self.method == "smc" else self.approximation_.data
        if not (self.kernel is None and self.prior == "gaussian"
                and not getattr(post, "is_gp", False)
                and min(data.n_pos, data.n_neg) >= 2):
            return None
        kept = getattr(self, "_data_prior", None)
        if kept is None or kept[0] is not data:      # a new fit's data
            kept = (data, data_dependent_prior(
                data.X, data.y, prior_var=self._prior_var(),
                seed=0 if self.random_state is None else self.random_state))
            self._data_prior = kept
        return kept[1]

    def _data_free_terms(self, post):
        """``(E_rho[R_n], KL(rho || prior), data, rho, risk_delta)`` of the
        posterior ``post`` under the data-free prior: the ingredients of its
        certificates (``rho`` as :func:`data_dependent_candidate` takes it).
        Above :data:`~pac_particles.bounds.EXACT_RISK_MAX_PAIRS` pairs a
        Gaussian posterior's ``E_rho[R_n]`` is an upper confidence bound
        from sampled pairs at level ``risk_delta`` = :data:`RISK_SAMPLE_SHARE`
        of ``eps`` (:func:`~pac_particles.bounds.sampled_expected_risk_bound`);
        ``risk_delta`` is 0 otherwise."""
        if self.method == "smc":
            data = post.data
            expected = post.expected_risk
            kl = gibbs_kl(post.log_z, post.lam, expected)
            return expected, kl, data, dict(particles=(post.theta,
                                                       post.weights, kl)), 0.0
        approx = self.approximation_
        data = approx.data
        rho = dict(gaussian=(post.mean, post.cov))
        risk_delta = 0.0
        if self.kernel is not None:
            eye = np.eye(data.n)
            expected = expected_auc_risk(post.mean, post.cov, eye[data.y],
                                         eye[~data.y])
            kl = max(gaussian_kl(post.mean, post.cov, approx.prior_cov()), 0.0)
            return expected, kl, data, rho, risk_delta
        if data.n_pos * data.n_neg > EXACT_RISK_MAX_PAIRS:
            risk_delta = RISK_SAMPLE_SHARE * self.eps
            expected, estimate = sampled_expected_risk_bound(
                post.mean, post.cov, data.X_pos, data.X_neg, risk_delta,
                n_pairs=RISK_SAMPLE_PAIRS,
                seed=0 if self.random_state is None else self.random_state)
        else:
            expected = estimate = expected_auc_risk(post.mean, post.cov,
                                                    data.X_pos, data.X_neg)
        # the Gibbs KL of spike-and-slab EP is a plug-in of log Z and the
        # estimate; the upper bound enters the risk term only
        kl = (gibbs_kl(post.log_z, approx.lam, estimate)
              if self.prior == "spike_slab" else
              max(gaussian_kl(post.mean, post.cov, self._prior_var()), 0.0))
        return expected, kl, data, rho, risk_delta

    def _certificate(self, post=None, prior=_FIT_HERE, terms=None):
        """The tightest certificate of the fitted posterior
        (:func:`pac_particles.bounds.auc_certificate`, ``delta = eps`` split
        evenly between the candidates): the PAC-Bayes-kl bound under the
        data-free prior and, for linear scores under the Gaussian prior,
        under an EP prior fitted on 30% of each class
        (:func:`pac_particles.bounds.data_dependent_candidate`). The kl bound
        holds for every posterior at once, so the data-driven ``lam_`` costs
        nothing. Catoni's bound is not a candidate: on every data set of the
        README's certificates table it was within 0.001 of the kl bound or
        looser, so its share of ``eps`` only loosened the others
        (:data:`CERTIFICATE_BOUNDS`). ``post`` (default ``posterior_``) and
        ``prior`` (the data-dependent prior already fitted, or None for
        none; by default fitted here) let :meth:`_most_certified_step`
        compare steps; ``terms``: :meth:`_data_free_terms` of ``post`` when
        already computed."""
        post = self.posterior_ if post is None else post
        if terms is None:
            terms = self._data_free_terms(post)
        expected, kl, data, rho, risk_delta = terms
        extra = []
        if prior is _FIT_HERE:
            # at the scale where the risk is sampled, so would the
            # data-dependent candidate's be (and its EP prior fit): not used
            prior = None if risk_delta else self._data_dependent_prior(post)
        if prior is not None:
            extra.append(data_dependent_candidate(
                data.X, data.y, prior_var=self._prior_var(), prior=prior,
                bounds=CERTIFICATE_BOUNDS, **rho))
        cert = auc_certificate(expected, kl, risk=AUCRisk(data.y),
                               delta=self.eps - risk_delta,
                               bounds=CERTIFICATE_BOUNDS, extra=extra)
        if risk_delta:
            cert = dataclasses.replace(
                cert, delta=self.eps,
                prior=(f"data-free: E_rho[R_n] bounded from "
                       f"{RISK_SAMPLE_PAIRS} sampled pairs at level "
                       f"{risk_delta:g}"))
        return cert
