"""A scikit-learn estimator for PAC-Bayesian AUC scoring.

:class:`PACBayesAUC` wraps the package: validation, the Gibbs posterior
(sampled by SMC), the choice of ``lam`` by cross-validation along the
tempering path, the evidence and a point estimate. It follows the
scikit-learn conventions (parameters stored by ``__init__``, fitted attributes
with a trailing underscore, ``random_state``), so it works in
``cross_val_score(..., scoring="roc_auc")``, ``GridSearchCV`` and ``Pipeline``.

The estimator only assembles: the data are validated once per fit
(:func:`pac_particles.problem.data.validate_xy`), ``lam`` is chosen by
:mod:`pac_particles.sklearn.selection` (one grid, one K-fold machinery, EP's
leave-one-out criterion), and the certificates ``certificate_`` (the
tightest valid one) and ``bound_`` (Corollary 19) come from
:mod:`pac_particles.bounds`. Bad parameters raise
:class:`pac_particles.core.checks.InputError`.

Example
-------
>>> from sklearn.model_selection import cross_val_score
>>> from pac_particles.problem.data import load_dataset
>>> from pac_particles.sklearn.estimator import PACBayesAUC
>>> X, y, _ = load_dataset("pima")
>>> est = PACBayesAUC(lam=500.0, n_particles=50, len_chain=5, random_state=0)
>>> scores = cross_val_score(est, X, y, scoring="roc_auc", cv=3)
>>> bool(scores.mean() > 0.75)
True

References
----------
[ARC16] Alquier, P., Ridgway, J. and Chopin, N. (2016). On the properties of
variational approximations of Gibbs posteriors. JMLR 17(239), 1-41.

[OW00] Opper, M. and Winther, O. (2000). Gaussian processes for
classification: mean-field algorithms. Neural Computation 12(11), 2655-2684.

[RACL14] Ridgway, J., Alquier, P., Chopin, N. and Liang, F. (2014).
PAC-Bayesian AUC classification and scoring. NIPS 27.
"""

import copy
import math
import numbers

import numpy as np
from scipy import optimize
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.metrics import roc_auc_score, roc_curve
from sklearn.utils.multiclass import check_classification_targets, unique_labels
from sklearn.utils.validation import check_is_fitted, validate_data

from pac_particles.problem.auc import auc_risk, pu_corrected_risk
from pac_particles.bounds import smc_certificate
from pac_particles.bounds.auc_certificates import AUCCertificates
from pac_particles.core.checks import (InputError, check_choice, check_count,
                     check_finite_array, check_positive, check_probability,
                     check_pu_prior)
from pac_particles.problem.data import validate_xy
from pac_particles.approx.ep import EPGP, EPLinear, EPSpikeSlab
from pac_particles.approx.ep.base import lam_path_scores, refit_from_path
from pac_particles.smc.importance_evidence import refine_log_z
from pac_particles.core.inference_data import to_inference_data
from pac_particles.smc.models import AUCGibbsModel, GPAUCModel, linear_score_model
from pac_particles.core.parallel import concurrent_folds, one_blas_thread
from pac_particles.smc.posterior import POINT_ESTIMATES, chain_seeds, run_smc, run_smc_chains
from pac_particles.core.kernels import SquaredExponential
from pac_particles.problem.priors import SpikeSlabPrior
from pac_particles.core.weighted_particles import directions, weighted_quantiles
from pac_particles.sklearn.selection import (RefitScorer, cross_validate_lam, cv_lambda,
                        default_lam_max, evidence_grid, lam_grid, loo_lambda,
                        stratified_folds)
from pac_particles.approx.vb import FAMILIES as VB_FAMILIES
# the classification estimator lives beside this one, importable from here;
# both take their parameter storage and tags from BinaryEstimatorMixin
from pac_particles.sklearn.classifier import (BinaryEstimatorMixin, PACBayesClassifier,
                         ep_grid_choice)
from pac_particles.approx.vb import GaussianVB, auto_pairs

__all__ = ["PACBayesAUC", "PACBayesClassifier"]

METHODS = ("smc", "ep", "vb")
PRIORS = ("gaussian", "spike_slab")
HYPERPARAMETERS = ("fixed", "evidence")
CV_RULES = ("certified", "best")
#: ``grid_size=None``: SMC scores the whole tempering path of each fold (the
#: grid costs nothing); EP and VB fit once per value, and 13 values (four a
#: decade) chose the same lam as 50 within the curve's flat top (README,
#: "Default fits against a tuned logistic regression").
DEFAULT_GRID_SIZE = {"smc": 50, "ep": 13, "vb": 13}
#: EP's tolerance along the grid of lam='cv' (the final fit: the model's
#: own, 1e-3): the leave-one-out AUCs of Pima agreed to 4 digits, in half
#: the sweeps.
EP_PATH_TOL = 1e-2
#: L-BFGS tolerance of the VB fits that choose lam (the final fit: 1e-6):
#: at 1e-2 the leave-one-out AUCs of Pima, Liver and German credit numeric
#: agreed to 4 digits with those at 1e-3 (same lam), 5-15% faster
VB_CV_TOL = 1e-2

#: VB chooses ``lam`` by its leave-one-out (O(P d^2) per grid value) up to
#: this many features, by K-fold refits (O(P d) per iteration) above: the
#: leave-one-out was 2x faster at d = 24 (German credit numeric, 0.7 s
#: against 1.5 s), even at d = 44 (SPECTF), and slower at d = 60-61 (Sonar
#: 0.3 s against 0.19 s, German credit 1.9 s against 1.4 s).
VB_LOO_MAX_FEATURES = 48
#: EP's and VB's leave-one-out choice of lam scores every LOO_GRID_STRIDE-th
#: grid value, then the neighbours of the best (selection.loo_lambda)
LOO_GRID_STRIDE = 2


