"""A fitted posterior over classifiers as a weighted committee: votes,
Bayesian transduction with a reject option, the Bayes point machine, and
query by committee [GH01, Sec. 4].

:class:`Committee` holds weighted parameter draws ``theta_k`` (SMC particles
with their weights, or equally weighted draws of a Gaussian approximation)
and the map from raw inputs to the design ``Z`` in which the score of
classifier k is ``Z theta_k``: the training preprocessing for linear
classifiers, ``K(x, X) K^-1`` for GP latent scores (the kernel expansion
``w = sum_i alpha_i x_i``, ``alpha = K^-1 s`` [GH01, Eq. (1)]). From it:

* :meth:`Committee.vote`: the vote fraction
  ``p+(x) = sum_k W_k (1{s_k(x) > 0} + 0.5 1{s_k(x) = 0})``, and
  :meth:`Committee.decide`, the transductive decision ``p+(x) > 1/2``
  [GH01, Eq. (4)];
* :func:`reject_curve`: abstain on the points whose vote is closest to 1/2,
  error on the kept points against the rejection rate;
* :attr:`Committee.bayes_point`: the mean of the normalised draws (Euclidean
  norm, or the RKHS norm ``sqrt(s' K^-1 s)`` for GP latent scores), a single
  classifier that approximates the vote [GH01, Eq. (5)];
* :meth:`Committee.entropy`: the binary entropy of the vote (bits), the
  information of a candidate label [GH01, Sec. 4, after FSST97], and
  :func:`query_by_committee`, the active-learning loop (fit, query the most
  informative pool point, refit) with its learning curve against random
  querying;
* for ranking posteriors (AUC models; our extension, not in [GH01]):
  :meth:`Committee.rank_uncertainty`, the posterior mean and spread of each
  point's normalised rank, and :meth:`Committee.pair_order_entropy`, the
  mean binary entropy of the order between a candidate and reference points
  -- the vote entropy with point margins replaced by the pair margins the
  AUC counts.

Example
-------
::

    from sklearn.datasets import load_breast_cancer
    from pac_particles.sklearn.committee import Committee, reject_curve
    from pac_particles.smc.label_noise import lam_from_label_noise
    from pac_particles.smc.models import ClassificationGibbsModel
    from pac_particles.smc.posterior import run_smc

    X, y = load_breast_cancer(return_X_y=True)
    post = run_smc(ClassificationGibbsModel(X, y, lam=lam_from_label_noise(0.05, len(y))),
                   seed=0)
    committee = Committee.from_posterior(post)
    p = committee.vote(X)                       # p+(x)
    rates, errors = reject_curve(p, y)
    committee.bayes_point_scores(X)             # the Bayes point machine

References
----------
[GH01] Graepel, T. and Herbrich, R. (2001). The kernel Gibbs sampler.
NIPS 13.

[FSST97] Freund, Y., Seung, H. S., Shamir, E. and Tishby, N. (1997).
Selective sampling using the query by committee algorithm. Machine Learning
28, 133-168.
"""

from dataclasses import dataclass

import numpy as np
from scipy import linalg, stats
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from pac_particles.problem.data import binary_labels
from pac_particles.core.checks import InputError, check_choice, check_count
from pac_particles.core.posterior_result import fitted_result
from pac_particles.core.weighted_particles import WeightedParticles

__all__ = ["vote_probability", "Committee", "binary_entropy", "reject_curve", "query_by_committee",
           "LearningCurve", "QUERY_RULES"]

#: Query rules of :func:`query_by_committee`.
QUERY_RULES = ("entropy", "random", "pair_entropy")


def binary_entropy(p):
    """``-p log2 p - (1 - p) log2 (1 - p)`` (bits; 0 at p = 0 or 1)."""
    p = np.clip(np.asarray(p, dtype=float), 0.0, 1.0)
    q = 1.0 - p
    with np.errstate(divide="ignore", invalid="ignore"):
        h = -(np.where(p > 0, p * np.log2(p), 0.0)
              + np.where(q > 0, q * np.log2(q), 0.0))
    return h


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


