"""Leave-one-out scores from a fitted EP approximation, without refitting [OW00].

Removing from the global Gaussian approximation *all* the sites that involve
training point i (for the AUC risk: the star of node i in the pair graph)
gives an approximate posterior of the other points' fit, hence a predictive
score for point i. With the star Laplacian ``L_i`` (point i's sites only)::

    Lambda_i = Lambda - C' L_i C,      eta_i = eta - C' g_i,
    LOO score of i ~ N(c_i' Lambda_i^-1 eta_i, c_i' Lambda_i^-1 c_i),

where ``c_i`` is row i of the prior factor ``C`` (``s = C w``) and ``g_i``
the node vector of point i's site shifts. For the pair graph::

    C' L_i C = a_i c_i c_i' - c_i z_i' - z_i c_i' + sum_j W_ij c_j c_j',

``a_i = sum_j W_ij`` and ``z_i = sum_j W_ij c_j`` over the partners j of i.
A risk that lists its margins (points, sampled pairs) has sparse stars,
formed per node from the list (:func:`_loo_margin_list`, O(K r^2 + n r^3)).
Small r: the r x r systems are formed and solved in batches,
O(P r^2 + n r^3) (:func:`_loo_direct`). Large r (GP, score space):
preconditioned conjugate gradients with ``Lambda`` as preconditioner, all n
systems at once, each iteration O(n r^2 + P r) (:func:`_loo_cg`).

Example
-------
::

    from pac_particles.approx.ep import EPLinear
    ep = EPLinear(X, y, lam=len(y))
    mean, var = ep.loo_scores(return_var=True)   # calls site_removal_scores
    ep.loo_auc()                                 # EP cross-validation AUC

References
----------
[OW00] Opper, M. and Winther, O. (2000). Gaussian processes for
classification: mean-field algorithms. Neural Computation 12(11), 2655-2684.
"""

import contextlib
import contextvars
import math

import numba
import numpy as np
from scipy import linalg

from pac_particles.core import parallel

# Memory budget (float64 entries) of the batched leave-one-out computations.
_LOO_BLOCK_ENTRIES = 4_000_000
# Above this rank the r x r systems are solved by conjugate gradients.
_LOO_DIRECT_MAX_RANK = 96


def site_removal_scores(C, sites, W, H, state):
    """LOO score means and variances (rows in ``risk.order``; NaN where
    a LOO precision is not positive definite)."""
    if sites.margins is not None:
        return _loo_margin_list(C, sites.margins, W, H, state)
    return star_removal_scores(C, sites.risk, W, H, state.chol, state.eta)


def star_removal_scores(C, risk, W, H, chol, eta):
    """Every point's score under the Gaussian ``N(Lambda^-1 eta,
    Lambda^-1)`` on ``w`` (``Lambda = chol chol'``) from which the pair
    terms ``(W, H)`` of that point's star have been removed (module
    docstring): EP's leave-one-out [OW00] with EP's sites, and the
    one-Newton-step leave-one-out of a variational fit with its pair
    curvatures (:meth:`pac_particles.approx.vb.GaussianVB.loo_scores`). ``risk`` an
    :class:`~pac_particles.problem.risks.AUCRisk` on all pairs; rows of ``C`` and
    the returned ``(mean, var)`` in ``risk.order``."""
    if C.shape[1] <= _LOO_DIRECT_MAX_RANK:
        return _loo_direct(C, risk, W, H, chol, eta)
    return _loo_cg(C, risk, W, H, chol, eta)


def _node_sign(risk):
    """+1 for a positive, -1 for a negative: the sign of a node's score in
    its margins ``u_ij = s_i - s_j``."""
    return np.concatenate([np.ones(risk.n_pos), -np.ones(risk.n_neg)])


def _star_parts(C, risk, W, H):
    """Per-node pieces ``a_i``, ``z_i`` and ``C' g_i`` of every star."""
    n_pos = risk.n_pos
    sign = _node_sign(risk)
    # node i's own degree and shifts: its row of A' diag(W) A C (resp. A'
    # diag(H) A C) is sum_j W_ij (c_i - c_j), up to the node's sign
    a = sign * risk.adjoint(W)
    star_g = sign[:, None] * risk.gram_times(H, C)
    z = np.vstack([W @ C[n_pos:], W.T @ C[:n_pos]])
    return a, z, star_g


