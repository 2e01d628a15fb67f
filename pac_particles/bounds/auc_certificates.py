"""The certificates of a fitted :class:`~pac_particles.sklearn.estimator.PACBayesAUC`.

:class:`AUCCertificates` is the estimator's mixin that turns its fitted
posterior into PAC-Bayes certificates (:mod:`pac_particles.bounds`):

* the data-free terms ``E_rho[R_n]`` and ``KL(rho || prior)`` of a posterior
  (EP/VB Gaussians, GP latent scores, the Gaussian fitted to SMC's
  particles), in closed form, with ``E_rho[R_n]`` an upper confidence bound
  from sampled pairs when the pairs are too many to sum
  (:data:`~pac_particles.bounds.EXACT_RISK_MAX_PAIRS`) or the rows stay on
  a Dask cluster (pairs fetched from it); for SMC also the
  exact Gibbs posterior, from a lower confidence bound on ``log Z``
  (:func:`~pac_particles.bounds.gibbs_certificate`): no Monte Carlo
  estimate enters a certificate without its own share of ``eps``;
* the headline certificate ``certificate_``: the kl bound under the
  data-free and the data-dependent prior, the tighter at ``eps / 2`` each;
  no candidate's prior has seen the rows whose risk it uses: SMC's
  evidence grid is paid for by a union bound; EP's evidence tunes the
  *posterior's* hyper-parameters on every row (the kl bound holds for
  every posterior), and is certified under the prior with the
  hyper-parameters as given (all rows) and under one tuned on the prior
  part ``A`` only (the other rows); the certificate records which, with
  each part's share of ``eps``;
* the dissertation's Corollary 19 (``bound_``) of the Gaussian
  approximations, from the data-free terms (for an EP evidence fit: the
  prior as given, all rows), at a ``lam`` of the grid fixed in advance
  when ``lam`` was chosen with the data;
* SMC's ``cv_rule="certified"``: among the tempering steps the folds cannot
  tell apart from the best (one standard error), the Gibbs posterior with
  the tightest certificate, free in ``eps`` since the kl bound holds for
  every posterior at once.

It reads the estimator's parameters (``method``, ``prior``, ``kernel``,
``eps``, ``random_state``) and fitted attributes (``posterior_``,
``approximation_``, ``hyperparameters_``).

Example: ``PACBayesAUC().fit(X, y).certificate_`` (its ``bound``, ``prior``).

References
----------
[PRST21] Perez-Ortiz, M., Rivasplata, O., Shawe-Taylor, J. and Szepesvari, C.
(2021). Tighter risk certificates for neural networks. JMLR 22(227), 1-40.

[HTF09] Hastie, T., Tibshirani, R. and Friedman, J. (2009). The Elements of
Statistical Learning, 2nd ed. Springer, section 7.10.
"""

import copy
import dataclasses

import numpy as np

from pac_particles.bounds import (EVIDENCE_SHARE, EXACT_RISK_MAX_PAIRS, RISK_SAMPLE_PAIRS,
                     auc_certificate, data_dependent_candidate,
                     data_dependent_prior, gibbs_certificate,
                     paired_expected_risk_bound, pac_bayes_bound,
                     prior_split, sampled_expected_risk_bound, tightest)
from pac_particles.approx.ep import EPGP, EPSpikeSlab
from pac_particles.bounds.rescaled_kl import (jittered_gram, rescaled_kl,
                                             rescaled_note, scaled_kl,
                                             with_note)
from pac_particles.core.gaussian import gaussian_kl
from pac_particles.core.kernels import SquaredExponential
from pac_particles.smc.moves.base import weighted_gaussian_fit
from pac_particles.problem.priors import SpikeSlabPrior, prior_gaussian_factor
from pac_particles.problem.problem import prior_hyperparameters
from pac_particles.problem.probit_risk import expected_auc_risk
from pac_particles.problem.risks import AUCRisk

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
#: What the data-free candidate of an EP evidence fit says of its prior
EVIDENCE_DATA_FREE_NOTE = (
    "the prior's hyper-parameters as given (the posterior's were tuned by "
    "EP's evidence on all rows; the bound holds for every posterior)")


