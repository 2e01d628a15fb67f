"""A scikit-learn estimator for PAC-Bayesian AUC scoring.

:class:`PACBayesAUC` wraps the package: validation, the Gibbs posterior
(sampled by SMC), the choice of ``lam`` by cross-validation along the
tempering path, the evidence and a point estimate. It follows the
scikit-learn conventions (parameters stored by ``__init__``, fitted attributes
with a trailing underscore, ``random_state``), so it works in
``cross_val_score(..., scoring="roc_auc")``, ``GridSearchCV`` and ``Pipeline``.

Example
-------
>>> from sklearn.model_selection import cross_val_score
>>> from pac_particles.data import load_dataset
>>> from pac_particles.estimator import PACBayesAUC
>>> X, y, _ = load_dataset("pima")
>>> est = PACBayesAUC(lam=500.0, n_particles=50, len_chain=5, random_state=0)
>>> scores = cross_val_score(est, X, y, scoring="roc_auc", cv=3)
>>> bool(scores.mean() > 0.75)
True
"""

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.metrics import roc_auc_score, roc_curve
from sklearn.model_selection import StratifiedKFold
from sklearn.utils.multiclass import check_classification_targets, unique_labels
from sklearn.utils.validation import check_is_fitted, validate_data

from .auc import auc_risk, pu_corrected_risk
from .bounds import pac_bayes_bound_gaussian, smc_certificate
from .data import check_lam, validate_xy
from .ep import EPLinear
from .models import AUCGibbsModel
from .posterior import POINT_ESTIMATES, run_smc
from .priors import gaussian_prior
from .selection import LamCVResult, cv_lambda
from .vb import GaussianVB

__all__ = ["PACBayesAUC"]

METHODS = ("smc", "ep", "vb")
VB_FAMILIES = ("isotropic", "diagonal", "full")


