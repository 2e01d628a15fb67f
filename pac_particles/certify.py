"""The certificates of a fitted :class:`~pac_particles.estimator.PACBayesAUC`.

:class:`AUCCertificates` is the estimator's mixin that turns its fitted
posterior into PAC-Bayes certificates (:mod:`pac_particles.bounds`):

* the data-free terms ``E_rho[R_n]`` and ``KL(rho || prior)`` of a posterior
  (EP/VB Gaussians, GP latent scores, the Gaussian fitted to SMC's
  particles), in closed form, with ``E_rho[R_n]`` an upper confidence bound
  from sampled pairs when the pairs are too many to sum
  (:data:`~pac_particles.bounds.EXACT_RISK_MAX_PAIRS`); for SMC also the
  exact Gibbs posterior, from a lower confidence bound on ``log Z``
  (:func:`~pac_particles.bounds.gibbs_certificate`): no Monte Carlo
  estimate enters a certificate without its own share of ``eps``;
* the headline certificate ``certificate_``: the kl bound under the
  data-free and the data-dependent prior, the tighter at ``eps / 2`` each;
  hyper-parameters chosen by the evidence are paid for (SMC's grid: a
  union bound) or tuned on the data-dependent prior's part only (EP), and
  the certificate records which, with each part's share of ``eps``;
* the dissertation's Corollary 19 (``bound_``) of the Gaussian
  approximations, from the same terms, at a ``lam`` of the grid fixed in
  advance when ``lam`` was chosen with the data;
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

from .bounds import (EVIDENCE_SHARE, EXACT_RISK_MAX_PAIRS, RISK_SAMPLE_PAIRS,
                     auc_certificate, data_dependent_candidate,
                     data_dependent_prior, gibbs_certificate, pac_bayes_bound,
                     prior_split, sampled_expected_risk_bound, tightest)
from .gaussian import gaussian_kl
from .kernels import SquaredExponential
from .moves.base import weighted_gaussian_fit
from .priors import SpikeSlabPrior, prior_gaussian_factor
from .probit_risk import expected_auc_risk
from .risks import AUCRisk

__all__ = ["AUCCertificates", "CERTIFICATE_BOUNDS", "RISK_SAMPLE_SHARE",
           "PRIOR_FRACTION"]

# default of PACBayesAUC._certificate's prior: fit the data-dependent prior
_FIT_HERE = object()
#: The inequalities of the estimator's certificate candidates (each under
#: the data-free and, where it applies, the data-dependent prior).
CERTIFICATE_BOUNDS = ("kl",)
#: The share of ``eps`` spent on sampling ``E_rho[R_n]`` when the pairs are
#: too many to sum (:meth:`PACBayesAUC._data_free_terms`).
RISK_SAMPLE_SHARE = 0.1
#: Share of each class in the prior part ``A`` (drawn from the labels and
#: the seed alone): the data-dependent prior is fitted there, and EP's
#: evidence tunes the hyper-parameters there (:meth:`_prior_part`).
PRIOR_FRACTION = 0.3
#: Ridge (times the mean variance) of the Gaussian fitted to SMC's particles
#: for its certificate (:meth:`AUCCertificates._particle_gaussian`)
PARTICLE_FIT_RIDGE = 1e-8
#: ``Certificate.posterior`` of SMC's candidates on that Gaussian
PARTICLE_GAUSSIAN = "Gaussian fitted to the particles"


class AUCCertificates:
    """Mixin of :class:`~pac_particles.estimator.PACBayesAUC`: its
    certificates (module docstring)."""

    def _gaussian_certificate(self, approx, lam_grid, terms):
        """The dissertation's Corollary 19 for the fitted Gaussian
        approximation, from ``terms`` (:meth:`_data_free_terms`: its
        ``E_rho[R_n]``, exact or a sampled upper bound, and its KL, for a
        spike-and-slab prior that of the Gaussian itself) -- the values
        :func:`~pac_particles.bounds.pac_bayes_bound_gaussian` and
        ``pac_bayes_bound_gp`` would compute again. ``lam_grid``: the grid
        fixed in advance that ``lam`` was chosen on (None for a ``lam``
        given): the bound's ``lam`` is one of its values, the union bound
        over it paid."""
        expected, kl, data, rho, risk_delta = terms
        if self._evidence_tuned():
            # the prior's hyper-parameters were tuned on the prior part A:
            # the bound rests on the other rows B alone
            expected_b, n_pos, n_neg = self._part_b_risk(data, rho, risk_delta)
            return pac_bayes_bound(expected_b, kl, approx.lam, n_pos=n_pos,
                                   n_neg=n_neg, eps=self.eps - risk_delta,
                                   lam_grid=lam_grid)
        return pac_bayes_bound(expected, kl, approx.lam, risk=AUCRisk(data.y),
                               eps=self.eps - risk_delta,
                               lam_grid=lam_grid)

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
        apply: GP scores, SMC in the design's span (``d > n``: the particles
        are coordinates ``w`` of the scores, not ``theta``), spike-and-slab prior, fewer than two points of a class.
        Its split is drawn from the seed alone, before any fit; the choice
        depends on the labels only, as the bound does. Kept for the fit's
        data (the certified rule's candidate steps and the headline
        certificate share it)."""
        data = post.data if self.method == "smc" else self.approximation_.data
        if not (self.kernel is None and self.prior == "gaussian"
                and not getattr(post, "is_gp", False)
                # sampled in the design's span (d > n): the particles are
                # coordinates w, not theta
                and not (self.method == "smc" and post.predictor.space != "primal")
                and min(data.n_pos, data.n_neg) >= 2):
            return None
        kept = getattr(self, "_data_prior", None)
        if kept is None or kept[0] is not data:      # a new fit's data
            return self._fit_data_dependent_prior(data)
        return kept[1]

    def _prior_seed(self):
        return 0 if self.random_state is None else self.random_state

    def _prior_part(self, positives):
        """Mask of the prior part ``A``: :data:`PRIOR_FRACTION` of each
        class, drawn from the labels and the seed alone (the split of the
        data-dependent prior)."""
        return prior_split(positives, PRIOR_FRACTION, self._prior_seed())

    def _evidence_tuned(self):
        """Whether EP's evidence tuned the prior's hyper-parameters (on the
        prior part ``A``: :meth:`_evidence_on_prior_part`)."""
        return self.hyperparameters == "evidence" and self.method == "ep"

    def _fit_data_dependent_prior(self, data):
        """Fit the data-dependent prior on the prior part of ``data`` (the
        fit's validated data) and keep it for this fit. Its EP starts from
        the prior variance given as a parameter, fixed in advance (the ARD
        variances, when EP's evidence tunes them, are tuned on ``A``
        here)."""
        prior = data_dependent_prior(
            data.X, data.y, prior_var=self.prior_var, fraction=PRIOR_FRACTION,
            seed=self._prior_seed(), tune=self._evidence_tuned())
        self._data_prior = (data, prior)
        return prior

    def _data_free_terms(self, post):
        """``(E_rho[R_n], KL(rho || prior), data, rho, risk_delta)`` of the
        posterior ``post`` under the data-free prior: the ingredients of its
        certificates (``rho`` as :func:`data_dependent_candidate` takes it).
        Above :data:`~pac_particles.bounds.EXACT_RISK_MAX_PAIRS` pairs a
        Gaussian posterior's ``E_rho[R_n]`` is an upper confidence bound
        from sampled pairs at level ``risk_delta`` = :data:`RISK_SAMPLE_SHARE`
        of ``eps`` (:func:`~pac_particles.bounds.sampled_expected_risk_bound`);
        ``risk_delta`` is 0 otherwise.

        SMC's particles have no density (an empirical measure has no finite
        KL to the prior): ``rho`` is the Gaussian fitted to them
        (:meth:`_particle_gaussian`), whose terms are exact, like EP's. The
        exact Gibbs posterior is another candidate (:meth:`_certificate`).
        Spike-and-slab EP reports a Gaussian for theta: its KL to the
        mixture prior (:meth:`pac_particles.priors.SpikeSlabPrior.
        kl_gaussian`), not ``-log Z_EP - lam E[R_n]``, which falls short of
        it by ``KL(q || Gibbs)``."""
        if self.method == "smc":
            return self._particle_gaussian(post)
        approx = self.approximation_
        data = approx.data
        rho = dict(gaussian=(post.mean, post.cov))
        if self.kernel is not None:
            eye = np.eye(data.n)
            expected = expected_auc_risk(post.mean, post.cov, eye[data.y],
                                         eye[~data.y])
            kl = max(gaussian_kl(post.mean, post.cov, approx.prior_cov()), 0.0)
            return expected, kl, data, rho, 0.0
        expected, risk_delta = self._expected_risk(post.mean, post.cov,
                                                   data.X_pos, data.X_neg)
        if self.prior == "spike_slab":
            kl = SpikeSlabPrior(data.d, p=approx.p, v0=approx.v0,
                                v1=approx.v1).kl_gaussian(post.mean, post.cov)
        else:
            kl = max(gaussian_kl(post.mean, post.cov, self._prior_var()), 0.0)
        return expected, kl, data, rho, risk_delta

    def _expected_risk(self, mean, cov, X_pos, X_neg):
        """``(E_rho[R_n], risk_delta)`` for ``rho = N(mean, cov)`` on the
        scores ``X @ theta``: exact up to
        :data:`~pac_particles.bounds.EXACT_RISK_MAX_PAIRS` pairs
        (``risk_delta = 0``), above an upper confidence bound from sampled
        pairs at level ``risk_delta`` (module docstring)."""
        if len(X_pos) * len(X_neg) <= EXACT_RISK_MAX_PAIRS:
            return expected_auc_risk(mean, cov, X_pos, X_neg), 0.0
        risk_delta = RISK_SAMPLE_SHARE * self.eps
        upper, _ = sampled_expected_risk_bound(
            mean, cov, X_pos, X_neg, risk_delta, n_pairs=RISK_SAMPLE_PAIRS,
            seed=0 if self.random_state is None else self.random_state)
        return upper, risk_delta

    def _particle_gaussian(self, post):
        """:meth:`_data_free_terms` of the Gaussian ``N(mean, cov)`` fitted
        to SMC's weighted particles (all rows, importance draws included;
        a ridge of :data:`PARTICLE_FIT_RIDGE` times the mean variance keeps
        it proper with few particles): a posterior chosen with the data and
        the Monte Carlo draws, which the kl bound allows (it holds for every
        ``rho`` at once), with ``E_rho[R_n]`` and its KL to the model's
        prior in closed form. GP particles are latent training scores
        (identity rows, prior ``N(0, K)``); in the design's span (``d >
        n``) the parameter is ``w`` under ``N(0, I)``."""
        data = post.data
        mean, chol = weighted_gaussian_fit(post.weights, post.theta,
                                           ridge=PARTICLE_FIT_RIDGE)
        cov = chol @ chol.T
        if isinstance(post.prior, SpikeSlabPrior):
            kl = post.prior.kl_gaussian(mean, cov)
        else:
            L = prior_gaussian_factor(post.prior)
            kl = max(gaussian_kl(mean, cov, L @ L.T), 0.0)
        if post.is_gp:
            eye = np.eye(data.n)
            pos, neg = eye[data.y], eye[~data.y]
        else:
            pos, neg = data.X_pos, data.X_neg
        expected, risk_delta = self._expected_risk(mean, cov, pos, neg)
        return expected, kl, data, dict(gaussian=(mean, cov)), risk_delta

    def _gibbs_candidate(self, post, data):
        """The kl bound of the exact Gibbs posterior that SMC samples, a
        candidate of :meth:`_certificate`
        (:func:`~pac_particles.bounds.gibbs_certificate`): ``-log Z`` from
        above by a lower confidence bound at :data:`~pac_particles.bounds.
        EVIDENCE_SHARE` of the candidate's ``delta``
        (:meth:`~pac_particles.posterior.SMCPosterior.log_z_lower_bound`),
        the worst case over the unknown ``E_G[R_n]``, the kl bound at the
        rest. When SMC's evidence grid chose the prior among ``K`` runs
        (by their ``log Z`` estimates, whose draws the final run may
        replay), both levels are divided by ``K``: a union bound over the
        ``K`` priors and the ``K`` runs. ``delta_shares`` and ``note`` say
        so."""
        grid = getattr(self, "evidence_grid_", None)
        grid_size = 1 if grid is None else len(grid.params)
        risk = AUCRisk(data.y)

        def candidate(delta_each):
            delta_log_z = EVIDENCE_SHARE * delta_each
            # the evidence grid chose among K runs by their log Z estimates
            # (the chosen run may replay its draws): a bound for each of K
            log_z, how = post.log_z_lower_bound(delta_log_z / grid_size)
            cert = gibbs_certificate(
                log_z, post.lam, risk=risk,
                delta=(delta_each - delta_log_z) / grid_size,
                expected_risk=post.expected_risk)
            tuned = grid_size > 1
            notes = ([f"hyper-parameters chosen by SMC's evidence among "
                      f"{grid_size} values fixed in advance (union bound: "
                      f"log {grid_size} paid)"] if tuned else [])
            notes += self._standardisation_note()
            prior = "data-free" + (": " + "; ".join(notes) if notes else "")
            return dataclasses.replace(
                cert, delta=delta_each, note=how, prior=prior,
                delta_shares=(("kl", delta_each - delta_log_z),
                              ("log Z", delta_log_z)),
                hyperparameters=self._hyperparameter_record(),
                hyperparameters_tuned_on="whole sample" if tuned else "none",
                hyperparameter_grid_size=grid_size)
        return candidate

    def _certificate(self, post=None, prior=_FIT_HERE, terms=None):
        """The tightest certificate of the fitted posterior
        (:func:`pac_particles.bounds.tightest`, ``delta = eps`` split
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
        already computed.

        SMC: the posterior of those candidates is the Gaussian fitted to the
        particles (:meth:`_particle_gaussian`, exact terms), and the exact
        Gibbs posterior is one more candidate (:meth:`_gibbs_candidate`,
        ``posterior='exact Gibbs posterior'``, a lower confidence bound on
        ``log Z`` inside its share): the certificate's ``posterior`` and
        ``prior`` say which randomised score it certifies. The particles'
        own ``E[R_n]`` and ``log Z`` estimates are never plugged in.

        Hyper-parameters chosen with the data are paid for or kept off the
        rows that certify, and the certificate says which
        (``hyperparameters_tuned_on``, ``prior_fraction``,
        ``delta_shares``): SMC's evidence grid chooses among values fixed in
        advance on the whole sample, so the data-free candidate runs at
        ``delta / grid size`` (:meth:`_whole_sample_candidate`); EP's
        evidence is a continuous optimisation, which no union bound pays
        for, so it tunes on the prior part ``A`` only
        (:meth:`_evidence_on_prior_part`) and no data-free candidate is
        offered: linear scores are certified under the data-dependent prior
        (its ARD variances tuned on ``A``), GP and spike-and-slab posteriors
        on the other rows (:meth:`_prior_part_candidate`)."""
        post = self.posterior_ if post is None else post
        if terms is None:
            terms = self._data_free_terms(post)
        expected, kl, data, rho, risk_delta = terms
        tuned_on_part = self._evidence_tuned()
        if prior is _FIT_HERE:
            # at the scale where the risk is sampled, so would the
            # data-dependent candidate's be (and its EP prior fit): not
            # used, unless it is the only valid one (ARD tuned on A)
            prior = (None if risk_delta and not tuned_on_part
                     else self._data_dependent_prior(post))
        candidates = []
        if not tuned_on_part:
            candidates.append(self._whole_sample_candidate(expected, kl, data,
                                                           risk_delta))
        if prior is not None:
            candidates.append(data_dependent_candidate(
                data.X, data.y, prior_var=self._prior_var(), prior=prior,
                bounds=CERTIFICATE_BOUNDS, **rho))
        elif tuned_on_part:
            candidates.append(self._prior_part_candidate(kl, data, rho,
                                                         risk_delta))
        if self.method == "smc":
            # the Gaussian fitted to the particles, and the exact Gibbs
            # posterior they sample (a confidence bound on log Z inside)
            candidates = [
                lambda d, make=make: dataclasses.replace(
                    make(d), posterior=PARTICLE_GAUSSIAN)
                for make in candidates] + [self._gibbs_candidate(post, data)]
        # the sampled risk's share is spent where a candidate uses it
        spent = risk_delta if (not tuned_on_part or prior is None) else 0.0
        cert = tightest(candidates, self.eps - spent)
        if spent:
            cert = dataclasses.replace(
                cert, delta=self.eps, delta_shares=cert.delta_shares + (
                    (f"E_rho[R_n] from {RISK_SAMPLE_PAIRS} sampled pairs",
                     spent),))
        return cert

    def _hyperparameter_record(self):
        """``hyperparameters_`` as the certificate records them: ``(name,
        value)`` pairs, a value a float, a tuple of floats (ARD variances,
        lengthscales) or a kernel's repr."""
        record = []
        for name, value in sorted(self.hyperparameters_.items()):
            if isinstance(value, SquaredExponential):
                record += [("lengthscale", tuple(float(v)
                                                 for v in value.lengthscale)),
                           ("amplitude", float(value.amplitude))]
            elif callable(value):
                record.append((name, repr(value)))
            else:
                value = np.asarray(value, dtype=float)
                record.append((name, float(value) if value.ndim == 0
                               else tuple(float(v) for v in value)))
        return tuple(record)

    def _standardisation_note(self):
        """What a data-free prior on standardised columns leaves unpaid:
        its coordinates are the columns centred and scaled by the whole
        sample's inputs (never its labels), so the prior over scores is
        fixed only up to those ``2 d`` statistics. Said in the certificate
        rather than hidden (the data-dependent candidate preprocesses on
        its own part and carries no such caveat)."""
        if not self.standardize:
            return []
        return ["the prior's coordinates are the inputs standardised with "
                "the whole sample's column means and scales (inputs only, "
                "not labels; not paid for: fit with standardize=False for a "
                "prior fixed in advance)"]

    def _whole_sample_candidate(self, expected, kl, data, risk_delta):
        """The data-free prior's kl bound on the whole sample. When SMC's
        evidence chose the hyper-parameters among the ``K`` values of its
        grid (fixed before seeing the data: multiples of the default), the
        bound holds for each of the ``K`` priors at ``delta / K``: it runs
        at that level (``log K`` in its complexity term)."""
        grid = getattr(self, "evidence_grid_", None)
        grid_size = 1 if grid is None else len(grid.params)
        notes = []
        if grid_size > 1:
            notes.append(f"hyper-parameters chosen by SMC's evidence among "
                         f"{grid_size} values fixed in advance (union bound: "
                         f"log {grid_size} paid)")
        if risk_delta:
            notes.append(f"E_rho[R_n] bounded from {RISK_SAMPLE_PAIRS} "
                         f"sampled pairs at level {risk_delta:g}")
        notes += self._standardisation_note()
        fields = dict(
            prior="data-free" + (": " + "; ".join(notes) if notes else ""),
            n_candidates=1, alternatives=(), delta_shares=(),
            hyperparameters=self._hyperparameter_record(),
            hyperparameters_tuned_on="whole sample" if grid_size > 1
            else "none", hyperparameter_grid_size=grid_size)
        risk = AUCRisk(data.y)

        def candidate(delta_each):
            cert = auc_certificate(expected, kl, risk=risk,
                                   delta=delta_each / grid_size,
                                   bounds=CERTIFICATE_BOUNDS)
            return dataclasses.replace(cert, delta=delta_each, **fields)
        return candidate

    def _part_b_risk(self, data, rho, risk_delta):
        """``(E_rho[R_B], n_pos_B, n_neg_B)`` on the rows ``B`` outside the
        prior part: ``rho``'s marginal on ``B``'s scores, exact, or an upper
        confidence bound at ``risk_delta`` from sampled pairs as for the
        whole sample."""
        in_b = ~self._prior_part(data.y)
        mean, cov = rho["gaussian"]
        rows = np.eye(data.n) if self.kernel is not None else data.X
        pos, neg = rows[in_b & data.y], rows[in_b & ~data.y]
        if risk_delta:
            expected_b, _ = sampled_expected_risk_bound(
                mean, cov, pos, neg, risk_delta, n_pairs=RISK_SAMPLE_PAIRS,
                seed=self._prior_seed())
        else:
            expected_b = expected_auc_risk(mean, cov, pos, neg)
        return expected_b, len(pos), len(neg)

    def _prior_part_candidate(self, kl, data, rho, risk_delta):
        """The kl bound of a GP or spike-and-slab posterior whose prior's
        hyper-parameters EP's evidence tuned on the prior part ``A``
        (:meth:`_evidence_on_prior_part`): that prior depends on ``A`` only,
        so it is free for a bound on the other rows ``B``, with
        ``E_rho[R_B]`` (``rho``'s marginal on ``B``'s scores, exact or an
        upper confidence bound at ``risk_delta`` as for the whole sample),
        the same ``KL(rho || prior)`` and ``m_B = min(n_pos_B, n_neg_B)``."""
        expected_b, n_pos, n_neg = self._part_b_risk(data, rho, risk_delta)
        kind = "GP" if self.kernel is not None else "spike-and-slab"
        fields = dict(
            prior=(f"data-dependent: {kind} prior with hyper-parameters tuned "
                   f"by EP's evidence on {PRIOR_FRACTION:.0%} of each class "
                   f"(lam = n_A), certified on the other "
                   f"{1 - PRIOR_FRACTION:.0%}"),
            n_candidates=1, alternatives=(), delta_shares=(),
            prior_fraction=PRIOR_FRACTION,
            hyperparameters=self._hyperparameter_record(),
            hyperparameters_tuned_on="prior part")

        def candidate(delta_each):
            cert = auc_certificate(expected_b, kl, n_pos=n_pos,
                                   n_neg=n_neg, delta=delta_each,
                                   bounds=CERTIFICATE_BOUNDS)
            return dataclasses.replace(cert, **fields)
        return candidate
