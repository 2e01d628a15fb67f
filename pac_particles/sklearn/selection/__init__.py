"""Choosing ``lam`` and prior hyper-parameters: the one path.

Every estimator chooses ``lam`` here, for any method and task; the metric
(``"auc"`` for ranking, ``"accuracy"`` for classification) and the top of
the grid per task (:func:`default_lam_max`) are parameters. The modules:
:mod:`~pac_particles.sklearn.selection.folds` (the grid, stratified folds,
the K-fold loop, SMC's :func:`cv_lambda`, held-out refits),
:mod:`~pac_particles.sklearn.selection.scorers` (what a fold computes),
:mod:`~pac_particles.sklearn.selection.leave_one_out` (EP's and VB's
leave-one-out choices) and :mod:`~pac_particles.sklearn.selection.evidence`
(the evidence grid), :mod:`~pac_particles.sklearn.selection.certified`
(the certified step of a tempering path).

The grid of ``lam``
    :func:`lam_grid` -- ``grid_size`` log-spaced values below ``lam_max``,
    fixed before seeing the data: the certificate of the chosen value pays
    ``log(grid_size)`` (a union bound over the grid). Every method chooses
    on it.

Cross-validation of ``lam``
    :func:`cross_validate_lam` is the one K-fold machinery (stratified folds,
    per-fold seeds, folds in parallel through joblib, a :class:`LamCVResult`;
    fewer folds, with a :class:`FewerFoldsWarning`, when a class has fewer
    members than ``n_folds``: :func:`fold_count`);
    what a fold computes is a *scorer* returning its validation-AUC curve:

    * :class:`SMCPathScorer` -- one adaptive-tempering run per fold, from the
      prior to ``lam_max``, visits the Gibbs posteriors at
      ``gamma_t = lam_max * exponent_t`` for free. The :class:`PathScores`
      collector records, at every step, the scores of the held-out fold under
      the current point estimate; so each fold yields a whole validation-AUC
      curve ``gamma -> AUC`` without re-running anything (:func:`cv_lambda`
      adds the refit on all data).
    * :class:`RefitScorer` -- one fit per grid value (Gaussian VB).

    Both score ``metric``: the held-out AUC, or the accuracy of the vote
    (classification).

    Curves are put on the grid (linear interpolation in ``log gamma``) and
    averaged over folds; the best ``lam`` is the grid value of highest mean.
    The values within one standard error of it
    (:attr:`LamCVResult.within_one_se` [HTF09, Sec. 7.10]) are those the
    folds cannot tell apart; on small data sets that is often the whole
    grid, and the estimator then chooses among them by their certificate.
    :func:`holdout_path_choice` scores one held-out split along a
    warm-started path that stops where the held-out curve is flat (a few
    fits where K folds cost K per grid value: VB where it samples pairs);
    :func:`kfold_path_choice` climbs the K folds together the same way and
    stops where their mean curve is flat within its standard error (VB's
    folds).
    :func:`loo_lambda` gives the same result from a leave-one-out AUC that
    needs no refit (EP's cavity scores [OW00]): :func:`ep_loo_choice`
    and :func:`vb_loo_choice` run it along EP's and VB's paths.

Evidence maximisation
    For prior hyper-parameters ``xi`` (spike-and-slab ``p, v0, v1``, ARD
    variances, GP lengthscales), the empirical bound of [RACL14, Sec. 3.1]
    is minimised by maximising ``log Z_{xi, lam}``;
    :func:`evidence_grid` estimates it by SMC over a grid (independent runs in
    parallel through joblib). Under an *isotropic* Gaussian prior there is
    nothing to tune: the risk is invariant to ``theta -> c theta``, so the
    prior variance only rescales the radius and ``Z`` does not depend on it.

Parallelism goes through joblib (``n_jobs``); a user can send the runs to a
cluster through joblib's backend mechanism, e.g.::

    import joblib
    from dask.distributed import Client, LocalCluster
    client = Client(LocalCluster())
    with joblib.parallel_config(backend="dask"):
        result = cv_lambda(X, y, lam_max=2000, n_jobs=-1)

Example
-------
::

    from pac_particles.problem.datasets import load_dataset
    from pac_particles.sklearn.selection import cv_lambda
    X, y, _ = load_dataset("pima")
    cv = cv_lambda(X, y, lam_max=5 * len(y), n_folds=5, seed=0)
    cv.best_lam, cv.posterior.log_z

References
----------
[HTF09] Hastie, T., Tibshirani, R. and Friedman, J. (2009). The Elements of
Statistical Learning, 2nd ed. Springer, section 7.10.

[OW00] Opper, M. and Winther, O. (2000). Gaussian processes for
classification: mean-field algorithms. Neural Computation 12(11), 2655-2684.

[RACL14] Ridgway, J., Alquier, P., Chopin, N. and Liang, F. (2014).
PAC-Bayesian AUC classification and scoring. NIPS 27, section 3.1.
"""


from pac_particles.sklearn.selection.folds import (
    CLASSIFICATION_LAM_MAX_PER_POINT, LAM_MAX_PER_POINT, FewerFoldsWarning,
    LamCVResult, cross_validate_lam, cv_lambda, default_lam_max, fold_count,
    heldout_score, holdout_split, lam_grid, on_grid, stratified_folds)
from pac_particles.sklearn.selection.scorers import (
    METRICS, PathScores, RefitScorer, SMCPathScorer)
from pac_particles.sklearn.selection.leave_one_out import (
    ep_grid_choice, ep_loo_choice, loo_lambda, vb_loo_choice)
from pac_particles.sklearn.selection.holdout_path import (
    FLAT_TOL, holdout_path_choice, kfold_path_choice, paired_step)
from pac_particles.sklearn.selection.evidence import EvidenceGrid, evidence_grid
from pac_particles.sklearn.selection.certified import most_certified_step

__all__ = ["LAM_MAX_PER_POINT", "CLASSIFICATION_LAM_MAX_PER_POINT",
           "default_lam_max", "lam_grid", "LamCVResult", "on_grid",
           "FewerFoldsWarning", "fold_count", "stratified_folds",
           "cross_validate_lam", "heldout_score", "holdout_split", "METRICS", "PathScores",
           "SMCPathScorer", "RefitScorer", "cv_lambda", "loo_lambda",
           "ep_grid_choice", "ep_loo_choice", "vb_loo_choice",
           "EvidenceGrid", "evidence_grid", "most_certified_step",
           "FLAT_TOL", "holdout_path_choice", "kfold_path_choice",
           "paired_step"]
