"""Gibbs pseudo-posteriors of the AUC and classification risks as
``particles`` static models.

:class:`AUCGibbsModel` targets, for linear scores ``s_theta(x) = x . theta``,

    pi_lam(theta)  ∝  prior(theta) * exp(-lam * R_n(theta)),

with ``R_n`` the empirical AUC risk (fraction of mis-ordered positive/negative
pairs, ties 1/2; see :mod:`pac_particles.problem.auc`). ``particles`` tempers from
exponent 0 to 1, so the model's log-likelihood is ``-lam * R_n(theta)`` and the
tempering path visits the Gibbs posteriors at ``gamma_t = lam * exponent_t``.
:class:`ClassificationGibbsModel` is the same for the mean 0-1, hinge,
exponential or ramp loss of the margins ``y_i x_i . theta`` [ARC16, Sec. 3-4].
:class:`GPAUCModel` and :class:`GPClassificationModel` put a Gaussian-process
prior on the latent training scores instead (the dual form of [GH01]).

Each constructor ``(X, y, lam, ...)`` sets its problem up once
(:class:`~pac_particles.problem.problem.GibbsProblem`: validation, the
risk, ``lam`` resolved for PU labels), the same set-up as EP's and VB's;
``Model.from_problem(problem, ...)`` takes a problem already set up
(:func:`linear_score_model_for` for :func:`linear_score_model`): the one
constructor path, here with the models. What they share once built lives
in :mod:`pac_particles.smc.gibbs_model`.

Scale of ``lam``: it multiplies the *fraction* of mis-ordered pairs
(``P = n_pos * n_neg`` pairs). The SMC section of Ridgway et al. (2014)
normalises by the ``n (n - 1)`` ordered pairs instead; their ``gamma`` equals
our ``lam * n (n - 1) / (2 n_pos n_neg)``. Their EP section uses
``gamma' = gamma / (n_pos n_neg)`` per pair, which is our convention.

:class:`~pac_particles.smc.tempering.RobustAdaptiveTempering` is ``particles``' adaptive tempering with a bracket for the next exponent that
cannot fail on steep targets.

Example
-------
::

    import particles
    from particles import smc_samplers as ssp
    from pac_particles.problem.datasets import load_dataset
    from pac_particles.smc.models import AUCGibbsModel
    from pac_particles.smc.tempering import RobustAdaptiveTempering

    X, y, _ = load_dataset("pima")
    model = AUCGibbsModel(X, y, lam=len(y))
    fk = RobustAdaptiveTempering(model, wastefree=True, len_chain=10)
    smc = particles.SMC(fk=fk, N=200)     # 200 x 10 particles
    smc.run()
    smc.X.shared["exponents"][-1]          # 1.0

References
----------
Ridgway, J., Alquier, P., Chopin, N. and Liang, F. (2014). PAC-Bayesian AUC
classification and scoring. NIPS 27.

Dau, H.-D. and Chopin, N. (2022). Waste-free Sequential Monte Carlo. JRSS B 84,
114-148.

[ARC16] Alquier, P., Ridgway, J. and Chopin, N. (2016). On the properties of
variational approximations of Gibbs posteriors. JMLR 17(239), 1-41.

[GH01] Graepel, T. and Herbrich, R. (2001). The kernel Gibbs sampler. NIPS 13.

[dPNS14] du Plessis, M. C., Niu, G. and Sugiyama, M. (2014). Analysis of
learning from positive and unlabeled data. NIPS 27.
"""

import numpy as np
from particles import distributions as dists
from particles import smc_samplers as ssp

from pac_particles.core.checks import InputError
from pac_particles.problem.design import DesignData, classification_data
from pac_particles.core.compat import moved_names
from pac_particles.core.kernels import LinearKernel, SquaredExponential, gram_matrix
from pac_particles.problem.priors import (CholeskyNormal, gaussian_prior,
                                          stable_cholesky)
from pac_particles.problem.problem import GibbsProblem, as_problem, check_problem
from pac_particles.smc.gibbs_model import (SpanData, _GPGibbsModel,
                                           _LinearGibbsModel, _check_theta_prior)

