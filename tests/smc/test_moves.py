"""MCMC moves: exactness against quadrature, kernels against numpy twins."""

import numpy as np
import particles
import pytest
from particles import distributions as dists
from particles import smc_samplers as ssp
from scipy import stats

from pac_particles import parallel
from pac_particles.problem.auc import linear_auc_risk
from pac_particles.core.checks import InputError
from pac_particles.smc.models import (AUCGibbsModel, ClassificationGibbsModel,
                                  GPAUCModel)
from pac_particles.smc.moves import (CalibratedEllipticalSlice, EllipticalSlice,
                                 ExactEllipseGibbs,
                                 RegularizedRandomWalk, SpikeSlabMove,
                                 check_move_fits, default_move,
                                 ellipse_angle_draws, make_move,
                                 point_angle_draws, tempering_exponent)
from pac_particles.smc.moves.base import weighted_gaussian_fit
from pac_particles.smc.posterior import run_smc
from pac_particles.problem.priors import SpikeSlabPrior
from pac_particles.problem.risks import ClassificationRisk
from lab.reference.quadrature import (AngularQuadrature, arc_weights,
                                      sample_angular_posterior)
from reference import (assert_smc_matches_quadrature,
                       ellipse_angle_draw_reference, ellipse_arcs)


from builders import (ellipse_problem, noisy_linear, tempered_particles,
                      two_d_problem)


def _angle_pit(theta, quad):
    """Probability integral transform of the angles of ``theta`` under the
    exact angular posterior of ``quad`` (uniform if theta ~ posterior)."""
    phi = np.mod(np.arctan2(theta[:, 1], theta[:, 0]), 2 * np.pi)
    cdf_at_edges = np.concatenate([[0.0], np.cumsum(arc_weights(quad))])
    return np.interp(phi, quad.edges, cdf_at_edges)


def _radius_pit(theta):
    """Rayleigh CDF of the radius (prior N(0, I) in d = 2)."""
    return 1.0 - np.exp(-0.5 * np.sum(theta ** 2, axis=1))


def _run_move(move, x, target, n_steps):
    move.calibrate(np.full(x.N, 1.0 / x.N), x)
    rates = [move.step(x, target) for _ in range(n_steps)]
    return np.array(rates)


# ---------------------------------------------------------------- kernels

@pytest.mark.parametrize("binary", [False, True])
def test_exact_ellipse_kernel_matches_numpy_reference(binary):
    """Same uniforms, same angle, from kappa = 0 to a steep 1e5; binary
    features give coincident break points and ties."""
    X_pos, X_neg, theta, nu, u_arc, u_within = ellipse_problem(
        np.random.default_rng(1), binary, 60)
    for kappa in (0.0, 0.05, 3.0, 1e5):
        phi = ellipse_angle_draws(theta @ X_pos.T, theta @ X_neg.T, nu @ X_pos.T,
                                  nu @ X_neg.T, kappa, u_arc, u_within)
        expected = []
        for r in range(60):
            a = np.subtract.outer(X_pos @ theta[r], X_neg @ theta[r]).ravel()
            b = np.subtract.outer(X_pos @ nu[r], X_neg @ nu[r]).ravel()
            expected.append(ellipse_angle_draw_reference(a, b, kappa, u_arc[r],
                                                         u_within[r]))
        np.testing.assert_allclose(phi, expected, atol=1e-12)


def test_exact_ellipse_kernels_serial_and_parallel_agree():
    rng = np.random.default_rng(4)
    a_pos, a_neg = rng.normal(size=(40, 9)), rng.normal(size=(40, 11))
    b_pos, b_neg = rng.normal(size=(40, 9)), rng.normal(size=(40, 11))
    u_arc, u_within = rng.uniform(size=40), rng.uniform(size=40)
    draws = {}
    for mode in ("serial", "parallel"):
        with parallel.forced(mode):
            draws[mode] = ellipse_angle_draws(a_pos, a_neg, b_pos, b_neg, 0.3,
                                              u_arc, u_within)
    np.testing.assert_array_equal(draws["serial"], draws["parallel"])