class Committee:
    """Weighted classifiers ``theta_k`` whose scores on inputs ``Z`` (the
    design of :meth:`design`) are ``Z theta_k``.

    Parameters
    ----------
    theta : (N, p) draws; weights : (N,) optional (default equal).
    design : callable ``X -> Z`` (m, p), optional: raw inputs to the design
        (default: the identity, inputs already preprocessed).
    metric_chol : (p, p) lower-triangular ``C``, optional: draws are
        normalised by ``||C^-1 theta||`` for the Bayes point (the RKHS norm
        ``sqrt(s' K^-1 s)`` of GP latent scores when ``C C' = K``); default
        the Euclidean norm.

    Build it from a fitted posterior with :meth:`from_posterior`.
    """

    def __init__(self, theta, weights=None, design=None, metric_chol=None):
        cloud = WeightedParticles(theta, weights)
        self.theta, self.weights = cloud.theta, cloud.weights
        self._design = design
        self.metric_chol = metric_chol

    # ------------------------------------------------------------ building
    @classmethod
    def from_posterior(cls, posterior, n_draws=2000, seed=None):
        """The committee of a fitted posterior.

        ``posterior``: a fitted
        :class:`~pac_particles.core.posterior_result.PosteriorResult`
        (SMC's weighted particles, linear or GP latent scores; or
        ``n_draws`` equally weighted draws of a Gaussian, seeded by
        ``seed``), a fitted scikit-learn estimator of the package (its
        ``posterior_``), or a fitted approximation (VB, EP: its
        ``result_``).
        """
        if isinstance(posterior, BaseEstimator):
            check_is_fitted(posterior, "posterior_")
            posterior = posterior.posterior_
        posterior = fitted_result(posterior)
        if posterior.is_gp:
            model = posterior.predictor
            return cls(posterior.theta, posterior.weights,
                       design=_gp_design(model), metric_chol=model.kernel_chol)
        if isinstance(posterior, WeightedParticles):
            return cls(posterior.theta, posterior.weights,
                       design=posterior.data.transform)
        draws = posterior.sample(check_count(n_draws, "n_draws"), seed)
        return cls(draws, design=posterior.data.transform)

    def design(self, X, raw=True):
        """The design ``Z`` (m, p) of inputs ``X``; ``raw=False``: ``X`` is
        already the design."""
        if not raw or self._design is None:
            return np.asarray(X, dtype=float)
        return np.asarray(self._design(X), dtype=float)

    # ------------------------------------------------------------ the vote
    def scores(self, X, raw=True):
        """Scores of every committee member, (m, N)."""
        return self.design(X, raw) @ self.theta.T

    def vote(self, X, raw=True):
        """Vote fractions ``p+(x)`` (ties count 1/2) [GH01, Eq. (4)]."""
        return vote_probability(self.theta, self.weights, self.design(X, raw))

    def decide(self, X, raw=True):
        """The transductive decision: True where ``p+(x) > 1/2``."""
        return self.vote(X, raw) > 0.5

    def entropy(self, X, raw=True):
        """Binary entropy (bits) of the vote of each input: 1 where the
        committee splits evenly, 0 where it agrees [GH01, Sec. 4]."""
        return binary_entropy(self.vote(X, raw))

    # -------------------------------------------------------- Bayes point
    @property
    def bayes_point(self):
        """Weighted mean of the normalised draws [GH01, Eq. (5)]."""
        if self.metric_chol is None:
            norms = np.linalg.norm(self.theta, axis=1)
        else:
            white = linalg.solve_triangular(self.metric_chol, self.theta.T,
                                            lower=True, check_finite=False)
            norms = np.linalg.norm(white, axis=0)
        unit = self.theta / np.where(norms > 0, norms, 1.0)[:, None]
        return unit.T @ self.weights

    def bayes_point_scores(self, X, raw=True):
        """Scores of the Bayes point machine (classify by their sign)."""
        return self.design(X, raw) @ self.bayes_point

    # ------------------------------------------------ ranking (AUC models)
    def rank_uncertainty(self, X, raw=True):
        """Posterior mean and standard deviation of the normalised rank
        (0 lowest, 1 highest score; ties averaged) of each input among the
        rows of ``X``, over the weighted committee: how firmly the posterior
        places each point in the ranking. Our extension of [GH01, Sec. 4]
        to the AUC models. Returns ``(mean, sd)``, each (m,)."""
        S = self.scores(X, raw)
        m = S.shape[0]
        if m < 2:
            raise InputError("ranks need at least two inputs")
        ranks = (stats.rankdata(S, axis=0) - 1.0) / (m - 1.0)
        mean = ranks @ self.weights
        var = ((ranks - mean[:, None]) ** 2) @ self.weights
        return mean, np.sqrt(np.maximum(var, 0.0))

    def pair_order_entropy(self, X_candidates, X_reference, raw=True):
        """For each candidate x: the mean over reference points x_j of the
        binary entropy (bits) of ``P(s(x) > s(x_j))`` (ties 1/2) -- the vote
        entropy of the pair margins a label of x would add to an AUC risk.
        The query rule for ranking of :func:`query_by_committee`
        (``rule="pair_entropy"``); our extension of [GH01, Sec. 4]."""
        S_c = self.scores(X_candidates, raw)
        S_r = self.scores(X_reference, raw)
        out = np.empty(S_c.shape[0])
        for i, row in enumerate(S_c):
            diff = row[None, :] - S_r
            p = ((diff > 0) + 0.5 * (diff == 0)) @ self.weights
            out[i] = binary_entropy(p).mean()
        return out


def _gp_design(model):
    """``x -> K(x, X) K^-1`` for a GP model: its latent-score committee's
    scores at new raw inputs are the GP conditional means."""
    def design(X):
        K_star = np.asarray(model.kernel(model.data.transform(X), model.data.X),
                            dtype=float)
        return linalg.cho_solve((model.kernel_chol, True), K_star.T).T
    return design


# ------------------------------------------------------------ reject option

