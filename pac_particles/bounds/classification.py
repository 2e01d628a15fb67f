"""Certificates for classification risks: the dissertation's results and the
kl/Catoni certificate of a point risk.

Setting [ARC16, Sec. 3.1]: ``(X_i, Y_i)``, ``i = 1..n``, i.i.d., ``Y`` in
{-1, 1}, linear classifiers ``f_theta(x) = sign(<theta, x>)``, Gaussian
prior ``N(0, nu^2 I)``, Gaussian posteriors ``N(m, Sigma)`` (the families
F1, F2, F3). A point risk ``r_n = (1/n) sum_i loss(Y_i <theta, X_i>)`` is a
mean of ``n`` i.i.d. terms, so :func:`classification_certificate` is
:func:`~pac_particles.bounds.risk_certificate` with ``m = n`` (PAC-Bayes-kl
and Catoni, the tighter paid in ``delta``): the certificate to report.

The dissertation's results, as printed there (numbers and constants from
``alquier2016_vb_gibbs_posteriors_dissertation.txt``):

* [ARC16, Lemma 10] 0-1 loss: Hoeffding assumption with ``f = lam^2 / (2n)``
  (:func:`lemma10_hoeffding_function`; Hoeffding's lemma gives the smaller
  ``lam^2 / (8n)`` of [ARC16, Thm. 2]).
* [ARC16, Cor. 11] empirical bound for ``N(m, Sigma)``
  (:func:`corollary11_bound`): Theorem 8 with Lemma 10's ``f``.
* [ARC16, Cor. 13] oracle rate with ``lam = sqrt(nd)``, ``nu = 1/sqrt(d)``
  under assumption A1 (:func:`corollary13_oracle_bound`; involves the
  unknown best risk and margin constant ``c``: a rate, not a certificate).
* [ARC16, Lemma 14] hinge loss with ``||X|| <= c_x``: ``f = lam^2/(4n) -
  (1/2) log(1 - nu^2 lam^2 c_x^2 / (2n))`` (:func:`hinge_hoeffding_function`),
  and its empirical bound (:func:`hinge_bound`).
* [ARC16, Cor. 15] hinge oracle rate with ``lam = sqrt(nd)/c_x``,
  ``nu = 1/sqrt(d)`` (:func:`corollary15_oracle_bound`).
* [ARC16, Thm. 17] the same for the ``k``-th iterate of the VB solver, with
  the optimisation error ``L M / sqrt(1 + k)`` (:func:`theorem17_iterate_bound`).

Example
-------
>>> from pac_particles.bounds import classification_certificate, corollary11_bound
>>> import numpy as np
>>> cert = classification_certificate(0.1, kl=4.0, n=500, delta=0.05)
>>> round(cert.bound, 3) < 0.2, cert.vacuous
(True, False)
>>> lin = corollary11_bound(0.1, np.zeros(3), np.eye(3) / 3, lam=np.sqrt(1500),
...                         n=500, prior_var=1 / 3)
>>> lin.bound > cert.bound
True

References
----------
[ARC16] Alquier, P., Ridgway, J. and Chopin, N. (2016). On the properties of
variational approximations of Gibbs posteriors. JMLR 17(239), 1-41 (numbered
as in ``alquier2016_vb_gibbs_posteriors_dissertation.txt``).
"""

import math

import numpy as np

from ..checks import InputError, check_count, check_positive, check_probability
from ..gaussian import gaussian_kl
from .certificates import linear_bound, risk_certificate

__all__ = ["classification_certificate", "lemma10_hoeffding_function",
           "corollary11_bound", "corollary13_hyperparameters",
           "corollary13_oracle_bound", "hinge_hoeffding_function",
           "hinge_bound", "corollary15_oracle_bound", "theorem17_iterate_bound"]

# a fair coin errs half the time: a 0-1 bound of 1/2 or more certifies nothing
CLASSIFICATION_TRIVIAL = 0.5


