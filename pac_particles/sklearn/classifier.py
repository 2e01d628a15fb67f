"""A scikit-learn classifier from the Gibbs posterior of a linear classifier.

:class:`PACBayesClassifier` fits the Gibbs pseudo-posterior
``prior(theta) exp(-lam r_n(theta))`` of the 0-1, hinge, exponential or ramp
risk (:class:`pac_particles.smc.models.ClassificationGibbsModel`) by waste-free
tempering SMC, its Gaussian variational approximation
(:class:`pac_particles.approx.classification_vb.ClassificationVB`) or, for the 0-1 loss, its EP
approximation (:class:`pac_particles.approx.ep.EPClassification`).

It deploys the posterior mean's score with Platt's sigmoid fitted on the
training scores (:func:`~pac_particles.sklearn.binary.platt_sigmoid`):
``decision_function(x) = x . coef_ + intercept_``, the mean's score less
the sigmoid's cut ``threshold_``, ``predict`` its sign and ``predict_proba
= expit(proba_slope_ decision_function)``, so that ``predict`` says
``classes_[1]`` exactly where ``predict_proba`` passes 1/2.
``deployed_certificate_`` certifies exactly those labels. The randomised
classifier, which ``certificate_`` certifies, votes with
:meth:`PACBayesClassifier.vote_probability`:

* SMC: the weighted vote of the particles,
  ``sum_k W_k (1{x . theta_k > 0} + 0.5 1{x . theta_k = 0})``;
* VB and EP: ``P_rho(x . theta > 0) = Phi(x m / sqrt(x S x))``.

The vote is not a probability of the label: it pulls rows of uncertain
score towards 1/2 and, at large ``n``, where the posterior's spread is
small, rounds most rows to exactly 0 or 1. Its log-loss on test rows was
several times the logistic regression's and its test AUC below the mean
score's (docs/benchmarks.md, "The classifier's probabilities").

``lam="cv"`` chooses ``lam`` through :mod:`pac_particles.sklearn.selection`
with the metric ``"accuracy"`` on the grid of
:func:`~pac_particles.sklearn.selection.lam_grid` (fixed before seeing the
data; top ``10 n``): SMC scores every fold along one tempering path to
``lam_max`` (the vote of the current particles at every step,
:class:`~pac_particles.sklearn.selection.SMCPathScorer`), VB refits along
the grid with warm starts
(:class:`~pac_particles.sklearn.selection.RefitScorer`); EP scores each
grid value by its leave-one-out accuracy (each point's site removed, no
refit: :func:`~pac_particles.sklearn.selection.ep_loo_choice`). The folds
score the posterior's own rule (the particles' vote; for VB and EP the
sign of ``x . m``), not the deployed cut, which is fitted after ``lam``.
``log_evidence_`` is the posterior's ``log_evidence``: SMC's ``log Z``,
VB's ELBO (a lower bound) or EP's energy. The certificates come from
:func:`pac_particles.bounds.certify`.

Example
-------
>>> from sklearn.datasets import load_breast_cancer
>>> from sklearn.model_selection import cross_val_score
>>> from pac_particles.sklearn.classifier import PACBayesClassifier
>>> X, y = load_breast_cancer(return_X_y=True)
>>> est = PACBayesClassifier(method="vb", loss="hinge", lam=100.0)
>>> bool(cross_val_score(est, X, y, cv=3).mean() > 0.9)
True

References
----------
[ARC16] Alquier, P., Ridgway, J. and Chopin, N. (2016). On the properties of
variational approximations of Gibbs posteriors. JMLR 17(239), 1-41.

[GH01] Graepel, T. and Herbrich, R. (2001). The kernel Gibbs sampler.
NIPS 13.
"""

