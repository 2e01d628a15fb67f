"""PAC-Bayes certificates for any risk in [0, 1] resting on ``m`` independent terms.

Every bound here takes the same three numbers of a distribution ``rho`` over
parameters -- its expected empirical risk ``q = E_rho[r_n]``, its
``KL(rho || prior)`` and the number ``m`` of independent terms the empirical
risk's concentration rests on -- plus a confidence ``delta``, and returns a
:class:`Certificate`: a bound on ``E_rho[R]``, the expected population risk
of the *randomised* predictor (draw ``theta ~ rho`` at each use), clipped to
[0, 1], flagged ``vacuous`` when it is no better than the trivial value.

The exponential-moment inequalities
-----------------------------------
All of them come from one argument: an inequality ``E_S exp(F(r_n(theta),
R(theta))) <= B`` for each fixed ``theta``, then Fubini under the prior,
Donsker-Varadhan (``E_rho[F] <= KL(rho || prior) + log E_prior[exp F]``, for
every ``rho`` at once) and Markov's inequality ([ARC16, Thm. 8] is this proof):

* **PAC-Bayes-kl** [See02; Mau04], :func:`kl_bound`: ``F = m kl(r_n || R)``,
  ``B = xi(m) <= 2 sqrt(m)``, then Jensen on the jointly convex ``kl``::

      kl(E_rho[r_n] || E_rho[R]) <= (KL(rho || prior) + log(xi(m) / delta)) / m,

  inverted numerically (:func:`~pac_particles.bounds.kl_inverse_upper`). No
  free parameter: it holds for every ``rho`` simultaneously, so ``rho`` may
  be chosen (optimised, cross-validated) with the data at no cost.
* **Catoni** [Cat07, Thm. 1.2.6], :func:`catoni_bound`: for a constant ``C > 0``
  fixed in advance, ``F = m Phi_C(R) - C m r_n`` with
  ``Phi_C(p) = -log(1 - p (1 - e^-C))``, ``B = 1``::

      E_rho[R] <= (1 - exp(-C E_rho[r_n] - (KL + log(1/delta)) / m)) / (1 - e^-C).

  For a fixed ``C`` the right-hand side is minimised by the Gibbs posterior at
  ``lam = C m``. ``C`` is chosen on a grid fixed in advance
  (:data:`CATONI_GRID`), paying ``log(grid size)``.
* **Linear (Hoeffding)** [ARC16, Thm. 8], :func:`linear_bound`: ``F = lam (R - r_n)
  - f(lam)`` for a Hoeffding function ``f``; for the mean of ``m`` i.i.d. terms
  in [0, 1], ``f = lam^2 / (8 m)`` (Hoeffding's lemma; [ARC16, Thm. 2]). The
  weakest of the three; kept for the dissertation's results.
* **Test set**, :func:`held_out_bound`: one fixed predictor (``KL = 0``, no
  prior) and a held-out sample: Chernoff's ``P(r <= q) <= exp(-m kl(q || R))``
  for ``q < R`` inverts to ``R <= kl_inverse_upper(r, log(1/delta) / m)``.

The union bound over candidates fixed in advance (:func:`tightest`) spends
``delta / K`` on each of ``K`` candidate bounds (Catoni's grid, data-free or
data-dependent priors, ...) and reports the smallest: it holds with
probability at least ``1 - delta``.

What ``m`` is depends on the risk: ``n`` for a point (classification) risk of
``n`` i.i.d. examples; ``min(n_pos, n_neg)`` for the AUC, a two-sample
U-statistic (:mod:`pac_particles.bounds.ranking` derives it). A risk object
gives it as ``risk.n_independent``.

Example
-------
>>> from pac_particles.bounds import kl_bound, catoni_bound, risk_certificate
>>> cert = kl_bound(0.1, kl=5.0, m=1000, delta=0.05)
>>> round(cert.bound, 4), cert.vacuous
(0.152, False)
>>> best = risk_certificate(0.1, kl=5.0, m=1000, delta=0.05)
>>> best.name in ("kl", "catoni"), best.delta, best.n_candidates
(True, 0.05, 2)

References
----------
[ARC16] Alquier, P., Ridgway, J. and Chopin, N. (2016). On the properties of
variational approximations of Gibbs posteriors. JMLR 17(239), 1-41 (numbered
as in ``alquier2016_vb_gibbs_posteriors_dissertation.txt``).

[Cat07] Catoni, O. (2007). PAC-Bayesian supervised classification: the
thermodynamics of statistical learning. IMS Lecture Notes 56.

[Mau04] Maurer, A. (2004). A note on the PAC Bayesian theorem. arXiv:cs/0411099.

[PRST21] Perez-Ortiz, M., Rivasplata, O., Shawe-Taylor, J. and Szepesvari, C.
(2021). Tighter risk certificates for neural networks. JMLR 22(227), 1-40.

[See02] Seeger, M. (2002). PAC-Bayesian generalisation error bounds for
Gaussian process classification. JMLR 3, 233-269.
"""