def test_arc_counts_equal_the_risk_kernel_along_the_ellipse():
    """The piecewise-constant count of the reference arcs (ties 1/2) is the
    AUC risk computed by the production kernel at every arc's midpoint."""
    rng = np.random.default_rng(2)
    X_pos = rng.integers(0, 3, size=(10, 3)).astype(float)
    X_neg = rng.integers(0, 3, size=(14, 3)).astype(float)
    theta, nu = rng.normal(size=3), rng.normal(size=3)
    a = np.subtract.outer(X_pos @ theta, X_neg @ theta).ravel()
    b = np.subtract.outer(X_pos @ nu, X_neg @ nu).ravel()
    edges, counts, ties = ellipse_arcs(a, b)
    assert ties > 0
    keep = np.diff(edges) > 1e-9
    mid = 0.5 * (edges[:-1] + edges[1:])[keep]
    points = np.outer(np.cos(mid), theta) + np.outer(np.sin(mid), nu)
    np.testing.assert_allclose(linear_auc_risk(points, X_pos, X_neg),
                               (counts[keep] + 0.5 * ties) / a.size, atol=1e-12)


# ------------------------------------------------------ construction

def test_elliptical_slice_needs_exactly_one_covariance():
    with pytest.raises(ValueError, match="exactly one"):
        EllipticalSlice()
    with pytest.raises(ValueError, match="exactly one"):
        EllipticalSlice(prior_var=1.0, prior_cov=np.eye(2))
    with pytest.raises(ValueError, match="positive definite"):
        EllipticalSlice(prior_cov=np.array([[1.0, 2.0], [2.0, 1.0]]))
    with pytest.raises(ValueError, match="lower triangular"):
        EllipticalSlice(prior_chol=np.array([[1.0, 1.0], [0.0, 1.0]]))
    with pytest.raises(ValueError, match="> 0"):
        EllipticalSlice(prior_var=[1.0, 0.0])


def test_covariance_forms_give_identical_moves():
    """Cholesky factor, covariance matrix and variances describe the same
    prior: same seed, same trajectory."""
    X, y = two_d_problem(n=60)
    model = AUCGibbsModel(X, y, lam=30.0, standardize=False)
    cov = np.array([[2.0, 0.6], [0.6, 1.0]])
    start = np.random.default_rng(0).normal(size=(50, 2))
    forms = {"chol": dict(prior_chol=np.linalg.cholesky(cov)),
             "cov": dict(prior_cov=cov)}
    results = {}
    for name, kwargs in forms.items():
        x, target = tempered_particles(model, start, 0.5)
        np.random.seed(5)
        _run_move(EllipticalSlice(**kwargs), x, target, 3)
        results[name] = x.theta["theta"].copy()
    np.testing.assert_array_equal(results["chol"], results["cov"])
    diag = {}
    for name, kwargs in {"var": dict(prior_var=[2.0, 1.0]),
                         "chol": dict(prior_chol=np.diag(np.sqrt([2.0, 1.0])))}.items():
        x, target = tempered_particles(model, start, 0.5)
        np.random.seed(5)
        _run_move(EllipticalSlice(**kwargs), x, target, 3)
        diag[name] = x.theta["theta"].copy()
    np.testing.assert_array_equal(diag["var"], diag["chol"])


def test_exact_gibbs_refuses_more_pairs_than_max_pairs():
    X, y = two_d_problem(n=200)
    model = AUCGibbsModel(X, y, lam=10.0)
    with pytest.raises(ValueError, match="max_pairs"):
        ExactEllipseGibbs(model, max_pairs=1000)
    assert ExactEllipseGibbs(model, max_pairs=model.data.n_pairs).n_pairs == \
        model.data.n_pairs


def test_gaussian_moves_refuse_non_gaussian_priors():
    X, y = two_d_problem(n=40)
    prior = dists.StructDist({"theta": dists.IndepProd(dists.Laplace(),
                                                       dists.Laplace())})
    model = AUCGibbsModel(X, y, lam=10.0, prior=prior)
    with pytest.raises(ValueError, match="Gaussian prior"):
        EllipticalSlice.for_model(model)
    with pytest.raises(ValueError, match="Gaussian prior"):
        ExactEllipseGibbs(model)