import dataclasses
from functools import partial
from typing import Any, Optional

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from pac_particles.approx.vb import FAMILIES
from pac_particles.bounds import CertificateSetting, certify
from pac_particles.core.checks import ArrayLike, InputError, check_choice
from pac_particles.core.parallel import one_blas_thread
from pac_particles.core.inference_data import to_inference_data
from pac_particles.problem.problem import GibbsProblem
from pac_particles.problem.risks import LOSSES
from pac_particles.sklearn.binary import (BinaryEstimatorMixin, OnFirstRead,
                                          calibrated_probability,
                                          calibration_rows, certificate_spec,
                                          check_shared_parameters,
                                          explain_rejected_rows,
                                          platt_sigmoid)
from pac_particles.sklearn.methods import (AUTO, FitOptions, choose_method,
                                           get_method, method_names)

__all__ = ["PACBayesClassifier", "AUTO_LOSSES"]

#: ``loss="auto"``: the first of these the method fits. The hinge first: its
#: VB objective is convex [ARC16, Sec. 4.1], and with the deployed cut its
#: rule was as accurate as the 0-1 loss's, ranked as logistic regression's
#: with 1 % positives where the 0-1 loss's did not, and fitted faster at
#: large n (docs/benchmarks.md, "The classifier's default loss"); the 0-1
#: loss for EP, which approximates that posterior alone.
AUTO_LOSSES = ("hinge", "zero_one")


def _loss_and_method(requested, options, n):
    """``options`` with its loss (``"auto"``: the first of
    :data:`AUTO_LOSSES` a method supports) and the method that fits it
    (:func:`~pac_particles.sklearn.methods.choose_method`, whose refusal of
    the last candidate says what to pass)."""
    *first, last = AUTO_LOSSES if options.loss == AUTO else (options.loss,)
    for loss in first:
        candidate = dataclasses.replace(options, loss=loss)
        try:
            return candidate, choose_method(requested, candidate, n,
                                            "classification")
        except InputError:
            continue            # the method does not fit it: the next one
    candidate = dataclasses.replace(options, loss=last)
    return candidate, choose_method(requested, candidate, n,
                                    "classification")