import dataclasses
import math
from dataclasses import dataclass
from typing import Optional

import numpy as np

from pac_particles.core.checks import InputError, check_count, check_positive, check_probability
from pac_particles.bounds.kl import kl_inverse_upper, maurer_constant

__all__ = ["Certificate", "CATONI_GRID", "kl_bound", "catoni_bound",
           "linear_bound", "held_out_bound", "tightest", "risk_certificate",
           "BOUNDS"]

# Catoni's C = lam / m on a grid fixed before seeing any data: factors of
# sqrt(2) from 1/8 to 32 (17 values, log 17 = 2.8 nats of delta)
CATONI_GRID = np.geomspace(2.0 ** -3, 2.0 ** 5, 17)


@dataclass(frozen=True)
class Certificate:
    """A bound, holding with probability at least ``1 - delta``, on the
    expected population risk ``E_rho[R]`` of the randomised predictor.

    Attributes
    ----------
    name : str
        Which inequality: ``'kl'``, ``'catoni'``, ``'linear'``,
        ``'held_out'``, or a name given by the caller.
    bound : float in [0, 1]
        The certified upper bound (clipped: a bound above 1 says nothing).
    delta : float
        The statement holds with probability at least ``1 - delta``; when the
        certificate was chosen among ``n_candidates`` by :func:`tightest`,
        each candidate used ``delta / n_candidates``.
    vacuous : bool
        ``bound >= trivial``: says nothing a trivial predictor does not.
    empirical_randomized_risk : float
        ``E_rho[r_n]`` on the sample the bound uses (the risk of the
        randomised predictor, not of a point estimate).
    kl : float or None
        ``KL(rho || prior)`` (None for a test-set bound).
    m : int
        Independent terms of the empirical risk.
    trivial : float
        The value at or above which the bound is vacuous.
    parameter : float or None
        The free parameter of the inequality where it has one (Catoni's ``C``,
        the linear bound's ``lam``).
    grid_size : int
        Values ``parameter`` was chosen from (their union bound is inside).
    prior : str
        ``'data-free'`` or a description of a data-dependent prior.
    n_candidates : int
        Number of certificates compared by :func:`tightest` (1 otherwise).
    alternatives : tuple of (name, bound)
        The candidates compared, each at ``delta / n_candidates``.
    raw_bound : float
        The bound before clipping to [0, 1].
    prior_fraction : float or None
        Share of each class in the part ``A`` of the sample the prior was
        fitted or tuned on (the bound then rests on the other part only, and
        ``m`` counts that part); None: no split, the prior saw no data.
    hyperparameters : tuple of (name, value)
        The prior's hyper-parameters (a value is a float, a tuple of
        floats or a kernel's repr), in the coordinates the posterior lives
        in.
    hyperparameters_tuned_on : str
        Which data chose them: ``'none'`` (fixed before seeing the data),
        ``'prior part'`` (part ``A`` only: free for a bound on the other
        part) or ``'whole sample'`` (among ``hyperparameter_grid_size``
        values fixed in advance; the union bound is paid inside).
    hyperparameter_grid_size : int
        Values the hyper-parameters were chosen from on the sample the bound
        uses: the kl bound ran at ``delta / hyperparameter_grid_size``
        (``log(grid size)`` in its complexity term).
    delta_shares : tuple of (part, delta)
        What each part of the statement spent of ``delta`` (each candidate
        of :func:`tightest`, a confidence bound on a sampled risk, ...);
        the shares add up to ``delta``.
    posterior : str
        The posterior certified when it is not the ``rho`` whose terms were
        given: ``'exact Gibbs posterior'`` for
        :func:`~pac_particles.bounds.gibbs_certificate` (SMC's particles
        only estimate it); empty otherwise.
    note : str
        How terms estimated by Monte Carlo entered the bound (empty when
        every term is exact).
    score_coefficients : tuple of float or None
        When the certificate is of one fixed linear score, its coefficients
        on the design of the fit (``x . w``, ``x`` as the fit's data
        transform it); None for a randomised score.
    """

    name: str
    bound: float
    delta: float
    vacuous: bool
    empirical_randomized_risk: float
    kl: Optional[float]
    m: int
    trivial: float = 1.0
    parameter: Optional[float] = None
    grid_size: int = 1
    prior: str = "data-free"
    n_candidates: int = 1
    alternatives: tuple = ()
    raw_bound: float = float("nan")
    prior_fraction: Optional[float] = None
    hyperparameters: tuple = ()
    hyperparameters_tuned_on: str = "none"
    hyperparameter_grid_size: int = 1
    delta_shares: tuple = ()
    posterior: str = ""
    note: str = ""
    score_coefficients: Optional[tuple] = None

    def __str__(self):
        """One plain sentence: the score certified, the level, the bound
        (and on what scale: AUC where ``trivial`` is 1/2 of a ranking,
        else the risk)."""
        level = f"{100 * (1 - self.delta):g}%"
        score = self.posterior or "the randomised predictor"
        if self.vacuous:
            return (f"At {level} confidence, no useful guarantee for {score}: "
                    f"its risk bound {self.bound:.3f} is no better than the "
                    f"trivial {self.trivial:g} (m = {self.m}).")
        return (f"With {level} confidence, {score} has population risk at "
                f"most {self.bound:.3f} (1 - AUC for a ranking, the error "
                f"for a classifier; m = {self.m}, {self.name} bound).")

    def as_dict(self):
        """Plain fields for JSON (alternatives, hyper-parameters and delta
        shares as name -> value mappings)."""
        fields = dataclasses.asdict(self)
        for name in ("alternatives", "hyperparameters", "delta_shares"):
            fields[name] = dict(getattr(self, name))
        return fields


