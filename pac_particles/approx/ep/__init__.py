"""Expectation Propagation for AUC Gibbs pseudo-posteriors.

Gaussian EP approximations of

    pi_lam(theta)  ∝  prior(theta) * exp(-lam * R_n(theta)),

all built on one site-update core. The risk factorises over the ``P =
n_pos * n_neg`` positive/negative pairs, so the target has one *pair site* per
pair, a step function of the score difference ``u_ij = s_i - s_j``::

    t_ij(u) = exp(-kappa * 1{u < 0}),      kappa = lam / (n_pos * n_neg),

(``lam`` multiplies the *fraction* of mis-ordered pairs, the convention of the
whole package; the paper's EP section calls ``kappa`` ``gamma'``). Each site is
approximated by a one-dimensional Gaussian factor and its tilted moments are
closed-form (:func:`pair_tilted_moments`). The sites are updated in parallel
with damping [RACL14, Alg. 4]; nothing is done pair by pair with d x d
algebra: the margin operator of the risk
(:class:`pac_particles.problem.risks.AUCRisk`, the Laplacian of the pair graph)
gives the posterior precision and every pair marginal in O(P r).

* :class:`EPLinear` -- linear scores ``s = X theta``, Gaussian prior
  ``N(0, diag(prior_var))``, in the primal space or, when d > n, exactly in
  score space; ARD by evidence maximisation.
* :class:`EPSpikeSlab` -- spike-and-slab prior
  ``prod_k [p N(0, v1) + (1 - p) N(0, v0)]`` (``v0 = 0``: Dirac spike), with
  Bernoulli x Gaussian prior sites [HHD13]; outputs ``inclusion_probs``.
* :class:`EPGP` -- Gaussian-process scores ``s ~ N(0, K)``; O(P + n^3) per
  sweep; ``predict`` gives the predictive mean and variance of new scores.

Each model returns an :class:`EPResult` (``mean``, ``cov``, ``log_z``, the EP
energy approximating ``log Z``, ``n_sweeps``, ``converged``, the site
parameters) and offers ``log_z_grad()`` / ``fit_hyperparameters()`` (the
gradient of ``log_z`` in the prior's hyper-parameters, exact at an EP fixed
point [See05], and its maximisation with L-BFGS-B) and ``loo_scores()`` /
``loo_auc()``: approximate leave-one-out scores from removing all the sites
of a point [OW00], hence an EP cross-validation AUC without refitting.

Scale invariance. The risk depends on the scores only through their order,
so under an isotropic Gaussian prior neither the evidence nor the EP energy
depends on ``prior_var``; likewise the GP amplitude and a common scaling of
``(v0, v1)``. Only relative scales (ARD variances, GP lengthscales, ``p`` and
``v0 / v1``) are worth fitting.

Modules: :mod:`~pac_particles.approx.ep.sites` (pair sites, numba pass),
:mod:`~pac_particles.approx.ep.core` (the Gaussian core),
:mod:`~pac_particles.approx.ep.result` (:class:`EPResult`),
:mod:`~pac_particles.approx.ep.prior_sites`, :mod:`~pac_particles.approx.loo`,
:mod:`~pac_particles.approx.ep.base`, :mod:`~pac_particles.approx.ep.linear`,
:mod:`~pac_particles.approx.ep.spike_slab`, :mod:`~pac_particles.approx.ep.gp`.
The paper's O(P d^2) formulation, a baseline and a check, lives beside the
package in ``lab/reference/pairwise_ep.py``.

Performance. The O(P) pair pass is one fused numba kernel (threaded with
``numba.prange`` on large problems, :mod:`pac_particles.core.parallel`); BLAS is
limited to one thread inside the EP loop (attribute ``blas_threads`` of every
model; ``None`` lifts the limit), because the loop's many small triangular
solves are much slower with BLAS threads waking up on every call.
:class:`~pac_particles.sklearn.estimator.PACBayesAUC` runs its whole fit with BLAS
on one thread, so there ``None`` lifts nothing.

Examples: each model's module shows its use
(:mod:`~pac_particles.approx.ep.linear`: fit, ``log_z``, ``loo_auc``;
:mod:`~pac_particles.approx.ep.gp`: ``fit_hyperparameters``, ``predict``;
:mod:`~pac_particles.approx.ep.spike_slab`: ``inclusion_probs``).

References
----------
[RACL14] Ridgway, J., Alquier, P., Chopin, N. and Liang, F. (2014).
PAC-Bayesian AUC classification and scoring. NIPS 27 (sections 3.3, 3.4, 4;
appendix B.2-B.3).

Minka, T. (2001). Expectation Propagation for approximate Bayesian inference.
UAI 17, 362-369.

[HHD13] Hernandez-Lobato, D., Hernandez-Lobato, J. M. and Dupont, P. (2013).
Generalized spike-and-slab priors for Bayesian group feature selection using
expectation propagation. JMLR 14, 1891-1945.

[OW00] Opper, M. and Winther, O. (2000). Gaussian processes for
classification: mean-field algorithms. Neural Computation 12(11), 2655-2684.

[See05] Seeger, M. (2005). Expectation propagation for exponential families.
Technical report, University of California at Berkeley.
"""

from pac_particles.core.gaussian import KernelJitterWarning
from pac_particles.core.kernels import SquaredExponential
from pac_particles.approx.ep.classification import EPClassification
from pac_particles.approx.ep.core import EPConvergenceWarning
from pac_particles.approx.ep.result import EPResult
from pac_particles.approx.ep.gp import EPGP
from pac_particles.approx.ep.linear import EPLinear
from pac_particles.approx.ep.sites import pair_tilted_moments
from pac_particles.approx.ep.spike_slab import EPSpikeSlab

__all__ = ["EPLinear", "EPClassification", "EPSpikeSlab", "EPGP", "EPResult", "SquaredExponential",
           "EPConvergenceWarning", "KernelJitterWarning",
           "pair_tilted_moments"]