class PACBayesClassifier(BinaryEstimatorMixin, ClassifierMixin,
                         BaseEstimator):
    """PAC-Bayesian linear classifier (scikit-learn API).

    Parameters
    ----------
    method : {"auto", "smc", "vb", "ep"}
        SMC samples the Gibbs posterior (the reference); VB fits its
        Gaussian approximation (family ``vb_family``); EP its Gaussian EP
        approximation (0-1 loss only; ``lam="cv"`` by leave-one-out
        accuracy; EP fails, and says so, once ``lam`` is above about 2 n).
        "auto" (default): VB (SMC's default fit is slower than a tuned
        logistic regression by far;
        :func:`~pac_particles.sklearn.methods.choose_method`), recorded in
        ``method_``.
    loss : {"auto", "zero_one", "hinge", "exponential", "ramp"}
        "auto" (default): the first of :data:`AUTO_LOSSES` the method fits
        (the hinge; EP fits the 0-1 loss alone), recorded in ``loss_``.
    lam : "cv" or float > 0
        Inverse temperature on the mean loss; "cv" chooses it by K-fold
        accuracy on ``lam_grid(lam_max, grid_size, grid_decades)``.
    lam_max : float, optional; default ``10 n``.
    n_folds, grid_size, grid_decades : the cross-validation of ``lam``
        (SMC, VB); fewer folds, with a warning, when a class has fewer
        than ``n_folds`` members
        (:func:`pac_particles.sklearn.selection.fold_count`).
    prior_var : float, variance of the isotropic Gaussian prior (default 1).
    fit_intercept, standardize : bool (see ``ClassificationGibbsModel``).
    vb_family : {"isotropic", "diagonal", "full"}; default "diagonal" (the
        full family's L-BFGS ran to its cap near the top of the grid).
    n_particles, len_chain : SMC (``n_particles * len_chain`` particles).
    pu_prior : float in [0, 1), optional: ``y``'s positive class marks
        labelled positives, the other class unlabelled points of which a
        fraction ``pu_prior`` is positive (the PU risk of du Plessis et al.).
    eps : float in (0, 1), the certificate holds with probability ``1 - eps``.
    random_state : int, optional; n_jobs : folds, and the extra runs of
        ``chains``, in parallel (joblib).
    chains : int >= 1
        SMC: independent runs of the final posterior with different seeds
        (:func:`pac_particles.smc.posterior.run_smc_chains`), the chains of
        :meth:`to_inference_data` (``r_hat`` needs two or more). Default 1.
        ``posterior_`` stays the first run (the fit of ``chains=1``: its
        coefficients and certificate do not change with ``chains``); all
        are in ``posteriors_``. Ignored by VB and EP.
    backend : {"numba", "jax"}, where SMC's risk runs: the host's cores, or
        JAX's device, a GPU (docs/gpu.md). Ignored by VB and EP.
    deploy : {"all_rows", "certified"}
        The rule ``decision_function``, ``predict`` and ``predict_proba``
        use: the posterior mean's, fitted on every row (default), or the
        certified part-A rule (the logistic regression fitted on the
        certificate's prior half: its scores and its own probabilities,
        ``proba_slope_ = 1``, and ``deployed_certificate_`` its test-set
        bound on the other half, never looser than a test-set bound on the
        same rows). Not with ``pu_prior``.
    verbose : bool or str, progress on stderr (``"bar"``, ``"lines"``):
        per grid value and per fold while ``lam="cv"`` is chosen, then the
        final fit.

    Attributes
    ----------
    method_ : the method used (``method``, or the choice of ``"auto"``).
    loss_ : the loss used (``loss``, or the choice of ``"auto"``).
    classes_, lam_, log_evidence_, cv_ (with ``lam="cv"``), posterior_
    (SMC) or approximation_ (VB, EP), data_ (the preprocessing).
    coef_, intercept_ : the deployed rule on raw inputs,
        ``decision_function = X @ coef_ + intercept_`` (the posterior mean's
        score less ``threshold_``, or the part-A rule's with
        ``deploy="certified"``).
    threshold_, proba_slope_ : Platt's sigmoid of the mean's score on (up
        to 200,000 of) the training rows, ``P(classes_[1] | x) =
        expit(proba_slope_ (x . mean - threshold_))``: its cut (0 without
        an intercept) and slope, PU-corrected with ``pu_prior``
        (probabilities for the unlabelled rows' population;
        :func:`~pac_particles.sklearn.binary.platt_sigmoid`); 0 and 1 with
        ``deploy="certified"`` (the part-A rule's own probabilities).
    posteriors_ : SMC only: the ``chains`` independent SMCPosterior at
        ``lam_``, ``posteriors_[0] is posterior_``.
    lam_grid_failures_ : (k,) array, the grid values where EP did not
        converge with ``lam="cv"``, left out of the choice (EP fails at the
        top of the grid as a matter of routine: it warns only where a
        failure could have changed the choice,
        :func:`~pac_particles.sklearn.selection.ep_grid_choice`).
        Empty when none failed, with a float ``lam`` and for SMC and VB.
    certificate_ : :class:`pac_particles.bounds.Certificate` or None, the
        bound on the population misclassification rate of the *randomised*
        classifier (``theta`` drawn from the posterior's Gaussian at each
        use), or of the part-A logistic regression's labels where that is
        tighter (:func:`pac_particles.bounds.certify`: ``str`` says which),
        in [0, 1], labelled vacuous at 1/2 or more. None with ``pu_prior``
        (the PU risk is not a mean of n i.i.d. losses in [0, 1]).
    deployed_certificate_ : the bound on the error of the labels
        ``sign(x . coef_ + intercept_)``: with ``deploy="all_rows"`` the
        posterior mean's score cut at ``threshold_`` (``predict``'s),
        derandomised
        (:mod:`pac_particles.bounds.derandomised`), computed when first
        read; with
        ``deploy="certified"`` the part-A rule's (``predict``'s), its
        test-set bound at the whole ``eps``. None with ``pu_prior``.
    certified_error_ : ``certificate_.bound`` (None when there is none).
    """

    def __init__(self, method="auto", loss="auto", lam="cv", lam_max=None,
                 n_folds=5, grid_size=20, grid_decades=3.0, prior_var=1.0,
                 fit_intercept=True, standardize=True, vb_family="diagonal",
                 n_particles=200, len_chain=10, pu_prior=None, eps=0.05,
                 random_state=None, n_jobs=1, chains=1, backend="numba",
                 deploy="all_rows", verbose=False):
        self._store_params(locals())

    def _check_params(self):
        check_shared_parameters(self, method_names("classification"))
        check_choice(self.loss, "loss", (AUTO,) + tuple(LOSSES))
        check_choice(self.vb_family, "vb_family", FAMILIES)
        if self.deploy == "certified" and self.pu_prior is not None:
            raise InputError("deploy='certified' needs a certificate, and "
                             "PU labels have none: use deploy='all_rows'")

    def _fit_options(self) -> FitOptions:
        """The parameters as the method reads them, fixed for the fit."""
        return FitOptions(
            lam=None if isinstance(self.lam, str) else float(self.lam),
            lam_max=self.lam_max, grid_size=self.grid_size,
            grid_decades=self.grid_decades, n_folds=self.n_folds,
            hyper={"prior_var": self.prior_var}, loss=self.loss,
            prior_var=self.prior_var, vb_family=self.vb_family,
            standardize=self.standardize, fit_intercept=self.fit_intercept,
            n_particles=self.n_particles, len_chain=self.len_chain,
            chains=self.chains, pu_prior=self.pu_prior, eps=self.eps,
            random_state=self.random_state, n_jobs=self.n_jobs,
            backend=self.backend, verbose=self.verbose)

    def fit(self, X: ArrayLike, y: ArrayLike) -> "PACBayesClassifier":
        """Fit the Gibbs posterior (or its VB or EP approximation); returns
        self."""
        # BLAS on one thread, as for PACBayesAUC: the numba kernels supply
        # the parallelism, and OpenBLAS workers left spinning by the
        # certificate's and the held-out scores' algebra slowed the kernels
        # and the algebra between them (docs/benchmarks.md, "The
        # classifier's fits to a precision in nats")
        with one_blas_thread():
            return self._fit(X, y)

    def _fit(self, X, y):
        self._check_params()
        options = self._fit_options()
        try:
            X, y = validate_data(self, X, y, dtype=float)
        except ValueError:
            explain_rejected_rows(X, y)     # the column and row, if any
            raise
        positives = self._training_labels(y, "two classes")
        options, method = _loss_and_method(self.method, options,
                                           len(positives))
        self.method_, self.loss_ = method.name, options.loss
        # the one set-up of the problem (every column kept; an intercept)
        problem = GibbsProblem.classification(
            X, positives, 1.0 if options.choose_lam else options.given_lam(),
            options.loss, self.standardize, self.fit_intercept,
            self.pu_prior)
        self.__dict__.pop("cv_", None)
        fit = self._method_fit = method.checked(
            method.fit_classification(problem, options, X))
        self.lam_grid_failures_ = fit.lam_grid_failures
        if fit.cv is not None:
            self.cv_ = fit.cv
        self.lam_ = float(fit.lam)
        self.data_ = problem.data
        self.posterior_, self.posteriors_ = fit.posterior, fit.posteriors
        self.approximation_ = fit.approximation
        # coef_, intercept_ of x -> transform(x) . mean on raw inputs
        self.coef_, intercept = self.posterior_.raw_coefficients()
        # predict's cut on the mean's score: where Platt's sigmoid fitted on
        # the training scores passes 1/2. The loss's own cut, 0, is where a
        # linear rule minimises that loss, not the error: the hinge's rule
        # is offset from the most accurate one (docs/benchmarks.md, "The
        # classifier's probabilities"). The part-A rule keeps its own.
        self.proba_slope_, self.threshold_ = 1.0, 0.0
        if self.deploy == "all_rows":
            rows, weights = calibration_rows(positives, self.random_state)
            self.proba_slope_, self.threshold_ = platt_sigmoid(
                X[rows] @ self.coef_ + intercept, positives[rows],
                self.pu_prior, cut=None if problem.data.intercept else 0.0,
                weights=weights)
        self.intercept_ = float(intercept) - self.threshold_
        self.certificate_ = self.deployed_certificate_ = None
        if self.pu_prior is None:
            setting = CertificateSetting(problem, certificate_spec(self))
            problem = problem.at(self.lam_)
            self.certificate_ = certify(self.posterior_, problem,
                                        certificate_spec(self), setting)
            if self.deploy == "certified":
                # the deployed rule is the part-A rule it certifies: now
                deployed = self.deployed_certificate_ = certify(
                    self.posterior_, problem,
                    certificate_spec(self, "part_a"), setting)
                coef, intercept = problem.data.raw_linear(np.asarray(
                    deployed.score_coefficients, dtype=float))
                self.coef_, self.intercept_ = coef, float(intercept)
            else:
                # the derandomised certificate when first read, as for
                # ranking (the split and the part-A prior kept)
                self.deployed_certificate_ = partial(
                    certify, self.posterior_, problem,
                    certificate_spec(self, "deployed", self.threshold_),
                    setting.without_rows())
        self.certified_error_ = (None if self.certificate_ is None
                                 else self.certificate_.bound)
        return self

    deployed_certificate_ = OnFirstRead(
        "The deployed rule's certificate (derandomised, computed when first "
        "read; the part-A rule's with ``deploy='certified'``).")

    def decision_function(self, X: ArrayLike) -> np.ndarray:
        """The deployed rule's scores ``X @ coef_ + intercept_``: positive
        where ``predict`` says ``classes_[1]``."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=float, reset=False)
        return X @ self.coef_ + self.intercept_

    def predict_proba(self, X: ArrayLike) -> np.ndarray:
        """``expit(proba_slope_ * decision_function(X))``, columns
        ``classes_`` (above 1/2 exactly where ``predict`` says
        ``classes_[1]``); the randomised classifier's vote is
        :meth:`vote_probability`. The sigmoid is fitted on the training
        scores: over-confident when the fit over-fits (wrap the estimator
        in ``CalibratedClassifierCV`` for held-out calibration)."""
        p = calibrated_probability(self.decision_function(X),
                                   self.proba_slope_)
        return np.column_stack([1.0 - p, p])

    def vote_probability(self, X: ArrayLike) -> np.ndarray:
        """The randomised classifier's vote for ``classes_[1]``, the
        posterior probability that ``x . theta > 0`` (module docstring),
        of the posterior fitted on every row whatever ``deploy``: the
        classifier ``certificate_`` certifies draws its labels from it."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=float, reset=False)
        return get_method(self.method_).positive_probability(
            self._method_fit, X)

    def to_inference_data(self, n_draws: Optional[int] = None,
                          seed: int = 0) -> Any:
        """ArviZ ``InferenceData`` of the fitted posterior
        (:func:`pac_particles.core.inference_data.to_inference_data`): SMC's
        runs of ``posteriors_`` as chains, or draws of EP's or VB's
        Gaussian; ``theta`` and ``direction`` by feature (the input
        columns' names, ``"intercept"`` last with ``fit_intercept``), on
        the model's standardised scale."""
        check_is_fitted(self)
        # one chain per independent run (a Gaussian fit has one)
        source = self.posteriors_
        names = self.feature_names(self.data_.columns)
        if self.data_.intercept:
            names.append("intercept")
        return to_inference_data(source, n_draws=n_draws, seed=seed,
                                 feature_names=names)

    def predict(self, X: ArrayLike) -> np.ndarray:
        """``classes_[1]`` where ``decision_function`` is positive."""
        positive = self.decision_function(X) > 0
        return self.classes_[positive.astype(int)]
