"""Single-run error bars of a waste-free tempering run: log Z and posterior
means, from the chains of one run.

A waste-free step [DC22] holds M chains of length P started from M
resampled particles. Given the past, the chains of one step are
independent, and the chain-based estimates of [DC22, Sec. 3.4]
(``particles``' ``Var_logLt`` for log Z, ``var_wf`` for a weighted mean)
read the variance off their spread. They miss what the past passes on: a
chain started from a particle of an over-represented chain of the
previous step carries that error forward, so the errors of the steps are
correlated and the chains of one step that share an ancestor err together.
Where the move does not forget its start within one chain (few particles
per dimension, the prior-ellipse slice of GP models) the per-step estimates
were 0.36-0.76 times the spread over runs (docs/benchmarks.md, "Single-run error
bars").

:class:`LineageVariance` adds these covariances from the chains' genealogy,
as the genealogy estimators of the particle filter do [CL13, LW18] with a
lag [OD19]: for ``log Z`` every chain's share of a step's error is grouped
by its ancestor :data:`LINEAGE_LAG` steps back, and the grouped totals give
the variance (sum of their squares) and the covariance between steps (sum
of their products). A posterior mean carries the error of every earlier
step, so its chains are grouped further back, as far as at least
:data:`MIN_LINEAGE_GROUPS` distinct ancestors remain, and
:func:`lineage_mean_variance` is the jackknife over those groups (the
plain sum of squared group totals is low by the weight of the largest
groups). The whole genealogy back to the initial particles (Chan & Lai's
"Eve" grouping) degenerates on long paths: at ``lam = 5 n`` on German
credit 4 initial ancestors were left after 23 steps, and the groups can no
longer see the later steps' errors. :func:`single_run_errors` reports the
larger of the per-step and lineage estimates.

References
----------
[CL13] Chan, H. P. and Lai, T. L. (2013). A general theory of particle
filters in hidden Markov models and some applications. Annals of
Statistics 41(6), 2877-2904.
[DC22] Dau, H.-D. and Chopin, N. (2022). Waste-free sequential Monte Carlo.
Journal of the Royal Statistical Society B 84(1), 114-148.
[LW18] Lee, A. and Whiteley, N. (2018). Variance estimation in the particle
filter. Biometrika 105(3), 609-625.
[OD19] Olsson, J. and Douc, R. (2019). Numerically stable online estimation
of variance in particle filters. Bernoulli 25(2), 1504-1535.
"""

import numpy as np
from particles import collectors
from particles.variance_mcmc import MCMC_variance

from pac_particles.core.checks import InputError, check_count, check_finite_array
from pac_particles.problem.priors import param_array
from pac_particles.core.weighted_particles import directions

__all__ = ["LineageVariance", "LINEAGE_LAG", "MIN_LINEAGE_GROUPS",
           "single_run_errors", "log_z_standard_error", "lineage_mean_variance",
           "chain_mean_variance", "mean_standard_error", "lineage_groups"]

#: Tempering steps back along the genealogy at which the chains are grouped:
#: the shortest lag beyond which the standard errors stopped growing
#: (docs/benchmarks.md, "Efficiency of the SMC sampler").
LINEAGE_LAG = 3
#: distinct ancestors the means' lineage groups keep at least: their
#: grouping goes back along the genealogy while that many remain
#: (:class:`LineageVariance`): the jackknife over fewer groups is too
#: noisy to be an error bar (docs/benchmarks.md, "The means' error bars of
#: a tempering run")
MIN_LINEAGE_GROUPS = 20


