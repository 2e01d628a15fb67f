"""A scikit-learn classifier from the Gibbs posterior of a linear classifier.

:class:`PACBayesClassifier` fits the Gibbs pseudo-posterior
``prior(theta) exp(-lam r_n(theta))`` of the 0-1, hinge, exponential or ramp
risk (:class:`pac_particles.smc.models.ClassificationGibbsModel`) by waste-free
tempering SMC, its Gaussian variational approximation
(:class:`pac_particles.approx.vb.ClassificationVB`) or, for the 0-1 loss, its EP
approximation (:class:`pac_particles.approx.ep.EPClassification`), and predicts
with the posterior predictive probability of the randomised classifier:

* SMC: the weighted vote of the particles,
  ``P(y = 1 | x) = sum_k W_k (1{x . theta_k > 0} + 0.5 1{x . theta_k = 0})``;
* VB and EP: ``P_rho(x . theta > 0) = Phi(x m / sqrt(x S x))``.

``lam="cv"`` chooses ``lam`` on the grid of
:func:`pac_particles.sklearn.selection.lam_grid` (fixed before seeing the data) by
K-fold validation accuracy through
:func:`pac_particles.sklearn.selection.cross_validate_lam`: SMC scores every fold
along one tempering path to ``lam_max`` (the vote of the current particles
at every step, :class:`PathVotes`), VB refits along the grid with warm
starts; EP scores each grid value by its leave-one-out accuracy (each
point's site removed, no refit), fitting along the grid with warm starts.
``log_evidence_`` is SMC's ``log Z``, VB's ELBO (a lower bound) or EP's
``log_z``.

:class:`BinaryEstimatorMixin` holds what this estimator shares with
:class:`pac_particles.sklearn.estimator.PACBayesAUC`: ``__init__`` storing its
arguments, and the two-class tag.

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
import warnings

import numpy as np
from particles import collectors
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets, unique_labels
from sklearn.utils.validation import check_is_fitted, validate_data

from pac_particles.bounds import (CLASSIFICATION_TRIVIAL, EVIDENCE_SHARE,
                     classification_certificate, gibbs_certificate, tightest)
from pac_particles.core.checks import (InputError, check_choice, check_count, check_positive,
                     check_probability, check_pu_prior)
from pac_particles.core.gaussian import gaussian_kl
from pac_particles.problem.gaussian_losses import GaussianPointRisk
from pac_particles.smc.models import ClassificationGibbsModel
from pac_particles.core.inference_data import to_inference_data
from pac_particles.smc.posterior import chain_seeds, run_smc, run_smc_chains
from pac_particles.smc.moves.base import weighted_gaussian_fit
from pac_particles.problem.priors import gaussian_prior, param_array, prior_gaussian_factor
from pac_particles.problem.risks import LOSSES, ClassificationRisk
from pac_particles.sklearn.selection import cross_validate_lam, lam_grid, loo_lambda
from pac_particles.approx.vb import FAMILIES, ClassificationVB
from pac_particles.approx.ep import EPClassification, EPConvergenceWarning
from pac_particles.approx.ep.base import lam_path_scores

__all__ = ["PACBayesClassifier", "BinaryEstimatorMixin", "PathVotes",
           "vote_probability", "ep_grid_choice"]

METHODS = ("smc", "vb", "ep")
# score entries per block of the vote (about 32 MB of float64)
_BLOCK_ENTRIES = 4_000_000


def vote_probability(theta, weights, Z):
    """``sum_k W_k (1{z . theta_k > 0} + 0.5 1{z . theta_k = 0})`` for each
    row ``z`` of the preprocessed inputs ``Z``, in blocks of rows."""
    theta = np.ascontiguousarray(theta, dtype=float)
    out = np.empty(Z.shape[0])
    block = max(1, _BLOCK_ENTRIES // max(theta.shape[0], 1))
    for start in range(0, Z.shape[0], block):
        s = Z[start:start + block] @ theta.T
        out[start:start + block] = ((s > 0) + 0.5 * (s == 0)) @ weights
    return out


class PathVotes(collectors.Collector):
    """Collector: the vote probabilities of held-out inputs ``X_val``
    (preprocessed like the model's data) under the current tempered
    posterior, with the current exponent."""

    signature = {"X_val": None}

    def fetch(self, smc):
        return (smc.X.shared["exponents"][-1],
                vote_probability(param_array(smc.X.theta), smc.W, self.X_val))


class _SMCFolds:
    """Fold scorer of :func:`cross_validate_lam`: one tempering path to
    ``lam_max``, the validation accuracy of the vote at every step."""

    def __init__(self, lam_max, model_kwargs, smc_kwargs):
        self.lam_max = lam_max
        self.model_kwargs, self.smc_kwargs = model_kwargs, smc_kwargs

    def __call__(self, X_tr, y_tr, X_val, y_val, grid, seed):
        model = ClassificationGibbsModel(X_tr, y_tr, lam=self.lam_max,
                                         **self.model_kwargs)
        votes = PathVotes(X_val=model.data.transform(X_val))
        # a fold needs the path's votes, not the evidence
        post = run_smc(model, seed=seed, collect=[votes],
                       **dict(self.smc_kwargs, evidence="tempering"))
        steps = post.summaries.pathVotes
        return (np.array([self.lam_max * e for e, _ in steps]),
                np.array([np.mean((p > 0.5) == y_val) for _, p in steps]))


class _VBFolds:
    """Fold scorer of :func:`cross_validate_lam`: VB along the grid, each
    fit warm-started at the previous one."""

    def __init__(self, vb_kwargs):
        self.vb_kwargs = vb_kwargs

    def __call__(self, X_tr, y_tr, X_val, y_val, grid, seed):
        accuracy, previous = [], None
        for lam in grid:
            vb = ClassificationVB(X_tr, y_tr, lam=lam, **self.vb_kwargs)
            previous = vb.fit(init=previous)
            accuracy.append(np.mean((vb.predict_proba(X_val) > 0.5) == y_val))
        return grid, np.array(accuracy)


class BinaryEstimatorMixin:
    """What the package's binary scikit-learn estimators share: ``__init__``
    stores its arguments as given (scikit-learn's rule: no logic there, the
    checks run in ``fit``) and the tags say two classes only."""

    def _store_params(self, values):
        """Set every ``__init__`` parameter from ``values`` (its
        ``locals()``)."""
        for name in self._get_param_names():
            setattr(self, name, values[name])

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags


def ep_grid_choice(grid, scores, verbose=False, stride=1):
    """EP's choice of ``lam`` on ``grid`` by a leave-one-out criterion,
    among the values where EP converged, for both estimators.

    ``scores(lam) -> float or None`` is EP's path scorer
    (:func:`pac_particles.approx.ep.base.lam_path_scores`: None where EP did not
    converge); :func:`pac_particles.sklearn.selection.loo_lambda` chooses, with
    ``verbose`` and ``stride``. Returns the :class:`LamCVResult` and the
    sorted array of the grid values where EP did not converge (the
    estimators' ``lam_grid_failures_``). Values that a ``stride`` > 1 did
    not score are not failures.

    EP fails along a grid as a matter of routine (it collapses once ``lam``
    per pair or point is too large, typically at the top of the grid), and
    a failure is recorded, not warned of. An
    :class:`~pac_particles.approx.ep.EPConvergenceWarning` is raised only where
    the failure could have changed the choice: at a grid neighbour of the
    chosen value. The leave-one-out curve is smooth along a grid of a few
    values a decade, so a value whose neighbours both scored lower is a
    maximum of the curve whatever the failed values farther away would
    have scored; next to a failure the curve may still be rising.

    Raises
    ------
    InputError
        When EP converged at no value of the grid.
    """
    grid = np.asarray(grid, dtype=float)
    failed = []

    def recorded(lam):
        value = scores(lam)
        if value is None:
            failed.append(float(lam))
        return value

    try:
        cv = loo_lambda(grid, recorded, verbose=verbose, stride=stride)
    except InputError:
        raise InputError(f"EP did not converge at any lam of the grid "
                         f"[{grid[0]:.4g}, {grid[-1]:.4g}]: lower lam_max or "
                         "use method='smc'") from None
    failed = np.array(sorted(failed), dtype=float)
    best = int(np.argmin(np.abs(grid - cv.best_lam)))
    beside = [grid[k] for k in (best - 1, best + 1)
              if 0 <= k < grid.size and np.any(np.isclose(failed, grid[k]))]
    if beside:
        warnings.warn(f"EP did not converge at lam = "
                      f"{', '.join(f'{v:.4g}' for v in beside)}, next to the "
                      f"chosen lam = {cv.best_lam:.4g}: the best leave-one-out "
                      "value may lie there (every failure: "
                      "lam_grid_failures_); compare with method='smc' or "
                      "change lam_max", EPConvergenceWarning, stacklevel=4)
    return cv, failed


def _ep_loo_choice(X, positives, grid, ep_kwargs):
    """EP's choice of ``lam`` by leave-one-out accuracy (each point's site
    removed, no refit) along the grid, each fit warm-started from the
    previous one, among the values where EP converged
    (:func:`ep_grid_choice`: the result and the failed values)."""
    model = EPClassification(X, positives, grid[0], **ep_kwargs)
    return ep_grid_choice(grid, lam_path_scores(
        model, EPClassification.loo_accuracy))


class PACBayesClassifier(BinaryEstimatorMixin, ClassifierMixin,
                         BaseEstimator):
    """PAC-Bayesian linear classifier (scikit-learn API).

    Parameters
    ----------
    method : {"smc", "vb", "ep"}
        SMC samples the Gibbs posterior (the reference); VB fits its
        Gaussian approximation (family ``vb_family``); EP its Gaussian EP
        approximation (0-1 loss only; ``lam="cv"`` by leave-one-out
        accuracy; EP fails, and says so, once ``lam`` is above about 2 n).
    loss : {"zero_one", "hinge", "exponential", "ramp"}
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
    vb_family : {"isotropic", "diagonal", "full"}.
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

    Attributes
    ----------
    classes_, lam_, log_evidence_, cv_ (with ``lam="cv"``), coef_ and
    intercept_ (of the posterior mean on raw inputs), posterior_ (SMC) or
    approximation_ (VB, EP), data_ (the preprocessing).
    posteriors_ : SMC only: the ``chains`` independent SMCPosterior at
        ``lam_``, ``posteriors_[0] is posterior_``.
    lam_grid_failures_ : (k,) array, the grid values where EP did not
        converge with ``lam="cv"``, left out of the choice (EP fails at the
        top of the grid as a matter of routine: it warns only where a
        failure could have changed the choice, :func:`ep_grid_choice`).
        Empty when none failed, with a float ``lam`` and for SMC and VB.
    certificate_ : :class:`pac_particles.bounds.Certificate` or None, the
        tightest PAC-Bayes-kl / Catoni bound (``m = n``) on the population
        misclassification rate of the *randomised* classifier (``theta``
        drawn from the fitted posterior at each use), in [0, 1], labelled
        vacuous at 1/2 or more
        (:func:`pac_particles.bounds.classification_certificate`); its
        ``empirical_randomized_risk`` is the expected training error. For
        SMC ``theta`` is drawn from the Gaussian fitted to the particles or
        from the exact Gibbs posterior, as ``posterior`` says
        (:meth:`_smc_certificate`). None
        with ``pu_prior`` (the PU risk is not a mean of n i.i.d. losses in
        [0, 1]) and for SMC with the unbounded hinge and exponential losses
        (their Gibbs KL needs ``-lam <= log Z``; use method="vb" or "ep").
    certified_error_ : ``certificate_.bound`` (None when there is none).
    """

    def __init__(self, method="smc", loss="zero_one", lam="cv", lam_max=None,
                 n_folds=5, grid_size=20, grid_decades=3.0, prior_var=1.0,
                 fit_intercept=True, standardize=True, vb_family="full",
                 n_particles=200, len_chain=10, pu_prior=None, eps=0.05,
                 random_state=None, n_jobs=1, chains=1):
        self._store_params(locals())

    def _check_params(self):
        check_choice(self.method, "method", METHODS)
        if self.method == "ep" and self.loss != "zero_one":
            raise InputError(f"method='ep' approximates the 0-1 posterior "
                             f"only, got loss={self.loss!r}")
        check_choice(self.loss, "loss", LOSSES)
        check_choice(self.vb_family, "vb_family", FAMILIES)
        check_probability(self.eps, "eps")
        if not (isinstance(self.lam, str) and self.lam == "cv"):
            check_positive(self.lam, "lam")
        if self.lam_max is not None:
            check_positive(self.lam_max, "lam_max")
        check_positive(self.prior_var, "prior_var")
        check_count(self.n_folds, "n_folds", minimum=2)
        check_count(self.n_particles, "n_particles", minimum=2)
        check_count(self.len_chain, "len_chain")
        check_count(self.chains, "chains")
        if self.pu_prior is not None:
            check_pu_prior(self.pu_prior)

    def _model_kwargs(self):
        d = self._d + bool(self.fit_intercept)
        return dict(loss=self.loss, fit_intercept=self.fit_intercept,
                    standardize=self.standardize, pu_prior=self.pu_prior,
                    prior=gaussian_prior(d, var=float(self.prior_var)))

    def _vb_kwargs(self):
        return dict(loss=self.loss, prior_var=self.prior_var,
                    family=self.vb_family, fit_intercept=self.fit_intercept,
                    standardize=self.standardize, pu_prior=self.pu_prior)

    def _ep_kwargs(self):
        return dict(prior_var=self.prior_var, fit_intercept=self.fit_intercept,
                    standardize=self.standardize, pu_prior=self.pu_prior)

    def fit(self, X, y):
        """Fit the Gibbs posterior (or its VB approximation); returns self."""
        self._check_params()
        X, y = validate_data(self, X, y, dtype=float)
        check_classification_targets(y)
        self.classes_ = unique_labels(y)
        if self.classes_.size != 2:
            raise InputError(f"Only binary classification is supported. Got "
                             f"{self.classes_.size} class(es)")
        positives = y == self.classes_[1]
        self._d = X.shape[1]
        seed = self.random_state
        # a refit must not report what a previous fit left
        self.__dict__.pop("posteriors_", None)
        self.lam_grid_failures_ = np.empty(0)
        smc_kwargs = dict(n_particles=self.n_particles,
                          len_chain=self.len_chain)
        if isinstance(self.lam, str):
            lam_max = self.lam_max if self.lam_max is not None else 10.0 * len(y)
            grid = lam_grid(lam_max, self.grid_size, self.grid_decades)
        if isinstance(self.lam, str) and self.method == "ep":
            self.cv_, self.lam_grid_failures_ = _ep_loo_choice(
                X, positives, grid, self._ep_kwargs())
            self.lam_ = self.cv_.best_lam
        elif isinstance(self.lam, str):
            scorer = (_SMCFolds(float(lam_max), self._model_kwargs(),
                                smc_kwargs) if self.method == "smc"
                      else _VBFolds(self._vb_kwargs()))
            self.cv_ = cross_validate_lam(X, positives, grid, scorer,
                                          n_folds=self.n_folds, seed=seed,
                                          n_jobs=self.n_jobs)
            self.lam_ = self.cv_.best_lam
        else:
            self.lam_ = float(self.lam)
        refit_seed = None if seed is None else int(seed) + int(self.n_folds)
        if self.method == "smc":
            model = ClassificationGibbsModel(X, positives, lam=self.lam_,
                                             **self._model_kwargs())
            self.posterior_ = run_smc(model, seed=refit_seed, **smc_kwargs)
            self.posteriors_ = [self.posterior_]
            if self.chains > 1:
                # independent runs for the export's r_hat: posterior_
                # stays the first, the fit of chains=1
                self.posteriors_ += run_smc_chains(
                    model, chains=self.chains - 1,
                    seed=chain_seeds(refit_seed, self.chains)[1:],
                    n_jobs=self.n_jobs, **smc_kwargs)
            self._model = model
            self.data_ = model.data
            self.log_evidence_ = float(self.posterior_.log_z)
            mean = self.posterior_.mean
        elif self.method == "ep":
            self.approximation_ = EPClassification(X, positives, self.lam_,
                                                   **self._ep_kwargs())
            result = self.approximation_.fit()
            if result.degenerate:
                raise InputError(f"EP failed at lam = {self.lam_:.4g}: the "
                                 "approximation collapsed (see the warning); "
                                 "use a smaller lam, lam='cv' or method='smc'")
            self.data_ = self.approximation_.data
            self.log_evidence_ = float(result.log_z)
            mean = result.mean
        else:
            self.approximation_ = ClassificationVB(X, positives, lam=self.lam_,
                                                   **self._vb_kwargs())
            result = self.approximation_.fit()
            self.data_ = self.approximation_.data
            self.log_evidence_ = float(result.elbo)
            mean = result.mean
        self._set_linear(mean)
        self.certificate_ = self._certificate(positives)
        self.certified_error_ = (None if self.certificate_ is None
                                 else self.certificate_.bound)
        return self

    def _certificate(self, positives):
        """The PAC-Bayes certificate of the fitted posterior (see
        ``certificate_``): the expected 0-1 training error of the randomised
        classifier and the KL of the posterior to the prior."""
        if self.pu_prior is not None:
            return None
        zero_one = ClassificationRisk(positives, "zero_one")
        X = self.data_.X
        if self.method == "smc":
            if self.loss not in ("zero_one", "ramp"):
                return None
            return self._smc_certificate(zero_one, positives.size)
        else:
            result = self.approximation_.result_
            expected = float(GaussianPointRisk(X, zero_one)(result.mean,
                                                            result.cov)[0])
            kl = (result.kl if self.method == "vb" else max(
                gaussian_kl(result.mean, result.cov, float(self.prior_var)),
                0.0))
        return classification_certificate(min(max(expected, 0.0), 1.0), kl,
                                          positives.size, delta=self.eps)

    def _smc_certificate(self, zero_one, n):
        """SMC's certificate, with no Monte Carlo estimate plugged in: the
        tighter (``eps / 2`` each) of the Gaussian fitted to the particles
        (its expected 0-1 error and KL to the prior in closed form; the
        particles have no density) and the exact Gibbs posterior of the
        fitted loss (:func:`~pac_particles.bounds.gibbs_certificate`:
        ``-log Z`` from a lower confidence bound at a tenth of its share;
        the fitted loss, 0-1 or ramp, is at least the 0-1 loss, so ``lam
        E[r01] + KL <= -log Z`` and the worst case over ``E[r01]`` holds).
        ``posterior``, ``delta_shares`` and ``note`` say which and how."""
        post, model = self.posterior_, self._model
        mean, chol = weighted_gaussian_fit(post.weights, post.theta,
                                           ridge=1e-8)
        cov = chol @ chol.T
        L = prior_gaussian_factor(model.prior)
        kl = max(gaussian_kl(mean, cov, L @ L.T), 0.0)
        expected = float(GaussianPointRisk(self.data_.X, zero_one)(mean,
                                                                   cov)[0])

        def gaussian(delta):
            cert = classification_certificate(min(max(expected, 0.0), 1.0),
                                              kl, n, delta=delta)
            return dataclasses.replace(
                cert, posterior="Gaussian fitted to the particles")

        def gibbs(delta):
            delta_log_z = EVIDENCE_SHARE * delta
            log_z, how = post.log_z_lower_bound(delta_log_z)
            cert = gibbs_certificate(log_z, model.lam, risk=zero_one,
                                     delta=delta - delta_log_z,
                                     trivial=CLASSIFICATION_TRIVIAL)
            return dataclasses.replace(
                cert, delta=delta, note=how,
                delta_shares=(("kl", delta - delta_log_z),
                              ("log Z", delta_log_z)))
        return tightest([gaussian, gibbs], self.eps)

    def _set_linear(self, mean):
        """``coef_``, ``intercept_`` of ``x -> transform(x) . mean`` on raw
        inputs."""
        data = self.data_
        k = data.center.size
        self.coef_ = np.zeros(self.n_features_in_)
        self.coef_[data.columns] = mean[:k] / data.scale
        self.intercept_ = float((mean[k] if data.intercept else 0.0)
                                - np.sum(data.center * mean[:k] / data.scale))

    def predict_proba(self, X):
        """Posterior predictive ``P(y = classes_[1] | x)`` of the randomised
        classifier (SMC: weighted vote; VB: ``Phi(x m / sqrt(x S x))``);
        columns ``classes_``."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=float, reset=False)
        if self.method == "smc":
            post = self.posterior_
            p = vote_probability(post.theta, post.weights,
                                 self.data_.transform(X))
        else:
            p = self.approximation_.predict_proba(X)
        return np.column_stack([1.0 - p, p])

    def to_inference_data(self, n_draws=None, seed=0):
        """ArviZ ``InferenceData`` of the fitted posterior
        (:func:`pac_particles.core.inference_data.to_inference_data`): resampled
        SMC particles, one chain per run of ``posteriors_``, or draws from
        VB's or EP's Gaussian. ``theta`` and ``direction`` have the
        coordinate ``feature``: the input columns' names
        (``feature_names_in_``, else ``x1..xd``) and ``"intercept"`` last
        with ``fit_intercept``; coefficients on the model's (standardised)
        scale."""
        check_is_fitted(self)
        source = (getattr(self, "posteriors_", [self.posterior_])
                  if self.method == "smc" else self.approximation_)
        names = getattr(self, "feature_names_in_", None)
        names = ([str(name) for name in names] if names is not None
                 else [f"x{k + 1}" for k in range(self.n_features_in_)])
        names = [names[k] for k in self.data_.columns]
        if self.data_.intercept:
            names.append("intercept")
        return to_inference_data(source, n_draws=n_draws, seed=seed,
                                 feature_names=names)

    def predict(self, X):
        """The class of highest posterior predictive probability."""
        positive = self.predict_proba(X)[:, 1] > 0.5
        return self.classes_[positive.astype(int)]
