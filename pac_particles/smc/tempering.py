"""Adaptive tempering from the prior to the Gibbs posterior, robust on steep targets.

``particles`` tempers ``prior * exp(exponent * loglik)`` from exponent 0 to 1,
choosing each increment so that the ESS of the reweighted particles is
``ESSrmin * N`` [DC22]. With ``loglik = -lam * r_n`` the path visits the
Gibbs posteriors at ``gamma_t = lam * exponent_t``, with their evidences.

:class:`RobustAdaptiveTempering` is that Feynman-Kac model with an exponent
search that cannot fail when the target is steep (large ``lam``), and
:func:`check_reached_target` refuses a run that stopped before exponent 1
(``particles`` stops silently at ``max_iter``).

Example
-------
::

    import particles
    from pac_particles.smc.models import AUCGibbsModel
    from pac_particles.smc.tempering import RobustAdaptiveTempering, check_reached_target
    fk = RobustAdaptiveTempering(AUCGibbsModel(X, y, lam=len(y)),
                                 wastefree=True, len_chain=10)
    smc = particles.SMC(fk=fk, N=200)
    smc.run()
    check_reached_target(smc)             # 1.0

References
----------
[DC22] Dau, H.-D. and Chopin, N. (2022). Waste-free Sequential Monte Carlo.
JRSS B 84, 114-148.

Chopin, N. (2002). A sequential particle filter method for static models.
Biometrika 89, 539-551.
"""

from scipy import optimize
from particles import resampling as rs
from particles import smc_samplers as ssp

from pac_particles.smc.moves import check_move_fits, default_move

__all__ = ["RobustAdaptiveTempering", "check_reached_target"]


class RobustAdaptiveTempering(ssp.AdaptiveTempering):
    """Adaptive tempering whose exponent search cannot fail.

    ``particles`` 0.4 solves ``ESS(delta) = ESSrmin * N`` with
    ``brentq(f, 1e-12, 1 - epn)``, which raises when the ESS already falls
    below target at ``delta = 1e-12`` (a very steep target), and its absolute
    tolerance of 2e-12 is coarser than such increments. Here the left end of
    the bracket is shrunk until the sign changes and the tolerance follows it. ``done`` is unchanged;
    use :func:`check_reached_target` after a run since ``particles`` stops
    silently at ``max_iter``.

    Without ``move`` the chains run the model's own move
    (:func:`~pac_particles.smc.moves.default_move`: elliptical slice on the
    kernel's factor for GP latent scores, where ``particles``' default
    random walk needs a non-singular n x n covariance of the particles and
    fails with fewer particles than points); a bare ``ArrayMCMC`` step is
    wrapped in the sequence ``wastefree`` asks for. Every move is checked
    against the model (:func:`~pac_particles.smc.moves.check_move_fits`).
    """

    def __init__(self, model=None, wastefree=True, len_chain=10, move=None,
                 **kwargs):
        if move is None:
            move = default_move(model)
        if not isinstance(move, ssp.MCMCSequence):
            sequence = (ssp.MCMCSequenceWF if wastefree
                        else ssp.AdaptiveMCMCSequence)
            move = sequence(mcmc=move, len_chain=len_chain)
        check_move_fits(move.mcmc, model)
        super().__init__(model=model, wastefree=wastefree,
                         len_chain=len_chain, move=move, **kwargs)

    def logG(self, t, xp, x):
        ess_min = self.ESSrmin * x.N
        epn = x.shared["exponents"][-1]

        def ess_gap(delta):
            return rs.essl(delta * x.llik) - ess_min

        if ess_gap(1.0 - epn) > 0:
            delta, new_epn = 1.0 - epn, 1.0  # last step: exactly 1
        else:
            left = min(1e-12, 0.5 * (1.0 - epn))
            while ess_gap(left) <= 0 and left > 1e-300:
                left *= 1e-3
            if ess_gap(left) <= 0:
                raise RuntimeError(
                    "adaptive tempering cannot make progress: the ESS collapses "
                    "for any positive increment (log-likelihood not finite?)")
            # absolute xtol scaled to the bracket: particles' default 2e-12
            # would be coarser than the increment itself on steep targets
            delta = optimize.brentq(ess_gap, left, 1.0 - epn, xtol=1e-6 * left)
            new_epn = epn + delta
        x.shared["exponents"].append(new_epn)
        return self.logG_tempering(x, delta)


def check_reached_target(smc):
    """Raise RuntimeError unless a tempering run reached exponent 1."""
    final = smc.X.shared["exponents"][-1]
    if final < 1.0:
        raise RuntimeError(
            f"tempering stopped at exponent {final:.4g} < 1 after {smc.t} "
            f"steps (max_iter = {smc.fk.max_iter}); increase max_iter or the "
            "number of particles")
    return final
