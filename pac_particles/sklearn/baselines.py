"""Baseline scorers to compare AUC Gibbs posteriors against.

* :func:`logistic_scores`: L2-penalised logistic regression (scikit-learn),
  with weak regularisation chosen by inner cross-validation on the AUC.
* :class:`RankBoost`: the bipartite RankBoost of Freund et al. (2003)
  ("RankBoost.B") with threshold weak rankers ``h(x) = 1{x_f > t}``.

:class:`LogisticBaseline` and :class:`RankBoost` are scorers (``fit``,
``decision_function``; no ``predict``) and scikit-learn estimators
(``get_params``, ``clone``) that raise ``NotFittedError`` before ``fit``.

``compare_scorers`` of ``lab/study`` (beside the package) puts them side by side with the
Gibbs posteriors over repeated stratified splits (the benchmark table).

Example
-------
::

    from pac_particles.sklearn.baselines import RankBoost, logistic_scores
    test_scores = logistic_scores(X_train, y_train, X_test, random_state=0)
    rb = RankBoost(n_rounds=200).fit(X_train, y_train)
    rb.decision_function(X_test)

References
----------
Freund, Y., Iyer, R., Schapire, R. E. and Singer, Y. (2003). An efficient
boosting algorithm for combining preferences. JMLR 4, 933-969 (section 3.2,
"bipartite feedback", and section 6.3 for threshold weak rankers).
"""

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.validation import check_is_fitted

from pac_particles.problem.data import binary_labels
from pac_particles.core.checks import InputError, check_count, check_finite_array

__all__ = ["logistic_scores", "fit_logistic", "LogisticBaseline", "RankBoost"]


def fit_logistic(X, y, cv=5, random_state=None):
    """Standardised L2 logistic regression, penalty chosen by ``cv``-fold
    cross-validated AUC over ``C`` in [1e-3, 1e4] (weak regularisation
    included). Returns the fitted scikit-learn pipeline."""
    positives = binary_labels(y)
    n_minority = min(positives.sum(), (~positives).sum())
    folds = StratifiedKFold(n_splits=max(2, min(cv, n_minority)), shuffle=True,
                            random_state=random_state)
    search = GridSearchCV(
        make_pipeline(StandardScaler(), LogisticRegression(max_iter=5000)),
        {"logisticregression__C": np.logspace(-3, 4, 15)},
        scoring="roc_auc", cv=folds)
    return search.fit(np.asarray(X, float), positives.astype(int)).best_estimator_


def logistic_scores(X_train, y_train, X_test, cv=5, random_state=None):
    """Decision-function scores of :func:`fit_logistic` on ``X_test``."""
    return fit_logistic(X_train, y_train, cv=cv,
                        random_state=random_state).decision_function(X_test)


class LogisticBaseline(BaseEstimator):
    """:func:`fit_logistic` with the ``fit`` / ``decision_function`` interface."""

    def __init__(self, cv=5, random_state=None):
        self.cv = cv
        self.random_state = random_state

    def fit(self, X, y):
        self.model_ = fit_logistic(X, y, cv=self.cv, random_state=self.random_state)
        return self

    def decision_function(self, X):
        check_is_fitted(self, "model_")
        return self.model_.decision_function(np.asarray(X, float))


