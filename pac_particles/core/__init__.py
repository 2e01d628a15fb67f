"""Layer 0, core: what every other layer uses and that knows nothing of a risk.

* :mod:`~pac_particles.core.checks` -- :class:`InputError` and the checks of
  scalar arguments;
* :mod:`~pac_particles.core.parallel` -- the one serial/parallel rule of the
  numba kernels, BLAS and numba thread limits;
* :mod:`~pac_particles.core.progress` -- progress of long work;
* :mod:`~pac_particles.core.gaussian` -- jittered Cholesky, Gaussian KL and
  draws, GP predictive;
* :mod:`~pac_particles.core.kernels` -- GP covariance functions;
* :mod:`~pac_particles.core.normal` -- the normal cdf and density from one
  exponential (the numba pair kernels of EP and VB);
* :mod:`~pac_particles.core.posterior_result` -- the protocol every fitted
  posterior follows (evidence, draws, point estimates, coefficients);
* :mod:`~pac_particles.core.weighted_particles` -- point estimates of a
  weighted sample;
* :mod:`~pac_particles.core.inference_data` -- export to ArviZ.
"""