def _certificate(name, raw, q, kl, m, delta, trivial, upper=1.0, **extra):
    if not np.isfinite(raw) and not raw == np.inf:
        raise InputError(f"the {name} bound is not a number ({raw}): check "
                         "the empirical risk and KL given")
    bound = float(max(raw, 0.0) if upper is None else min(max(raw, 0.0), upper))
    return Certificate(name=name, bound=bound, delta=delta,
                       vacuous=bool(bound >= trivial),
                       empirical_randomized_risk=q, kl=kl, m=m,
                       trivial=trivial, raw_bound=float(raw), **extra)


def _check_inputs(empirical_risk, kl, m, delta):
    q = check_probability(empirical_risk, "empirical_risk", closed=True)
    kl = None if kl is None else check_positive(kl, "kl", allow_zero=True)
    m = check_count(m, "m")
    delta = check_probability(delta, "delta")
    return q, kl, m, delta


def kl_bound(empirical_risk, kl, m, delta=0.05, trivial=1.0,
             constant="maurer"):
    """PAC-Bayes-kl bound [See02; Mau04]: the largest ``p`` with
    ``kl(q || p) <= (KL + log(xi / delta)) / m``.

    Parameters
    ----------
    empirical_risk : float in [0, 1]
        ``E_rho[r_n]``.
    kl : float >= 0
        ``KL(rho || prior)``.
    m : int
        Independent terms (``n`` for a point risk, ``min(n_pos, n_neg)`` for
        the AUC).
    delta : float in (0, 1)
    trivial : float
        Vacuous at or above this value (1 for a generic risk).
    constant : {'maurer', 'two_sqrt_m'}
        ``xi = maurer_constant(m)`` (exact, the default) or its upper bound
        ``2 sqrt(m)``, the form ``log(2 sqrt(m) / delta)`` usually quoted.

    Returns
    -------
    Certificate
    """
    q, kl, m, delta = _check_inputs(empirical_risk, kl, m, delta)
    if constant == "maurer":
        xi = maurer_constant(m)
    elif constant == "two_sqrt_m":
        xi = 2.0 * math.sqrt(m)
    else:
        raise InputError(f"constant must be 'maurer' or 'two_sqrt_m', got "
                         f"{constant!r}")
    budget = (kl + math.log(xi / delta)) / m
    return _certificate("kl", kl_inverse_upper(q, budget), q, kl, m, delta,
                        trivial)


