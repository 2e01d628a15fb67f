"""PAC-Bayes-kl and Catoni certificates for the AUC risk, with data-free or
data-dependent priors.

The AUC risk is a two-sample U-statistic
-----------------------------------------
Condition on the labels: the ``n_pos`` positives are i.i.d. from ``P+``, the
``n_neg`` negatives i.i.d. from ``P-``, independently. For a fixed ``theta``::

    R_n(theta) = 1/(n_pos n_neg) sum_{i, j} h(X+_i, X-_j),
    h(x, x') = 1{s(x) < s(x')} + 1/2 1{s(x) = s(x')}  in [0, 1],

a two-sample U-statistic of mean ``R(theta) = 1 - AUC(theta)`` (ties 1/2),
the population risk, which does not depend on the labels drawn.

*Hoeffding's decomposition* [Hoe63, Sec. 5b; CLV08]. Let ``m = min(n_pos,
n_neg)``, say ``m = n_pos``. For an injection ``sigma`` of the positives into
the negatives put ``W_sigma = (1/m) sum_i h(X+_i, X-_sigma(i))``: the ``m``
pairs share no point, so ``W_sigma`` is a mean of ``m`` *independent* terms in
[0, 1] of mean ``R``. Every pair ``(i, j)`` lies in the same number of
injections, so ``R_n`` is the average of the ``W_sigma`` over all injections:
an average of averages of ``m`` i.i.d. terms.

*Jensen.* For any convex ``phi``, ``phi(R_n) <= avg_sigma phi(W_sigma)``, so
``E phi(R_n) <= E phi(mean of m i.i.d. terms)``. Two convex choices give the
two exponential moments of :mod:`pac_particles.bounds.certificates`:

* ``phi(x) = exp(m kl(x || R))`` (``kl`` is convex in its first argument,
  ``exp`` convex increasing): ``E exp(m kl(R_n || R)) <= xi(m) <= 2 sqrt(m)``
  [Mau04];
* ``phi(x) = exp(-C m x)``: ``E exp(-C m R_n) <= (1 - R (1 - e^-C))^m``
  (Catoni's moment).

The rest of the PAC-Bayes argument (Fubini under the prior, Donsker-Varadhan,
Markov, Jensen on the jointly convex ``kl`` for ``E_rho``) is unchanged, so
with probability at least ``1 - delta``, for every ``rho``::

    kl(E_rho[R_n] || E_rho[1 - AUC]) <= (KL(rho || prior) + log(xi(m)/delta)) / m,
    m = min(n_pos, n_neg) = risk.n_independent,

and Catoni's bound with the same ``m`` (:func:`auc_certificate`). It holds
given every label vector, hence unconditionally; it is a statement about the
*randomised* score ``x -> s_theta(x)``, ``theta ~ rho`` drawn afresh, whose
expected AUC is at least ``1 - bound``. ``m`` cannot be larger in general: if
``h`` depended on the positive only, ``R_n`` would be a mean of ``n_pos``
i.i.d. terms. A bound of 1/2 or more certifies nothing (a coin ranks with
AUC 1/2): ``trivial = 0.5``. By Pinsker's inequality (``kl(q || p) >= 2 (p -
q)^2``) the kl bound is below the Hoeffding relaxation of the same
decomposition (``lam / (8 m)``, ``auc_risk_bound_two_sample`` of
:mod:`pac_particles.bounds.corollary19`) at its best ``lam`` once
``log(1/delta)`` is replaced by ``log(xi(m)/delta)``; for small risks it is
much tighter (``kl(q || p) ~ (p - q)^2 / (2 p)``).

The posterior's KL
------------------
* Gaussian ``rho = N(mu, S)`` (EP, VB): ``E_rho[R_n]`` and ``KL`` in closed
  form (:func:`gaussian_auc_certificate`).
* The Gibbs posterior ``∝ prior exp(-lam R_n)``: ``KL = -log Z - lam E_rho[R_n]``
  (:func:`gibbs_kl`). SMC estimates both terms; plugged in, the bound has
  no allowance for their error. :func:`gibbs_certificate` certifies the
  exact Gibbs posterior from a *lower confidence bound* on ``log Z`` alone
  (importance sampling is unbiased for ``Z``, so Markov's inequality gives
  one: :func:`pac_particles.smc.importance_evidence.log_z_lower_bound`), taking
  the worst case over ``E_rho[R_n]``; the estimator's SMC certificate.
* The kl bound holds for all ``rho`` at once: choosing ``rho`` (its ``lam``
  by cross-validation, or to minimise the bound) with the data costs nothing.

Data-dependent priors [PRST21; DR18]
------------------------------------
:func:`data_dependent_candidate`: split the training sample (stratified, by a
seed: independent of the features given the labels) into a prior part ``A``
and a certification part ``B``; fit EP on ``A`` alone at ``lam = n_A`` (a
rule fixed in advance) and take its Gaussian ``N(mu_A, S_A)`` as the prior;
certify on ``B`` with ``m_B = min(n_pos_B, n_neg_B)``. ``rho`` may still use
all the data (the estimator's posterior): the bound needs ``E_rho[R_B]`` on
``B`` and ``KL(rho || N(mu_A, S_A))``: closed form for a Gaussian ``rho``; for
SMC particles ``KL(rho || prior) + E_rho[log prior - log N(mu_A, S_A)]``.
It trades ``m`` for ``KL``: it helps when the data-free ``KL`` is large
(many features) and hurts on small samples. :func:`auc_certificate` takes it
as an extra candidate of the union bound, which pays for the choice.

Everything the prior uses comes from ``A``: its preprocessing (``A``'s
columns centred and scaled with ``A``'s own moments, whatever scaling the
posterior's inputs had) and, when asked, its ARD prior variances (tuned by
EP's evidence on ``A``). Its Gaussian is then mapped exactly into the
posterior's coordinates (an affine map of the inputs is a linear map of
``theta``; the AUC ignores the offset), so the KL is the one between the
two distributions of the score function.

The data-free prior ``N(0, prior_var)`` is applied to the inputs as the
estimator standardised them, with the whole sample's scales: it is slightly
data-dependent (through ``d`` scales that concentrate at rate
``1/sqrt(n)``), a dependence the data-dependent prior no longer has.

Example
-------
>>> from pac_particles.bounds import auc_certificate
>>> cert = auc_certificate(0.18, kl=9.0, n_pos=200, n_neg=380, delta=0.05)
>>> cert.name in ("kl", "catoni"), round(1 - cert.bound, 2), cert.vacuous
(True, 0.64, False)

References
----------
[CLV08] Clemencon, S., Lugosi, G. and Vayatis, N. (2008). Ranking and
empirical minimization of U-statistics. Annals of Statistics 36(2), 844-874.

[DR18] Dziugaite, G. K. and Roy, D. M. (2018). Data-dependent PAC-Bayes
priors via differential privacy. NeurIPS 31.

[Hoe63] Hoeffding, W. (1963). Probability inequalities for sums of bounded
random variables. JASA 58(301), 13-30.

[Mau04] Maurer, A. (2004). A note on the PAC Bayesian theorem. arXiv:cs/0411099.

[PRST21] Perez-Ortiz, M., Rivasplata, O., Shawe-Taylor, J. and Szepesvari, C.
(2021). Tighter risk certificates for neural networks. JMLR 22(227), 1-40.

[UAG06] Usunier, N., Amini, M.-R. and Gallinari, P. (2006). Generalization
error bounds for classifiers trained with interdependent data. NIPS 18
(the fractional-cover view: the same ``m`` for the bipartite pair graph).
"""

