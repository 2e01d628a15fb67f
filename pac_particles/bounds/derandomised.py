"""A certificate of one linear score, derandomised from a Gaussian posterior.

A PAC-Bayes bound certifies a randomised score ``x . theta``, ``theta ~
rho``; the score a fitted estimator returns is one vector ``w``. For a
linear score the margin argument passes from one to the other
[LST02; BM21]: let ``S`` be a covariance and ``t > 0``, ``gamma > 0`` fixed
before the rows that certify, ``rho = N(c w, t^2 S)`` for any ``c > 0``
(the ranking, and the labels' signs, do not depend on ``c``). For a margin
row ``d`` (a positive minus a negative for the AUC, ``y x`` with ``y`` in
{-1, +1} for the error) with ``s_d = sqrt(d' S d) > 0``::

    1{d . w < 0} <= P_rho(d . theta < gamma t s_d) / Phi(gamma),

because ``d . theta ~ N(c d . w, t^2 s_d^2)`` and the right-hand side's
probability is ``Phi(gamma - c d . w / (t s_d)) >= Phi(gamma)`` when ``d . w
< 0``. The loss ``l(theta, d) = 1{d . theta < gamma t s_d}`` (1/2 for a row
with ``s_d = 0``, a tie for every ``theta``) is a fixed function of
``(theta, d)`` with values in [0, 1], so the PAC-Bayes-kl bound on the
certifying rows ``B`` holds for it, for every ``rho`` at once::

    R(w) <= kl^-1( mean_B Phi(gamma - c d . w / (t s_d)),
                   (KL(rho || prior) + log(xi(m) K / delta)) / m ) / Phi(gamma),

with ``prior = N(mu_A, t^2 S)`` and ``S``, ``mu_A`` fitted on the other
rows ``A``, ``K`` the size of the grid of ``(t, gamma)`` fixed in advance
(a union bound), and ``c`` the value that makes the KL smallest,
``c = w' S^-1 mu_A / w' S^-1 w`` (a function of ``w`` and of ``A``: the
bound holds for every ``rho``, so ``c`` may depend on every row). Ties of
``w`` (``d . w = 0``) count 1/2 in the AUC risk, and ``1/2 <= Phi(gamma) /
Phi(gamma)``: the pointwise inequality holds for them too.

When ``B`` has more pairs than ``max_pairs``, ``mean_B`` is replaced by its
upper confidence bound from ``max_pairs`` pairs drawn uniformly with
replacement (Chernoff, :func:`~pac_particles.bounds.held_out_bound`'s
inversion, at its own share of ``delta`` with the same union over the grid):
given the rows, the drawn pairs are independent of every choice above.

References
----------
[LST02] Langford, J. and Shawe-Taylor, J. (2002). PAC-Bayes and margins.
NIPS 15.

[BM21] Biggs, F. and Guedj, B. (2021). Differentiable PAC-Bayes objectives
with partially aggregated neural networks. Entropy 23(10), 1280.
"""

import math

import numpy as np
from scipy.special import ndtr

from pac_particles.bounds.kl import kl_inverse_upper, maurer_constant

__all__ = ["margin_rows", "derandomised_bound"]

#: pairs per block of :func:`margin_rows`
PAIR_BLOCK = 65536


def margin_rows(X_pos, X_neg, w, S, max_pairs, rng):
    """``(u, s, sampled)``: the margins ``u = d . w`` and scales ``s =
    sqrt(d' S d)`` of the pair rows ``d = x_i - x_j`` (positive ``i``,
    negative ``j``), every pair when there are at most ``max_pairs``, else
    ``max_pairs`` pairs drawn uniformly with replacement by ``rng``
    (``sampled`` True)."""
    n_pos, n_neg = len(X_pos), len(X_neg)
    if n_pos * n_neg <= max_pairs:
        i, j = np.divmod(np.arange(n_pos * n_neg), n_neg)
        sampled = False
    else:
        i = rng.integers(0, n_pos, max_pairs)
        j = rng.integers(0, n_neg, max_pairs)
        sampled = True
    u = (X_pos @ w)[i] - (X_neg @ w)[j]
    s2 = np.empty(i.size)
    # blocks of pairs: the (pairs, d) differences never held at once
    for lo in range(0, i.size, PAIR_BLOCK):
        D = X_pos[i[lo:lo + PAIR_BLOCK]] - X_neg[j[lo:lo + PAIR_BLOCK]]
        s2[lo:lo + PAIR_BLOCK] = np.einsum("kd,kd->k", D @ S, D)
    return u, np.sqrt(np.maximum(s2, 0.0)), sampled


def _margin_loss(u, s, ratio, gamma):
    """``mean P_rho(d . theta < gamma t s_d)`` for ``d . theta ~ N(c u, t^2
    s^2)``, ``ratio = c / t``; rows with ``s = 0`` count 1/2."""
    out = np.full(u.shape, 0.5)
    live = s > 0
    out[live] = ndtr(gamma - ratio * u[live] / s[live])
    return float(out.mean())


def derandomised_bound(u, s, sampled, w, mu_a, S_inv, m, delta, widths,
                       margins, sample_share=0.1):
    """The bound of the module docstring: ``(bound, details)``.

    ``u, s, sampled`` from :func:`margin_rows` (or the signed rows of a
    point risk), ``w`` the certified score's coefficients, ``mu_a`` and
    ``S_inv = S^-1`` the part-A prior's mean and precision, ``m`` the
    independent terms of ``B``'s risk, ``widths`` and ``margins`` the grid
    of ``t`` and ``gamma`` fixed in advance. ``sample_share``: the share of
    ``delta`` spent on the sampled rows' confidence bound when ``sampled``.
    ``details``: the chosen ``t``, ``gamma``, ``c``, KL, margin risk and the
    grid size."""
    Sw = S_inv @ w
    c = max(float(w @ S_inv @ mu_a) / max(float(w @ Sw), 1e-300), 1e-12)
    shift = c * w - mu_a
    distance = float(shift @ S_inv @ shift)
    grid = [(t, g) for t in widths for g in margins]
    k = len(grid)
    delta_kl = delta * (1.0 - sample_share) if sampled else delta
    delta_rows = delta - delta_kl
    xi = maurer_constant(m)
    best = (math.inf, None)
    for t, g in grid:
        q = _margin_loss(u, s, c / t, g)
        if sampled:
            q = kl_inverse_upper(q, math.log(k / delta_rows) / u.size)
        kl = 0.5 * distance / t ** 2
        raw = kl_inverse_upper(q, (kl + math.log(xi * k / delta_kl)) / m) \
            / ndtr(g)
        if raw < best[0]:
            best = (raw, dict(width=t, margin=g, scale=c, kl=kl,
                              margin_risk=q, grid_size=k))
    return min(max(best[0], 0.0), 1.0), best[1]
