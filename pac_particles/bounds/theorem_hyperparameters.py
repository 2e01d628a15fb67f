"""The hyper-parameters of Theorems 2.3, 2.4 and 2.5 of [RACL14], on this
package's ``lam`` scale.

Each theorem is an oracle inequality for the Gibbs posterior
``pi_{xi,gamma}(theta) ∝ pi_xi(theta) exp(-gamma R_n^RACL(theta))`` of linear
scores at a choice of the prior hyper-parameters ``xi`` and of ``gamma``:

==============  ======================  ===========================================
theorem         assumption              choice
==============  ======================  ===========================================
Thm. 2.3        MA(1, C), Dens(c)       ``vartheta = (2/d)(1 + 1/(n^2 d))``,
                                        ``gamma = (n - 1)/(8C)``
Thm. 2.4        MA(inf, C), Dens(c)     ``vartheta = (2/d)(1 + 1/(n^2 d))``,
                                        ``gamma = C sqrt(d n log n)``
Thm. 2.5        MA(1, C), Dens(c)       ``p = 1 - exp(-1/d)``,
                                        ``v0 <= 1/(2 n d log d)``,
                                        ``gamma = (n - 1)/(8C)``
==============  ======================  ===========================================

(``vartheta`` is the variance of the independent Gaussian prior
``N(0, vartheta I)`` of Sec. 2.3; ``p, v0, v1`` those of the spike-and-slab
prior ``prod_k [p N(0, v1) + (1 - p) N(0, v0)]`` of Sec. 2.4, ``v1`` free.)

The scale of ``gamma``
----------------------
All three theorems sit in Section 2 of [RACL14], whose empirical risk
(Sec. 2.1) averages over the ``n (n - 1)`` *ordered* pairs::

    R_n^RACL(theta) = 1/(n(n-1)) sum_{i != j} 1[(s_i - s_j)(Y_i - Y_j) < 0].

Same-class pairs never count and a mis-ordered positive/negative pair counts
in both orders, so ``R_n^RACL = q_n R_n`` with ``R_n`` this package's
fraction of mis-ordered positive/negative pairs and
``q_n = 2 n_pos n_neg / (n (n - 1))``
(:func:`pac_particles.approx.vb.ordered_pairs_factor`). The same Gibbs posterior is
``exp(-lam R_n)`` with::

    lam = q_n gamma = gamma * 2 n_pos n_neg / (n (n - 1))      (gamma_to_lam)

(The proofs use the same ``R_n``: Lemmas 2.1-2.2 through Bernstein's
inequality for the U-statistic over ``n (n - 1)`` pairs, Prop. A.1, hence
the ``n - 1``.) The paper counts a tie as correctly ordered (strict ``<``),
this package counts it 1/2: the conversion is exact on tie-free scores (any
continuous inputs). Beware the EP section (Sec. 3.3), which reuses the
letter ``gamma`` for another scale: its site ``exp(-gamma' 1{...})`` with
``gamma' = gamma / (n_+ n_-)`` per pair makes *that* ``gamma`` equal to our
``lam``.

What the choices mean here
--------------------------
``C`` (the margin constant of MA(kappa, C), ``C >= 1``) is unknown; the
defaults are the paper's two values that need no assumption beyond the
theorem's own case: ``C = 1`` for MA(1, C) (it holds with ``C = 1`` for
noiseless classification, Sec. 2.2) and ``C = 4`` for MA(inf, C) (always
satisfied with ``C = 4``, Sec. 2.2). ``gamma_max`` reports the range of the
lemma behind each theorem: ``gamma <= (n - 1)/(8C)`` (Lemma 2.1) and
``gamma <= (n - 1)/8`` (Lemma 2.2); Theorem 2.4's printed ``gamma`` exceeds
the latter unless ``n`` is large (``n >= 64 C^2 d log n`` roughly), see
``within_lemma_range``.

Under an isotropic Gaussian prior ``vartheta`` changes neither the posterior
of the direction ``theta / ||theta||`` nor ``log Z`` (the AUC risk is scale
invariant, :mod:`pac_particles.problem.priors`): the theorem's value is harmless,
and it does enter the KL term of a certificate. ``d`` is the dimension of
``theta`` after dropping constant columns (an intercept cancels in
``x_i - x_j``). ``vartheta`` solves the proof's ``min_vartheta (d/2) log
vartheta + (1 + 1/(n^2 d)) / vartheta`` (App. A.3 with ``delta = 1/n``; the
appendix prints ``n^(1/2)`` for the theorem's ``n^2``, the theorem is the
solution). ``p`` makes the proof's term ``d log(1/(1 - p))`` equal 1
(App. A.5). ``v0`` is the theorem's printed upper bound; App. A.5 asks
``v0 <= delta^2/(2 d log d)`` with the ``delta = 1/n`` of App. A.3, i.e.
``1/(2 n^2 d log d)``: pass a smaller ``v0`` to
:class:`~pac_particles.problem.priors.SpikeSlabPrior` to honour the proof.

The practical choice (Sec. 3.1 of [RACL14]) is cross-validation of ``lam``
(:func:`pac_particles.sklearn.selection.cv_lambda`) and evidence maximisation of the
prior hyper-parameters; these helpers give the theory's values, e.g. as one
more candidate or as a sanity check of a tuned ``lam``.

Example
-------
>>> from pac_particles.bounds.theorem_hyperparameters import (theorem_2_3,
...     theorem_2_5, gamma_to_lam)
>>> hp = theorem_2_3(n_pos=3, n_neg=2, d=4)
>>> hp.gamma, hp.lam                      # (5 - 1)/8 and q_n = 12/20 times it
(0.5, 0.3)
>>> round(hp.prior_var, 6)                # (2/4)(1 + 1/(25 * 4))
0.505
>>> gamma_to_lam(0.5, 3, 2)
0.3
>>> ss = theorem_2_5(n_pos=100, n_neg=108, d=60)
>>> prior = ss.prior()                    # a SpikeSlabPrior with p, v0, v1

References
----------
[RACL14] Ridgway, J., Alquier, P., Chopin, N. and Liang, F. (2014).
PAC-Bayesian AUC classification and scoring. NIPS 27 (Sections 2.1-2.4,
Theorems 2.3-2.5, Appendix A.3-A.5; ``ridgway2014_pac_bayesian_auc.txt``).
"""

