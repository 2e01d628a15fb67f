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
* [ARC16, Remark 16] the 0-1 excess risk is below the hinge excess risk:
  the pointwise excess risks (:func:`remark16_excess_risks`) and Cor. 15's
  rate read as a 0-1 excess-risk rate
  (:func:`remark16_zero_one_excess_bound`).
* [ARC16, Thm. 17] the same for the ``k``-th iterate of the VB solver, with
  the optimisation error ``L M / sqrt(1 + k)`` (:func:`theorem17_iterate_bound`).
* [ARC16, Fig. 1] the convexity in ``sigma`` of the hinge VB objective that
  Thm. 17's solver relies on (:func:`vb_objective_in_sigma`; the figure:
  ``diagnostics/vb_convexity.py``).
* [ARC16, Cor. 21] the ranking twin of Cor. 13: the oracle rate of the AUC
  Gibbs posterior and its VB approximation with ``lam' = sqrt(d(n-1))/2``,
  ``nu = 1``, on the ordered-pairs risk (:func:`corollary21_oracle_bound`).

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

Zhang, T. (2004). Statistical behavior and consistency of classification
methods based on convex risk minimization. Annals of Statistics 32(1),
56-85 (the hinge loss's excess-risk comparison behind Remark 16).
"""

import math
from dataclasses import dataclass

import numpy as np

from pac_particles.core.checks import (InputError, check_count, check_finite_array,
                      check_positive, check_probability)
from pac_particles.core.gaussian import gaussian_kl
from pac_particles.problem.gaussian_losses import GaussianPointRisk
from pac_particles.bounds.certificates import linear_bound, risk_certificate

__all__ = ["classification_certificate", "lemma10_hoeffding_function",
           "corollary11_bound", "corollary13_hyperparameters",
           "corollary13_oracle_bound", "hinge_hoeffding_function",
           "hinge_bound", "corollary15_oracle_bound", "theorem17_iterate_bound",
           "remark16_excess_risks", "remark16_zero_one_excess_bound",
           "corollary21_oracle_bound", "SigmaProfile", "vb_objective_in_sigma"]

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


def remark16_excess_risks(scores, eta):
    """[ARC16, Remark 16], pointwise: the excess 0-1 and hinge risks of a
    score ``f`` at an input whose label is +1 with probability ``eta``::

        zero_one = eta l(f) + (1 - eta) l(-f) - min(eta, 1 - eta),
        hinge    = eta (1 - f)_+ + (1 - eta) (1 + f)_+ - 2 min(eta, 1 - eta),

    with ``l(m) = 1{m < 0} + 1{m = 0}/2`` (a zero margin counts 1/2, as in
    :class:`~pac_particles.problem.risks.ClassificationRisk`); ``min(eta, 1 - eta)``
    and ``2 min(eta, 1 - eta)`` are the smallest conditional 0-1 and hinge
    risks over all real scores. Remark 16 says ``zero_one <= hinge``
    everywhere (Zhang 2004: the hinge loss is classification-calibrated with
    ``psi(t) = |t|``); it is tight as ``f -> 0`` from the wrong side.
    Averaged over ``X`` (and over ``theta ~ rho``) this gives
    ``R(theta) - R* <= R^H(theta) - R^H*`` with ``R*``, ``R^H*`` the
    minima over *all* measurable scores (the Bayes risks), not over linear
    ones.

    Parameters
    ----------
    scores : array of real scores ``f(x)``.
    eta : array (broadcast against ``scores``) of ``P(Y = 1 | x)`` in [0, 1].

    Returns
    -------
    (zero_one, hinge) : arrays of the broadcast shape.
    """
    f = np.asarray(scores, dtype=float)
    eta = np.asarray(eta, dtype=float)
    if not (np.all(np.isfinite(f)) and np.all(np.isfinite(eta))):
        raise InputError("scores and eta must be finite")
    if np.any((eta < 0) | (eta > 1)):
        raise InputError("eta = P(Y = 1 | x) must lie in [0, 1]")
    f, eta = np.broadcast_arrays(f, eta)
    bayes = np.minimum(eta, 1.0 - eta)
    wrong = (f < 0) + 0.5 * (f == 0)          # l(f); l(-f) = 1 - l(f)
    zero_one = eta * wrong + (1.0 - eta) * (1.0 - wrong) - bayes
    hinge = (eta * np.maximum(0.0, 1.0 - f) + (1.0 - eta) * np.maximum(0.0, 1.0 + f)
             - 2.0 * bayes)
    return zero_one, hinge


def remark16_zero_one_excess_bound(n, d, c_x, hinge_approximation_error=0.0,
                                   delta=0.05):
    """[ARC16, Cor. 15 with Remark 16]: the 0-1 excess risk of the hinge
    Gibbs posterior and of its VB approximation (``lam = sqrt(nd)/c_x``,
    ``nu = 1/sqrt(d)``, ``||X|| <= c_x``): with probability at least
    ``1 - delta``::

        E_rho[R] - R* <= E_rho[R^H] - R^H*
                      <= hinge_approximation_error + (Cor. 15's rate),

    ``hinge_approximation_error = inf_theta R^H(theta) - R^H*`` (0 when a
    linear score attains the smallest hinge risk of all scores), Cor. 15's
    rate being :func:`corollary15_oracle_bound` with ``best_hinge_risk =
    0``. The first inequality is Remark 16 averaged over ``rho``
    (:func:`remark16_excess_risks`). So minimising the convex hinge
    objective also controls the misclassification rate, at Cor. 15's
    ``sqrt(d/n) log(n/d)`` rate. An oracle inequality (the approximation
    error is unknown in practice); not clipped.
    """
    error = check_positive(hinge_approximation_error,
                           "hinge_approximation_error", allow_zero=True)
    return error + corollary15_oracle_bound(n, d, c_x, 0.0, delta)


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


def corollary21_oracle_bound(n, d, c, best_risk=0.0, delta=0.05,
                             as_printed=True):
    """[ARC16, Cor. 21]: the ranking oracle rate. With ``lam' =
    sqrt(d(n-1))/2`` on the risk over ordered pairs, the prior
    ``N(0, I)`` (``nu = 1``) and under assumption A2 (``P(<X_1 - X_2, t>
    <X_1 - X_2, t'> < 0) <= c ||t - t'||`` for unit ``t, t'``), the Gibbs
    posterior and its VB approximation (F1, F2 or F3) satisfy, with
    probability at least ``1 - delta``::

        E[R] <= best_risk + sqrt(2d/(n-1)) (1 + log(2d(n-1)) / 2)
                + c sqrt(2) / sqrt(n-1) + 1 / ((n-1)^(3/2) sqrt(2d))
                + 2 sqrt(2) log(2e/delta) / sqrt((n-1) d).

    ``R`` is the dissertation's ranking risk over ordered pairs,
    ``R = 2 pi (1 - pi) (1 - AUC)`` with ``pi = P(Y = 1)``
    (:mod:`pac_particles.bounds.corollary19`); ``best_risk`` its minimum
    over linear scores. This package's ``lam`` for the same posterior is
    :func:`pac_particles.approx.vb.corollary21_lam`. An oracle inequality
    (``best_risk`` and ``c`` unknown): a rate, not a certificate; not
    clipped.

    ``as_printed=False`` returns Theorem 9 evaluated at the proof's choice
    instead (as for Cor. 13: ``rho = N(theta_bar, sigma^2 I)`` with
    ``||theta_bar|| = 1``, Prop. 18's ``f = lam'^2/(n-1)``,
    ``E||theta - theta_bar|| <= sigma sqrt(d)``, ``sigma^2 = 1/(2d(n-1))``).
    The printed terms are that evaluation at ``lam' = sqrt(d(n-1)/2)``
    (its first term ``2 lam'/(n-1) = sqrt(2d/(n-1))`` needs it, not the
    stated ``sqrt(d(n-1))/2``) except the KL's ``(d/lam') log(1/sigma^2)``,
    which is ``sqrt(2d/(n-1)) log(2d(n-1))``, twice the printed
    ``log`` term::

        E[R] <= best_risk + sqrt(2d/(n-1)) (1 + log(2d(n-1)))
                + c sqrt(2) / sqrt(n-1) + 1 / ((n-1)^(3/2) sqrt(2d))
                + 2 sqrt(2) log(2e/delta) / sqrt((n-1) d).
    """
    n, d, delta = _oracle_common(n, d, delta)
    if n < 2:
        raise InputError("Corollary 21 needs n >= 2")
    c = check_positive(c, "c", allow_zero=True)
    a = n - 1.0
    log_factor = 0.5 if as_printed else 1.0
    return (float(best_risk)
            + math.sqrt(2 * d / a) * (1 + log_factor * math.log(2 * d * a))
            + c * math.sqrt(2) / math.sqrt(a)
            + 1 / (a ** 1.5 * math.sqrt(2 * d))
            + 2 * math.sqrt(2) * math.log(2 * math.e / delta) / math.sqrt(a * d))


@dataclass(frozen=True)
class SigmaProfile:
    """The VB objective along ``rho = N(m, sigma^2 I)`` at a fixed mean
    (:func:`vb_objective_in_sigma`).

    Attributes
    ----------
    sigma, objective, expected_risk, kl : arrays of the grid's length;
        ``objective = lam expected_risk + kl``.
    lam, prior_var : float
    loss : str
    """

    sigma: np.ndarray
    objective: np.ndarray
    expected_risk: np.ndarray
    kl: np.ndarray
    lam: float
    prior_var: float
    loss: str

    def is_convex(self, rtol=1e-9):
        """Whether the objective is convex on the grid: the slopes between
        consecutive grid points never decrease (up to ``rtol`` times the
        largest slope)."""
        slopes = np.diff(self.objective) / np.diff(self.sigma)
        if slopes.size < 2:
            return True
        slack = rtol * max(1.0, float(np.max(np.abs(slopes))))
        return bool(np.all(np.diff(slopes) >= -slack))

    @property
    def argmin(self):
        """The grid's ``sigma`` of smallest objective."""
        return float(self.sigma[int(np.argmin(self.objective))])


def vb_objective_in_sigma(vb, sigmas, mean=None):
    """[ARC16, Fig. 1]: the Gaussian VB objective of a classification risk
    as a function of the isotropic scale ``sigma`` (family F1), the mean
    held fixed::

        sigma -> lam E_{N(m, sigma^2 I)}[r_n] + KL(N(m, sigma^2 I) || N(0, nu^2 I)),
        KL = |m|^2/(2 nu^2) + (d/2)(sigma^2/nu^2 - 1 - log(sigma^2/nu^2)),

    the expected risk in closed form [ARC16, Sec. 4.1]
    (:class:`~pac_particles.problem.gaussian_losses.GaussianPointRisk`). For the
    hinge (and exponential) loss both terms are convex in ``sigma`` -- the
    figure's point, and what Thm. 17's solver relies on -- with the
    minimum at the F1 fit's ``sigma`` when ``m`` is its mean; the 0-1 and
    ramp objectives need not be.

    Parameters
    ----------
    vb : :class:`pac_particles.approx.classification_vb.ClassificationVB`
        Supplies the design (intercept, standardisation), loss, ``lam`` and
        ``nu^2 = prior_var``.
    sigmas : 1-D increasing array of positive scales.
    mean : (d,) array, optional. Default: the mean of ``vb``'s fit.

    Returns
    -------
    SigmaProfile
    """
    sigma = check_finite_array(sigmas, "sigmas", ndim=1)
    if sigma.size == 0 or np.any(sigma <= 0) or np.any(np.diff(sigma) <= 0):
        raise InputError("sigmas must be positive and increasing")
    if mean is None:
        if vb.result_ is None:
            raise InputError("pass mean= or fit the VB first")
        mean = vb.result_.mean
    m = np.asarray(mean, dtype=float)
    d = vb.data.X.shape[1]
    if m.shape != (d,) or not np.all(np.isfinite(m)):
        raise InputError(f"mean must be a finite ({d},) array")
    expected = GaussianPointRisk(vb.data.X, vb.risk)
    risk = np.array([expected(m, np.full(d, s * s), need_grad=False)[0]
                     for s in sigma])
    kl = np.array([gaussian_kl(m, np.full(d, s * s), vb.prior_var)
                   for s in sigma])
    return SigmaProfile(sigma=sigma, objective=vb.lam * risk + kl,
                        expected_risk=risk, kl=kl, lam=float(vb.lam),
                        prior_var=float(vb.prior_var), loss=vb.risk.loss)
