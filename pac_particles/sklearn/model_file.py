"""Model files: a fitted scoring rule saved as JSON, loaded without running code.

A fitted :class:`~pac_particles.sklearn.estimator.PACBayesAUC` with linear scores
scores, classifies and gives probabilities through four numbers per
feature and three scalars (``decision_function = X @ coef_ + intercept_``;
``predict`` takes ``classes_[1]`` where it is positive; ``predict_proba =
expit(proba_slope_ * decision_function)``). :func:`save_model` writes
exactly those, with the feature names, the two labels and what the fit was
(method, ``lam``, certificate), as one JSON file; :func:`load_model` reads
it back as a :class:`SavedScorer` that recomputes the three methods from
them with the estimator's arithmetic (numpy and scipy's ``expit`` alone):
the numbers read back exactly, so predictions agree up to the order in
which BLAS sums ``X @ coef_`` (it may depend on memory alignment: a few
units in the last place).

Why not pickle (or joblib): unpickling a file runs whatever code the file
names, so a model file received from someone else could do anything with
the rights of whoever loads it. A JSON file is data: :func:`load_model`
parses numbers and strings, checks them, and never calls ``pickle``.

The file::

    {"format": "pac_particles.model", "format_version": 1,
     "kind": "linear_score",
     "feature_names": [...], "classes": [negative, positive],
     "coef": [...], "intercept": ..., "threshold": ..., "proba_slope": ...,
     "fit": {...what was fitted, for the record...},
     "checksum": "sha256:..."}

``checksum`` is the SHA-256 of the canonical JSON of everything else
(sorted keys, no spaces, floats as Python writes them, which read back
exactly). A file whose numbers were edited, or that was damaged, no longer
matches and is refused. The checksum is no signature: whoever edits a file
on purpose can recompute it. Only the format's safety is unconditional: a
file can at worst hold wrong numbers, never code.

A :class:`~pac_particles.sklearn.classifier.PACBayesClassifier`'s file
(``"kind": "linear_classifier"``, format 2) holds its deployed rule as above
(``coef``, ``intercept``, ``threshold``, ``proba_slope``) and, under
``"vote"``, its posterior on the raw inputs: SMC's weighted particles
(``"predictive": "vote"``, ``coef``, ``intercept``, ``weights``) or VB's
and EP's Gaussian of ``(w, b)`` (``"predictive": "gaussian"``, ``mean``,
``cov``). :func:`load_model` reads it back as a :class:`SavedClassifier`,
whose predictions agree with the estimator's up to rounding (the raw-scale
numbers fold the standardisation in). A format-1 classifier file, the
posterior alone or the certified rule alone (``"predictive":
"logistic"``), is read and predicts as it did.

Either file records under ``"fit"`` which score is deployed (``deploy``)
and both certificates: that of the randomised score (``certified_auc`` or
``certified_error``) and that of the deployed score (``deployed_certified_auc``
or ``deployed_certified_error``).

GP-kernel fits score new rows through their training inputs and kernel;
they are refused by :func:`save_model` (with what to use instead).

Example
-------
::

    from pac_particles import PACBayesAUC
    from pac_particles.sklearn.model_file import load_model, save_model
    est = PACBayesAUC(method="ep", lam=100.0).fit(X, y)
    save_model(est, "model.json")
    scorer = load_model("model.json")
    scorer.predict_proba(X_new)      # == est.predict_proba(X_new)
"""

import hashlib
import json
import math
import os
import time

import numpy as np

from pac_particles import __version__
from pac_particles.core.checks import InputError
from pac_particles.core.gaussian import positive_probability, row_variances
from pac_particles.core.json_values import jsonable
from pac_particles.core.posterior_result import GaussianPosterior
from pac_particles.sklearn.binary import calibrated_probability
from pac_particles.sklearn.classifier import PACBayesClassifier
from pac_particles.sklearn.estimator import PACBayesAUC

__all__ = ["save_model", "load_model", "SavedScorer", "SavedClassifier",
           "FORMAT", "FORMAT_VERSION"]

