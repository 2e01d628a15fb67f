"""Averaged EP: one tied site for every listed margin [DB18; LHT15].

Parallel EP (:mod:`pac_particles.approx.ep.core`) keeps one site per margin, each
with its own cavity. Averaged EP (AEP [DB18], stochastic EP with tied sites
[LHT15]) ties the ``B`` margin sites of a list (sampled pairs,
:class:`~pac_particles.problem.risks.SampledAUCRisk`; points,
:class:`~pac_particles.problem.risks.ClassificationRisk`) to one average factor
``f``, so ``q = prior * f^B`` and every site has the same cavity
``q / f``. In the whitened coordinates ``w`` of the core its natural
parameters are::

    Lambda_c = prior_prec + (1 - 1/B) T,      eta_c = prior_shift + (1 - 1/B) t,

``(T, t) = (C' A' diag(W) A C, C' A' H)`` the total site: a convex
combination of the precisions of ``q`` and of the prior, hence proper
whenever ``q`` is. One iteration takes, for every margin ``k``, its cavity
marginal ``u_k ~ N(e_k . g, |e_k|^2)`` (``e_k`` the margin's row of
``C Lc^-T``, ``g = Lc^-1 eta_c``, ``Lc`` the Cholesky factor of
``Lambda_c``), the tilted moments of ``exp(-kappa_k 1{u < 0})`` under it
(``pac_particles.approx.ep.sites._pair_tilted``) and the resulting rank-one site
update ``(W_k, H_k)``; the new total site is their sum. The pass is one
fused numba kernel in O(B r^2) (:func:`averaged_pass`): it gathers the two
rows of ``C Lc^-T`` of each margin once and accumulates
``sum_k W_k e_k e_k'`` and ``sum_k H_k e_k`` (r x r and r) per chunk, so no
n x r work is done per margin. Damping is that of the core (the total site
is linear in ``(W, H)``, so damping the arrays damps the tied site).
Convergence is judged on the Gaussian over ``w`` (mean change in posterior
sd, relative change of its variances), not margin by margin.

The EP energy with tied sites is::

    log Z = Phi(q) - Phi(prior) + sum_k log Z_k(cavity) + B (Phi(cavity) - Phi(q)),

``Phi`` the log-normaliser of a Gaussian in natural parameters; the last
term, a difference of order 1/B times B, is computed from the eigenvalues
of ``L^-1 T L^-T`` (``L`` the Cholesky factor of ``Lambda``) with
``log1p`` (:func:`tied_cavity_energy`).

Where it fails. The margin sites are scale-invariant step functions, so the
direction of ``w`` is pinned by the data while its radius only by the prior.
On data the score cannot separate with ``kappa = lam / B`` not small
(``lam = n``, ``B = 5 n``: ``kappa = 0.2``) the direction settles in a few
tens of iterations but the radial variance of ``q`` does not: the averaged
update of that one mode overshoots (a period-2 cycle that survives damping
0.3), and its cycle sits far from the scale identity
``E_q ||w||^2 = r`` that every fixed point of per-margin EP satisfies. The
run then ends unconverged (``converged`` False, a warning) with a usable
mean direction; see ``tests/approx/test_ep_averaged.py``.

Example
-------
::

    from pac_particles.approx.ep import EPLinear
    ep = EPLinear(X, y, lam=len(y), n_pairs=20 * len(y), sites="averaged")
    res = ep.fit()
    res.mean, res.log_z, res.n_sweeps, res.converged

References
----------
[DB18] Dehaene, G. and Barthelme, S. (2018). Expectation propagation in the
large data limit. Journal of the Royal Statistical Society B 80(1),
199-217 (averaged EP).

[LHT15] Li, Y., Hernandez-Lobato, J. M. and Turner, R. E. (2015).
Stochastic expectation propagation. NIPS 28.
"""

import math

import numba
import numpy as np
from scipy import linalg

from pac_particles.core import parallel
from pac_particles.core.checks import InputError
from pac_particles.approx.ep.core import _Sites
from pac_particles.approx.ep.sites import _pair_tilted
from pac_particles.approx.ep.sparse_sites import CHUNK, n_chunks

__all__ = ["averaged_pass", "tied_cavity_energy"]


