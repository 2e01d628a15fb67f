"""The problem of a fit, set up once: validated data, the risk, ``lam``.

A Gibbs pseudo-posterior ``prior(theta) exp(-lam r_n(theta))`` is fixed by
the data, the empirical risk ``r_n`` and the inverse temperature ``lam``
(and the prior, which each method builds in its own coordinates).
:class:`GibbsProblem` holds the first three, validated once:

* ``data`` -- :class:`~pac_particles.problem.data.AUCData` for ranking
  (constant columns dropped, optionally standardised),
  :class:`~pac_particles.problem.design.DesignData` for classification (no
  column dropped, an intercept column appended if asked);
* ``risk`` -- :class:`~pac_particles.problem.risks.AUCRisk` (``1 - AUC``
  over the positive/negative pairs) or
  :class:`~pac_particles.problem.risks.ClassificationRisk` (the mean loss of
  the margins, PU-weighted with ``pu_prior``);
* ``lam`` -- the inverse temperature on the risk of the labels as given,
  and ``lam_pn`` the one on the positive-vs-negative scale: with PU labels
  the ranking posterior at ``lam`` on the PN risk is the one at
  ``lam / (1 - pi)`` on the observed PU risk
  (:func:`~pac_particles.core.checks.resolve_lam`); classification reweights
  its risk instead and uses ``lam`` as given.

The samplers (:mod:`pac_particles.smc.models`), EP, VB and SVGD
(:mod:`pac_particles.approx`) take a problem through ``from_problem``, and
their ``(X, y, lam, ...)`` constructors build one here, so that every method
sees the same validation and the same ``lam``. :meth:`GibbsProblem.at`
changes ``lam`` only (a grid of ``lam`` shares the data and the risk).

Example
-------
>>> import numpy as np
>>> from pac_particles.problem.problem import GibbsProblem
>>> X = np.array([[0.0, 1.0], [1.0, 1.0], [2.0, 1.0], [3.0, 1.0]])
>>> problem = GibbsProblem.ranking(X, [0, 1, 0, 1], lam=10.0, pu_prior=0.5)
>>> problem.data.d, problem.lam, problem.lam_pn     # constant column dropped
(1, 20.0, 10.0)
>>> problem.at(4.0).lam
8.0
"""

import dataclasses
from typing import Any, Callable, Optional

import numpy as np

from pac_particles.core.checks import InputError, resolve_lam
from pac_particles.core.kernels import SquaredExponential
from pac_particles.problem.dask_data import PairCounts, validate_dask_xy
from pac_particles.problem.data import is_dask_collection, validate_xy
from pac_particles.problem.row_pools import WINDOW_ORDER_ROWS
from pac_particles.problem.design import classification_data
from pac_particles.problem.priors import SpikeSlabPrior
from pac_particles.problem.losses import get_loss
from pac_particles.problem.risks import AUCRisk, ClassificationRisk

__all__ = ["GibbsProblem", "TASKS", "prior_hyperparameters", "as_problem",
           "RBF_LENGTHSCALE",
           "check_problem"]

#: what the risk measures: the order of positive/negative pairs (1 - AUC)
#: or the label of each point (a classification loss)
TASKS = ("ranking", "classification")


