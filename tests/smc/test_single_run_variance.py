"""The single-run error bars of the posterior means against independent
truths: the jackknife over ancestor groups against groups of known
variance, and the means' error bars of tempering runs against their spread
over runs, where the former estimate (the chains grouped a fixed three
steps back, their shares summed and squared) was too narrow."""
import numpy as np
import pytest
from particles import collectors

from lab.study.smc_exactness import DESIGNS, design
from pac_particles.smc.models import AUCGibbsModel
from pac_particles.smc.posterior import run_smc
from pac_particles.smc.single_run_variance import (LINEAGE_LAG,
                                                   chain_mean_variance,
                                                   lineage_mean_variance)


def test_the_group_jackknife_is_unbiased_where_the_plain_sum_is_low():
    """Independent ancestor groups whose errors have variances in
    proportion to their weights (here all rows of a group share one
    value): the weighted mean has variance 1. Over 20,000 replicates (the
    columns) the jackknife averages 1; the plain sum of the squared group
    totals ``sum_g w_g (1 - w_g)``, a third low with these weights."""
    rng = np.random.default_rng(0)
    m, p, reps = 8, 3, 20_000
    groups = np.array([0, 0, 0, 0, 4, 4, 6, 7])
    weights = rng.random(m * p)
    weights /= weights.sum()
    w_g = np.bincount(groups, weights=weights.reshape(p, m).sum(axis=0),
                      minlength=m)
    errors = rng.standard_normal((m, reps)) * np.sqrt(w_g)[:, None]
    share = np.divide(errors, w_g[:, None], out=np.zeros_like(errors),
                      where=w_g[:, None] > 0)
    values = 2.0 + share[groups][np.arange(m * p) % m]
    means = weights @ values
    assert np.var(means) == pytest.approx(1.0, rel=0.03)   # the truth
    jackknife = lineage_mean_variance(values, weights, groups)
    assert jackknife.mean() == pytest.approx(1.0, rel=0.03)
    # the plain sum, the former estimate, is rejected
    centred = weights[:, None] * (values - means)
    totals = np.zeros((m, reps))
    np.add.at(totals, groups, centred.reshape(p, m, reps).sum(axis=0))
    plain = (totals ** 2).sum(axis=0).mean()
    assert plain == pytest.approx(1.0 - w_g @ w_g, rel=0.03)
    assert plain < 0.8


class _Parents(collectors.Collector):
    """Each step's parent chains (the genealogy the former estimate read)."""
    summary_name = "parents"

    def fetch(self, smc):
        return np.asarray(smc.A) % smc.N if smc.t > 0 else np.arange(smc.N)


def _lagged_groups(parents, lag):
    """The final chains' ancestors ``lag`` steps back."""
    groups = np.arange(parents[-1].size)
    for parent in parents[:-lag - 1:-1]:
        groups = parent[groups]
    return groups


def test_the_means_error_bars_match_their_spread_where_a_fixed_lag_did_not():
    """d = 3 at 100 n (the sphere design of the exactness study), 40 runs
    from the prior with short chains (M = 400, P = 4), whose moves forget
    their start slowly: the spread over runs of the posterior mean over
    the mean reported ``mean_se`` lies in [0.8, 1.25]; the former
    estimate, the chains grouped three steps back with their shares
    summed and squared (the larger of it and the chains' own estimate),
    gives more than 1.25 on the same runs."""
    X, y = design(*DESIGNS["d=3 n=40"])
    model_args = (X, y, 100.0 * len(y))
    means, se_now, se_before = [], [], []
    for seed in range(40):
        post = run_smc(AUCGibbsModel(*model_args, standardize=False),
                       n_particles=400, len_chain=4, seed=seed,
                       start="prior", evidence="tempering",
                       collect=[_Parents()])
        theta, weights, m = post.theta, post.weights, post.n_chains
        groups = _lagged_groups(post.summaries.parents, LINEAGE_LAG)
        shares = np.einsum("pm,pmd->md", weights.reshape(-1, m),
                           (theta - post.mean).reshape(-1, m, 3))
        totals = np.zeros_like(shares)
        np.add.at(totals, groups, shares)
        before = np.maximum((totals ** 2).sum(axis=0),
                            chain_mean_variance(theta, weights, m))
        means.append(post.mean)
        se_now.append(post.mean_se)
        se_before.append(np.sqrt(before))
    spread = np.std(means, axis=0, ddof=1)
    now = spread / np.mean(se_now, axis=0)
    before = spread / np.mean(se_before, axis=0)
    assert np.all((0.8 <= now) & (now <= 1.25)), now
    assert np.all(before > 1.25), before
