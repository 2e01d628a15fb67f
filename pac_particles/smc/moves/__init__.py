"""MCMC steps (``particles`` ``ArrayMCMC``) for the Gibbs posteriors of the
AUC [RACL14] and classification [GH01] risks.

Each step moves a whole array of particles at once and plugs into
``particles.smc_samplers.MCMCSequenceWF`` (waste-free SMC) or
``AdaptiveMCMCSequence`` (standard SMC). The AUC Gibbs posterior is piecewise
constant in ``theta`` and invariant to ``theta -> c theta``: a Gaussian random
walk calibrated on the particle covariance mixes poorly on it as d grows.
Elliptical slice moves travel along ellipses through a Gaussian (the prior
``N(0, S)``, or a Gaussian fitted to the particles); they never reject and
have no step size to tune.

=========================  ================  ================  ==============
class                      MOVES key         module            algorithm
=========================  ================  ================  ==============
EllipticalSlice            elliptical_slice  elliptical_slice  [MAM10]
CalibratedEllipticalSlice  calibrated_slice  elliptical_slice  [NMA14]
ExactEllipseGibbs          exact_gibbs       exact_ellipse     [GH01]
SpikeSlabMove              spike_slab        spike_slab        [GM93], [MAM10]
SpikeSlabFlipMove          spike_slab_flips  spike_slab_flips  [GM93], [Gre95]
RegularizedRandomWalk      random_walk       random_walk       [RGG97]
=========================  ================  ================  ==============

* :class:`EllipticalSlice`: slice along ellipses of the prior ``N(0, S)``,
  shrinking a bracket of angles until a level of the likelihood is met.
* :class:`CalibratedEllipticalSlice`: the generalised elliptical slice, on
  ellipses of a Gaussian fitted to the weighted particles at each tempering
  step; exact for any continuous prior, nearly independent moves when the
  target is close to the fit. The default for Gaussian priors.
* :class:`ExactEllipseGibbs`: the 0-1 classification risk (2n break
  points) and the AUC risk (at most 2P, P = n_pos n_neg) are piecewise
  constant along a prior ellipse; sort the break points, sweep, and draw the
  angle exactly (the kernel Gibbs sampler). O(n log n) per particle and
  move for classification, O(P log P) for the AUC; linear or GP latent
  scores.
* :class:`SpikeSlabMove`: exact Gibbs update of the indicators ``z | theta``,
  then a slice move of ``theta | z`` under ``N(0, diag(v_z))``.
* :class:`SpikeSlabFlipMove`: that step, then Metropolis flips of single
  indicators with their coefficient rescaled (the indicators mix under a
  narrow spike; one risk evaluation per flip).
* :class:`RegularizedRandomWalk`: ``particles``' random walk Metropolis on
  the weighted particle covariance, with a ridge so that calibration never
  fails with few or collinear particles.

``base`` holds what they share: :func:`tempering_exponent`, the Gaussian
reference, the vectorised slice loop and the evaluation counter.
:func:`default_move` picks the move :func:`pac_particles.smc.posterior.run_smc`
uses, :func:`make_move` builds one by name (:data:`MOVES`), and
:func:`check_move_fits` refuses a move that cannot work with a model.

The tempering exponent. ``particles`` applies a move with the target
``current_target(epn)``, ``epn = x.shared['exponents'][-1]``, but does not
pass ``epn`` to the move. The slice moves never need it (they read ``x.lpost``,
see :mod:`pac_particles.smc.moves.base`); :class:`ExactEllipseGibbs` reads it with
:func:`tempering_exponent`.

Example
-------
::

    from particles import smc_samplers as ssp
    from pac_particles.problem.datasets import load_dataset
    from pac_particles.smc.models import AUCGibbsModel
    from pac_particles.smc.moves import EllipticalSlice, make_move

    X, y, _ = load_dataset("sonar")
    model = AUCGibbsModel(X, y, lam=len(y))
    move = ssp.MCMCSequenceWF(mcmc=EllipticalSlice.for_model(model), len_chain=10)
    exact = make_move("exact_gibbs", model, max_pairs=20_000)
    # or simply pac_particles.smc.posterior.run_smc(model), which uses
    # default_move(model): CalibratedEllipticalSlice() here

References
----------
[MAM10] Murray, I., Adams, R. P. and MacKay, D. J. C. (2010). Elliptical
slice sampling. AISTATS, JMLR W&CP 9, 541-548.

[NMA14] Nishihara, R., Murray, I. and Adams, R. P. (2014). Parallel MCMC
with generalized elliptical slice sampling. JMLR 15, 2087-2112.

[GH01] Graepel, T. and Herbrich, R. (2001). The kernel Gibbs sampler.
NIPS 13.

[GM93] George, E. I. and McCulloch, R. E. (1993). Variable selection via
Gibbs sampling. JASA 88, 881-889.

[RGG97] Roberts, G. O., Gelman, A. and Gilks, W. R. (1997). Weak
convergence and optimal scaling of random walk Metropolis algorithms. Annals
of Applied Probability 7, 110-120.

[RACL14] Ridgway, J., Alquier, P., Chopin, N. and Liang, F. (2014).
PAC-Bayesian AUC classification and scoring. NIPS 27.
"""