class PACBayesAUC(AUCCertificates, BinaryEstimatorMixin, ClassifierMixin,
                  BaseEstimator):
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
        ``lam_max / 1000`` to ``lam_max``
        (:func:`pac_particles.sklearn.selection.lam_grid`): SMC by ``n_folds`` cross-validation
        along one tempering path per fold; EP by its leave-one-out AUC
        (Opper & Winther, no refit); VB by its leave-one-out AUC (one
        Newton step from the fit, no refit) when it runs on all pairs with
        at most :data:`VB_LOO_MAX_FEATURES` features, else by ``n_folds``
        cross-validation.
    lam_max : float, optional
        Top of the grid for ``lam='cv'``; default ``5 * n_samples``
        (:data:`pac_particles.sklearn.selection.LAM_MAX_PER_POINT`).
    n_folds : int
        Folds for ``lam='cv'`` (SMC; VB on sampled pairs or many features);
        fewer, with a warning, when a class has fewer members
        (:func:`pac_particles.sklearn.selection.fold_count`; a class of one member
        needs a float ``lam``).
    grid_size : int or None
        Size of the grid for ``lam='cv'``; None (default): 50 for SMC (its
        folds score the whole tempering path, so the grid costs nothing)
        and 13 for EP and VB (one fit per value: four values a decade;
        :data:`DEFAULT_GRID_SIZE`). The headline certificate (kl) holds
        for every posterior at once and pays nothing for the data-driven
        choice; Corollary 19 (``bound_``) pays ``log(grid_size)``.
    cv_rule : {'certified', 'best'}
        How SMC's ``lam='cv'`` picks ``lam``: ``'best'`` the grid value of
        highest mean validation AUC; ``'certified'`` (default) the Gibbs
        posterior with the tightest certificate among those the folds
        cannot tell apart from the best -- the tempering steps of the refit
        whose ``gamma`` lies within one standard error of the best mean AUC
        (:attr:`~pac_particles.sklearn.selection.LamCVResult.within_one_se`; the
        refit tempers to ``lam_max``, alongside the folds). The kl bound
        holds for every posterior at once, so the choice costs nothing in
        ``eps``. On small data sets the validation AUC is flat in ``lam``
        within its noise and the argmax is a coin toss; the certificate is
        not (docs/user_guide.md, "PAC-Bayes certificates"). EP and VB use ``'best'``:
        their final fit is one Gaussian at one ``lam`` (no path of
        posteriors), and EP's leave-one-out curve has no spread.
    vb_family : {'isotropic', 'diagonal', 'full'}
        Covariance family of the VB approximation.
    prior : {'gaussian', 'spike_slab'}
        Prior of the linear coefficients: iid ``N(0, prior_var)``, or the
        spike-and-slab ``prod_k [p N(0, v1) + (1 - p) N(0, v0)]`` (SMC and EP;
        gives ``inclusion_probs_``).
    spike_slab : tuple (p, v0, v1), optional
        Spike-and-slab hyper-parameters; default
        :class:`~pac_particles.problem.priors.SpikeSlabPrior`'s (``p = 1 - exp(-1/d)``,
        ``v0 = v1 / 100``, ``v1 = 1``). EP also accepts ``v0 = 0``.
    kernel : callable, optional
        A GP kernel ``kernel(X1, X2) -> Gram`` (e.g.
        :class:`~pac_particles.problem.priors.SquaredExponential`) or ``'rbf'`` for a
        squared-exponential kernel of lengthscale ``sqrt(d)`` on the
        standardised inputs: nonlinear scores with a Gaussian-process prior
        (SMC: :class:`~pac_particles.smc.models.GPAUCModel`; EP:
        :class:`~pac_particles.approx.ep.EPGP`). No ``coef_`` then.
    hyperparameters : {'fixed', 'evidence'}
        'evidence' maximises the (pseudo-)evidence ``log Z`` over the prior's
        hyper-parameters before the final fit: with EP by gradient ascent
        (ARD prior variances for the Gaussian prior, ``p`` and ``v0/v1`` for
        spike-and-slab, lengthscales for GP kernels); with SMC over a grid
        (``v0/v1`` in {1e-4, 1e-3, 1e-2, 1e-1} for spike-and-slab, the
        lengthscale times {1/4, 1/2, 1, 2, 4} for the rbf kernel). The
        isotropic Gaussian prior has nothing to tune: the risk is
        scale-invariant, so ``log Z`` does not depend on ``prior_var``.
        The certificate pays for the choice: SMC's grid is fixed in advance,
        so its data-free bound runs at ``eps / grid size``; EP tunes the
        posterior's hyper-parameters on every row (the kl bound holds for
        every posterior) and certifies it under the prior with the
        hyper-parameters as given (all rows) and under one tuned on the
        prior part only (30% of each class), on the other 70%:
        ``certificate_.hyperparameters_tuned_on``. Tuned priors sit far
        from untuned ones, so expect a weaker certificate than with
        ``'fixed'``.
    prior_var : float
        Variance of the iid Gaussian prior (irrelevant for the ranking: the
        risk is scale-invariant; kept for the evidence's bookkeeping).
    point : {'bayes_point', 'mean', 'componentwise_mode'}
        Point estimate used by ``decision_function`` (SMC; the Gaussian
        approximations score with their mean).
    standardize : bool
        Standardise features before fitting (replayed at prediction).
    n_particles, len_chain : int
        Resampled particles M and chain length P of the waste-free sampler
        (M P particles). The default M = 100 (run_smc's is 200) keeps a
        default fit within about 10x of ``LogisticRegressionCV`` on data
        sets of a few hundred rows; test AUCs and certified AUCs were
        within 0.003 and 0.012 of those of M = 200 (docs/benchmarks.md, "Default
        fits"). Raise it for the evidence:
        the variance of ``log_evidence_`` falls as 1 / M.
    ess_rmin : float in (0, 1)
        Target ESS ratio of the adaptive tempering (``ESSrmin`` of
        :func:`~pac_particles.smc.posterior.run_smc` and of ``particles``): each
        next exponent keeps an effective sample size of ``ess_rmin`` times
        the population, so a larger value makes a denser schedule (more
        tempering steps). Every SMC run of the fit uses it: the final run,
        the folds and the refit of ``lam='cv'``, the evidence grid and the
        extra ``chains``.
        The default 0.5 is ``run_smc``'s; denser schedules did not pay for
        their time on every problem of the efficiency study
        (docs/benchmarks.md, "Efficiency of the SMC sampler"). Ignored by
        EP and VB.
    fold_particles, fold_len_chain : int, optional
        M and P of the folds' samplers for ``lam='cv'``; default half of
        ``n_particles`` and of ``len_chain``
        (:func:`pac_particles.sklearn.selection.cv_lambda`).
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
        :mod:`pac_particles.problem.auc`). The corrected training AUC is
        optimistic (report ``heldout_auc_``), and every corrected figure
        grows with ``pu_prior``: an overestimated ``pi`` inflates it
        (:func:`pac_particles.problem.auc.pu_corrected_auc_range` gives the range
        over an interval of ``pi``).
    random_state : int, optional
    n_jobs : int or None
        Parallel folds for ``lam='cv'`` and runs of the evidence grid
        (joblib; -1: all cores). None (default): the folds of SMC, and of
        VB when it uses folds, run one per core up to ``n_folds``
        (:func:`pac_particles.core.parallel.concurrent_folds`; on small data a
        fold's pair kernel runs on one thread, so only concurrent folds use
        the cores); EP has no folds; the evidence grid runs in sequence.
        The extra runs of ``chains`` run in parallel the same way (one per
        core up to ``chains`` when None).
    chains : int >= 1
        SMC: independent runs of the final posterior, with different seeds
        (:func:`pac_particles.smc.posterior.run_smc_chains`), so that
        :meth:`to_inference_data` has several chains and ArviZ's ``r_hat``
        and ``ess`` are defined (as the chains of PyMC's ``sample_smc``).
        Default 1 (no extra run). ``posterior_`` stays the first chain --
        the fit with ``chains=1``, whose coefficients, evidence and
        certificates do not change with ``chains`` --, and the other runs,
        at ``lam_``, are in ``posteriors_``: they check the first, they do
        not join it (a pooled population would need its own evidence and
        certificate). With ``lam='cv'`` the first chain comes from the
        path refit and the others run at the chosen ``lam_``. Ignored by
        EP and VB (deterministic: one Gaussian).
    verbose : bool or str
        Progress on stderr (:mod:`pac_particles.core.progress`): ``True`` a tqdm
        bar on a terminal, one line per step otherwise; ``"bar"``,
        ``"lines"`` to force either.

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
    log_evidence_se_ : SMC's single-run Monte Carlo standard error of
        ``log_evidence_`` (``SMCPosterior.log_z_se``: of the importance
        sampling estimate that ``run_smc`` reports by default, else of the
        tempering estimate); None for EP and VB, which are deterministic.
    coef_se_ : (n_features,) SMC's single-run Monte Carlo standard error of
        ``coef_`` (of the ``mean`` or ``bayes_point`` it maps, through the
        same standardisation); None for EP and VB, for
        ``point='componentwise_mode'`` and for scores sampled in score space
        (``d > n``). ``coef_ +- 1.96 coef_se_`` is the Monte Carlo
        uncertainty of the estimate, not the posterior spread (README,
        "Single-run error bars").
    certified_auc_risk_ : float in [0, 1], the headline certificate: with
        probability at least ``1 - eps``, the randomised posterior score
        (``theta ~ posterior_`` drawn at each use; for SMC, whose particles
        have no density, ``theta`` from the Gaussian fitted to them or from
        the exact Gibbs posterior, as ``certificate_.posterior`` says) has
        expected population ``1 - AUC`` (positive vs negative) at most this;
        ``certificate_.bound``, PU-corrected. ``1 - certified_auc_risk_`` is
        the certified AUC; 1/2 or more is vacuous.
    certificate_ : :class:`pac_particles.bounds.Certificate`, the tightest
        valid certificate (:meth:`_certificate`): ``name`` (``'kl'``),
        ``prior`` (data-free or data-dependent), ``delta``
        (``eps``), ``bound``, ``vacuous``, ``empirical_randomized_risk``
        (``E_rho[R_n]`` on the sample the bound uses), ``kl``, ``m``, the
        ``alternatives`` compared, and what the prior used: its split
        (``prior_fraction``), its ``hyperparameters``, the data that chose
        them (``hyperparameters_tuned_on``, ``hyperparameter_grid_size``)
        and each part's share of ``eps`` (``delta_shares``); ``posterior``
        and ``note`` for SMC (above).
    bound_ : :class:`pac_particles.bounds.PACBayesBound`, the dissertation's
        Corollary 19 at level ``1 - eps``, kept for reference; its fields
        are clipped to [0, 1]. With ``lam='cv'`` its ``lam`` is a value of
        the grid fixed in advance (union bound over it; ``posterior_lam``
        is ``lam_`` when that is off the grid, as SMC's tempering steps
        are). For SMC it certifies the exact Gibbs posterior, ``-log Z``
        from a lower confidence bound on ``log Z`` (``delta_shares``,
        ``note``).
    proba_slope_ : slope of the logistic map from ``decision_function`` to
        ``predict_proba`` (fitted on the training scores).
    heldout_auc_ : AUC of held-out scores, PU-corrected with ``pu_prior``:
        the leave-one-out AUC of EP (Gaussian prior) or of VB (on all
        pairs), the mean validation AUC at
        ``lam_`` when ``lam='cv'`` (optimistic by the choice of ``lam``), or
        with ``pu_prior`` and a fixed ``lam`` the mean AUC of ``n_folds``
        refits on stratified folds (``n_folds`` more fits; fewer when a
        class has fewer members, none when it has one); None otherwise.
        With PU labels this is the figure to report: ``train_auc_``'s
        correction assumes labelled and unlabelled positives rank alike,
        which a score fitted to separate them breaks on its training data.
    threshold_ : the cut on the score used by ``predict``;
        ``decision_function`` is shifted by it so that the cut is 0.
    posterior_ : the SMCPosterior, EPResult or VBResult.
    posteriors_ : SMC only: the list of ``chains`` independent
        SMCPosterior at ``lam_``, ``posteriors_[0] is posterior_``
        (:meth:`to_inference_data` exports them as chains).
    lam_grid_failures_ : (k,) array, the values of the ``lam='cv'`` grid
        left out of the choice because the fit failed there: EP did not
        converge (routinely at the top of the grid, where EP collapses),
        or VB's leave-one-out was undefined (Hessian not positive
        definite). Empty when none failed, with a float ``lam`` and for
        SMC. Values that the coarse-then-fine scan did not score
        (:data:`LOO_GRID_STRIDE`) are not failures; ``cv_.grid`` holds the
        values scored. A failure warns
        (:class:`~pac_particles.approx.ep.EPConvergenceWarning`) only when it
        could have changed the choice, at a grid neighbour of ``lam_``
        (:func:`pac_particles.sklearn.classifier.ep_grid_choice`); a final fit at
        ``lam_`` that does not converge warns too.
    cv_ : the LamCVResult when ``lam='cv'`` (for EP, one row: the
        leave-one-out AUC).
    n_features_in_ : number of input features.
    feature_names_in_ : names of the input features, when ``X`` was a
        pandas DataFrame with string column names (scikit-learn's convention).
    coefficients_ : pandas Series of ``coef_`` indexed by feature name
        (``feature_names_in_``, else ``x1, ..., xd``); needs pandas.
    inclusion_probs_ : posterior inclusion probabilities (spike-and-slab) of
        the features kept in the fit (constant columns are dropped).
    inclusion_probabilities_ : the same as a pandas Series indexed by
        feature name.
    hyperparameters_ : the prior hyper-parameters used (after evidence
        maximisation when asked: with EP on the certificate's prior part
        only; ARD variances in the standardised coordinates of the fit).

    Notes
    -----
    ``predict`` thresholds the score where the training ROC curve maximises
    Youden's index ``TPR - FPR`` (the point of the ROC curve farthest above
    the diagonal), which weighs both classes equally whatever their
    proportions. ``score`` returns the AUC, not the accuracy.
    ``predict_proba`` is a logistic function of the score fitted on the
    training data (so ``scoring='neg_log_loss'`` works).
    """

    def __init__(self, method="smc", lam="cv", lam_max=None, n_folds=5,
                 grid_size=None, cv_rule="certified", vb_family="diagonal",
                 prior="gaussian",
                 spike_slab=None, kernel=None, hyperparameters="fixed",
                 prior_var=1.0, point="bayes_point", standardize=True,
                 n_particles=100, len_chain=10, ess_rmin=0.5,
                 fold_particles=None,
                 fold_len_chain=None, move=None, eps=0.05,
                 pu_prior=None, random_state=None, n_jobs=None, chains=1,
                 verbose=False):
        self._store_params(locals())

    def _check_params(self):
        check_choice(self.method, "method", METHODS)
        check_choice(self.point, "point", POINT_ESTIMATES)
        if not (isinstance(self.lam, str) and self.lam == "cv"):
            check_positive(self.lam, "lam")
        if self.lam_max is not None:
            check_positive(self.lam_max, "lam_max")
        check_choice(self.vb_family, "vb_family", VB_FAMILIES)
        check_choice(self.prior, "prior", PRIORS)
        check_choice(self.hyperparameters, "hyperparameters", HYPERPARAMETERS)
        if self.kernel is not None and not (
                callable(self.kernel)
                or (isinstance(self.kernel, str) and self.kernel == "rbf")):
            raise InputError(f"kernel must be a callable kernel(X1, X2) or "
                             f"'rbf', got {type(self.kernel).__name__} (a "
                             "precomputed Gram matrix cannot score new rows)")
        if self.kernel is not None and self.prior == "spike_slab":
            raise InputError("prior='spike_slab' is for linear scores: do not "
                             "combine it with a GP kernel")
        if self.method == "vb" and (self.kernel is not None
                                    or self.prior == "spike_slab"):
            raise InputError("method='vb' supports the linear Gaussian prior "
                             "only; use 'smc' or 'ep' for GP kernels and "
                             "spike-and-slab priors")
        if self.spike_slab is not None:
            try:
                values = tuple(self.spike_slab)
            except TypeError:
                values = ()
            if len(values) != 3:
                raise InputError("spike_slab must be a tuple (p, v0, v1)")
            for value, name in zip(values, ("p", "v0", "v1")):
                if value is not None:
                    check_positive(value, f"spike_slab {name}",
                                   allow_zero=name == "v0")
        if self.grid_size is not None:
            check_count(self.grid_size, "grid_size", minimum=2)
        check_choice(self.cv_rule, "cv_rule", CV_RULES)
        check_count(self.n_particles, "n_particles", minimum=2)
        check_count(self.len_chain, "len_chain", minimum=2)
        check_probability(self.ess_rmin, "ess_rmin")
        for name in ("fold_particles", "fold_len_chain"):
            if getattr(self, name) is not None:
                check_count(getattr(self, name), name, minimum=2)
        check_positive(self.prior_var, "prior_var")
        if self.random_state is not None:
            check_count(self.random_state, "random_state", minimum=0)
        if self.n_jobs is not None and (
                not isinstance(self.n_jobs, numbers.Integral)
                or isinstance(self.n_jobs, bool) or self.n_jobs == 0):
            raise InputError(f"n_jobs must be a non-zero integer (-1: all "
                             f"cores), got {self.n_jobs!r}")
        check_count(self.n_folds, "n_folds", minimum=2)
        check_count(self.chains, "chains")
        if self.pu_prior is not None:
            check_pu_prior(self.pu_prior)
        check_probability(self.eps, "eps")

    def fit(self, X, y):
        """Fit the Gibbs posterior on ``(X, y)``; returns self."""
        # BLAS on one thread for the whole fit: the numba kernels supply the
        # parallelism, and OpenBLAS workers woken by the small dense algebra
        # between EP's sweeps (leave-one-out, posterior, certificates) spin
        # and slowed the next parallel sweep 2-5x (Pima's default EP fit:
        # 0.75 -> 0.39 s); SMC's runs already did this (run_smc)
        with one_blas_thread():
            return self._fit(X, y)

    def _fit(self, X, y):
        self._check_params()
        # a refit must not report figures left over from a previous fit
        for name in ("cv_", "cv_auc_", "inclusion_probs_", "evidence_grid_",
                     "posteriors_"):
            self.__dict__.pop(name, None)
        self.lam_grid_failures_ = np.empty(0)
        X, y = validate_data(self, X, y, dtype=float)
        check_classification_targets(y)
        self.classes_ = unique_labels(y)
        if self.classes_.size > 2:
            raise InputError("Only binary classification is supported. Got "
                             f"{self.classes_.size} classes")
        if self.classes_.size < 2:
            raise InputError("y has only one class: AUC scoring needs "
                             "positives and negatives")
        positives = y == self.classes_[1]
        # The one validation of the fit: it drops constant columns (with a
        # warning), so the models, folds and bounds below see none.
        self._columns = validate_xy(X, positives).columns
        X_kept = X[:, self._columns]
        self._d = d = self._columns.size
        lam_max = (self.lam_max if self.lam_max is not None
                   else default_lam_max(len(y)))
        choose_lam = isinstance(self.lam, str)
        self.hyperparameters_ = self._initial_hyperparameters(d)
        if self.method == "smc":
            self._fit_smc(X_kept, positives, d, lam_max, choose_lam)
        else:
            self._fit_gaussian(X_kept, positives, lam_max, choose_lam)
        self.log_evidence_se_ = self.coef_se_ = None
        if self.method == "smc":
            self.log_evidence_se_ = self.posterior_.log_z_se
        if self.kernel is None:
            theta, data = self._point, self._data
            self.coef_ = self._raw_coefficients(theta)
            self._offset = -float(np.sum(data.center * theta / data.scale))
            point_se = self._point_se()
            if point_se is not None:
                self.coef_se_ = self._raw_coefficients(point_se)
        train_scores = self._raw_scores(X)
        self.train_auc_ = 1.0 - float(pu_corrected_risk(
            auc_risk(train_scores, positives), self.pu_prior))
        # E_rho[R_n] and the KL, once: the headline certificate and, for the
        # Gaussian approximations, Corollary 19 both use them (O(P) each)
        terms = self._data_free_terms(self.posterior_)
        if self.method != "smc":
            # a lam chosen with the data: the bound's is a grid value
            self.bound_ = self._gaussian_certificate(
                self.approximation_,
                lam_grid(lam_max, self._grid_size()) if choose_lam else None,
                terms)
        self.certificate_ = self._certificate(terms=terms)
        self.certified_auc_risk_ = min(max(float(pu_corrected_risk(
            self.certificate_.bound, self.pu_prior)), 0.0), 1.0)
        self.threshold_ = _youden_cut(positives, train_scores)
        if self.kernel is None:
            # decision_function > 0 exactly where the score passes the threshold
            self.intercept_ = self._offset - self.threshold_
        self.proba_slope_ = _logistic_slope(train_scores - self.threshold_,
                                            positives)
        self.heldout_auc_ = self._heldout_auc(X, positives)
        return self

    # ------------------------------------------------------- feature names
    def _feature_names(self):
        """Names of the input columns: ``feature_names_in_`` (a DataFrame's
        columns), else ``x1, ..., xd``."""
        names = getattr(self, "feature_names_in_", None)
        if names is not None:
            return [str(name) for name in names]
        return [f"x{k + 1}" for k in range(self.n_features_in_)]

    def _kept_feature_names(self):
        """Names of the columns the fit kept (constant ones are dropped)."""
        names = self._feature_names()
        return [names[k] for k in self._columns]

    @property
    def coefficients_(self):
        """``coef_`` as a pandas Series indexed by feature name."""
        check_is_fitted(self, "coef_")
        return _series(self.coef_, self._feature_names(), "coefficient")

    @property
    def inclusion_probabilities_(self):
        """``inclusion_probs_`` as a pandas Series indexed by the names of
        the features kept in the fit."""
        check_is_fitted(self, "inclusion_probs_")
        return _series(self.inclusion_probs_, self._kept_feature_names(),
                       "inclusion_probability")

    def coefficient_intervals(self, level=0.95):
        """Posterior intervals of the coefficients on the raw inputs.

        A pandas DataFrame indexed by feature name (``coefficients_``'s
        index) with columns ``coefficient`` (``coef_``), ``lower`` and
        ``upper``: the equal-tailed interval of posterior probability
        ``level`` of the quantity ``coef_`` estimates, mapped to the raw
        inputs through the same standardisation. SMC: weighted quantiles of
        the particles -- of their directions ``theta / ||theta||`` when
        ``point='bayes_point'`` (``coef_`` is then the mean direction), of
        ``theta`` otherwise; sampled in score space (``d > n``), of the
        coefficients ``E[theta | w]`` each particle stands for. EP and VB:
        the Gaussian's marginals, ``mean -+ z sd``. Dropped constant columns
        get zeros.

        The AUC only sees the direction of the score: the coefficients'
        common scale is set by the prior, so read signs, ratios and whether
        an interval holds 0, not magnitudes. Intervals of SMC carry its
        Monte Carlo error (``coef_se_``). GP scores have no coefficients
        (InputError).
        """
        level = check_probability(level, "level")
        if self.kernel is not None:
            raise InputError("GP-kernel scores have no coefficients, so no "
                             "coefficient intervals")
        check_is_fitted(self, "coef_")
        alpha = 0.5 * (1.0 - level)
        if self.method == "smc":
            draws, weights = self._coefficient_draws()
            lower, upper = (weighted_quantiles(draws, weights, q)
                            for q in (alpha, 1.0 - alpha))
        else:
            from scipy.special import ndtri
            mean = np.asarray(self.posterior_.mean, dtype=float)
            half = ndtri(1.0 - alpha) * np.sqrt(np.maximum(
                np.diag(self.posterior_.cov), 0.0))
            lower, upper = mean - half, mean + half
        import pandas as pd
        return pd.DataFrame(
            {"coefficient": self.coef_,
             "lower": self._raw_coefficients(lower),
             "upper": self._raw_coefficients(upper)},
            index=pd.Index(self._feature_names(), name="feature"))

    def _coefficient_draws(self, n_draws=2000, seed=None):
        """Posterior draws of the point estimate's quantity on the fit's
        standardised kept columns (:meth:`coefficient_intervals`), with
        their weights: SMC's particles (directions for the Bayes point;
        ``E[theta | w]`` in score space), ``n_draws`` draws of EP's or VB's
        Gaussian (``seed``, default ``random_state``) otherwise."""
        if self.method == "smc":
            post = self.posterior_
            theta = (directions(post.theta) if self.point == "bayes_point"
                     else post.theta)
            return (np.atleast_2d(post.predictor.linear_coefficients(theta)),
                    np.asarray(post.weights, dtype=float))
        rng = np.random.default_rng(self.random_state if seed is None else seed)
        draws = rng.multivariate_normal(self.posterior_.mean,
                                        self.posterior_.cov, size=n_draws,
                                        method="eigh")
        return draws, np.full(n_draws, 1.0 / n_draws)

    def to_inference_data(self, n_draws=None, seed=0):
        """ArviZ ``InferenceData`` of the fitted posterior, coordinates
        named by feature (:func:`pac_particles.core.inference_data.to_inference_data`:
        resampled SMC particles or draws from the Gaussian approximation;
        coefficients on the standardised scale). SMC fits export one chain
        per run of ``posteriors_`` (``chains=2`` or more: ``az.summary``
        gives ``r_hat``); the attrs say which estimate the log evidence is
        and its standard error."""
        check_is_fitted(self)
        source = (self.approximation_ if self.method != "smc"
                  else getattr(self, "posteriors_", [self.posterior_]))
        # coordinates are features only for coefficients on the design
        primal = (self.kernel is None and (
            self.method != "smc"
            or self.posterior_.predictor.space == "primal"))
        names = self._kept_feature_names() if primal else None
        return to_inference_data(source, n_draws=n_draws, seed=seed,
                                 feature_names=names)

    def _heldout_auc(self, X, positives):
        """AUC of held-out scores, PU-corrected: the leave-one-out AUC (EP,
        Gaussian prior; VB on all pairs), the mean validation AUC at ``lam_``
        (``lam='cv'``),
        or, with ``pu_prior`` only, the mean AUC over ``n_folds`` refits;
        None otherwise."""
        if getattr(self, "cv_auc_", None) is not None:
            auc = self.cv_auc_
        elif getattr(self, "cv_", None) is not None:
            auc = float(self.cv_.mean_auc[np.argmin(np.abs(self.cv_.grid
                                                           - self.lam_))])
        elif self.pu_prior is not None and getattr(self, "_heldout", True):
            try:
                folds = stratified_folds(positives, self.n_folds,
                                         self.random_state)
            except InputError:
                # a class of one member: no split, and a fit at a fixed
                # lam needs none, so only the held-out figure is missing
                return None
            aucs = []
            for train, val in folds:
                est = clone(self)
                est._heldout = False       # no folds within the folds
                est.fit(X[train], positives[train].astype(int))
                aucs.append(roc_auc_score(positives[val],
                                          est.decision_function(X[val])))
            auc = float(np.mean(aucs))
        else:
            return None
        return 1.0 - float(pu_corrected_risk(1.0 - auc, self.pu_prior))

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
        if self.prior == "spike_slab":
            prior = SpikeSlabPrior(self._d, p=hyper["p"], v0=hyper["v0"],
                                   v1=hyper["v1"])
            return AUCGibbsModel(X, positives, lam, prior=prior, **common)
        # score space when d > n (the scores' prior has rank n)
        return linear_score_model(X, positives, lam,
                                  prior_var=hyper["prior_var"], **common)

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
                              grid, seed=self.random_state,
                              n_jobs=self.n_jobs or 1,
                              verbose=self.verbose, **smc_kwargs)
        self.evidence_grid_ = found
        return found.best_params

    def _fit_smc(self, X, positives, d, lam_max, choose_lam):
        smc_kwargs = dict(n_particles=self.n_particles, len_chain=self.len_chain,
                          move=self.move, ESSrmin=self.ess_rmin)
        if choose_lam:
            if self.kernel is not None or self.prior == "spike_slab":
                raise InputError("lam='cv' with SMC is for the linear Gaussian "
                                 "prior; give a float lam (or use method='ep')")
            model_kwargs = dict(standardize=self.standardize,
                                prior_var=self.prior_var,
                                pu_prior=self.pu_prior)
            certified = self.cv_rule == "certified"
            self.cv_ = cv_lambda(X, positives, lam_max=lam_max,
                                 n_folds=self.n_folds, grid_size=self._grid_size(),
                                 point=self.point, model_kwargs=model_kwargs,
                                 make_model=linear_score_model,
                                 refit_to="path" if certified else "best",
                                 fold_particles=self.fold_particles,
                                 fold_len_chain=self.fold_len_chain,
                                 seed=self.random_state, n_jobs=self.n_jobs,
                                 verbose=self.verbose, **smc_kwargs)
            if certified:
                # the path refit kept its tempering evidence: refine it at
                # the chosen step only
                step = self._most_certified_step(self.cv_)
                model = linear_score_model(X, positives, step.lam,
                                           **model_kwargs)
                self.posterior_ = step.with_importance(refine_log_z(
                    model, step.theta, step.weights, step.theta.shape[0],
                    seed=self.random_state))
            else:
                self.posterior_ = self.cv_.posterior
            self.lam_ = float(self.posterior_.lam)
        else:
            self.lam_ = check_positive(self.lam, "lam")
            if self.hyperparameters == "evidence":
                self.hyperparameters_ = self._smc_evidence(X, positives, self.lam_,
                                                           smc_kwargs)
            model = self._smc_model(X, positives, self.lam_, self.hyperparameters_)
            self.posterior_ = run_smc(model, seed=self.random_state,
                                      verbose=self.verbose, **smc_kwargs)
        self.posteriors_ = [self.posterior_]
        if self.chains > 1:
            # independent runs at lam_ for the export's r_hat: posterior_
            # stays the first, the fit of chains=1
            model = self._smc_model(X, positives, self.lam_,
                                    self.hyperparameters_)
            self.posteriors_ += run_smc_chains(
                model, chains=self.chains - 1,
                seed=chain_seeds(self.random_state, self.chains)[1:],
                n_jobs=self.n_jobs, verbose=self.verbose, **smc_kwargs)
        self.log_evidence_ = self.posterior_.log_z
        # the exact Gibbs posterior, log Z from a confidence bound; a lam
        # chosen with the data (a tempering step): the bound's is a grid value
        self.bound_ = smc_certificate(
            self.posterior_, eps=self.eps,
            lam_grid=lam_grid(lam_max, self._grid_size()) if choose_lam
            else None)
        if self.posterior_.z is not None:
            self.inclusion_probs_ = self.posterior_.inclusion_probs
        self._point = self.posterior_.point_estimate(self.point)
        if self.kernel is None:
            # coefficients on the validated design (the identity unless
            # sampled in the design's span: theta = E[theta | w])
            model = self.posterior_.predictor
            self._point = model.linear_coefficients(self._point)
            self._data = model.design_data
        else:
            self._data = self.posterior_.data

    def _raw_coefficients(self, theta):
        """Coefficients on the raw inputs of a vector on the standardised
        kept columns (zero for the dropped constant columns)."""
        data = self._data
        out = np.zeros(self.n_features_in_)
        out[self._columns[data.columns]] = theta / data.scale
        return out

    def _point_se(self):
        """SMC's single-run standard error of the point estimate behind
        ``coef_``; None where there is none (module docstring of
        :mod:`pac_particles.smc.single_run_variance`)."""
        post = self.posterior_
        if self.method != "smc" or post.is_gp or post.predictor.space != "primal":
            return None
        return {"mean": post.mean_se,
                "bayes_point": post.bayes_point_se}.get(self.point)

    def _vb(self, X, positives, lam, tol=1e-6):
        """Gaussian VB at ``lam``; all pairs up to
        :data:`~pac_particles.approx.vb.AUTO_PAIRS_ABOVE`, a fixed sample of pairs
        above (``n_pairs="auto"``)."""
        return GaussianVB(X, positives, lam, prior_var=self.prior_var,
                          family=self.vb_family, seed=self.random_state,
                          n_pairs="auto", tol=tol, standardize=self.standardize,
                          pu_prior=self.pu_prior)

    def _vb_for_cv(self, X, positives, lam):
        """The VB fits of the choice of ``lam``: a projected-gradient
        tolerance of :data:`VB_CV_TOL` (at 1e-3 the validation AUCs of Pima
        and Liver agreed to 5 digits with those at 1e-6, in half the
        iterations; at 1e-2 to 4 digits with those at 1e-3)."""
        return self._vb(X, positives, lam, tol=VB_CV_TOL)

    def _approximation(self, X, positives, lam):
        common = dict(standardize=self.standardize, pu_prior=self.pu_prior)
        hyper = self.hyperparameters_
        if self.method == "vb":
            return self._vb(X, positives, lam)
        if self.kernel is not None:
            return EPGP(X, positives, lam, kernel=hyper["kernel"], **common)
        if self.prior == "spike_slab":
            return EPSpikeSlab(X, positives, lam, p=hyper["p"], v0=hyper["v0"],
                               v1=hyper["v1"], **common)
        return EPLinear(X, positives, lam, prior_var=hyper["prior_var"], **common)

    def _fit_gaussian(self, X, positives, lam_max, choose_lam):
        approx = polish = None
        if choose_lam:
            grid = lam_grid(lam_max, self._grid_size())
            if self.method == "ep":
                self.cv_, approx, polish = self._ep_loo_lambda(X, positives,
                                                               grid)
            elif (X.shape[1] <= VB_LOO_MAX_FEATURES
                  and auto_pairs(int(positives.sum()),
                                 int((~positives).sum())) is None):
                self.cv_, path_fit = self._vb_loo_lambda(X, positives, grid)

                def polish(lam):
                    # the final fit, warm-started at the path's optimum
                    return self.approximation_.fit(init=path_fit(lam))
            else:
                # sampled pairs or many features: K-fold refits,
                # continuation from small to large lam; concurrent folds
                # share the cores
                jobs, threads = concurrent_folds(self.n_folds, self.n_jobs)
                self.cv_ = cross_validate_lam(
                    X, positives, grid,
                    RefitScorer(self._vb_for_cv, warm_start=True,
                                threads=threads),
                    n_folds=self.n_folds, seed=self.random_state,
                    n_jobs=jobs, verbose=self.verbose)
            self.lam_ = self.cv_.best_lam
        else:
            self.lam_ = check_positive(self.lam, "lam")
        if approx is None or self.hyperparameters == "evidence":
            approx = self._approximation(X, positives, self.lam_)
        if self.hyperparameters == "evidence" and self.method == "ep":
            approx = self._evidence_on_all_rows(approx)
        self.approximation_ = approx
        if polish is not None and self.hyperparameters != "evidence":
            # the grid path's model: polish its sites at the chosen lam
            self.posterior_ = polish(self.lam_)
        else:
            self.posterior_ = approx.fit()
        if getattr(self.posterior_, "degenerate", False):
            raise InputError(f"EP failed at lam = {self.lam_:.4g}: the "
                             "approximation collapsed (see the warning); use "
                             "a smaller lam, lam='cv' or method='smc'")
        self.log_evidence_ = float(self.posterior_.log_z if self.method == "ep"
                                   else self.posterior_.elbo)
        if getattr(self.posterior_, "inclusion_probs", None) is not None:
            self.inclusion_probs_ = self.posterior_.inclusion_probs
        if self.method == "ep" and self.prior == "gaussian":
            self.cv_auc_ = approx.loo_auc()
        elif self.method == "vb" and approx.n_pairs is None:
            try:
                self.cv_auc_ = approx.loo_auc()
            except InputError:         # no minimum in the mean: no LOO
                self.cv_auc_ = None
        self._point = self.posterior_.mean
        self._data = approx.data

    def _vb_loo_lambda(self, X, positives, grid):
        """VB's choice of ``lam`` by leave-one-out: one fit per grid value
        on all rows, every :data:`LOO_GRID_STRIDE`-th value from small to
        large ``lam`` then the neighbours of the best, each warm-started at
        the nearest optimum found (tolerance :data:`VB_CV_TOL`), scored by the AUC of
        its one-Newton-step leave-one-out scores
        (:meth:`pac_particles.approx.vb.GaussianVB.loo_auc`) instead of ``n_folds``
        refits per value. Returns the :class:`LamCVResult` and
        ``path_fit(lam)``, the path's fit at a grid value."""
        fits, fitted, failed = {}, {}, []

        def loo_auc(lam):
            # warm start at the nearest value fitted (the grid is scored
            # coarse then fine: LOO_GRID_STRIDE)
            near = min(fitted, key=lambda f: abs(math.log(f / lam)),
                       default=None)
            vb = self._vb_for_cv(X, positives, lam)
            fitted[float(lam)] = vb.fit(init=fitted.get(near))
            try:
                score = vb.loo_auc()
            except InputError:         # Hessian not positive definite
                failed.append(float(lam))
                return None            # loo_lambda leaves this value out
            fits[float(lam)] = fitted[float(lam)]
            return score

        cv = loo_lambda(grid, loo_auc, verbose=self.verbose,
                        stride=LOO_GRID_STRIDE)
        self.lam_grid_failures_ = np.array(sorted(failed), dtype=float)
        return cv, lambda lam: fits[float(lam)]

    def _ep_loo_lambda(self, X, positives, grid):
        """EP's choice of ``lam`` by leave-one-out (each point's sites
        removed, no refit), among the grid values where EP converged: a
        collapsed fit has meaningless LOO scores (all near 0, which can read
        as AUC 1) and must not be chosen. One model fitted along the grid
        from small to large ``lam``, each fit warm-started from the last
        converged one (:func:`pac_particles.approx.ep.base.lam_path_scores`), at
        the looser tolerance :data:`EP_PATH_TOL`; the values where EP did
        not converge go to ``lam_grid_failures_``
        (:func:`~pac_particles.sklearn.classifier.ep_grid_choice`). Returns the
        :class:`LamCVResult`, the model, and ``polish(lam)``: the final fit
        at the model's own tolerance, warm-started from the path's sites at
        ``lam`` (:func:`pac_particles.approx.ep.base.refit_from_path`)."""
        model = self._approximation(X, positives, grid[0])
        final_tol, model.tol = model.tol, EP_PATH_TOL
        best = {}
        scores = lam_path_scores(model, lambda m: m.loo_auc(), best)
        # failures are recorded (lam_grid_failures_), and warned of only
        # where they could have changed the choice (ep_grid_choice)
        cv, self.lam_grid_failures_ = ep_grid_choice(
            grid, scores, verbose=self.verbose, stride=LOO_GRID_STRIDE)
        return cv, model, lambda lam: refit_from_path(model, lam, best,
                                                      final_tol)

    def _evidence_on_all_rows(self, approx):
        """``hyperparameters='evidence'`` with EP: maximise EP's evidence
        over the prior's hyper-parameters (ARD variances, spike-and-slab
        ``p`` and ``v0 / v1``, GP lengthscales) on every row, and fit the
        posterior with them: ``hyperparameters_``.

        The certificate does not restrict this: the kl bound holds for every
        posterior at once, so ``rho`` may use all the data; only the bound's
        prior must not have seen the rows whose risk it uses
        (:meth:`_certificate`: the prior with the hyper-parameters as given,
        on all rows, and one with hyper-parameters tuned on the prior part
        ``A`` alone, on the other rows). A kernel given as a parameter is
        tuned as a copy. Returns the model to fit."""
        if self.kernel is not None:
            # tune a copy: the kernel given as a parameter stays as it was
            approx.kernel = copy.deepcopy(approx.kernel)
        approx.fit_hyperparameters()
        self.hyperparameters_ = _ep_hyperparameters(approx)
        return approx

    def _grid_size(self):
        """The grid size of ``lam='cv'`` (:data:`DEFAULT_GRID_SIZE` when
        ``grid_size`` is None)."""
        if self.grid_size is None:
            return DEFAULT_GRID_SIZE[self.method]
        return int(self.grid_size)

    def _prior_var(self):
        return self.hyperparameters_.get("prior_var", self.prior_var)

    def _raw_scores(self, X):
        if self.kernel is None:
            return X @ self.coef_ + self._offset
        X_kept = X[:, self._columns]
        if self.method == "smc":
            return self.posterior_.score(X_kept, point=self.point)
        return self.approximation_.predict(X_kept)

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

    def predict_proba(self, X):
        """Probabilities of ``classes_[0]`` and ``classes_[1]``: a logistic
        function of the score, ``p = 1 / (1 + exp(-a decision_function(X)))``.

        The slope ``a > 0`` (``proba_slope_``) is fitted by maximum
        likelihood on the training scores (Platt scaling with the intercept
        held so that ``p = 1/2`` at ``predict``'s cut, hence ``predict`` is
        the most probable class). Training scores are optimistic, so the
        probabilities are over-confident when the fit over-fits; for a
        calibration on held-out data wrap the estimator in
        ``sklearn.calibration.CalibratedClassifierCV``.
        """
        f = self.decision_function(X)
        p = expit(self.proba_slope_ * f)
        # rounding must not put a point of predict's positive side at 1/2
        p = np.where((f > 0) & (p <= 0.5), np.nextafter(0.5, 1.0), p)
        return np.column_stack([1.0 - p, p])

    def score(self, X, y, sample_weight=None):
        """AUC of the scores on ``(X, y)`` (not the accuracy); with
        ``pu_prior``, ``y`` are PU labels and the AUC is corrected to the
        positive-vs-negative scale.

        ``y`` must hold both classes, only labels seen by ``fit`` and no
        NaN; otherwise :class:`~pac_particles.core.checks.InputError`.
        """
        check_is_fitted(self)
        positives = self._score_labels(y)
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

    def _score_labels(self, y):
        """``y == classes_[1]`` after checking ``y`` as ``fit`` does."""
        y = np.asarray(y)
        if y.ndim == 2 and y.shape[1] == 1:
            y = y[:, 0]
        if y.ndim != 1:
            raise InputError(f"y must be 1-D, got shape {y.shape}")
        if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
            raise InputError("y contains NaN or infinite values")
        seen = np.unique(y)
        unknown = seen[~np.isin(seen, self.classes_)]
        if unknown.size:
            raise InputError(f"y has labels {unknown.tolist()[:5]} not seen in "
                             f"fit (classes_ = {self.classes_.tolist()})")
        if seen.size < 2:
            raise InputError("y has only one class: the AUC needs positives "
                             "and negatives")
        return y == self.classes_[1]


def _logistic_slope(f, positives):
    """Maximum-likelihood slope ``a > 0`` of ``P(positive) = expit(a f)``."""
    spread = float(np.std(f))
    if not spread > 0:
        return 1.0
    u = f / spread
    t = np.where(positives, 1.0, -1.0)

    def nll(log_a):
        return float(np.sum(np.logaddexp(0.0, -t * np.exp(log_a) * u)))

    # slopes beyond e^10 / sd(f): separable training scores, p ~ 0 or 1
    best = optimize.minimize_scalar(nll, bounds=(-10.0, 10.0),
                                    method="bounded")
    return float(np.exp(best.x) / spread)


def _youden_cut(positives, scores):
    """Score cut maximising ``TPR - FPR`` on the training ROC curve, placed
    halfway between the chosen score and the next lower one."""
    fpr, tpr, thresholds = roc_curve(positives, scores)
    best = thresholds[np.argmax(tpr - fpr)]
    below = scores[scores < best]
    if not np.isfinite(best):
        return float(scores.max()) + 1.0
    return float(0.5 * (best + below.max())) if below.size else float(best) - 1.0


def _series(values, names, label):
    try:
        import pandas as pd
    except ImportError as err:  # optional dependency
        raise ImportError(f"{label} by feature name needs pandas") from err
    return pd.Series(np.asarray(values, dtype=float), index=pd.Index(names,
                     name="feature"), name=label)



def _ep_hyperparameters(approx):
    if isinstance(approx, EPGP):
        return {"kernel": approx.kernel}
    if isinstance(approx, EPSpikeSlab):
        return {"p": float(np.mean(approx.p)), "v0": float(np.mean(approx.v0)),
                "v1": float(np.mean(approx.v1))}
    return {"prior_var": np.array(approx.prior_var, dtype=float)}
