"""A scikit-learn estimator for PAC-Bayesian AUC scoring.

:class:`PACBayesAUC` is a thin scikit-learn face: it checks its parameters,
validates ``(X, y)`` and sets the problem up once
(:class:`~pac_particles.problem.problem.GibbsProblem`), hands it to the
method, looked up in the registry (:mod:`pac_particles.sklearn.methods`: SMC,
EP, VB or a method registered there; ``lam`` chosen by
:mod:`pac_particles.sklearn.selection`), certifies the fitted posterior
(:func:`pac_particles.bounds.certify`) and reads
scores, coefficients and draws through the posterior's protocol
(:class:`~pac_particles.core.posterior_result.PosteriorResult`). It follows
the scikit-learn conventions, so it works in
``cross_val_score(..., scoring="roc_auc")``, ``GridSearchCV`` and
``Pipeline``. Bad parameters raise
:class:`~pac_particles.core.checks.InputError`.

Example
-------
>>> from sklearn.model_selection import cross_val_score
>>> from pac_particles.problem.datasets import load_dataset
>>> from pac_particles.sklearn.estimator import PACBayesAUC
>>> X, y, _ = load_dataset("pima")
>>> est = PACBayesAUC(lam=500.0, n_particles=50, len_chain=5, random_state=0)
>>> scores = cross_val_score(est, X, y, scoring="roc_auc", cv=3)
>>> bool(scores.mean() > 0.75)
True

References
----------
[RACL14] Ridgway, J., Alquier, P., Chopin, N. and Liang, F. (2014).
PAC-Bayesian AUC classification and scoring. NIPS 27.
"""

from functools import partial
from typing import Optional

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.metrics import roc_auc_score
from sklearn.utils.validation import check_is_fitted, validate_data

from pac_particles.bounds import CertificateSetting, certify
from pac_particles.bounds.corollary19_posteriors import fitted_gaussian_bound
from pac_particles.bounds.rescaled_kl import jittered_gram
from pac_particles.problem.priors import SpikeSlabPrior
from pac_particles.sklearn.coefficient_report import CoefficientReport
from pac_particles.core.checks import (ArrayLike, InputError, check_choice, check_count,
                                       check_finite_array, check_positive,
                                       check_probability)
from pac_particles.core.compat import moved_names
from pac_particles.core.parallel import one_blas_thread
from pac_particles.approx.vb import FAMILIES as VB_FAMILIES
from pac_particles.problem.auc import auc_risk, pu_corrected_risk
from pac_particles.problem.problem import GibbsProblem, prior_hyperparameters
from pac_particles.problem.reduced_rank import FeatureData
from pac_particles.sklearn.reduced_rank_gp import gp_prior_problem
from pac_particles.smc.posterior import POINT_ESTIMATES
from pac_particles.problem.data import is_dask_collection
from pac_particles.sklearn.dask_fit import (cluster_decision_function,
                                           cluster_problem)
from pac_particles.sklearn.binary import (BinaryEstimatorMixin, OnFirstRead,
                                          calibration_rows, certificate_spec,
                                          check_shared_parameters,
                                          calibrated_probability,
                                          explain_rejected_rows,
                                          platt_sigmoid, youden_cut)
from pac_particles.sklearn.methods import (FitOptions, choose_method,
                                           get_method, method_names)
from pac_particles.sklearn.selection import (default_lam_max, heldout_score,
                                             most_certified_step)

__all__ = ["PACBayesAUC", "fit_options", "heldout_auc"]

# the classification estimator moved to its own module
__getattr__ = moved_names(__name__, {
    "PACBayesClassifier": "pac_particles.sklearn.classifier"})

PRIORS = ("gaussian", "spike_slab")
HYPERPARAMETERS = ("fixed", "evidence")
CV_RULES = ("certified", "best")