FORMAT = "pac_particles.model"
#: raised when a layout changes; a reader refuses newer versions (2: the
#: classifier's file holds its deployed rule besides its posterior's vote)
FORMAT_VERSION = 2
#: the version each kind is written at: its layout's last change (a score's
#: file is unchanged since 1, and readers of 1 still read it)
_WRITTEN_VERSION = {"linear_score": 1, "linear_classifier": 2}
_KINDS = ("linear_score", "linear_classifier")
#: how a saved classifier's posterior votes (format 1: "logistic", the
#: part-A rule alone)
_PREDICTIVES = ("vote", "gaussian", "logistic")


def _canonical(payload):
    """The bytes the checksum covers: ``payload`` as canonical JSON."""
    return json.dumps(payload, sort_keys=True, separators=(",", ":"),
                      ensure_ascii=True, allow_nan=False).encode("ascii")


def _checksum(payload):
    return "sha256:" + hashlib.sha256(_canonical(payload)).hexdigest()


def _label(value):
    """A class label as a plain JSON value."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        value = float(value)
        return int(value) if value.is_integer() else value
    return str(value)


def save_model(estimator, path, feature_names=None, classes=None, info=None):
    """Write a fitted :class:`~pac_particles.sklearn.estimator.PACBayesAUC` (linear
    scores) to ``path`` as a model file (module docstring).

    Parameters
    ----------
    estimator : a fitted PACBayesAUC without a GP kernel.
    path : str or path-like; folders are created.
    feature_names : list of str, optional
        Names of the input columns, in order; default the estimator's
        ``feature_names_in_`` (fitted on a DataFrame), else ``x1..xd``.
    classes : two labels, optional
        What ``classes_[0]`` and ``classes_[1]`` stand for, when the fit
        saw codes (the command line fits 0/1 codes of a CSV's labels and
        passes the labels); default ``classes_``.
    info : dict, optional
        More to record under ``"fit"`` (plain values), e.g. how the CSV was
        read.

    Returns
    -------
    path

    Raises
    ------
    InputError
        for an estimator that is not fitted, not a PACBayesAUC, or has GP
        scores (no coefficients to save).
    """
    name = type(estimator).__name__
    if isinstance(estimator, PACBayesClassifier):
        return _save_classifier(estimator, path, feature_names, classes,
                                info)
    if not isinstance(estimator, PACBayesAUC):
        raise InputError(f"save_model needs a fitted PACBayesAUC or "
                         f"PACBayesClassifier: got {name}")
    if "threshold_" not in estimator.__dict__:
        raise InputError("save_model needs a fitted PACBayesAUC: fit it first")
    if estimator.kernel is not None:
        raise InputError(
            "a GP-kernel fit cannot be saved as a model file: it scores new "
            "rows through its training inputs and kernel, not coefficients; "
            "fit linear scores (no kernel) to save a model, or keep the "
            "fitted estimator in memory")
    coef = np.asarray(estimator.coef_, dtype=float)
    feature_names, classes = _names_and_classes(estimator, feature_names,
                                                classes, coef.size)
    values = {"coef": coef, "intercept": estimator.intercept_,
              "threshold": estimator.threshold_,
              "proba_slope": estimator.proba_slope_}
    for key, value in values.items():
        if not np.all(np.isfinite(value)):
            raise InputError(f"the fit's {key} is not finite: nothing to save")
    deployed = estimator.deployed_certificate_
    fit = _fit_record(estimator, info, train_auc=estimator.train_auc_,
                      certified_auc=1.0 - estimator.certified_auc_risk_,
                      deployed_certified_auc=None if deployed is None
                      else 1.0 - deployed.bound)
    payload = {"format": FORMAT,
               "format_version": _WRITTEN_VERSION["linear_score"],
               "kind": "linear_score", "feature_names": feature_names,
               "classes": classes,
               "coef": [float(c) for c in coef],
               "intercept": float(estimator.intercept_),
               "threshold": float(estimator.threshold_),
               "proba_slope": float(estimator.proba_slope_),
               "fit": fit}
    return _write(payload, path)


def _fit_record(estimator, info, **figures):
    """What was fitted, for the record under ``"fit"``: the estimator, the
    method that ran, ``lam``, ``figures`` and ``info``."""
    fit = {"estimator": type(estimator).__name__,
           "method": getattr(estimator, "method_", estimator.method),
           "lam": estimator.lam_, "deploy": estimator.deploy, **figures,
           "eps": estimator.eps,
           "pac_particles_version": __version__,
           "saved": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    fit.update(info or {})
    return jsonable(fit, other=str)


def _names_and_classes(estimator, feature_names, classes, width):
    """The checked feature names (``width`` of them) and two labels of a
    model file."""
    if feature_names is None:
        feature_names = estimator.feature_names()
    feature_names = [str(n) for n in feature_names]
    if len(feature_names) != width:
        raise InputError(f"{len(feature_names)} feature names for "
                         f"{width} coefficients")
    if len(set(feature_names)) != len(feature_names):
        raise InputError("feature names must be distinct")
    classes = list(estimator.classes_ if classes is None else classes)
    if len(classes) != 2:
        raise InputError(f"two class labels are needed, got {classes!r}")
    return feature_names, [_label(c) for c in classes]


def _save_classifier(estimator, path, feature_names, classes, info):
    """:func:`save_model` of a fitted PACBayesClassifier: its deployed rule
    and its posterior on the raw inputs (module docstring)."""
    if "certificate_" not in estimator.__dict__:
        raise InputError("save_model needs a fitted PACBayesClassifier: fit "
                         "it first")
    post, data = estimator.posterior_, estimator.data_
    feature_names, classes = _names_and_classes(
        estimator, feature_names, classes, data.n_raw_features)
    if isinstance(post, GaussianPosterior):
        # theta -> (w, b) is linear: (w, b) = T theta, with T's columns the
        # images of the unit vectors
        coef, offset = data.raw_linear(np.eye(post.mean.size))
        T = np.vstack([coef.T, offset])
        vote = {"predictive": "gaussian", "mean": (T @ post.mean).tolist(),
                "cov": (T @ post.cov @ T.T).tolist()}
    else:
        coef, offset = data.raw_linear(post.theta)
        vote = {"predictive": "vote", "coef": coef.tolist(),
                "intercept": np.atleast_1d(offset).tolist(),
                "weights": np.asarray(post.weights, float).tolist()}
    rule = {"coef": np.asarray(estimator.coef_, float),
            "intercept": float(estimator.intercept_),
            "threshold": float(estimator.threshold_),
            "proba_slope": float(estimator.proba_slope_)}
    for key, value in list(rule.items()) + list(vote.items()):
        if key != "predictive" and not np.all(np.isfinite(value)):
            raise InputError(f"the fit's {key} is not finite: nothing to save")
    rule["coef"] = rule["coef"].tolist()
    cert, deployed = estimator.certificate_, estimator.deployed_certificate_
    fit = _fit_record(estimator, info, loss=estimator.loss_,
                      certified_error=None if cert is None else cert.bound,
                      deployed_certified_error=None if deployed is None
                      else deployed.bound)
    payload = {"format": FORMAT,
               "format_version": _WRITTEN_VERSION["linear_classifier"],
               "kind": "linear_classifier", "feature_names": feature_names,
               "classes": classes, **rule, "vote": vote, "fit": fit}
    return _write(payload, path)


def _write(payload, path):
    """Write ``payload`` with its checksum to ``path``; returns ``path``."""
    payload["checksum"] = _checksum(payload)
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    with open(path, "w", encoding="ascii") as fh:
        json.dump(payload, fh, indent=1, allow_nan=False)
        fh.write("\n")
    return path


def _refuse(path, why):
    raise InputError(f"{path} is not a usable pac_particles model file: {why}")


def _finite_number(path, payload, key):
    value = payload.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not math.isfinite(value):
        _refuse(path, f"{key!r} must be a finite number")
    return float(value)


def load_model(path):
    """Read a model file written by :func:`save_model`; returns a
    :class:`SavedScorer`. Nothing in the file is executed: it is parsed as
    JSON, checked field by field, and its checksum verified.

    Raises
    ------
    InputError
        (one line: what is wrong, what to do) for a missing file, a file
        that is not JSON (a pickle, for instance: model files are never
        unpickled), not a model file, of a newer format version, with a
        missing or malformed field, or whose checksum does not match (edited
        or damaged after it was saved).
    """
    path = os.fspath(path)
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except FileNotFoundError:
        raise InputError(f"no such model file: {path}")
    except OSError as err:
        raise InputError(f"cannot read the model file {path}: {err}")

    def no_constant(name):
        # NaN / Infinity are not JSON; Python's parser would take them
        raise ValueError(f"{name} is not a JSON number")
    try:
        payload = json.loads(raw.decode("utf-8"), parse_constant=no_constant)
    except (UnicodeDecodeError, ValueError):
        _refuse(path, "it is not JSON (a pickle or joblib file is never "
                "loaded, since unpickling runs code); save the model with "
                "pac-particles fit --save-model or model_file.save_model")
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        _refuse(path, f"no \"format\": \"{FORMAT}\" field")
    version = payload.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool):
        _refuse(path, "no integer format_version")
    if version > FORMAT_VERSION:
        _refuse(path, f"format version {version} is newer than this "
                f"pac_particles reads ({FORMAT_VERSION}); upgrade "
                "pac_particles")
    checksum = payload.pop("checksum", None)
    if not isinstance(checksum, str):
        _refuse(path, "no checksum")
    try:
        expected = _checksum(payload)
    except ValueError:
        _refuse(path, "it holds a value that is not plain JSON")
    if checksum != expected:
        _refuse(path, "its checksum does not match its content: the file "
                "was changed after it was saved, or damaged; save the model "
                "again from the fit")
    if payload.get("kind") not in _KINDS:
        _refuse(path, f"unknown kind {payload.get('kind')!r}")
    names = payload.get("feature_names")
    if (not isinstance(names, list) or not names
            or not all(isinstance(n, str) for n in names)
            or len(set(names)) != len(names)):
        _refuse(path, "feature_names must be a list of distinct strings")
    classes = payload.get("classes")
    if (not isinstance(classes, list) or len(classes) != 2
            or not all(isinstance(c, (str, int, float, bool)) for c in classes)
            or classes[0] == classes[1]):
        _refuse(path, "classes must be two distinct labels")
    fit = payload.get("fit")
    common = dict(feature_names=names, classes=classes,
                  fit=fit if isinstance(fit, dict) else {},
                  format_version=version)
    if payload["kind"] == "linear_classifier":
        return _load_classifier(path, payload, common)
    coef, intercept, slope = _rule(path, payload, len(names))
    return SavedScorer(
        coef=coef, intercept=intercept,
        threshold=_finite_number(path, payload, "threshold"),
        proba_slope=slope, **common)


def _finite_array(path, payload, key, shape, what):
    """``payload[key]`` as a finite float array of ``shape`` (None: any
    length), or the file is refused saying it must be ``what``."""
    value = payload.get(key)

    def numbers(v):
        if isinstance(v, list):
            return all(numbers(u) for u in v)
        return (isinstance(v, (int, float)) and not isinstance(v, bool)
                and math.isfinite(v))
    if not isinstance(value, list) or not numbers(value):
        _refuse(path, f"{key} must be {what}")
    try:
        array = np.array(value, dtype=float)
    except ValueError:              # ragged nested lists
        _refuse(path, f"{key} must be {what}")
    if array.ndim != len(shape) or any(
            want is not None and got != want
            for got, want in zip(array.shape, shape)):
        _refuse(path, f"{key} must be {what}")
    return array


def _load_classifier(path, payload, common):
    """The :class:`SavedClassifier` of a checked ``linear_classifier``
    payload: format 2's rule and vote, or format 1's one of them."""
    d = len(common["feature_names"])
    if common["format_version"] >= 2:
        vote = payload.get("vote")
        if not isinstance(vote, dict):
            _refuse(path, "\"vote\" must hold the posterior's predictive")
        return SavedClassifier(rule=_rule(path, payload, d),
                               vote=_vote(path, vote, d),
                               threshold=_finite_number(path, payload,
                                                        "threshold"),
                               **common)
    if payload.get("predictive") == "logistic":
        return SavedClassifier(rule=_rule(path, dict(payload, proba_slope=1.0),
                                          d), threshold=0.0, **common)
    return SavedClassifier(vote=_vote(path, payload, d), **common)


def _rule(path, payload, d):
    """The checked ``(coef, intercept, proba_slope)`` of a linear rule."""
    slope = _finite_number(path, payload, "proba_slope")
    if not slope > 0:
        _refuse(path, "proba_slope must be positive")
    return (_finite_array(path, payload, "coef", (d,),
                          "one finite number per feature"),
            _finite_number(path, payload, "intercept"), slope)


def _vote(path, vote, d):
    """The checked posterior of a classifier's vote, as a dict."""
    predictive = vote.get("predictive")
    if predictive not in _PREDICTIVES or predictive == "logistic":
        _refuse(path, f"unknown predictive {predictive!r}")
    if predictive == "gaussian":
        return {"predictive": predictive,
                "mean": _finite_array(path, vote, "mean", (d + 1,),
                                      "one finite number per feature, then "
                                      "the intercept's"),
                "cov": _finite_array(path, vote, "cov", (d + 1, d + 1),
                                     f"a finite {d + 1} x {d + 1} matrix")}
    coef = _finite_array(path, vote, "coef", (None, d),
                         "one row of finite numbers per particle")
    n = coef.shape[0]
    weights = _finite_array(path, vote, "weights", (n,),
                            "one finite weight per particle")
    if np.any(weights < 0) or not weights.sum() > 0:
        _refuse(path, "weights must be non-negative, not all zero")
    return {"predictive": predictive, "coef": coef,
            "intercept": _finite_array(path, vote, "intercept", (n,),
                                       "one finite number per particle"),
            "weights": weights / weights.sum()}


