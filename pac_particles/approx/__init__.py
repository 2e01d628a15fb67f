"""Layer 2, approx: Gaussian and particle approximations of the Gibbs
posterior that need no sampler.

* :mod:`~pac_particles.approx.ep` -- Expectation Propagation (linear,
  spike-and-slab, GP scores; classification);
* :mod:`~pac_particles.approx.loo` -- leave-one-out from a fitted Gaussian
  (EP by site removal, VB by one Newton step);
* :mod:`~pac_particles.approx.variational` -- Gaussian variational inference
  for any expected risk (families, optimisers, ``VBResult``);
* :mod:`~pac_particles.approx.vb` -- Gaussian variational Bayes of ranking
  and classification;
* :mod:`~pac_particles.approx.svgd` -- Stein variational gradient descent.
"""