@numba.njit(cache=True, inline="always")
def _averaged_chunk(b, first, second, sign, Bt, g, active, c, a, kappa, log_a,
                    W_out, H_out, S_out, s_out, log_z_out, improper):
    """Margins ``[b CHUNK, (b + 1) CHUNK)``: see :func:`averaged_pass`."""
    shared = kappa.size == 1
    r = Bt.shape[1]
    e = np.empty(r)
    total = 0.0
    bad = 0
    for k in range(b * CHUNK, min(first.size, (b + 1) * CHUNK)):
        W_out[k] = 0.0
        H_out[k] = 0.0
        if not active[k]:
            continue
        i = first[k]
        j = second[k]
        v = 0.0
        m = 0.0
        for l in range(r):
            el = sign[k] * Bt[i, l]
            if j >= 0:
                el -= Bt[j, l]
            e[l] = el
            v += el * el
            m += el * g[l]
        if not v > 0.0:
            bad += 1
            continue
        w = 0 if shared else k
        log_z, prec, shift = _pair_tilted(1.0 / v, m / v, c[w], a[w],
                                          kappa[w], log_a[w])
        if not (math.isfinite(prec) and math.isfinite(shift)):
            bad += 1
            continue
        W_out[k] = prec
        H_out[k] = shift
        total += log_z
        for l in range(r):
            s_out[b, l] += shift * e[l]
            pe = prec * e[l]
            for q in range(l + 1):
                S_out[b, l, q] += pe * e[q]
    log_z_out[b] = total
    improper[b] = bad


@numba.njit(cache=True)
def _averaged_serial(first, second, sign, Bt, g, active, c, a, kappa, log_a,
                     W_out, H_out, S_out, s_out, log_z_out, improper):
    for b in range(log_z_out.size):
        _averaged_chunk(b, first, second, sign, Bt, g, active, c, a, kappa,
                        log_a, W_out, H_out, S_out, s_out, log_z_out,
                        improper)


@numba.njit(cache=True, parallel=True)
def _averaged_parallel(first, second, sign, Bt, g, active, c, a, kappa, log_a,
                       W_out, H_out, S_out, s_out, log_z_out, improper):
    for b in numba.prange(log_z_out.size):
        _averaged_chunk(b, first, second, sign, Bt, g, active, c, a, kappa,
                        log_a, W_out, H_out, S_out, s_out, log_z_out,
                        improper)