def test_tempering_exponent_is_read_and_checked_against_the_target():
    X, y = two_d_problem(n=40)
    model = AUCGibbsModel(X, y, lam=20.0, standardize=False)
    x, _ = tempered_particles(model, np.random.default_rng(0).normal(size=(30, 2)),
                               0.37)
    assert tempering_exponent(x) == 0.37
    x.shared["exponents"].append(0.9)  # contradicts lpost - lprior
    with pytest.raises(ValueError, match="exponent"):
        tempering_exponent(x)
    x.shared = {}
    with pytest.raises(ValueError, match="exponents"):
        tempering_exponent(x)


# ------------------------------------------------------ invariance, d = 2

N_INVARIANCE = 6000


def _exact_start(eps, seed=0):
    X, y = two_d_problem(n=80)
    lam = 80.0
    model = AUCGibbsModel(X, y, lam=lam, standardize=False)
    quad = AngularQuadrature(X, y, eps * lam)
    theta = sample_angular_posterior(quad, N_INVARIANCE, np.random.default_rng(seed))
    return model, quad, theta


@pytest.mark.parametrize("name", ["elliptical_slice", "calibrated_slice",
                                  "exact_gibbs", "random_walk"])
def test_move_leaves_tempered_gibbs_posterior_invariant(name):
    """From exact draws of the target at exponent 0.5 (quadrature), five
    steps of the move alone leave the angle and radius distributed exactly
    as the target: their probability integral transforms stay uniform."""
    model, quad, theta = _exact_start(0.5)
    x, target = tempered_particles(model, theta, 0.5)
    np.random.seed(11)
    move = make_move(name, model)
    _run_move(move, x, target, 5)
    moved = x.theta["theta"]
    assert np.mean(np.any(moved != theta, axis=1)) > 0.3  # it does move
    assert stats.kstest(_angle_pit(moved, quad), "uniform").pvalue > 1e-3
    assert stats.kstest(_radius_pit(moved), "uniform").pvalue > 1e-3
    # the fields are the target's at the new positions
    np.testing.assert_allclose(x.llik, -model.lam * model.risk(x.theta), atol=1e-12)
    np.testing.assert_allclose(x.lpost, x.lprior + 0.5 * x.llik, atol=1e-10)


def test_invariance_check_detects_a_move_at_the_wrong_exponent():
    """The check above has power: moving exact draws at exponent 0.5 with
    the target at exponent 1 is caught."""
    model, quad, theta = _exact_start(0.5)
    x, _ = tempered_particles(model, theta, 0.5)
    wrong_target = ssp.AdaptiveTempering(model).current_target(1.0)
    wrong_target(x)
    np.random.seed(11)
    _run_move(EllipticalSlice.for_model(model), x, wrong_target, 5)
    assert stats.kstest(_angle_pit(x.theta["theta"], quad), "uniform").pvalue < 1e-6


def test_elliptical_slice_reports_evaluations_as_inverse_acceptance_rate():
    model, _, theta = _exact_start(0.5)
    x, target = tempered_particles(model, theta[:500], 0.5)
    move = EllipticalSlice.for_model(model)
    before = model.n_risk_evaluations
    np.random.seed(0)
    rates = _run_move(move, x, target, 4)
    assert move.n_evaluations == model.n_risk_evaluations - before
    assert move.n_moves == 4 * 500 and move.n_exhausted == 0
    np.testing.assert_allclose(1.0 / rates, move.history)
    assert 1.0 < move.evaluations_per_move < 20.0


