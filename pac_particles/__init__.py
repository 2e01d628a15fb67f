"""pac_particles: PAC-Bayesian learning from Gibbs pseudo-posteriors with
Sequential Monte Carlo (an extension of ``particles``).

The public API, importable from the package itself::

    from pac_particles import PACBayesAUC
    est = PACBayesAUC().fit(X, y)        # ranking with a certified AUC
    est.certificate_.bound, est.coefficients_

* estimators (scikit-learn): :class:`PACBayesAUC` (ranking, AUC risk),
  :class:`PACBayesClassifier` (0-1, hinge, exponential, ramp losses);
* the sampler: :func:`run_smc` and its result :class:`SMCPosterior`;
* ``particles`` static models: :class:`AUCGibbsModel`,
  :class:`ClassificationGibbsModel`, :class:`GPAUCModel`,
  :class:`GPClassificationModel`, :func:`linear_score_model`, and
  :class:`RobustAdaptiveTempering`;
* approximations: :class:`EPLinear` (EP), :class:`GaussianVB` (VB);
* data: :func:`load_dataset`, :func:`load_csv`, :func:`auc_risk`;
* :class:`InputError`, raised on bad input (a ``ValueError``).

Names are loaded on first use (PEP 562), so ``import pac_particles`` and
the command line's ``--help`` stay fast.
"""

import importlib

__version__ = "0.1.0"

#: public name -> module that defines it
_EXPORTS = {
    "PACBayesAUC": "estimator",
    "PACBayesClassifier": "classifier",
    "run_smc": "posterior",
    "SMCPosterior": "posterior",
    "AUCGibbsModel": "models",
    "ClassificationGibbsModel": "models",
    "GPAUCModel": "models",
    "GPClassificationModel": "models",
    "linear_score_model": "models",
    "RobustAdaptiveTempering": "tempering",
    "EPLinear": "ep",
    "GaussianVB": "vb",
    "load_dataset": "data",
    "load_csv": "data",
    "auc_risk": "auc",
    "InputError": "checks",
}

__all__ = sorted(_EXPORTS) + ["__version__"]


def __getattr__(name):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'pac_particles' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value       # later lookups skip this function
    return value


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))
