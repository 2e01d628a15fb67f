"""The losses of classification, declared once: one table that every backend reads.

A point risk ``r_n(s) = sum_i w_i l(y_i s_i)`` (:class:`~pac_particles.problem.risks.ClassificationRisk`)
is known by its margin loss ``l``. Each loss is one :class:`MarginLoss` entry
of :data:`LOSSES`, with everything a backend needs:

* ``point``: ``l(u)`` of one float, plain Python that numba compiles (the
  risk kernels of :mod:`~pac_particles.problem.point_kernels`);
* ``jax_point``: ``l`` on an array, given the array module (``jax.numpy``:
  the accelerator backend, :mod:`~pac_particles.problem.accelerated_risk`);
* ``gaussian_point``: ``E[l(u)]`` for ``u ~ N(mu, var)`` and its
  derivatives in ``mu`` and ``var``, of one float pair, plain Python that
  numba compiles like ``point`` (``Phi``/``phi`` from :func:`normal_cdf_pdf`):
  the one implementation of the closed form, which the fused point-risk
  kernel inlines and which evaluates arrays too (Gaussian VB,
  :mod:`~pac_particles.problem.gaussian_losses`);
* ``gaussian``: the same on arrays, for a loss whose closed form is written
  for numpy only (used when ``gaussian_point`` is None); both None: no
  closed form;
* ``bounded`` (``l`` in [0, 1]: the PAC-Bayes certificates' condition),
  ``convex``, ``symmetric`` (``l(u) + l(-u) = 1``: the PU risk of
  [dPNS14] is then unbiased) and ``scale_invariant`` (``l(c u) = l(u)`` for
  ``c > 0``: the risk of ``theta`` is that of its direction).

A backend looks its loss up with :func:`get_loss`, which raises
:class:`~pac_particles.core.checks.InputError` on an unknown name; none falls
through to a default. A new loss is one entry and one :func:`register_loss`
call. The built-in ones, with ``Phi``/``phi`` the standard normal cdf and
density, ``s = sqrt(var)`` and ``h(a, s) = E[max(0, a + s Z)] = a Phi(a / s)
+ s phi(a / s)``:

* ``zero_one``: ``1{u < 0} + 0.5 1{u = 0}``; ``Phi(-mu / s)`` [ARC16, Sec. 3.3];
* ``hinge``: ``max(0, 1 - u)``; ``h(1 - mu, s)`` [ARC16, Sec. 4.1];
* ``exponential``: ``exp(-u)``; ``exp(-mu + var / 2)`` [ARC16, Sec. 4.2];
* ``ramp``: ``max(0, min(2, 1 - u)) / 2`` [dPNS14];
  ``(h(1 - mu, s) - h(-1 - mu, s)) / 2``, since ``max(0, min(2, 1 - u)) =
  max(0, 1 - u) - max(0, -1 - u)``.

The module imports neither numpy nor numba (the closed forms import them
when called), so the command line's ``--help`` reads the loss names here.

Example
-------
::

    import math
    from pac_particles.problem.losses import MarginLoss, register_loss

    def logistic(u):                       # numba compiles it
        return math.log1p(math.exp(-u))

    register_loss(MarginLoss(
        "logistic", point=logistic,
        jax_point=lambda jnp, u: jnp.log1p(jnp.exp(-u)),
        bounded=False, convex=True, symmetric=False))
    # ClassificationGibbsModel(X, y, lam, loss="logistic") now fits it

References
----------
[ARC16] Alquier, P., Ridgway, J. and Chopin, N. (2016). On the properties of
variational approximations of Gibbs posteriors. JMLR 17(239), 1-41.

[dPNS14] du Plessis, M. C., Niu, G. and Sugiyama, M. (2014). Analysis of
learning from positive and unlabeled data. NIPS 27.
"""

import math
from dataclasses import dataclass
from typing import Any, Callable, Dict, Optional, Tuple

__all__ = ["MarginLoss", "LOSSES", "register_loss", "get_loss",
           "normal_cdf_pdf"]


@dataclass(frozen=True)
class MarginLoss:
    """One loss of a margin ``u = y s`` and what each backend needs of it
    (see the module docstring).

    Parameters
    ----------
    name : the name a user passes (``loss="hinge"``).
    point : ``l(u)`` of one float, written for numba (``math``, ``max``,
        ``min``; no Python objects).
    jax_point : ``(xp, u) -> l(u)`` elementwise on an array, ``xp`` the
        array module (``jax.numpy``); None: no accelerator backend.
    gaussian : ``(mu, var) -> (value, d_value/d_mu, d_value/d_var)`` of
        ``E[l(u)]``, ``u ~ N(mu, var)``, on arrays; None: none on arrays.
    gaussian_point : the same of one float pair ``(mu, var)``, written for
        numba like ``point`` (``Phi``/``phi`` by :func:`normal_cdf_pdf`);
        preferred to ``gaussian`` where both are given.
    bounded : ``l`` takes values in [0, 1].
    convex : ``l`` is convex.
    symmetric : ``l(u) + l(-u) = 1``.
    scale_invariant : ``l(c u) = l(u)`` for every ``c > 0``.
    """

    name: str
    point: Callable[[float], float]
    jax_point: Optional[Callable[[Any, Any], Any]] = None
    gaussian: Optional[Callable[[Any, Any], Tuple[Any, Any, Any]]] = None
    bounded: bool = False
    convex: bool = False
    symmetric: bool = False
    scale_invariant: bool = False
    gaussian_point: Optional[Callable[[float, float],
                                      Tuple[float, float, float]]] = None

    @property
    def has_gaussian(self) -> bool:
        """Whether ``E[l(u)]`` of a Gaussian margin has a closed form."""
        return self.gaussian_point is not None or self.gaussian is not None