import dataclasses
import math
import warnings

import numpy as np

from pac_particles.approx.ep import EPLinear
from pac_particles.problem.auc import linear_auc_risk
from pac_particles.problem.data import binary_labels, validate_xy
from pac_particles.core.checks import (InputError, check_count, check_positive,
                      check_probability)
from pac_particles.core.gaussian import gaussian_kl
from pac_particles.problem.row_pools import pairs_by_positive
from pac_particles.problem.probit_risk import (GaussianPairRisk, check_gaussian_pairs,
                           expected_auc_risk)
from pac_particles.bounds import certification
from pac_particles.bounds.certificates import BOUNDS, _certificate, tightest
from pac_particles.bounds.kl import kl_inverse_upper, maurer_constant
from pac_particles.core.compat import moved_names

__all__ = ["AUC_TRIVIAL", "EXACT_RISK_MAX_PAIRS", "RISK_SAMPLE_PAIRS",
           "sampled_expected_risk_bound", "paired_expected_risk_bound",
           "auc_certificate",
           "gaussian_auc_certificate",
           "check_log_z", "gibbs_kl", "gibbs_certificate", "GIBBS_RISK_GRID",
           "EVIDENCE_SHARE",
           "DataDependentPrior",
           "data_dependent_prior", "data_dependent_candidate"]

