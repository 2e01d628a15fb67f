"""The PU class prior ``pi`` estimated from the data, with a bootstrap interval.

PU labels follow the package's convention: ``y = 1`` marks the labelled
positives, drawn from the positive class density ``p_P``; ``y = 0`` marks the
unlabelled points, drawn from the mixture ``p_U = pi p_P + (1 - pi) p_N``;
``pi`` is the fraction of positives among the unlabelled, the ``pu_prior``
that :func:`pac_particles.problem.auc.pu_corrected_risk` and
:class:`pac_particles.problem.risks.ClassificationRisk` need. Two estimators:

* :func:`penalised_l1_prior` (the default) partially matches ``theta p_P``
  to ``p_U`` under the penalised L1 distance with a Gaussian-kernel model and
  its closed-form solution [DNS17];
* :func:`elkan_noto_prior` is the classifier baseline [EN08]: a
  probabilistic classifier of labelled against unlabelled, ``c`` = mean of its
  held-out probability on the labelled positives, then
  ``pi = (n_L / n_U) (1 - c) / c``.

Both return a :class:`PriorEstimate`; with ``n_bootstrap > 0`` it carries a
seeded percentile-bootstrap interval ``(pi_low, pi_high)`` (labelled and
unlabelled points resampled separately, the whole estimator re-run on each
replicate), which :meth:`PriorEstimate.corrected_auc_range` passes to
:func:`pac_particles.problem.auc.pu_corrected_auc_range`: the positive-vs-negative
AUC over the prior's interval.

The bootstrap carries the sampling variability of the estimate, not its
bias. Elkan-Noto overestimates ``pi`` where the classes overlap
(``E_P[g] < c`` wherever ``P(y = 1 | x) < 1``), so its interval covers the
true ``pi`` less often than its level says; the penalised L1 estimate was
nearly unbiased on the PU study's data and its interval conservative
(``scripts/pu_class_prior.py``; the figures in the user guide's table of
the PU class prior).

Example
-------
::

    import numpy as np
    from pac_particles.sklearn.pu_class_prior import estimate_pu_prior
    rng = np.random.default_rng(0)
    X_pos = rng.normal(size=(300, 2)) + [2.0, 0.0]          # labelled positives
    y_unl = rng.random(600) < 0.3                            # true pi = 0.3
    X_unl = rng.normal(size=(600, 2)) + np.where(y_unl[:, None], 2.0, -2.0) * [1.0, 0.0]
    X = np.vstack([X_pos, X_unl]); y = np.r_[np.ones(300), np.zeros(600)]
    est = estimate_pu_prior(X, y, n_bootstrap=100, seed=0)
    est.pi, est.interval                                     # 0.33, (0.26, 0.39)
    est.corrected_auc_range(0.80)                            # (0.91, 0.99): AUC_PN over the interval
    estimate_pu_prior(X, y, method="elkan_noto", seed=0).pi  # the baseline: 0.34

References
----------
[DNS17] du Plessis, M. C., Niu, G. and Sugiyama, M. (2017). Class-prior
estimation for learning from positive and unlabeled data. Machine Learning
106(4), 463-492 (ACML 2015; arXiv:1611.01586). Its predecessor, du Plessis,
M. C. and Sugiyama, M. (2014), Class prior estimation from positive and
unlabeled data, IEICE Trans. Inf. Syst. E97-D(5), 1358-1362, matches the
same partial mixture under the Pearson divergence instead; the penalised
L1 distance and its analytic solution are [DNS17]'s.

[EN08] Elkan, C. and Noto, K. (2008). Learning classifiers from only positive
and unlabeled data. KDD 2008, 213-220 (Lemma 1 and the estimator ``e1``).
"""

from dataclasses import dataclass, field

import numpy as np
from scipy import sparse
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import SplineTransformer, StandardScaler

from pac_particles.core import parallel
from pac_particles.problem.auc import pu_corrected_auc_range
from pac_particles.core.checks import (InputError, check_choice, check_count,
                     check_finite_array, check_positive, check_probability,
                     check_pu_prior)
from pac_particles.problem.data import validate_xy

