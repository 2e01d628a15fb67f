"""The outcome of an EP fit: :class:`EPResult`.

EP [RACL14, Alg. 4] approximates the Gibbs posterior by the Gaussian
``N(mean, cov)`` of its fixed point; its energy ``log_z`` approximates
``log Z`` [Min01]. :class:`EPResult` is that Gaussian as a
:class:`~pac_particles.core.posterior_result.PosteriorResult` (draws from
``N(mean, cov)``, ``log_evidence = log_z``), with the site parameters and
the diagnostics of the run (:mod:`pac_particles.approx.ep.core`).

References
----------
[Min01] Minka, T. (2001). Expectation Propagation for approximate Bayesian
inference. UAI 17, 362-369.

[RACL14] Ridgway, J., Alquier, P., Chopin, N. and Liang, F. (2014).
PAC-Bayesian AUC classification and scoring. NIPS 27.
"""

from dataclasses import dataclass, field

import numpy as np

from pac_particles.core.posterior_result import GaussianPosterior

__all__ = ["EPResult"]


@dataclass
class EPResult(GaussianPosterior):
    """Outcome of an EP fit: the Gaussian ``N(mean, cov)`` of a
    :class:`~pac_particles.core.posterior_result.PosteriorResult`, whose
    ``log_evidence`` is the EP energy ``log_z``.

    Attributes
    ----------
    mean, cov : posterior mean and covariance of the parameter: theta (d,)
        for the linear models, the latent training scores (n,) for
        :class:`~pac_particles.approx.ep.EPGP` (in the order of the input rows).
        ``cov`` of a score-space linear fit with large d is computed on first
        access.
    log_z : the EP energy, an approximation of ``log Z`` (``Z`` = normaliser
        of ``prior * exp(-lam R_n)``, the prior being a probability);
        also ``log_evidence``.
    n_sweeps : number of parallel sweeps run.
    converged : whether every marginal moved by less than ``tol`` in the last
        sweep.
    damping : damping in use at the end (lower than requested if sweeps
        failed).
    max_change : largest moment change of the last sweep.
    site_precision, site_shift : (n_pos, n_neg) parameters of the pair sites
        ``q_ij(u) = exp(-site_precision u^2 / 2 + site_shift u)``, rows the
        positives and columns the negatives in input order; 0 for tied pairs.
    score_mean, score_var : (n,) posterior marginals of the training scores.
    n_improper : pair sites left unchanged in the last sweep because their
        cavity was improper.
    scale_identity : ``E_q[||w||^2] / r`` in the whitened coordinates (the
        prior sites' share of Stein's identity for spike-and-slab): exactly 1
        at every EP fixed point, since the risk is scale-invariant.
    degenerate : True when ``scale_identity`` is off by more than 5% once
        the moments stopped moving (or below 0.1 at any point): EP collapsed
        (or blew up) along the scale and the fit is not usable (``converged``
        is then False and ``log_z`` NaN, with an
        :class:`EPConvergenceWarning`).
    ep_space : where EP ran: ``"primal"``, ``"score"`` (the n-dimensional
        equivalent GP of a linear model with d > n) or ``"gp"``. ``mean``
        is theta in both linear spaces, so the protocol's ``space`` is
        ``"primal"`` for either and ``"gp"`` for EPGP.
    lam : the inverse temperature on the observed risk of the fit.
    data : the validated data of the fit (``transform``, ``raw_linear``).
    inclusion_probs : (d,) posterior inclusion probabilities (spike-and-slab).
    prior_site_precision, prior_site_shift, prior_site_log_odds : (d,)
        spike-and-slab prior sites.
    history : largest moment change at each sweep.
    """

    mean: np.ndarray
    log_z: float
    n_sweeps: int
    converged: bool
    damping: float
    max_change: float
    site_precision: np.ndarray
    site_shift: np.ndarray
    score_mean: np.ndarray
    score_var: np.ndarray
    n_improper: int
    ep_space: str
    lam: float = None
    data: object = None
    scale_identity: float = 1.0
    degenerate: bool = False
    inclusion_probs: np.ndarray = None
    prior_site_precision: np.ndarray = None
    prior_site_shift: np.ndarray = None
    prior_site_log_odds: np.ndarray = None
    history: list = field(default_factory=list, repr=False)
    _cov: np.ndarray = field(default=None, repr=False)
    _cov_fn: object = field(default=None, repr=False)

    evidence_method = "EP energy"

    @property
    def cov(self):
        if self._cov is None:
            self._cov = self._cov_fn()
        return self._cov

    @property
    def log_evidence(self):
        """The EP energy ``log_z``, EP's approximation of ``log Z(lam)``."""
        return self.log_z

    @property
    def space(self):
        """``"gp"`` for latent GP scores, else ``"primal"``: the mean is
        theta whichever space EP ran in (``ep_space``)."""
        return "gp" if self.ep_space == "gp" else "primal"

    def __repr__(self):
        return (f"EPResult(space={self.ep_space!r}, log_z={self.log_z:.6g}, "
                f"n_sweeps={self.n_sweeps}, converged={self.converged}, "
                f"mean={np.array2string(self.mean[:5], precision=4)}"
                f"{'...' if self.mean.size > 5 else ''})")