# the split of the prior part lives with the certificate that pays for it
__getattr__ = moved_names(__name__, {
    "prior_split": "pac_particles.bounds.certification"})

# a coin ranks with AUC 1/2: E[1 - AUC] <= 1/2 certifies nothing
AUC_TRIVIAL = 0.5


def _independent_terms(risk, n_pos, n_neg):
    if risk is not None:
        if n_pos is not None or n_neg is not None:
            raise InputError("give either risk or n_pos and n_neg, not both")
        return check_count(risk.n_independent, "n_independent")
    if n_pos is None or n_neg is None:
        raise InputError("give the class counts n_pos and n_neg, or risk")
    n_pos = check_count(n_pos, "n_pos")
    n_neg = check_count(n_neg, "n_neg")
    return min(n_pos, n_neg)


def auc_certificate(expected_risk, kl, risk=None, n_pos=None, n_neg=None,
                    delta=0.05, bounds=("kl", "catoni"), extra=()):
    """The tightest certificate on ``E_rho[1 - AUC]`` among ``bounds`` (with
    ``m = min(n_pos, n_neg)``) and ``extra`` candidates, ``delta`` split
    evenly between them (module docstring).

    Parameters
    ----------
    expected_risk : float in [0, 1]
        ``E_rho[R_n]`` on the training sample.
    kl : float >= 0
        ``KL(rho || prior)``, the prior fixed before seeing the sample.
    risk : pac_particles.problem.risks.Risk, optional
        Its ``n_independent`` is ``m``; or give ``n_pos, n_neg``.
    delta : float in (0, 1)
    bounds : names among ``'kl'``, ``'catoni'``.
    extra : sequence of callables ``delta_each -> Certificate``
        More candidates, e.g. :func:`data_dependent_candidate`.

    Returns
    -------
    Certificate
        ``bound`` in [0, 1] on the expected ``1 - AUC`` of the randomised
        score; ``vacuous`` when ``bound >= 1/2``.
    """
    m = _independent_terms(risk, n_pos, n_neg)
    names = [bounds] if isinstance(bounds, str) else list(bounds)
    for name in names:
        if name not in BOUNDS:
            raise InputError(f"unknown bound {name!r}; choose from "
                             f"{sorted(BOUNDS)}")
    candidates = [lambda d, f=BOUNDS[name]: f(expected_risk, kl, m, d,
                                              trivial=AUC_TRIVIAL)
                  for name in names]
    return tightest(candidates + list(extra), delta)


