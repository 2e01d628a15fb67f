"""The committee of a fitted posterior: votes, entropy, Bayes point, reject
curve, ranks and the query loop, each against a direct numpy computation
from the weighted draws."""

import numpy as np
import pytest
from scipy import stats

from pac_particles.core.checks import InputError
from pac_particles.sklearn.committee import (Committee, binary_entropy,
                                     query_by_committee, reject_curve)
from pac_particles.core.kernels import SquaredExponential
from pac_particles.smc.models import (AUCGibbsModel, ClassificationGibbsModel,
                                  GPClassificationModel)
from pac_particles.smc.posterior import run_smc
from pac_particles.approx.classification_vb import ClassificationVB
from builders import noisy_linear, two_d_problem


@pytest.fixture(scope="module")
def linear_post():
    X, y = noisy_linear(60, [1.0, -1.0, 0.5], seed=4)
    model = ClassificationGibbsModel(X, y, lam=60.0)
    return X, y, run_smc(model, n_particles=100, len_chain=5, seed=0)


def test_vote_entropy_and_bayes_point_are_the_weighted_sums(linear_post):
    X, y, post = linear_post
    X_new = np.random.default_rng(0).normal(size=(25, 3))
    committee = Committee.from_posterior(post)
    Z = np.column_stack([(X_new - X.mean(0)) / X.std(0), np.ones(25)])
    S = Z @ post.theta.T
    p = ((S > 0) + 0.5 * (S == 0)) @ post.weights
    np.testing.assert_allclose(committee.vote(X_new), p, atol=1e-12)
    np.testing.assert_array_equal(committee.decide(X_new), p > 0.5)
    h = -(p * np.log2(np.maximum(p, 1e-300))
          + (1 - p) * np.log2(np.maximum(1 - p, 1e-300)))
    np.testing.assert_allclose(committee.entropy(X_new), h, atol=1e-12)
    unit = post.theta / np.linalg.norm(post.theta, axis=1, keepdims=True)
    bp = np.sum(post.weights[:, None] * unit, axis=0)
    np.testing.assert_allclose(committee.bayes_point, bp, atol=1e-12)
    np.testing.assert_allclose(committee.bayes_point_scores(X_new), Z @ bp,
                               atol=1e-12)
    assert 0 < np.mean((p > 0.1) & (p < 0.9))  # some uncertain votes


def test_binary_entropy_values():
    np.testing.assert_allclose(binary_entropy([0.0, 0.5, 1.0, 0.25]),
                               [0.0, 1.0, 0.0, 0.8112781244591328])


def test_gp_committee_votes_with_the_kernel_expansion():
    """GP latent scores: member k scores x by k(x, X) K^-1 s_k; the Bayes
    point normalises s_k by its RKHS norm sqrt(s_k' K^-1 s_k)."""
    X, y = two_d_problem(n=40)
    model = GPClassificationModel(X, y, lam=20.0, kernel=SquaredExponential(1.0))
    post = run_smc(model, n_particles=60, len_chain=5, seed=1)
    committee = Committee.from_posterior(post)
    X_new = np.random.default_rng(2).normal(size=(15, 2))
    Zt = (X_new - X.mean(0)) / X.std(0)
    K = model.kernel(model.data.X, model.data.X) + model.jitter * np.eye(40)
    alpha = np.linalg.solve(K, post.theta.T)                   # (n, N)
    S = model.kernel(Zt, model.data.X) @ alpha
    np.testing.assert_allclose(committee.vote(X_new),
                               ((S > 0) + 0.5 * (S == 0)) @ post.weights,
                               atol=1e-12)
    norms = np.sqrt(np.sum(post.theta.T * alpha, axis=0))
    bp = (post.theta / norms[:, None]).T @ post.weights
    np.testing.assert_allclose(committee.bayes_point, bp, rtol=1e-6)


def test_vb_committee_vote_matches_the_gaussian_probit():
    """Draws of the VB Gaussian vote as Phi(x m / sqrt(x S x)), within
    Monte Carlo error."""
    X, y = noisy_linear(80, [1.0, 0.5], seed=3)
    vb = ClassificationVB(X, y, lam=40.0, loss="hinge")
    vb.fit()
    committee = Committee.from_posterior(vb, n_draws=20000, seed=0)
    X_new = np.random.default_rng(1).normal(size=(10, 2)) * 0.3
    np.testing.assert_allclose(committee.vote(X_new), vb.predict_proba(X_new),
                               atol=0.015)
    with pytest.raises(InputError, match="fit"):
        Committee.from_posterior(ClassificationVB(X, y, lam=40.0))