class PACBayesAUC(CoefficientReport, BinaryEstimatorMixin,
                  ClassifierMixin, BaseEstimator):
    """PAC-Bayesian AUC scoring (Ridgway, Alquier, Chopin & Liang, 2014).

    The Gibbs posterior ``prior(theta) exp(-lam (1 - AUC_n(theta)))`` of a
    linear (or GP) score, with a certified AUC. docs/user_guide.md
    ("Every parameter and attribute of PACBayesAUC") explains each at
    length; in short:

    Parameters
    ----------
    method : {'auto', 'smc', 'ep', 'vb'}
        Waste-free tempering SMC (the reference), Expectation Propagation
        (Gaussian, with log-evidence) or Gaussian variational Bayes; 'auto'
        (default) chooses from the size, SMC where it is affordable
        (:func:`~pac_particles.sklearn.methods.choose_method`: the first
        method, by preference, that supports the prior and ``lam``), and
        records the choice in ``method_``.
    lam : float or 'cv'
        Inverse temperature on the fraction of mis-ordered pairs; 'cv'
        chooses it on ``grid_size`` log-spaced values up to ``lam_max``
        (:mod:`pac_particles.sklearn.selection`): SMC by ``n_folds``
        cross-validation along one tempering path per fold, EP and VB by
        their leave-one-out AUC (VB up to 2,000 rows and 64 features; on
        sampled pairs, or above 2,000 rows with 500 of each class, one
        held-out split climbed until its curve is flat,
        :func:`~pac_particles.sklearn.selection.holdout_path_choice`; else
        folds climbed together,
        :func:`~pac_particles.sklearn.selection.kfold_path_choice`).
    lam_max : float, optional; default ``5 n`` (:func:`~pac_particles.sklearn.selection.default_lam_max`).
    n_folds : int, folds of ``lam='cv'`` (fewer, with a warning, for a small class).
    grid_size : int or None; None: 50 for SMC, 13 for EP and VB.
    cv_rule : {'certified', 'best'}
        SMC's ``lam='cv'``: the best mean validation AUC, or (default) the
        tempering step of tightest certificate among those within one
        standard error of it, ties to the best mean (free in ``eps``: the
        kl bound holds for every posterior at once).
    vb_family : {'isotropic', 'diagonal', 'full'}
    prior : {'gaussian', 'spike_slab'}; spike_slab : tuple (p, v0, v1), optional.
    kernel : callable or 'rbf', optional: Gaussian-process scores (no ``coef_``).
    rank : 'auto' or int, GP scores' rank (:mod:`pac_particles.sklearn.reduced_rank_gp`).
    hyperparameters : {'fixed', 'evidence'}
        'evidence' maximises ``log Z`` over the prior's hyper-parameters
        (EP: gradient ascent on every row; SMC: a grid fixed in advance);
        the certificate pays for the choice (``certificate_.hyperparameters_tuned_on``).
    prior_var : float, variance of the iid Gaussian prior.
    point : {'bayes_point', 'mean', 'componentwise_mode'}, SMC's point estimate.
    standardize : bool, standardise the features (replayed at prediction).
    n_particles, len_chain : int, M and P of the waste-free sampler (M P particles).
    ess_rmin : float in (0, 1), target ESS ratio of the adaptive tempering.
    fold_particles, fold_len_chain : int, optional, M and P of the folds' samplers.
    move : particles ArrayMCMC, optional; default: the model's default move.
    eps : float in (0, 1), the certificates hold with probability ``1 - eps``.
    pu_prior : float in [0, 1), optional
        Positive-unlabelled labels, a fraction ``pu_prior`` of the
        unlabelled being positive: ``lam / (1 - pu_prior)`` on the observed
        risk, and every AUC figure corrected to the positive-vs-negative
        scale (:mod:`pac_particles.problem.auc`).
    random_state : int, optional; n_jobs : int or None (folds, grid runs,
        chains; None: one per core up to their number, but VB's folds in
        this process).
    chains : int >= 1, SMC: independent runs at ``lam_`` for ArviZ's ``r_hat``.
    verbose : bool or str, progress on stderr (``"bar"``, ``"lines"``).
    backend : {'numba', 'jax'}, where SMC's risk runs: the host's cores or
        JAX's device, a GPU (docs/gpu.md); linear scores only. EP and VB
        ignore it (also when 'auto' chooses them).
    deploy : {'all_rows', 'certified'}, the score ``decision_function``
        returns: the posterior's ``point`` fitted on every row, or the
        certified part-A score (a logistic regression on the certificate's
        prior half; docs/user_guide.md says when each pays).

    Attributes
    ----------
    classes_, coef_, intercept_ : the labels (``classes_[1]`` positive) and
        the score ``decision_function = X @ coef_ + intercept_`` on raw inputs.
    method_, rank_ : the method used (``method`` or 'auto''s choice); GP scores' rank.
    lam_, log_evidence_, log_evidence_se_ : ``lam`` used, the posterior's
        ``log_evidence`` and SMC's single-run standard error of it.
    coef_se_ : SMC's single-run Monte Carlo standard error of ``coef_``.
    certificate_, certified_auc_risk_ : the certificate of the randomised
        score (``theta`` drawn from the posterior's Gaussian at each use), or
        of the part-A score where that is tighter
        (:func:`pac_particles.bounds.certify`; ``str`` of it says which),
        never looser than the test-set bound of a score fitted on half the
        rows, and its PU-corrected bound on ``1 - AUC``, in [0, 1].
    certified_coef_, certified_intercept_ : the score ``certificate_``
        certifies where that is one fixed linear score (the part-A score),
        on raw inputs (:meth:`certified_decision_function`); None otherwise.
    deployed_certificate_ : the certificate of the score ``decision_function``
        returns: derandomised (``deploy='all_rows'``, computed when first
        read; None for GP scores), or the part-A score's test-set bound on
        the other half at the whole ``eps``. The three are None for rows
        left on a Dask cluster.
    bound_ : the dissertation's Corollary 19 (for reference; None: reduced
        rank), evaluated on first read: no part of the certificate.
    train_auc_, heldout_auc_ : PU-corrected AUC on the training data, and of
        held-out scores (leave-one-out, the folds' mean at ``lam_``, or
        refits on folds with ``pu_prior``).
    threshold_, proba_slope_ : ``predict``'s Youden cut and ``predict_proba``'s slope.
    posterior_, posteriors_, approximation_ : the fitted posterior (a
        PosteriorResult), every independent run at ``lam_`` (SMC's
        ``chains``; ``[posterior_]`` otherwise), EP's or VB's model (None
        for a sampler).
    cv_, lam_grid_failures_, evidence_grid_ : how ``lam`` and the
        hyper-parameters were chosen; grid values where the fit failed.
    hyperparameters_, inclusion_probs_ : the prior's hyper-parameters used;
        spike-and-slab inclusion probabilities of the kept features.
    coefficients_, inclusion_probabilities_ : pandas Series by feature name.
    kept_columns_ : indices of the input columns the fit kept (constant ones dropped).
    n_features_in_, feature_names_in_ : scikit-learn's.
    """

    #: refits on folds give ``heldout_auc_`` (PU labels, a float ``lam``);
    #: off inside those refits
    _heldout_folds = True

    def __init__(self, method="auto", lam="cv", lam_max=None, n_folds=5,
                 grid_size=None, cv_rule="certified", vb_family="diagonal",
                 prior="gaussian", rank="auto",
                 spike_slab=None, kernel=None, hyperparameters="fixed",
                 prior_var=1.0, point="bayes_point", standardize=True,
                 n_particles=100, len_chain=10, ess_rmin=0.5,
                 fold_particles=None,
                 fold_len_chain=None, move=None, eps=0.05,
                 pu_prior=None, random_state=None, n_jobs=None, chains=1,
                 verbose=False, backend="numba", deploy="all_rows"):
        self._store_params(locals())

    def _check_params(self):
        check_ranking_parameters(self)

    def fit(self, X: ArrayLike, y: ArrayLike) -> "PACBayesAUC":
        """Fit the Gibbs posterior on ``(X, y)``; returns self."""
        # BLAS on one thread for the whole fit: the numba kernels supply the
        # parallelism, and OpenBLAS workers woken by the small dense algebra
        # between EP's sweeps spin and slowed the next parallel sweep
        with one_blas_thread():
            return self._fit(X, y)

    def _fit(self, X, y):
        self._check_params()
        # a refit must not report figures left over from a previous fit
        for name in ("cv_", "cv_auc_", "inclusion_probs_", "evidence_grid_",
                     "coef_", "intercept_"):
            self.__dict__.pop(name, None)
        problem = None
        if is_dask_collection(X) or is_dask_collection(y):
            # the rows stay on the cluster; a uniform sample of them is the
            # training rows below (train_auc_, the cut, the slope)
            problem, X, positives = cluster_problem(self, X, y)
        else:
            try:
                X, y = validate_data(self, X, y, dtype=float)
            except ValueError:
                explain_rejected_rows(X, y)     # the column and row, if any
                raise
            positives = self._training_labels(
                y, "AUC scoring needs positives and negatives")
        n = len(positives) if problem is None else problem.data.n
        lam_max = (self.lam_max if self.lam_max is not None
                   else default_lam_max(n))
        choose_lam = isinstance(self.lam, str)
        # the one set-up: constant columns dropped (with a warning) here
        if problem is None:
            problem = GibbsProblem.ranking(
                X, positives, lam_max if choose_lam else self.lam,
                self.standardize, self.pu_prior)
        hyper = prior_hyperparameters(problem.data.d, self.kernel, self.prior,
                                      self.spike_slab, self.prior_var)
        fit_rows, self.rank_ = X, None
        if self.kernel is not None:
            # GP scores: the exact prior, or the reduced-rank features
            problem, hyper, fit_rows, self.rank_ = gp_prior_problem(
                problem, hyper, X, self.kernel, self.rank,
                certificate_spec(self), self.random_state)
        # the certified rule compares certificates during the fit
        self.hyperparameters_ = hyper
        # the certificate's split and part-A prior, computed once for the
        # certified choice of lam and for every certificate of the fit
        setting = CertificateSetting(problem, certificate_spec(self))
        options = fit_options(self, hyper, lam_max, problem, setting)
        method = choose_method(self.method, options, n, "ranking",
                               problem.data.in_memory)
        self.method_ = method.name
        fit = self._method_fit = method.checked(
            method.fit_ranking(problem, options, fit_rows))
        post = self.posterior_ = fit.posterior
        self.lam_, self.hyperparameters_ = float(fit.lam), fit.hyperparameters
        self.approximation_, self.posteriors_ = fit.approximation, fit.posteriors
        self.lam_grid_failures_ = fit.lam_grid_failures
        for name, value in (("cv_", fit.cv), ("cv_auc_", fit.loo_score),
                            ("evidence_grid_", fit.evidence_grid)):
            if value is not None:
                setattr(self, name, value)
        if self.prior == "spike_slab":
            self.inclusion_probs_ = post.inclusion_probs
        se = post.log_evidence_se
        self.log_evidence_se_ = None if se is None else float(se)
        self.kept_columns_ = problem.data.columns
        self.coef_se_ = None
        if self.kernel is None:
            self.coef_, self._offset = post.raw_coefficients(
                post.point_estimate(self.point))
            point_se = post.point_estimate_se(self.point)
            if point_se is not None:
                self.coef_se_ = post.data.raw_linear(point_se)[0]
        _certify(self, fit, problem, fit.grid, setting)
        train_scores = self._raw_scores(X)
        # the fit's own risk at the training scores (rows on a cluster:
        # the AUC of their sample)
        train_risk = (problem.risk(train_scores) if problem.data.in_memory
                      else auc_risk(train_scores, positives))
        self.train_auc_ = 1.0 - float(pu_corrected_risk(train_risk,
                                                        self.pu_prior))
        rows, weights = calibration_rows(positives, self.random_state)
        self.threshold_ = youden_cut(positives[rows], train_scores[rows])
        if self.kernel is None:
            # decision_function > 0 exactly where the score passes the threshold
            self.intercept_ = float(self._offset - self.threshold_)
        self.proba_slope_, _ = platt_sigmoid(
            train_scores[rows], positives[rows], self.pu_prior,
            cut=self.threshold_, weights=weights)
        self.heldout_auc_ = heldout_auc(self, X, positives)
        return self

    bound_ = OnFirstRead("Corollary 19 (:func:`_certify`), evaluated on "
                         "first read.")
    deployed_certificate_ = OnFirstRead(
        "The deployed score's certificate (:func:`_certify`).")

    def _raw_scores(self, X):
        if self.kernel is None:
            return X @ self.coef_ + self._offset
        return get_method(self.method_).scores(self._method_fit, X,
                                               self.point)

    def decision_function(self, X: ArrayLike) -> ArrayLike:
        """Scores: larger means more likely positive (``classes_[1]``)."""
        check_is_fitted(self)
        if is_dask_collection(X):
            return cluster_decision_function(self, X)
        X = validate_data(self, X, dtype=float, reset=False)
        if self.kernel is None:
            return X @ self.coef_ + self.intercept_
        return self._raw_scores(X) - self.threshold_

    def certified_decision_function(self, X: ArrayLike) -> np.ndarray:
        """Scores of the score ``certificate_`` certifies where that is one
        fixed linear score (the part-A score): ``X @ certified_coef_ +
        certified_intercept_``. InputError where it certifies the
        randomised score, which has no fixed scores."""
        check_is_fitted(self)
        if self.certified_coef_ is None:
            raise InputError("certificate_ certifies the randomised score "
                             "(a new theta at each use), not one fixed "
                             "score: use decision_function and "
                             "deployed_certificate_")
        X = validate_data(self, X, dtype=float, reset=False)
        return X @ self.certified_coef_ + self.certified_intercept_

    def predict(self, X: ArrayLike) -> ArrayLike:
        """Labels: ``classes_[1]`` where ``decision_function`` is positive
        (a Dask array for a Dask ``X``)."""
        positive: ArrayLike = (self.decision_function(X) > 0).astype(int)
        if is_dask_collection(positive):
            return positive.map_blocks(self.classes_.take,
                                       dtype=self.classes_.dtype)
        return self.classes_[positive]

    def predict_proba(self, X: ArrayLike) -> ArrayLike:
        """``expit(proba_slope_ * decision_function(X))``: Platt's slope on
        the training scores with the intercept held at ``predict``'s cut,
        PU-corrected with ``pu_prior`` (probabilities for the unlabelled
        rows' population; :func:`~pac_particles.sklearn.binary.platt_sigmoid`);
        over-confident when the fit over-fits: wrap the estimator in
        ``CalibratedClassifierCV`` for held-out calibration."""
        p = calibrated_probability(self.decision_function(X),
                                   self.proba_slope_)
        return np.stack([1.0 - p, p], axis=1)    # a Dask array stays one

    def score(self, X: ArrayLike, y: ArrayLike,
              sample_weight: Optional[ArrayLike] = None) -> float:
        """AUC of the scores on ``(X, y)`` (not the accuracy), PU-corrected
        with ``pu_prior``."""
        check_is_fitted(self)
        positives = self._test_labels(y)
        scores = self.decision_function(X)
        if scores.shape[0] != positives.shape[0]:
            raise InputError(f"X has {scores.shape[0]} rows but y has "
                             f"{positives.shape[0]} entries")
        if sample_weight is not None:
            sample_weight = check_finite_array(sample_weight, "sample_weight",
                                               ndim=1)
            if sample_weight.shape != positives.shape or np.any(sample_weight < 0):
                raise InputError("sample_weight must be non-negative with one "
                                 "entry per row of X")
        auc = roc_auc_score(positives, scores, sample_weight=sample_weight)
        return 1.0 - float(pu_corrected_risk(1.0 - auc, self.pu_prior))