def gaussian_auc_certificate(mean, cov, X_pos, X_neg, prior_var=1.0,
                             prior_mean=None, delta=0.05,
                             bounds=("kl", "catoni"), extra=()):
    """:func:`auc_certificate` for ``rho = N(mean, cov)`` on linear scores
    ``x . theta`` under the prior ``N(prior_mean, prior_var)`` (default mean
    0; ``prior_var`` scalar, (d,) or (d, d)): ``E_rho[R_n]`` and ``KL`` in
    closed form. For GP latent scores pass identity rows and the kernel
    matrix as ``prior_var``.
    """
    mean = np.asarray(mean, dtype=float)
    shift = mean if prior_mean is None else mean - np.asarray(prior_mean, float)
    kl = max(gaussian_kl(shift, cov, prior_var), 0.0)
    risk = expected_auc_risk(mean, cov, X_pos, X_neg)
    return auc_certificate(risk, kl, n_pos=len(X_pos), n_neg=len(X_neg),
                           delta=delta, bounds=bounds, extra=extra)


#: Above this many pairs the certificate of a Gaussian posterior estimates
#: ``E_rho[R_n]`` from :data:`RISK_SAMPLE_PAIRS` sampled pairs
#: (:func:`sampled_expected_risk_bound`): the exact sum is linear in the
#: pairs, quadratic in the rows (docs/benchmarks.md, "Certificates").
EXACT_RISK_MAX_PAIRS = 50_000_000
RISK_SAMPLE_PAIRS = 1_000_000


def sampled_expected_risk_bound(mean, cov, X_pos, X_neg, delta,
                                n_pairs=RISK_SAMPLE_PAIRS, seed=0):
    """An upper confidence bound on ``E_rho[R_n]``, ``rho = N(mean, cov)``,
    from ``n_pairs`` positive/negative pairs drawn uniformly with
    replacement: ``(upper, estimate)``.

    Given the data, the per-pair terms ``f_ij = P_rho(pair (i, j)
    mis-ordered)`` (ties 1/2) of the drawn pairs are i.i.d. in [0, 1] with
    mean ``E_rho[R_n]`` (the incomplete U-statistic of [CCB16] at a fixed
    ``rho``; the pairs come in the order of their positive rows, which
    leaves the law of their mean as it was:
    :func:`~pac_particles.problem.row_pools.pairs_by_positive`), so
    Chernoff's bound inverted as in
    :func:`~pac_particles.bounds.held_out_bound` gives, with probability at
    least ``1 - delta`` over the draw, ``E_rho[R_n] <= kl_inverse_upper(
    mean of the f, log(1/delta) / n_pairs)``. A certificate that uses it in
    place of ``E_rho[R_n]`` holds at ``delta`` plus its own level (a union
    bound); it costs O(n_pairs d) instead of O(n_pos n_neg d). With
    ``n_pairs`` at least all the pairs, the exact value (twice).

    [CCB16] Clemencon, S., Colin, I. and Bellet, A. (2016). Scaling-up
    empirical risk minimization: optimization of incomplete U-statistics.
    JMLR 17(76), 1-36.
    """
    mean, cov, X_pos, X_neg = check_gaussian_pairs(mean, cov, X_pos, X_neg)
    n_pairs = check_count(n_pairs, "n_pairs")
    delta = check_probability(delta, "delta")
    if n_pairs >= X_pos.shape[0] * X_neg.shape[0]:
        exact = expected_auc_risk(mean, cov, X_pos, X_neg)
        return exact, exact
    # in the order of their positive rows: the law of the pairs' mean as
    # drawn, the positives read in address order
    ip, jn = pairs_by_positive(np.random.default_rng(seed), X_pos.shape[0],
                               X_neg.shape[0], n_pairs)
    return _upper_from_pairs(mean, cov, X_pos, X_neg, ip, jn, delta)


def paired_expected_risk_bound(mean, cov, P, N, delta):
    """:func:`sampled_expected_risk_bound` from pairs already drawn: row
    ``b`` of ``P`` and of ``N`` is pair ``b``, the pairs independent and
    each uniform over all positive/negative pairs (as
    :meth:`pac_particles.problem.dask_data.DaskAUCData.sampled_pairs`
    fetches them from a cluster). ``(upper, estimate)``."""
    mean, cov, P, N = check_gaussian_pairs(mean, cov, P, N)
    delta = check_probability(delta, "delta")
    if P.shape[0] != N.shape[0]:
        raise InputError(f"P and N must hold the same number of pairs, got "
                         f"{P.shape[0]} and {N.shape[0]}")
    b = np.arange(P.shape[0])
    return _upper_from_pairs(mean, cov, P, N, b, b, delta)


