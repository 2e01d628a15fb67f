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
rest: a choice made on ``A``'s labels only. (The rbf map is the
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
from pac_particles.problem.reduced_rank import (default_rank, rbf_features,
                                                reduced_rank_problem)

__all__ = ["gp_prior_problem", "gp_rank", "reduced_rank_features",
           "fisher_direction", "LENGTHSCALE_FACTORS", "SELECTION_ROWS"]

#: multiples of the median-heuristic lengthscale that ``kernel='rbf'``
#: chooses among (fixed in advance)
LENGTHSCALE_FACTORS = (0.7, 1.0, 1.4)
#: rows of ``A`` the choice of the lengthscale uses at most
SELECTION_ROWS = 20000


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
    if kernel is None or not problem.data.in_memory:
        return problem, hyper, X, None
    rank = gp_rank(rank, n)
    if rank >= n:
        return problem, hyper, X, n
    problem = reduced_rank_features(problem, kernel, rank, spec, seed)
    return problem, {"prior_var": 1.0}, problem.data.X, problem.data.d


def reduced_rank_features(problem: GibbsProblem, kernel: Any, rank: int,
                          spec: CertificateSpec,
                          seed: Optional[int] = None) -> GibbsProblem:
    """The reduced-rank problem of ``problem`` (module docstring): the
    Nystrom map of ``kernel`` (``'rbf'``: the lengthscale chosen on ``A``)
    on ``rank`` inducing rows of the certificate's prior part ``A``."""
    data = problem.data
    in_a = np.flatnonzero(certificate_split(data.y, spec))
    rng = np.random.default_rng(seed)
    if callable(kernel):
        inducing = data.X[rng.choice(in_a, min(rank, in_a.size), replace=False)]
        return reduced_rank_problem(problem, NystromFeatures(kernel, inducing))
    seed = int(rng.integers(2**31))
    factor = _chosen_factor(data.X, data.y, in_a, rank, seed, rng)
    return reduced_rank_problem(
        problem, rbf_features(data.X, in_a, rank, factor, seed=seed))


def fisher_direction(Phi: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Fisher's discriminant ``(S_w + I / n)^-1 (mean_+ - mean_-)`` of the
    rows of ``Phi`` (``S_w`` the pooled within-class covariance; the ridge
    ``1 / n`` only keeps it invertible): what compares the lengthscales.

    An L2 logistic regression at prior variance 1 did before: it shrinks
    the small-scale features of a long lengthscale to nothing, and chose
    0.7 where its held-out AUC, like the test AUC, was lower than Fisher's
    at 1.0 (10,000 and 100,000 rows of the smooth nonlinear data), at 3
    to 10 times the cost."""
    y = np.asarray(y, dtype=bool)
    pos, neg = Phi[y], Phi[~y]
    centred = np.concatenate([pos - pos.mean(axis=0), neg - neg.mean(axis=0)])
    within = centred.T @ centred / Phi.shape[0]
    within[np.diag_indices_from(within)] += 1.0 / Phi.shape[0]
    return np.linalg.solve(within, pos.mean(axis=0) - neg.mean(axis=0))


def _chosen_factor(X, y, in_a, rank, seed, rng):
    """The lengthscale factor of best held-out AUC within ``A``."""
    rows = rng.permutation(in_a)[:SELECTION_ROWS]
    cut = (2 * rows.size) // 3
    train, val = rows[:cut], rows[cut:]
    if min(np.count_nonzero(y[train]), np.count_nonzero(~y[train]),
           np.count_nonzero(y[val]), np.count_nonzero(~y[val])) == 0:
        return 1.0              # too few rows of a class to choose on
    best, best_auc = 1.0, -np.inf
    for factor in LENGTHSCALE_FACTORS:
        phi = rbf_features(X, in_a, rank, factor, seed=seed)
        direction = fisher_direction(phi(X[train]), y[train])
        auc = roc_auc_score(y[val], phi(X[val]) @ direction)
        if auc > best_auc:
            best, best_auc = factor, auc
    return best