class LineageVariance(collectors.Collector):
    """Collector: at each step, ``(var, groups)``: the lineage variance of
    ``log L_t`` (the log evidence up to step ``t``) and, for each current
    chain, its ancestor chain at the step that :func:`lineage_mean_variance`
    groups the means' errors by: ``lag`` steps back at least, and further
    back as long as at least ``min_groups`` distinct ancestors remain there
    (:data:`MIN_LINEAGE_GROUPS`). ``lag`` defaults to :data:`LINEAGE_LAG`;
    ``run_smc`` adds one unless ``collect`` has one.

    To first order ``log L_t`` errs by ``sum_s delta_s``, ``delta_s =
    sum_m c_s(m)``, where ``c_s(m) = sum_p (w_s(p, m) / mean(w_s) - 1) /
    N`` is chain ``m``'s share of the relative error of step ``s``'s weight
    average. With ``A_j(g)`` the sum of the shares of step ``j``'s chains
    whose ancestor at step ``a = max(0, s - lag)`` is ``g``, step ``s``
    adds ``sum_g A_s(g)^2 + 2 sum_{j=a}^{s-1} sum_g A_s(g) A_j(g)``:
    its variance (with the covariance of chains of a common ancestor) and
    its covariance with the ``lag`` steps before it.

    A weighted mean at step ``t`` carries the error of every earlier step
    through the particles it descends from, not only of the last ``lag``:
    where the moves forget their start slowly, the chains that descend
    from one particle many steps back err together, and groups of a fixed
    lag read the means' error bars too narrow (docs/benchmarks.md, "The
    means' error bars of a tempering run").
    The groups therefore go back as far as the genealogy allows before it
    degenerates [OD19]: to the oldest step at which at least
    ``min_groups`` distinct ancestors of the current chains remain (the
    initial particles [CL13, LW18] where that many survive). The number
    of distinct ancestors at a past step only falls as the run goes on, so
    a step that falls below it is dropped for good.

    The chain of particle ``i`` is ``i % M`` (``particles`` stores a
    waste-free population as P rows of M chains, as ``Var_logLt`` reads
    it); the parent of chain ``m`` is the chain of its resampled start
    ``smc.A[m]``. The estimate needs a resampling at every step, as
    waste-free tempering does (``run_smc``); after a step without one it is
    nan from there on, and :func:`single_run_errors` falls back on the
    per-step estimates.
    """

    summary_name = "lineage"
    signature = {"lag": LINEAGE_LAG, "min_groups": MIN_LINEAGE_GROUPS}

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.lag = int(self.lag)
        self.min_groups = int(self.min_groups)
        self.shares = []       # the last lag + 1 steps' chain shares
        self.parents = []      # their parent chains (unused for the oldest)
        self.ancestry = []     # the current chains' ancestors at past steps
        self.var = 0.0

    def fetch(self, smc):
        m = smc.N
        if smc.t > 0 and not smc.rs_flag:
            # weights accumulate over steps without resampling: the shares
            # are no longer one step's (particles' Var_logLt handles this)
            self.var = np.nan
        lw = np.reshape(smc.wgts.lw, (-1, m), "C")
        w = np.exp(lw - lw.max())
        parent = np.asarray(smc.A) % m if smc.t > 0 else np.arange(m)
        self.shares.append((w / w.mean() - 1.0).sum(axis=0) / w.size)
        self.parents.append(parent)
        del self.shares[:-self.lag - 1], self.parents[:-self.lag - 1]
        # ancestor at the oldest kept step of every kept step's chains
        groups = np.arange(m)
        totals = [np.bincount(groups, weights=self.shares[0], minlength=m)]
        for share, parent_chain in zip(self.shares[1:], self.parents[1:]):
            groups = groups[parent_chain]
            totals.append(np.bincount(groups, weights=share, minlength=m))
        newest = totals[-1]
        self.var += newest @ newest + 2.0 * sum(newest @ t
                                                for t in totals[:-1])
        return self.var, self._mean_groups(parent, groups)

    def _mean_groups(self, parent, lagged):
        """The current chains' ancestors at the oldest step that keeps
        ``min(min_groups, M)`` distinct ones, or at ``lag`` steps back
        (``lagged``) where that is older."""
        m = parent.size
        self.ancestry = [a[parent] for a in self.ancestry] + [np.arange(m)]
        enough = min(self.min_groups, m)
        while np.unique(self.ancestry[0]).size < enough:
            del self.ancestry[0]
        # the lag's ancestors lie len(shares) - 1 steps back
        if len(self.ancestry) < len(self.shares):
            return lagged.copy()
        return self.ancestry[0].copy()


def _check_chains(values, weights, m):
    """``(values, weights, m)`` of a waste-free population, or InputError:
    (N, d) finite values, (N,) finite weights, N a multiple of M."""
    values = check_finite_array(values, "values", ndim=2)
    weights = check_finite_array(weights, "weights", ndim=1)
    m = check_count(m, "the number of chains M")
    if weights.shape[0] != values.shape[0] or values.shape[0] % m:
        raise InputError(f"values {values.shape} and weights {weights.shape} "
                         f"must have N = M P rows, M = {m} chains")
    return values, weights, m