__all__ = ["PriorEstimate", "estimate_pu_prior", "penalised_l1_prior",
           "elkan_noto_prior", "penalised_l1_distance", "METHODS",
           "MIN_LABELLED", "MIN_UNLABELLED", "PI_MAX", "DEFAULT_PRIOR_GRID", "held_out_gain"]

METHODS = ("penalised_l1", "elkan_noto")

#: fewest labelled positives (and unlabelled points) an estimate accepts:
#: five cross-validation folds of a bootstrap replicate need five distinct
#: points of each sample (fewer than 5 distinct among 20 draws: p < 1e-10)
MIN_LABELLED = 20
MIN_UNLABELLED = 20

#: largest prior reported: the PU corrections divide by ``1 - pi``
PI_MAX = 0.99

#: candidate priors of the penalised L1 estimate (its resolution is 0.01)
DEFAULT_PRIOR_GRID = np.round(np.arange(1, 100) / 100.0, 2)


@dataclass
class PriorEstimate:
    """An estimate of the PU class prior ``pi``.

    Attributes
    ----------
    method : "penalised_l1" or "elkan_noto".
    pi : float, the point estimate, in ``[0, PI_MAX]``.
    interval : (pi_low, pi_high) or None, the percentile-bootstrap interval
        at ``level`` (None without bootstrap).
    level : float, the interval's nominal level.
    bootstrap : (n_bootstrap,) array of the replicates' estimates (empty
        without bootstrap).
    details : dict, what the method computed on the whole sample:
        penalised L1: ``priors`` (the grid), ``penalised_l1`` (the distance
        at each), ``sigma`` and ``lam`` chosen at the estimate; Elkan-Noto:
        ``c`` and ``ratio`` ``n_L / n_U``.
    """

    method: str
    pi: float
    interval: tuple = None
    level: float = 0.95
    bootstrap: np.ndarray = field(default_factory=lambda: np.empty(0))
    details: dict = field(default_factory=dict)

    def corrected_auc_range(self, auc_pu):
        """``(low, high)`` of the positive-vs-negative AUC when ``pi`` lies in
        :attr:`interval` (:func:`pac_particles.problem.auc.pu_corrected_auc_range`;
        ``auc_pu`` measured on held-out PU labels)."""
        if self.interval is None:
            raise InputError("this PriorEstimate has no interval: estimate "
                             "with n_bootstrap > 0")
        return pu_corrected_auc_range(auc_pu, self.interval)


# ------------------------------------------------------------ the data


def _pu_samples(X, y, n_folds):
    """``(X_labelled, X_unlabelled)`` from PU labels (``y = 1`` labelled),
    or InputError: one class, fewer than ``MIN_LABELLED`` labelled
    positives or ``MIN_UNLABELLED`` unlabelled points."""
    if np.unique(np.asarray(y)).size == 1:
        raise InputError("y has only one class: PU prior estimation needs "
                         "labelled positives (y = 1) and unlabelled points "
                         "(y = 0)")
    data = validate_xy(X, y, drop_constant=False)
    n_labelled, n_unlabelled = int(data.y.sum()), int((~data.y).sum())
    if n_labelled < max(MIN_LABELLED, n_folds):
        raise InputError(f"too few labelled positives (y = 1): "
                         f"{n_labelled}, at least "
                         f"{max(MIN_LABELLED, n_folds)} needed")
    if n_unlabelled < max(MIN_UNLABELLED, n_folds):
        raise InputError(f"too few unlabelled points (y = 0): "
                         f"{n_unlabelled}, at least "
                         f"{max(MIN_UNLABELLED, n_folds)} needed")
    return data.X_pos, data.X_neg


def _check_common(n_folds, n_bootstrap, level):
    n_folds = check_count(n_folds, "n_folds", minimum=2)
    n_bootstrap = check_count(n_bootstrap, "n_bootstrap", minimum=0)
    level = check_probability(level, "level")
    return n_folds, n_bootstrap, level


