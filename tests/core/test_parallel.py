"""Serial and parallel versions of every numba kernel give the same numbers.

Each kernel's ``prange`` version and its one-thread version run the same
inner function on each item (a row of particles, a row of positives, an
ellipse) and write only that item's outputs, so the results are equal bit for
bit, and so are the fits built on them (same sweeps, same iterations).
``parallel.forced`` picks the version whatever the work size, which lets the
tests use small data.

Kernels: the AUC risk (``auc_risk``, ``linear_auc_risk``), the EP pair sweep
(``EPLinear.fit``), the VB pair block (``expected_auc_risk``,
``GaussianVB.fit``), the SVGD smoothed risk over all pairs and over sampled
pairs (``smoothed_auc_risk``, ``SVGD.fit`` with ``n_pairs``), the exact-ellipse
angle draws (``ellipse_angle_draws``).
"""

import numpy as np
import pytest

from builders import ellipse_problem, tied_data, two_blobs
from reference import assert_identical, serial_and_parallel
from pac_particles import parallel
from pac_particles.problem.auc import auc_risk, linear_auc_risk
from pac_particles.approx.ep import EPLinear
from pac_particles.smc.moves import ellipse_angle_draws
from pac_particles.approx.svgd import SVGD, smoothed_auc_risk
from pac_particles.approx.vb import GaussianVB, expected_auc_risk


# ------------------------------------------------------------ the rule


def test_forced_restores_the_mode_and_rejects_an_unknown_one():
    big, small = parallel.MIN_PARALLEL_WORK, parallel.MIN_PARALLEL_WORK - 1
    with parallel.forced("parallel"):
        assert parallel.use_parallel(0)
        with parallel.forced("serial"):
            assert not parallel.use_parallel(10 * big)
        assert parallel.use_parallel(0)
    with pytest.raises(RuntimeError, match="inside"):
        with parallel.forced("serial"):
            raise RuntimeError("inside")
    with pytest.raises(ValueError, match="mode"):
        with parallel.forced("threads"):
            pass
    # back to auto after each block, the failed ones included
    assert parallel.use_parallel(big) and not parallel.use_parallel(small)


def test_use_parallel_follows_min_parallel_work_in_auto_mode(monkeypatch):
    serial, in_parallel = object(), object()
    for threshold in (parallel.MIN_PARALLEL_WORK, 10):
        monkeypatch.setattr(parallel, "MIN_PARALLEL_WORK", threshold)
        assert not parallel.use_parallel(threshold - 1)
        assert parallel.use_parallel(threshold)
        assert parallel.dispatch(serial, in_parallel, threshold - 1) is serial
        assert parallel.dispatch(serial, in_parallel, threshold) is in_parallel
    with parallel.forced("auto"):
        assert parallel.use_parallel(10) and not parallel.use_parallel(9)


def test_probit_pairs_count_as_normal_cdf_items(monkeypatch):
    """The VB objective's pair kernel weighs a pair as NORMAL_CDF_ITEMS
    cheap items: 2,500 pairs take the parallel version, 1,600 the serial
    one (50,000 / 25 = 2,000)."""
    works = []
    real = parallel.dispatch
    monkeypatch.setattr(parallel, "dispatch", lambda serial, par, work: (
        works.append(work), real(serial, par, work))[1])
    rng = np.random.default_rng(0)
    for n_side, expected in ((50, True), (40, False)):
        works.clear()
        expected_auc_risk(np.ones(3), np.eye(3), rng.normal(size=(n_side, 3)),
                          rng.normal(size=(n_side, 3)))
        assert works == [n_side * n_side * parallel.NORMAL_CDF_ITEMS]
        assert parallel.use_parallel(works[0]) is expected


def test_a_nested_blas_limit_within_a_tighter_one_changes_nothing(monkeypatch):
    """Inside a block that holds BLAS to one thread, a nested limit of one
    or more threads does not call threadpoolctl again, and the outer limit
    holds after it; a tighter nested limit applies and is undone."""
    from threadpoolctl import threadpool_info
    calls = []
    controller = parallel._controller()
    real = controller.limit
    monkeypatch.setattr(controller, "limit",
                        lambda **kw: (calls.append(kw["limits"]), real(**kw))[1])

    def blas():
        return {p["num_threads"] for p in threadpool_info()
                if p["user_api"] == "blas"}

    with parallel.blas_threads(2):
        with parallel.one_blas_thread():
            with parallel.one_blas_thread(), parallel.blas_threads(2):
                assert blas() <= {1}
            assert blas() <= {1}
        assert calls == [2, 1]
        assert blas() <= {1, 2}
    with pytest.raises(RuntimeError):
        with parallel.one_blas_thread():
            raise RuntimeError("inside")
    assert parallel._blas_limit is None and calls == [2, 1, 1]


