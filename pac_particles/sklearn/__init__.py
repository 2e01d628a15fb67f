"""Layer 5, sklearn: the scikit-learn faces and the choice of ``lam``.

* :mod:`~pac_particles.sklearn.estimator` -- :class:`PACBayesAUC`;
* :mod:`~pac_particles.sklearn.classifier` -- :class:`PACBayesClassifier`;
* :mod:`~pac_particles.sklearn.selection` -- the one path that chooses
  ``lam`` (grid, K-fold, path, leave-one-out, evidence grid);
* :mod:`~pac_particles.sklearn.committee` -- a posterior as a committee;
* :mod:`~pac_particles.sklearn.baselines` -- logistic regression, RankBoost;
* :mod:`~pac_particles.sklearn.pu_class_prior`,
  :mod:`~pac_particles.sklearn.model_file`.
"""
