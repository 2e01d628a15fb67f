"""Exact Gibbs posteriors in low dimension, by quadrature, and plain-numpy
definitions of the risks: the independent truths that the tests and the
exactness diagnostics check the package against (never imported by the
package).

* :func:`pairwise_risk`: the O(n_pos n_neg) definition of the AUC risk;
  :func:`numpy_loss`: the classification losses by their definitions.
* :class:`AngularQuadrature`: the exact Gibbs posterior in d = 2 under an
  isotropic Gaussian prior, for any risk that is the mean 0-1 loss (ties 1/2)
  of linear margins ``a_k . theta``: the AUC (``a = x_i - x_j`` over the
  positive/negative pairs) or 0-1 classification without intercept
  (``a = y_i x_i``). The risk of ``theta = r (cos phi, sin phi)`` depends on
  ``phi`` only and is constant between the 2K angles where a margin vector
  is orthogonal to ``theta``; the radius is Rayleigh distributed and
  independent of ``phi``. So ``Z = (1/2pi) sum_arcs len * exp(-lam R_arc)``
  and every moment of theta is an exact sum over arcs. Its exact draws
  (:func:`sample_angular_posterior`), the spike-and-slab posterior of d = 2
  (:class:`SpikeSlabQuadrature`), a grid rule for the losses that are not
  scale-invariant (:func:`grid_log_z`).
* :func:`sphere_quadrature`: the same in d = 3, on the sphere.
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


def margin_vectors(X, y, margins):
    """The vectors ``a_k`` with margins ``a_k . theta``: ``"pairs"`` (AUC,
    ``x_i - x_j``, i positive, j negative) or ``"points"`` (classification,
    ``y_i x_i`` with ``y`` in {-1, +1})."""
    pos = np.asarray(y).astype(float) == np.max(y)
    if margins == "pairs":
        return (X[pos][:, None, :] - X[~pos][None, :, :]).reshape(-1, 2)
    if margins == "points":
        return np.where(pos, 1.0, -1.0)[:, None] * X
    raise ValueError(margins)


class AngularQuadrature:
    """Exact Gibbs posterior in d = 2, prior N(0, I), of the mean 0-1 loss
    of the margins ``a_k . theta`` (:func:`margin_vectors`): the AUC risk
    (``margins="pairs"``) or the 0-1 classification risk (``"points"``)."""

    def __init__(self, X, y, lam, margins="pairs"):
        diffs = margin_vectors(X, y, margins)
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


# ------------------------------------------- exact draws and spike-and-slab

def arc_weights(quad):
    """Probability of each arc of an :class:`AngularQuadrature`."""
    log_w = -quad.lam * quad.risk + np.log(np.diff(quad.edges))
    w = np.exp(log_w - log_w.max())
    return w / w.sum()


def sample_angular_posterior(quad, size, rng):
    """Exact draws (size, 2) from the Gibbs posterior of ``quad``: arc with
    probability ~ length x exp(-lam R), uniform angle in it, Rayleigh radius
    (prior N(0, I))."""
    arcs = rng.choice(quad.risk.size, size=size, p=arc_weights(quad))
    lo, hi = quad.edges[arcs], quad.edges[arcs + 1]
    phi = lo + (hi - lo) * rng.uniform(size=size)
    radius = np.sqrt(rng.chisquare(2, size=size))
    return radius[:, None] * np.column_stack([np.cos(phi), np.sin(phi)])


def angle_bin_probabilities(edges, arc_probs, bins):
    """Probability of each angle bin ``[bins[k], bins[k+1])`` in [0, 2pi)
    under a density uniform within each arc ``[edges[a], edges[a+1])``."""
    lo, hi = edges[:-1], edges[1:]
    density = np.where(hi > lo, arc_probs / np.where(hi > lo, hi - lo, 1.0), 0.0)
    out = np.empty(len(bins) - 1)
    for k in range(len(bins) - 1):
        overlap = np.clip(np.minimum(hi, bins[k + 1]) - np.maximum(lo, bins[k]),
                          0.0, None)
        out[k] = np.sum(density * overlap)
    return out


class SpikeSlabQuadrature:
    """Exact Gibbs posterior in d = 2 under the spike-and-slab prior.

    Given z, theta ~ N(0, diag(v_z)), i.e. theta = sqrt(v_z) * u with
    u ~ N(0, I), and the risk of theta on X is the risk of u on X sqrt(v_z):
    an :class:`AngularQuadrature` per configuration z in {0, 1}^2 gives
    Z(z); P(z | data) ~ prior(z) Z(z).
    """

    def __init__(self, X, y, lam, p, v0, v1):
        self.configs = np.array([[0, 0], [0, 1], [1, 0], [1, 1]], dtype=bool)
        self.scales = np.sqrt(np.where(self.configs, v1, v0))
        self.quads = [AngularQuadrature(X * s, y, lam) for s in self.scales]
        log_prior = np.sum(np.where(self.configs, np.log(p), np.log1p(-p)), axis=1)
        log_joint = log_prior + np.array([q.log_z for q in self.quads])
        shift = log_joint.max()
        self.log_z = shift + np.log(np.sum(np.exp(log_joint - shift)))
        self.config_probs = np.exp(log_joint - self.log_z)
        self.inclusion_probs = self.config_probs @ self.configs
        self.mean = sum(w * s * q.mean for w, s, q in
                        zip(self.config_probs, self.scales, self.quads))

    def sample(self, size, rng):
        """Exact joint draws: (theta (size, 2), z (size, 2) bool)."""
        which = rng.choice(4, size=size, p=self.config_probs)
        theta = np.empty((size, 2))
        for k in range(4):
            idx = np.flatnonzero(which == k)
            theta[idx] = self.scales[k] * sample_angular_posterior(
                self.quads[k], idx.size, rng)
        return theta, self.configs[which]


def grid_log_z(X, y, lam, loss, prior_var=1.0, half_width=6.0, size=401):
    """``log Z = log E_prior[exp(-lam r_n(theta))]`` in d = 2 by the
    trapezoid rule on a square grid (prior N(0, prior_var I), no
    intercept, plain-numpy losses: a name, or a function of the margins):
    the reference for losses that are not scale-invariant. Also returns the
    posterior mean."""
    sd = np.sqrt(prior_var)
    t = np.linspace(-half_width * sd, half_width * sd, size)
    T1, T2 = np.meshgrid(t, t, indexing="ij")
    theta = np.column_stack([T1.ravel(), T2.ravel()])
    u = np.where(np.asarray(y) == np.max(y), 1.0, -1.0) * (theta @ X.T)
    losses = {"zero_one": lambda u: (u < 0) + 0.5 * (u == 0),
              "hinge": lambda u: np.maximum(0.0, 1.0 - u),
              "exponential": lambda u: np.exp(-u),
              "ramp": lambda u: 0.5 * np.clip(1.0 - u, 0.0, 2.0)}
    loss = losses[loss] if isinstance(loss, str) else loss
    log_f = (-lam * loss(u).mean(axis=1)
             - 0.5 * np.sum(theta**2, axis=1) / prior_var
             - np.log(2 * np.pi * prior_var))
    shift = log_f.max()
    f = np.exp(log_f - shift).reshape(size, size)
    z = np.trapz(np.trapz(f, t, axis=1), t)
    mean = np.array([np.trapz(np.trapz(f * T, t, axis=1), t)
                     for T in (T1, T2)]) / z
    return np.log(z) + shift, mean


def numpy_loss(loss, u):
    """The four losses of a margin, by their definitions."""
    return {"zero_one": (u < 0) + 0.5 * (u == 0),
            "hinge": np.maximum(0.0, 1.0 - u),
            "exponential": np.exp(-u),
            "ramp": 0.5 * np.clip(1.0 - u, 0.0, 2.0)}[loss]


def gibbs_quadrature_2d(X, y, lam):
    """Exact log Z, mean and covariance of the Gibbs posterior in d = 2.

    Prior N(0, I_2). The risk depends on theta only through its angle phi and
    is constant between the 2P angles where some (x_i - x_j) . u(phi)
    changes sign, so Z = (1/2pi) sum_arcs length * exp(-lam R) exactly;
    theta = r u(phi) with r ~ Rayleigh independent of phi, hence
    E[theta] = sqrt(pi/2) E[u] and E[theta theta'] = E[r^2] E[u u'] = 2 E[u u'].
    Ties (x_i == x_j) count 1/2, written here pair by pair.
    """
    y = np.asarray(y).astype(bool)
    D = (X[y][:, None, :] - X[~y][None, :, :]).reshape(-1, 2)
    n_pairs = D.shape[0]
    tied = np.all(D == 0, axis=1)
    Dn = D[~tied]
    alpha = np.arctan2(Dn[:, 1], Dn[:, 0])
    breaks = np.sort(np.mod(np.concatenate([alpha + np.pi / 2,
                                            alpha - np.pi / 2]), 2 * np.pi))
    edges = np.concatenate([[0.0], breaks, [2 * np.pi]])
    a, b = edges[:-1], edges[1:]
    keep = b > a
    a, b = a[keep], b[keep]
    mid = 0.5 * (a + b)
    u = np.stack([np.cos(mid), np.sin(mid)], axis=1)
    wrong = (u @ Dn.T < 0).sum(axis=1)
    risk = (wrong + 0.5 * tied.sum()) / n_pairs
    w = np.exp(-lam * risk)
    length = b - a
    Z = np.sum(w * length) / (2 * np.pi)
    norm = 2 * np.pi * Z
    Ec = np.sum(w * (np.sin(b) - np.sin(a))) / norm
    Es = np.sum(w * (np.cos(a) - np.cos(b))) / norm
    s2 = (np.sin(2 * b) - np.sin(2 * a)) / 4
    Ecc = np.sum(w * (length / 2 + s2)) / norm
    Ess = np.sum(w * (length / 2 - s2)) / norm
    Ecs = np.sum(w * (np.sin(b) ** 2 - np.sin(a) ** 2) / 2) / norm
    mean = np.sqrt(np.pi / 2) * np.array([Ec, Es])
    second = 2 * np.array([[Ecc, Ecs], [Ecs, Ess]])
    return np.log(Z), mean, second - np.outer(mean, mean)


#: (seed, n, separation, lam / n) of the d = 2 quadrature comparisons
QUADRATURE_CASES = [(0, 40, 1.0, 0.5), (3, 80, 0.5, 1.0), (5, 40, 1.0, 1.0)]


def sphere_quadrature(X, y, lam, size=400, margins="pairs"):
    """``(log Z, E[theta])`` of the Gibbs posterior in d = 3 under the prior
    N(0, I): the direction ``u`` is uniform on the sphere and the radius
    (chi_3) independent of it, so ``Z = E_u[exp(-lam R(u))]`` and
    ``E[theta] = E[r] E_u[u exp(-lam R)] / Z`` with ``E[r] = 2 sqrt(2 /
    pi)``. The midpoint rule on ``size`` x ``2 size`` cells of equal area
    (uniform in ``cos(polar angle)`` and in the azimuth, Archimedes); the
    risk of each cell's centre by the pairwise definition. Its error comes
    from the cells that a risk boundary (a great circle) crosses: O(1 /
    size) relative, checked by halving ``size``."""
    a = margin_vectors(X, y, margins) if margins == "points" else None
    c = -1.0 + (np.arange(size) + 0.5) * 2.0 / size
    phi = (np.arange(2 * size) + 0.5) * np.pi / size
    C, PHI = np.meshgrid(c, phi, indexing="ij")
    s = np.sqrt(1.0 - C ** 2)
    u = np.column_stack([(s * np.cos(PHI)).ravel(), (s * np.sin(PHI)).ravel(),
                         C.ravel()])
    if a is None:
        risk = np.concatenate([pairwise_risk(block @ X.T, y)
                               for block in np.array_split(u, 64)])
    else:
        m = u @ a.T
        risk = np.mean((m < 0) + 0.5 * (m == 0), axis=1)
    log_w = -lam * risk
    shift = log_w.max()
    w = np.exp(log_w - shift)
    mean_u = (w @ u) / w.sum()
    return (float(np.log(w.mean()) + shift),
            2.0 * np.sqrt(2.0 / np.pi) * mean_u)