class _SavedModel:
    """What a loaded model file of either kind holds: the input columns, the
    two labels and the record of the fit; its inputs are checked as the
    estimator checks them."""

    def __init__(self, feature_names, classes, fit=None,
                 format_version=FORMAT_VERSION):
        self.feature_names = list(feature_names)
        self.classes_ = np.array(classes, dtype=object if any(
            isinstance(c, str) for c in classes) else None)
        self.fit = dict(fit or {})
        self.format_version = format_version

    @property
    def n_features_in_(self):
        return len(self.feature_names)

    def _design(self, X):
        """``X`` as a finite float array of the model's width; a pandas
        DataFrame is matched by column name."""
        columns = getattr(X, "columns", None)
        if columns is not None:
            names = [str(c) for c in columns]
            missing = [n for n in self.feature_names if n not in names]
            if missing:
                raise InputError(f"X lacks the feature column(s) "
                                 f"{missing[:10]} of the model")
            X = X[self.feature_names]
        try:
            X = np.asarray(X, dtype=float)
        except (TypeError, ValueError):
            raise InputError("X must be numeric")
        if X.ndim != 2 or X.shape[1] != self.n_features_in_:
            raise InputError(f"X must have shape (n, {self.n_features_in_}) "
                             f"(the model's features), got {X.shape}")
        if not np.all(np.isfinite(X)):
            row, col = np.argwhere(~np.isfinite(X))[0]
            raise InputError(f"X holds {X[row, col]} in row {row + 1}, "
                             f"feature {self.feature_names[col]!r}")
        return X

    def __repr__(self):
        return (f"{type(self).__name__}({self.n_features_in_} features, "
                f"classes {self.classes_.tolist()}, method "
                f"{self.fit.get('method')}, lam {self.fit.get('lam')})")


