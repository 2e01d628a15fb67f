"""GP scores at scale: the estimator's choice between the exact GP prior and
the reduced-rank one, and the reduced-rank prior's feature map.

``PACBayesAUC(kernel=...)`` fits the exact GP (``s ~ N(0, K)`` on the n
training scores, O(n^3)) up to
:data:`~pac_particles.problem.reduced_rank.EXACT_GP_MAX_ROWS` rows with
``rank='auto'`` (or whenever ``rank >= n``), and above it the reduced-rank
prior ``s(x) = phi(x) . w``, ``w ~ N(0, I_r)``
(:mod:`pac_particles.problem.reduced_rank`): a linear problem in ``r``
features, fitted by any method of linear scores and certified as one.

The feature map is built from the certificate's prior part ``A`` alone
(:func:`~pac_particles.bounds.certification.certificate_split`, drawn from
the labels and the certificate's own stream): its inducing rows and its
lengthscale never see a row of the certifying part ``B``, so the
certificate's statements on ``B`` hold for the prior the fit used. For
``kernel='rbf'`` the lengthscale is the median heuristic (per column, ARD
by each column's spread on ``A``) times one of
:data:`LENGTHSCALE_FACTORS`, chosen by the held-out AUC of Fisher's
discriminant on the features (:func:`fisher_direction`), fitted on two
thirds of at most :data:`SELECTION_ROWS` rows of ``A`` and scored on the
rest: a choice made on ``A``'s labels only. With ``rank='auto'`` the same
comparison weighs half the rank (the first half of the same inducing rows):
the smaller map is taken unless the full one's held-out AUC is above it by
more than one standard error (Hanley and McNeil), so that smooth scores
pay for the features they need (:data:`SMALLEST_HALF_RANK`). (The rbf map is the
same for any affine rescaling of the columns, so the standardisation of all
rows does not enter it; a kernel given as a callable acts on the
standardised inputs, whose centre and scale are every row's, unless
``standardize=False``.)
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np
from sklearn.metrics import roc_auc_score

from pac_particles.bounds.certification import CertificateSpec, certificate_split
from pac_particles.core.checks import InputError, check_count
from pac_particles.core.feature_maps import NystromFeatures
from pac_particles.problem.problem import GibbsProblem
from pac_particles.problem.reduced_rank import (FeatureData, default_rank,
                                                rbf_features,
                                                reduced_rank_problem)

__all__ = ["gp_prior_problem", "gp_rank", "reduced_rank_features",
           "feature_map_of_rows",
           "fisher_direction", "auc_standard_error", "LENGTHSCALE_FACTORS",
           "SELECTION_ROWS", "SMALLEST_HALF_RANK"]

#: multiples of the median-heuristic lengthscale that ``kernel='rbf'``
#: chooses among (fixed in advance)
LENGTHSCALE_FACTORS = (0.7, 1.0, 1.4)
#: rows of ``A`` the choice of the lengthscale uses at most
SELECTION_ROWS = 20000
#: ``rank='auto'`` weighs half its rank when that is at least this many
#: features: on smooth scores half the features may hold the AUC at less
#: than half the time, and where they do not, the held-out AUC on ``A``
#: sees it (docs/benchmarks.md, "GP scores at scale: the reduced-rank
#: prior", measures both cases)
SMALLEST_HALF_RANK = 50


def gp_rank(rank: Any, n: int) -> int:
    """The rank of the GP prior on ``n`` rows: ``rank='auto'``
    (:func:`~pac_particles.problem.reduced_rank.default_rank`) or a count,
    at most ``n`` (``n``: the exact GP)."""
    if isinstance(rank, str):
        if rank != "auto":
            raise InputError(f"rank must be 'auto' or a positive integer, got "
                             f"{rank!r}")
        return default_rank(n)
    return min(check_count(rank, "rank"), n)


def gp_prior_problem(problem: GibbsProblem, hyper: dict, X: Any,
                     kernel: Any, rank: Any, spec: CertificateSpec,
                     seed: Optional[int] = None) -> tuple:
    """``(problem, hyper, rows, rank)`` of an estimator's fit on the rows
    ``X`` with the prior's hyper-parameters ``hyper``: all as given and
    rank None for linear scores (no ``kernel``) or rows on a cluster; rank
    ``n`` for the exact GP (:func:`gp_rank` at least ``n``); else the
    reduced-rank problem of :func:`reduced_rank_features`, its isotropic
    prior, its features (the rows its method's folds split, left as the
    prior made them) and their number."""
    n = problem.data.n
    if kernel is not None and isinstance(problem.data, FeatureData):
        # rows on a cluster: their features were built on a sample of them
        # (pac_particles.sklearn.dask_fit)
        return problem, {"prior_var": 1.0}, X, problem.data.d
    if kernel is None or not problem.data.in_memory:
        return problem, hyper, X, None
    auto = isinstance(rank, str)
    rank = gp_rank(rank, n)
    if rank >= n:
        return problem, hyper, X, n
    problem = reduced_rank_features(problem, kernel, rank, spec, seed,
                                    weigh_half=auto)
    return problem, {"prior_var": 1.0}, problem.data.X, problem.data.d


def reduced_rank_features(problem: GibbsProblem, kernel: Any, rank: int,
                          spec: CertificateSpec, seed: Optional[int] = None,
                          weigh_half: bool = False) -> GibbsProblem:
    """The reduced-rank problem of ``problem`` (module docstring): the
    Nystrom map of ``kernel`` (``'rbf'``: the lengthscale chosen on ``A``,
    and with ``weigh_half`` the rank between ``rank`` and half of it)
    on ``rank`` inducing rows of the certificate's prior part ``A``."""
    data = problem.data
    in_a = np.flatnonzero(certificate_split(data.y, spec))
    return reduced_rank_problem(problem, feature_map_of_rows(
        data.X, data.y, in_a, kernel, rank, seed, weigh_half))