def classification_certificate(empirical_risk, kl, n, delta=0.05,
                               bounds=("kl", "catoni"),
                               trivial=CLASSIFICATION_TRIVIAL):
    """The tightest PAC-Bayes-kl / Catoni certificate of a point risk in
    [0, 1] (0-1, ramp, ...) over ``n`` i.i.d. examples: ``m = n``.

    Assumptions: the examples are i.i.d.; the loss is in [0, 1]; the prior is
    fixed before seeing them; ``rho`` is arbitrary (it may depend on the
    data). ``E_rho[r_n]`` is the empirical risk of the *randomised*
    classifier. ``trivial`` (default 1/2, a fair coin) sets ``vacuous``.
    """
    return risk_certificate(empirical_risk, kl, n, delta, bounds=bounds,
                            trivial=trivial)


def lemma10_hoeffding_function(lam, n):
    """[ARC16, Lemma 10]: ``f(lam, n) = lam^2 / (2n)`` for the 0-1 loss of
    i.i.d. examples (any ``lam > 0``)."""
    lam = check_positive(lam, "lam")
    return lam * lam / (2.0 * check_count(n, "n"))


def corollary11_bound(empirical_risk, mean, cov, lam, n, prior_var=1.0,
                      delta=0.05):
    """[ARC16, Cor. 11]: with probability at least ``1 - delta``, for every
    ``N(m, Sigma)``::

        E[R] <= E[r_n] + lam/(2n) + (KL(N(m, Sigma) || N(0, nu^2 I)) + log(1/delta)) / lam.

    Assumptions: 0-1 loss of linear classifiers, i.i.d. examples, prior
    ``N(0, prior_var I)`` (``prior_var = nu^2``), ``lam`` fixed before seeing
    the data. ``empirical_risk`` is ``E_N(m, Sigma)[r_n]``, e.g.
    ``(1/n) sum_i Phi(-Y_i X_i m / sqrt(X_i Sigma X_i'))``.

    Returns
    -------
    Certificate named ``'corollary11'`` (clipped to [0, 1]).
    """
    kl = max(gaussian_kl(mean, cov, prior_var), 0.0)
    return linear_bound(empirical_risk, kl, lam, lemma10_hoeffding_function(lam, n),
                        delta=delta, m=n, trivial=CLASSIFICATION_TRIVIAL,
                        name="corollary11")


def corollary13_hyperparameters(n, d):
    """``(lam, nu) = (sqrt(nd), 1/sqrt(d))`` of [ARC16, Cor. 13]."""
    n, d = check_count(n, "n"), check_count(d, "d")
    return math.sqrt(n * d), 1.0 / math.sqrt(d)


def _oracle_common(n, d, delta):
    n, d = check_count(n, "n"), check_count(d, "d")
    return n, d, check_probability(delta, "delta")


def corollary13_oracle_bound(n, d, c, best_risk=0.0, delta=0.05):
    """[ARC16, Cor. 13]: with ``lam = sqrt(nd)``, ``nu = 1/sqrt(d)`` and
    under assumption A1 (``P(<X, t><X, t'> < 0) <= c ||t - t'||`` for unit
    ``t, t'``), both the Gibbs posterior and its VB approximation satisfy,
    with probability at least ``1 - delta``::

        E[R] <= best_risk + sqrt(d/n) log(4ne) + c/sqrt(n)
                + sqrt(d/n)/(4n) + 2 log(2/delta) / sqrt(nd).

    An oracle inequality: ``best_risk`` (the smallest 0-1 risk of a linear
    classifier) and ``c`` are unknown in practice. Not clipped: a rate.
    """
    n, d, delta = _oracle_common(n, d, delta)
    c = check_positive(c, "c", allow_zero=True)
    root = math.sqrt(d / n)
    return (float(best_risk) + root * math.log(4 * n * math.e) + c / math.sqrt(n)
            + root / (4 * n) + 2 * math.log(2 / delta) / math.sqrt(n * d))