def check_ranking_parameters(est: "PACBayesAUC") -> None:
    """Check ``PACBayesAUC``'s parameters beyond the shared ones; an
    ``InputError`` names the parameter and what to pass."""
    check_shared_parameters(est, method_names("ranking"))
    check_choice(est.point, "point", POINT_ESTIMATES)
    check_choice(est.vb_family, "vb_family", VB_FAMILIES)
    check_choice(est.prior, "prior", PRIORS)
    check_choice(est.hyperparameters, "hyperparameters", HYPERPARAMETERS)
    check_choice(est.cv_rule, "cv_rule", CV_RULES)
    check_probability(est.ess_rmin, "ess_rmin")
    if est.kernel is not None and not (
            callable(est.kernel)
            or (isinstance(est.kernel, str) and est.kernel == "rbf")):
        raise InputError(f"kernel must be a callable kernel(X1, X2) or "
                         f"'rbf', got {type(est.kernel).__name__} (a "
                         "precomputed Gram matrix cannot score new rows)")
    if est.kernel is not None and est.prior == "spike_slab":
        raise InputError("prior='spike_slab' is for linear scores: use "
                         "it with kernel=None, or prior='gaussian' with "
                         "a GP kernel")
    if est.spike_slab is not None:
        try:
            values = tuple(est.spike_slab)
        except TypeError:
            values = ()
        if len(values) != 3:
            raise InputError("spike_slab must be a tuple (p, v0, v1)")
        for value, name in zip(values, ("p", "v0", "v1")):
            if value is not None:
                check_positive(value, f"spike_slab {name}",
                               allow_zero=name == "v0")
    if est.grid_size is not None:
        check_count(est.grid_size, "grid_size", minimum=2)
    for name in ("fold_particles", "fold_len_chain"):
        if getattr(est, name) is not None:
            check_count(getattr(est, name), name, minimum=2)