from particles import smc_samplers as ssp

from pac_particles.core.checks import InputError, check_choice
from pac_particles.problem.priors import SpikeSlabPrior, prior_gaussian_factor
from pac_particles.smc.moves.base import tempering_exponent
from pac_particles.smc.moves.elliptical_slice import CalibratedEllipticalSlice, EllipticalSlice
from pac_particles.smc.moves.exact_ellipse import (ExactEllipseGibbs, ellipse_angle_draws,
                            point_angle_draws)
from pac_particles.smc.moves.random_walk import RegularizedRandomWalk
from pac_particles.smc.moves.spike_slab import SpikeSlabMove, check_spike_has_density
from pac_particles.smc.moves.spike_slab_flips import SpikeSlabFlipMove

__all__ = ["RegularizedRandomWalk", "EllipticalSlice", "CalibratedEllipticalSlice",
           "ExactEllipseGibbs", "SpikeSlabMove", "SpikeSlabFlipMove",
           "tempering_exponent",
           "ellipse_angle_draws", "point_angle_draws", "MOVES", "make_move", "default_move",
           "check_move_fits"]


def _random_walk(model, **kwargs):
    return RegularizedRandomWalk(**kwargs)


def _calibrated_slice(model, **kwargs):
    return CalibratedEllipticalSlice(**kwargs)


#: Move builders by name: ``MOVES[name](model, **kwargs)``.
MOVES = {
    "random_walk": _random_walk,
    "elliptical_slice": EllipticalSlice.for_model,
    "calibrated_slice": _calibrated_slice,
    "exact_gibbs": ExactEllipseGibbs,
    "spike_slab": SpikeSlabMove.for_model,
    "spike_slab_flips": SpikeSlabFlipMove.for_model,
}


def make_move(name, model, **kwargs):
    """Build the move called ``name`` (a key of :data:`MOVES`) for ``model``."""
    return MOVES[check_choice(name, "move", sorted(MOVES))](model, **kwargs)


def default_move(model):
    """The move :func:`~pac_particles.smc.posterior.run_smc` uses by default.

    :class:`EllipticalSlice` on the kernel's Cholesky factor for GP latent
    scores (``model.is_gp``: the exact prior ellipse, no n x n covariance
    fit); :class:`SpikeSlabMove` for a
    :class:`~pac_particles.problem.priors.SpikeSlabPrior`;
    :class:`CalibratedEllipticalSlice` for a centred Gaussian prior (the most
    efficient move in ``diagnostics/compare_moves.py``, well ahead of the
    random walk and of the prior-based :class:`EllipticalSlice`);
    :class:`RegularizedRandomWalk` otherwise.
    """
    prior = getattr(model, "prior", None)
    if getattr(model, "is_gp", False):
        return EllipticalSlice(prior_chol=model.kernel_chol)
    if isinstance(prior, SpikeSlabPrior):
        return SpikeSlabMove(prior)
    if prior is not None and prior_gaussian_factor(prior) is not None:
        return CalibratedEllipticalSlice()
    return RegularizedRandomWalk()


# Moves that calibrate on the particles' covariance (n x n for GP scores).
_COVARIANCE_CALIBRATED = (ssp.ArrayRandomWalk, CalibratedEllipticalSlice)
# Moves that never update the spike-and-slab indicators z.
_FIXED_Z = (ssp.ArrayRandomWalk, ssp.ArrayIndependentMetropolis,
            EllipticalSlice, CalibratedEllipticalSlice, ExactEllipseGibbs)


def check_move_fits(mcmc, model):
    """Refuse an ``ArrayMCMC`` step that cannot work on ``model``'s
    particles, with the reason and the move to use instead.

    * covariance-calibrated moves (random walk, calibrated slice) for GP
      latent scores (``model.is_gp``);
    * spike-and-slab prior with a Dirac spike ``v0 = 0`` (no density);
    * spike-and-slab prior with a move that never updates ``z``;
    * :class:`SpikeSlabMove` without a spike-and-slab prior.

    Raises
    ------
    InputError
    """
    prior = getattr(model, "prior", None)
    if getattr(model, "is_gp", False) and isinstance(mcmc, _COVARIANCE_CALIBRATED):
        raise InputError(
            f"{type(mcmc).__name__} is refused for GP latent scores: it "
            "calibrates on the n x n covariance of the particles, which is "
            "singular or unstable unless there are many more particles than "
            "training points (the failure reported for GP scores in the SMC-AUC "
            "student report). Use the default, EllipticalSlice on the kernel's "
            "Cholesky factor (model.kernel_chol), which follows the GP prior "
            "exactly and needs no tuning")
    if isinstance(prior, SpikeSlabPrior):
        check_spike_has_density(prior)
        if isinstance(mcmc, _FIXED_Z):
            raise InputError(
                f"{type(mcmc).__name__} cannot move spike-and-slab particles "
                "(a float field theta and a bool field z; the random walk needs "
                "plain float arrays, the Gaussian elliptical moves never update "
                "z): use pac_particles.smc.moves.SpikeSlabMove (the default)")
    elif isinstance(mcmc, SpikeSlabMove):
        raise InputError("SpikeSlabMove needs a SpikeSlabPrior (the model's "
                         f"prior is {type(prior).__name__})")