def _upper_from_pairs(mean, cov, X_pos, X_neg, ip, jn, delta):
    """Chernoff's upper confidence bound on ``E_rho[R_n]`` from the
    independent uniform pairs ``(X_pos[ip[b]], X_neg[jn[b]])``."""
    estimate = float(GaussianPairRisk(X_pos, X_neg).sampled(
        ip, jn, mean, cov, need_grad=False)[0])
    estimate = min(max(estimate, 0.0), 1.0)
    return (float(kl_inverse_upper(estimate,
                                   math.log(1.0 / delta) / len(ip))),
            estimate)


def check_log_z(log_z, lam):
    """``(log_z, lam)`` as floats, or InputError unless ``lam > 0`` and
    ``-lam <= log_z <= 0`` (forced by a risk in [0, 1])."""
    lam = check_positive(lam, "lam")
    try:
        log_z = float(log_z)
    except (TypeError, ValueError):
        raise InputError(f"log_z must be a number, got {log_z!r}")
    slack = 1e-9 * max(1.0, lam)
    if not np.isfinite(log_z) or log_z > slack or log_z < -lam - slack:
        raise InputError(f"log_z must lie in [-lam, 0] = [{-lam}, 0] for a "
                         f"risk in [0, 1], got {log_z}")
    return log_z, lam


def gibbs_kl(log_z, lam, expected_risk):
    """``KL(Gibbs || prior) = -log Z - lam E_Gibbs[R_n]`` for the Gibbs
    posterior ``∝ prior exp(-lam R_n)`` [ARC16, Prop. 6 with rho the Gibbs
    posterior].

    Monte Carlo estimates (SMC's ``log Z`` and weighted risks) can make it
    slightly negative: it is then set to 0 with a warning (and the free
    energy ``lam E[R_n] + KL`` used by linear bounds becomes ``lam E[R_n] >=
    -log Z``, the conservative side).
    """
    log_z, lam = check_log_z(log_z, lam)
    expected_risk = check_probability(expected_risk, "expected_risk",
                                      closed=True)
    kl = -log_z - lam * expected_risk
    if kl < 0:
        warnings.warn(f"-log_z - lam * expected_risk = {kl:.3g} < 0: "
                      "inconsistent Monte Carlo estimates; KL set to 0 "
                      "and the bound uses lam * expected_risk instead of "
                      "-log_z", stacklevel=2)
        kl = 0.0
    return kl


#: Brackets of ``[0, -log Z / lam]`` over which :func:`gibbs_certificate`
#: takes the worst case of the unknown ``E_G[R_n]`` (its slack: one step)
GIBBS_RISK_GRID = 256
#: The share of a Gibbs posterior's ``delta`` spent on the lower confidence
#: bound on ``log Z`` that stands in for the exact one (the rest goes to the
#: PAC-Bayes inequality); 0.1: at ``delta = 0.05`` the Markov price
#: ``log(1/0.005) / M`` is 0.08 nats for ``M = 64`` batches
EVIDENCE_SHARE = 0.1