class PACBayesAUC(ClassifierMixin, BaseEstimator):
    """PAC-Bayesian AUC scoring (Ridgway, Alquier, Chopin & Liang, 2014).

    Parameters
    ----------
    method : {'smc', 'ep', 'vb'}
        How the Gibbs posterior ``prior * exp(-lam R_n)`` is approximated:
        waste-free tempering SMC (the reference), Expectation Propagation
        (Gaussian, fast, with log-evidence) or Gaussian variational Bayes.
    lam : float or 'cv'
        Inverse temperature on the fraction of mis-ordered pairs, or 'cv' to
        choose it on the grid of ``grid_size`` log-spaced values from
        ``lam_max / 1000`` to ``lam_max``: SMC by ``n_folds`` cross-validation
        along one tempering path per fold; EP by its leave-one-out AUC
        (Opper & Winther, no refit); VB by ``n_folds`` cross-validation.
    lam_max : float, optional
        Top of the grid for ``lam='cv'``; default ``20 * n_samples``.
    n_folds : int
        Folds for ``lam='cv'`` (SMC, VB).
    grid_size : int
        Size of the grid for ``lam='cv'``; the certificate pays
        ``log(grid_size)`` for the data-driven choice.
    vb_family : {'isotropic', 'diagonal', 'full'}
        Covariance family of the VB approximation.
    prior_var : float
        Variance of the iid Gaussian prior (irrelevant for the ranking: the
        risk is scale-invariant; kept for the evidence's bookkeeping).
    point : {'bayes_point', 'mean', 'componentwise_mode'}
        Point estimate used by ``decision_function`` (SMC; the Gaussian
        approximations score with their mean).
    standardize : bool
        Standardise features before fitting (replayed at prediction).
    n_particles, len_chain : int
        Resampled particles and chain length of the waste-free sampler.
    move : particles ArrayMCMC, optional
        MCMC step; default: the package's default move.
    eps : float in (0, 1)
        Confidence level 1 - eps of the reported PAC-Bayes certificate.
    pu_prior : float in [0, 1), optional
        Positive-unlabelled data: ``y``'s positive class marks labelled
        positives, the other class unlabelled points of which a fraction
        ``pu_prior`` is positive. The fit uses ``lam / (1 - pu_prior)`` on the
        observed risk, and ``train_auc_``, ``score`` and
        ``certified_auc_risk_`` are corrected to the positive-vs-negative
        scale by ``AUC_PN = (AUC_PU - pi/2) / (1 - pi)`` (see
        :mod:`pac_particles.auc`).
    random_state : int, optional
    n_jobs : int
        Parallel folds for ``lam='cv'`` (joblib).
    verbose : bool
        Progress lines while sampling.

    Attributes
    ----------
    classes_ : the two labels; ``classes_[1]`` is the positive class.
    coef_ : (n_features,) linear score on the raw inputs (the chosen point
        estimate mapped back through the standardisation).
    intercept_ : offset making ``decision_function = X @ coef_ + intercept_``
        positive exactly where ``predict`` says ``classes_[1]``.
    lam_ : the inverse temperature used.
    log_evidence_ : estimate of ``log Z(lam_)``: SMC estimate, EP energy, or
        the VB lower bound (ELBO).
    certified_auc_risk_ : bound, holding with probability ``1 - eps``, on the
        expected ``1 - AUC`` (positive vs negative) of the randomised
        posterior score: ``bound_.auc_risk_bound_two_sample``, PU-corrected.
    bound_ : :class:`pac_particles.bounds.PACBayesBound`, the PAC-Bayes
        certificate at level ``1 - eps`` of the Gibbs posterior (union bound
        over the CV grid when ``lam='cv'``); ``bound_.auc_risk_bound_two_sample``
        bounds the expected test ``1 - AUC`` of the randomised score.
    threshold_ : the cut on the score used by ``predict``;
        ``decision_function`` is shifted by it so that the cut is 0.
    posterior_ : the SMCPosterior, EPResult or VBResult.
    cv_ : the LamCVResult when ``lam='cv'`` (for EP, one row: the
        leave-one-out AUC).
    n_features_in_ : number of input features.

    Notes
    -----
    ``predict`` thresholds the score where the training ROC curve maximises
    Youden's index ``TPR - FPR`` (the point of the ROC curve farthest above
    the diagonal), which weighs both classes equally whatever their
    proportions. ``score`` returns the AUC, not the accuracy.
    """

    def __init__(self, method="smc", lam="cv", lam_max=None, n_folds=5,
                 grid_size=50, vb_family="diagonal",
                 prior_var=1.0, point="bayes_point", standardize=True,
                 n_particles=200, len_chain=10, move=None, eps=0.05,
                 pu_prior=None, random_state=None, n_jobs=1, verbose=False):
        self.method = method
        self.lam = lam
        self.lam_max = lam_max
        self.n_folds = n_folds
        self.grid_size = grid_size
        self.vb_family = vb_family
        self.prior_var = prior_var
        self.point = point
        self.standardize = standardize
        self.n_particles = n_particles
        self.len_chain = len_chain
        self.move = move
        self.eps = eps
        self.pu_prior = pu_prior
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    def _check_params(self):
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {self.method!r}")
        if self.point not in POINT_ESTIMATES:
            raise ValueError(f"point must be one of {POINT_ESTIMATES}, got "
                             f"{self.point!r}")
        if not (isinstance(self.lam, str) and self.lam == "cv"):
            check_lam(self.lam)
        if self.vb_family not in VB_FAMILIES:
            raise ValueError(f"vb_family must be one of {VB_FAMILIES}, got "
                             f"{self.vb_family!r}")
        if int(self.grid_size) < 2:
            raise ValueError(f"grid_size must be >= 2, got {self.grid_size}")
        if self.pu_prior is not None:
            pu_corrected_risk(0.5, self.pu_prior)  # validates the value
        if not 0 < self.eps < 1:
            raise ValueError(f"eps must be in (0, 1), got {self.eps}")

    def fit(self, X, y):
        """Fit the Gibbs posterior on ``(X, y)``; returns self."""
        self._check_params()
        X, y = validate_data(self, X, y, dtype=float)
        check_classification_targets(y)
        self.classes_ = unique_labels(y)
        if self.classes_.size > 2:
            raise ValueError("Only binary classification is supported. Got "
                             f"{self.classes_.size} classes")
        if self.classes_.size < 2:
            raise ValueError("y has only one class: AUC scoring needs positives "
                             "and negatives")
        positives = y == self.classes_[1]
        d = validate_xy(X, positives).d
        lam_max = self.lam_max if self.lam_max is not None else 20.0 * len(y)
        choose_lam = isinstance(self.lam, str)
        if self.method == "smc":
            theta, data = self._fit_smc(X, positives, d, lam_max, choose_lam)
        else:
            theta, data = self._fit_gaussian(X, positives, lam_max, choose_lam)
        self.coef_ = np.zeros(self.n_features_in_)
        self.coef_[data.columns] = theta / data.scale
        offset = -float(np.sum(data.center * theta / data.scale))
        train_scores = X @ self.coef_ + offset
        self.train_auc_ = 1.0 - float(pu_corrected_risk(
            auc_risk(train_scores, positives), self.pu_prior))
        self.certified_auc_risk_ = float(pu_corrected_risk(
            self.bound_.auc_risk_bound_two_sample, self.pu_prior))
        self.threshold_ = _youden_cut(positives, train_scores)
        # decision_function > 0 exactly where the score passes the threshold
        self.intercept_ = offset - self.threshold_
        return self

    def _fit_smc(self, X, positives, d, lam_max, choose_lam):
        model_kwargs = dict(standardize=self.standardize,
                            prior=gaussian_prior(d, self.prior_var),
                            pu_prior=self.pu_prior)
        smc_kwargs = dict(n_particles=self.n_particles, len_chain=self.len_chain,
                          move=self.move)
        if choose_lam:
            self.cv_ = cv_lambda(X, positives, lam_max=lam_max,
                                 n_folds=self.n_folds, grid_size=self.grid_size,
                                 point=self.point, model_kwargs=model_kwargs,
                                 seed=self.random_state, n_jobs=self.n_jobs,
                                 verbose=self.verbose, **smc_kwargs)
            self.lam_ = self.cv_.best_lam
            self.posterior_ = self.cv_.posterior
        else:
            self.lam_ = check_lam(self.lam)
            model = AUCGibbsModel(X, positives, lam=self.lam_, **model_kwargs)
            self.posterior_ = run_smc(model, seed=self.random_state,
                                      verbose=self.verbose, **smc_kwargs)
        self.log_evidence_ = self.posterior_.log_z
        self.bound_ = smc_certificate(
            self.posterior_, eps=self.eps,
            grid_size=int(self.grid_size) if choose_lam else 1)
        return (self.posterior_.point_estimate(self.point),
                self.posterior_.data)

    def _approximation(self, X, positives, lam):
        if self.method == "ep":
            return EPLinear(X, positives, lam, prior_var=self.prior_var,
                            standardize=self.standardize, pu_prior=self.pu_prior)
        return GaussianVB(X, positives, lam, prior_var=self.prior_var,
                          family=self.vb_family, standardize=self.standardize,
                          seed=self.random_state, pu_prior=self.pu_prior)

    def _fit_gaussian(self, X, positives, lam_max, choose_lam):
        if choose_lam:
            grid = np.geomspace(lam_max / 1000.0, lam_max, int(self.grid_size))
            if self.method == "ep":
                # leave-one-out by removing each point's sites: no refit
                rows = [[_fitted(self._approximation(X, positives, lam)).loo_auc()
                         for lam in grid]]
            else:
                folds = StratifiedKFold(n_splits=int(self.n_folds), shuffle=True,
                                        random_state=self.random_state)
                rows = []
                for tr, va in folds.split(X, positives):
                    rows.append([1.0 - auc_risk(
                        _fitted(self._approximation(X[tr], positives[tr], lam))
                        .predict(X[va]), positives[va]) for lam in grid])
            fold_auc = np.array(rows)
            self.cv_ = LamCVResult(grid=grid, fold_auc=fold_auc,
                                   best_lam=float(grid[np.argmax(fold_auc.mean(0))]))
            self.lam_ = self.cv_.best_lam
        else:
            self.lam_ = check_lam(self.lam)
        approx = self._approximation(X, positives, self.lam_)
        self.posterior_ = approx.fit()
        self.log_evidence_ = float(self.posterior_.log_z if self.method == "ep"
                                   else self.posterior_.elbo)
        self.bound_ = pac_bayes_bound_gaussian(
            self.posterior_.mean, self.posterior_.cov, X, positives, approx.lam,
            prior_var=self.prior_var, standardize=self.standardize, eps=self.eps,
            grid_size=int(self.grid_size) if choose_lam else 1)
        if self.method == "ep":
            self.cv_auc_ = approx.loo_auc()
        return self.posterior_.mean, approx.data

    def decision_function(self, X):
        """Scores: larger means more likely positive (``classes_[1]``)."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=float, reset=False)
        return X @ self.coef_ + self.intercept_

    def predict(self, X):
        """Labels: ``classes_[1]`` where ``decision_function`` is positive."""
        positive = self.decision_function(X) > 0
        return self.classes_[positive.astype(int)]

    def score(self, X, y, sample_weight=None):
        """AUC of the scores on ``(X, y)`` (not the accuracy); with
        ``pu_prior``, ``y`` are PU labels and the AUC is corrected to the
        positive-vs-negative scale."""
        auc = roc_auc_score(y == self.classes_[1], self.decision_function(X),
                            sample_weight=sample_weight)
        return 1.0 - float(pu_corrected_risk(1.0 - auc, self.pu_prior))


def _youden_cut(positives, scores):
    """Score cut maximising ``TPR - FPR`` on the training ROC curve, placed
    halfway between the chosen score and the next lower one."""
    fpr, tpr, thresholds = roc_curve(positives, scores)
    best = thresholds[np.argmax(tpr - fpr)]
    below = scores[scores < best]
    if not np.isfinite(best):
        return float(scores.max()) + 1.0
    return float(0.5 * (best + below.max())) if below.size else float(best) - 1.0


def _fitted(approximation):
    approximation.fit()
    return approximation
