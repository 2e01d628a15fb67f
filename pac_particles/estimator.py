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
from .bounds import pac_bayes_bound, pac_bayes_bound_gaussian, smc_certificate
from .data import check_lam, validate_xy
from .ep import EPGP, EPLinear, EPSpikeSlab
from .models import AUCGibbsModel, GPAUCModel
from .posterior import POINT_ESTIMATES, run_smc
from .priors import SpikeSlabPrior, SquaredExponential, gaussian_prior
from .selection import LamCVResult, cv_lambda, evidence_grid
from .vb import GaussianVB, expected_auc_risk

__all__ = ["PACBayesAUC"]

METHODS = ("smc", "ep", "vb")
PRIORS = ("gaussian", "spike_slab")
HYPERPARAMETERS = ("fixed", "evidence")
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
    prior : {'gaussian', 'spike_slab'}
        Prior of the linear coefficients: iid ``N(0, prior_var)``, or the
        spike-and-slab ``prod_k [p N(0, v1) + (1 - p) N(0, v0)]`` (SMC and EP;
        gives ``inclusion_probs_``).
    spike_slab : tuple (p, v0, v1), optional
        Spike-and-slab hyper-parameters; default
        :class:`~pac_particles.priors.SpikeSlabPrior`'s (``p = 1 - exp(-1/d)``,
        ``v0 = v1 / 100``, ``v1 = 1``). EP also accepts ``v0 = 0``.
    kernel : callable, optional
        A GP kernel ``kernel(X1, X2) -> Gram`` (e.g.
        :class:`~pac_particles.priors.SquaredExponential`) or ``'rbf'`` for a
        squared-exponential kernel of lengthscale ``sqrt(d)`` on the
        standardised inputs: nonlinear scores with a Gaussian-process prior
        (SMC: :class:`~pac_particles.models.GPAUCModel`; EP:
        :class:`~pac_particles.ep.EPGP`). No ``coef_`` then.
    hyperparameters : {'fixed', 'evidence'}
        'evidence' maximises the (pseudo-)evidence ``log Z`` over the prior's
        hyper-parameters before the final fit: with EP by gradient ascent
        (ARD prior variances for the Gaussian prior, ``p`` and ``v0/v1`` for
        spike-and-slab, lengthscales for GP kernels); with SMC over a grid
        (``v0/v1`` in {1e-4, 1e-3, 1e-2, 1e-1} for spike-and-slab, the
        lengthscale times {1/4, 1/2, 1, 2, 4} for the rbf kernel). The
        isotropic Gaussian prior has nothing to tune: the risk is
        scale-invariant, so ``log Z`` does not depend on ``prior_var``.
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
    inclusion_probs_ : posterior inclusion probabilities (spike-and-slab).
    hyperparameters_ : the prior hyper-parameters used (after evidence
        maximisation when asked).

    Notes
    -----
    ``predict`` thresholds the score where the training ROC curve maximises
    Youden's index ``TPR - FPR`` (the point of the ROC curve farthest above
    the diagonal), which weighs both classes equally whatever their
    proportions. ``score`` returns the AUC, not the accuracy.
    """

    def __init__(self, method="smc", lam="cv", lam_max=None, n_folds=5,
                 grid_size=50, vb_family="diagonal", prior="gaussian",
                 spike_slab=None, kernel=None, hyperparameters="fixed",
                 prior_var=1.0, point="bayes_point", standardize=True,
                 n_particles=200, len_chain=10, move=None, eps=0.05,
                 pu_prior=None, random_state=None, n_jobs=1, verbose=False):
        self.method = method
        self.lam = lam
        self.lam_max = lam_max
        self.n_folds = n_folds
        self.grid_size = grid_size
        self.vb_family = vb_family
        self.prior = prior
        self.spike_slab = spike_slab
        self.kernel = kernel
        self.hyperparameters = hyperparameters
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
        if self.prior not in PRIORS:
            raise ValueError(f"prior must be one of {PRIORS}, got {self.prior!r}")
        if self.hyperparameters not in HYPERPARAMETERS:
            raise ValueError(f"hyperparameters must be one of {HYPERPARAMETERS}, "
                             f"got {self.hyperparameters!r}")
        if self.kernel is not None and not (callable(self.kernel)
                                            or self.kernel == "rbf"):
            raise ValueError("kernel must be a callable kernel(X1, X2) or 'rbf'")
        if self.kernel is not None and self.prior == "spike_slab":
            raise ValueError("prior='spike_slab' is for linear scores: do not "
                             "combine it with a GP kernel")
        if self.method == "vb" and (self.kernel is not None
                                    or self.prior == "spike_slab"):
            raise ValueError("method='vb' supports the linear Gaussian prior "
                             "only; use 'smc' or 'ep' for GP kernels and "
                             "spike-and-slab priors")
        if self.spike_slab is not None and len(tuple(self.spike_slab)) != 3:
            raise ValueError("spike_slab must be a tuple (p, v0, v1)")
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
        self._d = d = validate_xy(X, positives).d  # columns kept by the validator
        lam_max = self.lam_max if self.lam_max is not None else 20.0 * len(y)
        choose_lam = isinstance(self.lam, str)
        self.hyperparameters_ = self._initial_hyperparameters(d)
        if self.method == "smc":
            self._fit_smc(X, positives, d, lam_max, choose_lam)
        else:
            self._fit_gaussian(X, positives, lam_max, choose_lam)
        if self.kernel is None:
            theta, data = self._point, self._data
            self.coef_ = np.zeros(self.n_features_in_)
            self.coef_[data.columns] = theta / data.scale
            self._offset = -float(np.sum(data.center * theta / data.scale))
        train_scores = self._raw_scores(X)
        self.train_auc_ = 1.0 - float(pu_corrected_risk(
            auc_risk(train_scores, positives), self.pu_prior))
        self.certified_auc_risk_ = float(pu_corrected_risk(
            self.bound_.auc_risk_bound_two_sample, self.pu_prior))
        self.threshold_ = _youden_cut(positives, train_scores)
        if self.kernel is None:
            # decision_function > 0 exactly where the score passes the threshold
            self.intercept_ = self._offset - self.threshold_
        return self

    def _initial_hyperparameters(self, d):
        if self.kernel is not None:
            kernel = (SquaredExponential(lengthscale=np.sqrt(d))
                      if isinstance(self.kernel, str) else self.kernel)
            return {"kernel": kernel}
        if self.prior == "spike_slab":
            p, v0, v1 = self.spike_slab if self.spike_slab is not None \
                else (None, None, 1.0)
            default = SpikeSlabPrior(d, p=p, v0=v0 if v0 else None, v1=v1)
            return {"p": float(np.mean(default.p)),
                    "v0": 0.0 if v0 == 0 else float(np.mean(default.v0)),
                    "v1": float(np.mean(default.v1))}
        return {"prior_var": self.prior_var}

    def _smc_model(self, X, positives, lam, hyper):
        common = dict(standardize=self.standardize, pu_prior=self.pu_prior)
        if self.kernel is not None:
            return GPAUCModel(X, positives, lam, kernel=hyper["kernel"], **common)
        d = self._d
        if self.prior == "spike_slab":
            prior = SpikeSlabPrior(d, p=hyper["p"], v0=hyper["v0"], v1=hyper["v1"])
        else:
            prior = gaussian_prior(d, hyper["prior_var"])
        return AUCGibbsModel(X, positives, lam, prior=prior, **common)

    def _smc_evidence(self, X, positives, lam, smc_kwargs):
        """Grid search of log Z by SMC over the prior's hyper-parameters."""
        hyper = self.hyperparameters_
        if self.kernel is not None:
            base = hyper["kernel"]
            if not isinstance(base, SquaredExponential):
                return hyper
            grid = [{"kernel": SquaredExponential(base.lengthscale * f,
                                                  base.amplitude)}
                    for f in (0.25, 0.5, 1.0, 2.0, 4.0)]
        elif self.prior == "spike_slab":
            grid = [dict(hyper, v0=hyper["v1"] * r) for r in (1e-4, 1e-3, 1e-2, 1e-1)]
        else:
            return hyper  # isotropic Gaussian: log Z does not depend on prior_var
        found = evidence_grid(lambda **h: self._smc_model(X, positives, lam, h),
                              grid, seed=self.random_state, n_jobs=self.n_jobs,
                              **smc_kwargs)
        self.evidence_grid_ = found
        return found.best_params

    def _fit_smc(self, X, positives, d, lam_max, choose_lam):
        smc_kwargs = dict(n_particles=self.n_particles, len_chain=self.len_chain,
                          move=self.move)
        if choose_lam:
            if self.kernel is not None or self.prior == "spike_slab":
                raise ValueError("lam='cv' with SMC is for the linear Gaussian "
                                 "prior; give a float lam (or use method='ep')")
            model_kwargs = dict(standardize=self.standardize,
                                prior=gaussian_prior(d, self.prior_var),
                                pu_prior=self.pu_prior)
            self.cv_ = cv_lambda(X, positives, lam_max=lam_max,
                                 n_folds=self.n_folds, grid_size=self.grid_size,
                                 point=self.point, model_kwargs=model_kwargs,
                                 seed=self.random_state, n_jobs=self.n_jobs,
                                 verbose=self.verbose, **smc_kwargs)
            self.lam_ = self.cv_.best_lam
            self.posterior_ = self.cv_.posterior
        else:
            self.lam_ = check_lam(self.lam)
            if self.hyperparameters == "evidence":
                self.hyperparameters_ = self._smc_evidence(X, positives, self.lam_,
                                                           smc_kwargs)
            model = self._smc_model(X, positives, self.lam_, self.hyperparameters_)
            self.posterior_ = run_smc(model, seed=self.random_state,
                                      verbose=self.verbose, **smc_kwargs)
        self.log_evidence_ = self.posterior_.log_z
        self.bound_ = smc_certificate(
            self.posterior_, eps=self.eps,
            grid_size=int(self.grid_size) if choose_lam else 1)
        if self.posterior_.z is not None:
            self.inclusion_probs_ = self.posterior_.inclusion_probs
        self._point = self.posterior_.point_estimate(self.point)
        self._data = self.posterior_.data

    def _approximation(self, X, positives, lam):
        common = dict(standardize=self.standardize, pu_prior=self.pu_prior)
        hyper = self.hyperparameters_
        if self.method == "vb":
            return GaussianVB(X, positives, lam, prior_var=self.prior_var,
                              family=self.vb_family, seed=self.random_state,
                              **common)
        if self.kernel is not None:
            return EPGP(X, positives, lam, kernel=hyper["kernel"], **common)
        if self.prior == "spike_slab":
            return EPSpikeSlab(X, positives, lam, p=hyper["p"], v0=hyper["v0"],
                               v1=hyper["v1"], **common)
        return EPLinear(X, positives, lam, prior_var=hyper["prior_var"], **common)

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
        if self.hyperparameters == "evidence" and self.method == "ep":
            approx.fit_hyperparameters()
            self.hyperparameters_ = _ep_hyperparameters(approx)
        self.approximation_ = approx
        self.posterior_ = approx.fit()
        self.log_evidence_ = float(self.posterior_.log_z if self.method == "ep"
                                   else self.posterior_.elbo)
        grid_size = int(self.grid_size) if choose_lam else 1
        if self.kernel is not None:
            self.bound_ = _gp_gaussian_bound(approx, self.posterior_, self.eps,
                                             grid_size)
        else:
            prior_var = (self.hyperparameters_.get("prior_var", self.prior_var)
                         if self.prior == "gaussian" else None)
            self.bound_ = (pac_bayes_bound_gaussian(
                self.posterior_.mean, self.posterior_.cov, X, positives,
                approx.lam, prior_var=prior_var, standardize=self.standardize,
                eps=self.eps, grid_size=grid_size) if prior_var is not None
                else _spike_slab_bound(approx, self.posterior_, self.eps, grid_size))
        if getattr(self.posterior_, "inclusion_probs", None) is not None:
            self.inclusion_probs_ = self.posterior_.inclusion_probs
        if self.method == "ep" and self.prior == "gaussian":
            self.cv_auc_ = approx.loo_auc()
        self._point = self.posterior_.mean
        self._data = approx.data

    def _raw_scores(self, X):
        if self.kernel is None:
            return X @ self.coef_ + self._offset
        if self.method == "smc":
            return self.posterior_.score(X, point=self.point)
        return self.approximation_.predict(X)

    def decision_function(self, X):
        """Scores: larger means more likely positive (``classes_[1]``)."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=float, reset=False)
        if self.kernel is None:
            return X @ self.coef_ + self.intercept_
        return self._raw_scores(X) - self.threshold_

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


def _ep_hyperparameters(approx):
    if isinstance(approx, EPGP):
        return {"kernel": approx.kernel}
    if isinstance(approx, EPSpikeSlab):
        return {"p": float(np.mean(approx.p)), "v0": float(np.mean(approx.v0)),
                "v1": float(np.mean(approx.v1))}
    return {"prior_var": np.array(approx.prior_var, dtype=float)}


def _gaussian_kl(mean, cov, prior_cov):
    """KL(N(mean, cov) || N(0, prior_cov)) by Cholesky factors."""
    n = mean.size
    Lp = np.linalg.cholesky(prior_cov)
    Lq = np.linalg.cholesky(cov + 1e-12 * np.trace(cov) / n * np.eye(n))
    A = np.linalg.solve(Lp, Lq)
    b = np.linalg.solve(Lp, mean)
    return 0.5 * (np.sum(A * A) + b @ b - n) + np.sum(np.log(np.diag(Lp))) \
        - np.sum(np.log(np.diag(Lq)))


def _gp_gaussian_bound(approx, result, eps, grid_size):
    """Certificate of a Gaussian rho = N(m, S) on the GP latent scores:
    expected risk in closed form on the score differences, KL to N(0, K)."""
    data = approx.data
    eye = np.eye(data.n)
    K = approx._kernel_matrix()[np.ix_(approx._inv_perm, approx._inv_perm)]
    K = K + approx.jitter_ * eye if getattr(approx, "jitter_", 0) else K
    risk = expected_auc_risk(result.mean, result.cov, eye[data.y], eye[~data.y])
    kl = _gaussian_kl(result.mean, result.cov, K)
    return pac_bayes_bound(risk, max(kl, 0.0), approx.lam, data.n_pos, data.n_neg,
                           eps, grid_size)


def _spike_slab_bound(approx, result, eps, grid_size):
    """Certificate of the EP spike-and-slab approximation: the Gibbs bound
    through its evidence, ``lam E[R_n] + KL ~ -log Z`` (EP's log Z stands in
    for the exact one)."""
    from .bounds import pac_bayes_bound_gibbs
    data = approx.data
    risk = expected_auc_risk(result.mean, result.cov, data.X_pos, data.X_neg)
    return pac_bayes_bound_gibbs(result.log_z, approx.lam, data.n_pos, data.n_neg,
                                 expected_risk=risk, eps=eps, grid_size=grid_size)