def _loo_direct(C, risk, W, H, chol, eta):
    lam_mat = chol @ chol.T
    n_pos = risk.n_pos
    a_all, z_all, g_all = _star_parts(C, risk, W, H)
    mean = np.empty(C.shape[0])
    var = np.empty(C.shape[0])
    r = C.shape[1]
    rows, cols = np.triu_indices(r)     # the systems are symmetric
    # positives: partners are the negatives (rows of W); negatives: columns
    for partners, Wt, offset, count in ((C[n_pos:], W, 0, n_pos),
                                        (C[:n_pos], W.T, n_pos, risk.n_neg)):
        m = partners.shape[0]
        products = _partner_products(partners, rows, cols)
        block = max(1, _LOO_BLOCK_ENTRIES // max(1, r * max(m, r)))
        for start in range(0, count, block):
            idx = np.arange(start, min(count, start + block)) + offset
            ci, a, z = C[idx], a_all[idx], z_all[idx]
            upper = _weighted_outer_upper(Wt[idx - offset], products,
                                          rows.size)
            # Lambda - star = Lambda - M - a ci ci' + ci z' + z ci', and
            # ci z' + z ci' - a ci ci' = ci v' + v ci' with v = z - a ci / 2
            mean[idx], var[idx] = _loo_solve(
                lam_mat, upper, ci, z - 0.5 * a[:, None] * ci,
                eta[None] - g_all[idx])
    return mean, var


@numba.njit(cache=True, inline="always")
def _loo_row(b, lam_mat, upper, ci, v, rhs, mean, var, A, y):
    """Row b of :func:`_loo_solve` in the (r, r) scratch ``A`` and (2, r)
    ``y``; False (mean and var untouched) where the system is not positive
    definite."""
    r = ci.shape[1]
    # the lower triangle of the system, then its Cholesky factor in place
    t = 0
    for k in range(r):
        for l in range(k, r):
            A[l, k] = (lam_mat[k, l] - upper[b, t] + ci[b, k] * v[b, l]
                       + v[b, k] * ci[b, l])
            t += 1
    for j in range(r):
        s = A[j, j]
        for p in range(j):
            s -= A[j, p] * A[j, p]
        if not s > 0.0:
            return False
        d = math.sqrt(s)
        A[j, j] = d
        for i in range(j + 1, r):
            s = A[i, j]
            for p in range(j):
                s -= A[i, p] * A[j, p]
            A[i, j] = s / d
    # L y0 = c and L y1 = rhs: var = c' A^-1 c = |y0|^2 and mean =
    # c' A^-1 rhs = y0 . y1 (no back substitution)
    q = 0.0
    m = 0.0
    for i in range(r):
        s0 = ci[b, i]
        s1 = rhs[b, i]
        for p in range(i):
            s0 -= A[i, p] * y[0, p]
            s1 -= A[i, p] * y[1, p]
        y[0, i] = s0 / A[i, i]
        y[1, i] = s1 / A[i, i]
        q += y[0, i] * y[0, i]
        m += y[0, i] * y[1, i]
    var[b] = q
    mean[b] = m
    return True


@numba.njit(cache=True)
def _loo_solve_serial(lam_mat, upper, ci, v, rhs, mean, var, ok):
    r = ci.shape[1]
    A = np.empty((r, r))
    y = np.empty((2, r))
    for b in range(ci.shape[0]):
        ok[b] = _loo_row(b, lam_mat, upper, ci, v, rhs, mean, var, A, y)


@numba.njit(cache=True, parallel=True)
def _loo_solve_parallel(lam_mat, upper, ci, v, rhs, mean, var, ok):
    r = ci.shape[1]
    for b in numba.prange(ci.shape[0]):
        A = np.empty((r, r))
        y = np.empty((2, r))
        ok[b] = _loo_row(b, lam_mat, upper, ci, v, rhs, mean, var, A, y)


def _loo_solve(lam_mat, upper, ci, v, rhs):
    """``(c_b' S_b^-1 rhs_b, c_b' S_b^-1 c_b)`` for the systems ``S_b =
    Lambda - M_b + c_b v_b' + v_b c_b'`` (``M_b`` by its upper triangle,
    row b of ``upper`` in the order of ``np.triu_indices``): formed and
    Cholesky-factored one at a time in a scratch matrix, where numpy's
    batched LU through (b, r, r) temporaries was slower (docs/benchmarks.md,
    "Speed and accuracy tables"). A system that is not positive definite is solved by
    LU, as all were before."""
    n, r = ci.shape
    mean, var = np.empty(n), np.empty(n)
    ok = np.empty(n, dtype=np.bool_)
    kernel = parallel.dispatch(_loo_solve_serial, _loo_solve_parallel,
                               n * r * r * r // 3)
    kernel(lam_mat, upper, ci, v, rhs, mean, var, ok)
    rows, cols = np.triu_indices(r)
    for b in np.flatnonzero(~ok):
        M = np.empty((r, r))
        M[rows, cols] = upper[b]
        M[cols, rows] = upper[b]
        system = (lam_mat - M + np.outer(ci[b], v[b])
                  + np.outer(v[b], ci[b]))
        try:
            sol = np.linalg.solve(system, np.stack([rhs[b], ci[b]], axis=-1))
        except np.linalg.LinAlgError:
            sol = np.full((r, 2), np.nan)
        mean[b], var[b] = ci[b] @ sol[:, 0], ci[b] @ sol[:, 1]
    return mean, var


def _partner_products(partners, rows, cols):
    """``products()``: the chunks ``(start, K)`` of partners, ``K[j]`` the
    upper triangle (``rows``, ``cols``) of ``c_j c_j'``, each within
    :data:`_LOO_BLOCK_ENTRIES`. Where one chunk holds every partner it is
    formed once for all the blocks of nodes (forming it took twice the
    GEMM that uses it), and inside :func:`reused_partner_products` once for
    all the calls on the same partners; otherwise each call forms them
    again."""
    chunk = max(1, _LOO_BLOCK_ENTRIES // rows.size)

    def chunks():
        for start in range(0, partners.shape[0], chunk):
            part = partners[start:start + chunk]
            yield start, part[:, rows] * part[:, cols]

    if partners.shape[0] > chunk:
        return chunks
    kept = _KEPT_PRODUCTS.get()
    if kept is None:
        formed = list(chunks())
        return lambda: formed
    key = (partners.shape, partners.tobytes())
    if key not in kept:
        if len(kept) >= _KEPT_MAX:
            kept.clear()
        kept[key] = list(chunks())
    formed = kept[key]
    return lambda: formed


#: the partners' products kept inside :func:`reused_partner_products`
#: (None outside), by the partners' shape and bytes
_KEPT_PRODUCTS = contextvars.ContextVar("kept_partner_products", default=None)
#: partner matrices kept at once (a path over lam has two: the positives'
#: and the negatives')
_KEPT_MAX = 4


@contextlib.contextmanager
def reused_partner_products():
    """Within the block, the leave-one-out of a fixed factor forms its
    partners' outer products once (:func:`_partner_products`): a choice of
    ``lam`` by leave-one-out along a grid keeps the factor ``C``, and
    forming them was a good share of each leave-one-out
    (docs/benchmarks.md, "Speed and accuracy tables").
    They are dropped when the block ends."""
    token = _KEPT_PRODUCTS.set({})
    try:
        yield
    finally:
        _KEPT_PRODUCTS.reset(token)


def _weighted_outer_upper(Wb, products, size):
    """The upper triangles (``size`` entries) of ``M[b] = sum_j Wb[b, j]
    c_j c_j'`` as GEMMs ``Wb @ K`` over the chunks of
    :func:`_partner_products`: one BLAS-3 product instead of a stack of
    small ones through a (b, r, m) temporary (the figures:
    docs/benchmarks.md, "Speed and accuracy tables")."""
    upper = np.zeros((Wb.shape[0], size))
    for start, K in products():
        upper += Wb[:, start:start + K.shape[0]] @ K
    return upper


def _loo_cg(C, risk, W, H, chol, eta, rtol=1e-10, max_iter=500):
    n_pos = risk.n_pos
    Cp, Cn = C[:n_pos], C[n_pos:]
    a, z, star_g = _star_parts(C, risk, W, H)
    lam_mat = chol @ chol.T

    def apply(X):
        """Column i of the output is (Lambda - C' L_i C) x_i."""
        cx = np.einsum("ik,ik->i", C, X)
        zx = np.einsum("ik,ik->i", z, X)
        out = X @ lam_mat
        out -= C * (a * cx - zx)[:, None] - z * cx[:, None]
        out[:n_pos] -= (W * (X[:n_pos] @ Cn.T)) @ Cn
        out[n_pos:] -= (W.T * (X[n_pos:] @ Cp.T)) @ Cp
        return out

    def precondition(R):
        return linalg.cho_solve((chol, True), R.T).T

    results = []
    for B in (eta[None, :] - star_g, C):
        # rows of B are the right-hand sides, one per node
        X = precondition(B)
        R = B - apply(X)
        Zr = precondition(R)
        Pd = Zr.copy()
        rz = np.einsum("ik,ik->i", R, Zr)
        norm_b = np.sqrt(np.einsum("ik,ik->i", B, B))
        done = np.sqrt(np.einsum("ik,ik->i", R, R)) <= rtol * norm_b
        for _ in range(max_iter):
            if np.all(done):
                break
            AP = apply(Pd)
            pap = np.einsum("ik,ik->i", Pd, AP)
            # an indefinite LOO precision shows up as p' A p <= 0
            alpha = np.where(done | (pap <= 0), 0.0, rz / np.where(pap > 0, pap, 1))
            X += alpha[:, None] * Pd
            R -= alpha[:, None] * AP
            Zr = precondition(R)
            rz_new = np.einsum("ik,ik->i", R, Zr)
            beta = np.where(done, 0.0, rz_new / np.where(rz > 0, rz, 1))
            Pd = Zr + beta[:, None] * Pd
            rz = rz_new
            done |= (np.sqrt(np.einsum("ik,ik->i", R, R)) <= rtol * norm_b) | (pap <= 0)
        X[~done] = np.nan
        results.append(np.einsum("ik,ik->i", C, X))
    mean, var = results
    return mean, var


def _loo_margin_list(C, margins, W, H, state):
    """Star removal for a risk that lists its margins (points, sampled
    pairs: :mod:`pac_particles.approx.ep.sparse_sites`).

    Margin k is ``D_k . w`` with ``D_k = sign_k c_first - c_second`` (no
    second node for a point), so the star of node i removes ``M_i = sum_k
    W_k D_k D_k'`` from ``Lambda`` and ``g_i = sum_k H_k D_k`` from ``eta``,
    the sums over the margins that involve i (a point: its one site, and
    the LOO marginal is that site's cavity). The margins are grouped by node
    once; blocks of nodes are formed and solved together, O(K r^2 + n r^3)
    in memory bounded by ``_LOO_BLOCK_ENTRIES``.
    """
    first, second, sign = margins
    n, r = C.shape
    paired = second >= 0
    ends = np.concatenate([first, second[paired]])
    site_of = np.concatenate([np.arange(first.size),
                              np.flatnonzero(paired)])
    by_node = np.argsort(ends, kind="stable")
    ends, site_of = ends[by_node], site_of[by_node]
    ptr = np.searchsorted(ends, np.arange(n + 1))
    chol = state.chol
    lam_mat = chol @ chol.T
    mean, var = np.empty(n), np.empty(n)
    per_node = max(1, (ends.size + n - 1) // n)
    block = max(1, _LOO_BLOCK_ENTRIES // (r * r * per_node + r * r))
    for lo in range(0, n, block):
        hi = min(n, lo + block)
        k = site_of[ptr[lo]:ptr[hi]]
        D = sign[k, None] * C[first[k]]
        two = paired[k]
        D[two] -= C[second[k[two]]]
        M = np.zeros((hi - lo, r, r))
        g = np.zeros((hi - lo, r))
        counts = np.diff(ptr[lo:hi + 1])
        has = counts > 0
        if k.size:
            starts = ptr[lo:hi][has] - ptr[lo]
            M[has] = np.add.reduceat(W[k, None, None] * D[:, :, None]
                                     * D[:, None, :], starts, axis=0)
            g[has] = np.add.reduceat(H[k, None] * D, starts, axis=0)
        ci = C[lo:hi]
        rhs = np.stack([state.eta[None] - g, ci], axis=-1)
        try:
            sol = np.linalg.solve(lam_mat[None] - M, rhs)
        except np.linalg.LinAlgError:
            sol = np.full(rhs.shape, np.nan)
        mean[lo:hi] = np.einsum("bk,bk->b", ci, sol[..., 0])
        var[lo:hi] = np.einsum("bk,bk->b", ci, sol[..., 1])
    return mean, var