def catoni_bound(empirical_risk, kl, m, delta=0.05, grid=CATONI_GRID,
                 trivial=1.0):
    """Catoni's bound [Cat07, Thm. 1.2.6], the best over ``grid`` of ``C``
    (fixed in advance; ``log(len(grid))`` is paid in ``delta``)::

        E_rho[R] <= (1 - exp(-C q - (KL + log(len(grid)/delta)) / m)) / (1 - e^-C).

    ``C = lam / m`` for the Gibbs posterior at ``lam``. Returns a
    :class:`Certificate` with ``parameter`` the chosen ``C``.
    """
    q, kl, m, delta = _check_inputs(empirical_risk, kl, m, delta)
    grid = np.atleast_1d(np.asarray(grid, dtype=float))
    if grid.ndim != 1 or grid.size == 0 or not np.all(np.isfinite(grid)) \
            or np.any(grid <= 0):
        raise InputError("grid must be a non-empty 1-D array of C > 0")
    complexity = (kl + math.log(grid.size / delta)) / m
    values = -np.expm1(-grid * q - complexity) / -np.expm1(-grid)
    best = int(np.argmin(values))
    return _certificate("catoni", float(values[best]), q, kl, m, delta, trivial,
                        parameter=float(grid[best]), grid_size=int(grid.size))


def linear_bound(empirical_risk, kl, lam, f, delta=0.05, grid_size=1,
                 m=1, trivial=1.0, upper=1.0, name="linear"):
    """[ARC16, Thm. 8] under the Hoeffding assumption ``f(lam)``::

        E_rho[R] <= E_rho[r_n] + (f + KL + log(grid_size / delta)) / lam.

    ``lam`` fixed in advance, or chosen among ``grid_size`` values fixed in
    advance. ``f = lam^2 / (8 m)`` for the mean of ``m`` i.i.d. terms in
    [0, 1] [ARC16, Thm. 2]. ``upper=None`` for unbounded losses (hinge): the
    bound is then only clipped below at 0.
    """
    if upper is None:
        q = check_positive(empirical_risk, "empirical_risk", allow_zero=True)
    else:
        q = check_probability(empirical_risk, "empirical_risk", closed=True)
    kl = check_positive(kl, "kl", allow_zero=True)
    lam = check_positive(lam, "lam")
    f = float(f)
    if not np.isfinite(f):
        raise InputError(f"the Hoeffding function f must be finite, got {f}")
    delta = check_probability(delta, "delta")
    grid_size = check_count(grid_size, "grid_size")
    raw = q + (f + kl + math.log(grid_size / delta)) / lam
    return _certificate(name, raw, q, kl, check_count(m, "m"), delta, trivial,
                        upper=upper, parameter=lam, grid_size=grid_size)