#: the table: loss name -> :class:`MarginLoss`, in registration order
LOSSES: Dict[str, MarginLoss] = {}


def register_loss(loss: MarginLoss) -> MarginLoss:
    """Add ``loss`` to :data:`LOSSES` under its name (a name registered
    before is replaced) and return it."""
    if not isinstance(loss, MarginLoss):
        raise TypeError(f"register_loss takes a MarginLoss, got {loss!r}")
    LOSSES[loss.name] = loss
    return loss


def get_loss(name: str) -> MarginLoss:
    """The registered loss ``name``; InputError naming the registered ones
    otherwise."""
    loss = LOSSES.get(name) if isinstance(name, str) else None
    if loss is None:
        # imported here: core.checks imports numpy, which --help avoids
        from pac_particles.core.checks import InputError
        raise InputError(f"loss must be one of {tuple(LOSSES)}, got {name!r} "
                         "(a new loss is registered with "
                         "pac_particles.problem.losses.register_loss)")
    return loss


# ------------------------------------------------------ the built-in losses

def _zero_one(u):
    return 1.0 if u < 0.0 else (0.5 if u == 0.0 else 0.0)


def _hinge(u):
    return max(0.0, 1.0 - u)


def _exponential(u):
    return math.exp(-u)


def _ramp(u):
    return 0.5 * max(0.0, min(2.0, 1.0 - u))


def normal_cdf_pdf(z):
    """``(Phi(z), phi(z))`` of one float for the scalar closed forms:
    :func:`pac_particles.core.normal.cdf_pdf`, which numba inlines in the
    kernels (``point_kernels`` overloads this name) and Python calls here."""
    # imported here: core.normal imports numpy and numba, which --help avoids
    from pac_particles.core.normal import cdf_pdf
    return cdf_pdf(z)


def _gaussian_zero_one(mu, var):
    # Phi(-mu / s); d/dmu = -phi / s, d/dvar = phi t / (2 var), t = mu / s
    s = math.sqrt(var)
    t = mu / s
    cdf, pdf = normal_cdf_pdf(-t)
    return cdf, -pdf / s, 0.5 * pdf * t / var


def _gaussian_hinge(mu, var):
    # h(a, s) = a Phi(a / s) + s phi(a / s), a = 1 - mu:
    # dh/dmu = -Phi(a / s), dh/dvar = phi(a / s) / (2 s)
    s = math.sqrt(var)
    a = 1.0 - mu
    cdf, pdf = normal_cdf_pdf(a / s)
    return a * cdf + s * pdf, -cdf, 0.5 * pdf / s


def _gaussian_exponential(mu, var):
    value = math.exp(-mu + 0.5 * var)
    return value, -value, 0.5 * value


def _gaussian_ramp(mu, var):
    # (h(1 - mu, s) - h(-1 - mu, s)) / 2, each term as in the hinge's
    s = math.sqrt(var)
    a = 1.0 - mu
    cdf, pdf = normal_cdf_pdf(a / s)
    b = -1.0 - mu
    cdf_low, pdf_low = normal_cdf_pdf(b / s)
    return (0.5 * ((a * cdf + s * pdf) - (b * cdf_low + s * pdf_low)),
            0.5 * (cdf_low - cdf), 0.25 * (pdf - pdf_low) / s)


register_loss(MarginLoss(
    "zero_one", _zero_one,
    lambda xp, u: xp.where(u < 0.0, 1.0, xp.where(u == 0.0, 0.5, 0.0)),
    gaussian_point=_gaussian_zero_one, bounded=True, convex=False,
    symmetric=True, scale_invariant=True))
register_loss(MarginLoss(
    "hinge", _hinge, lambda xp, u: xp.maximum(0.0, 1.0 - u),
    gaussian_point=_gaussian_hinge, bounded=False, convex=True,
    symmetric=False))
register_loss(MarginLoss(
    "exponential", _exponential, lambda xp, u: xp.exp(-u),
    gaussian_point=_gaussian_exponential, bounded=False, convex=True,
    symmetric=False))
register_loss(MarginLoss(
    "ramp", _ramp,
    lambda xp, u: 0.5 * xp.maximum(0.0, xp.minimum(2.0, 1.0 - u)),
    gaussian_point=_gaussian_ramp, bounded=True, convex=False,
    symmetric=True))