def gibbs_certificate(log_z, lam, risk=None, n_pos=None, n_neg=None,
                      delta=0.05, trivial=AUC_TRIVIAL, expected_risk=None,
                      n_grid=GIBBS_RISK_GRID):
    """The PAC-Bayes-kl bound of the exact Gibbs posterior ``G ∝ prior
    exp(-lam R_n)`` from a lower bound on ``log Z`` alone.

    With probability at least ``1 - delta``, for every ``rho``,
    ``kl(E_rho[R_n] || E_rho[R]) <= (KL(rho || prior) + c) / m``, ``c =
    log(xi(m) / delta)`` (module docstring). For ``rho = G``, ``KL = F -
    lam q`` with ``F = -log Z`` and ``q = E_G[R_n]`` [ARC16, Prop. 6], so
    ``p = E_G[R]`` satisfies ``kl(q || p) + lam q / m <= (F + c) / m``.
    ``q`` is not used: it is unknown (no Monte Carlo confidence interval
    bounds it from below: that would need an upper bound on ``Z``), and the
    bound takes the worst case over the values ``KL >= 0`` allows, ``0 <= q
    <= F / lam``::

        E_G[R] <= max_{0 <= q <= F/lam} kl_inverse_upper(q, (F + c - lam q) / m)
               <= (1 - exp(-(F + c) / m)) / (1 - exp(-lam / m)).

    The second line is the maximum over all ``q`` in [0, 1] (Catoni's form
    at ``C = lam / m``: ``inf_q [kl(q || p) + C q] = -log(1 - p (1 -
    e^-C))``, the Legendre dual of the Bernoulli kl); the first is computed
    over :data:`GIBBS_RISK_GRID` brackets ``[q_j, q_j+1]``, on each of
    which ``kl_inverse_upper(q_j+1, (F + c - lam q_j) / m)`` is an upper
    bound (``kl_inverse_upper`` grows in both arguments), and the smaller
    of the two is returned. Where ``lam`` is large the worst case sits at
    ``q = F / lam`` (``KL = 0``), which is close to the truth.

    ``lam`` may be chosen with the data (the kl bound holds for every
    ``rho`` at once) and so may ``C = lam / m``: it is not a parameter of
    the inequality, only of a consequence of it.

    Parameters
    ----------
    log_z : float in [-lam, 0]
        ``log Z``, or a lower bound on it: a Monte Carlo lower confidence
        bound (:meth:`pac_particles.smc.posterior.SMCPosterior.log_z_lower_bound`)
        makes the statement hold with probability at least ``1 - delta -``
        its own level (a union bound; the caller records the shares).
    lam : float > 0
    risk, n_pos, n_neg : the sample sizes, as :func:`auc_certificate`.
    delta : float in (0, 1), the kl bound's level.
    trivial : float, vacuous at or above this value.
    expected_risk : float in [0, 1], optional
        An estimate of ``E_G[R_n]`` kept in ``empirical_randomized_risk``
        for information; the bound does not use it (nan when not given).
    n_grid : int, brackets of the worst case.

    Returns
    -------
    Certificate
        Named ``'kl'``, ``posterior = 'exact Gibbs posterior'``, ``kl``
        None (only ``F`` is known), ``parameter`` the worst-case
        ``E_G[R_n]``.
    """
    log_z, lam = check_log_z(log_z, lam)
    m = _independent_terms(risk, n_pos, n_neg)
    delta = check_probability(delta, "delta")
    n_grid = check_count(n_grid, "n_grid")
    q_info = (float("nan") if expected_risk is None
              else check_probability(expected_risk, "expected_risk",
                                     closed=True))
    free = max(-log_z, 0.0)
    c = math.log(maurer_constant(m) / delta)
    q = np.linspace(0.0, min(free / lam, 1.0), n_grid + 1)
    budgets = np.maximum(free + c - lam * q[:-1], 0.0) / m
    brackets = kl_inverse_upper(q[1:], budgets)
    worst = int(np.argmax(brackets))
    catoni = -math.expm1(-(free + c) / m) / -math.expm1(-lam / m)
    raw = float(min(brackets[worst], catoni))
    return _certificate("kl", raw, q_info, None, m, delta, trivial,
                        parameter=float(q[worst + 1]),
                        posterior="exact Gibbs posterior")