def test_exact_and_slice_give_the_same_angle_distribution_on_one_ellipse():
    """On one fixed ellipse (d = 5), 25 slice steps along it from a single
    point and one exact Gibbs draw both follow the exact conditional of the
    angle, prop. to exp(-eps lam R(phi)) (arcs from the numpy reference)."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(60, 5))
    y = (X @ np.arange(1.0, 6.0) + 2.0 * rng.normal(size=60) > 0).astype(int)
    model = AUCGibbsModel(X, y, lam=60.0, standardize=False)
    eps, n = 0.5, 4000
    theta0, nu0 = rng.normal(size=5), rng.normal(size=5)
    Xp, Xn = model.data.X_pos, model.data.X_neg
    a = np.subtract.outer(Xp @ theta0, Xn @ theta0).ravel()
    b = np.subtract.outer(Xp @ nu0, Xn @ nu0).ravel()
    edges, counts, _ = ellipse_arcs(a, b)
    log_w = -eps * model.lam * counts / a.size + np.log(np.maximum(np.diff(edges), 1e-300))
    w = np.exp(log_w - log_w.max())
    cdf_edges = np.concatenate([[0.0], np.cumsum(w / w.sum())])

    def pit(phi):
        return np.interp(np.mod(phi, 2 * np.pi), edges, cdf_edges)

    np.random.seed(3)
    x, target = tempered_particles(model, np.tile(theta0, (n, 1)), eps)
    phi_exact = ExactEllipseGibbs(model).move_along(x, target, np.tile(nu0, (n, 1)))

    x, target = tempered_particles(model, np.tile(theta0, (n, 1)), eps)
    move = EllipticalSlice.for_model(model)
    psi = np.zeros(n)
    basis = np.column_stack([theta0, nu0])
    for _ in range(25):
        nu = np.outer(np.cos(psi), nu0) - np.outer(np.sin(psi), theta0)
        move.move_along(x, target, nu)
        coef = np.linalg.lstsq(basis, x.theta["theta"].T, rcond=None)[0]
        psi = np.arctan2(coef[1], coef[0])
    assert stats.kstest(pit(phi_exact), "uniform").pvalue > 1e-3
    assert stats.kstest(pit(psi), "uniform").pvalue > 1e-3
    assert stats.ks_2samp(np.mod(phi_exact, 2 * np.pi),
                          np.mod(psi, 2 * np.pi)).pvalue > 1e-3


# ------------------------------------------------------ SMC vs quadrature

@pytest.mark.parametrize("name,n_particles,n_runs",
                         [("elliptical_slice", 500, 5), ("calibrated_slice", 500, 5),
                          ("exact_gibbs", 200, 4)])
def test_smc_with_move_matches_quadrature_in_two_dimensions(name, n_particles, n_runs):
    """The foundation's d = 2 check (mean direction and log Z against exact
    quadrature), with the move under test."""
    X, y = two_d_problem()
    lam = float(len(y))

    def run(seed):
        model = AUCGibbsModel(X, y, lam=lam, standardize=False)
        return run_smc(model, n_particles=n_particles, len_chain=10,
                       move=make_move(name, model), seed=seed)

    assert_smc_matches_quadrature(X, y, lam, run, n_runs=n_runs)


def test_elliptical_slice_in_standard_smc_matches_quadrature():
    X, y = two_d_problem()
    exact = AngularQuadrature(X, y, 200.0)
    model = AUCGibbsModel(X, y, lam=200.0, standardize=False)
    post = run_smc(model, n_particles=2000, len_chain=4, wastefree=False, seed=1,
                   move=EllipticalSlice.for_model(model))
    assert abs(post.log_z - exact.log_z) < 0.3
    np.testing.assert_allclose(post.mean, exact.mean, atol=0.1)


# ------------------------------------------------------ defaults, checks

def test_default_move_is_the_calibrated_slice_for_gaussian_priors():
    X, y = two_d_problem(n=40)
    assert isinstance(default_move(AUCGibbsModel(X, y, lam=5.0)),
                      CalibratedEllipticalSlice)
    laplace = dists.StructDist({"theta": dists.IndepProd(dists.Laplace(),
                                                         dists.Laplace())})
    model = AUCGibbsModel(X, y, lam=5.0, prior=laplace)
    assert isinstance(default_move(model), RegularizedRandomWalk)
    post = run_smc(model, n_particles=50, len_chain=3, seed=0)  # falls back to RW
    assert post.exponents[-1] == 1.0
    spike = AUCGibbsModel(X, y, lam=5.0, prior=SpikeSlabPrior(2, p=0.5, v0=0.1))
    assert isinstance(default_move(spike), SpikeSlabMove)


def test_check_move_fits_refuses_moves_that_cannot_work_with_the_model():
    X, y = two_d_problem(n=40)
    gp = GPAUCModel(X, y, lam=5.0)
    for move in (RegularizedRandomWalk(), CalibratedEllipticalSlice()):
        with pytest.raises(InputError, match="refused for GP latent scores"):
            check_move_fits(move, gp)
    check_move_fits(default_move(gp), gp)
    spike = AUCGibbsModel(X, y, lam=5.0, prior=SpikeSlabPrior(2, p=0.5, v0=0.1))
    for move in (RegularizedRandomWalk(), CalibratedEllipticalSlice(),
                 EllipticalSlice(prior_var=[1.0, 1.0]), ExactEllipseGibbs(
                     AUCGibbsModel(X, y, lam=5.0))):
        with pytest.raises(InputError, match="cannot move spike-and-slab"):
            check_move_fits(move, spike)
    check_move_fits(SpikeSlabMove(spike.prior), spike)
    gaussian = AUCGibbsModel(X, y, lam=5.0)
    with pytest.raises(InputError, match="SpikeSlabMove needs a SpikeSlabPrior"):
        check_move_fits(SpikeSlabMove(spike.prior), gaussian)
    spike.prior = SpikeSlabPrior(2, p=0.5, v0=0.0)
    with pytest.raises(InputError, match="Dirac spike"):
        check_move_fits(SpikeSlabMove.__new__(SpikeSlabMove), spike)
    with pytest.raises(InputError, match="Dirac spike"):
        SpikeSlabMove(spike.prior)


def test_run_smc_without_move_runs_the_default_move():
    """Same seed: the run from the prior without a move is the run with
    move=default_move(model), and differs from the random walk's."""
    X, y = two_d_problem(n=100)
    model = AUCGibbsModel(X, y, lam=50.0)
    default = run_smc(model, n_particles=100, len_chain=5, seed=0,
                      start="prior")
    explicit = run_smc(model, n_particles=100, len_chain=5, seed=0,
                       move=default_move(model))
    walk = run_smc(model, n_particles=100, len_chain=5, seed=0,
                   move=RegularizedRandomWalk())
    # the same run up to rounding: threaded BLAS and numba reductions may
    # sum in another order from one run to the next
    assert default.log_z == pytest.approx(explicit.log_z, rel=1e-12)
    np.testing.assert_allclose(default.theta, explicit.theta, rtol=1e-9,
                               atol=1e-12)
    assert abs(default.log_z - walk.log_z) > 1e-6
    assert default.n_risk_evaluations > walk.n_risk_evaluations


