"""The dissertation's Corollary 19 for the posteriors of the methods.

The bound itself, for any ``rho`` given ``E_rho[R_n]`` and ``KL``, and the
record it returns are :mod:`pac_particles.bounds.corollary19` (its
docstring states the theorem and the risks it is about); here are the
posteriors the package fits:

* Gaussian ``rho`` (VB, EP): ``E_rho[r_n] = q_n E_rho[R_n]`` in closed form
  (:func:`pac_particles.approx.vb.expected_auc_risk`) and ``KL`` in closed form
  (:func:`pac_particles.core.gaussian.gaussian_kl`): linear scores with a Gaussian
  prior (:func:`pac_bayes_bound_gaussian`), or GP latent training scores
  ``s ~ N(m, S)`` with the prior ``N(0, K)`` (:func:`pac_bayes_bound_gp`; the
  pairs' differences are ``e_i - e_j``).
* The Gibbs posterior itself (SMC): ``lam E[R_n] + KL = lam' E[r_n] + KL = -log Z``
  (Proposition 6 with ``rho`` the Gibbs posterior), so the bound is
  ``-log Z / lam' + lam' / (n - 1) + log(1/eps) / lam'``
  (:func:`pac_bayes_bound_gibbs`). For an SMC run, linear or GP,
  :func:`smc_certificate` certifies the exact Gibbs posterior with a lower
  confidence bound on ``log Z`` in place of ``log Z`` (its level added to
  ``eps`` by a union bound); SMC's estimates of ``log Z`` and ``E[R_n]``
  are not plugged in. EP's spike-and-slab approximation is a Gaussian
  ``rho`` like the others, with its KL to the mixture prior
  (:meth:`pac_particles.problem.priors.SpikeSlabPrior.kl_gaussian`), not EP's
  ``log Z``, which is not that of the Gibbs posterior.

Usage
-----
::

    from pac_particles.bounds import pac_bayes_bound_gaussian, pac_bayes_bound_gibbs
    from pac_particles.approx.vb import GaussianVB

    # Gaussian rho, lam from Corollary 21; EP: EPLinear(X, y, lam).fit(), same call
    res = GaussianVB(X, y, family="full", standardize=False).fit()
    cert = pac_bayes_bound_gaussian(res.mean, res.cov, X, y, lam=res.lam,
                                    prior_var=res.prior_var, standardize=False,
                                    eps=0.05)
    cert.bound, cert.auc_risk_bound, cert.auc_risk_bound_rigorous
    cert.auc_risk_bound_two_sample       # the sharpest rigorous bound on 1 - AUC

    # Gibbs posterior from SMC (post = run_smc(model, ...), model.lam = lam);
    # lam_grid=grid if lam was picked on that grid with the data
    cert = smc_certificate(post, eps=0.05, lam_grid=grid)
    # the same, by hand: log Z from below at 0.005, the bound at 0.045
    log_z, how = post.log_z_lower_bound(0.005)
    cert = pac_bayes_bound_gibbs(log_z, post.lam, risk=model.empirical_risk,
                                 eps=0.045, lam_grid=grid)

Data-dependent priors
---------------------
The prior must not depend on the sample. ``standardize=True`` rescales the
columns by their sample standard deviations, which makes the prior on the raw
scale ``N(0, diag(1/scale^2) prior_var)`` data-dependent: the certificate is
then approximate (the dependence is through d scales that concentrate at rate
``1/sqrt(n)``). For a rigorous certificate fit with ``standardize=False`` on
inputs scaled in advance (or with scales from a separate sample). Centring is
harmless: the risk is invariant to shifts.

References
----------
[ARC16] Alquier, P., Ridgway, J. and Chopin, N. (2016). On the properties of
variational approximations of Gibbs posteriors. Journal of Machine Learning
Research 17(239), 1-41.
"""

import dataclasses
import math

import numpy as np

