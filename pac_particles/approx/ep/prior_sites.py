"""The prior's share of EP: exact Gaussian priors and spike-and-slab sites.

The EP core (:mod:`pac_particles.approx.ep.core`) works in whitened coordinates
``w`` and asks the prior for a diagonal Gaussian factor ``(prec, shift)`` on
``w``, its update from the current posterior (``targets``), and its share of
the EP energy. Two priors answer:

* :class:`_FixedGaussianPrior` -- ``N(0, I_r)`` on ``w``: every Gaussian
  prior once whitened (``theta = S0^1/2 w``, GP scores ``s = C w``); exact,
  nothing to update.
* :class:`_SpikeSlabSites` -- the spike-and-slab prior
  ``prod_k [p N(0, v1) + (1 - p) N(0, v0)]`` written with latent
  ``z_k ~ Bernoulli(p)`` [RACL14, section 3.4; GM93]: each coordinate gets a
  Bernoulli x Gaussian site ``exp(rho_k z_k - u_k theta_k^2 / 2 + w_k
  theta_k)`` [HHD13, section 4], the Bernoulli prior of ``z_k`` being kept
  exactly, so the ``z`` part of the approximation is
  ``Bernoulli(sigmoid(logit p + rho_k))``. ``v0 = 0`` (a Dirac spike) is
  allowed.

Example
-------
::

    from pac_particles.approx.ep.prior_sites import _SpikeSlabSites
    prior = _SpikeSlabSites(d=5, p=0.2, v0=0.0, v1=1.0)
    prior.inclusion_probs()          # p before any update

References
----------
[RACL14] Ridgway, J., Alquier, P., Chopin, N. and Liang, F. (2014).
PAC-Bayesian AUC classification and scoring. NIPS 27, section 3.4 and
appendix B.3.

[HHD13] Hernandez-Lobato, D., Hernandez-Lobato, J. M. and Dupont, P. (2013).
Generalized spike-and-slab priors for Bayesian group feature selection using
expectation propagation. JMLR 14, 1891-1945.

[GM93] George, E. I. and McCulloch, R. E. (1993). Variable selection via
Gibbs sampling. JASA 88, 881-889.
"""

import math

import numpy as np

_LOG_2PI = math.log(2.0 * math.pi)


class _FixedGaussianPrior:
    """Whitened Gaussian prior ``N(0, I_r)``: exact, no site to update."""

    need_coord_var = False

    def __init__(self, r):
        self.prec = np.ones(r)
        self.shift = np.zeros(r)
        # E_q ||w||^2 = r exactly at a fixed point (the scale identity)
        self.collapse_floor = 0.0

    def targets(self, state):
        return None

    def set(self, params):
        pass

    def params(self):
        return None

    def energy(self, state):
        # Phi(Lambda, eta) - Phi(I, 0): the (r/2) log 2 pi terms cancel
        return 0.0


