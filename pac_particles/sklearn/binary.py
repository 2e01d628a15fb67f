"""What the package's two binary scikit-learn estimators share.

:class:`BinaryEstimatorMixin` gives :class:`~pac_particles.sklearn.estimator.PACBayesAUC`
and :class:`~pac_particles.sklearn.classifier.PACBayesClassifier`:

* ``__init__`` storing its arguments as given (scikit-learn's rule: no logic
  there, the checks run in ``fit``), and the two-class tag;
* :meth:`~BinaryEstimatorMixin._training_labels`: ``classes_`` and the
  positives ``y == classes_[1]`` of labels scikit-learn validated with
  their rows (``validate_data`` in the estimator's ``fit``, which sets
  ``n_features_in_`` and ``feature_names_in_``; :func:`explain_rejected_rows`
  names the column and row it rejected);
* :meth:`~BinaryEstimatorMixin.feature_names`: the input columns' names.

and the score's calibration for ``predict`` and ``predict_proba``:
:func:`youden_cut` (the cut of the training ROC curve farthest above the
diagonal), :func:`platt_sigmoid` (Platt's sigmoid of a score, or its slope
alone with the cut held at that one; PU-corrected with PU labels) and
:func:`calibrated_probability` (the probability it gives a score).
"""

import math
import numbers
from typing import Optional

import numpy as np
import pandas as pd
from scipy import optimize
from scipy.special import expit
from sklearn.metrics import roc_curve
from sklearn.utils.multiclass import check_classification_targets, unique_labels
from sklearn.utils.validation import check_is_fitted

from pac_particles.core.checks import (InputError, check_choice, check_count,
                                       check_positive, check_probability,
                                       check_pu_prior)
from pac_particles.core.parallel import one_blas_thread
from pac_particles.problem.accelerated_risk import check_backend
from pac_particles.problem.data import check_columns

__all__ = ["BinaryEstimatorMixin", "OnFirstRead", "explain_rejected_rows",
           "check_shared_parameters", "youden_cut", "platt_sigmoid",
           "calibrated_probability", "feature_series", "calibration_rows",
           "CALIBRATION_ROWS", "DEPLOYS"]

#: Training rows on which the Youden cut and Platt's sigmoid are computed:
#: above this many, a sample of half as many from each class (a smaller
#: class whole, :func:`calibration_rows`). Their sampling error from
#: 100,000 rows of a class (about 1 / sqrt(100,000) on the cut's quantile)
#: is far below their error as estimates of the population's cut and
#: slope, and at a million rows the two took as long as the whole VB fit.
CALIBRATION_ROWS = 200_000

#: the score an estimator deploys (its ``deploy``): the posterior fitted on
#: every row, or the certified part-A score (held out from its certificate)
DEPLOYS = ("all_rows", "certified")


class OnFirstRead:
    """A fitted attribute that a fit may set to a function of no argument,
    evaluated (BLAS on one thread, as in the fit) and kept when the
    attribute is first read: whoever reads it pays for it, not every fit.
    It is stored under ``"_" + name`` (``bound_``: ``_bound``)."""

    def __init__(self, doc: str):
        self.__doc__ = doc
        self.slot = ""

    def __set_name__(self, owner: type, name: str):
        self.slot = "_" + name.rstrip("_")

    def __get__(self, est: object, owner: Optional[type] = None) -> object:
        if est is None:
            return self
        check_is_fitted(est)
        value = est.__dict__.get(self.slot)
        if callable(value):
            with one_blas_thread():
                value = est.__dict__[self.slot] = value()
        return value

    def __set__(self, est: object, value: object):
        est.__dict__[self.slot] = value