from pac_particles.approx.vb import expected_auc_risk
from pac_particles.bounds.corollary19 import (_certificate, _check_risk,
                                              _on_grid, _sample_sizes,
                                              pac_bayes_bound)
from pac_particles.bounds.ranking import EVIDENCE_SHARE, check_log_z, gibbs_kl
from pac_particles.core.checks import InputError, check_gaussian, check_probability
from pac_particles.core.gaussian import gaussian_kl
from pac_particles.problem.data import validate_xy
from pac_particles.problem.probit_risk import (GaussianPairRisk,
                                               check_gaussian_pairs)
from pac_particles.problem.risks import AUCRisk

__all__ = ["pac_bayes_bound_gaussian", "pac_bayes_bound_gp", "fitted_gaussian_bound",
           "pac_bayes_bound_gibbs", "smc_certificate",
           "control_variate_risk_bound", "CONTROL_VARIATE_PAIRS"]

#: pairs of :func:`control_variate_risk_bound`, the bound on ``E_rho[R_n]``
#: of :func:`fitted_gaussian_bound` above
#: :data:`~pac_particles.bounds.EXACT_RISK_MAX_PAIRS` pairs: at 100,000
#: rows its bound from 300,000 pairs lay below Chernoff's from a million
#: (docs/benchmarks.md, "The folds of a small class and Corollary 19 on
#: sampled pairs")
CONTROL_VARIATE_PAIRS = 300_000


def control_variate_risk_bound(mean, cov, X_pos, X_neg, delta,
                               n_pairs=CONTROL_VARIATE_PAIRS, seed=0):
    """An upper confidence bound on ``E_rho[R_n]``, ``rho = N(mean, cov)``,
    from the exact step risk of the mean's scores and sampled corrections:
    ``(upper, estimate)``.

    ``E_rho[R_n] = R_n(x . mean) + (1/P) sum_ij c_ij`` with ``c_ij =
    Phi_ij - step_ij`` in ``[-1/2, 1/2]``: the pair's probability of being
    mis-ordered under ``rho`` less the mean score's 0-1 loss on it (ties
    1/2 in both). The first term is exact in O(n log n); given the data the
    ``c`` of ``n_pairs`` pairs drawn uniformly with replacement are i.i.d.
    with the second term as their mean
    (:meth:`~pac_particles.problem.probit_risk.GaussianPairRisk.estimate`),
    and Maurer & Pontil's empirical Bernstein bound [MP09, Thm. 4] holds
    with probability at least ``1 - delta`` over the draw: the mean of all
    ``c`` is at most ``mean(c) + sqrt(2 V log(2/delta) / B) + 7 log(2/delta)
    / (3 (B - 1))``, ``V`` their sample variance, ``B = n_pairs``. The
    ``c`` vanish on the pairs ``rho`` seldom reorders, so ``V`` shrinks as
    ``rho`` concentrates, where Chernoff's bound on the ``Phi`` themselves
    (:func:`~pac_particles.bounds.sampled_expected_risk_bound`) keeps their
    whole spread. A certificate that uses ``upper`` holds at ``delta`` plus
    its own level (a union bound).

    [MP09] Maurer, A. and Pontil, M. (2009). Empirical Bernstein bounds and
    sample variance penalization. COLT.
    """
    mean, cov, X_pos, X_neg = check_gaussian_pairs(mean, cov, X_pos, X_neg)
    delta = check_probability(delta, "delta")
    if n_pairs < 2:
        raise InputError(f"n_pairs must be at least 2, got {n_pairs}")
    estimate, se = GaussianPairRisk(X_pos, X_neg).estimate(
        mean, cov, np.random.default_rng(seed), int(n_pairs))
    # se = sqrt(biased variance / B): the sample variance is se^2 B^2/(B-1)
    variance = se * se * n_pairs * n_pairs / (n_pairs - 1)
    log_term = math.log(2.0 / delta)
    upper = (estimate + math.sqrt(2.0 * variance * log_term / n_pairs)
             + 7.0 * log_term / (3.0 * (n_pairs - 1)))
    return min(max(upper, 0.0), 1.0), min(max(estimate, 0.0), 1.0)


