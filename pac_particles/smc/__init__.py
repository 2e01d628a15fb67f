"""Layer 3, smc: the reference sampler and what is built on it.

* :mod:`~pac_particles.smc.gibbs_model` -- what the models share: the
  problem, ``loglik = -lam r_n``, the linear and GP parametrisations;
* :mod:`~pac_particles.smc.models` -- the ``particles`` static models, built
  from ``(X, y, lam)`` or ``from_problem``;
* :mod:`~pac_particles.smc.tempering` -- :class:`RobustAdaptiveTempering`;
* :mod:`~pac_particles.smc.moves` -- the MCMC moves, one file each;
* :mod:`~pac_particles.smc.posterior` -- :func:`run_smc` and
  :func:`run_smc_chains`;
* :mod:`~pac_particles.smc.result` -- :class:`SMCPosterior`, what a run
  returns (a ``PosteriorResult``);
* :mod:`~pac_particles.smc.importance_evidence` -- ``log Z`` by importance
  sampling from an approximation of the layer below (EP);
* :mod:`~pac_particles.smc.gaussian_bridge` -- the Gaussian approximation
  ``q`` (EP's, VB's) that the default run starts from, and the bridge
  ``q^(1-t) pi^t``;
* :mod:`~pac_particles.smc.direction_weights` -- importance weights of the
  directions alone for the scale-invariant risks;
* :mod:`~pac_particles.smc.adaptive_importance` -- ``q`` refitted to its
  weighted draws before the default run trusts it;
* :mod:`~pac_particles.smc.single_run_variance` -- single-run error bars;
* :mod:`~pac_particles.smc.label_noise` -- evidence of the label-noise level;
* :mod:`~pac_particles.smc.kernel_gibbs_sampler` -- the kernel Gibbs
  sampler, an MCMC reference for classification.
"""
