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
  :class:`GPClassificationModel`, :class:`ReducedRankGPAUCModel` (GP
  scores of Nystrom features), :func:`linear_score_model`, and
  :class:`RobustAdaptiveTempering`;
* approximations: :class:`EPLinear` (EP), :class:`GaussianVB` (VB);
* data: :func:`load_dataset`, :func:`load_csv`, :func:`auc_risk`;
* :class:`InputError`, raised on bad input (a ``ValueError``).

Names are loaded on first use (PEP 562), so ``import pac_particles`` and
the command line's ``--help`` stay fast.
"""

import importlib
import sys

__version__ = "0.1.0"

#: public name -> module that defines it
_EXPORTS = {
    "PACBayesAUC": "sklearn.estimator",
    "PACBayesClassifier": "sklearn.classifier",
    "run_smc": "smc.posterior",
    "SMCPosterior": "smc.posterior",
    "AUCGibbsModel": "smc.models",
    "ClassificationGibbsModel": "smc.models",
    "GPAUCModel": "smc.models",
    "GPClassificationModel": "smc.models",
    "ReducedRankGPAUCModel": "smc.reduced_rank_gp",
    "linear_score_model": "smc.models",
    "RobustAdaptiveTempering": "smc.tempering",
    "EPLinear": "approx.ep",
    "GaussianVB": "approx.vb",
    "load_dataset": "problem.datasets",
    "load_csv": "problem.datasets",
    "auc_risk": "problem.auc",
    "InputError": "core.checks",
}

__all__ = sorted(_EXPORTS) + ["__version__"]

#: module paths of the flat layout before the layered subpackages
#: (``pac_particles.models`` is now ``pac_particles.smc.models``): they stay
#: importable, as the same module objects, with a DeprecationWarning until
#: the next minor version (:mod:`pac_particles.core.compat`)
MOVED = {
    "auc": "problem.auc",
    "baselines": "sklearn.baselines",
    "certify": "bounds.certification",
    "checks": "core.checks",
    "classifier": "sklearn.classifier",
    "cli": "apps.cli",
    "committee": "sklearn.committee",
    "data": "problem.data",
    "ep": "approx.ep",
    "ep.loo": "approx.loo",
    "estimator": "sklearn.estimator",
    "gaussian": "core.gaussian",
    "gaussian_losses": "problem.gaussian_losses",
    "importance_evidence": "smc.importance_evidence",
    "inference_data": "core.inference_data",
    "kernel_gibbs_sampler": "smc.kernel_gibbs_sampler",
    "kernels": "core.kernels",
    "label_noise": "smc.label_noise",
    "model_file": "sklearn.model_file",
    "models": "smc.models",
    "moves": "smc.moves",
    "parallel": "core.parallel",
    "plots": "apps.plots",
    "posterior": "smc.posterior",
    "priors": "problem.priors",
    "probit_risk": "problem.probit_risk",
    "progress": "core.progress",
    "pu_class_prior": "sklearn.pu_class_prior",
    "results": "apps.tables",
    "risks": "problem.risks",
    "selection": "sklearn.selection",
    "single_run_variance": "smc.single_run_variance",
    "svgd": "approx.svgd",
    "tempering": "smc.tempering",
    "theorem_hyperparameters": "bounds.theorem_hyperparameters",
    "vb": "approx.vb",
    "weighted_particles": "core.weighted_particles",
}


def __getattr__(name):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'pac_particles' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value       # later lookups skip this function
    return value


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))


def moved_to(fullname):
    """The current name of a module path of the flat layout
    (``pac_particles.ep.base`` -> ``pac_particles.approx.ep.base``), or None."""
    return _FINDER.moved_to(fullname)


# the old module paths import with a DeprecationWarning; first on the path:
# a submodule of an old package path (pac_particles.ep.base) would otherwise
# load a second time under that name from its __path__
from pac_particles.core.compat import MovedModules  # noqa: E402

_FINDER = next((f for f in sys.meta_path if isinstance(f, MovedModules)
                and f.package == __name__), None)
if _FINDER is None:
    _FINDER = MovedModules(__name__, MOVED)
    sys.meta_path.insert(0, _FINDER)
