import warnings

import numpy as np
import pytest

from builders import noisy_linear
from pac_particles.core.checks import InputError
from pac_particles.approx.ep import EPLinear
from pac_particles.smc.models import AUCGibbsModel, GPAUCModel
from pac_particles.smc.posterior import run_smc
from pac_particles.problem.priors import SpikeSlabPrior
from pac_particles.approx.vb import GaussianVB
from pac_particles.core.weighted_particles import WeightedParticles

az = pytest.importorskip("arviz")
from pac_particles.core.gaussian import gaussian_draws  # noqa: E402
from pac_particles.core.inference_data import to_inference_data  # noqa: E402
from pac_particles.core.weighted_particles import (  # noqa: E402
    resample_equally_weighted)

NAMES = ["age", "dose", "noise"]


@pytest.fixture(scope="module")
def smc_runs():
    X, y = noisy_linear(120, [1.0, -1.0], seed=0, d=3)
    model = AUCGibbsModel(X, y, lam=120.0)
    return [run_smc(model, n_particles=40, len_chain=3, seed=s) for s in (0, 1)]


def _summary(idata, **kwargs):
    with warnings.catch_warnings():  # one chain: ArviZ warns that r_hat is NaN
        warnings.simplefilter("ignore")
        return az.summary(idata, **kwargs)


def test_summary_runs_and_the_log_evidence_is_the_runs_log_z(smc_runs):
    post = smc_runs[0]
    idata = post.to_inference_data(feature_names=NAMES, seed=3)
    summary = _summary(idata)
    assert list(summary.index) == [f"{v}[{n}]" for v in ("theta", "direction")
                                   for n in NAMES]
    stats = idata.sample_stats
    assert float(stats.log_marginal_likelihood[0]) == post.log_z
    np.testing.assert_array_equal(stats.log_z[0], post.log_z_path)
    np.testing.assert_array_equal(stats.beta[0], post.exponents)
    np.testing.assert_allclose(stats.gamma[0], post.lam * post.exponents)
    assert float(stats.ess[0, -1]) == pytest.approx(post.ess)
    assert float(stats.ess[0, 0]) == post.n_particles  # prior draws


def test_draws_are_an_equally_weighted_resample_of_the_particles(smc_runs):
    post = smc_runs[0]
    idata = post.to_inference_data(n_draws=4000, seed=0)
    draws = idata.posterior.theta.values[0]
    # systematic resampling: each particle appears floor or ceil of n w
    # times (waste-free chains can hold the same point more than once)
    unique, which = np.unique(post.theta, axis=0, return_inverse=True)
    expected = np.bincount(which.ravel(), weights=4000 * post.weights)
    copies = np.bincount(which.ravel())
    lookup = {tuple(row): k for k, row in enumerate(unique)}
    counts = np.bincount([lookup[tuple(d)] for d in draws],
                         minlength=len(unique))
    assert np.all(np.abs(counts - expected) < copies + 1e-9)
    np.testing.assert_allclose(idata.posterior.direction.values[0],
                               draws / np.linalg.norm(draws, axis=1, keepdims=True))


def test_resampling_counts_match_the_weights_and_are_shuffled():
    rng = np.random.default_rng(0)
    weights = np.array([0.5, 0.3, 0.15, 0.05])
    idx = resample_equally_weighted(weights, 1000, rng)
    np.testing.assert_array_equal(np.bincount(idx), [500, 300, 150, 50])
    assert np.any(np.diff(idx) < 0)  # not sorted by particle


def test_same_seed_same_draws_other_seed_other_draws(smc_runs):
    post = smc_runs[0]
    first = post.to_inference_data(seed=5).posterior.theta.values
    np.testing.assert_array_equal(first,
                                  post.to_inference_data(seed=5).posterior.theta.values)
    assert not np.array_equal(first,
                              post.to_inference_data(seed=6).posterior.theta.values)


def test_independent_runs_are_chains_with_an_r_hat(smc_runs):
    idata = to_inference_data(smc_runs, feature_names=NAMES)
    assert idata.posterior.sizes["chain"] == 2
    np.testing.assert_array_equal(idata.sample_stats.log_marginal_likelihood,
                                  [p.log_z for p in smc_runs])
    r_hat = az.summary(idata, var_names=["direction"])["r_hat"]
    assert np.all(np.abs(r_hat - 1.0) < 0.1)


def test_runs_of_different_lengths_are_padded_after_their_last_step(smc_runs):
    short = WeightedParticles(smc_runs[0].theta, smc_runs[0].weights)
    idata = to_inference_data(smc_runs)
    steps = [p.n_steps + 1 for p in smc_runs]
    assert idata.sample_stats.sizes["tempering_step"] == max(steps)
    for c, n in enumerate(steps):
        assert np.all(np.isfinite(idata.sample_stats.log_z[c, :n]))
        assert np.all(np.isnan(idata.sample_stats.log_z[c, n:]))
    with pytest.raises(InputError, match="mix"):
        to_inference_data([short, EPLinear(*noisy_linear(40, [1.0], 0, d=2),
                                           lam=40.0).fit()])