class _SpikeSlabSites:
    """Bernoulli x Gaussian EP sites for ``p N(0, v1) + (1 - p) N(0, v0)``
    [HHD13, section 4] (see the module docstring)."""

    need_coord_var = True

    def __init__(self, d, p, v0, v1):
        self.p, self.v0, self.v1 = p, v0, v1
        # initial sites: the prior's moment-matched Gaussian, z at its prior
        self.prec = np.full(d, 1.0 / (p * v1 + (1 - p) * v0))
        self.shift = np.zeros(d)
        self.log_odds = np.zeros(d)
        self.n_improper = 0
        # the radius of theta keeps its prior law given the inclusions (the
        # risk is scale-invariant), so E ||theta||^2 is of the order of v1
        # whenever a coordinate is in: far below that, EP has collapsed
        self.collapse_floor = 1e-3 * float(np.min(v1))

    def params(self):
        return (self.prec.copy(), self.shift.copy(), self.log_odds.copy())

    def set(self, params):
        self.prec, self.shift, self.log_odds = (np.array(a) for a in params)

    def _cavity(self, state):
        tau = 1.0 / state.coord_var
        tau_c = tau - self.prec
        nu_c = state.w_mean * tau - self.shift
        proper = (tau_c > 0) & np.isfinite(tau_c)
        return tau, tau_c, nu_c, proper

    def _components(self, mu_c, var_c):
        """log N(mu_c; 0, v_z + var_c) for the spike (0) and the slab (1)."""
        s0 = self.v0 + var_c
        s1 = self.v1 + var_c
        log_n0 = -0.5 * (_LOG_2PI + np.log(s0) + mu_c ** 2 / s0)
        log_n1 = -0.5 * (_LOG_2PI + np.log(s1) + mu_c ** 2 / s1)
        return log_n0, log_n1, s0, s1

    def targets(self, state):
        tau, tau_c, nu_c, proper = self._cavity(state)
        self.n_improper = int(np.sum(~proper))
        prec, shift, log_odds = self.params()
        k = proper
        var_c = 1.0 / tau_c[k]
        mu_c = nu_c[k] * var_c
        log_n0, log_n1, s0, s1 = self._components(mu_c, var_c)
        log_p1 = np.log(self.p) + log_n1
        log_p0 = np.log1p(-self.p) + log_n0
        log_z = np.logaddexp(log_p0, log_p1)
        w1 = np.exp(log_p1 - log_z)
        # component posteriors N(m_z, c_z); the Dirac spike (v0 = 0) gives 0, 0
        m0, m1 = mu_c * self.v0 / s0, mu_c * self.v1 / s1
        c0, c1 = self.v0 * var_c / s0, self.v1 * var_c / s1
        mean = w1 * m1 + (1 - w1) * m0
        var = w1 * (c1 + m1 ** 2) + (1 - w1) * (c0 + m0 ** 2) - mean ** 2
        # a coordinate pinned at 0 by a Dirac spike: keep a finite precision
        var = np.maximum(var, 1e-10 * var_c)
        prec[k] = 1.0 / var - tau_c[k]
        shift[k] = mean / var - nu_c[k]
        log_odds[k] = log_n1 - log_n0
        return prec, shift, log_odds

    def inclusion_probs(self):
        logit = math.log(self.p) - math.log1p(-self.p) + self.log_odds
        return 1.0 / (1.0 + np.exp(-logit))

    def energy(self, state):
        tau, tau_c, nu_c, proper = self._cavity(state)
        if not np.all(proper):
            return np.nan
        var_c = 1.0 / tau_c
        mu_c = nu_c * var_c
        log_n0, log_n1, _, _ = self._components(mu_c, var_c)
        log_z = np.logaddexp(np.log1p(-self.p) + log_n0, np.log(self.p) + log_n1)
        mu = state.w_mean
        terms = (log_z + 0.5 * mu_c * nu_c - 0.5 * np.log(tau_c)
                 - 0.5 * mu ** 2 * tau + 0.5 * np.log(tau))
        # Phi(Lambda, eta) carries (d/2) log 2 pi that no prior term cancels
        return float(np.sum(terms) + 0.5 * tau.size * _LOG_2PI)

    def grad(self, state):
        """d log_z / d (p, v0, v1) with the cavities fixed (exact at a fixed
        point: the EP energy is stationary in the site parameters)."""
        tau, tau_c, nu_c, proper = self._cavity(state)
        var_c = 1.0 / tau_c
        mu_c = nu_c * var_c
        log_n0, log_n1, s0, s1 = self._components(mu_c, var_c)
        log_p0 = np.log1p(-self.p) + log_n0
        log_p1 = np.log(self.p) + log_n1
        log_z = np.logaddexp(log_p0, log_p1)
        w0, w1 = np.exp(log_p0 - log_z), np.exp(log_p1 - log_z)
        g_p = np.sum(w1 / self.p - w0 / (1 - self.p))
        # d log N(mu; 0, s) / ds = (mu^2 / s - 1) / (2 s)
        g_v0 = np.sum(w0 * (mu_c ** 2 / s0 - 1) / (2 * s0))
        g_v1 = np.sum(w1 * (mu_c ** 2 / s1 - 1) / (2 * s1))
        return {"p": float(g_p), "v0": float(g_v0), "v1": float(g_v1)}
