"""Test helpers beside the exact references of ``lab/reference/quadrature.py``
(never imported by the package): the plain-numpy twin of the exact-ellipse
kernel, the check of SMC runs against the d = 2 quadrature, and the
serial/parallel comparison of the numba kernels.
"""

import numpy as np

from lab.reference.quadrature import AngularQuadrature
from pac_particles.core import parallel


def ellipse_arcs(a, b):
    """Arcs of the mis-ordered pair count along the ellipse, plain numpy.

    ``a``, ``b`` : (P,) score differences ``d_ij . theta`` and ``d_ij . nu``.
    Returns ``edges`` (arcs ``[edges[k], edges[k+1])`` covering [0, 2pi]),
    ``counts`` (mis-ordered pairs on each arc) and ``ties`` (pairs with
    ``a = b = 0``, each worth 1/2 everywhere).
    """
    tie = (a == 0) & (b == 0)
    a, b = a[~tie], b[~tie]
    alpha = np.arctan2(b, a)
    # a cos phi + b sin phi = r cos(phi - alpha) < 0 on (alpha + pi/2, alpha + 3pi/2)
    enter = np.mod(alpha + np.pi / 2, 2 * np.pi)
    leave = np.mod(alpha + 3 * np.pi / 2, 2 * np.pi)
    events = np.concatenate([enter, leave])
    change = np.concatenate([np.ones_like(enter), -np.ones_like(leave)])
    order = np.argsort(events, kind="stable")
    events, change = events[order], change[order]
    bad_at_zero = np.sum(enter > leave)  # half-circles wrapping through 0
    counts = bad_at_zero + np.concatenate([[0.0], np.cumsum(change)])
    edges = np.concatenate([[0.0], events, [2 * np.pi]])
    return edges, counts, int(tie.sum())


def ellipse_angle_draw_reference(a, b, kappa_per_pair, u_arc, u_within,
                                 min_arc=1e-12):
    """One exact angle draw on an ellipse (plain-numpy twin of the numba
    kernel in pac_particles.smc.moves, same uniforms)."""
    edges, counts, _ = ellipse_arcs(a, b)
    lengths = np.diff(edges)
    keep = lengths > min_arc  # rounding artefacts between coincident points
    lowest = counts[keep].min()
    excess = np.where(keep, counts - lowest, 0.0)
    weights = np.where(keep, lengths * np.exp(-kappa_per_pair * excess), 0.0)
    cum = np.cumsum(weights)
    arc = min(np.searchsorted(cum, u_arc * cum[-1], side="right"),
              np.flatnonzero(keep)[-1])
    return edges[arc] + u_within * lengths[arc]


def assert_smc_matches_quadrature(X, y, lam, run, n_runs=5, margins="pairs"):
    """Independent SMC runs ``run(seed) -> SMCPosterior`` agree with the exact
    d = 2 Gibbs posterior: mean angle within 4 Monte Carlo standard errors
    (+ 0.005 rad), mean log Z within 0.2, the last run's mean within 0.15."""
    exact = AngularQuadrature(X, y, lam, margins)
    angles, log_zs = [], []
    for seed in range(n_runs):
        post = run(seed)
        angles.append(np.arctan2(post.mean[1], post.mean[0]))
        log_zs.append(post.log_z)
    standard_error = np.std(angles, ddof=1) / np.sqrt(len(angles))
    assert abs(np.mean(angles) - exact.mean_angle) < 4 * standard_error + 0.005
    assert abs(np.mean(log_zs) - exact.log_z) < 0.2
    np.testing.assert_allclose(post.mean, exact.mean, atol=0.15)


def serial_and_parallel(compute):
    """``compute()`` with every kernel forced serial, then forced parallel."""
    with parallel.forced("serial"):
        serial = compute()
    with parallel.forced("parallel"):
        in_parallel = compute()
    return serial, in_parallel


def assert_identical(serial, in_parallel):
    """Equal bit for bit, item by item of a tuple of results."""
    assert len(serial) == len(in_parallel)
    for s, p in zip(serial, in_parallel):
        np.testing.assert_array_equal(s, p)