def heldout_auc(est: PACBayesAUC, X: np.ndarray,
                positives: np.ndarray) -> Optional[float]:
    """The fitted estimator's ``heldout_auc_``: the leave-one-out AUC, the
    folds' mean AUC at ``lam_`` (``lam='cv'``), or with ``pu_prior`` the
    mean AUC of refits on stratified folds; PU-corrected; None otherwise."""
    auc = getattr(est, "cv_auc_", None)
    if auc is None and "cv_" in est.__dict__:
        auc = float(est.cv_.mean_auc[np.argmin(np.abs(est.cv_.grid
                                                       - est.lam_))])
    elif (auc is None and est.pu_prior is not None
          and est._heldout_folds):
        def fit_and_score(train, val):
            refit = clone(est)
            refit._heldout_folds = False       # no folds within the folds
            refit.fit(X[train], positives[train].astype(int))
            return roc_auc_score(positives[val],
                                 refit.decision_function(X[val]))
        auc = heldout_score(fit_and_score, positives, est.n_folds,
                            est.random_state)
    if auc is None:
        return None
    return 1.0 - float(pu_corrected_risk(1.0 - auc, est.pu_prior))


def _data_free_prior(est, post):
    """The prior of Corollary 19 (``bound_``), fixed before the data: the
    hyper-parameters given as parameters (or their defaults), never those
    an evidence fit tuned on the rows; ``N(0, K)`` of the given kernel's
    Gram matrix (with its jitter) for GP scores."""
    hyper = prior_hyperparameters(post.data.d, est.kernel, est.prior,
                                  est.spike_slab, est.prior_var)
    if post.is_gp:
        return jittered_gram(hyper["kernel"], post.data.X)
    if est.prior == "spike_slab":
        return SpikeSlabPrior(post.data.d, p=hyper["p"], v0=hyper["v0"],
                              v1=hyper["v1"])
    return hyper["prior_var"]