def test_run_smc_rejects_sequence_of_another_chain_length():
    X, y = two_d_problem(n=40)
    model = AUCGibbsModel(X, y, lam=5.0)
    seq = ssp.MCMCSequenceWF(mcmc=EllipticalSlice.for_model(model), len_chain=7)
    with pytest.raises(ValueError, match="len_chain"):
        run_smc(model, n_particles=20, len_chain=5, move=seq)
    post = run_smc(model, n_particles=20, len_chain=7, move=seq, seed=0,
                   evidence="tempering")
    assert post.theta.shape == (140, 2)


@pytest.mark.parametrize("name", ["elliptical_slice", "calibrated_slice"])
def test_slice_moves_run_with_one_dimensional_theta(name):
    """d = 1: particles stores the field as shape (N,)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 1))
    y = (X[:, 0] + rng.normal(size=50) > 0).astype(int)
    model = AUCGibbsModel(X, y, lam=50.0)
    post = run_smc(model, n_particles=100, len_chain=5, seed=0,
                   move=make_move(name, model))
    # only the sign of theta matters, and the data favour theta > 0; the
    # 500 particles are followed by as many importance draws
    assert post.theta.shape == (1000, 1) and post.mean[0] > 0


def test_moves_plug_into_particles_directly():
    X, y = two_d_problem(n=100)
    model = AUCGibbsModel(X, y, lam=50.0)
    for move in (EllipticalSlice.for_model(model), ExactEllipseGibbs(model)):
        np.random.seed(0)
        fk = ssp.AdaptiveTempering(model, len_chain=5, move=ssp.MCMCSequenceWF(
            mcmc=move, len_chain=5))
        smc = particles.SMC(fk=fk, N=50, verbose=False)
        smc.run()
        assert smc.X.shared["exponents"][-1] == 1.0
        rates = np.concatenate(smc.X.shared["acc_rates"][1:])
        assert np.all((rates > 0) & (rates <= 1))


def test_compare_moves_matches_budgets_and_reports_refusals():
    """The efficiency study gives each move the random walk's budget of
    risk evaluations and reports moves that refuse the model."""
    from lab.study import compare_moves, format_move_table
    X, y = two_d_problem(n=300)  # P > 20000: exact Gibbs refuses
    model = AUCGibbsModel(X, y, lam=100.0)
    rows = compare_moves(model, moves=["random_walk", "elliptical_slice", "exact_gibbs"],
                         n_runs=2, n_particles=30, len_chain=9, seed=0, label="toy")
    by_move = {row["move"]: row for row in rows}
    assert "max_pairs" in by_move["exact_gibbs"]["skipped"]
    rw, es = by_move["random_walk"], by_move["elliptical_slice"]
    assert rw["ratio_log_z"] == 1.0 and rw["len_chain"] == 9
    assert es["len_chain"] < 9 and es["evaluations_per_move"] > 1
    assert 0.6 < es["evaluations"] / rw["evaluations"] < 1.6
    assert "skipped" in format_move_table(rows)


def test_calibrated_slice_needs_calibration_and_works_with_non_gaussian_priors():
    """It uses only lpost, so any continuous prior goes (here Laplace)."""
    X, y = two_d_problem(n=100)
    laplace = dists.StructDist({"theta": dists.IndepProd(dists.Laplace(),
                                                         dists.Laplace())})
    model = AUCGibbsModel(X, y, lam=50.0, prior=laplace)
    move = CalibratedEllipticalSlice()
    x, target = tempered_particles(model, np.random.default_rng(0).laplace(size=(20, 2)),
                                    0.5)
    with pytest.raises(ValueError, match="calibrate"):
        move.step(x, target)
    post = run_smc(model, n_particles=100, len_chain=5, move=move, seed=0)
    assert post.exponents[-1] == 1.0 and move.n_exhausted == 0


# ------------------------------------------- calibrated slice variants, cost

@pytest.mark.parametrize("kwargs", [{"center": "zero"}, {"shrinkage": 0.5},
                                    {"n_slices": 3}])
def test_calibrated_slice_variants_leave_the_target_invariant(kwargs):
    """The options of the calibrated slice keep it exact: from exact draws
    at exponent 0.5, the angle and radius stay distributed as the target."""
    model, quad, theta = _exact_start(0.5)
    x, target = tempered_particles(model, theta, 0.5)
    np.random.seed(5)
    move = CalibratedEllipticalSlice(**kwargs)
    rates = _run_move(move, x, target, 3)
    moved = x.theta["theta"]
    assert np.mean(np.any(moved != theta, axis=1)) > 0.3
    assert stats.kstest(_angle_pit(moved, quad), "uniform").pvalue > 1e-3
    assert stats.kstest(_radius_pit(moved), "uniform").pvalue > 1e-3
    # one rate per link: 1 / (evaluations of all its slice steps)
    n_slices = kwargs.get("n_slices", 1)
    assert len(move.history) == 3 * n_slices
    links = np.add.reduceat(move.history, np.arange(0, 3 * n_slices, n_slices))
    np.testing.assert_allclose(1.0 / rates, links)


def test_calibrated_slice_refuses_bad_options():
    for kwargs in ({"center": "median"}, {"shrinkage": 1.0}, {"n_slices": 0}):
        with pytest.raises(InputError):
            CalibratedEllipticalSlice(**kwargs)


def test_shrinkage_pulls_the_fitted_covariance_to_its_diagonal():
    rng = np.random.default_rng(2)
    arr = rng.normal(size=(400, 3)) @ [[1.0, 0.8, 0.0], [0.0, 0.6, 0.0],
                                       [0.0, 0.0, 2.0]]
    W = np.full(400, 1 / 400)
    cov = np.cov(arr, rowvar=False, ddof=0)
    _, chol = weighted_gaussian_fit(W, arr, ridge=0.0, shrinkage=0.25)
    np.testing.assert_allclose(chol @ chol.T,
                               0.75 * cov + 0.25 * np.diag(np.diag(cov)),
                               rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("make", [lambda model: CalibratedEllipticalSlice(),
                                  lambda model: RegularizedRandomWalk()])
def test_run_smc_evaluates_each_particle_once(make):
    """Risk evaluations of a waste-free run = the N initial particles + the
    move's own evaluations: resampled particles and the exponent search
    reuse the log-likelihoods particles already holds."""
    X, y = two_d_problem(n=60)
    model = AUCGibbsModel(X, y, lam=60.0)
    move = make(model)
    post = run_smc(model, n_particles=20, len_chain=5, move=move, seed=0,
                   evidence="tempering")
    # the random walk: one per step; the first increment moves nothing
    moves = (getattr(move, "n_evaluations", None)
             or 20 * 4 * (post.n_steps - 1))
    assert post.n_risk_evaluations == 20 * 5 + moves


# ------------------------------------- 0-1 classification: point margins

def _point_problem(rng, binary, n_rows, n=30, d=3):
    """Rows of X (binary: zero rows and parallel rows, i.e. ties and
    coincident break points), labels +-1, ellipses and uniforms."""
    X = (rng.integers(0, 2, size=(n, d)).astype(float) if binary
         else rng.normal(size=(n, d)))
    signs = rng.choice([-1.0, 1.0], size=n)
    theta, nu = rng.normal(size=(n_rows, d)), rng.normal(size=(n_rows, d))
    return X, signs, theta, nu, rng.uniform(size=n_rows), rng.uniform(size=n_rows)


@pytest.mark.parametrize("binary", [False, True])
def test_point_angle_kernel_matches_numpy_reference(binary):
    """The classification kernel (2n break points of the margins y_i x_i .
    theta) draws the same angle as the plain-numpy twin, same uniforms."""
    X, signs, theta, nu, u_arc, u_within = _point_problem(
        np.random.default_rng(5), binary, 50)
    for kappa in (0.0, 0.05, 3.0, 1e5):
        phi = point_angle_draws(theta @ X.T, nu @ X.T, signs, kappa, u_arc,
                                u_within)
        expected = [ellipse_angle_draw_reference(
            signs * (X @ theta[r]), signs * (X @ nu[r]), kappa, u_arc[r],
            u_within[r]) for r in range(50)]
        np.testing.assert_allclose(phi, expected, atol=1e-12)


def test_point_angle_kernels_serial_and_parallel_agree():
    X, signs, theta, nu, u_arc, u_within = _point_problem(
        np.random.default_rng(6), False, 40)
    draws = {}
    for mode in ("serial", "parallel"):
        with parallel.forced(mode):
            draws[mode] = point_angle_draws(theta @ X.T, nu @ X.T, signs, 0.3,
                                            u_arc, u_within)
    np.testing.assert_array_equal(draws["serial"], draws["parallel"])


def test_point_arc_counts_equal_the_classification_risk_along_the_ellipse():
    """Misclassified counts of the reference arcs (ties 1/2) are the 0-1 risk
    of the production kernel at every arc's midpoint."""
    X, signs, theta, nu, _, _ = _point_problem(np.random.default_rng(7), True, 1)
    edges, counts, ties = ellipse_arcs(signs * (X @ theta[0]),
                                       signs * (X @ nu[0]))
    assert ties > 0
    keep = np.diff(edges) > 1e-9
    mid = 0.5 * (edges[:-1] + edges[1:])[keep]
    points = np.outer(np.cos(mid), theta[0]) + np.outer(np.sin(mid), nu[0])
    risk = ClassificationRisk(signs > 0, "zero_one")
    np.testing.assert_allclose(risk(points @ X.T),
                               (counts[keep] + 0.5 * ties) / X.shape[0],
                               atol=1e-12)


