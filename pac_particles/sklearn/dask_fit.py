"""PACBayesAUC on data left on a Dask cluster.

``PACBayesAUC().fit(X, y)`` with a Dask array or DataFrame ``X`` (and ``y``
a Dask array or Series, or in memory) never gathers the data on one
process: the problem is set up by two reductions on the cluster
(:mod:`pac_particles.problem.dask_data`), Gaussian VB runs Adam on fresh
pairs whose rows it fetches in rounds, and the certificate bounds
``E_rho[R_n]`` from independent pairs fetched from the cluster (its
share of ``eps`` paid). What needs training rows otherwise (the training
AUC, the Youden cut, Platt's slope) reads a uniform sample of
:data:`~pac_particles.sklearn.binary.CALIBRATION_ROWS` rows, fetched once.
Scores of a Dask ``X`` are Dask arrays (lazy).

What the cluster fit does not do, each refused with an ``InputError`` that
says what to do: ``lam='cv'`` (choose ``lam`` on an in-memory sample, or
pass a number), methods other than VB, the spike-and-slab prior, EP's
evidence and PU labels.

GP scores (``kernel='rbf'`` or a callable kernel) take the reduced-rank
prior (:mod:`pac_particles.sklearn.reduced_rank_gp`): its Nystrom map is
built on the distinct rows of the uniform sample above, gathered once
(inducing rows drawn among them with the fit's seed; for ``'rbf'`` the
lengthscale and, with ``rank='auto'``, the rank chosen on them by the rule
of the in-memory fit), and VB then runs on the features of the pairs it
draws (:class:`~pac_particles.problem.dask_features.DaskFeatureData`).
The exact GP is never fitted there: ``rank`` is at most the sample's
distinct rows.

Example
-------
::

    import dask.array as da
    from dask.distributed import Client, LocalCluster
    from pac_particles.sklearn.estimator import PACBayesAUC
    with LocalCluster() as cluster, Client(cluster):
        X = da.from_zarr("big.zarr").persist()       # rows on the workers
        y = da.from_zarr("labels.zarr").persist()
        est = PACBayesAUC(lam=float(X.shape[0]), random_state=0).fit(X, y)
        est.certified_auc_risk_, est.coef_
"""

import dataclasses

import numpy as np

from pac_particles.core.checks import InputError
from pac_particles.problem.dask_data import DaskRows, as_dask_matrix
from pac_particles.problem.dask_features import DaskFeatureData
from pac_particles.problem.problem import GibbsProblem
from pac_particles.problem.risks import duplicate_groups
from pac_particles.sklearn.binary import CALIBRATION_ROWS
from pac_particles.sklearn.reduced_rank_gp import feature_map_of_rows, gp_rank

__all__ = ["cluster_problem", "cluster_decision_function"]


def _check_cluster_parameters(est):
    refused = [(isinstance(est.lam, str),
                "lam='cv' (choose lam on an in-memory sample of the rows, or "
                "pass a number such as the number of rows)"),
               (est.prior != "gaussian", "the spike-and-slab prior"),
               (est.hyperparameters != "fixed", "EP's evidence"),
               (est.pu_prior is not None, "PU labels (pu_prior)")]
    for refused_here, what in refused:
        if refused_here:
            raise InputError(f"a fit on a Dask collection does not support "
                             f"{what}")


def cluster_problem(est, X, y):
    """``(problem, X_sample, positives_sample)`` of a fit on Dask ``(X,
    y)``: the :class:`~pac_particles.problem.problem.GibbsProblem` whose data
    stay on the cluster, and a uniform sample of the raw rows with their
    labels (the training rows of what reads them). Sets ``classes_``,
    ``n_features_in_`` (and ``feature_names_in_`` for a DataFrame)."""
    _check_cluster_parameters(est)
    problem = GibbsProblem.ranking(X, y, est.lam, est.standardize)
    data = problem.data
    est.classes_ = data.classes
    est.n_features_in_ = data.n_raw_features
    est.__dict__.pop("feature_names_in_", None)
    if hasattr(X, "columns"):
        est.feature_names_in_ = np.asarray([str(c) for c in X.columns],
                                           dtype=object)
    # a uniform sample of rows: the class counts binomial, as they would be
    rng = np.random.default_rng([0 if est.random_state is None
                                 else est.random_state, 4])
    k = min(CALIBRATION_ROWS, data.n)
    k_pos = int(rng.binomial(k, data.n_pos / data.n))
    pos, neg = DaskRows(data, standardize=False).draw(rng, k_pos, k - k_pos)
    positives = np.concatenate([np.ones(k_pos, bool), np.zeros(k - k_pos, bool)])
    X_sample = np.vstack([pos, neg])
    if est.kernel is not None:
        problem = _feature_problem(est, problem, X_sample, positives)
    return problem, X_sample, positives


def _feature_problem(est, problem, X_sample, positives):
    """The reduced-rank GP problem of the cluster's rows: the map built on
    the distinct rows of the uniform sample (module docstring), with the
    rank of ``est.rank`` for all the rows, at most the sample's."""
    data = problem.data
    Z = data.standardized(X_sample)
    # a sample drawn with replacement repeats rows: one inducing input each
    distinct = np.sort(np.unique(duplicate_groups(Z), return_index=True)[1])
    rank = min(gp_rank(est.rank, data.n), distinct.size)
    feature_map = feature_map_of_rows(
        Z, positives, distinct, est.kernel, rank, est.random_state,
        weigh_half=isinstance(est.rank, str))
    return dataclasses.replace(problem,
                               data=DaskFeatureData(data, feature_map))


def cluster_decision_function(est, X):
    """The fitted scores of a Dask ``X``, as a (lazy) Dask array: linear
    scores, or a GP's through the feature map chunk by chunk."""
    X = as_dask_matrix(X, "X")
    if X.shape[1] != est.n_features_in_:
        raise InputError(f"X has {X.shape[1]} features, but the estimator "
                         f"was fitted with {est.n_features_in_}")
    if est.kernel is not None:
        return est._raw_scores(X) - est.threshold_
    return X @ est.coef_ + est.intercept_