class AUCCertificates:
    """Mixin of :class:`~pac_particles.sklearn.estimator.PACBayesAUC`: its
    certificates (module docstring)."""

    def _gaussian_certificate(self, post, lam_grid, terms):
        """The dissertation's Corollary 19 for the fitted Gaussian
        approximation, from ``terms`` (:meth:`_data_free_terms`: its
        ``E_rho[R_n]``, exact or a sampled upper bound, and its KL, for a
        spike-and-slab prior that of the Gaussian itself) -- the values
        :func:`~pac_particles.bounds.pac_bayes_bound_gaussian` and
        ``pac_bayes_bound_gp`` would compute again. ``lam_grid``: the grid
        fixed in advance that ``lam`` was chosen on (None for a ``lam``
        given): the bound's ``lam`` is one of its values, the union bound
        over it paid. For an EP evidence fit the terms are those of the
        prior with the hyper-parameters as given, on all rows: Corollary 19
        holds for every posterior, whatever tuned its hyper-parameters."""
        expected, kl, data, rho, risk_delta = terms
        return pac_bayes_bound(expected, kl, post.lam, n_pos=data.n_pos,
                               n_neg=data.n_neg, eps=self.eps - risk_delta,
                               lam_grid=lam_grid)

    def _most_certified_step(self, cv):
        """Among the tempering steps of ``cv.posterior`` (the refit, kept
        step by step) whose ``gamma`` is on the grid and within one standard
        error of the best mean validation AUC (the curve interpolated in
        ``log gamma`` as for the folds), the Gibbs posterior with the
        tightest certificate (``cv_rule='certified'``)."""
        post = cv.posterior
        # on the folds' (positive-vs-negative) scale of lam: PU labels
        gammas = post.gammas * (post.lam_pn / post.lam)
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
        data = post.data
        if not (self.kernel is None and self.prior == "gaussian"
                and not post.is_gp
                # sampled in the design's span (d > n): the particles are
                # coordinates w, not theta
                and post.space == "primal"
                and min(data.n_pos, data.n_neg) >= 2):
            return None
        kept = getattr(self, "_data_prior", None)
        if kept is None or kept[0] is not data:      # a new fit's data
            return self._fit_data_dependent_prior(data)
        return kept[1]

    def _prior_var(self):
        """The Gaussian prior's variances of the fit (ARD after EP's
        evidence), else the ``prior_var`` given."""
        return self.hyperparameters_.get("prior_var", self.prior_var)

    def _prior_seed(self):
        return 0 if self.random_state is None else self.random_state

    def _prior_part(self, positives):
        """Mask of the prior part ``A``: :data:`PRIOR_FRACTION` of each
        class, drawn from the labels and the seed alone (the split of the
        data-dependent prior)."""
        return prior_split(positives, PRIOR_FRACTION, self._prior_seed())

    def _evidence_tuned(self):
        """Whether EP's evidence tuned the posterior's hyper-parameters (on
        every row: :meth:`_evidence_on_all_rows`)."""
        return self.hyperparameters == "evidence" and self.method_ == "ep"

    def _given_hyperparameters(self, d):
        """The hyper-parameters of the data-free candidate's prior: the
        fit's, unless EP's evidence tuned them on the data; then the ones
        given as parameters (``prior_var``, ``spike_slab``, ``kernel``, or
        their defaults), fixed before seeing the data."""
        if not self._evidence_tuned():
            return self.hyperparameters_
        return self._given_prior(d)

    def _given_prior(self, d):
        return prior_hyperparameters(d, self.kernel, self.prior,
                                     self.spike_slab, self.prior_var)

    def _fit_data_dependent_prior(self, data):
        """Fit the data-dependent prior on the prior part of ``data`` (the
        fit's validated data) and keep it for this fit. Its EP starts from
        the prior variance given as a parameter, fixed in advance (when
        EP's evidence tunes the posterior's ARD variances on every row, this
        prior's are tuned on ``A`` alone, here)."""
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
        mixture prior (:meth:`pac_particles.problem.priors.SpikeSlabPrior.
        kl_gaussian`), not ``-log Z_EP - lam E[R_n]``, which falls short of
        it by ``KL(q || Gibbs)``.

        When EP's evidence tuned the posterior's hyper-parameters on every
        row, the prior here keeps the ones given as parameters
        (:meth:`_given_hyperparameters`): ``N(0, prior_var I)``, the
        spike-and-slab prior with the ``p, v0, v1`` given, or ``N(0, K)``
        with ``K`` the untuned kernel's Gram matrix of the training inputs
        (plus the jitter its Cholesky factor needs); the KL to it is exact,
        of ``rho`` at its best scale (:meth:`_rho_kl`: the same randomised
        ranking), and the bound holds for the tuned posterior as for any
        other."""
        if self.method_ == "smc":
            return self._particle_gaussian(post)
        approx = self.approximation_
        data = post.data
        rho = dict(gaussian=(post.mean, post.cov))
        hyper = self._given_hyperparameters(data.d)
        if self.kernel is not None:
            eye = np.eye(data.n)
            expected = expected_auc_risk(post.mean, post.cov, eye[data.y],
                                         eye[~data.y])
            prior = (jittered_gram(hyper["kernel"], data.X)
                     if self._evidence_tuned() else approx.prior_cov())
            kl, self._data_free_scale = self._rho_kl(post.mean, post.cov,
                                                     prior)
            return expected, kl, data, rho, 0.0
        expected, risk_delta = self._expected_risk(post.mean, post.cov, data)
        if self.prior == "spike_slab":
            prior = SpikeSlabPrior(data.d, p=hyper["p"], v0=hyper["v0"],
                                   v1=hyper["v1"])
        else:
            prior = hyper["prior_var"]
        kl, self._data_free_scale = self._rho_kl(post.mean, post.cov, prior)
        return expected, kl, data, rho, risk_delta

    def _rho_kl(self, mean, cov, prior, prior_mean=None):
        """``(KL, c)``: ``KL(rho || prior)`` of ``rho = N(mean, cov)``
        (``prior`` a :class:`~pac_particles.problem.priors.SpikeSlabPrior` or the
        covariance of ``N(prior_mean, prior)``), at ``c = 1``; for an EP
        evidence fit, of ``rho`` rescaled by the ``c > 0`` that makes it
        smallest (:func:`rescaled_kl`). Scores scaled by ``c`` rank alike,
        so ``N(c mean, c^2 cov)`` is the same randomised ranking, with the
        same ``E[R]`` and ``E[R_n]``; the kl bound holds for every
        posterior at once, so choosing ``c`` with the data is free. It
        matters there: the evidence sets the posterior's scale (the ARD
        variances' geometric mean is held, their spread is not), which a
        prior that did not see those rows can be far from."""
        if self._evidence_tuned():
            return rescaled_kl(mean, cov, prior, prior_mean)
        return scaled_kl(1.0, mean, cov, prior, prior_mean), 1.0

    def _expected_risk(self, mean, cov, data, rows=None):
        """``(E_rho[R_n], risk_delta)``, ``rho = N(mean, cov)``, on the
        scores of ``data``'s rows (or ``rows``: GP scores' identity rows):
        exact up to :data:`~pac_particles.bounds.EXACT_RISK_MAX_PAIRS`
        pairs (``risk_delta = 0``), above (and on a cluster) an upper
        confidence bound from sampled pairs at level ``risk_delta``."""
        seed = 0 if self.random_state is None else self.random_state
        delta = RISK_SAMPLE_SHARE * self.eps
        if not data.in_memory:         # independent pairs fetched from it
            P, N = data.sampled_pairs(np.random.default_rng([seed, 3]),
                                      RISK_SAMPLE_PAIRS)
            return paired_expected_risk_bound(mean, cov, P, N, delta)[0], delta
        X_pos, X_neg = (data.X_pos, data.X_neg) if rows is None else rows
        if len(X_pos) * len(X_neg) <= EXACT_RISK_MAX_PAIRS:
            return expected_auc_risk(mean, cov, X_pos, X_neg), 0.0
        return sampled_expected_risk_bound(
            mean, cov, X_pos, X_neg, delta, n_pairs=RISK_SAMPLE_PAIRS,
            seed=seed)[0], delta

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
        rows = None
        if post.is_gp:
            eye = np.eye(data.n)
            rows = eye[data.y], eye[~data.y]
        expected, risk_delta = self._expected_risk(mean, cov, data, rows)
        return expected, kl, data, dict(gaussian=(mean, cov)), risk_delta

    def _gibbs_candidate(self, post, data):
        """The kl bound of the exact Gibbs posterior that SMC samples, a
        candidate of :meth:`_certificate`
        (:func:`~pac_particles.bounds.gibbs_certificate`): ``-log Z`` from
        above by a lower confidence bound at :data:`~pac_particles.bounds.
        EVIDENCE_SHARE` of the candidate's ``delta``
        (:meth:`~pac_particles.smc.posterior.SMCPosterior.log_z_lower_bound`),
        the worst case over the unknown ``E_G[R_n]``, the kl bound at the
        rest. When SMC's evidence grid chose the prior among ``K`` runs
        (by their ``log Z`` estimates, whose draws the final run may
        replay), both levels are divided by ``K``: a union bound over the
        ``K`` priors and the ``K`` runs. ``delta_shares`` and ``note`` say
        so."""
        grid_size = self._evidence_grid_size()
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
        certificates table of docs/benchmarks.md it was within 0.001 of the kl bound or
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
        ``delta / grid size`` (:meth:`_whole_sample_candidate`). EP's
        evidence tunes the posterior's hyper-parameters on every row
        (:meth:`_evidence_on_all_rows`); the kl bound holds for every
        posterior at once, so only the priors must be kept off the rows
        they certify: the data-free candidate keeps the hyper-parameters
        given as parameters (:meth:`_data_free_terms`, all rows), and the
        data-dependent one has its own tuned on the prior part ``A`` alone,
        certified on the other rows: for linear scores the EP prior on
        ``A`` with its ARD variances tuned there, for GP and spike-and-slab
        posteriors the model's prior with the hyper-parameters EP's evidence
        finds on ``A`` (:meth:`_prior_part_candidate`); the latter is not
        offered at the scale where ``E_rho[R_n]`` is sampled, nor with
        fewer than two points of a class. Both take the KL of ``rho``
        rescaled by the ``c > 0`` that makes it smallest (:meth:`_rho_kl`):
        the same randomised ranking, which the evidence's scale would
        otherwise make look far from any prior that did not see the rows."""
        post = self.posterior_ if post is None else post
        if terms is None:
            terms = self._data_free_terms(post)
        expected, kl, data, rho, risk_delta = terms
        if prior is _FIT_HERE:
            # at the scale where the risk is sampled, so would the
            # data-dependent candidate's be (and its EP prior fit): not used
            prior = None if risk_delta else self._data_dependent_prior(post)
        candidates = [self._whole_sample_candidate(expected, kl, data,
                                                   risk_delta)]
        if prior is not None:
            dd_rho, note = rho, ""
            if self._evidence_tuned():
                # the same randomised ranking, rescaled (_rho_kl)
                mean, cov = rho["gaussian"]
                _, c = self._rho_kl(mean, cov, prior.cov, prior.mean)
                dd_rho = dict(gaussian=(c * mean, c * c * cov))
                note = "; " + rescaled_note(c)
            candidates.append(with_note(data_dependent_candidate(
                data.X, data.y, prior_var=self._prior_var(), prior=prior,
                bounds=CERTIFICATE_BOUNDS, **dd_rho), note))
        elif (self._evidence_tuned()
              and (self.kernel is not None or self.prior == "spike_slab")
              and not risk_delta and min(data.n_pos, data.n_neg) >= 2):
            candidates.append(self._prior_part_candidate(data, rho))
        if self.method_ == "smc":
            # the Gaussian fitted to the particles, and the exact Gibbs
            # posterior they sample (a confidence bound on log Z inside)
            candidates = [
                lambda d, make=make: dataclasses.replace(
                    make(d), posterior=PARTICLE_GAUSSIAN)
                for make in candidates] + [self._gibbs_candidate(post, data)]
        # the sampled risk's share: the data-free candidate uses it
        spent = risk_delta
        cert = tightest(candidates, self.eps - spent)
        if spent:
            cert = dataclasses.replace(
                cert, delta=self.eps, delta_shares=cert.delta_shares + (
                    (f"E_rho[R_n] from {RISK_SAMPLE_PAIRS} sampled pairs",
                     spent),))
        return cert

    def _hyperparameter_record(self, hyper=None):
        """``hyper`` (default ``hyperparameters_``) as the certificate
        records them: ``(name, value)`` pairs, a value a float, a tuple of
        floats (ARD variances, lengthscales) or a kernel's repr."""
        record = []
        hyper = self.hyperparameters_ if hyper is None else hyper
        for name, value in sorted(hyper.items()):
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

    def _evidence_grid_size(self):
        """How many priors SMC's evidence grid chose among (1 without)."""
        grid = getattr(self, "evidence_grid_", None)
        return 1 if grid is None else len(grid.params)

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
        at that level (``log K`` in its complexity term). When EP's evidence
        tuned the posterior's hyper-parameters, the prior keeps the ones
        given (:meth:`_data_free_terms`) and the certificate records
        those."""
        grid_size = self._evidence_grid_size()
        notes = []
        if self._evidence_tuned():
            notes.append(EVIDENCE_DATA_FREE_NOTE)
            notes.append(rescaled_note(getattr(self, "_data_free_scale",
                                                1.0)))
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
            hyperparameters=self._hyperparameter_record(
                self._given_hyperparameters(data.d)),
            hyperparameters_tuned_on="whole sample" if grid_size > 1
            else "none", hyperparameter_grid_size=grid_size)
        def candidate(delta_each):
            cert = auc_certificate(expected, kl, n_pos=data.n_pos,
                                   n_neg=data.n_neg,
                                   delta=delta_each / grid_size,
                                   bounds=CERTIFICATE_BOUNDS)
            return dataclasses.replace(cert, delta=delta_each, **fields)
        return candidate

    def _part_b_risk(self, data, rho):
        """``(E_rho[R_B], n_pos_B, n_neg_B)`` on the rows ``B`` outside the
        prior part: ``rho``'s marginal on ``B``'s scores, exact."""
        in_b = ~self._prior_part(data.y)
        mean, cov = rho["gaussian"]
        rows = np.eye(data.n) if self.kernel is not None else data.X
        pos, neg = rows[in_b & data.y], rows[in_b & ~data.y]
        return expected_auc_risk(mean, cov, pos, neg), len(pos), len(neg)

    def _prior_part_candidate(self, data, rho):
        """The data-dependent candidate of a GP or spike-and-slab EP fit
        whose hyper-parameters EP's evidence tuned on every row: the
        model's prior with hyper-parameters tuned by EP's evidence on the
        prior part ``A`` alone (:meth:`_prior_part_tuned`), certified on
        the other rows ``B`` with ``E_rho[R_B]`` (``rho``'s marginal on
        ``B``'s scores), ``KL(rho || that prior)`` (exact for a GP; the
        spike-and-slab bound of :meth:`pac_particles.problem.priors.SpikeSlabPrior.
        kl_gaussian`) and ``m_B = min(n_pos_B, n_neg_B)``."""
        expected_b, n_pos, n_neg = self._part_b_risk(data, rho)
        (kl, scale), tuned = self._prior_part_tuned(data, rho)
        kind = "GP" if self.kernel is not None else "spike-and-slab"
        fields = dict(
            prior=(f"data-dependent: {kind} prior with hyper-parameters tuned "
                   f"by EP's evidence on {PRIOR_FRACTION:.0%} of each class "
                   f"(lam = n_A; centred and scaled on that part), certified "
                   f"on the other {1 - PRIOR_FRACTION:.0%}; "
                   + rescaled_note(scale)),
            n_candidates=1, alternatives=(), delta_shares=(),
            prior_fraction=PRIOR_FRACTION,
            hyperparameters=self._hyperparameter_record(tuned),
            hyperparameters_tuned_on="prior part")

        def candidate(delta_each):
            cert = auc_certificate(expected_b, kl, n_pos=n_pos,
                                   n_neg=n_neg, delta=delta_each,
                                   bounds=CERTIFICATE_BOUNDS)
            return dataclasses.replace(cert, **fields)
        return candidate

    def _prior_part_tuned(self, data, rho):
        """``((KL(rho || prior_A), c), hyper-parameters)`` (:meth:`_rho_kl`)
        of the GP or
        spike-and-slab prior whose hyper-parameters EP's evidence tunes on
        the prior part ``A`` alone, from the values given as parameters:
        EP at ``lam = n_A`` on ``A``'s rows, preprocessed with ``A``'s own
        moments (as the linear data-dependent prior: nothing of ``B``
        enters). The prior is then written in the fit's coordinates: GP,
        the tuned kernel's Gram matrix of the training inputs mapped through
        ``A``'s preprocessing (plus the jitter its Cholesky factor needs);
        spike-and-slab, the tuned ``p, v0, v1`` on ``A``'s coordinates,
        i.e. variances divided by the squared scale on ``A`` of each of the
        fit's columns (a column constant on ``A`` keeps them unscaled). The
        hyper-parameters returned are in ``A``'s coordinates."""
        mean, cov = rho["gaussian"]
        in_a = self._prior_part(data.y)
        given = self._given_prior(data.d)
        common = dict(standardize=self.standardize, pu_prior=self.pu_prior)
        # the fit's columns: standardising them on A is standardising the
        # raw inputs on A (an affine map of a column changes nothing)
        X_a, y_a, lam_a = data.X[in_a], data.y[in_a], float(in_a.sum())
        if self.kernel is not None:
            model = EPGP(X_a, y_a, lam_a, kernel=copy.deepcopy(given["kernel"]),
                         **common)
            model.fit_hyperparameters()
            K = jittered_gram(model.kernel, model.data.transform(data.X))
            return self._rho_kl(mean, cov, K), {"kernel": model.kernel}
        model = EPSpikeSlab(X_a, y_a, lam_a, p=given["p"], v0=given["v0"],
                            v1=given["v1"], **common)
        model.fit_hyperparameters()
        # theta on the fit's columns = theta on A's coordinates / A's scale
        factor = np.ones(data.d)
        factor[model.data.columns] = model.data.scale ** -2.0
        prior = SpikeSlabPrior(data.d, p=model.p, v0=model.v0 * factor,
                               v1=model.v1 * factor)
        return (self._rho_kl(mean, cov, prior),
                {"p": model.p, "v0": model.v0, "v1": model.v1})