def _classification_start(eps, n=80, seed=0):
    X, y = two_d_problem(n=n)
    model = ClassificationGibbsModel(X, y, lam=float(n), fit_intercept=False,
                                     standardize=False)
    quad = AngularQuadrature(X, y, eps * model.lam, margins="points")
    theta = sample_angular_posterior(quad, N_INVARIANCE,
                                     np.random.default_rng(seed))
    return model, quad, theta


def test_exact_gibbs_leaves_the_tempered_zero_one_posterior_invariant():
    """From exact draws of the 0-1 Gibbs posterior at exponent 0.5
    (quadrature on the point margins), five exact steps leave the angle and
    radius distributed as the target; at the wrong exponent (the move reads
    it from the particles, so evaluate them at exponent 1) the check fails."""
    model, quad, theta = _classification_start(0.5)
    x, target = tempered_particles(model, theta, 0.5)
    np.random.seed(12)
    move = make_move("exact_gibbs", model)
    assert isinstance(move, ExactEllipseGibbs) and move.n_pairs == 80
    _run_move(move, x, target, 5)
    moved = x.theta["theta"]
    assert np.mean(np.any(moved != theta, axis=1)) > 0.9
    assert stats.kstest(_angle_pit(moved, quad), "uniform").pvalue > 1e-3
    assert stats.kstest(_radius_pit(moved), "uniform").pvalue > 1e-3
    np.testing.assert_allclose(x.llik, -model.lam * model.risk(x.theta),
                               atol=1e-12)
    x, target = tempered_particles(model, theta, 1.0)
    _run_move(move, x, target, 5)
    assert stats.kstest(_angle_pit(x.theta["theta"], quad),
                        "uniform").pvalue < 1e-6


