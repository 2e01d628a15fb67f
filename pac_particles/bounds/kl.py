"""The binary kl divergence, its two inverses, and Maurer's constant.

``kl(q || p) = q log(q / p) + (1 - q) log((1 - q) / (1 - p))`` is the
Kullback-Leibler divergence between Bernoulli(q) and Bernoulli(p). A
PAC-Bayes-kl bound says ``kl(q || p) <= c`` with ``q`` an empirical risk and
``p`` the unknown population risk; the largest such ``p`` is the *upper
inverse* (the bound), the smallest the *lower inverse* (a lower bound on the
risk):

    kl_inverse_upper(q, c) = max {p in [q, 1]: kl(q || p) <= c},
    kl_inverse_lower(q, c) = min {p in [0, q]: kl(q || p) <= c}.

Both are computed by bisection on the monotone branch, vectorised over
arrays, with the closed forms at ``q = 0`` (``1 - exp(-c)``) and ``q = 1``
(``exp(-c)``) as exact references. Bisection on ``[q, 1]`` halves the
bracket 80 times (width ``2^-80``, below double precision) and never leaves
it, so it needs no derivative and cannot diverge where Newton's method does
(``p`` close to 0 or 1, ``kl`` steep).

:func:`maurer_constant` is ``xi(m) = E exp(m kl(Q_m || p))`` for ``Q_m`` the
mean of ``m`` i.i.d. Bernoulli(p) variables, the same for every ``p``:
``sqrt(m) <= xi(m) <= 2 sqrt(m)`` [Mau04], and by Maurer's Lemma 3 it bounds
the same exponential moment for any i.i.d. variables in [0, 1].

Example
-------
>>> from pac_particles.bounds import kl_inverse_upper, binary_kl
>>> p = kl_inverse_upper(0.1, 0.05)
>>> round(float(p), 4), round(float(binary_kl(0.1, p)), 12)
(0.2201, 0.05)

References
----------
[Mau04] Maurer, A. (2004). A note on the PAC Bayesian theorem.
arXiv:cs/0411099.

[See02] Seeger, M. (2002). PAC-Bayesian generalisation error bounds for
Gaussian process classification. JMLR 3, 233-269.
"""

import numpy as np
from scipy.special import gammaln, logsumexp, rel_entr, xlogy

from pac_particles.core.checks import InputError

__all__ = ["binary_kl", "kl_inverse_upper", "kl_inverse_lower",
           "maurer_constant"]

_BISECTIONS = 80
# above this m, xi(m) is replaced by its upper bound 2 sqrt(m): the exact sum
# has m + 1 terms and 2 sqrt(m) / xi(m) -> 1.6 costs only log(1.6) nats
_EXACT_XI_UP_TO = 10 ** 6


def _as_risk(q, name):
    q = np.asarray(q, dtype=float)
    if not np.all(np.isfinite(q)) or np.any((q < 0) | (q > 1)):
        raise InputError(f"{name} must lie in [0, 1]")
    return q


def _as_budget(c):
    c = np.asarray(c, dtype=float)
    if np.any(np.isnan(c)) or np.any(c < 0):
        raise InputError("the kl budget c must be >= 0 (inf allowed)")
    return c


def binary_kl(q, p):
    """``kl(q || p)`` between Bernoulli distributions, elementwise; ``inf``
    where ``p`` is 0 or 1 and ``q`` is not."""
    q, p = _as_risk(q, "q"), _as_risk(p, "p")
    return _kl(q, p)


def _kl(q, p):
    # binary_kl without the checks: the bisection's midpoints lie in [0, 1]
    return rel_entr(q, p) + rel_entr(1.0 - q, 1.0 - p)


def _bisect(q, c, lo, hi, upper):
    """Bisection for ``kl(q || p) = c`` on the branch ``[lo, hi]`` (kl
    increasing in p on the upper branch, decreasing on the lower one)."""
    for _ in range(_BISECTIONS):
        mid = 0.5 * (lo + hi)
        too_far = _kl(q, mid) > c
        if upper:
            hi, lo = np.where(too_far, mid, hi), np.where(too_far, lo, mid)
        else:
            lo, hi = np.where(too_far, mid, lo), np.where(too_far, hi, mid)
    # the outer end of the bracket: never inside the true inverse, so the
    # returned bound is conservative by at most 2^-80
    return hi if upper else lo


def kl_inverse_upper(q, c):
    """Largest ``p`` in ``[q, 1]`` with ``kl(q || p) <= c`` (vectorised).

    Parameters
    ----------
    q : float or array in [0, 1]
        Empirical (randomised) risk.
    c : float or array >= 0
        The kl budget, e.g. ``(KL + log(xi(m) / delta)) / m``; ``inf`` gives 1.

    Returns
    -------
    float or array in [q, 1]: an upper bound on the risk.
    """
    q, c = np.broadcast_arrays(_as_risk(q, "q"), _as_budget(c))
    with np.errstate(over="ignore"):
        p = _bisect(q, c, q.copy(), np.ones_like(q), upper=True)
        # exact closed forms where they exist
        p = np.where(q == 0.0, -np.expm1(-c), p)
    p = np.where(q == 1.0, 1.0, np.clip(p, q, 1.0))
    return float(p) if p.ndim == 0 else p


def kl_inverse_lower(q, c):
    """Smallest ``p`` in ``[0, q]`` with ``kl(q || p) <= c`` (vectorised).

    ``q = 1`` gives ``exp(-c)`` exactly, ``q = 0`` gives 0.
    """
    q, c = np.broadcast_arrays(_as_risk(q, "q"), _as_budget(c))
    with np.errstate(over="ignore"):
        p = _bisect(q, c, np.zeros_like(q), q.copy(), upper=False)
        p = np.where(q == 1.0, np.exp(-c), p)
    p = np.where(q == 0.0, 0.0, np.clip(p, 0.0, q))
    return float(p) if p.ndim == 0 else p


def maurer_constant(m):
    """``xi(m) = sum_k C(m, k) (k/m)^k (1 - k/m)^(m - k)`` [Mau04].

    ``E exp(m kl(mean || p)) <= xi(m)`` for ``m`` i.i.d. variables in [0, 1]
    of mean ``p``, with equality for Bernoulli ones; ``sqrt(m) <= xi(m) <=
    2 sqrt(m)`` (``m >= 8`` for the upper side). Summed in log space; above
    10^6 terms the upper bound ``2 sqrt(m)`` is returned.
    """
    if isinstance(m, bool) or not float(m).is_integer() or m < 1:
        raise InputError(f"m must be a positive integer, got {m!r}")
    m = int(m)
    if m > _EXACT_XI_UP_TO:
        return 2.0 * np.sqrt(m)
    k = np.arange(m + 1, dtype=float)
    log_terms = (gammaln(m + 1.0) - gammaln(k + 1.0) - gammaln(m - k + 1.0)
                 + xlogy(k, k / m) + xlogy(m - k, 1.0 - k / m))
    return float(np.exp(logsumexp(log_terms)))
