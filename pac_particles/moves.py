"""MCMC steps for AUC Gibbs posteriors, as ``particles`` ``ArrayMCMC`` steps.

Each step moves a whole array of particles at once and plugs into
``particles.smc_samplers.MCMCSequenceWF`` (waste-free SMC) or
``AdaptiveMCMCSequence`` (standard SMC).

* :class:`RegularizedRandomWalk`: the Gaussian random walk Metropolis of
  ``particles``, calibrated on the weighted particle covariance, with a ridge
  so that calibration never fails when resampled particles are fewer than (or
  collinear in) the dimension — the failure reported for GP scores in the
  SMC-AUC student report.

Example
-------
::

    from particles import smc_samplers as ssp
    from pac_particles.moves import RegularizedRandomWalk
    move = ssp.MCMCSequenceWF(mcmc=RegularizedRandomWalk(), len_chain=10)
"""

import numpy as np
from scipy import linalg
from particles import resampling as rs
from particles import smc_samplers as ssp

__all__ = ["RegularizedRandomWalk"]


class RegularizedRandomWalk(ssp.ArrayRandomWalk):
    """Random walk Metropolis with proposal covariance
    ``(2.38^2 / d) (Sigma_hat + ridge * mean(diag Sigma_hat) I)``.

    Parameters
    ----------
    ridge : float >= 0
        Relative ridge added to the weighted particle covariance.
    """

    def __init__(self, ridge=1e-6):
        if ridge < 0:
            raise ValueError(f"ridge must be >= 0, got {ridge}")
        self.ridge = ridge

    def calibrate(self, W, x):
        arr = ssp.view_2d_array(x.theta)
        d = arr.shape[1]
        _, cov = rs.wmean_and_cov(W, arr)
        cov = np.atleast_2d(cov)
        jitter = self.ridge * max(np.mean(np.diag(cov)), 1e-300)
        while True:
            try:
                chol = linalg.cholesky(cov + jitter * np.eye(d), lower=True)
                break
            except linalg.LinAlgError:
                jitter = 10 * jitter if jitter > 0 else 1e-12
        x.shared["chol_cov"] = (2.38 / np.sqrt(d)) * chol