def test_waste_free_smc_with_exact_gibbs_matches_zero_one_quadrature():
    """d = 2, 0-1 risk, lam = n: mean direction and log Z of waste-free SMC
    driven by the exact move agree with the exact posterior."""
    X, y = two_d_problem(n=120)
    lam = 120.0

    def run(seed):
        model = ClassificationGibbsModel(X, y, lam=lam, fit_intercept=False,
                                         standardize=False)
        return run_smc(model, n_particles=300, len_chain=10,
                       move=ExactEllipseGibbs(model), seed=seed)

    assert_smc_matches_quadrature(X, y, lam, run, n_runs=4, margins="points")


def _long_slice_run(model, n_chains, burn_in, n_steps, seed):
    """Long elliptical-slice MCMC at the target (exponent 1): means of theta
    over ``n_steps`` after ``burn_in``, per chain (n_chains, d)."""
    rng = np.random.default_rng(seed)
    x, target = tempered_particles(model, rng.normal(size=(n_chains, model.d)),
                                   1.0)
    np.random.seed(seed)
    move = EllipticalSlice.for_model(model)
    for _ in range(burn_in):
        move.step(x, target)
    total = np.zeros((n_chains, model.d))
    for _ in range(n_steps):
        move.step(x, target)
        total += x.theta["theta"]
    return total / n_steps