def feature_map_of_rows(X: np.ndarray, y: np.ndarray, rows: np.ndarray,
                        kernel: Any, rank: int, seed: Optional[int] = None,
                        weigh_half: bool = False) -> NystromFeatures:
    """The Nystrom map of ``kernel`` built from the rows ``rows`` of the
    standardised ``X`` (labels ``y``) alone: ``rank`` inducing rows drawn
    among them (from ``seed``); for ``'rbf'`` the lengthscale (and with
    ``weigh_half`` the rank) chosen by :func:`_chosen_map` on them."""
    rng = np.random.default_rng(seed)
    if callable(kernel):
        inducing = X[rng.choice(rows, min(rank, rows.size), replace=False)]
        return NystromFeatures(kernel, inducing)
    seed = int(rng.integers(2**31))
    ranks = ((rank, rank // 2) if weigh_half and rank // 2 >= SMALLEST_HALF_RANK
             else (rank,))
    return _chosen_map(X, y, rows, ranks, seed, rng)


def fisher_direction(Phi: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Fisher's discriminant ``(S_w + I / n)^-1 (mean_+ - mean_-)`` of the
    rows of ``Phi`` (``S_w`` the pooled within-class covariance; the ridge
    ``1 / n`` only keeps it invertible): what compares the lengthscales.
    Unlike an L2 logistic regression at prior variance 1, it does not
    shrink the small-scale features of a long lengthscale away
    (docs/benchmarks.md, "GP scores at scale: the reduced-rank prior",
    compares the two)."""
    y = np.asarray(y, dtype=bool)
    pos, neg = Phi[y], Phi[~y]
    centred = np.concatenate([pos - pos.mean(axis=0), neg - neg.mean(axis=0)])
    within = centred.T @ centred / Phi.shape[0]
    within[np.diag_indices_from(within)] += 1.0 / Phi.shape[0]
    return np.linalg.solve(within, pos.mean(axis=0) - neg.mean(axis=0))


def auc_standard_error(auc: float, n_pos: int, n_neg: int) -> float:
    """The standard error of an AUC on ``n_pos`` positives and ``n_neg``
    negatives [HM82, eq. (2)]: ``(A (1 - A) + (n_pos - 1)(Q1 - A^2) +
    (n_neg - 1)(Q2 - A^2)) / (n_pos n_neg)``, ``Q1 = A / (2 - A)``,
    ``Q2 = 2 A^2 / (1 + A)``, square-rooted.

    [HM82] Hanley, J. A. and McNeil, B. J. (1982). The meaning and use of
    the area under a receiver operating characteristic (ROC) curve.
    Radiology 143(1), 29-36."""
    q1, q2 = auc / (2.0 - auc), 2.0 * auc * auc / (1.0 + auc)
    var = (auc * (1.0 - auc) + (n_pos - 1) * (q1 - auc * auc)
           + (n_neg - 1) * (q2 - auc * auc)) / (n_pos * n_neg)
    return float(np.sqrt(max(var, 0.0)))


def _chosen_map(X, y, in_a, ranks, seed, rng):
    """The map of best held-out AUC within ``A`` over the lengthscale
    factors, at the smallest of ``ranks`` within one standard error of
    the best (module docstring)."""
    rows = rng.permutation(in_a)[:SELECTION_ROWS]
    cut = (2 * rows.size) // 3
    train, val = rows[:cut], rows[cut:]
    n_pos, n_neg = np.count_nonzero(y[val]), np.count_nonzero(~y[val])
    if min(np.count_nonzero(y[train]), np.count_nonzero(~y[train]),
           n_pos, n_neg) == 0:
        # too few rows of a class to choose on
        return rbf_features(X, in_a, ranks[0], 1.0, seed=seed)
    best = {}
    for factor in LENGTHSCALE_FACTORS:
        full = rbf_features(X, in_a, ranks[0], factor, seed=seed)
        for r in ranks:
            # the first r of the same inducing rows: nested maps
            phi = (full if r == ranks[0]
                   else NystromFeatures(full.kernel, full.inducing[:r]))
            direction = fisher_direction(phi(X[train]), y[train])
            auc = roc_auc_score(y[val], phi(X[val]) @ direction)
            if r not in best or auc > best[r][0]:
                best[r] = (auc, phi)
    top = max(auc for auc, _ in best.values())
    floor = top - auc_standard_error(top, n_pos, n_neg)
    return next(best[r][1] for r in sorted(best) if best[r][0] >= floor)
