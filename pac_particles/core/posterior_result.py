"""The protocol of a fitted posterior: what every method's result offers.

Every fitter of the package returns a :class:`PosteriorResult`:
:func:`~pac_particles.smc.posterior.run_smc` an
:class:`~pac_particles.smc.posterior.SMCPosterior` (and each tempering step
one, ``at_step``), the EP models an
:class:`~pac_particles.approx.ep.EPResult`, Gaussian VB a
:class:`~pac_particles.approx.vb.VBResult`, SVGD an
:class:`~pac_particles.approx.svgd.SVGDResult`. Code above the methods (the
estimators, the committee, the certificates, the ArviZ export, the studies)
reads a posterior through this protocol only, never by probing its type.

What a result provides (its subclass defines these):

``mean``, ``cov``
    Moments of the parameter ``theta``: linear coefficients on the fit's
    validated design (the span coordinates ``w`` for SMC in score space),
    or the latent training scores of a GP.
``log_evidence``
    The method's estimate of ``log Z(lam)``, ``Z = E_prior[exp(-lam r_n)]``:
    SMC's estimate (importance sampling, else tempering), EP's energy, VB's
    ELBO (a lower bound); NaN where the method has none (SVGD).
``data``
    The validated data of the fit (``transform`` for new rows,
    ``raw_linear`` to map a linear score back to the raw inputs).
``space``
    ``"primal"`` (theta are coefficients of the design), ``"score"``
    (SMC's span coordinates, d > n) or ``"gp"`` (latent scores).
``_draws(n, rng)``
    ``n`` equally weighted draws of ``theta``.

What it gets from them: :meth:`sample`, :meth:`point_estimate`,
:meth:`linear_coefficients` and :meth:`raw_coefficients`.
"""

import numpy as np

from pac_particles.core.checks import InputError, check_choice, check_count

__all__ = ["PosteriorResult", "POINT_ESTIMATES"]

#: the point estimates of a posterior (:mod:`pac_particles.core.weighted_particles`)
POINT_ESTIMATES = ("bayes_point", "mean", "componentwise_mode")


class PosteriorResult:
    """Base of every fitted posterior (module docstring: the protocol)."""

    #: ``"primal"``, ``"score"`` or ``"gp"``
    space = "primal"

    @property
    def log_evidence(self):
        """The method's estimate of ``log Z(lam)`` (NaN: none)."""
        raise NotImplementedError

    @property
    def is_gp(self):
        """Whether ``theta`` are latent GP scores (no coefficients)."""
        return self.space == "gp"

    def _draws(self, n, rng):
        raise NotImplementedError

    def sample(self, n, rng=None):
        """``n`` equally weighted draws of ``theta``, shape (n, d); ``rng``
        a ``numpy.random.Generator`` or a seed."""
        n = check_count(n, "n")
        return self._draws(n, np.random.default_rng(rng))

    def point_estimate(self, name="mean"):
        """A point estimate of ``theta``: ``"mean"``, ``"bayes_point"``
        (the mean direction, which is what the AUC sees) or
        ``"componentwise_mode"``. A Gaussian has its mean for all three (its
        mean's direction is the Bayes point's to first order)."""
        check_choice(name, "point", POINT_ESTIMATES)
        return np.asarray(self.mean, dtype=float)

    def linear_coefficients(self, theta=None):
        """Coefficients on the validated design of ``theta`` (d,) or (m, d)
        (default: the mean): ``theta`` itself except in SMC's score space."""
        if self.is_gp:
            raise InputError("GP scores have no linear coefficients")
        return np.asarray(self.mean if theta is None else theta, dtype=float)

    def raw_coefficients(self, theta=None):
        """``(coef, offset)``: the score of ``theta`` (default the mean) on
        the raw inputs, ``X_raw @ coef + offset`` (zero coefficients for the
        columns the validation dropped)."""
        return self.data.raw_linear(self.linear_coefficients(theta))