def _ep_prior(X_a, y_a, prior_var, tune):
    """EP on the prior part ``A`` alone, by a rule fixed in advance: centre
    and scale ``A``'s columns with ``A``'s own moments, fit EP at ``lam =
    n_A`` under ``N(0, diag(prior_var))`` in those coordinates (``tune``:
    after maximising its evidence over the ARD variances, on ``A``), and map
    the Gaussian back to the coordinates of ``X_a``.

    Scores ``z . theta_z`` with ``z = (x - c_A) / s_A`` equal ``x . (theta_z
    / s_A)`` up to a constant, which the AUC ignores: the prior on ``theta =
    theta_z / s_A`` is ``N(mu_z / s_A, S_z / (s_A s_A'))``, exactly. A
    column constant on ``A`` keeps its prior ``N(0, prior_var_k)`` (``A``
    says nothing about it). Returns ``(mean, cov, prior_var)``, the last the
    variances used on ``A`` (tuned or not) in the coordinates of ``X_a``.
    """
    part = validate_xy(X_a, y_a, standardize=True, drop_constant=False)
    d = part.d
    var_z = np.broadcast_to(np.asarray(prior_var, dtype=float), (d,)).copy()
    varies = np.ptp(part.X, axis=0) > 0
    mean_z = np.zeros(d)
    if np.any(varies):
        ep = EPLinear(part.X[:, varies], part.y, lam=float(part.n),
                      prior_var=var_z[varies], standardize=False)
        if tune:
            ep.fit_hyperparameters()
            var_z[varies] = ep.prior_var
            result = ep.result_
        else:
            result = ep.fit()
        mean_z[varies] = result.mean
    cov_z = np.diag(var_z)
    if np.any(varies):
        cov_z[np.ix_(varies, varies)] = result.cov
    scale = part.scale
    return (mean_z / scale, cov_z / np.outer(scale, scale),
            var_z / scale ** 2)


def _log_gaussian(theta, mean, cov):
    """Log density of ``N(mean, cov)`` at the rows of ``theta`` (Cholesky)."""
    L = np.linalg.cholesky(cov)
    z = np.linalg.solve(L, (theta - mean).T)
    return (-0.5 * np.sum(z ** 2, axis=0) - np.sum(np.log(np.diag(L)))
            - 0.5 * mean.size * math.log(2 * math.pi))


@dataclasses.dataclass
class DataDependentPrior:
    """The EP prior ``N(mean, cov)`` fitted on the part ``in_prior`` of a
    sample (:func:`data_dependent_prior`), in the coordinates of the ``X``
    it was given; ``prior_var``: the variances of EP's own prior on that
    part (tuned on it by evidence when ``tuned``), in the same
    coordinates."""
    in_prior: np.ndarray
    mean: np.ndarray
    cov: np.ndarray
    fraction: float
    prior_var: np.ndarray = None
    tuned: bool = False


def data_dependent_prior(X, y, prior_var=1.0, fraction=0.3, seed=0,
                         tune=False):
    """Split ``(X, y)`` (:func:`~pac_particles.bounds.certification.prior_split`) and fit EP on the prior part
    ``A`` at ``lam = n_A`` under ``N(0, prior_var)``: the prior of
    :func:`data_dependent_candidate`, to reuse for several posteriors.

    Nothing of the other part enters it: ``A``'s columns are centred and
    scaled with ``A``'s own moments (the ``X`` given may be standardised
    with every row's), EP runs in those coordinates, and its Gaussian is
    mapped exactly into ``X``'s coordinates (:func:`_ep_prior`).
    ``tune=True`` first maximises EP's evidence on ``A`` over per-feature
    (ARD) prior variances starting from ``prior_var``: hyper-parameters
    tuned on ``A`` cost nothing in a bound on the other part.
    """
    X = np.asarray(X, dtype=float)
    positives = binary_labels(y)
    in_prior = certification.prior_split(positives, fraction, seed)
    mean, cov, variances = _ep_prior(X[in_prior], positives[in_prior],
                                     prior_var, bool(tune))
    return DataDependentPrior(in_prior, mean, cov, float(fraction),
                              variances, bool(tune))


