"""The losses of classification, declared once: one table that every backend reads.

A point risk ``r_n(s) = sum_i w_i l(y_i s_i)`` (:class:`~pac_particles.problem.risks.ClassificationRisk`)
is known by its margin loss ``l``. Each loss is one :class:`MarginLoss` entry
of :data:`LOSSES`, with everything a backend needs:

* ``point``: ``l(u)`` of one float, plain Python that numba compiles (the
  risk kernels of :mod:`~pac_particles.problem.point_kernels`);
* ``jax_point``: ``l`` on an array, given the array module (``jax.numpy``:
  the accelerator backend, :mod:`~pac_particles.problem.accelerated_risk`);
* ``gaussian``: ``E[l(u)]`` for ``u ~ N(mu, var)`` and its derivatives in
  ``mu`` and ``var``, or None when there is no closed form (Gaussian VB,
  :mod:`~pac_particles.problem.gaussian_losses`);
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

__all__ = ["MarginLoss", "LOSSES", "register_loss", "get_loss"]


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
        ``E[l(u)]``, ``u ~ N(mu, var)``, on arrays; None: no closed form.
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


def _normal(t):
    """``Phi(t)`` and ``phi(t)``, arrays (one pass, one exponential each:
    :func:`~pac_particles.core.normal.cdf_pdf_array`)."""
    from pac_particles.core.normal import cdf_pdf_array
    return cdf_pdf_array(t)


def _sd(var):
    import numpy as np
    return np.sqrt(var)


def _positive_part(a, s):
    """``h(a, s) = E[max(0, a + s Z)]`` and its derivatives in ``a`` and
    ``s``: ``Phi(a / s)`` and ``phi(a / s)``."""
    cdf, pdf = _normal(a / s)
    return a * cdf + s * pdf, cdf, pdf


def _gaussian_zero_one(mu, var):
    s = _sd(var)
    t = mu / s
    cdf, pdf = _normal(-t)
    return cdf, -pdf / s, 0.5 * pdf * t / var


def _gaussian_hinge(mu, var):
    # dh/dmu = -Phi(a / s) (a = 1 - mu), dh/dvar = phi(a / s) / (2 s)
    s = _sd(var)
    value, cdf, pdf = _positive_part(1.0 - mu, s)
    return value, -cdf, 0.5 * pdf / s


def _gaussian_exponential(mu, var):
    import numpy as np
    value = np.exp(-mu + 0.5 * var)
    return value, -value, 0.5 * value


def _gaussian_ramp(mu, var):
    value, d_mu, d_var = _gaussian_hinge(mu, var)
    s = _sd(var)
    low, cdf_low, pdf_low = _positive_part(-1.0 - mu, s)
    return (0.5 * (value - low), 0.5 * (d_mu + cdf_low),
            0.5 * (d_var - 0.5 * pdf_low / s))


register_loss(MarginLoss(
    "zero_one", _zero_one,
    lambda xp, u: xp.where(u < 0.0, 1.0, xp.where(u == 0.0, 0.5, 0.0)),
    _gaussian_zero_one, bounded=True, convex=False, symmetric=True,
    scale_invariant=True))
register_loss(MarginLoss(
    "hinge", _hinge, lambda xp, u: xp.maximum(0.0, 1.0 - u),
    _gaussian_hinge, bounded=False, convex=True, symmetric=False))
register_loss(MarginLoss(
    "exponential", _exponential, lambda xp, u: xp.exp(-u),
    _gaussian_exponential, bounded=False, convex=True, symmetric=False))
register_loss(MarginLoss(
    "ramp", _ramp,
    lambda xp, u: 0.5 * xp.maximum(0.0, xp.minimum(2.0, 1.0 - u)),
    _gaussian_ramp, bounded=True, convex=False, symmetric=True))