def reject_curve(p_plus, y, rates=None):
    """Error of the transductive decision on the kept points when the
    fraction ``rate`` of points whose vote is closest to 1/2 is rejected.

    Parameters
    ----------
    p_plus : (m,) vote fractions; y : (m,) binary labels.
    rates : rejection rates in [0, 1), default ``0, 0.05, ..., 0.9``.

    Returns
    -------
    (rates, errors): errors[r] is the misclassification rate among the
    ``m - floor(rate m)`` most confident points (a vote of exactly 1/2 counts
    as half an error), ties in confidence kept in input order.
    """
    p = np.asarray(p_plus, dtype=float)
    positive = binary_labels(y)
    if p.shape != positive.shape:
        raise InputError(f"p_plus {p.shape} and y {positive.shape} differ")
    rates = (np.linspace(0.0, 0.9, 19) if rates is None
             else np.asarray(rates, dtype=float))
    if np.any(rates < 0) or np.any(rates >= 1):
        raise InputError("rejection rates must lie in [0, 1)")
    loss = np.where(p == 0.5, 0.5, ((p > 0.5) != positive).astype(float))
    order = np.argsort(-np.abs(p - 0.5), kind="stable")
    cumulative = np.cumsum(loss[order])
    m = p.size
    kept = m - np.floor(rates * m).astype(int)
    return rates, cumulative[kept - 1] / kept


# ------------------------------------------------------ query by committee

@dataclass
class LearningCurve:
    """Outcome of :func:`query_by_committee`.

    Attributes
    ----------
    n_labels : (T,) labelled points at each fit.
    score : (T,) test score of each fit (accuracy by default).
    queried : pool indices in the order they were labelled (the initial
        ones first).
    rule : the query rule.
    """

    n_labels: np.ndarray
    score: np.ndarray
    queried: np.ndarray
    rule: str

    def labels_to_reach(self, target):
        """Fewest labels whose fit scores at least ``target`` (None if never)."""
        hit = np.flatnonzero(self.score >= target)
        return int(self.n_labels[hit[0]]) if hit.size else None


def _accuracy(committee, X, y):
    return float(np.mean(committee.decide(X) == binary_labels(y)))


def query_by_committee(fit, X_pool, y_pool, X_test, y_test, n_initial=10,
                       n_queries=30, rule="entropy", score=None, seed=None):
    """Active learning by query by committee [FSST97], [GH01, Sec. 4].

    Start from ``n_initial`` pool points drawn at random (at least one of
    each class); then repeatedly fit the posterior on the labelled points,
    score it on the test set, and label the pool point of highest vote
    entropy (``rule="entropy"``), of highest pair-order entropy against the
    labelled points (``"pair_entropy"``, for ranking), or a random one
    (``"random"``, the baseline). Ties are broken at random.

    Parameters
    ----------
    fit : callable ``fit(X, y, seed) -> Committee``.
    X_pool, y_pool : the pool (labels revealed when queried).
    X_test, y_test : held-out points for the learning curve.
    n_initial, n_queries : int.
    rule : one of :data:`QUERY_RULES`.
    score : callable ``score(committee, X_test, y_test) -> float``, default
        the accuracy of the transductive decision.
    seed : int, optional (initial points, tie breaks, random queries and
        the seeds passed to ``fit``).

    Returns
    -------
    LearningCurve
    """
    rule = check_choice(rule, "rule", QUERY_RULES)
    score = _accuracy if score is None else score
    positive = binary_labels(y_pool)
    n = positive.size
    n_initial = check_count(n_initial, "n_initial", minimum=2)
    n_queries = check_count(n_queries, "n_queries", minimum=0)
    if n_initial + n_queries > n:
        raise InputError(f"n_initial + n_queries = {n_initial + n_queries} "
                         f"exceeds the pool size {n}")
    if positive.all() or not positive.any():
        raise InputError("the pool needs both classes")
    rng = np.random.default_rng(seed)
    first = [int(rng.choice(np.flatnonzero(positive))),
             int(rng.choice(np.flatnonzero(~positive)))]
    rest = rng.permutation(np.setdiff1d(np.arange(n), first))
    labelled = first + [int(i) for i in rest[:n_initial - 2]]
    y_pool = np.asarray(y_pool)
    counts, scores = [], []
    for step in range(n_queries + 1):
        committee = fit(X_pool[labelled], y_pool[labelled],
                        int(rng.integers(2**31)))
        counts.append(len(labelled))
        scores.append(score(committee, X_test, y_test))
        if step == n_queries:
            break
        free = np.setdiff1d(np.arange(n), labelled)
        if rule == "random":
            labelled.append(int(rng.choice(free)))
            continue
        info = (committee.entropy(X_pool[free]) if rule == "entropy"
                else committee.pair_order_entropy(X_pool[free],
                                                  X_pool[labelled]))
        best = np.flatnonzero(info >= info.max() - 1e-12)
        labelled.append(int(free[rng.choice(best)]))
    return LearningCurve(np.array(counts), np.array(scores),
                         np.array(labelled), rule)