@dataclasses.dataclass(frozen=True)
class GibbsProblem:
    """Validated data, the empirical risk and ``lam`` of one Gibbs posterior.

    Build it with :meth:`ranking` or :meth:`classification`, not directly.

    Attributes
    ----------
    task : ``"ranking"`` or ``"classification"``.
    data : the validated data (``data.X`` the design the risk sees,
        ``data.y`` True for positives, ``data.transform`` for new rows).
    risk : the empirical risk, a :class:`~pac_particles.problem.risks.Risk`.
    lam : inverse temperature on ``risk`` (PU-resolved for ranking).
    lam_pn : ``lam`` as given (the positive-vs-negative scale).
    pu_prior : the PU class prior ``pi``, or None.
    standardize : whether ``data`` was standardised.
    """

    task: str
    data: Any
    risk: Any
    lam: float
    lam_pn: float
    pu_prior: Optional[float] = None
    standardize: bool = True

    @classmethod
    def ranking(cls, X: Any, y: Any, lam: float, standardize: bool = True,
                pu_prior: Optional[float] = None) -> "GibbsProblem":
        """The AUC problem: constant columns dropped (with a warning), the
        pair risk, ``lam / (1 - pu_prior)`` on the observed PU risk. A Dask
        ``X`` (or ``y``) stays on its cluster
        (:mod:`pac_particles.problem.dask_data`)."""
        lam_obs, lam_pn = resolve_lam(lam, pu_prior)
        risk: Any
        if is_dask_collection(X) or is_dask_collection(y):
            # the rows stay on the cluster (VB reads them by sampled rows)
            data = validate_dask_xy(X, y, standardize=standardize)
            risk = PairCounts(data.n_pos, data.n_neg)
        else:
            data = validate_xy(X, y, standardize=standardize,
                               window_rows=WINDOW_ORDER_ROWS)
            risk = AUCRisk(data.y)
        return cls("ranking", data, risk, lam_obs, lam_pn, pu_prior,
                   bool(standardize))

    @classmethod
    def classification(cls, X: Any, y: Any, lam: float, loss: str = "zero_one",
                       standardize: bool = True, fit_intercept: bool = True,
                       pu_prior: Optional[float] = None) -> "GibbsProblem":
        """The classification problem of ``loss``: every column kept, an
        intercept column when ``fit_intercept``, the PU-weighted risk of
        [dPNS14] (so ``lam`` as given)."""
        get_loss(loss)
        data = classification_data(X, y, standardize, fit_intercept)
        lam_obs, lam_pn = resolve_lam(lam)
        return cls("classification", data,
                   ClassificationRisk(data.y, loss, pu_prior), lam_obs,
                   lam_pn, pu_prior, bool(standardize))

    @property
    def loss(self) -> str:
        """The classification loss (``"auc"`` for ranking)."""
        return self.risk.loss if self.task == "classification" else "auc"

    @property
    def fit_intercept(self) -> bool:
        return self.task == "classification" and self.data.intercept

    def part(self, mask: np.ndarray, own_scale: bool = True
             ) -> "GibbsProblem":
        """The problem of the rows where the (n,) bool ``mask`` is True (a
        held-out split's training part) at the same ``lam``: their data
        taken from this problem's validated rows, standardised on their own
        (as :meth:`ranking` or :meth:`classification` of their raw values,
        to rounding, without validating them again: for ranking
        :meth:`~pac_particles.problem.data.AUCData.part`, each class's rows
        in the order its pair windows read; for classification
        :meth:`~pac_particles.problem.design.DesignData.part`, in input
        order), the risk of their labels. ``own_scale=False``: the part
        keeps this problem's scale instead (its columns not standardised
        again), so that rows of this problem's design are rows of the
        part's (a pilot's sample, held-out rows scored from the design).

        Raises
        ------
        InputError
            for rows on a Dask cluster.
        """
        if not self.data.in_memory:
            raise InputError("GibbsProblem.part takes a problem of rows in "
                             "memory: set the part up from its rows with "
                             f"GibbsProblem.{self.task}")
        mask = np.asarray(mask)
        if mask.dtype != bool or mask.shape != (self.data.n,):
            raise InputError(f"mask must be a bool array of the problem's "
                             f"{self.data.n} rows, got {mask.dtype} of shape "
                             f"{mask.shape}")
        data = self.data.part(mask, self.standardize and own_scale)
        if self.task == "classification":
            return dataclasses.replace(self, data=data, risk=(
                ClassificationRisk(data.y, self.risk.loss, self.pu_prior)))
        return dataclasses.replace(self, data=data, risk=AUCRisk(data.y))

    def at(self, lam: float) -> "GibbsProblem":
        """The same data and risk at another ``lam`` (as given: PU-resolved
        like the original)."""
        pu_prior = self.pu_prior if self.task == "ranking" else None
        lam_obs, lam_pn = resolve_lam(lam, pu_prior)
        return dataclasses.replace(self, lam=lam_obs, lam_pn=lam_pn)


