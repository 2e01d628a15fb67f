"""The evidence of the label-noise model [GH01, Sec. 4]: choosing the flip
rate ``q`` (equivalently ``lam``) from one tempering run.

Labels flipped with probability ``q`` have likelihood
``q^k (1 - q)^(n - k) = (1 - q)^n exp(-lam r_n)`` (``k = n r_n``
misclassified points, ``lam = n log((1 - q) / q)``,
:func:`lam_from_label_noise`), so the evidence of ``q``
is ``log p(y | q) = log Z(lam) + n log(1 - q)`` with ``Z`` the normaliser of
the 0-1 Gibbs posterior (:func:`label_noise_log_evidence`). ``log Z`` alone
decreases in ``lam`` and cannot choose ``q``.

One SMC run to ``lam_max`` visits every ``gamma`` in ``(0, lam_max]`` on its
way: adaptive tempering takes few, large steps on the piecewise-constant 0-1
risk, so :class:`PathLogLik` records the weighted particles of each step and
:func:`path_log_z` fills in ``log Z(gamma)`` between steps by importance
reweighting from the step below (``Z(g) / Z(g_t) = E_t[exp((g - g_t) / lam
* loglik)]``; between adaptive steps the ESS of that reweighting stays above
the run's ``ESSrmin``). :func:`label_noise_evidence_curve` gives the
evidence over a grid of ``q``. For kernel hyper-parameters at a fixed ``q``
the ``n log(1 - q)`` term is common to all kernels: compare ``log Z`` with
:func:`pac_particles.sklearn.selection.evidence_grid`.

Example
-------
::

    from pac_particles.smc.label_noise import (PathLogLik, lam_from_label_noise,
                                               label_noise_evidence_curve)
    from pac_particles.smc.models import ClassificationGibbsModel
    from pac_particles.smc.posterior import run_smc

    model = ClassificationGibbsModel(X, y, lam=lam_from_label_noise(0.01, len(y)))
    post = run_smc(model, collect=[PathLogLik()], seed=0)
    q = np.linspace(0.02, 0.3, 29)
    log_evidence = label_noise_evidence_curve(post, len(y), q)
    q[np.argmax(log_evidence)]                  # the flip rate the data favour

References
----------
[GH01] Graepel, T. and Herbrich, R. (2001). The kernel Gibbs sampler.
NIPS 13.
"""

import math

import numpy as np
from particles import collectors
from scipy.special import logsumexp

from pac_particles.core.checks import (InputError, check_count, check_positive,
                                       check_probability)

__all__ = ["lam_from_label_noise", "label_noise_from_lam", "PathLogLik",
           "path_log_z", "label_noise_log_evidence",
           "label_noise_evidence_curve"]


def lam_from_label_noise(q, n):
    """``lam = n log((1 - q) / q)``: the 0-1 Gibbs posterior that is the
    posterior of labels flipped with probability ``q`` in (0, 1/2)
    [GH01, Sec. 2]."""
    q = check_probability(q, "q (label-noise probability)")
    if q >= 0.5:
        raise InputError(f"q (label-noise probability) must be below 1/2 for "
                         f"a positive lam, got {q}")
    return float(check_count(n, "n") * math.log((1.0 - q) / q))


def label_noise_from_lam(lam, n):
    """The inverse of :func:`lam_from_label_noise`:
    ``q = 1 / (1 + exp(lam / n))``."""
    lam, n = check_positive(lam, "lam"), check_count(n, "n")
    # 1 / (1 + e^t) = e^-t / (1 + e^-t): no overflow for large lam / n
    t = lam / n
    return float(math.exp(-t) / (1.0 + math.exp(-t)))


class PathLogLik(collectors.Collector):
    """Collector: at every tempering step, the exponent, the normalised
    weights and the log-likelihoods of the particles (a weighted sample of
    the Gibbs posterior at that exponent), and ``log Z`` there."""

    def fetch(self, smc):
        return (float(smc.X.shared["exponents"][-1]), smc.W.copy(),
                np.array(smc.X.llik, dtype=float), float(smc.logLt))


def path_log_z(posterior, gammas):
    """``log Z(gamma)`` for ``gamma`` in ``(0, lam]`` from a run of
    :func:`~pac_particles.smc.posterior.run_smc` with ``collect=[PathLogLik()]``:
    exact ``log Z`` at the tempering steps, importance reweighting of the
    nearest step below in between (of the first step below it)."""
    records = getattr(posterior.summaries, "pathLogLik", None)
    if not records:
        raise InputError("path_log_z needs a run with "
                         "collect=[pac_particles.smc.label_noise.PathLogLik()]")
    lam = float(posterior.lam)
    steps = np.array([lam * e for e, _, _, _ in records])
    gammas = np.atleast_1d(np.asarray(gammas, dtype=float))
    if np.any(gammas <= 0) or np.any(gammas > lam * (1 + 1e-12)):
        raise InputError(f"gammas must lie in (0, lam = {lam:.6g}]: the run "
                         "has no particles beyond its target")
    out = np.empty(gammas.shape)
    for i, g in enumerate(gammas):
        t = max(int(np.searchsorted(steps, g, side="right")) - 1, 0)
        _, W, llik, log_z = records[t]
        # loglik = -lam r_n, so exp((g - g_t) r-terms) = exp((g - g_t) / lam llik)
        out[i] = log_z + logsumexp((g - steps[t]) / lam * llik, b=W)
    return out


def label_noise_log_evidence(log_z, q, n):
    """``log p(y | q) = log Z + n log(1 - q)``, ``log Z`` that of the 0-1
    Gibbs posterior at ``lam = n log((1 - q) / q)``."""
    q = check_probability(q, "q (label-noise probability)")
    return np.asarray(log_z, dtype=float) + check_count(n, "n") * np.log1p(-q)


def label_noise_evidence_curve(posterior, n, q):
    """``log p(y | q)`` for each flip rate in ``q`` (all at least
    ``label_noise_from_lam(posterior.lam, n)``) from one recorded run of a
    0-1 classification model (linear or GP) on ``n`` points."""
    q = np.atleast_1d(np.asarray(q, dtype=float))
    q_min = label_noise_from_lam(posterior.lam, n)
    if np.any(q < q_min * (1 - 1e-9)) or np.any(q >= 0.5):
        raise InputError(f"q must lie in [{q_min:.4g}, 0.5): the run reached "
                         f"lam = {posterior.lam:.6g}, i.e. q = {q_min:.4g}")
    lams = np.array([min(lam_from_label_noise(v, n), posterior.lam) for v in q])
    return path_log_z(posterior, lams) + n * np.log1p(-q)
