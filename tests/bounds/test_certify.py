"""certify(): the part-A prior is the standardised logistic regression of
part A, the certificate is never looser than that score's test-set bound
on B (at its share of delta), nothing of B enters the prior, the deployed
score's margin inequality holds pointwise."""

import dataclasses

import numpy as np

from pac_particles.sklearn.binary import certificate_spec
import pytest
from scipy.special import ndtr
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from pac_particles.bounds import CertificateSpec, certify, held_out_bound
from pac_particles.bounds.certification import (certificate_candidates,
                                                certified_score, part_a_prior)
from pac_particles.core.checks import InputError
from pac_particles.problem.problem import GibbsProblem
from pac_particles.sklearn.estimator import PACBayesAUC


def _data(n=400, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * np.arange(1, d + 1) + 3.0
    score = X @ (np.linspace(1, -1, d) / np.arange(1, d + 1)) \
        + rng.normal(size=n)
    y = score > np.quantile(score, 0.6)
    return X, y


@pytest.fixture(scope="module")
def fitted():
    X, y = _data(n=600)
    est = PACBayesAUC(method="ep", lam=200.0, random_state=0).fit(X, y)
    problem = GibbsProblem.ranking(X, y, 200.0)
    return X, y, est, problem


def test_part_a_prior_mean_is_the_standardised_logistic_regression_of_a():
    X, y = _data()
    in_a = np.zeros(len(y), bool)
    in_a[::2] = True
    mean, cov, _ = part_a_prior(X, y, in_a)
    reference = make_pipeline(StandardScaler(), LogisticRegression()).fit(
        X[in_a], y[in_a])
    shift = reference.decision_function(X) - X @ mean
    np.testing.assert_allclose(shift, shift[0], atol=1e-6)
    assert np.all(np.linalg.eigvalsh(cov) > 0)


@pytest.mark.parametrize("shape", [(400, 4), (60, 80)])
@pytest.mark.parametrize("intercept", [False, True])
def test_part_a_prior_covariance_is_the_inverse_laplace_hessian(intercept,
                                                                shape):
    """The covariance against the Hessian of the penalised log-likelihood
    formed directly, with the constant column, on A's standardised rows
    (the plain reference): A with more rows than columns and with fewer
    (30 rows, 80 columns: the Woodbury form)."""
    X, y = _data(*shape)
    if intercept:
        X = np.column_stack([X, np.ones(len(y))])
    in_a = np.zeros(len(y), bool)
    in_a[::2] = True
    mean, cov, prior_var = part_a_prior(X, y, in_a, intercept=intercept)
    features = X[in_a][:, :-1] if intercept else X[in_a]
    centre, scale = features.mean(axis=0), features.std(axis=0)
    Z1 = np.column_stack([(features - centre) / scale, np.ones(in_a.sum())])
    theta = mean[:-1] * scale if intercept else mean * scale
    intercept_z = (LogisticRegression(C=prior_var).fit(
        Z1[:, :-1], y[in_a]).intercept_[0])
    p = 1.0 / (1.0 + np.exp(-(Z1[:, :-1] @ theta + intercept_z)))
    H = Z1.T @ (Z1 * (p * (1 - p))[:, None])
    H[:-1, :-1] += np.eye(Z1.shape[1] - 1) / prior_var
    cov_z = np.linalg.inv(H)
    if intercept:
        T = np.eye(Z1.shape[1])
        T[:-1, :-1] = np.diag(1.0 / scale)
        T[-1, :-1] = -centre / scale
        expected = T @ cov_z @ T.T
    else:
        expected = cov_z[:-1, :-1] / np.outer(scale, scale)
    np.testing.assert_allclose(cov, expected, rtol=1e-5)


def test_part_a_prior_sees_nothing_of_b():
    X, y = _data()
    in_a = np.zeros(len(y), bool)
    in_a[::2] = True
    moved = X.copy()
    moved[~in_a] = moved[~in_a] * 3.0 + 1.0
    for before, after in zip(part_a_prior(X, y, in_a),
                             part_a_prior(moved, y, in_a)):
        np.testing.assert_allclose(after, before, rtol=1e-9, atol=1e-12)


def test_certificate_is_the_part_a_test_set_bound_or_tighter(fitted):
    """The part-A candidate is the test-set bound of a standardised
    logistic regression fitted on A (sklearn's) at 0.9 delta: the
    certificate is never looser than it."""
    X, y, est, problem = fitted
    spec = certificate_spec(est)
    part_a = certificate_candidates(est.posterior_, problem, spec)[0]
    cert = est.certificate_
    # B's m is at least 100: the randomised route is offered at 0.1 delta
    assert part_a.certificate.m >= 100 and cert.n_candidates == 2
    assert part_a.certificate.delta == pytest.approx(0.9 * est.eps)
    assert cert.bound <= part_a.certificate.bound
    b_risk = part_a.certificate.empirical_randomized_risk
    assert held_out_bound(b_risk, part_a.certificate.m, 0.9 * est.eps
                          ).bound == pytest.approx(part_a.certificate.bound)
    # on B, the part-A score ranks as well as on every row, give or take
    whole = 1.0 - roc_auc_score(y, problem.data.X @ part_a.mean)
    assert abs(b_risk - whole) < 0.05


def test_certificate_names_the_score_and_pays_its_shares(fitted):
    _, _, est, problem = fitted
    cert = est.certificate_
    found = certified_score(est.posterior_, problem, cert,
                            certificate_spec(est))
    assert found.certificate.bound == cert.bound
    assert sum(dict(cert.delta_shares).values()) == pytest.approx(est.eps)
    text = str(cert)
    assert "95% confidence" in text and f"{cert.bound:.3f}" in text
    assert ("part-A score" in text) == (found.name == "part-A score")


def test_certificate_draws_from_its_own_seed_stream(fitted):
    """The split is not the one a fit seeded alike would draw
    (default_rng(random_state)): its stream is its own."""
    from pac_particles.bounds import prior_split
    from pac_particles.bounds.certification import certificate_split
    _, y, est, _ = fitted
    in_a = certificate_split(y, certificate_spec(est))
    assert not np.array_equal(in_a, prior_split(y, 0.5, 0))


def test_margin_inequality_holds_pointwise_against_monte_carlo():
    """1{d.w < 0} <= P_rho(d.theta < gamma t s_d) / Phi(gamma) for rho =
    N(c w, t^2 S): the probability by Monte Carlo, the closed form used."""
    rng = np.random.default_rng(1)
    d = 3
    A = rng.normal(size=(d, d))
    S = A @ A.T + np.eye(d)
    w = rng.normal(size=d)
    D = rng.normal(size=(40, d))
    c, t, gamma = 2.0, 0.7, 1.0
    theta = c * w + t * rng.multivariate_normal(np.zeros(d), S, 200_000)
    s = np.sqrt(np.einsum("kd,de,ke->k", D, S, D))
    below = (D @ theta.T < gamma * t * s[:, None]).mean(axis=1)
    closed = ndtr(gamma - c * (D @ w) / (t * s))
    np.testing.assert_allclose(below, closed, atol=0.005)
    assert np.all((D @ w < 0) <= closed / ndtr(gamma) + 1e-12)


def test_deployed_certificate_bounds_the_returned_score(fitted):
    X, y, est, problem = fitted
    cert = est.deployed_certificate_
    assert cert.name == "derandomised kl" and cert.delta == est.eps
    assert "deployed score" in str(cert)
    # its empirical term is the returned score's risk on B, below the bound
    assert cert.empirical_randomized_risk < cert.bound <= 1.0


def test_spec_refuses_bad_values():
    with pytest.raises(InputError):
        CertificateSpec(delta=1.5)
    with pytest.raises(InputError):
        CertificateSpec(score="bayes")


def test_below_m_100_the_part_a_score_takes_the_whole_delta():
    X, y = _data(n=120)
    est = PACBayesAUC(method="ep", lam=100.0, random_state=0).fit(X, y)
    problem = GibbsProblem.ranking(X, y, 100.0)
    cert = certify(est.posterior_, problem, certificate_spec(est))
    assert cert.n_candidates == 1 and cert.name == "held_out"
    assert cert.bound == pytest.approx(held_out_bound(
        cert.empirical_randomized_risk, cert.m, est.eps).bound)


def test_one_row_of_a_class_gets_the_trivial_certificate():
    X, y = _data(n=40)
    y = np.zeros(40, bool)
    y[0] = True
    cert = certify(None, GibbsProblem.ranking(X, y, 10.0), CertificateSpec())
    assert cert.bound == 1.0 and cert.vacuous and cert.name == "trivial"


def test_the_certified_part_a_score_is_the_estimators_to_score_with(fitted):
    """Where the certificate certifies the part-A score, the estimator
    scores with it on raw inputs: its AUC on part B (sklearn's) is the
    certificate's empirical term, and its scores are the part-A mean's on
    the fit's design; a randomised certificate has no fixed score."""
    from pac_particles.bounds.certification import certificate_split
    X, y, est, problem = fitted
    cert = est.certificate_
    assert cert.posterior.startswith("the part-A score")
    in_a = certificate_split(problem.data.y, certificate_spec(est))
    scores = est.certified_decision_function(X)
    np.testing.assert_allclose(
        scores - scores.mean(),
        problem.data.X @ np.asarray(cert.score_coefficients)
        - (problem.data.X @ np.asarray(cert.score_coefficients)).mean(),
        rtol=1e-9, atol=1e-9)
    b_risk = 1.0 - roc_auc_score(y[~in_a], scores[~in_a])
    assert b_risk == pytest.approx(cert.empirical_randomized_risk, abs=1e-12)
    randomised = _with_a_randomised_certificate(est)
    with pytest.raises(InputError, match="randomised score"):
        randomised.certified_decision_function(X)


def _with_a_randomised_certificate(est):
    """A copy of ``est`` whose certificate certifies the randomised score."""
    import copy
    other = copy.copy(est)
    other.certified_coef_ = other.certified_intercept_ = None
    return other


def test_deploy_certified_returns_the_part_a_score_with_its_test_set_bound():
    """``deploy='certified'``: ``decision_function`` is a standardised
    logistic regression fitted on part A alone (scikit-learn's, up to a
    shift and a positive scale), and ``deployed_certificate_`` is the kl
    test-set bound of its AUC on part B (``roc_auc_score``) at the whole
    eps: the user's test-set bound on the same rows."""
    from pac_particles.bounds.certification import certificate_split
    X, y = _data(n=300)
    est = PACBayesAUC(method="ep", lam=100.0, random_state=0,
                      deploy="certified").fit(X, y)
    in_a = certificate_split(y, certificate_spec(est))
    user = make_pipeline(StandardScaler(), LogisticRegression(
        max_iter=2000)).fit(X[in_a], y[in_a]).decision_function(X)
    ours = est.decision_function(X)
    slope = np.polyfit(user, ours, 1)[0]
    assert slope > 0
    np.testing.assert_allclose(ours - ours.mean(),
                               slope * (user - user.mean()), atol=1e-6)
    m = int(min(y[~in_a].sum(), (~y[~in_a]).sum()))
    expected = held_out_bound(1.0 - roc_auc_score(y[~in_a], user[~in_a]), m,
                              est.eps).bound
    cert = est.deployed_certificate_
    assert cert.bound == pytest.approx(expected, abs=1e-12)
    assert cert.delta == est.eps and cert.n_candidates == 1
    assert cert.posterior.startswith("the part-A score")
    # never looser than the randomised certificate's part-A route (0.9 eps)
    assert cert.bound <= est.certificate_.bound + 1e-12
    # the default deploys the all-rows posterior, certified derandomised
    default = PACBayesAUC(method="ep", lam=100.0, random_state=0).fit(X, y)
    assert default.deployed_certificate_.name == "derandomised kl"
    assert not np.allclose(default.coef_ / np.linalg.norm(default.coef_),
                           est.coef_ / np.linalg.norm(est.coef_))


def test_deploy_refuses_unknown_values_and_gp_scores():
    X, y = _data(n=60)
    with pytest.raises(InputError, match="deploy"):
        PACBayesAUC(method="ep", lam=10.0, deploy="part_a").fit(X, y)
    with pytest.raises(InputError, match="kernel=None"):
        PACBayesAUC(method="ep", lam=10.0, kernel="rbf",
                    deploy="certified").fit(X, y)


def test_deploy_certified_refuses_rows_left_on_a_cluster():
    """Rows on a Dask cluster get no certificate (their row sample is drawn
    with replacement): no certified score to deploy either."""
    da = pytest.importorskip("dask.array")
    X, y = _data(n=2000)
    with pytest.raises(InputError, match="in memory"):
        PACBayesAUC(method="vb", lam=100.0, random_state=0,
                    deploy="certified").fit(da.from_array(X, chunks=(500, 4)),
                                            da.from_array(y.astype(int),
                                                          chunks=500))


def test_margin_rows_match_the_pairs_differences_one_by_one():
    """The scales ``sqrt(d' S d)`` through the covariance's root against the
    plain double loop over pairs, for a singular ``S`` and a pair of
    identical rows (scale exactly 0)."""
    from pac_particles.bounds.derandomised import margin_rows
    rng = np.random.default_rng(3)
    X_pos, X_neg = rng.normal(size=(7, 4)), rng.normal(size=(5, 4))
    X_neg[2] = X_pos[4]
    F = rng.normal(size=(4, 3))
    S = F @ F.T                          # rank 3
    w = rng.normal(size=4)
    u, s, sampled = margin_rows(X_pos, X_neg, w, S, 10 ** 6, rng)
    assert not sampled
    want_u, want_s = [], []
    for a in X_pos:
        for b in X_neg:
            d = a - b
            want_u.append(d @ w)
            want_s.append(np.sqrt(max(d @ S @ d, 0.0)))
    np.testing.assert_allclose(u, want_u, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(s, want_s, rtol=1e-8, atol=1e-10)
    assert s[4 * 5 + 2] == 0.0


def test_a_shared_setting_fits_the_part_a_prior_once_and_changes_nothing(
        fitted, monkeypatch):
    """Several certificates of the same rows through one CertificateSetting
    (the estimator's randomised, deployed and certified-step certificates)
    equal those computed each on its own, with the part-A prior fitted
    once; a setting refuses rows or a split it was not made for."""
    from pac_particles.bounds import certification
    from pac_particles.bounds.certification import CertificateSetting
    X, y, est, problem = fitted
    alone = [certify(est.posterior_, problem.at(lam),
                     certificate_spec(est, score))
             for lam, score in ((est.lam_, "randomised"),
                                (est.lam_, "deployed"),
                                (2.0 * est.lam_, "part_a"))]
    calls = []
    real = certification.part_a_prior
    monkeypatch.setattr(certification, "part_a_prior",
                        lambda *a, **k: calls.append(1) or real(*a, **k))
    setting = CertificateSetting(problem, certificate_spec(est))
    shared = [certify(est.posterior_, problem.at(lam),
                      certificate_spec(est, score), setting)
              for lam, score in ((est.lam_, "randomised"),
                                 (est.lam_, "deployed"),
                                 (2.0 * est.lam_, "part_a"))]
    assert len(calls) == 1
    for a, b in zip(alone, shared):
        assert b.bound == a.bound and b.posterior == a.posterior
    other_seed = dataclasses.replace(certificate_spec(est), seed=12345)
    with pytest.raises(InputError, match="other rows or another split"):
        certify(est.posterior_, problem, other_seed, setting)
    other_rows = GibbsProblem.ranking(X[:-1], y[:-1] == 1, 1.0)
    with pytest.raises(InputError, match="other rows or another split"):
        certify(est.posterior_, other_rows, certificate_spec(est), setting)


def test_the_deployed_certificate_is_computed_when_first_read(monkeypatch):
    """The fit leaves the derandomised certificate to its first read (no
    pair margin in the fit, the part-A prior fitted once all the same), and
    that read, a pickled copy's and a setting without B's rows give the
    certificate computed on its own; ``deploy='certified'`` computes its
    certificate in the fit (its score is the deployed one)."""
    import pickle
    from pac_particles.bounds import certification
    from pac_particles.bounds.certification import CertificateSetting
    X, y = _data(n=400)
    margins, priors = [], []
    real_margins, real_prior = (certification.margin_rows,
                                certification.part_a_prior)
    monkeypatch.setattr(certification, "margin_rows", lambda *a, **k:
                        margins.append(1) or real_margins(*a, **k))
    monkeypatch.setattr(certification, "part_a_prior", lambda *a, **k:
                        priors.append(1) or real_prior(*a, **k))
    est = PACBayesAUC(method="ep", lam=100.0, random_state=0).fit(X, y)
    assert not margins and len(priors) == 1
    copied = pickle.loads(pickle.dumps(est))
    problem = GibbsProblem.ranking(X, y, 100.0)
    spec = certificate_spec(est, "deployed")
    alone = certify(est.posterior_, problem, spec)
    cert = est.deployed_certificate_
    assert len(margins) == 2 and len(priors) == 2
    assert cert is est.deployed_certificate_ and len(margins) == 2
    for got in (cert, copied.deployed_certificate_):
        assert got.name == "derandomised kl"
        assert got.bound == pytest.approx(alone.bound, rel=1e-12)
        assert got.posterior == alone.posterior
    setting = CertificateSetting(problem, certificate_spec(est))
    certify(est.posterior_, problem, certificate_spec(est), setting)
    light = setting.without_rows()
    assert light._parts is None and light._prior[0] is setting._parts[0]
    again = certify(est.posterior_, problem, spec, light)
    assert again.bound == pytest.approx(alone.bound, rel=1e-12)
    assert len(priors) == 3
    eager = PACBayesAUC(method="ep", lam=100.0, random_state=0,
                        deploy="certified").fit(X, y)
    assert eager.__dict__["_deployed_certificate"].name == "held_out"


def test_a_default_smc_fit_fits_its_part_a_prior_once(monkeypatch):
    """The certified choice of lam (a certificate per tempering step) and
    the fit's own certificates share one CertificateSetting: the part-A
    prior is fitted once a fit."""
    from pac_particles.bounds import certification
    calls = []
    real = certification.part_a_prior
    monkeypatch.setattr(certification, "part_a_prior",
                        lambda *a, **k: calls.append(1) or real(*a, **k))
    X, y = _data(n=300)
    est = PACBayesAUC(method="smc", n_particles=20, len_chain=3,
                      grid_size=5, n_folds=2, random_state=0).fit(X, y)
    assert est.cv_rule == "certified" and est.certificate_ is not None
    assert est.deployed_certificate_ is not None
    assert len(calls) == 1


def test_the_part_a_prior_of_the_validated_data_is_the_one_of_its_rows():
    """part_a_prior on the validated data (A's rows gathered from its
    class-ordered copy) is the prior of its design in input order, and the
    certificate never builds that design."""
    X, y = _data(n=300)
    problem = GibbsProblem.ranking(X, y, 50.0)
    in_a = np.random.default_rng(1).random(len(y)) < 0.5
    from_data = part_a_prior(problem.data, y, in_a)
    assert "X" not in problem.data.__dict__
    for got, want in zip(from_data, part_a_prior(problem.data.X, y, in_a)):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    fresh = GibbsProblem.ranking(X, y, 50.0)
    est = PACBayesAUC(method="ep", lam=50.0, random_state=0).fit(X, y)
    certify(est.posterior_, fresh, CertificateSpec(seed=0))
    certify(est.posterior_, fresh, CertificateSpec(seed=0, score="deployed"))
    assert "X" not in fresh.data.__dict__


@pytest.mark.parametrize("ordered", [True, False])
def test_the_certifying_rows_scores_are_those_of_their_gathered_rows(ordered):
    """B's scores from each class's rows, B's picked (no gather), are those
    of B's gathered rows, positives first, whether the data hold a
    class-ordered copy or rows in input order; B's rows in input order (a
    wrong variant) are told apart."""
    from pac_particles.bounds.certification import certificate_setting
    from pac_particles.problem.data import AUCData
    X, y = _data(n=300)
    problem = GibbsProblem.ranking(X, y, 50.0)
    if not ordered:
        data = problem.data
        problem = dataclasses.replace(problem, data=AUCData(
            X=np.array(data.X), y=data.y, columns=data.columns,
            center=data.center, scale=data.scale))
    assert ("ordered" in problem.data.__dict__
            and problem.data.ordered is not None) == ordered
    in_a, _, _, rows, _ = certificate_setting(problem, CertificateSpec(seed=3))
    in_b = ~in_a
    w = np.random.default_rng(0).normal(size=X.shape[1])
    got = rows.scores(w)
    assert "X" not in rows.__dict__
    want = rows.X @ w
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert np.array_equal(rows.y, np.arange(in_b.sum()) < np.count_nonzero(
        in_b & problem.data.y))
    in_input_order = problem.data.X[in_b] @ w
    assert not np.allclose(in_input_order, want)
    np.testing.assert_allclose(rows.scores(w), want, rtol=1e-12, atol=1e-12)