__all__ = ["AUCGibbsModel", "GPAUCModel", "ClassificationGibbsModel",
           "GPClassificationModel",
           "SpanAUCModel", "SpanData", "linear_score_model",
           "linear_score_model_for", "SCORE_SPACE",
           "DesignData", "classification_data"]

#: the tempering Feynman-Kac model lives in smc/tempering.py (as the first
#: README read it), the label-noise conversions with the label-noise
#: evidence; read from here they warn
__getattr__ = moved_names(__name__, {
    "RobustAdaptiveTempering": "pac_particles.smc.tempering",
    "check_reached_target": "pac_particles.smc.tempering",
    "lam_from_label_noise": "pac_particles.smc.label_noise",
    "label_noise_from_lam": "pac_particles.smc.label_noise"})


class _ProblemModel:
    """The models' one constructor path: ``__init__`` takes ``(X, y, lam,
    ...)`` or a problem (:func:`~pac_particles.problem.problem.as_problem`),
    ``_build`` keeps its parts (:meth:`_adopt`); :meth:`from_problem`."""

    @classmethod
    def from_problem(cls, problem, **options):
        """The model of a :class:`~pac_particles.problem.problem.GibbsProblem`
        of the model's ``task``; ``options`` are the constructor's arguments
        beyond the problem's (``prior``, ``kernel``, ``prior_var``)."""
        return cls(check_problem(problem, cls.task, cls.__name__), **options)

    def _adopt(self, problem):
        """Keep ``problem`` and its parts; the validated data."""
        self.problem = problem
        self.pu_prior = problem.pu_prior
        self.lam, self.lam_pn = problem.lam, problem.lam_pn
        self.empirical_risk = problem.risk
        self.n_risk_evaluations = 0
        self.loglik_seconds = 0.0
        return problem.data


class _LinearModel(_ProblemModel, _LinearGibbsModel):
    """A linear model on its problem: prior N(0, I) unless given."""

    def _build(self, problem, prior=None, backend="numba"):
        data = self._adopt(problem)
        self._X_ordered = data.in_risk_order(self.empirical_risk)
        if prior is None:
            prior = gaussian_prior(data.d)
        _check_theta_prior(prior, data.d)
        self._use_backend(backend)
        ssp.StaticModel.__init__(self, data=data, prior=prior)


class _GPModel(_ProblemModel, _GPGibbsModel):
    """A GP model on its problem: the prior ``N(0, K)`` of its kernel
    (default squared exponential of lengthscale ``sqrt(d)``)."""

    def _build(self, problem, kernel=None):
        data = self._adopt(problem)
        if kernel is None:
            kernel = SquaredExponential(lengthscale=np.sqrt(data.d))
        if not callable(kernel):
            raise InputError("kernel must be callable: kernel(X1, X2) -> Gram "
                             "matrix (e.g. pac_particles.core.kernels.SquaredExponential)")
        self.kernel = kernel
        self.gram = gram_matrix(kernel, data.X, label="GP kernel")
        self.kernel_chol, self.jitter = stable_cholesky(
            self.gram, label="GP kernel matrix")
        prior = dists.StructDist({"s": CholeskyNormal(self.kernel_chol)})
        ssp.StaticModel.__init__(self, data=data, prior=prior)