import math
from dataclasses import dataclass
from typing import Optional

from pac_particles.approx.vb import ordered_pairs_factor
from pac_particles.core.checks import InputError, check_count, check_positive
from pac_particles.problem.priors import SpikeSlabPrior, gaussian_prior

__all__ = ["TheoremHyperparameters", "gamma_to_lam", "lam_to_gamma",
           "theorem_2_3", "theorem_2_4", "theorem_2_5", "MA1_DEFAULT_C",
           "MA_INF_DEFAULT_C"]

#: MA(1, C) holds with C = 1 for noiseless classification ([RACL14, Sec. 2.2])
MA1_DEFAULT_C = 1.0
#: MA(inf, C) always holds with C = 4 ([RACL14, Sec. 2.2])
MA_INF_DEFAULT_C = 4.0


@dataclass(frozen=True)
class TheoremHyperparameters:
    """The hyper-parameters one theorem of [RACL14] recommends.

    Attributes
    ----------
    theorem : str
        ``"2.3"``, ``"2.4"`` or ``"2.5"``.
    gamma : float
        The theorem's ``gamma``, on the paper's ordered-pairs risk
        ``R_n^RACL = q_n R_n``.
    lam : float
        The same posterior on this package's scale: ``lam = q_n gamma``
        (pass it as ``lam=`` to the models, EP, VB, the estimator).
    q_n : float
        ``2 n_pos n_neg / (n (n - 1))``.
    gamma_max : float
        The largest ``gamma`` of the lemma the theorem rests on:
        ``(n - 1)/(8C)`` (Lemma 2.1: Thms. 2.3, 2.5), ``(n - 1)/8``
        (Lemma 2.2: Thm. 2.4).
    C : float
        The margin constant used.
    n, d : int
    prior_var : float or None
        ``vartheta`` of the Gaussian prior ``N(0, vartheta I)`` (Thms. 2.3,
        2.4).
    p, v0, v1 : float or None
        The spike-and-slab prior (Thm. 2.5): inclusion probability, spike
        and slab variances.
    """

    theorem: str
    gamma: float
    lam: float
    q_n: float
    gamma_max: float
    C: float
    n: int
    d: int
    prior_var: Optional[float] = None
    p: Optional[float] = None
    v0: Optional[float] = None
    v1: Optional[float] = None

    @property
    def within_lemma_range(self):
        """Whether ``gamma <= gamma_max`` (the lemma behind the theorem
        applies)."""
        return self.gamma <= self.gamma_max

    def prior(self):
        """The theorem's prior as a ``particles`` distribution:
        :func:`~pac_particles.problem.priors.gaussian_prior` with variance
        ``vartheta``, or :class:`~pac_particles.problem.priors.SpikeSlabPrior`."""
        if self.prior_var is not None:
            return gaussian_prior(self.d, self.prior_var)
        return SpikeSlabPrior(self.d, p=self.p, v0=self.v0, v1=self.v1)