class RankBoost(BaseEstimator):
    """Bipartite RankBoost with threshold weak rankers.

    The distribution over positive/negative pairs factorises as
    ``D(i, j) = v_i w_j`` (Freund et al., 2003, section 3.2), so each round
    costs O(n d) after a one-off sort of every feature instead of O(P). A weak
    ranker ``h(x) = 1{x_f > t}`` is scored by
    ``r = sum_ij D(i, j) (h(x_i) - h(x_j)) = sum_i v_i h(x_i) - sum_j w_j h(x_j)``,
    the round picks the ``(f, t)`` maximising ``|r|`` and weights it by
    ``alpha = 0.5 log((1 + r) / (1 - r))``; then ``v_i *= exp(-alpha h(x_i))``,
    ``w_j *= exp(alpha h(x_j))``, each renormalised.

    Parameters
    ----------
    n_rounds : int
        Number of boosting rounds.
    max_thresholds : int or None
        Candidate thresholds per feature: all distinct values (None) or this
        many quantiles (faster on large n).

    Attributes
    ----------
    features_, thresholds_, alphas_ : arrays of length n_rounds
    edges_ : the ``r`` of each round (the first one is the best Youden index
        ``max TPR - FPR`` over single-feature thresholds).
    """

    def __init__(self, n_rounds=100, max_thresholds=None):
        self.n_rounds = n_rounds
        self.max_thresholds = max_thresholds

    def fit(self, X, y):
        X = check_finite_array(X, "X", ndim=2)
        positives = binary_labels(y)
        if X.shape[0] != positives.shape[0]:
            raise InputError(f"X must be (n, d) with n = len(y); got {X.shape}")
        n_rounds = check_count(self.n_rounds, "n_rounds", 1)
        if self.max_thresholds is not None:
            check_count(self.max_thresholds, "max_thresholds", 1)
        if np.all(X == X[0]):
            raise InputError("every column of X is constant: no ranker can "
                             "order the data")
        # signed pair weights: +v_i on positives, -w_j on negatives
        v = np.where(positives, 1.0 / positives.sum(), 0.0)
        w = np.where(positives, 0.0, 1.0 / (~positives).sum())
        candidates = [self._thresholds(col) for col in X.T]
        feats, thresh, alphas, edges = [], [], [], []
        for _ in range(n_rounds):
            signed = v - w
            best = (0.0, 0, np.inf)
            for f, col in enumerate(X.T):
                order = np.argsort(col, kind="stable")
                sorted_col = col[order]
                # r(t) = sum of signed weights of points with x_f > t
                tail = np.concatenate([np.cumsum(signed[order][::-1])[::-1], [0.0]])
                idx = np.searchsorted(sorted_col, candidates[f], side="right")
                r_values = tail[idx]
                k = np.argmax(np.abs(r_values))
                if abs(r_values[k]) > abs(best[0]):
                    best = (r_values[k], f, candidates[f][k])
            r, f, t = best
            if r == 0.0:
                break
            r = np.clip(r, -1 + 1e-12, 1 - 1e-12)
            alpha = 0.5 * np.log((1 + r) / (1 - r))
            h = X[:, f] > t
            v = v * np.exp(-alpha * h)
            w = w * np.exp(alpha * h)
            v[~positives] = 0.0
            w[positives] = 0.0
            v /= v.sum()
            w /= w.sum()
            feats.append(f)
            thresh.append(t)
            alphas.append(alpha)
            edges.append(r)
        self.features_ = np.array(feats, dtype=int)
        self.thresholds_ = np.array(thresh)
        self.alphas_ = np.array(alphas)
        self.edges_ = np.array(edges)
        self.n_features_in_ = X.shape[1]
        return self

    def _thresholds(self, col):
        values = np.unique(col)[:-1]  # x > max is never true
        if self.max_thresholds is not None and values.size > self.max_thresholds:
            values = np.unique(np.quantile(col, np.linspace(0, 1, self.max_thresholds)))
        return values if values.size else np.unique(col)

    def decision_function(self, X):
        """``H(x) = sum_t alpha_t 1{x_{f_t} > t_t}``."""
        # scikit-learn's error before fit, as every estimator of the package
        check_is_fitted(self, ("features_", "thresholds_", "alphas_"))
        X = check_finite_array(X, "X")
        if X.ndim != 2 or X.shape[1] != self.n_features_in_:
            raise InputError(f"X must have {self.n_features_in_} columns")
        hits = X[:, self.features_] > self.thresholds_
        return hits.astype(float) @ self.alphas_