def _gaussian_bound(mean, cov, prior_var, X_pos, X_neg, lam, risk, eps,
                    grid_size, eps_prevalence):
    """Corollary 19 for ``rho = N(mean, cov)`` on parameters whose scores
    are ``X @ theta``: closed-form ``E_rho[R_n]`` and KL to ``N(0, prior_var)``."""
    kl = gaussian_kl(mean, cov, prior_var)
    expected_risk = expected_auc_risk(mean, cov, X_pos, X_neg)
    return pac_bayes_bound(expected_risk, max(kl, 0.0), lam, eps=eps,
                           grid_size=grid_size, eps_prevalence=eps_prevalence,
                           risk=risk)


def pac_bayes_bound_gaussian(mean, cov, X, y, lam, prior_var=1.0,
                             standardize=True, eps=0.05, grid_size=1,
                             eps_prevalence=None):
    """Corollary 19 bound for a Gaussian ``rho = N(mean, cov)`` (VB, EP).

    ``E_rho[R_n]`` and ``KL(rho || N(0, prior_var I))`` are computed exactly.
    ``X, y, standardize`` must be those ``mean`` and ``cov`` were fitted with
    (they are validated by ``validate_xy`` the same way).

    Parameters
    ----------
    mean : (d,) array
    cov : (d, d) array
    X, y : training data (raw scale).
    lam : float
        Our inverse temperature for the bound (usually the one ``rho`` was
        fitted with; any value fixed in advance is valid).
    prior_var : float or (d,) array, default 1.0
        Isotropic or ARD (diagonal) prior variances.
    standardize : bool, default True
    eps, grid_size, eps_prevalence : see :func:`pac_bayes_bound`.

    Returns
    -------
    PACBayesBound
    """
    data = validate_xy(X, y, standardize=standardize, drop_constant=True)
    mean, cov = check_gaussian(mean, cov, data.d,
                               "mean and cov (columns kept by validate_xy)")
    return _gaussian_bound(mean, cov, prior_var, data.X_pos, data.X_neg, lam,
                           AUCRisk(data.y), eps, grid_size, eps_prevalence)


def pac_bayes_bound_gp(mean, cov, kernel_matrix, y, lam, eps=0.05, grid_size=1,
                       eps_prevalence=None):
    """Corollary 19 bound for a Gaussian ``rho = N(mean, cov)`` on the latent
    training scores of a GP prior ``N(0, K)`` (GP-EP).

    The parameters are the scores themselves, so the pairs' differences are
    ``e_i - e_j``: ``E_rho[R_n]`` is :func:`pac_particles.approx.vb.expected_auc_risk`
    with identity rows and ``KL(rho || N(0, K))`` is in closed form with the
    full prior covariance.

    Parameters
    ----------
    mean : (n,) array, in the order of ``y``.
    cov : (n, n) array.
    kernel_matrix : (n, n) array
        ``K`` (plus the jitter the fit used), in the order of ``y``.
    y : (n,) binary labels of the training points.
    lam : float
    eps, grid_size, eps_prevalence : see :func:`pac_bayes_bound`.

    Returns
    -------
    PACBayesBound
    """
    risk = AUCRisk(y)
    n = risk.n
    mean = np.asarray(mean, dtype=float)
    cov = np.asarray(cov, dtype=float)
    K = np.asarray(kernel_matrix, dtype=float)
    if mean.shape != (n,) or cov.shape != (n, n) or K.shape != (n, n):
        raise InputError(f"mean, cov and kernel_matrix must have shapes "
                         f"({n},), ({n}, {n}), ({n}, {n}), got {mean.shape}, "
                         f"{cov.shape}, {K.shape}")
    eye = np.eye(n)
    return _gaussian_bound(mean, cov, K, eye[risk.positives],
                           eye[~risk.positives], lam, risk, eps, grid_size,
                           eps_prevalence)


