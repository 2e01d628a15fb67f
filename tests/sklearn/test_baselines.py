import numpy as np
import pytest
from sklearn.metrics import roc_auc_score, roc_curve

from pac_particles.sklearn.baselines import RankBoost, logistic_scores


from builders import noisy_linear


def _data(n=120, d=4, seed=0):
    # features rounded to one decimal: ties
    return noisy_linear(n, [1.0, -1.0], seed, d=d, decimals=1)


def _pairwise_rankboost(X, y, n_rounds):
    """RankBoost as written in Freund et al. (2003), Fig. 2: an explicit
    distribution over the n_pos x n_neg crucial pairs, exhaustive search."""
    pos, neg = X[y == 1], X[y == 0]
    D = np.full((len(pos), len(neg)), 1.0 / (len(pos) * len(neg)))
    picked = []
    for _ in range(n_rounds):
        best = (0.0, None, None)
        for f in range(X.shape[1]):
            for t in np.unique(X[:, f])[:-1]:
                h_pos, h_neg = pos[:, f] > t, neg[:, f] > t
                r = np.sum(D * (h_pos[:, None].astype(float) - h_neg[None, :]))
                if abs(r) > abs(best[0]) + 1e-15:
                    best = (r, f, t)
        r, f, t = best
        alpha = 0.5 * np.log((1 + r) / (1 - r))
        diff = (pos[:, f] > t)[:, None].astype(float) - (neg[:, f] > t)[None, :]
        D = D * np.exp(-alpha * diff)
        D /= D.sum()
        picked.append((f, t, alpha))
    return picked


def test_rankboost_matches_the_pairwise_algorithm():
    X, y = _data(n=60, d=3)
    rb = RankBoost(n_rounds=6).fit(X, y)
    for k, (f, t, alpha) in enumerate(_pairwise_rankboost(X, y, 6)):
        assert rb.features_[k] == f and rb.thresholds_[k] == t
        assert rb.alphas_[k] == pytest.approx(alpha, rel=1e-9)


def test_first_round_edge_is_the_best_single_feature_youden_index():
    X, y = _data()
    rb = RankBoost(n_rounds=1).fit(X, y)
    youden = max(np.max(np.abs(tpr - fpr))
                 for tpr, fpr in ((roc_curve(y, col)[1], roc_curve(y, col)[0])
                                  for col in X.T))
    assert abs(rb.edges_[0]) == pytest.approx(youden, abs=1e-12)


def test_rankboost_separates_data_ranked_by_one_feature():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(80, 3))
    y = (X[:, 2] > 0.3).astype(int)
    rb = RankBoost(n_rounds=5).fit(X, y)
    assert roc_auc_score(y, rb.decision_function(X)) == 1.0


def test_rankboost_decision_function_is_the_weighted_vote():
    X, y = _data()
    rb = RankBoost(n_rounds=20).fit(X, y)
    votes = sum(a * (X[:, f] > t) for f, t, a in
                zip(rb.features_, rb.thresholds_, rb.alphas_))
    np.testing.assert_allclose(rb.decision_function(X), votes)
    assert roc_auc_score(y, rb.decision_function(X)) > 0.8


def test_rankboost_rejects_bad_input():
    X, y = _data()
    with pytest.raises(ValueError, match="one class"):
        RankBoost().fit(X, np.ones_like(y))
    with pytest.raises(ValueError, match="NaN"):
        RankBoost().fit(np.where(X > 1, np.nan, X), y)
    with pytest.raises(ValueError, match="columns"):
        RankBoost(n_rounds=2).fit(X, y).decision_function(X[:, :2])


def test_logistic_baseline_ranks_well_on_linear_data():
    X, y = _data(n=300)
    s = logistic_scores(X[:200], y[:200], X[200:], random_state=0)
    assert roc_auc_score(y[200:], s) > 0.8


def test_compare_scorers_uses_the_same_splits_for_every_scorer():
    from pac_particles.sklearn.baselines import LogisticBaseline
    from lab.study import compare_scorers
    X, y = _data(n=150)
    table = compare_scorers(X, y, {
        "logit": lambda seed: LogisticBaseline(random_state=seed),
        "logit again": lambda seed: LogisticBaseline(random_state=seed),
        "rankboost": lambda seed: RankBoost(n_rounds=30),
    }, n_repeats=3, seed=1)
    np.testing.assert_array_equal(table["logit"]["auc"], table["logit again"]["auc"])
    assert table["logit"]["auc"].shape == (3,)
    assert table["logit"]["mean"] > 0.75 and table["rankboost"]["mean"] > 0.7


def test_rankboost_refuses_constant_or_non_finite_inputs():
    # all-constant X used to give all-zero scores, NaN rows finite scores
    X, y = noisy_linear(60, [1.0, -1.0])
    with pytest.raises(ValueError, match="constant"):
        RankBoost(n_rounds=5).fit(np.ones((60, 2)), y)
    model = RankBoost(n_rounds=5).fit(X, y)
    bad = X[:3].copy()
    bad[1, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        model.decision_function(bad)
    with pytest.raises(ValueError, match="max_thresholds"):
        RankBoost(n_rounds=5, max_thresholds=0).fit(X, y)