def averaged_pass(first, second, sign, Bt, g, active, weights, W_out, H_out):
    """One pass of averaged EP over a list of margins from their common cavity.

    Margin ``k`` is ``sign_k s_first - s_second`` (``second = -1``: a point
    margin), see :mod:`pac_particles.approx.ep.sparse_sites`. ``Bt`` (n, r) holds
    the rows ``e_i = Lc^-1 c_i`` of the score factor whitened by the
    cavity's Cholesky factor and ``g = Lc^-1 eta_c``, so the cavity marginal
    of margin k is ``N(e_k . g, |e_k|^2)``, ``e_k = sign_k e_i - e_j``.
    Writes the full site update of each margin into ``W_out``, ``H_out``
    (0 for inactive margins and for the few whose update is not finite).

    Parameters
    ----------
    first, second : (B,) int64 node indices; sign : (B,) float.
    Bt : (n, r) C-contiguous; g : (r,).
    active : (B,) bool; weights : :func:`~pac_particles.approx.ep.sparse_sites.site_weights`.
    W_out, H_out : (B,) float, written.

    Returns
    -------
    S : (r, r) ``sum_k W_k e_k e_k'``; s : (r,) ``sum_k H_k e_k``;
    log_z : ``sum_k log Z_k`` of the tilted distributions; n_bad : int.

    Examples
    --------
    >>> import numpy as np
    >>> from pac_particles.approx.ep.sparse_sites import site_weights
    >>> Bt = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> one = np.ones(1, dtype=bool)
    >>> W, H = np.empty(1), np.empty(1)
    >>> S, s, log_z, bad = averaged_pass(
    ...     np.array([0]), np.array([1]), np.ones(1), Bt, np.zeros(2), one,
    ...     site_weights(0.5), W, H)
    >>> bool(np.allclose(S, W[0] * np.array([[1.0, -1.0], [-1.0, 1.0]])))
    True
    """
    blocks = n_chunks(first.size)
    r = Bt.shape[1]
    S_out = np.zeros((blocks, r, r))
    s_out = np.zeros((blocks, r))
    log_z_out = np.empty(blocks)
    improper = np.zeros(blocks, dtype=np.int64)
    kernel = parallel.dispatch(_averaged_serial, _averaged_parallel,
                               work=first.size * max(1, r // 2))
    kernel(first, second, sign, Bt, g, active, *weights, W_out, H_out, S_out,
           s_out, log_z_out, improper)
    # chunk sums added in a fixed order: serial and parallel agree bit for bit
    S = S_out.sum(axis=0)
    S = np.tril(S) + np.tril(S, -1).T
    return S, s_out.sum(axis=0), float(log_z_out.sum()), int(improper.sum())


def tied_cavity_energy(lam_mat, eta, site_prec, site_shift, n_sites):
    """``B (Phi(cavity) - Phi(q))`` for ``q = N`` of natural parameters
    ``(lam_mat, eta)`` and the tied cavity that removes ``1/B`` of the
    total site ``(site_prec, site_shift)``, without the cancellation of the
    direct difference.

    With ``L`` the Cholesky factor of ``lam_mat``, ``L^-1 site_prec L^-T =
    V diag(lam_i) V'``, ``g = V' L^-1 eta``, ``h = V' L^-1 site_shift`` and
    ``eps = 1/B``::

        B (Phi(cav) - Phi(q)) = sum_i [ (lam_i g_i^2 - 2 g_i h_i + eps h_i^2)
                                        / (2 (1 - eps lam_i))
                                        - B log1p(-eps lam_i) / 2 ].

    Examples
    --------
    >>> import numpy as np
    >>> L = np.array([[3.0, 1.0], [1.0, 2.0]]); T = L - np.eye(2)
    >>> eta = np.array([0.5, -1.0]); t = eta.copy()
    >>> phi = lambda P, e: 0.5 * e @ np.linalg.solve(P, e) - 0.5 * np.linalg.slogdet(P)[1]
    >>> direct = 4 * (phi(L - T / 4, eta - t / 4) - phi(L, eta))
    >>> bool(np.isclose(tied_cavity_energy(L, eta, T, t, 4), direct))
    True
    """
    eps = 1.0 / n_sites
    chol = np.linalg.cholesky(lam_mat)
    M = linalg.solve_triangular(chol, site_prec, lower=True)
    M = linalg.solve_triangular(chol, M.T, lower=True)
    lam, V = np.linalg.eigh(0.5 * (M + M.T))
    g = V.T @ linalg.solve_triangular(chol, eta, lower=True)
    h = V.T @ linalg.solve_triangular(chol, site_shift, lower=True)
    shrink = 1.0 - eps * lam
    quad = (lam * g * g - 2.0 * g * h + eps * h * h) / (2.0 * shrink)
    return float(np.sum(quad - 0.5 * n_sites * np.log1p(-eps * lam)))


class _AveragedSites(_Sites):
    """The margin sites of a listed risk, tied to one average factor for
    :func:`~pac_particles.approx.ep.core._run_ep` (see the module docstring).

    ``sweep`` forms the common cavity from the posterior ``state`` and
    writes each margin's update from it as the targets; the change it
    returns is that of the Gaussian over ``w`` since the previous sweep.
    ``energy`` is the tied EP energy's site share at the last swept state.
    """

    def __init__(self, risk, tied, lam):
        super().__init__(risk, tied, lam)
        if self.margins is None:
            raise InputError("sites='averaged' runs on a list of margins "
                             "(sampled pairs: an int n_pairs, or the "
                             "automatic sampling above AUTO_MAX_PAIRS); "
                             "the full pair grid takes sites='per_pair'")
        self.n_sites = int(self.active.sum())
        self._bound = None
        self._last = None

    def at(self, lam):
        return _AveragedSites(self.risk, ~self.active, lam)

    def bind(self, C, prior):
        """The score factor and the prior of the run (the cavity needs both)."""
        self._bound = (np.ascontiguousarray(C, dtype=float), prior)
        self._previous = None

    def buffers(self):
        buf = super().buffers()
        # the change and improper counts are per pass, not per chunk
        buf.change = np.zeros(1)
        buf.improper = np.zeros(1, dtype=np.int64)
        return buf

    def _site_totals(self, state):
        """``(T, t)``: the total site in whitened coordinates."""
        _, prior = self._bound
        lam_mat = state.chol @ state.chol.T
        lam_mat[np.diag_indices_from(lam_mat)] -= prior.prec
        return lam_mat, state.eta - prior.shift

    def sweep(self, state, W, H, has_previous, buf):
        C, prior = self._bound
        T, t = self._site_totals(state)
        keep = 1.0 - 1.0 / max(self.n_sites, 1)
        cav = keep * T
        cav[np.diag_indices_from(cav)] += prior.prec
        chol = np.linalg.cholesky(cav)
        g = linalg.solve_triangular(chol, prior.shift + keep * t, lower=True)
        Bt = np.ascontiguousarray(
            linalg.solve_triangular(chol, C.T, lower=True,
                                    check_finite=False).T)
        first, second, sign = self.margins
        S, s, log_z, bad = averaged_pass(first, second, sign, Bt, g,
                                         self.active, self.weights,
                                         buf.W_target, buf.H_target)
        buf.improper[0] = bad
        self._last = (log_z, state)
        # the Gaussian over w: mean in posterior sd, variances relatively
        inv_chol = linalg.solve_triangular(state.chol,
                                           np.eye(state.chol.shape[0]),
                                           lower=True, check_finite=False)
        var = np.einsum("ij,ij->j", inv_chol, inv_chol)
        change = np.inf
        if self._previous is not None:
            mean0, var0 = self._previous
            change = float(max(np.max(np.abs(state.w_mean - mean0)
                                      / np.sqrt(var)),
                               np.max(np.abs(var - var0) / var)))
        self._previous = (state.w_mean.copy(), var)
        buf.change[0] = change
        return change

    def energy(self, buf, W, H):
        log_z, state = self._last
        T, t = self._site_totals(state)
        lam_mat = state.chol @ state.chol.T
        tied = tied_cavity_energy(lam_mat, state.eta, T, t,
                                  max(self.n_sites, 1))
        return log_z + tied + self.tie_energy, int(buf.improper[0])