def pac_bayes_bound_gibbs(log_z, lam, n_pos=None, n_neg=None,
                          expected_risk=None, eps=0.05, grid_size=1,
                          eps_prevalence=None, risk=None, lam_grid=None):
    """Corollary 19 bound for the Gibbs posterior ``∝ prior exp(-lam R_n)``.

    Since ``lam E[R_n] + KL(Gibbs, prior) = -log Z``,::

        E_Gibbs[R] <= -log Z / lam' + lam'/(n - 1) + log(grid_size/eps)/lam',

    ``lam' = lam / q_n``. ``log Z = log E_prior[exp(-lam R_n)]`` exactly
    (quadrature), or a lower confidence bound on it: the bound then holds
    with probability at least ``1 - eps`` minus that bound's level
    (:func:`smc_certificate` does this for an SMC run; an estimate plugged
    in is not a certificate).

    With ``lam_grid`` (``lam`` chosen with the data; see
    :func:`pac_bayes_bound`) the bound is evaluated at the grid values
    ``g`` for the same Gibbs posterior, whose free energy there is ``g
    E[R_n] + KL = -log Z + (g - lam) E[R_n]``. Without ``expected_risk``
    that is bounded by ``-log Z max(1, g / lam)``: ``0 <= lam E[R_n] <=
    -log Z`` since ``KL >= 0``.

    Parameters
    ----------
    log_z : float
        In ``[-lam, 0]``.
    lam : float
        Our inverse temperature of the Gibbs posterior.
    n_pos, n_neg : int
        Class counts (or give ``risk``).
    expected_risk : float, optional
        Posterior mean of ``R_n``, exact (quadrature); splits the free
        energy into empirical and KL terms. An estimate (the particles'
        weighted risks) would make the bound a plug-in: leave it out.
    eps, grid_size, eps_prevalence, risk, lam_grid : see
        :func:`pac_bayes_bound`.

    Returns
    -------
    PACBayesBound
    """
    log_z, lam = check_log_z(log_z, lam)
    kl = None
    if expected_risk is not None:
        expected_risk = _check_risk(expected_risk)
        kl = gibbs_kl(log_z, lam, expected_risk)
        free_energy = lam * expected_risk + kl      # >= -log_z
    else:
        free_energy = -log_z
    sizes = _sample_sizes(n_pos, n_neg, risk)
    if lam_grid is None:
        return _certificate(free_energy, lam, sizes, eps, grid_size,
                            eps_prevalence, expected_risk, kl)
    if expected_risk is None:
        def free_energy_at(g):
            return free_energy * max(1.0, g / lam)
    else:
        def free_energy_at(g):
            return free_energy + (g - lam) * expected_risk
    return _on_grid(free_energy_at, lam, lam_grid, grid_size, sizes, eps,
                    eps_prevalence, expected_risk, kl)


