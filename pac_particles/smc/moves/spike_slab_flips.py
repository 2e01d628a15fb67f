"""Spike-and-slab move with scaled flips of the inclusion indicators.

Under a narrow spike the Gibbs update of ``z_k | theta_k`` of
:class:`~pac_particles.smc.moves.SpikeSlabMove` hardly ever moves a
coefficient out of the spike: its ``theta_k`` is of order ``sqrt(v0)``,
where the slab's density is ``sqrt(v0 / v1)`` times smaller. The
indicators then keep the values of the initial population, and in d = 180
(DNA, [RACL14, Fig. 3]) the sampler does not converge.

:class:`SpikeSlabFlipMove` adds, after that step, Metropolis proposals that
flip one indicator and rescale its coefficient with it,

    (z_k, theta_k) -> (1 - z_k, theta_k sqrt(v_{1 - z_k} / v_{z_k})),

a deterministic involution (applied twice it returns to the start), so the
Metropolis-Hastings ratio is the target ratio times the Jacobian
``sqrt(v_new / v_old)`` [Gre95]. Under the prior alone it reduces to the
prior odds ``p_new / p_old`` (the standardised coefficient
``theta_k / sqrt(v_{z_k})`` keeps its ``N(0, 1)`` law): the move is the
Gibbs update of ``z`` in the non-centred parametrisation
``theta_k = u_k sqrt(v_{z_k})``, where the indicators mix whatever
``v0 / v1``. The data enter through the change of the tempered
likelihood, one risk evaluation per proposal for all particles at once.
``n_flips`` indicators, drawn without replacement, are proposed per step
(the block of indicators updated each step; ``None``: all of them).

Example
-------
::

    from pac_particles.smc.models import AUCGibbsModel
    from pac_particles.smc.moves.spike_slab_flips import SpikeSlabFlipMove
    from pac_particles.smc.posterior import run_smc
    from pac_particles.problem.priors import SpikeSlabPrior

    model = AUCGibbsModel(X, y, lam=len(y),
                          prior=SpikeSlabPrior(d=X.shape[1], v0=1e-4))
    post = run_smc(model, move=SpikeSlabFlipMove.for_model(model, n_flips=20))

References
----------
[Gre95] Green, P. J. (1995). Reversible jump Markov chain Monte Carlo
computation and Bayesian model determination. Biometrika 82(4), 711-732.
[RACL14] Ridgway, J., Alquier, P., Chopin, N. and Liang, F. (2014).
PAC-Bayesian AUC classification and scoring. NIPS 27.
"""

from __future__ import annotations

import numpy as np

from pac_particles.core.checks import check_count
from pac_particles.smc.moves.spike_slab import SpikeSlabMove

__all__ = ["SpikeSlabFlipMove"]


class SpikeSlabFlipMove(SpikeSlabMove):
    """:class:`~pac_particles.smc.moves.SpikeSlabMove` followed by
    ``n_flips`` scaled flips of single indicators (module docstring).

    Parameters
    ----------
    prior : pac_particles.problem.priors.SpikeSlabPrior, ``v0 > 0``.
    n_flips : int or None
        Indicators proposed per step (a random block, one at a time); None:
        all ``d``. Each costs one target evaluation of all particles.
    max_shrinks : int
        As in :class:`~pac_particles.smc.moves.EllipticalSlice`.
    """

    def __init__(self, prior, n_flips: int | None = None, max_shrinks=200):
        super().__init__(prior, max_shrinks=max_shrinks)
        self.n_flips = (prior.d if n_flips is None
                        else min(check_count(n_flips, "n_flips"), prior.d))
        self.n_proposed = 0
        self.n_accepted = 0

    @property
    def flip_acceptance(self) -> float:
        """Share of the flip proposals accepted so far."""
        return (self.n_accepted / self.n_proposed if self.n_proposed
                else float("nan"))

    def flip(self, x, target, k: int) -> np.ndarray:
        """One scaled-flip proposal of indicator ``k`` for every particle,
        accepted or not by Metropolis-Hastings (in place); returns the
        acceptance mask."""
        d = self.prior.d
        v0 = np.broadcast_to(self.prior.v0, (d,))[k]
        v1 = np.broadcast_to(self.prior.v1, (d,))[k]
        prop = x.theta.copy()
        z = prop["z"][:, k]
        # into the slab: scale up by sqrt(v1 / v0); into the spike: down
        log_jacobian = np.where(z, 0.5 * np.log(v0 / v1), 0.5 * np.log(v1 / v0))
        prop["theta"][:, k] *= np.exp(log_jacobian)
        prop["z"][:, k] = ~z
        xprop = x.__class__(theta=prop)
        target(xprop)
        log_ratio = xprop.lpost - x.lpost + log_jacobian
        accept = np.log(np.random.uniform(size=x.N)) < log_ratio
        for key, value in xprop.dict_fields.items():
            getattr(x, key)[accept] = value[accept]
        self.n_proposed += x.N
        self.n_accepted += int(accept.sum())
        return accept

    def step(self, x, target=None):
        """The Gibbs-then-slice step, then ``n_flips`` scaled flips;
        returns what the slice step returns (``1 / mean evaluations``)."""
        rate = super().step(x, target)
        for k in np.random.choice(self.prior.d, self.n_flips, replace=False):
            self.flip(x, target, int(k))
        return rate