def test_plot_posterior_draws_one_panel_per_feature(smc_runs):
    axes = az.plot_posterior(smc_runs[0].to_inference_data(feature_names=NAMES),
                             var_names=["direction"])
    titles = [ax.get_title() for ax in np.ravel(axes)]
    assert titles == [f"direction\n{n}" for n in NAMES]


def test_feature_names_of_the_raw_columns_skip_dropped_constant_ones():
    X, y = noisy_linear(80, [1.0, -1.0], seed=2, d=2)
    X = np.column_stack([X[:, 0], np.ones(80), X[:, 1]])
    with pytest.warns(UserWarning, match="constant"):
        model = AUCGibbsModel(X, y, lam=80.0)
    post = run_smc(model, n_particles=20, len_chain=3, seed=0)
    idata = post.to_inference_data(feature_names=["a", "const", "b"])
    assert list(idata.posterior.feature.values) == ["a", "b"]
    with pytest.raises(InputError, match="feature names"):
        post.to_inference_data(feature_names=["a"])


def test_gaussian_approximations_give_draws_from_their_mean_and_covariance():
    X, y = noisy_linear(150, [1.0, -0.5], seed=1, d=3)
    ep = EPLinear(X, y, lam=150.0)
    result = ep.fit()
    idata = to_inference_data(ep, n_draws=20000, seed=0, feature_names=NAMES)
    draws = idata.posterior.theta.values[0]
    sd = np.sqrt(np.diag(result.cov))
    # 20 000 draws: 5 standard errors
    assert np.all(np.abs(draws.mean(axis=0) - result.mean) < 5 * sd / np.sqrt(20000))
    np.testing.assert_allclose(np.cov(draws, rowvar=False), result.cov,
                               atol=0.05 * sd.max() ** 2)
    assert float(idata.sample_stats.log_marginal_likelihood[0]) == result.log_z
    assert float(idata.sample_stats.lam[0]) == 150.0
    vb = GaussianVB(X, y, lam=150.0)
    vb_data = to_inference_data(vb.fit())
    assert "log_marginal_likelihood" not in vb_data.sample_stats  # a bound only
    assert float(vb_data.sample_stats.elbo[0]) == vb.result_.elbo
    with pytest.raises(InputError, match="not fitted"):
        to_inference_data(GaussianVB(X, y, lam=150.0))


def test_gaussian_draws_accept_a_singular_covariance():
    draws = gaussian_draws([1.0, 2.0], [[1.0, 1.0], [1.0, 1.0]], 500,
                           np.random.default_rng(0))
    np.testing.assert_allclose(draws[:, 0] - draws[:, 1], -1.0, atol=1e-3)


def test_spike_slab_indicators_and_gp_latent_scores_are_exported():
    X, y = noisy_linear(60, [1.0, 0.0], seed=3, d=2)
    post = run_smc(AUCGibbsModel(X, y, lam=60.0,
                                 prior=SpikeSlabPrior(2, p=0.5, v0=0.01, v1=1.0)),
                   n_particles=20, len_chain=3, seed=0)
    z = post.to_inference_data().posterior.z.values[0]
    assert set(np.unique(z)) <= {0, 1} and z.shape == post.z.shape
    gp = run_smc(GPAUCModel(X[:30], y[:30], lam=30.0), n_particles=20,
                 len_chain=3, seed=0)
    latent = gp.to_inference_data().posterior
    assert "theta" not in latent and latent.latent_score.shape == (1, gp.n_particles, 30)