class AUCGibbsModel(_LinearModel):
    """AUC Gibbs posterior for linear scores, a ``particles`` static model.

    Parameters
    ----------
    X : array of shape (n, d)
    y : array of shape (n,), binary labels
    lam : float > 0
        Inverse temperature multiplying the AUC risk ``R_n`` (a fraction in
        [0, 1]); ``lam`` of the order of n is a common choice.
    prior : particles.distributions.StructDist, optional
        A distribution with a field ``theta`` of dimension d (after constant
        columns are dropped). Default: iid N(0, 1).
    standardize : bool
        Standardise the columns of X (recommended with an isotropic prior,
        which otherwise weighs features by their units).
    pu_prior : float in [0, 1), optional
        Positive-unlabelled data: ``y = 1`` marks labelled positives, ``y = 0``
        the unlabelled points, of which a fraction ``pu_prior`` is positive.
        The model then uses ``lam / (1 - pu_prior)`` on the observed (PU) risk,
        which targets ``lam`` on the positive-vs-negative risk (see
        :mod:`pac_particles.problem.auc`); ``self.lam`` is that observed-scale value,
        ``self.lam_pn`` the one you gave.
    backend : "numba" (default) or "jax"
        Where the risk of the particles is computed: the numba kernels on
        the host's cores, or JAX on its default device (a GPU with a CUDA
        build of jaxlib; ``pip install pac_particles[jax]``, docs/gpu.md),
        the design held there once
        (:class:`~pac_particles.problem.accelerated_risk.DeviceLinearRisk`).
        The AUC risks are those of the numba kernel to the last bit
        given the same scores.

    ``from_problem(problem, prior=None, backend="numba")``: on a problem.

    Attributes
    ----------
    problem : the :class:`~pac_particles.problem.problem.GibbsProblem`.
    data : pac_particles.problem.data.AUCData
        The validated data (``data.transform`` maps new inputs).
    n_risk_evaluations : int
        Number of score vectors whose risk was computed so far.
    loglik_seconds : float
        Wall time spent inside :meth:`loglik` so far.
    backend : as given; device_risk : its ``DeviceLinearRisk`` (None for
        "numba").
    """

    def __init__(self, X, y=None, lam=None, prior=None, standardize=True,
                 pu_prior=None, backend="numba"):
        self._build(as_problem(X, y, lam, self.task, type(self).__name__,
                               standardize=standardize, pu_prior=pu_prior),
                    prior, backend)


class ClassificationGibbsModel(_LinearModel):
    """Gibbs posterior of a linear binary classifier [ARC16, Def. 3], a
    ``particles`` static model: ``loglik(theta) = -lam * r_n(theta)``,

        r_n(theta) = (1/n) sum_i loss(y_i x_i . theta),    y_i in {-1, +1},

    with the 0-1 loss (a margin of exactly 0 counts 1/2), the hinge, the
    exponential or the symmetric ramp loss
    (:class:`~pac_particles.problem.risks.ClassificationRisk`), evaluated by BLAS
    and a numba kernel in O(n d) per particle.

    Unlike the AUC, the risk depends on an intercept: ``fit_intercept``
    appends a constant column (not standardised), so ``theta[-1]`` is the
    intercept. Columns constant in the data are kept (with an intercept
    they are redundant, never harmful). With ``fit_intercept=False`` and
    ``standardize=False`` the 0-1 risk is invariant to ``theta -> c theta``,
    ``c > 0``, as the AUC risk is.

    The 0-1 Gibbs posterior is the posterior of the label-noise model of
    [GH01, Sec. 2]: labels flipped with probability ``q`` give the
    likelihood ``q^k (1 - q)^(n - k)`` (``k`` misclassified points), which
    is ``exp(-lam r_n)`` up to a constant for ``lam = n log((1 - q) / q)``
    (:func:`~pac_particles.smc.label_noise.lam_from_label_noise`,
    :func:`~pac_particles.smc.label_noise.label_noise_from_lam`).

    Parameters
    ----------
    X : (n, d) array; y : (n,) binary labels (any two values, the larger
        one positive; ``y = +1`` margins are ``x . theta``).
    lam : float > 0, multiplies the mean loss.
    loss : "zero_one" (default), "hinge", "exponential" or "ramp".
    prior : StructDist with a field ``theta`` of dimension ``d + 1`` with an
        intercept, ``d`` without. Default: iid N(0, 1).
    fit_intercept, standardize : bool.
    pu_prior : float in [0, 1), optional
        Positive-unlabelled labels: ``y`` positive marks labelled positives,
        the other class unlabelled points of which a fraction ``pu_prior``
        is positive; the risk is the cost-sensitive PU risk of [dPNS14]
        (see :class:`~pac_particles.problem.risks.ClassificationRisk`), unbiased for
        the 0-1 and ramp losses, and ``lam`` multiplies it as given.
    backend : "numba" (default) or "jax", as :class:`AUCGibbsModel`; on
        the device the point risks are the numba kernel's sums in another
        order (equal to a few ulps).

    ``from_problem(problem, prior=None, backend="numba")``: on a problem
    (its loss and intercept).

    Attributes
    ----------
    problem : the :class:`~pac_particles.problem.problem.GibbsProblem`.
    data : :class:`DesignData` (``data.transform`` appends the intercept).
    empirical_risk : :class:`~pac_particles.problem.risks.ClassificationRisk`.
    loss, fit_intercept : as given.

    Example
    -------
    ::

        from sklearn.datasets import load_breast_cancer
        from pac_particles.smc.models import ClassificationGibbsModel
        from pac_particles.smc.posterior import run_smc
        X, y = load_breast_cancer(return_X_y=True)
        model = ClassificationGibbsModel(X, y, lam=len(y), loss="hinge")
        post = run_smc(model, n_particles=200, seed=0)
        post.mean[-1]                         # posterior mean intercept
    """

    # the PU risk is reweighted in the risk itself, lam is used as given
    # (GibbsProblem.classification)
    task = "classification"

    def __init__(self, X, y=None, lam=None, loss="zero_one", prior=None,
                 fit_intercept=True, standardize=True, pu_prior=None,
                 backend="numba"):
        self._build(as_problem(
            X, y, lam, self.task, type(self).__name__, loss=loss,
            standardize=standardize, fit_intercept=fit_intercept,
            pu_prior=pu_prior), prior, backend)

    def _build(self, problem, prior=None, backend="numba"):
        self.loss = problem.loss
        self.fit_intercept = bool(problem.fit_intercept)
        super()._build(problem, prior, backend)


