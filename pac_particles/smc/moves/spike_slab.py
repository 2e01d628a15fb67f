"""Gibbs-within-slice move for the spike-and-slab prior.

For :class:`~pac_particles.problem.priors.SpikeSlabPrior` the particles carry the
coefficients ``theta`` and the inclusion indicators ``z``. One step of
:class:`SpikeSlabMove`:

1. ``z_k | theta_k ~ Bernoulli(p N(theta_k; 0, v1) / (p N(theta_k; 0, v1)
   + (1 - p) N(theta_k; 0, v0)))``: the exact Gibbs update of [GM93], no data
   (the likelihood does not depend on ``z``);
2. one elliptical slice step [MAM10] of ``theta`` under the Gaussian prior
   ``N(0, diag(v_z))`` given the new ``z`` (a different prior per particle).

A Dirac spike (``v0 = 0``) has no density and SMC cannot weight it:
:func:`check_spike_has_density` refuses it (EP, :mod:`pac_particles.approx.ep`,
handles ``v0 = 0``).

Example
-------
::

    from pac_particles.smc.models import AUCGibbsModel
    from pac_particles.smc.moves import SpikeSlabMove
    from pac_particles.problem.priors import SpikeSlabPrior

    model = AUCGibbsModel(X, y, lam=len(y), prior=SpikeSlabPrior(d=X.shape[1]))
    move = SpikeSlabMove.for_model(model)

References
----------
[GM93] George, E. I. and McCulloch, R. E. (1993). Variable selection via
Gibbs sampling. JASA 88, 881-889.

[MAM10] Murray, I., Adams, R. P. and MacKay, D. J. C. (2010). Elliptical
slice sampling. AISTATS, JMLR W&CP 9, 541-548.
"""

import numpy as np
from particles import smc_samplers as ssp

from pac_particles.core.checks import InputError
from pac_particles.problem.priors import SpikeSlabPrior
from pac_particles.smc.moves.base import EvaluationCounter, GaussianReference, check_max_shrinks

__all__ = ["SpikeSlabMove", "check_spike_has_density"]


def check_spike_has_density(prior):
    """Refuse a spike-and-slab prior with a Dirac spike (``v0 = 0``): SMC
    needs the density of the augmented prior."""
    if np.any(prior.v0 <= 0):
        raise InputError(
            "spike variance v0 = 0 (a Dirac spike) is not supported by SMC: "
            "the augmented prior has no density. Use v0 > 0, or EP "
            "(pac_particles.approx.ep) for v0 = 0")


class SpikeSlabMove(ssp.ArrayMCMC, EvaluationCounter):
    """Gibbs ``z | theta`` [GM93] then elliptical slice ``theta | z`` [MAM10].

    Parameters
    ----------
    prior : pac_particles.problem.priors.SpikeSlabPrior
        Must be the prior of the model; ``v0 > 0`` (a Dirac spike has no
        density: use EP, :mod:`pac_particles.approx.ep`).
    max_shrinks : int
        As in :class:`~pac_particles.smc.moves.EllipticalSlice`.

    Notes
    -----
    A narrow spike makes ``z`` sticky [GM93]: a coefficient in the spike
    flips to the slab with probability of order ``p sqrt(v0 / v1)`` per
    move. SMC compensates through reweighting of the initial (prior)
    population, but expect the inclusion probabilities to need more particles
    as ``v0 / v1`` shrinks.
    """

    def __init__(self, prior, max_shrinks=200):
        if not isinstance(prior, SpikeSlabPrior):
            raise InputError("SpikeSlabMove needs a "
                             "pac_particles.problem.priors.SpikeSlabPrior")
        check_spike_has_density(prior)
        self.prior = prior
        self.max_shrinks = check_max_shrinks(max_shrinks)
        self._reset_counts()

    @classmethod
    def for_model(cls, model, **kwargs):
        return cls(model.prior, **kwargs)

    def calibrate(self, W, x):
        names = x.theta.dtype.names or ()
        if "z" not in names or x.theta["theta"].shape[1] != self.prior.d:
            raise InputError("SpikeSlabMove needs particles with fields theta "
                             f"and z of dimension {self.prior.d}")

    def update_z(self, x):
        """Exact Gibbs update of ``z | theta`` (in place, fields kept
        consistent: ``lpost`` changes by the change of the prior)."""
        lprior_old = self.prior.logpdf(x.theta)
        if getattr(x, "lprior", None) is not None and not np.allclose(
                x.lprior, lprior_old, rtol=1e-10, atol=1e-8):
            raise InputError("the target's prior is not this SpikeSlabMove's "
                             "prior (build it with SpikeSlabMove.for_model)")
        probs = self.prior.inclusion_conditional(x.theta["theta"])
        x.theta["z"] = np.random.uniform(size=probs.shape) < probs
        lprior_new = self.prior.logpdf(x.theta)
        x.lpost = x.lpost + (lprior_new - lprior_old)
        if getattr(x, "lprior", None) is not None:
            x.lprior = lprior_new

    def step(self, x, target=None):
        """One Gibbs-then-slice step (in place); returns ``1 / mean
        evaluations``."""
        self.update_z(x)
        reference = GaussianReference(
            std=np.sqrt(self.prior.variances(x.theta["z"])))
        return self._slice_step(x, target, reference.draw(x.N), reference)