#: ``kernel='rbf'``'s lengthscale on standardised inputs in units of
#: ``sqrt(d)`` (about 1.4 times the median distance of standard normal
#: rows): at 1 the exact GP fell 0.003-0.004 below linear scores on Pima's,
#: German credit's and breast cancer's splits, at 2 it is level with them
#: and gains 0.004-0.006 on the smooth nonlinear data (docs/benchmarks.md,
#: "GP scores at scale: the reduced-rank prior")
RBF_LENGTHSCALE = 2.0


def prior_hyperparameters(d: int, kernel: Any = None, prior: str = "gaussian",
                          spike_slab: Optional[tuple] = None,
                          prior_var: Any = 1.0) -> dict:
    """The prior's hyper-parameters as an estimator's parameters give them,
    on ``d`` features, before any data is seen: ``{"kernel": ...}`` for GP
    scores (``"rbf"``: squared exponential of lengthscale
    :data:`RBF_LENGTHSCALE` ``sqrt(d)`` on standardised inputs), ``{"p", "v0", "v1"}`` for the spike-and-slab prior
    (:class:`~pac_particles.problem.priors.SpikeSlabPrior`'s defaults for
    those not given; ``v0 = 0`` a Dirac spike), else ``{"prior_var"}``."""
    if kernel is not None:
        return {"kernel": (SquaredExponential(
                               lengthscale=RBF_LENGTHSCALE * np.sqrt(d))
                           if isinstance(kernel, str) else kernel)}
    if prior == "spike_slab":
        p, v0, v1 = spike_slab if spike_slab is not None else (None, None, 1.0)
        default = SpikeSlabPrior(d, p=p, v0=v0 if v0 else None, v1=v1)
        return {"p": float(np.mean(default.p)),
                "v0": 0.0 if v0 == 0 else float(np.mean(default.v0)),
                "v1": float(np.mean(default.v1))}
    return {"prior_var": prior_var}


def check_problem(problem: Any, task: str, owner: str) -> GibbsProblem:
    """``problem`` itself when it is a :class:`GibbsProblem` of ``task``
    (what every ``from_problem`` takes).

    Raises
    ------
    InputError
        when ``problem`` is not a :class:`GibbsProblem` of ``task``.
    """
    if not isinstance(problem, GibbsProblem) or problem.task != task:
        got = (f"a {problem.task} problem" if isinstance(problem, GibbsProblem)
               else type(problem).__name__)
        raise InputError(f"{owner} takes a {task} problem "
                         f"(GibbsProblem.{task}), got {got}")
    return problem


def as_problem(X: Any, y: Any, lam: Optional[float], task: str, owner: str,
               default_lam: Optional[Callable[[Any], float]] = None,
               **validation: Any) -> GibbsProblem:
    """The problem of a method's one constructor: ``X`` itself when it is a
    :class:`GibbsProblem` set up already (of ``task``; its data, risk and
    ``lam`` taken as they are, not validated again; ``y`` and ``lam`` then
    None), else the problem of ``(X, y, lam)`` set up here with the
    ``validation`` arguments of :meth:`GibbsProblem.ranking` or
    :meth:`GibbsProblem.classification`. ``lam`` None takes
    ``default_lam(data)`` where the method has a default that needs the
    validated data (set up at ``lam = 1``, then moved there).

    Raises
    ------
    InputError
        for a problem of the other task, or a problem given with ``y`` or
        ``lam``.
    """
    if isinstance(X, GibbsProblem):
        if y is not None or lam is not None:
            raise InputError(f"{owner} takes a problem or (X, y, lam), not "
                             "both: drop y and lam (the problem has them)")
        return check_problem(X, task, owner)
    build = (GibbsProblem.ranking if task == "ranking"
             else GibbsProblem.classification)
    if lam is None:
        if default_lam is None:
            raise InputError(f"{owner} needs lam, the inverse temperature "
                             "(a positive number, e.g. the number of rows)")
        problem = build(X, y, 1.0, **validation)
        return problem.at(default_lam(problem.data))
    return build(X, y, lam, **validation)