def held_out_bound(test_risk, m, delta=0.05, trivial=1.0):
    """Held-out bound for one predictor fixed before seeing the test sample:
    ``R <= kl_inverse_upper(r_test, log(1/delta) / m)`` (Chernoff; the
    binomial tail inversion of [PRST21] up to the kl relaxation).

    ``m`` independent test terms (``min(n_pos, n_neg)`` of the test sample
    for the AUC: Chernoff's exponential moment passes to the two-sample
    U-statistic by the Jensen step of :mod:`pac_particles.bounds.ranking`).
    """
    q, _, m, delta = _check_inputs(test_risk, None, m, delta)
    return _certificate("held_out", kl_inverse_upper(q, math.log(1 / delta) / m),
                        q, None, m, delta, trivial)


def tightest(candidates, delta=0.05):
    """The smallest of ``K`` certificates, each computed at ``delta / K``.

    Parameters
    ----------
    candidates : sequence of callables ``delta_each -> Certificate``
        Fixed before seeing the data (their number at least).
    delta : float in (0, 1)

    Returns
    -------
    Certificate
        The tightest, with ``delta`` the overall level, ``n_candidates = K``,
        ``alternatives`` every candidate's ``(name, bound)`` (the name
        followed by the kind of prior unless data-free, e.g. ``"kl,
        data-dependent"``) and ``delta_shares`` every candidate's
        ``(name, delta / K)``.
    """
    delta = check_probability(delta, "delta")
    candidates = list(candidates)
    if not candidates:
        raise InputError("tightest needs at least one candidate certificate")
    share = delta / len(candidates)
    certs = [make(share) for make in candidates]
    best = min(certs, key=lambda c: c.bound)
    return dataclasses.replace(best, delta=delta, n_candidates=len(certs),
                               alternatives=tuple((_label(c), c.bound)
                                                  for c in certs),
                               delta_shares=tuple(
                                   part for c in certs
                                   for part in _shares(c, share)))


def _shares(cert, share):
    """A candidate's entries in ``delta_shares``: ``(label, share)``, or,
    when it split its share in parts (a Monte Carlo confidence bound inside,
    a nested union bound), each part under the candidate's label."""
    if len(cert.delta_shares) <= 1:
        return ((_label(cert), share),)
    return tuple((f"{_label(cert)}: {part}", value)
                 for part, value in cert.delta_shares)


def _label(cert):
    """A candidate's name in ``alternatives``: the inequality, the kind
    of prior unless data-free, and the posterior certified when it is not
    the one given (two kl candidates must stay apart)."""
    kind = cert.prior.split(":")[0]
    label = cert.name if kind == "data-free" else f"{cert.name}, {kind}"
    return f"{label}, {cert.posterior}" if cert.posterior else label


BOUNDS = {"kl": kl_bound, "catoni": catoni_bound}


def risk_certificate(empirical_risk, kl, m, delta=0.05, bounds=("kl", "catoni"),
                     trivial=1.0):
    """The tightest of the PAC-Bayes-kl and Catoni bounds for any risk in
    [0, 1] with ``m`` independent terms (``delta`` split between them).

    The entry point for a new risk: ``m = risk.n_independent``
    (``n`` for classification, ``min(n_pos, n_neg)`` for the AUC).

    Parameters
    ----------
    empirical_risk, kl, m, delta, trivial : see :func:`kl_bound`.
    bounds : sequence of names in :data:`BOUNDS`.

    Returns
    -------
    Certificate
    """
    names = [bounds] if isinstance(bounds, str) else list(bounds)
    for name in names:
        if name not in BOUNDS:
            raise InputError(f"unknown bound {name!r}; choose from "
                             f"{sorted(BOUNDS)}")
    return tightest([lambda d, f=BOUNDS[name]: f(empirical_risk, kl, m, d,
                                                 trivial=trivial)
                     for name in names], delta)