class BinaryEstimatorMixin:
    """Parameter storage, the two-class tag, label and feature-name handling
    of the package's binary estimators (module docstring)."""

    def _store_params(self, values):
        """Set every ``__init__`` parameter from ``values`` (its
        ``locals()``)."""
        for name in self._get_param_names():
            setattr(self, name, values[name])

    @property
    def log_evidence_(self) -> float:
        """The posterior's ``log_evidence``, read on first use: a VB fit's
        is an estimate over its pairs or points that a fit read only for its
        scores need not pay for."""
        check_is_fitted(self, "posterior_")
        return float(self.posterior_.log_evidence)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    def _training_labels(self, y, needs="positives and negatives"):
        """The positives ``y == classes_[1]`` of training labels that
        scikit-learn's ``validate_data`` checked with their rows (the
        estimator's first step, which sets ``n_features_in_`` and
        ``feature_names_in_``; :func:`explain_rejected_rows` when it
        rejects them); sets ``classes_``.

        Labels that are not two classes raise InputError naming what to fix;
        ``needs`` says what the fit needs both classes for."""
        try:
            check_classification_targets(y)
        except ValueError as err:
            # scikit-learn's "Unknown label type: continuous", kept first,
            # with what it means here
            raise InputError(f"{err}; y must hold the labels of two classes "
                             "(e.g. 0/1 or two strings), not measurements: "
                             "threshold a continuous outcome into two "
                             "classes first") from None
        self.classes_ = unique_labels(y)
        if self.classes_.size > 2:
            shown = ", ".join(repr(c) for c in self.classes_[:5].tolist())
            raise InputError(
                "Only binary classification is supported. Got "
                f"{self.classes_.size} classes in y ({shown}"
                f"{', ...' if self.classes_.size > 5 else ''}): merge them "
                "into two, or fit one class against the rest")
        if self.classes_.size < 2:
            needs = needs if " needs " in needs else f"the fit needs {needs}"
            raise InputError(f"y has only one class ({self.classes_[0]!r}): "
                             f"{needs}; add rows of the other class")
        return y == self.classes_[1]

    def _test_labels(self, y):
        """``y == classes_[1]`` after checking ``y`` as ``fit`` does (both
        classes, labels seen in ``fit``, no NaN)."""
        y = np.asarray(y)
        if y.ndim == 2 and y.shape[1] == 1:
            y = y[:, 0]
        if y.ndim != 1:
            raise InputError(f"y must be 1-D, got shape {y.shape}")
        if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
            raise InputError("y contains NaN or infinite values")
        seen = np.unique(y)
        unknown = seen[~np.isin(seen, self.classes_)]
        if unknown.size:
            raise InputError(f"y has labels {unknown.tolist()[:5]} not seen in "
                             f"fit (classes_ = {self.classes_.tolist()})")
        if seen.size < 2:
            raise InputError("y has only one class: the AUC needs positives "
                             "and negatives")
        return y == self.classes_[1]

    def feature_names(self, columns=None):
        """Names of the input columns (``feature_names_in_``, a DataFrame's
        columns, else ``x1, ..., xd``), or of the ``columns`` given."""
        names = getattr(self, "feature_names_in_", None)
        names = ([str(name) for name in names] if names is not None
                 else [f"x{k + 1}" for k in range(self.n_features_in_)])
        return names if columns is None else [names[k] for k in columns]


def explain_rejected_rows(X, y):
    """InputError naming what scikit-learn's ``validate_data`` rejected in
    a training set, which its message does not name: the column (by name
    for a DataFrame, by index otherwise) and row of a value that is not a
    finite number (:func:`~pac_particles.problem.data.check_columns`), the
    rows of ``X`` against the labels of ``y``, a missing label; returns
    when it finds none of these (scikit-learn's error then stands)."""
    check_columns(X)
    _check_label_rows(X, y)


def _check_label_rows(X, y):
    """InputError when ``y`` does not hold one label per row of ``X``, or a
    label is missing (NaN, None), naming the counts or the row."""
    n_rows = getattr(X, "shape", (None,))[0] if hasattr(X, "shape") else (
        len(X) if isinstance(X, (list, tuple)) else None)
    if y is None or hasattr(y, "dask") or hasattr(X, "dask"):
        return                      # scikit-learn's own message, or Dask's
    labels = np.asarray(y)
    if labels.ndim == 2 and labels.shape[1] == 1:
        labels = labels[:, 0]
    if labels.ndim != 1:
        raise InputError(f"y must be 1-D (one label per row), got shape "
                         f"{labels.shape}")
    if n_rows is not None and labels.shape[0] != n_rows:
        raise InputError(f"X has {n_rows} rows but y has {labels.shape[0]} "
                         "labels: give one label per row")
    missing = (np.isnan(labels) if labels.dtype.kind == "f" else
               np.array([v is None or (isinstance(v, float) and v != v)
                         for v in labels]) if labels.dtype.kind == "O"
               else np.zeros(labels.shape, bool))
    if missing.any():
        row = int(np.argmax(missing))
        index = getattr(y, "index", None)    # a Series: its index labels
        raise InputError(f"y holds NaN (a missing label) in the row at index "
                         f"{row if index is None else index[row]!r}: drop "
                         "the rows without a label, or give them one")