def hinge_hoeffding_function(lam, n, nu, c_x):
    """[ARC16, Lemma 14]: ``f(lam, n) = lam^2/(4n) - (1/2) log(1 - nu^2 lam^2
    c_x^2 / (2n))`` for the hinge loss of linear classifiers with ``||X|| <=
    c_x`` almost surely under the prior ``N(0, nu^2 I)``.

    The dissertation states the range as ``lam < (1/c_x) sqrt(n^2/nu)``; the
    formula itself needs ``nu^2 lam^2 c_x^2 < 2n``, which is enforced.
    """
    lam = check_positive(lam, "lam")
    n = check_count(n, "n")
    nu = check_positive(nu, "nu")
    c_x = check_positive(c_x, "c_x")
    inside = 1.0 - nu * nu * lam * lam * c_x * c_x / (2.0 * n)
    if inside <= 0:
        raise InputError(f"Lemma 14 needs nu^2 lam^2 c_x^2 < 2n; got "
                         f"lam = {lam}, nu = {nu}, c_x = {c_x}, n = {n}")
    return lam * lam / (4.0 * n) - 0.5 * math.log(inside)


def hinge_bound(empirical_hinge_risk, kl, lam, n, nu, c_x, delta=0.05,
                grid_size=1):
    """Theorem 8 with Lemma 14's ``f``: a bound on the expected hinge risk
    ``E_rho[R^H]`` (the hinge loss is unbounded: clipped below at 0 only).
    Assumptions of :func:`hinge_hoeffding_function`; ``lam`` fixed in advance
    (or among ``grid_size`` values)."""
    f = hinge_hoeffding_function(lam, n, nu, c_x)
    return linear_bound(empirical_hinge_risk, kl, lam, f, delta=delta,
                        grid_size=grid_size, m=n, trivial=np.inf, upper=None,
                        name="lemma14")


def _hinge_rate(n, d, c_x, delta, first_term):
    return (first_term + c_x * (d / n) * math.sqrt(d / n)
            + ((2 * c_x * c_x + 1) / (2 * c_x) + 2 * c_x * math.log(2 / delta))
            / math.sqrt(n * d))


def corollary15_oracle_bound(n, d, c_x, best_hinge_risk=0.0, delta=0.05):
    """[ARC16, Cor. 15]: with ``lam = sqrt(nd)/c_x``, ``nu = 1/sqrt(d)``,
    ``||X|| <= c_x``, the Gibbs posterior and its VB approximation satisfy,
    with probability at least ``1 - delta``::

        E[R^H] <= best_hinge_risk + (c_x/2) sqrt(d/n) log(n/d)
                  + c_x (d/n) sqrt(d/n)
                  + ((2 c_x^2 + 1)/(2 c_x) + 2 c_x log(2/delta)) / sqrt(nd).

    An oracle inequality (``best_hinge_risk`` unknown). Remark 16: the 0-1
    excess risk is below the hinge excess risk.
    """
    n, d, delta = _oracle_common(n, d, delta)
    c_x = check_positive(c_x, "c_x")
    return float(best_hinge_risk) + _hinge_rate(
        n, d, c_x, delta, c_x / 2 * math.sqrt(d / n) * math.log(n / d))


def theorem17_iterate_bound(k, n, d, c_x, lipschitz, radius,
                            best_hinge_risk=0.0, delta=0.05):
    """[ARC16, Thm. 17]: the VB approximation after ``k`` iterations of the
    (convex, hinge) solver, with ``lam = sqrt(nd)``, ``nu = 1/sqrt(d)``, the
    assumptions of Cor. 15, ``radius = M`` bounding the distance of the
    optimum ``(m, Sigma)`` from the solver's start and ``lipschitz = L`` the
    objective's Lipschitz constant; with probability at least ``1 - delta``::

        E[R^H] <= best_hinge_risk + L M / sqrt(1 + k) + (c_x/2) (d/n) log(n/d)
                  + c_x (d/n) sqrt(d/n)
                  + ((2 c_x^2 + 1)/(2 c_x) + 2 c_x log(2/delta)) / sqrt(nd).

    As printed in the dissertation: its third term has ``d/n`` where
    Cor. 15 has ``sqrt(d/n)``.
    """
    k = check_count(k, "k", minimum=0)
    n, d, delta = _oracle_common(n, d, delta)
    c_x = check_positive(c_x, "c_x")
    optimisation = (check_positive(lipschitz, "lipschitz", allow_zero=True)
                    * check_positive(radius, "radius", allow_zero=True)
                    / math.sqrt(1 + k))
    return float(best_hinge_risk) + optimisation + _hinge_rate(
        n, d, c_x, delta, c_x / 2 * (d / n) * math.log(n / d))