class SavedClassifier(_SavedModel):
    """A saved :class:`~pac_particles.sklearn.classifier.PACBayesClassifier`
    (:func:`load_model`): ``decision_function``, ``predict`` and
    ``predict_proba`` of its rule, ``vote_probability`` of its posterior,
    as the estimator computes them up to rounding (a format-1 file of the
    posterior alone predicts by its vote and has no rule).

    Attributes
    ----------
    feature_names, classes_, fit, n_features_in_ : as :class:`SavedScorer`.
    coef_, intercept_, threshold_, proba_slope_ : the rule, as the
        estimator's (None: a format-1 file of the posterior alone).
    vote : dict, the posterior (``"predictive"`` ``"gaussian"``: ``mean``
        and ``cov`` of ``(w, b)``; ``"vote"``: SMC's particles ``coef``,
        ``intercept``, ``weights``); None: a format-1 file of the rule alone.
    """

    def __init__(self, feature_names, classes, rule=None, vote=None,
                 fit=None, format_version=FORMAT_VERSION, threshold=None):
        super().__init__(feature_names, classes, fit, format_version)
        self.threshold_ = threshold
        self.coef_, self.intercept_, self.proba_slope_ = (
            rule if rule is not None else (None, None, None))
        self.vote = vote

    def decision_function(self, X):
        """Scores ``X @ coef_ + intercept_``: positive where ``predict``
        says ``classes_[1]``."""
        if self.coef_ is None:
            raise InputError("this model file (format 1) holds the "
                             "posterior's vote alone, no rule to score with: "
                             "save the model again with this pac_particles")
        return self._design(X) @ self.coef_ + self.intercept_

    def predict_proba(self, X):
        """Probabilities of ``classes_[0]`` and ``classes_[1]``: the rule's
        ``expit(proba_slope_ * decision_function(X))`` (format 1 of the
        posterior alone: :meth:`vote_probability`)."""
        if self.coef_ is None:
            p = self.vote_probability(X)
        else:
            p = calibrated_probability(self.decision_function(X),
                                       self.proba_slope_)
        return np.column_stack([1.0 - p, p])

    def predict(self, X):
        """``classes_[1]`` where the probability of the positive class is
        above 1/2 (where ``decision_function`` is positive)."""
        positive = self.predict_proba(X)[:, 1] > 0.5
        return self.classes_[positive.astype(int)]

    def vote_probability(self, X):
        """The randomised classifier's vote for ``classes_[1]``: the
        particles' weighted vote (ties count 1/2) or ``Phi(x~ . m /
        sqrt(x~' S x~))``."""
        if self.vote is None:
            raise InputError("this model file (format 1) holds the certified "
                             "rule alone, no posterior to vote with: save the "
                             "model again with this pac_particles")
        X = self._design(X)
        if self.vote["predictive"] == "gaussian":
            Z = np.hstack([X, np.ones((X.shape[0], 1))])
            return positive_probability(Z @ self.vote["mean"],
                                        row_variances(Z, self.vote["cov"]))
        scores = X @ self.vote["coef"].T + self.vote["intercept"]
        return ((scores > 0) + 0.5 * (scores == 0)) @ self.vote["weights"]