class GPAUCModel(_GPModel):
    """AUC Gibbs posterior with a Gaussian-process prior on the scores.

    The parameter is the vector ``s`` of latent scores of the n training
    points, with prior ``N(0, K)``, ``K = kernel(X, X)``, and
    ``loglik(s) = -lam * R_n(s)``, computed by the risk kernel directly on
    ``s`` (no matrix product). Scores of new inputs are the GP conditional
    mean ``k_*' K^-1 s`` (Ridgway et al. 2014, section 4).

    The Gram matrix is symmetrised and factorised once, with jitter added
    geometrically until the Cholesky factorisation succeeds (duplicated rows
    make K singular); the factor ``kernel_chol`` drives the default move,
    :class:`~pac_particles.smc.moves.EllipticalSlice` (one batched triangular
    product per step for all particles). The random walk calibrated on the
    particle covariance is refused: in dimension n it needs more particles
    than n to estimate a covariance at all (the failure of the SMC-AUC
    student report), and it ignores the prior correlations that the
    elliptical move follows exactly. Under ``particles.SMC`` directly, use
    :class:`RobustAdaptiveTempering`, which picks that move; ``particles``'
    own ``AdaptiveTempering`` defaults to the random walk and then needs
    ``move=ssp.MCMCSequenceWF(mcmc=EllipticalSlice(model.kernel_chol))``
    (its calibration fails with fewer distinct particles than points), or
    a parameter of fewer dimensions than particles. Hence ``rank='auto'``:
    exact latent scores up to
    :data:`~pac_particles.smc.reduced_rank_gp.EXACT_MODEL_MAX_ROWS` rows;
    above (or for an int ``rank < n``) the constructor returns a
    :class:`~pac_particles.smc.reduced_rank_gp.ReducedRankGPAUCModel` of
    the same kernel on ``r`` Nystrom features, on which ``particles``' own
    random walk runs (``AdaptiveTempering(GPAUCModel(X, y, lam))``, N = 20,
    n = 300: r = 35). ``rank=None``: exact at every size.

    Parameters
    ----------
    X : array of shape (n, d); y : binary labels
    lam : float > 0
    kernel : callable ``kernel(X1, X2) -> Gram``, e.g.
        :class:`~pac_particles.core.kernels.SquaredExponential` (default, lengthscale
        ``sqrt(d)`` on standardised inputs) or
        :class:`~pac_particles.core.kernels.LinearKernel`.
    standardize : bool
    pu_prior : float in [0, 1), optional (see :class:`AUCGibbsModel`)
    rank : 'auto' (default), None (exact) or int (see above).
    seed : int, optional, the draw of the inducing rows of a reduced rank.

    ``from_problem(problem, kernel=None, rank=None)``: on a problem (an
    estimator's, whose rank it chose: exact unless ``rank`` is given).

    Attributes
    ----------
    problem, data, kernel, gram (K), kernel_chol (C, K + jitter = C C'),
    jitter.
    """

    def __new__(cls, X=None, y=None, lam=None, kernel=None, standardize=True,
                pu_prior=None, rank="auto", seed=None):
        # imported here: the reduced-rank model is built on this module's
        from pac_particles.smc.reduced_rank_gp import (ReducedRankGPAUCModel,
                                                       model_rank)
        r = model_rank(rank, X)
        if cls is GPAUCModel and r is not None:
            return ReducedRankGPAUCModel(X, y, lam, kernel=kernel, rank=r,
                                         seed=seed, standardize=standardize,
                                         pu_prior=pu_prior)
        return super().__new__(cls)

    def __init__(self, X, y=None, lam=None, kernel=None, standardize=True,
                 pu_prior=None, rank="auto", seed=None):
        self._build(as_problem(X, y, lam, self.task, type(self).__name__,
                               standardize=standardize, pu_prior=pu_prior),
                    kernel)

    @classmethod
    def from_problem(cls, problem, **options):
        """The model of a ranking problem set up already: the exact latent
        scores unless ``rank`` is given (class docstring)."""
        options.setdefault("rank", None)
        return super().from_problem(problem, **options)