def _replicates(n_pos, n_unl, n_folds, n_bootstrap, seed):
    """Multiplicities and folds of the labelled and the unlabelled points in
    the sample (row 0) and in ``n_bootstrap`` resamples (rows 1, ...), and
    the generator of the sample's other draws. The sample and the resamples
    draw from separate streams of ``seed``, so the point estimate does not
    depend on ``n_bootstrap``.

    Folds: the distinct points a row drew are split into ``n_folds``
    near-equal random folds (-1: not drawn), so that copies of one point
    never sit on both sides of a split."""
    sample_rng, boot_rng = (np.random.default_rng(s) for s in
                            np.random.SeedSequence(seed).spawn(2))
    out = []
    for n in (n_pos, n_unl):
        counts = np.ones((1 + n_bootstrap, n), dtype=np.int64)
        for r in range(1, 1 + n_bootstrap):
            counts[r] = np.bincount(boot_rng.integers(n, size=n), minlength=n)
        folds = np.full(counts.shape, -1, dtype=np.int64)
        for r, row in enumerate(counts):
            drawn = np.flatnonzero(row)
            rng = sample_rng if r == 0 else boot_rng
            folds[r, drawn] = rng.permutation(np.arange(drawn.size) * n_folds
                                              // drawn.size)
        out += [counts, folds]
    return (*out, sample_rng)


def _interval(bootstrap, level):
    tail = 100.0 * (1.0 - level) / 2.0
    low, high = np.percentile(bootstrap, [tail, 100.0 - tail])
    return float(low), float(high)


def _estimate(method, estimates, n_bootstrap, level, details):
    """PriorEstimate from row 0 (the sample) and the bootstrap rows."""
    boot = np.asarray(estimates[1:], dtype=float)
    return PriorEstimate(
        method=method, pi=float(estimates[0]),
        interval=_interval(boot, level) if n_bootstrap else None,
        level=level, bootstrap=boot, details=details)


# ------------------------------------------------- penalised L1 distance


def penalised_l1_distance(theta, mean_kernel_pos, mean_kernel_unl, lam):
    """The closed form of the regularised penalised L1 distance [DNS17].

    ``beta_l = theta h_P,l - h_U,l`` with ``h_P``, ``h_U`` the means of the
    basis functions ``phi_l`` over the labelled and the unlabelled points;
    the maximiser of ``alpha' beta - (lam / 2) |alpha|^2`` over
    ``alpha >= 0`` is ``alpha = max(0, beta) / lam``, and the distance is the
    dual objective at it, ``alpha' beta - theta + 1``.

    Parameters
    ----------
    theta : float or (T,) array of candidate priors.
    mean_kernel_pos, mean_kernel_unl : (b,) arrays ``h_P``, ``h_U`` (or
        (T, b), one row per candidate).
    lam : float > 0, or (T,) array (one per candidate).

    Returns
    -------
    (distance, alpha) : (T,) and (T, b) arrays (a float and a (b,) array for
    a scalar ``theta``).
    """
    theta_arr = np.asarray(theta, dtype=float)
    beta = (theta_arr.reshape(-1, 1) * np.atleast_2d(mean_kernel_pos)
            - np.atleast_2d(mean_kernel_unl))
    alpha = np.maximum(beta, 0.0) / np.asarray(lam, dtype=float).reshape(-1, 1)
    distance = np.sum(alpha * beta, axis=1) - theta_arr.reshape(-1) + 1.0
    if theta_arr.ndim == 0:
        return float(distance[0]), alpha[0]
    return distance, alpha


def _squared_distances(X, centres):
    sq = ((X ** 2).sum(1)[:, None] + (centres ** 2).sum(1)[None]
          - 2.0 * X @ centres.T)
    return np.maximum(sq, 0.0)


def _weights(counts, folds, n_folds):
    """Sparse ``((R n_folds), n)`` matrix: row ``r n_folds + k`` holds the
    multiplicities of replicate ``r``'s points in fold ``k``."""
    R, n = counts.shape
    r, i = np.nonzero(counts)
    rows = r * n_folds + folds[r, i]
    return sparse.csr_matrix((counts[r, i].astype(float), (rows, i)),
                             shape=(R * n_folds, n))


def _fold_sums(d2, weights, sigmas):
    """``(S, R n_folds, b)`` sums of the Gaussian basis functions over each
    replicate's folds, one bandwidth after the other (one kernel matrix in
    memory)."""
    out = np.empty((len(sigmas), weights.shape[0], d2.shape[1]))
    for s, sigma in enumerate(sigmas):
        out[s] = weights @ np.exp(-d2 / (2.0 * sigma ** 2))
    return out


def _fold_means(sums, n_in_fold):
    """Held-out means (each fold), training means (the other folds) and the
    whole replicate's mean, from the fold sums ``(S, F, b)``."""
    total = sums.sum(axis=1)
    n_total = n_in_fold.sum()
    with np.errstate(invalid="ignore", divide="ignore"):
        test = np.nan_to_num(sums / n_in_fold[None, :, None])
        train = (total[:, None] - sums) / (n_total - n_in_fold)[None, :, None]
    return test, train, total / n_total


def held_out_gain(train_p, train_u, test_p, test_u, priors):
    """``(S, T)`` held-out dual objective ``alpha_train' beta_test`` (with
    ``lam = 1``), averaged over the folds, for every bandwidth and candidate
    prior: ``sum_l max(0, theta a_l - c_l) (theta e_l - f_l)`` from the
    ``(S, F, b)`` training (``a``, ``c``) and held-out (``e``, ``f``) means.

    Basis function ``l`` is active above ``theta = c_l / a_l``, where it adds
    the quadratic ``a e theta^2 - (a f + c e) theta + c f``: sorting the
    thresholds and summing the coefficients cumulatively evaluates the whole
    grid in O(S F b log b + S F T) instead of O(S F b T)."""
    S, F, b = train_p.shape
    a, c = train_p.reshape(S * F, b), train_u.reshape(S * F, b)
    e, f = test_p.reshape(S * F, b), test_u.reshape(S * F, b)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        # never active without positive mass; thresholds >= 1 all alike
        threshold = np.minimum(np.where(a > 0, c / a, 2.0), 2.0)
    order = np.argsort(threshold, axis=1)
    threshold = np.take_along_axis(threshold, order, axis=1)
    coeffs = [np.take_along_axis(q, order, axis=1)
              for q in (a * e, -(a * f + c * e), c * f)]
    cumulative = [np.concatenate([np.zeros((S * F, 1)), np.cumsum(q, axis=1)],
                                 axis=1) for q in coeffs]
    # one searchsorted for every row: rows shifted apart by 3 > max threshold
    shift = 3.0 * np.arange(S * F)[:, None]
    n_active = (np.searchsorted((threshold + shift).ravel(),
                                (priors[None, :] + shift).ravel(), side="left")
                .reshape(S * F, -1) - b * np.arange(S * F)[:, None])
    q2, q1, q0 = (np.take_along_axis(q, n_active, axis=1) for q in cumulative)
    gain = q2 * priors ** 2 + q1 * priors + q0
    return gain.reshape(S, F, -1).mean(axis=1)


def _penalised_l1_replicate(sums_p, n_p, sums_u, n_u, priors, sigmas, lams):
    """One replicate: for each candidate prior the (sigma, lam) of the best
    held-out dual objective, the distance on the whole replicate with them,
    and the prior of the smallest distance."""
    test_p, train_p, all_p = _fold_means(sums_p, n_p)
    test_u, train_u, all_u = _fold_means(sums_u, n_u)
    gain = held_out_gain(train_p, train_u, test_p, test_u, priors)  # (S, T)
    score = -gain[None] / lams[:, None, None]                  # (L, S, T)
    # first minimiser with sigma varying fastest (the reference's tie order)
    best = np.argmin(score.reshape(len(lams) * len(sigmas), -1), axis=0)
    lam_index, sigma_index = np.divmod(best, len(sigmas))
    distance, _ = penalised_l1_distance(priors, all_p[sigma_index],
                                        all_u[sigma_index], lams[lam_index])
    t = int(np.argmin(distance))
    return t, distance, sigmas[sigma_index[t]], lams[lam_index[t]]


def penalised_l1_prior(X, y, priors=None, n_basis=300, sigmas=None,
                       lams=None, n_folds=5, n_bootstrap=0, level=0.95,
                       seed=0):
    """Class prior by penalised L1-distance minimisation [DNS17].

    The unlabelled density is ``p_U = pi p_P + (1 - pi) p_N``, so
    ``theta p_P <= p_U`` everywhere exactly when ``theta <= pi`` (if some
    region holds positives and no negatives). The L1 distance
    ``int |theta p_P - p_U| = 1 - theta + 2 int (theta p_P - p_U)_+`` is
    penalised on the region ``theta p_P > p_U``, impossible below the
    true prior: with ``l_c(z) = -z`` for ``z < 0`` and ``c z`` for
    ``z >= 0``, ``c > 1``,

        penL1(theta) = int l_c(theta p_P(x) - p_U(x)) dx
                     = sup_{-1 <= r <= c} theta E_P[r] - E_U[r],

    equal to ``1 - theta`` up to ``pi`` and growing above it. The witness is
    modelled as ``r(x) = sum_l alpha_l phi_l(x) - 1``, ``alpha >= 0`` (so
    ``r >= -1``), ``phi_l(x) = exp(-|x - x_l|^2 / (2 sigma^2))`` centred on
    ``n_basis`` unlabelled points; dropping ``r <= c`` and adding
    ``(lam / 2) |alpha|^2``, the sample objective
    ``alpha' beta - theta + 1 - (lam / 2) |alpha|^2``,
    ``beta_l = theta mean_P phi_l - mean_U phi_l``, is maximised in closed
    form by ``alpha = max(0, beta) / lam``, and

        penL1_hat(theta) = |max(0, beta)|^2 / lam - theta + 1

    (:func:`penalised_l1_distance`). ``pi_hat`` is its minimiser over the
    grid ``priors``; for each candidate, ``(sigma, lam)`` maximises the
    held-out dual objective ``alpha_train' beta_test`` over ``n_folds``
    folds.

    The closed form, the cross-validation score and the defaults (300
    centres; ``sigma`` = median distance x ``logspace(-2, 1, 10)``, ``lam``
    in ``logspace(-3, 1, 10)``) are those of the authors' group's reference
    implementation (``PenL1CP.m``, T. Sakai); the loss ``l_c`` is our
    reconstruction of the penalty that this dual corresponds to, written
    from the method's description rather than copied from the paper. The
    grid of priors is finer here (0.01 against 0.05).

    Parameters
    ----------
    X : (n, d) array; y : (n,) PU labels, 1 for the labelled positives and 0
        for the unlabelled points (any two values: the larger is labelled).
    priors : increasing candidate priors in [0, 1) (default 0.01, ..., 0.99).
    n_basis : number of Gaussian centres drawn among the unlabelled points.
    sigmas, lams : candidate bandwidths and regularisations (defaults above).
    n_folds : cross-validation folds of the choice of (sigma, lam).
    n_bootstrap : bootstrap replicates of the interval (0: no interval). The
        bandwidths and grid stay those of the sample, and a replicate keeps
        the sample's centres that it drew among its unlabelled points; the
        folds and the choice of (sigma, lam) are redone on each replicate.
    level : level of the percentile interval.
    seed : seed of the centres, the folds and the resamples.

    Returns
    -------
    PriorEstimate
    """
    n_folds, n_bootstrap, level = _check_common(n_folds, n_bootstrap, level)
    X_pos, X_unl = _pu_samples(X, y, n_folds)
    priors = _prior_grid(priors)
    n_basis = check_count(n_basis, "n_basis")
    lams = (np.logspace(-3, 1, 10) if lams is None
            else _positive_array(lams, "lams"))
    counts_p, folds_p, counts_u, folds_u, rng = _replicates(
        len(X_pos), len(X_unl), n_folds, n_bootstrap, seed)
    centre_index = rng.choice(len(X_unl), min(n_basis, len(X_unl)),
                              replace=False)
    centres = X_unl[centre_index]
    d2_pos, d2_unl = (_squared_distances(X_pos, centres),
                      _squared_distances(X_unl, centres))
    if sigmas is None:
        median = np.sqrt(np.median(d2_unl))
        if median == 0:
            raise InputError("the unlabelled points are (nearly) all equal: "
                             "no kernel bandwidth from the median distance; "
                             "pass sigmas")
        sigmas = median * np.logspace(-2, 1, 10)
    sigmas = _positive_array(sigmas, "sigmas")
    sums_p = _fold_sums(d2_pos, _weights(counts_p, folds_p, n_folds), sigmas)
    sums_u = _fold_sums(d2_unl, _weights(counts_u, folds_u, n_folds), sigmas)
    R = 1 + n_bootstrap
    sums_p = sums_p.reshape(len(sigmas), R, n_folds, -1)
    sums_u = sums_u.reshape(len(sigmas), R, n_folds, -1)
    n_p = np.stack([_fold_counts(counts_p[r], folds_p[r], n_folds)
                    for r in range(R)])
    n_u = np.stack([_fold_counts(counts_u[r], folds_u[r], n_folds)
                    for r in range(R)])
    estimates = np.empty(R)
    # a replicate's basis: the centres among its own unlabelled points. A
    # centre missing from a resample loses the self-term exp(0) = 1 of
    # mean_U phi_l, which at small sigma made beta_l > 0 below the true
    # prior and gave the bootstrap a spurious low tail; zero positive means
    # keep beta_l <= 0, i.e. drop the basis function.
    sums_p = np.where((counts_u[:, centre_index] > 0)[None, :, None, :],
                      sums_p, 0.0)
    for r in range(R):
        t, distance, sigma, lam = _penalised_l1_replicate(
            sums_p[:, r], n_p[r], sums_u[:, r], n_u[r], priors, sigmas, lams)
        estimates[r] = priors[t]
        if r == 0:
            details = dict(priors=priors, penalised_l1=distance,
                           sigma=float(sigma), lam=float(lam))
    return _estimate("penalised_l1", np.minimum(estimates, PI_MAX),
                     n_bootstrap, level, details)


def _fold_counts(counts, folds, n_folds):
    drawn = folds >= 0
    return np.bincount(folds[drawn], weights=counts[drawn],
                       minlength=n_folds).astype(float)


def _prior_grid(priors):
    if priors is None:
        return DEFAULT_PRIOR_GRID.copy()
    grid = check_finite_array(priors, "priors", ndim=1)
    if grid.size < 2:
        raise InputError(f"priors must hold at least two candidates, got "
                         f"{grid.size}")
    for value in grid:
        check_pu_prior(value)
    if np.any(np.diff(grid) <= 0):
        raise InputError("priors must be strictly increasing")
    return grid


def _positive_array(values, name):
    arr = check_finite_array(np.atleast_1d(values), name, ndim=1)
    if arr.size == 0:
        raise InputError(f"{name} is empty")
    for value in arr:
        check_positive(value, name)
    return arr


# ------------------------------------------------------------ Elkan-Noto


def _default_classifier():
    """Standardised additive cubic splines (5 knots per feature) and weakly
    penalised logistic regression: ``logit g`` levels off where positives
    alone live, which a linear logit cannot follow (on the PU study's data,
    pi = 0.2 / 0.5 / 0.8, n = 500 + 500, a linear logistic ``g`` gave
    ``pi_hat`` about 0.29 / 0.60 / 0.88; this model 0.24 / 0.53 / 0.81, the
    values the exact ``g`` gives: 0.23 / 0.53 / 0.82)."""
    return make_pipeline(StandardScaler(), SplineTransformer(n_knots=5),
                         LogisticRegression(C=100.0, max_iter=1000))


def _held_out_c(X_pos, X_unl, counts_p, counts_u, folds_p, folds_u,
                n_folds, classifier):
    """Mean held-out probability ``g`` of the labelled points of one
    replicate, each fold's ``g`` moved to the replicate's odds ``n_L / n_U``
    (``logit g + log(ratio / ratio_train)``, exact for the Bayes posterior
    under a change of class proportions)."""
    ratio = counts_p.sum() / counts_u.sum()
    total, weight = 0.0, 0.0
    for k in range(n_folds):
        train_p = np.repeat(np.arange(len(X_pos)),
                            np.where((folds_p != k) & (folds_p >= 0), counts_p, 0))
        train_u = np.repeat(np.arange(len(X_unl)),
                            np.where((folds_u != k) & (folds_u >= 0), counts_u, 0))
        test = np.flatnonzero(folds_p == k)
        X_train = np.vstack([X_pos[train_p], X_unl[train_u]])
        s_train = np.r_[np.ones(train_p.size), np.zeros(train_u.size)]
        model = clone(classifier).fit(X_train, s_train)
        g = _positive_probability(model, X_pos[test])
        shift = np.log(ratio * train_u.size / train_p.size)
        g = 1.0 / (1.0 + np.exp(-(np.log(g) - np.log1p(-g) + shift)))
        total += np.sum(counts_p[test] * g)
        weight += np.sum(counts_p[test])
    return total / weight, ratio


def _positive_probability(model, X):
    proba = np.asarray(model.predict_proba(X))
    classes = list(getattr(model, "classes_", [0.0, 1.0]))
    column = classes.index(1.0) if 1.0 in classes else proba.shape[1] - 1
    return np.clip(proba[:, column], 1e-12, 1.0 - 1e-12)


def elkan_noto_prior(X, y, classifier=None, n_folds=5, n_bootstrap=0,
                     level=0.95, seed=0):
    """Class prior from a classifier of labelled against unlabelled [EN08].

    Pool the ``n_L`` labelled and ``n_U`` unlabelled points and label them
    ``s = 1`` (labelled) and ``s = 0``. Labelled and unlabelled positives
    are drawn from the same ``p_P`` (Elkan and Noto's "selected completely
    at random"), so ``g(x) = P(s = 1 | x) = c P(y = 1 | x)`` with
    ``c = P(s = 1 | y = 1) = n_L / (n_L + pi n_U)`` [EN08, Lemma 1]; where
    positives alone live ``g = c``, and [EN08]'s estimator ``e1`` is
    ``c_hat`` = the mean of ``g`` over held-out labelled positives. Solving
    for ``pi`` (this package's convention: ``pi`` = fraction of positives
    among the unlabelled)

        pi_hat = (n_L / n_U) (1 - c_hat) / c_hat,

    clipped to ``[0, PI_MAX]``. ``g`` is cross-fitted: every labelled point
    is predicted by the model fitted on the other ``n_folds - 1`` folds
    (both samples split into folds), its probability moved to the odds
    ``n_L / n_U`` of the whole sample. Where the classes overlap,
    ``E_P[g] < c`` and ``pi_hat`` is too large.

    Parameters
    ----------
    X, y : as :func:`penalised_l1_prior` (``y = 1`` labelled).
    classifier : scikit-learn classifier with ``predict_proba``, cloned for
        each fit (default: standardised additive cubic splines and logistic
        regression, ``C = 100``; ``e1`` needs a calibrated ``g``).
    n_folds, n_bootstrap, level, seed : as :func:`penalised_l1_prior`.

    Returns
    -------
    PriorEstimate (``details``: ``c``, ``ratio``).
    """
    n_folds, n_bootstrap, level = _check_common(n_folds, n_bootstrap, level)
    X_pos, X_unl = _pu_samples(X, y, n_folds)
    classifier = _default_classifier() if classifier is None else classifier
    if not hasattr(classifier, "predict_proba"):
        raise InputError("classifier must have predict_proba (a probabilistic "
                         "classifier)")
    counts_p, folds_p, counts_u, folds_u, _ = _replicates(
        len(X_pos), len(X_unl), n_folds, n_bootstrap, seed)
    estimates = np.empty(1 + n_bootstrap)
    # many small fits: threaded BLAS only adds contention
    with parallel.one_blas_thread():
        for r in range(1 + n_bootstrap):
            c, ratio = _held_out_c(X_pos, X_unl, counts_p[r], counts_u[r],
                                   folds_p[r], folds_u[r], n_folds, classifier)
            estimates[r] = np.clip(ratio * (1.0 - c) / c, 0.0, PI_MAX)
            if r == 0:
                details = dict(c=float(c), ratio=float(ratio))
    return _estimate("elkan_noto", estimates, n_bootstrap, level, details)


# ------------------------------------------------------------ entry point


def estimate_pu_prior(X, y, method="penalised_l1", n_bootstrap=200,
                      level=0.95, seed=0, **options):
    """The PU class prior ``pi`` and its bootstrap interval.

    ``method``: ``"penalised_l1"`` (:func:`penalised_l1_prior`, default) or
    ``"elkan_noto"`` (:func:`elkan_noto_prior`); ``options`` go to it.
    Returns a :class:`PriorEstimate`; pass its ``interval`` to
    :func:`pac_particles.problem.auc.pu_corrected_auc_range` (or call its
    :meth:`~PriorEstimate.corrected_auc_range`).
    """
    method = check_choice(method, "method", METHODS)
    fit = penalised_l1_prior if method == "penalised_l1" else elkan_noto_prior
    return fit(X, y, n_bootstrap=n_bootstrap, level=level, seed=seed,
               **options)
