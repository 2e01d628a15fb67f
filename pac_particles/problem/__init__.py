"""Layer 1, problem: the data, the risk and the prior of a Gibbs posterior.

* :mod:`~pac_particles.problem.data` -- validation and standardisation of
  ``(X, y)``; :mod:`~pac_particles.problem.datasets` -- built-in data sets
  and CSV files;
* :mod:`~pac_particles.problem.auc` -- the AUC risk kernel and PU conversions;
* :mod:`~pac_particles.problem.risks` -- the risk as a concept (AUC pairs,
  classification points);
* :mod:`~pac_particles.problem.probit_risk` and
  :mod:`~pac_particles.problem.gaussian_losses` -- the risks' expectations
  under a Gaussian (VB, SVGD, certificates), the numba kernels of the first
  in :mod:`~pac_particles.problem.probit_kernels`;
* :mod:`~pac_particles.problem.priors` -- Gaussian, spike-and-slab and GP
  priors;
* :mod:`~pac_particles.problem.problem` -- :class:`GibbsProblem`, the one
  set-up of a fit: validated data, risk, ``lam`` (PU-resolved), prior.
"""