def lineage_mean_variance(values, weights, groups):
    """Lineage variance of each column's weighted mean ``weights @ values /
    sum(weights)`` ((N, d) values, N = M P in P rows of M chains): the
    delete-a-group jackknife over the chains' ancestor groups (``groups``:
    ancestor chain of each chain, :class:`LineageVariance`).

    With ``A_g = sum_{i in g} W_i (values_i - mean)`` (``W`` the normalised
    weights) and ``w_g = sum_{i in g} W_i``, leaving group ``g`` out moves
    the mean by ``-A_g / (1 - w_g)``, and the jackknife, each group's
    pseudo-value weighted by the weight outside it, is ``sum_g (1 - w_g)
    (A_g / (1 - w_g))^2 = sum_g A_g^2 / (1 - w_g)``. For independent
    groups whose errors have variances in proportion to their weights it
    is unbiased; the plain ``sum_g A_g^2`` [CL13] has the expectation
    ``sum_g w_g (1 - w_g)`` times the variance, low by the weight of the
    largest groups (a tenth where ten groups of equal weight remain: the
    mean is estimated from the same groups). A group holding all the
    weight adds nothing (its ``A_g`` is 0)."""
    groups = np.asarray(groups)
    values, weights, m = _check_chains(values, weights, groups.shape[0])
    if groups.ndim != 1 or not np.all((groups >= 0) & (groups < m)):
        raise InputError(f"groups must hold one chain index in [0, {m}) per "
                         "chain")
    weights = weights / weights.sum()
    mean = weights @ values
    by_chain = weights.reshape(-1, m)
    shares = np.einsum("pm,pmd->md", by_chain,
                       (values - mean).reshape(-1, m, values.shape[1]))
    totals = np.zeros_like(shares)
    np.add.at(totals, groups, shares)
    outside = 1.0 - np.bincount(groups, weights=by_chain.sum(axis=0),
                                minlength=m)
    inside = outside > 1e-12
    return (totals[inside] ** 2 / outside[inside, None]).sum(axis=0)


def chain_mean_variance(values, weights, m):
    """[DC22, Sec. 3.4]'s variance of each column's weighted mean from the
    M chains alone: the initial-sequence estimate over the chains
    (``particles``' ``var_wf`` divided by N, on stored values)."""
    values, weights, m = _check_chains(values, weights, m)
    centred = weights[:, None] * (values - weights @ values)
    return np.array([MCMC_variance(np.reshape(centred[:, j], (-1, m), "C"),
                                   method="init_seq")
                     for j in range(values.shape[1])]) * weights.shape[0]


def mean_standard_error(values, weights, m, groups=None):
    """Standard error of each column's weighted mean: the square root of
    the larger of :func:`chain_mean_variance` and, with ``groups``,
    :func:`lineage_mean_variance`."""
    var = chain_mean_variance(values, weights, m)
    if groups is not None:
        var = np.maximum(var, lineage_mean_variance(values, weights, groups))
    return np.sqrt(np.maximum(var, 0.0))


def log_z_standard_error(summaries, n, t):
    """``log_z_se`` after step ``t`` (index in the summaries) of a run of
    ``n`` particles: the square root of the larger of the per-step [DC22]
    and lineage (:class:`LineageVariance`) variances (the per-step one
    alone where the lineage one is missing or nan); None without
    ``particles``' ``Var_logLt``."""
    per_step = getattr(summaries, "var_logLt", None)
    if not per_step:
        return None
    lineage = getattr(summaries, "lineage", None)
    lineage = lineage[t][0] if lineage else np.nan
    var = max(per_step[t] / n, 0.0)
    if np.isfinite(lineage):
        var = max(var, lineage)
    return float(np.sqrt(var))


def lineage_groups(summaries, t):
    """The chains' ancestor groups after step ``t`` (index in the
    summaries), or None without :class:`LineageVariance` or where its
    estimate is nan."""
    lineage = getattr(summaries, "lineage", None)
    if not lineage or not np.isfinite(lineage[t][0]):
        return None
    return lineage[t][1]


def single_run_errors(smc, theta=None):
    """Single-run standard errors ``(log_z_se, mean_se, bayes_point_se)`` of
    a finished waste-free tempering run; Nones for a standard run (no
    chains to read the variance from).

    Each is the square root of the larger of the chain-based estimate
    [DC22, Sec. 3.4] (``particles``' ``Var_logLt``; for the means
    :func:`chain_mean_variance`, its ``var_wf``) and the lineage estimate
    (:class:`LineageVariance`, which ``run_smc`` collects; without it, the
    chain-based one alone). ``log_z_se`` is None without the collector
    ``Var_logLt``.
    """
    if not getattr(smc.fk, "wastefree", False):
        return None, None, None
    if theta is None:
        theta = np.array(param_array(smc.X.theta), dtype=float)
    n, m = smc.W.shape[0], smc.N
    groups = lineage_groups(smc.summaries, -1)
    return (log_z_standard_error(smc.summaries, n, -1),
            mean_standard_error(theta, smc.W, m, groups),
            mean_standard_error(directions(theta), smc.W, m, groups))