def check_shared_parameters(est, methods):
    """The checks of the parameters both estimators take (InputError naming
    the parameter): ``method`` among ``methods``, ``lam`` a positive float
    or ``"cv"``, ``lam_max``, ``prior_var``, the counts, ``eps``,
    ``pu_prior``, ``random_state``, ``n_jobs``, SMC's ``backend`` and
    ``deploy`` (linear scores only)."""
    check_choice(est.method, "method", methods)
    check_choice(est.deploy, "deploy", DEPLOYS)
    if est.deploy == "certified" and getattr(est, "kernel", None) is not None:
        raise InputError("deploy='certified' deploys the part-A linear "
                         "score: use it with kernel=None, or "
                         "deploy='all_rows' for GP scores")
    check_backend(est.backend)
    if not (isinstance(est.lam, str) and est.lam == "cv"):
        check_positive(est.lam, "lam")
    if est.lam_max is not None:
        check_positive(est.lam_max, "lam_max")
    check_positive(est.prior_var, "prior_var")
    check_count(est.n_folds, "n_folds", minimum=2)
    check_count(est.n_particles, "n_particles", minimum=2)
    check_count(est.len_chain, "len_chain", minimum=2)
    check_count(est.chains, "chains")
    check_probability(est.eps, "eps")
    if est.pu_prior is not None:
        check_pu_prior(est.pu_prior)
    if est.random_state is not None:
        check_count(est.random_state, "random_state", minimum=0)
    if est.n_jobs is not None and (
            not isinstance(est.n_jobs, numbers.Integral)
            or isinstance(est.n_jobs, bool) or est.n_jobs == 0):
        raise InputError(f"n_jobs must be a non-zero integer (-1: all "
                         f"cores), got {est.n_jobs!r}")


def feature_series(values, names, label):
    """``values`` as a pandas Series indexed by feature name."""
    return pd.Series(np.asarray(values, dtype=float),
                     index=pd.Index(names, name="feature"), name=label)