def test_exact_gibbs_smc_agrees_with_a_long_slice_run_in_ten_dimensions():
    """d = 9 + intercept, 0-1 risk, lam = n: the posterior mean of two
    waste-free SMC runs with the exact move agrees with 150 elliptical slice
    chains of 1500 steps (sd of one run's mean about 0.045, of the long run
    0.007: tolerance 0.12, about 3.5 sd); a posterior at three times the lam
    is told apart (the test has power)."""
    X, y = noisy_linear(80, np.linspace(1.5, -0.5, 9), seed=2, noise=1.0)
    model = ClassificationGibbsModel(X, y, lam=80.0)
    long_mean = _long_slice_run(model, n_chains=150, burn_in=300,
                                n_steps=1500, seed=1).mean(axis=0)
    means = []
    for lam, seed in ((80.0, 0), (80.0, 1), (240.0, 0)):
        model = ClassificationGibbsModel(X, y, lam=lam)
        post = run_smc(model, n_particles=300, len_chain=10,
                       move=ExactEllipseGibbs(model), seed=seed)
        means.append(post.mean)
    gap = np.mean(means[:2], axis=0) - long_mean
    assert np.max(np.abs(gap)) < 0.12, gap
    assert np.max(np.abs(means[2] - long_mean)) > 0.3


def test_exact_gibbs_refuses_continuous_losses_and_pu_weights():
    X, y = two_d_problem(n=40)
    with pytest.raises(InputError, match="piecewise-constant"):
        ExactEllipseGibbs(ClassificationGibbsModel(X, y, lam=5.0, loss="hinge"))
    with pytest.raises(InputError, match="positive-unlabelled"):
        ExactEllipseGibbs(ClassificationGibbsModel(X, y, lam=5.0, pu_prior=0.3))