# ------------------------------------------------ chains of the estimators
def _summary_raising_on_any_warning(idata, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return az.summary(idata, **kwargs)


@pytest.fixture(scope="module")
def two_chain_fit():
    from pac_particles.sklearn.estimator import PACBayesAUC
    X, y = noisy_linear(80, [1.0, -1.0], seed=4, d=3)
    return PACBayesAUC(lam=80.0, chains=2, n_particles=30, len_chain=3,
                       random_state=0, n_jobs=1).fit(X, y), X, y


def test_two_chains_give_a_finite_r_hat_and_ess_without_warning(two_chain_fit):
    est = two_chain_fit[0]
    idata = est.to_inference_data()
    assert idata.posterior.sizes["chain"] == 2
    summary = _summary_raising_on_any_warning(idata)
    assert np.all(np.isfinite(summary["r_hat"]))
    assert np.all(summary["ess_bulk"] > 10)
    np.testing.assert_array_equal(idata.sample_stats.log_marginal_likelihood,
                                  [p.log_z for p in est.posteriors_])


def test_extra_chains_leave_the_fit_as_with_one_chain(two_chain_fit):
    from sklearn.base import clone
    est, X, y = two_chain_fit
    one = clone(est).set_params(chains=1).fit(X, y)
    assert est.get_params()["chains"] == 2 and one.posteriors_ == [one.posterior_]
    assert est.posteriors_[0] is est.posterior_
    np.testing.assert_array_equal(est.coef_, one.coef_)
    assert est.log_evidence_ == one.log_evidence_
    assert est.posteriors_[1].lam == est.lam_
    assert not np.array_equal(est.posteriors_[1].theta, est.posterior_.theta)


def test_run_smc_chains_starts_with_the_run_of_the_seed():
    from pac_particles.smc.posterior import chain_seeds, run_smc_chains
    X, y = noisy_linear(60, [1.0, -1.0], seed=5, d=2)
    model = AUCGibbsModel(X, y, lam=60.0)
    runs = run_smc_chains(model, chains=3, seed=7, n_jobs=1, n_particles=20,
                          len_chain=3)
    np.testing.assert_array_equal(
        runs[0].theta, run_smc(model, seed=7, n_particles=20,
                               len_chain=3).theta)
    seeds = chain_seeds(7, 3)
    assert seeds[0] == 7 and len(set(seeds)) == 3
    assert len({p.log_z for p in runs}) == 3
    with pytest.raises(InputError, match="2 seeds for 3 chains"):
        run_smc_chains(model, chains=3, seed=[1, 2])


def test_tempering_step_is_a_coordinate_of_sample_stats(smc_runs):
    stats = to_inference_data(smc_runs).sample_stats
    steps = max(p.n_steps for p in smc_runs) + 1
    np.testing.assert_array_equal(stats.tempering_step, np.arange(steps))
    assert float(stats.beta.sel(tempering_step=0)[0]) == 0.0


def test_log_evidence_attrs_name_the_estimate_and_its_standard_error():
    X, y = noisy_linear(150, [1.0, -0.5], seed=6, d=2)
    model = AUCGibbsModel(X, y, lam=150.0)
    tempering = run_smc(model, n_particles=50, len_chain=5, seed=1,
                        evidence="tempering")
    idata = tempering.to_inference_data()
    assert idata.attrs["log_marginal_likelihood_estimate"] == "tempering"
    assert idata.attrs["log_marginal_likelihood_se"] == tempering.log_z_se
    assert float(idata.sample_stats.log_marginal_likelihood_se[0]) == \
        tempering.log_z_se
    importance = run_smc(model, n_particles=50, len_chain=5, seed=0)
    assert importance.importance.reliable      # d = 2: EP's proposal fits
    runs = [importance, tempering]
    both = to_inference_data(runs).attrs
    assert both["log_marginal_likelihood_estimate"] == \
        "importance sampling (chain 0); tempering (chain 1)"
    assert both["log_marginal_likelihood_se"] == [p.log_z_se for p in runs]
    ep = to_inference_data(EPLinear(X, y, lam=150.0).fit())
    assert ep.attrs == {"log_marginal_likelihood_estimate": "EP energy"}


def test_classifier_export_has_the_feature_coordinates():
    pd = pytest.importorskip("pandas")
    from pac_particles.sklearn.classifier import PACBayesClassifier
    X, y = noisy_linear(80, [1.0, -1.0], seed=7, d=3)
    frame = pd.DataFrame(X, columns=NAMES)
    for est in (PACBayesClassifier(method="smc", lam=40.0, n_particles=20,
                                   len_chain=3, chains=2, random_state=0),
                PACBayesClassifier(method="vb", lam=40.0),
                PACBayesClassifier(method="ep", lam=40.0)):
        idata = est.fit(frame, y).to_inference_data(n_draws=50)
        assert list(idata.posterior.feature.values) == NAMES + ["intercept"]
        assert idata.posterior.sizes["chain"] == est.chains
    no_intercept = PACBayesClassifier(method="vb", lam=40.0,
                                      fit_intercept=False).fit(X, y)
    assert list(no_intercept.to_inference_data().posterior.feature.values) \
        == ["x1", "x2", "x3"]


@pytest.mark.parametrize("chains", [0, 1.5, "2"])
def test_a_chain_count_below_one_or_not_an_integer_is_refused(chains):
    from pac_particles.sklearn.classifier import PACBayesClassifier
    from pac_particles.sklearn.estimator import PACBayesAUC
    X, y = noisy_linear(40, [1.0], seed=8, d=2)
    for est in (PACBayesAUC(lam=20.0, chains=chains),
                PACBayesClassifier(lam=20.0, chains=chains)):
        with pytest.raises(InputError, match="chains"):
            est.fit(X, y)