def data_dependent_candidate(X, y, prior_var=1.0, gaussian=None,
                             particles=None, fraction=0.3, seed=0,
                             bounds=("kl",), prior=None):
    """A candidate of :func:`auc_certificate`: ``rho`` certified on the part
    ``B`` of ``(X, y)`` under the EP prior fitted on the part ``A``
    (:func:`~pac_particles.bounds.certification.prior_split`; module
    docstring).

    Parameters
    ----------
    X, y : the (preprocessed) training inputs ``rho`` lives on, and labels.
    prior_var : float or (d,) array
        Variance of the data-free Gaussian prior (EP's prior on ``A``, and the
        reference of ``particles``' KL).
    gaussian : tuple (mean, cov), optional
        ``rho = N(mean, cov)``.
    particles : tuple (theta, weights, kl), optional
        ``rho`` as weighted particles (N, d) with its ``KL`` to the data-free
        prior ``N(0, prior_var)`` (for SMC: :func:`gibbs_kl`).
    fraction : float in (0, 1), default 0.3
        Share of each class in the prior part (0.3 certified Pima best
        among 0.2, 0.3, 0.4, 0.5; see the certificates table of docs/benchmarks.md).
    seed : int
    bounds : names among ``'kl'``, ``'catoni'`` (tightest of them, inside
        this candidate's ``delta``).
    prior : DataDependentPrior, optional
        The prior already fitted by :func:`data_dependent_prior` (on the
        same ``X, y``; ``fraction`` and ``seed`` are then its own).

    Returns
    -------
    callable ``delta_each -> Certificate`` (named ``'kl'`` or ``'catoni'``
    with ``prior`` describing the split).
    """
    if (gaussian is None) == (particles is None):
        raise InputError("give rho as gaussian=(mean, cov) or as "
                         "particles=(theta, weights, kl), one of them")
    X = np.asarray(X, dtype=float)
    positives = binary_labels(y)
    if prior is None:
        prior = data_dependent_prior(X, positives, prior_var, fraction, seed)
    in_prior, mu_a, cov_a = prior.in_prior, prior.mean, prior.cov
    fraction = prior.fraction
    cert_pos, cert_neg = X[~in_prior & positives], X[~in_prior & ~positives]
    if gaussian is not None:
        mean, cov = (np.asarray(a, dtype=float) for a in gaussian)
        risk_b = expected_auc_risk(mean, cov, cert_pos, cert_neg)
        kl = gaussian_kl(mean - mu_a, cov, cov_a)
    else:
        theta, weights, kl_free = particles
        theta = np.atleast_2d(np.asarray(theta, dtype=float))
        weights = np.asarray(weights, dtype=float)
        d = theta.shape[1]
        prior_cov = np.diag(np.broadcast_to(np.asarray(prior_var, float), (d,)))
        risk_b = float(weights @ linear_auc_risk(theta, cert_pos, cert_neg))
        # KL(rho || pi_A) = KL(rho || pi) + E_rho[log pi - log pi_A]
        kl = kl_free + float(weights @ (
            _log_gaussian(theta, np.zeros(d), prior_cov)
            - _log_gaussian(theta, mu_a, cov_a)))
    kl = max(float(kl), 0.0)
    risk_b = min(max(float(risk_b), 0.0), 1.0)
    tuned = bool(getattr(prior, "tuned", False))
    label = (f"data-dependent: EP prior on {fraction:.0%} of each class "
             f"(lam = n_A; centred and scaled on that part"
             + ("; ARD prior variances tuned by evidence on that part"
                if tuned else "")
             + f"), certified on the other {1 - fraction:.0%}")
    fields = dict(prior=label, n_candidates=1, alternatives=(),
                  prior_fraction=float(fraction),
                  hyperparameters_tuned_on="prior part" if tuned else "none")
    if getattr(prior, "prior_var", None) is not None:
        fields["hyperparameters"] = (("prior_var", tuple(
            float(v) for v in np.atleast_1d(prior.prior_var))),)

    def candidate(delta_each):
        cert = auc_certificate(risk_b, kl, n_pos=len(cert_pos),
                               n_neg=len(cert_neg), delta=delta_each,
                               bounds=bounds)
        return dataclasses.replace(cert, **fields)
    return candidate