def test_reject_curve_against_a_direct_loop():
    rng = np.random.default_rng(5)
    p = rng.uniform(size=101)
    p[:4] = 0.5
    y = rng.uniform(size=101) < p
    rates, errors = reject_curve(p, y, rates=[0.0, 0.1, 0.33, 0.5])
    for rate, error in zip(rates, errors):
        n_keep = 101 - int(np.floor(rate * 101))
        keep = np.argsort(-np.abs(p - 0.5), kind="stable")[:n_keep]
        wrong = [0.5 if p[i] == 0.5 else float((p[i] > 0.5) != y[i])
                 for i in keep]
        assert error == pytest.approx(np.mean(wrong))
    with pytest.raises(InputError):
        reject_curve(p, y, rates=[1.0])


def test_rank_uncertainty_and_pair_entropy_against_numpy():
    rng = np.random.default_rng(6)
    theta, w = rng.normal(size=(30, 3)), rng.uniform(size=30)
    w /= w.sum()
    committee = Committee(theta, w)
    X = rng.normal(size=(12, 3))
    X[3] = X[7]                                     # a tie in every member
    mean, sd = committee.rank_uncertainty(X)
    ranks = np.array([(stats.rankdata(X @ t) - 1) / 11 for t in theta])
    np.testing.assert_allclose(mean, w @ ranks, atol=1e-12)
    np.testing.assert_allclose(sd, np.sqrt(w @ (ranks - w @ ranks) ** 2),
                               atol=1e-12)
    cand, ref = rng.normal(size=(4, 3)), rng.normal(size=(6, 3))
    expected = []
    for c in cand:
        p = np.array([np.sum(w * ((theta @ c > theta @ r)
                                  + 0.5 * (theta @ c == theta @ r)))
                      for r in ref])
        expected.append(binary_entropy(p).mean())
    np.testing.assert_allclose(committee.pair_order_entropy(cand, ref, raw=False),
                               expected, atol=1e-12)


def _fit_smc(X, y, seed):
    model = ClassificationGibbsModel(X, y, lam=2.0 * len(y))
    return Committee.from_posterior(run_smc(model, n_particles=40, len_chain=4,
                                            seed=seed))


def test_query_by_committee_queries_the_point_of_highest_entropy():
    X, y = noisy_linear(120, [2.0, -1.0], seed=7, noise=0.3)
    X_test, y_test = noisy_linear(200, [2.0, -1.0], seed=8, noise=0.3)
    curve = query_by_committee(_fit_smc, X, y, X_test, y_test, n_initial=6,
                               n_queries=3, seed=0)
    assert curve.n_labels.tolist() == [6, 7, 8, 9]
    assert len(set(curve.queried.tolist())) == 9
    assert np.all((curve.score >= 0) & (curve.score <= 1))
    # replay the first query: the initial fit, same seeds
    rng = np.random.default_rng(0)
    pos = y == 1
    first = [int(rng.choice(np.flatnonzero(pos))), int(rng.choice(np.flatnonzero(~pos)))]
    rest = rng.permutation(np.setdiff1d(np.arange(120), first))
    labelled = first + [int(i) for i in rest[:4]]
    assert labelled == curve.queried[:6].tolist()
    committee = _fit_smc(X[labelled], y[labelled], int(rng.integers(2**31)))
    free = np.setdiff1d(np.arange(120), labelled)
    h = committee.entropy(X[free])
    assert h[np.flatnonzero(free == curve.queried[6])[0]] == pytest.approx(h.max())
    again = query_by_committee(_fit_smc, X, y, X_test, y_test, n_initial=6,
                               n_queries=3, seed=0)
    np.testing.assert_array_equal(again.queried, curve.queried)
    assert curve.labels_to_reach(2.0) is None
    assert curve.labels_to_reach(0.0) == 6


def test_pair_entropy_rule_runs_on_an_auc_posterior():
    X, y = noisy_linear(60, [1.0, 1.0], seed=9)

    def fit(Xl, yl, seed):
        post = run_smc(AUCGibbsModel(Xl, yl, lam=len(yl)), n_particles=30,
                       len_chain=3, seed=seed)
        return Committee.from_posterior(post)

    def auc(committee, Xt, yt):
        from sklearn.metrics import roc_auc_score
        return roc_auc_score(yt, committee.bayes_point_scores(Xt))

    curve = query_by_committee(fit, X[:40], y[:40], X[40:], y[40:],
                               n_initial=6, n_queries=2, rule="pair_entropy",
                               score=auc, seed=1)
    assert curve.rule == "pair_entropy" and len(curve.score) == 3
    with pytest.raises(InputError, match="rule"):
        query_by_committee(fit, X, y, X, y, rule="margin")
