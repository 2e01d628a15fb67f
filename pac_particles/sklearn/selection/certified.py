"""The certified choice of ``lam`` along a tempering path.

:func:`most_certified_step`: among the tempering steps of the refit (kept
step by step) that the folds cannot tell apart from the best (within one
standard error of the best mean validation AUC [HTF09, Sec. 7.10]), the
Gibbs posterior whose certificate is tightest, by a certify function given
by the caller (:func:`pac_particles.bounds.certify` with the estimator's
spec). The choice is free in ``delta`` when that certificate holds for
every posterior at once with its choices fixed before the data (the kl
bound's, and a part-A score fixed before the certifying rows): no Monte
Carlo estimate enters it.

References
----------
[HTF09] Hastie, T., Tibshirani, R. and Friedman, J. (2009). The Elements of
Statistical Learning, 2nd ed. Springer, section 7.10.
"""

from typing import Callable

import numpy as np

__all__ = ["most_certified_step"]


def most_certified_step(cv, certify_step: Callable):
    """The step of ``cv.posterior`` (a tempering path kept step by step)
    whose ``gamma`` is on the grid and within one standard error of the
    best mean validation AUC (the curve interpolated in ``log gamma`` as for
    the folds), with the smallest ``certify_step(posterior).bound``; ties
    (the same part-A certificate for every step: the certificate cannot
    tell the steps apart) go to the highest mean validation AUC, the
    folds' choice. (Ties to the smallest ``gamma``, the one-standard-error
    rule's parsimony, lost test AUC on the held-out sets, Pima and Colon:
    docs/benchmarks.md, "Default fits".) Returns the step's posterior
    (standard errors computed)."""
    post = cv.posterior
    # on the folds' (positive-vs-negative) scale of lam: PU labels
    gammas = post.gammas * (post.lam_pn / post.lam)
    steps = [t for t in range(1, post.n_steps + 1)
             if gammas[t] >= cv.grid[0] * (1 - 1e-9)
             and cv.mean_auc_at(gammas[t]) >= cv.one_se_floor]
    if not steps:
        # no step landed in the set (it can be narrow): the step nearest
        # to the best value, in log gamma
        steps = [1 + int(np.argmin(np.abs(np.log(gammas[1:])
                                          - np.log(cv.best_lam))))]
    bounds = np.array([certify_step(post.at_step(t, standard_errors=False))
                       .bound for t in steps])
    # equal bounds: the same certificate (the part-A score's), computed the
    # same way for each step; the folds decide among them
    tied = [t for t, bound in zip(steps, bounds) if bound <= bounds.min()]
    return post.at_step(max(tied, key=lambda t: cv.mean_auc_at(gammas[t])))