def calibration_rows(positives, seed):
    """``(rows, weights)``: the rows of :func:`youden_cut` and
    :func:`platt_sigmoid` among the training rows (``positives`` their
    labels) and each one's weight in the sigmoid's likelihood. All of them
    (weights None) up to :data:`CALIBRATION_ROWS`; else, from ``seed``,
    each class's rows up to half that many, or half that many drawn from
    the class uniformly with replacement, weighted by the class's count
    over its draws: a rare class keeps every row (a uniform sample of the
    rows could miss it), and the weighted likelihood is the whole rows'
    in expectation. The Youden cut needs no weights: ``TPR`` and ``FPR``
    are means within a class."""
    positives = np.asarray(positives, dtype=bool)
    if positives.size <= CALIBRATION_ROWS:
        return slice(None), None
    rng = np.random.default_rng([0 if seed is None else seed, 2])
    rows, weights = [], []
    for members in (np.flatnonzero(positives), np.flatnonzero(~positives)):
        k = min(members.size, CALIBRATION_ROWS // 2)
        drawn = (members if k == members.size
                 else members[rng.integers(members.size, size=k)])
        rows.append(drawn)
        weights.append(np.full(k, members.size / max(k, 1)))
    rows, weights = np.concatenate(rows), np.concatenate(weights)
    order = np.argsort(rows, kind="stable")
    return rows[order], weights[order]


def platt_sigmoid(f, positives, pu_prior=None, cut=None, weights=None):
    """Platt's sigmoid ``P(positive | f) = expit(slope (f - cut))`` of the
    scores ``f`` by maximum likelihood: ``(slope, cut)``, ``slope > 0``.
    With ``cut`` given the slope alone, the cut held there.

    As Platt (1999, Sec. 2.2), the targets are not 1 and 0 but ``(N+ + 1)
    / (N+ + 2)`` and ``1 / (N- + 2)``: the probabilities the training rows'
    own labels leave for a new row of each class, which keep the slope
    finite where the training scores separate the classes (a fit with more
    features than rows).

    With ``pu_prior`` (``positives`` marks ``n_P`` labelled positives, the
    other ``n_U`` rows are unlabelled, a fraction ``pu_prior`` of them
    positive) the labels are not the classes, and the likelihood is that of
    the labels under the case-control model (Lancaster and Imbens 1996):
    with ``sigma = expit(z)`` the probability of the positive class in the
    unlabelled rows' population, a row is labelled with probability ``q =
    K sigma / (1 + K sigma)``, ``K = n_P / (pu_prior n_U)``, and Platt's
    targets go to the labels. Its minimum is finite: an unlabelled row
    below the cut (target ``1 / (n_U + 2)``) makes an infinite slope
    infinitely unlikely. (The unbiased PU rewrite of the log-loss, ``mean_U
    log(1 + e^z) - pu_prior mean_P z``, has none on a fit's own scores,
    which rank its labelled rows above the unlabelled positives.)

    L-BFGS-B on ``(slope, slope cut)`` in the scores' standard units, the
    slope within ``e^{+-10} / sd(f)``, from ``slope = 1 / sd(f)`` and the
    cut at the scores' mean. A slope at its lower bound (scores ranking the
    labels backwards) is refitted with the cut held at 0, the score's own
    sign; with one class, or scores without spread, there is nothing to
    fit: ``1 / sd(f)`` and the cut held (or 0). ``weights``: of the rows
    in the likelihood and in the class counts (a sample's, from
    :func:`calibration_rows`).

    Lancaster, T. and Imbens, G. (1996). Case-control studies with
    contaminated controls. Journal of Econometrics 71, 145-160.

    Platt, J. C. (1999). Probabilistic outputs for support vector machines
    and comparisons to regularized likelihood methods. In Advances in Large
    Margin Classifiers, 61-74."""
    f = np.asarray(f, dtype=float)
    positives = np.asarray(positives, dtype=bool)
    w = (np.ones(f.size) if weights is None
         else np.asarray(weights, dtype=float))
    n_all = float(w.sum())
    n_labelled = float(w[positives].sum())
    spread = float(np.sqrt(np.average((f - np.average(f, weights=w)) ** 2,
                                      weights=w)))
    held = cut is not None
    if not spread > 0 or not 0.0 < n_labelled < n_all:
        return (1.0 / spread if spread > 0 else 1.0), (
            float(cut) if held else 0.0)
    centre = float(cut) if held else float(np.average(f, weights=w))
    # z = beta . (u, 1) with u the scores in their standard units
    u = (f - centre) / spread
    columns = np.stack([u] if held else [u, np.ones_like(u)])
    targets = np.where(positives, (n_labelled + 1.0) / (n_labelled + 2.0),
                       1.0 / (n_all - n_labelled + 2.0))
    log_k = (None if pu_prior is None else
             math.log(n_labelled / (pu_prior * (n_all - n_labelled))))

    def loss(beta):
        z = beta @ columns
        if log_k is None:
            # -t log sigma - (1 - t) log(1 - sigma)
            value = np.logaddexp(0.0, z) - targets * z
            dz = expit(z) - targets
        else:
            # -t log q - (1 - t) log(1 - q), q = K sigma / (1 + K sigma)
            log_sigma = -np.logaddexp(0.0, -z)
            value = (np.logaddexp(0.0, log_k + log_sigma)
                     - targets * (log_k + log_sigma))
            q = expit(log_k + log_sigma)
            dz = (1.0 - np.exp(log_sigma)) * (q - targets)
        return float(w @ value) / n_all, columns @ (w * dz) / n_all

    bounds = [(math.exp(-10.0), math.exp(10.0))] + [(None, None)] * (not held)
    start = np.zeros(columns.shape[0])
    start[0] = 1.0
    found = optimize.minimize(loss, start, jac=True, method="L-BFGS-B",
                              bounds=bounds,
                              options=dict(ftol=1e-15, gtol=1e-11,
                                           maxiter=500))
    beta = found.x
    if beta[0] <= math.exp(-10.0) * (1.0 + 1e-9) and not held:
        return platt_sigmoid(f, positives, pu_prior, cut=0.0)
    if not held:
        centre -= beta[1] * spread / beta[0]
    return float(beta[0] / spread), float(centre)


def calibrated_probability(f, slope):
    """``expit(slope f)``, the probability of the positive class from the
    scores ``f`` (a Dask array stays one), never 1/2 or below where ``f``
    is positive: ``predict``, which takes the sign of ``f``, and the
    probability's side of 1/2 always agree."""
    p = expit(slope * f)
    return np.where((f > 0) & (p <= 0.5), np.nextafter(0.5, 1.0), p)


def youden_cut(positives, scores):
    """Score cut maximising ``TPR - FPR`` on the training ROC curve, placed
    halfway between the chosen score and the next lower one."""
    fpr, tpr, thresholds = roc_curve(positives, scores)
    best = thresholds[np.argmax(tpr - fpr)]
    below = scores[scores < best]
    if not np.isfinite(best):
        return float(scores.max()) + 1.0
    return float(0.5 * (best + below.max())) if below.size else float(best) - 1.0


def certificate_spec(est, score="randomised", cut=0.0):
    """The :class:`~pac_particles.bounds.CertificateSpec` of an estimator's
    certificates: ``eps``, the seed (the certificate draws from its own
    stream of it), the deployed point estimate (``point``, else the
    mean) and the deployed labels' ``cut`` on its score."""
    from pac_particles.bounds import CertificateSpec
    return CertificateSpec(delta=est.eps, seed=est.random_state, score=score,
                           point=getattr(est, "point", "mean"), cut=cut)
