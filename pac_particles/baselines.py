"""Baseline scorers to compare AUC Gibbs posteriors against.

* :func:`logistic_scores`: L2-penalised logistic regression (scikit-learn),
  with weak regularisation chosen by inner cross-validation on the AUC.

Example
-------
::

    from pac_particles.baselines import logistic_scores
    test_scores = logistic_scores(X_train, y_train, X_test, random_state=0)
"""

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from .auc import binary_labels

__all__ = ["logistic_scores", "fit_logistic"]


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
