"""Gaussian random walk Metropolis calibrated on the particles, with a ridge.

:class:`RegularizedRandomWalk` is the random walk of ``particles``
(``ArrayRandomWalk``) with proposal covariance ``(2.38^2 / d) (Sigma_hat +
ridge * mean(diag Sigma_hat) I)``, ``Sigma_hat`` the weighted covariance of
the particles (the scaling of [RGG97]): the ridge makes the calibration succeed when the
resampled particles are fewer than (or collinear in) the dimension -- the
failure reported for GP scores in the SMC-AUC student report. The AUC Gibbs
posterior is piecewise constant and scale invariant, on which a random walk
mixes poorly as d grows: the elliptical moves are the defaults, this one is
the fallback for non-Gaussian priors.

Example
-------
::

    from particles import smc_samplers as ssp
    from pac_particles.smc.moves import RegularizedRandomWalk
    move = ssp.MCMCSequenceWF(mcmc=RegularizedRandomWalk(ridge=1e-6),
                              len_chain=10)

References
----------
[RGG97] Roberts, G. O., Gelman, A. and Gilks, W. R. (1997). Weak
convergence and optimal scaling of random walk Metropolis algorithms. Annals
of Applied Probability 7, 110-120.
"""

import numpy as np
from particles import smc_samplers as ssp

from pac_particles.core import parallel
from pac_particles.smc.moves.base import check_ridge, weighted_gaussian_fit

__all__ = ["RegularizedRandomWalk"]


class RegularizedRandomWalk(ssp.ArrayRandomWalk):
    """Random walk Metropolis with proposal covariance
    ``(2.38^2 / d) (Sigma_hat + ridge * mean(diag Sigma_hat) I)``.

    Parameters
    ----------
    ridge : float >= 0
        Relative ridge added to the weighted particle covariance.

    Notes
    -----
    Needs plain float particles (``view_2d_array``): not usable with the
    spike-and-slab prior, whose particles carry a bool field ``z``. Refused
    for GP latent scores (:func:`~pac_particles.smc.moves.check_move_fits`).
    """

    def __init__(self, ridge=1e-6):
        self.ridge = check_ridge(ridge)

    def calibrate(self, W, x):
        arr = ssp.view_2d_array(x.theta)
        _, chol = weighted_gaussian_fit(W, arr, self.ridge)
        x.shared["chol_cov"] = (2.38 / np.sqrt(arr.shape[1])) * chol

    def proposal(self, x, xprop):
        with parallel.one_blas_thread():
            return super().proposal(x, xprop)