class GPClassificationModel(_GPModel):
    """Gibbs posterior of a kernel classifier: a Gaussian-process prior
    ``N(0, K)`` on the latent training scores ``s`` and
    ``loglik(s) = -lam * r_n(s)``, ``r_n`` the mean loss of the margins
    ``y_i s_i`` (:class:`~pac_particles.problem.risks.ClassificationRisk`).

    This is the dual (kernel) form of [GH01, Sec. 2-3]: a linear classifier
    ``w`` in the feature space of ``k`` only enters the likelihood through
    ``s = (<w, x_i>)``, and with a Gaussian prior on ``w`` these scores are
    ``N(0, K)``; ``w = sum_i alpha_i x_i`` with ``alpha = K^-1 s`` [GH01,
    Eq. (1)]. With the 0-1 loss and ``lam = n log((1 - q) / q)``
    (:func:`~pac_particles.smc.label_noise.lam_from_label_noise`) it is the
    label-noise posterior of [GH01]. Moves: the default
    :class:`~pac_particles.smc.moves.EllipticalSlice` on the kernel's Cholesky
    factor, or :class:`~pac_particles.smc.moves.ExactEllipseGibbs` (0-1 loss:
    exact angle draw from the 2n angles where a latent score crosses 0);
    the covariance-calibrated moves are refused
    (:func:`~pac_particles.smc.moves.check_move_fits`). There is no intercept:
    add a constant to the kernel for a bias.

    Parameters
    ----------
    X : (n, d) array; y : binary labels (the larger value positive).
    lam : float > 0, multiplies the mean loss.
    kernel : callable ``kernel(X1, X2) -> Gram`` (default squared
        exponential, lengthscale ``sqrt(d)`` on standardised inputs).
    loss : "zero_one" (default), "hinge", "exponential" or "ramp".
    standardize : bool.
    pu_prior : float in [0, 1), optional (see :class:`ClassificationGibbsModel`).

    The data are those of every classification method
    (:meth:`~pac_particles.problem.problem.GibbsProblem.classification`
    without an intercept column: no column dropped).
    ``from_problem(problem, kernel=None)``: on such a problem.

    Attributes
    ----------
    problem, data, kernel, gram (K), kernel_chol (C, K + jitter = C C'),
    jitter, empirical_risk, loss.

    Example
    -------
    ::

        from pac_particles.core.kernels import SquaredExponential
        from pac_particles.smc.models import GPClassificationModel
        from pac_particles.smc.moves import ExactEllipseGibbs
        from pac_particles.smc.posterior import run_smc
        model = GPClassificationModel(X, y, lam=lam_from_label_noise(0.1, len(y)),
                                      kernel=SquaredExponential(1.0))
        post = run_smc(model, move=ExactEllipseGibbs(model), seed=0)
    """

    # the PU risk is reweighted in the risk itself, lam is used as given
    # (GibbsProblem.classification)
    task = "classification"

    def __init__(self, X, y=None, lam=None, kernel=None, loss="zero_one",
                 standardize=True, pu_prior=None):
        self._build(as_problem(
            X, y, lam, self.task, type(self).__name__, loss=loss,
            standardize=standardize, fit_intercept=False,
            pu_prior=pu_prior), kernel)

    def _build(self, problem, kernel=None):
        if problem.fit_intercept:
            raise InputError("a GP classifier has no intercept column: set "
                             "its problem up with fit_intercept=False (add a "
                             "constant to the kernel for a bias)")
        self.loss = problem.loss
        super()._build(problem, kernel)