def _counts(n_pos, n_neg):
    n_pos = check_count(n_pos, "n_pos")
    n_neg = check_count(n_neg, "n_neg")
    if n_pos + n_neg < 2:
        raise InputError("need n = n_pos + n_neg >= 2")
    return n_pos, n_neg, n_pos + n_neg


def _q_n(n_pos, n_neg):
    return ordered_pairs_factor(n_pos, n_neg)


def gamma_to_lam(gamma, n_pos, n_neg):
    """``lam = q_n gamma``, ``q_n = 2 n_pos n_neg / (n (n - 1))``: the
    ``lam`` of this package (on the fraction ``R_n`` of mis-ordered
    positive/negative pairs) that gives the Gibbs posterior of [RACL14,
    Sec. 2.1]'s ``gamma`` (on the ordered-pairs risk ``R_n^RACL = q_n
    R_n``)."""
    gamma = check_positive(gamma, "gamma")
    n_pos, n_neg, _ = _counts(n_pos, n_neg)
    return _q_n(n_pos, n_neg) * gamma


def lam_to_gamma(lam, n_pos, n_neg):
    """``gamma = lam / q_n``: the inverse of :func:`gamma_to_lam`."""
    lam = check_positive(lam, "lam")
    n_pos, n_neg, _ = _counts(n_pos, n_neg)
    return lam / _q_n(n_pos, n_neg)


def _margin_constant(C):
    C = check_positive(C, "C")
    if C < 1:
        raise InputError(f"the margin constant C of MA(kappa, C) is >= 1, "
                         f"got {C}")
    return C


def _gaussian_prior_var(n, d):
    """[RACL14, Thm. 2.3, 2.4]: ``vartheta = (2/d)(1 + 1/(n^2 d))``."""
    return 2.0 / d * (1.0 + 1.0 / (n * n * d))


def theorem_2_3(n_pos, n_neg, d, C=MA1_DEFAULT_C):
    """[RACL14, Thm. 2.3]: under MA(1, C) and Dens(c), the Gaussian prior
    ``N(0, vartheta I)`` and ``gamma`` with::

        vartheta = (2/d) (1 + 1/(n^2 d)),        gamma = (n - 1) / (8 C),

    give ``E[R] - R_bar <= 2 inf (R(theta_0) - R_bar) + alpha (d log n +
    log(4/eps)) / (n - 1)``; in this package's scale ``lam = q_n gamma``.

    Parameters
    ----------
    n_pos, n_neg : int
        Class counts (``n = n_pos + n_neg``).
    d : int
        Dimension of ``theta`` (constant columns dropped).
    C : float >= 1, default 1
        Margin constant (1: noiseless classification).

    Returns
    -------
    TheoremHyperparameters with ``prior_var = vartheta``.
    """
    n_pos, n_neg, n = _counts(n_pos, n_neg)
    d, C = check_count(d, "d"), _margin_constant(C)
    gamma = (n - 1) / (8.0 * C)
    q_n = _q_n(n_pos, n_neg)
    return TheoremHyperparameters(
        theorem="2.3", gamma=gamma, lam=q_n * gamma, q_n=q_n,
        gamma_max=(n - 1) / (8.0 * C), C=C, n=n, d=d,
        prior_var=_gaussian_prior_var(n, d))