# ------------------------------------------------------------- kernels


def test_auc_risk_kernel(rng):
    y = rng.integers(0, 2, 120)
    scores = rng.normal(size=(37, 120)).round(1)          # ties within rows
    X = rng.integers(0, 3, size=(90, 4)).astype(float)    # tied scores
    labels = rng.random(90) < 0.4
    theta = rng.normal(size=(37, 4))
    assert_identical(*serial_and_parallel(lambda: (
        auc_risk(scores, y), linear_auc_risk(theta, X[labels], X[~labels]))))


@pytest.mark.parametrize("space", ["primal", "score"])
def test_ep_pair_sweep(space):
    X, y = two_blobs(60, 4, seed=30)

    def fit():
        res = EPLinear(X, y, lam=60.0, space=space).fit()
        return res.mean, res.log_z, res.n_sweeps

    assert_identical(*serial_and_parallel(fit))


def test_vb_pair_kernel(rng):
    X, y = tied_data(50, 4, seed=31)
    m = rng.normal(size=4)
    A = rng.normal(size=(4, 4))
    cov = A @ A.T / 4 + 0.1 * np.eye(4)

    def compute():
        risks = [expected_auc_risk(m, S, X[y], X[~y], block_entries=blocks)
                 for S in (cov, np.diag(cov)) for blocks in (None, 64)]
        full = GaussianVB(X, y, family="full").fit()
        diagonal = GaussianVB(X, y, family="diagonal").fit()
        return (risks, full.mean, full.cov, full.elbo, diagonal.mean,
                diagonal.cov)

    assert_identical(*serial_and_parallel(compute))


@pytest.mark.filterwarnings("ignore::pac_particles.approx.svgd.SVGDConvergenceWarning")
def test_svgd_smoothed_risk(rng):
    X, y = tied_data(50, 4, seed=32)
    theta = rng.normal(size=(37, 4))
    theta[0] = 0.0                                  # R_h(0) = 1/2 branch

    def compute():
        risk, grad = smoothed_auc_risk(theta, X[y], X[~y], 0.1, grad=True)
        sampled = SVGD(X, y, lam=50.0, n_particles=20, n_pairs=300, max_iter=10,
                       seed=0).fit()
        return risk, grad, sampled.theta

    assert_identical(*serial_and_parallel(compute))


@pytest.mark.parametrize("binary", [False, True])
def test_exact_ellipse_angle_draws(rng, binary):
    """Fixed uniforms; binary features give coincident break points and
    ties."""
    X_pos, X_neg, theta, nu, u_arc, u_within = ellipse_problem(rng, binary, 41)

    def draws():
        return [ellipse_angle_draws(theta @ X_pos.T, theta @ X_neg.T,
                                    nu @ X_pos.T, nu @ X_neg.T, kappa, u_arc,
                                    u_within)
                for kappa in (0.0, 0.05, 3.0, 1e5)]

    assert_identical(*serial_and_parallel(draws))


def test_concurrent_folds_one_job_per_core_up_to_the_folds(monkeypatch):
    from pac_particles import parallel
    monkeypatch.setattr(parallel.os, "cpu_count", lambda: 4)
    assert parallel.concurrent_folds(5) == (4, 1)
    assert parallel.concurrent_folds(2) == (2, 2)
    assert parallel.concurrent_folds(5, n_jobs=1) == (1, None)
    assert parallel.concurrent_folds(5, n_jobs=3) == (3, 1)


def test_a_blas_library_loaded_after_import_is_limited_too(monkeypatch):
    """A module loaded after the package (here: its count changed) makes
    the controller look for BLAS libraries again, so a limit reaches one
    that a stale controller would have left at its own thread count."""
    stale = parallel._controller()
    monkeypatch.setattr(parallel, "_CONTROLLER_MODULES",
                        parallel._CONTROLLER_MODULES - 1)
    assert parallel._controller() is not stale
    assert parallel._controller() is parallel._controller()