class SavedScorer(_SavedModel):
    """The scoring rule of a saved :class:`~pac_particles.sklearn.estimator.PACBayesAUC`
    fit (:func:`load_model`): its ``decision_function``, ``predict`` and
    ``predict_proba``, computed exactly as the estimator computes them.

    Attributes
    ----------
    feature_names : list of str, the input columns in order.
    classes_ : array of the two labels; ``classes_[1]`` is the positive one.
    coef_, intercept_ : ``decision_function = X @ coef_ + intercept_``.
    threshold_ : the cut on the raw score (for the record).
    proba_slope_ : ``predict_proba = expit(proba_slope_ * decision_function)``.
    fit : dict, what was fitted (method, lam, certificate, CSV options...).
    n_features_in_ : number of features.
    """

    def __init__(self, feature_names, classes, coef, intercept, threshold,
                 proba_slope, fit=None, format_version=FORMAT_VERSION):
        super().__init__(feature_names, classes, fit, format_version)
        self.coef_ = np.asarray(coef, dtype=float)
        self.intercept_ = float(intercept)
        self.threshold_ = float(threshold)
        self.proba_slope_ = float(proba_slope)

    def decision_function(self, X):
        """Scores ``X @ coef_ + intercept_``: positive where ``predict``
        says ``classes_[1]``."""
        return self._design(X) @ self.coef_ + self.intercept_

    def predict(self, X):
        """``classes_[1]`` where ``decision_function`` is positive."""
        positive = self.decision_function(X) > 0
        return self.classes_[positive.astype(int)]

    def predict_proba(self, X):
        """Probabilities of ``classes_[0]`` and ``classes_[1]``:
        ``expit(proba_slope_ * decision_function(X))``, as
        :meth:`PACBayesAUC.predict_proba <pac_particles.sklearn.estimator.PACBayesAUC.predict_proba>`."""
        p = calibrated_probability(self.decision_function(X),
                                   self.proba_slope_)
        return np.column_stack([1.0 - p, p])
