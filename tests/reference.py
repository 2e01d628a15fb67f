"""Independent plain-numpy references used by the tests (never by the package).

* :func:`pairwise_risk`: the O(n_pos n_neg) definition of the AUC risk.
* :class:`AngularQuadrature`: the exact Gibbs posterior in d = 2 under an
  isotropic Gaussian prior. The risk of ``theta = r (cos phi, sin phi)``
  depends on ``phi`` only and is constant between the 2P angles where a pair
  difference is orthogonal to ``theta``; the radius is Rayleigh distributed and
  independent of ``phi``. So ``Z = (1/2pi) sum_arcs len * exp(-lam R_arc)`` and
  every moment of theta is an exact sum over arcs.
"""

import numpy as np


def pairwise_risk(scores, y):
    """(1/P) sum_{i pos, j neg} 1{s_i < s_j} + 0.5 1{s_i == s_j}; rows of a
    2-D ``scores`` are separate score vectors."""
    s = np.atleast_2d(np.asarray(scores, dtype=float))
    pos = np.asarray(y).astype(float) == np.max(y)
    sp, sn = s[:, pos][:, :, None], s[:, ~pos][:, None, :]
    risk = np.mean((sp < sn) + 0.5 * (sp == sn), axis=(1, 2))
    return risk if np.ndim(scores) == 2 else float(risk[0])


class AngularQuadrature:
    """Exact Gibbs posterior of linear AUC scoring in d = 2, prior N(0, I)."""

    def __init__(self, X, y, lam):
        pos = np.asarray(y).astype(float) == np.max(y)
        diffs = (X[pos][:, None, :] - X[~pos][None, :, :]).reshape(-1, 2)
        n_pairs = diffs.shape[0]
        zero = np.all(diffs == 0, axis=1)
        diffs = diffs[~zero]
        alpha = np.arctan2(diffs[:, 1], diffs[:, 0])
        # d . u(phi) = |d| cos(phi - alpha) < 0 on (alpha + pi/2, alpha + 3pi/2)
        enter = np.mod(alpha + np.pi / 2, 2 * np.pi)
        leave = np.mod(alpha + 3 * np.pi / 2, 2 * np.pi)
        events = np.concatenate([enter, leave])
        change = np.concatenate([np.ones_like(enter), -np.ones_like(leave)])
        order = np.argsort(events)
        events, change = events[order], change[order]
        bad_at_0 = np.sum(diffs[:, 0] < 0)  # u(0) = (1, 0)
        counts = bad_at_0 + np.concatenate([[0.0], np.cumsum(change)])
        self.edges = np.concatenate([[0.0], events, [2 * np.pi]])
        self.risk = (counts + 0.5 * zero.sum()) / n_pairs
        self.lam = lam
        lengths = np.diff(self.edges)
        log_w = -lam * self.risk
        shift = log_w.max()
        w = np.exp(log_w - shift) / (2 * np.pi)
        self.log_z = np.log(np.sum(w * lengths)) + shift
        total = np.sum(w * lengths)
        a, b = self.edges[:-1], self.edges[1:]
        # E[u] and E[u u'] over the angle, exactly
        self.mean_u = np.array([np.sum(w * (np.sin(b) - np.sin(a))),
                                np.sum(w * (np.cos(a) - np.cos(b)))]) / total
        cc = 0.5 * lengths + 0.25 * (np.sin(2 * b) - np.sin(2 * a))
        ss = 0.5 * lengths - 0.25 * (np.sin(2 * b) - np.sin(2 * a))
        cs = 0.25 * (np.cos(2 * a) - np.cos(2 * b))
        self.second_u = np.array([[np.sum(w * cc), np.sum(w * cs)],
                                  [np.sum(w * cs), np.sum(w * ss)]]) / total

    @property
    def mean(self):
        """E[theta] = E[r] E[u], E[r] = sqrt(pi / 2) for a Rayleigh radius."""
        return np.sqrt(np.pi / 2) * self.mean_u

    @property
    def cov(self):
        """Cov[theta] = E[r^2] E[u u'] - E[theta] E[theta]', E[r^2] = 2."""
        return 2.0 * self.second_u - np.outer(self.mean, self.mean)

    @property
    def mean_angle(self):
        return np.arctan2(self.mean_u[1], self.mean_u[0])