def theorem_2_4(n_pos, n_neg, d, C=MA_INF_DEFAULT_C):
    """[RACL14, Thm. 2.4]: under MA(inf, C) and Dens(c), the Gaussian prior
    ``N(0, vartheta I)`` and ``gamma`` with::

        vartheta = (2/d) (1 + 1/(n^2 d)),        gamma = C sqrt(d n log n),

    give ``E[R] - R_bar <= inf (R(theta_0) - R_bar) + alpha (sqrt(d log n)
    + log(2/eps)) / sqrt(n)``; in this package's scale ``lam = q_n gamma``.

    The theorem rests on Lemma 2.2, which needs ``gamma <= (n - 1)/8``
    (``gamma_max``); the printed ``gamma`` is above it unless ``n`` is large
    (``within_lemma_range``). Needs ``n >= 2`` (``log n > 0``).

    Parameters
    ----------
    n_pos, n_neg, d : as :func:`theorem_2_3`.
    C : float >= 1, default 4
        Margin constant (MA(inf, 4) always holds).
    """
    n_pos, n_neg, n = _counts(n_pos, n_neg)
    d, C = check_count(d, "d"), _margin_constant(C)
    gamma = C * math.sqrt(d * n * math.log(n))
    q_n = _q_n(n_pos, n_neg)
    return TheoremHyperparameters(
        theorem="2.4", gamma=gamma, lam=q_n * gamma, q_n=q_n,
        gamma_max=(n - 1) / 8.0, C=C, n=n, d=d,
        prior_var=_gaussian_prior_var(n, d))


def theorem_2_5(n_pos, n_neg, d, C=MA1_DEFAULT_C, v1=1.0):
    """[RACL14, Thm. 2.5]: under MA(1, C) and Dens(c), the spike-and-slab
    prior ``prod_k [p N(0, v1) + (1 - p) N(0, v0)]`` and ``gamma`` with::

        p = 1 - exp(-1/d),    v0 <= 1 / (2 n d log d),    gamma = (n - 1)/(8 C),

    give ``E[R] - R_bar <= 2 inf {R(theta_0) - R_bar + alpha (||theta_0||_0
    log(nd) + log(4/eps)) / (2(n - 1))}``; in this package's scale
    ``lam = q_n gamma``. ``v0`` is the printed bound (capped below ``v1``,
    as :meth:`pac_particles.problem.priors.SpikeSlabPrior.theorem_2_5`, which
    computes ``p`` and ``v0`` here); the appendix's proof asks for the
    smaller ``1/(2 n^2 d log d)`` (module docstring). ``v1`` is free (the
    constant ``alpha`` depends on it). Needs ``d >= 2``.
    """
    n_pos, n_neg, n = _counts(n_pos, n_neg)
    d, C = check_count(d, "d"), _margin_constant(C)
    v1 = check_positive(v1, "v1")
    prior = SpikeSlabPrior.theorem_2_5(n, d, v1=v1)
    gamma = (n - 1) / (8.0 * C)
    q_n = _q_n(n_pos, n_neg)
    return TheoremHyperparameters(
        theorem="2.5", gamma=gamma, lam=q_n * gamma, q_n=q_n,
        gamma_max=(n - 1) / (8.0 * C), C=C, n=n, d=d,
        p=float(prior.p), v0=float(prior.v0), v1=float(prior.v1))