#: singular values of ``X S0^1/2`` at most this times the largest, times
#: ``max(n, d)``, are zero (numpy's ``matrix_rank`` rule): the span of a
#: centred design has rank ``min(n - 1, d)`` at most, and treating its null
#: directions as tiny but positive variances is what made the score-space
#: prior depend on the rounding of a singular Cholesky factor
SPAN_RANK_RTOL = np.finfo(float).eps


class SpanAUCModel(AUCGibbsModel):
    """The AUC Gibbs posterior of linear scores under ``theta ~ N(0, S0)``,
    sampled in the span of the design (the cheap exact form when d > n).

    The likelihood sees ``theta`` only through ``s = X theta``. With the
    thin SVD ``X S0^1/2 = U Sigma V'`` of rank ``r`` (:data:`SPAN_RANK_RTOL`)
    and ``w = V_r' S0^-1/2 theta ~ N(0, I_r)``, the scores are
    ``s = B w``, ``B = U_r Sigma_r``: an :class:`AUCGibbsModel` on the
    ``r <= min(n - 1, d)`` columns of ``B`` with the isotropic prior, of
    the same ``log Z`` as the model on ``theta``. No matrix is inverted, so
    no jitter enters: the prior of ``s``, ``N(0, X S0 X')``, is singular
    (centred columns put the constant vector in its null space), and the
    earlier form with ``s`` as the parameter factorised it by luck of
    rounding. The posterior of ``theta`` given ``w`` is exactly

        theta = S0^1/2 (V_r w + (I - V_r V_r') xi),    xi ~ N(0, I_d),

    (:meth:`sample_linear_coefficients`), with mean
    :meth:`linear_coefficients` ``= S0^1/2 V_r w``; scores of new inputs are
    ``data.transform(x) . w`` (:class:`SpanData`). Every move, EP proposal
    and certificate of the linear model applies unchanged in ``w``.

    Parameters
    ----------
    X, y, lam, standardize, pu_prior : as :class:`AUCGibbsModel`.
    prior_var : float or (d,) array > 0, the prior variances ``S0``.
    backend : "numba" or "jax", as :class:`AUCGibbsModel`.

    ``from_problem(problem, prior_var=1.0, backend="numba")``: on a problem.

    Attributes
    ----------
    problem : the :class:`~pac_particles.problem.problem.GibbsProblem`
        (``problem.data`` is the design).
    data : :class:`SpanData` (``data.X = B``; ``data.design`` is the
        validated design on which ``theta`` lives).
    design_data : ``data.design``.
    basis : (d, r) ``S0^1/2 V_r``; ``rank`` : r.
    """

    #: the parameter is ``w``, the coordinates in the design's span
    space = "score"

    def __init__(self, X, y=None, lam=None, prior_var=1.0, standardize=True,
                 pu_prior=None, backend="numba"):
        self._build(as_problem(X, y, lam, self.task, type(self).__name__,
                               standardize=standardize, pu_prior=pu_prior),
                    prior_var, backend)

    def _build(self, problem, prior_var=1.0, backend="numba"):
        design = self._adopt(problem)
        sd = np.sqrt(LinearKernel(prior_var).prior_var
                     * np.ones(design.d))
        U, sigma, Vt = np.linalg.svd(design.X * sd, full_matrices=False)
        tol = SPAN_RANK_RTOL * max(design.X.shape) * (sigma[0] if sigma.size
                                                       else 0.0)
        r = int(np.sum(sigma > tol))
        if r == 0:
            raise InputError("the design has rank 0 after preprocessing: no "
                             "column separates the rows")
        self.prior_sd = sd
        self.basis = sd[:, None] * Vt[:r].T
        self._directions = Vt[:r].T
        data = SpanData(design, U[:, :r] * sigma[:r], self.basis)
        self._X_ordered = data.in_risk_order(self.empirical_risk)
        self._use_backend(backend)
        ssp.StaticModel.__init__(self, data=data, prior=gaussian_prior(r))

    @property
    def rank(self):
        return self.basis.shape[1]

    @property
    def design_data(self):
        return self.data.design

    def linear_coefficients(self, w):
        """``E[theta | w] = S0^1/2 V_r w``: the coefficients on the
        validated design whose scores are those of ``w`` on the training
        rows and, on new inputs, the posterior mean given ``w``. ``w`` is
        one point (r,) or particles (N, r)."""
        return np.asarray(w, dtype=float) @ self.basis.T

    def sample_linear_coefficients(self, w, rng):
        """Exact draws of ``theta | w``, one per row of ``w`` (N, r):
        the mean plus prior noise in the directions the data cannot see.
        ``rng``: a numpy Generator."""
        w = np.atleast_2d(np.asarray(w, dtype=float))
        xi = rng.standard_normal((w.shape[0], self.basis.shape[0]))
        V = self._directions
        return self.linear_coefficients(w) + self.prior_sd * (xi - (xi @ V) @ V.T)