def _certify(est, fit, problem, grid, setting=None):
    """Set ``bound_`` (Corollary 19 under the data-free prior, ``lam`` on
    ``grid`` when chosen there; evaluated when first read),
    ``certificate_``, ``certified_auc_risk_``
    and ``deployed_certificate_`` (:func:`pac_particles.bounds.certify`,
    through ``setting``, a :class:`~pac_particles.bounds.CertificateSetting`
    of ``problem``, if one is shared; the derandomised one evaluated when
    first read); with ``deploy='certified'``, ``coef_`` and the offset of
    the part-A score (its certificate computed in the fit)."""
    post = fit.posterior
    if isinstance(problem.data, FeatureData):
        # the reduced-rank prior's features come from rows of the fit:
        # Corollary 19 on every row has no prior fixed before them
        est._bound = None
    else:
        # the dissertation's bound, kept beside the certificate for
        # reference and no part of it: its risk over every pair is summed
        # when ``bound_`` is first read, not in every fit; a linear score's
        # bound reads the rows in class order (no copy in input order)
        est._bound = fit.bound if fit.bound is not None else partial(
            fitted_gaussian_bound, post, _data_free_prior(est, post),
            est.eps, grid, seed=est.random_state,
            data=None if post.is_gp else post.data.by_class())
    est.certificate_ = est.deployed_certificate_ = None
    est.certified_auc_risk_ = est.certified_coef_ = None
    est.certified_intercept_ = None
    if est.deploy == "certified" and not problem.data.in_memory:
        raise InputError("deploy='certified' needs the rows in memory (the "
                         "certificate's split); use deploy='all_rows' for "
                         "rows on a Dask cluster")
    if problem.data.in_memory:
        # rows on a cluster: their row sample is drawn with replacement, so
        # its halves are not independent; no certificate there
        spec = certificate_spec(est)
        if setting is None:
            setting = CertificateSetting(problem, spec)
        est.certificate_ = certify(post, problem, spec, setting)
        if est.deploy == "certified":
            # the deployed score is the part-A score it certifies: now
            est.deployed_certificate_ = certify(
                post, problem, certificate_spec(est, "part_a"), setting)
            est.coef_, est._offset = problem.data.raw_linear(np.asarray(
                est.deployed_certificate_.score_coefficients, dtype=float))
            est.coef_se_ = None
        elif not post.is_gp:
            # the derandomised certificate when first read (its pairs'
            # margins cost as much as the rest of the certificates): the
            # split and the part-A prior kept, B's rows gathered again then
            est.deployed_certificate_ = partial(
                certify, post, problem, certificate_spec(est, "deployed"),
                setting.without_rows())
        est.certified_auc_risk_ = min(max(float(pu_corrected_risk(
            est.certificate_.bound, est.pu_prior)), 0.0), 1.0)
        fixed = est.certificate_.score_coefficients
        if fixed is not None and not isinstance(problem.data, FeatureData):
            # the one fixed score certified (the part-A score), on raw inputs
            est.certified_coef_, offset = problem.data.raw_linear(
                np.asarray(fixed, dtype=float))
            est.certified_intercept_ = float(offset)