def smc_certificate(post, eps=0.05, grid_size=1, eps_prevalence=None,
                    lam_grid=None, evidence_share=EVIDENCE_SHARE):
    """Corollary 19 for the exact Gibbs posterior an SMC run of an AUC
    Gibbs model approximates, linear or GP.

    ``post`` is a :class:`pac_particles.smc.posterior.SMCPosterior` (its
    ``lam``, evidence and model ``post.predictor``, whose
    ``empirical_risk`` gives the sample sizes). The certified posterior is
    the Gibbs posterior itself, not the particles (an empirical measure has
    no density, hence no finite KL). Its free energy ``-log Z`` is bounded
    from above by a lower confidence bound on ``log Z`` at level
    ``evidence_share * eps``
    (:meth:`~pac_particles.smc.posterior.SMCPosterior.log_z_lower_bound`: the
    raw importance weights' Markov bound, or the tempering estimate's), and
    Corollary 19 runs at the rest of ``eps``: by a union bound the
    statement holds with probability at least ``1 - eps``
    (``delta_shares`` and ``note`` record it). The particles' ``E[R_n]`` is
    not used (an estimate, see :func:`pac_bayes_bound_gibbs`).
    ``lam_grid``: the grid ``lam`` was chosen on (:func:`pac_bayes_bound`);
    the bound's ``lam`` is then a grid value.
    """
    model = post.predictor
    if model is None:
        raise InputError("smc_certificate needs the posterior's model "
                         "(post.predictor): its risk's sample sizes")
    eps = check_probability(eps, "eps")
    eps_log_z = check_probability(evidence_share, "evidence_share") * eps
    eps_prevalence = eps if eps_prevalence is None else eps_prevalence
    log_z, how = post.log_z_lower_bound(eps_log_z)
    cert = pac_bayes_bound_gibbs(log_z, post.lam, eps=eps - eps_log_z,
                                 grid_size=grid_size,
                                 eps_prevalence=eps_prevalence,
                                 risk=model.empirical_risk, lam_grid=lam_grid)
    return dataclasses.replace(
        cert, eps=eps, note=how,
        delta_shares=(("Corollary 19", eps - eps_log_z), ("log Z", eps_log_z)))


def fitted_gaussian_bound(post, prior, eps=0.05, lam_grid=None, seed=0,
                          sample_share=0.1, data=None):
    """Corollary 19 for a fitted Gaussian posterior ``post`` (the protocol's
    :meth:`~pac_particles.core.posterior_result.PosteriorResult.
    gaussian_summary`; GP latent scores or linear coefficients on
    ``post.data``) under the data-free ``prior``: a covariance (or
    variances) of ``N(0, prior)`` or a
    :class:`~pac_particles.problem.priors.SpikeSlabPrior`. ``E_rho[R_n]``
    is exact up to :data:`~pac_particles.bounds.EXACT_RISK_MAX_PAIRS`
    pairs, else an upper confidence bound from sampled pairs at
    ``sample_share`` of ``eps`` (drawn with ``seed``;
    :func:`control_variate_risk_bound` in memory). ``lam_grid``: the
    grid fixed in advance ``lam`` was chosen on (None: ``lam`` given).
    ``data``: the rows the bound uses, in the posterior's coordinates
    (default ``post.data``; a uniform row sample when those stay on a
    cluster)."""
    from pac_particles.bounds.ranking import EXACT_RISK_MAX_PAIRS
    from pac_particles.bounds.rescaled_kl import scaled_kl
    from pac_particles.bounds.ranking import (RISK_SAMPLE_PAIRS,
                                              paired_expected_risk_bound)
    data = post.data if data is None else data
    mean, cov = post.gaussian_summary()
    spent = 0.0
    if not data.in_memory:
        # rows on a cluster: uniform pairs fetched from it
        spent = sample_share * eps
        P, N = data.sampled_pairs(np.random.default_rng(seed),
                                  RISK_SAMPLE_PAIRS)
        expected = paired_expected_risk_bound(mean, cov, P, N, spent)[0]
    else:
        rows = np.eye(data.n) if post.is_gp else data.X
        pos, neg = rows[data.y], rows[~data.y]
        if len(pos) * len(neg) <= EXACT_RISK_MAX_PAIRS:
            expected = expected_auc_risk(mean, cov, pos, neg)
        else:
            spent = sample_share * eps
            expected = control_variate_risk_bound(mean, cov, pos, neg,
                                                  spent, seed=seed)[0]
    kl = scaled_kl(1.0, mean, cov, prior)
    return pac_bayes_bound(min(max(float(expected), 0.0), 1.0), kl, post.lam,
                           n_pos=data.n_pos, n_neg=data.n_neg,
                           eps=eps - spent, lam_grid=lam_grid)