#: when :func:`linear_score_model` samples in score space
SCORE_SPACE = ("auto", True, False)


def linear_score_model(X, y, lam, prior_var=1.0, standardize=True,
                       pu_prior=None, score_space="auto", backend="numba"):
    """The Gibbs posterior of linear scores under the prior
    ``theta ~ N(0, prior_var I)``, in the cheaper of two exact
    parametrisations.

    With ``score_space`` True (or "auto" and more columns than rows,
    ``d > n``) a :class:`SpanAUCModel`, whose parameter lives in the span
    of the design (dimension at most ``n - 1``), as EP does in score space
    [RACL14, Sec. 4]; otherwise an :class:`AUCGibbsModel` on ``theta``.
    Both have the same ``log Z`` and the same scores on new inputs, and
    both offer ``linear_coefficients`` (the identity on ``theta``) and
    ``design_data``. ``backend`` ("numba" or "jax") is where the risk
    runs, as in :class:`AUCGibbsModel`. :func:`linear_score_model_for`
    does the same for a problem already set up.
    """
    _check_score_space(score_space)
    return linear_score_model_for(
        GibbsProblem.ranking(X, y, lam, standardize, pu_prior),
        prior_var=prior_var, score_space=score_space, backend=backend)


def linear_score_model_for(problem, prior_var=1.0, score_space="auto",
                           backend="numba"):
    """:func:`linear_score_model` of a ranking
    :class:`~pac_particles.problem.problem.GibbsProblem`: a
    :class:`SpanAUCModel` when ``score_space`` is True or "auto" and the
    validated design has more columns than rows, else an
    :class:`AUCGibbsModel` under ``N(0, prior_var I)``; either with its
    risk on ``backend``."""
    _check_score_space(score_space)
    data = problem.data
    if score_space is True or (score_space == "auto" and data.d > data.n):
        return SpanAUCModel.from_problem(problem, prior_var=prior_var,
                                         backend=backend)
    # the default prior is N(0, I): built only for other variances
    prior = (None if np.all(np.asarray(prior_var) == 1.0)
             else gaussian_prior(data.d, prior_var))
    return AUCGibbsModel.from_problem(problem, prior=prior, backend=backend)


def _check_score_space(score_space):
    """``score_space`` if it is one of :data:`SCORE_SPACE`, else InputError."""
    if score_space not in SCORE_SPACE:
        raise InputError(f"score_space must be one of {SCORE_SPACE}, got "
                         f"{score_space!r}")
    return score_space