def fit_options(est: "PACBayesAUC", hyper: dict, lam_max: float,
                problem: GibbsProblem,
                setting: Optional[CertificateSetting] = None) -> FitOptions:
    """``est``'s parameters as its method reads them, fixed for the fit on
    ``problem`` (the certified rule's certificates are of that problem,
    through ``setting`` if one is shared)."""
    choose_lam = isinstance(est.lam, str)
    spec = certificate_spec(est)
    if setting is None:
        setting = CertificateSetting(problem, spec)
    features = isinstance(problem.data, FeatureData)
    return FitOptions(
        lam=None if choose_lam else check_positive(est.lam, "lam"),
        lam_max=lam_max, grid_size=est.grid_size, n_folds=est.n_folds,
        hyper=hyper, hyperparameters=est.hyperparameters,
        kernel=None if features else est.kernel, prior=est.prior,
        prior_var=1.0 if features else est.prior_var,
        vb_family=est.vb_family, point=est.point,
        standardize=est.standardize and not features,
        n_particles=est.n_particles,
        len_chain=est.len_chain, ess_rmin=est.ess_rmin,
        fold_particles=est.fold_particles,
        fold_len_chain=est.fold_len_chain, move=est.move,
        chains=est.chains, pu_prior=est.pu_prior, eps=est.eps,
        random_state=est.random_state, n_jobs=est.n_jobs,
        verbose=est.verbose, backend=est.backend,
        step_rule=(
            (lambda cv: most_certified_step(
                cv, lambda post: certify(post, problem, spec, setting)))
            if est.cv_rule == "certified" else None))
