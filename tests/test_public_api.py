"""The package's public API: the names a user imports from
``pac_particles`` itself, and its version."""

import subprocess
import sys

import pytest

import pac_particles


def test_the_estimators_sampler_models_and_version_import_from_the_package():
    from pac_particles import (AUCGibbsModel, PACBayesAUC,
                               PACBayesClassifier, __version__, run_smc)
    from pac_particles.sklearn.estimator import PACBayesAUC as defined
    assert PACBayesAUC is defined
    assert callable(run_smc) and AUCGibbsModel.__name__ == "AUCGibbsModel"
    assert PACBayesClassifier().get_params()["method"]
    assert __version__.count(".") == 2


def test_every_public_name_resolves_and_unknown_names_raise():
    for name in pac_particles.__all__:
        assert getattr(pac_particles, name) is not None
    try:
        pac_particles.NotAName
    except AttributeError as error:
        assert "NotAName" in str(error)
    else:
        raise AssertionError("an unknown name resolved")


def test_importing_the_package_loads_no_heavy_module():
    """``import pac_particles`` (and so the command line's ``--help``)
    does not import numba, scipy or scikit-learn: names load on use."""
    code = ("import sys, pac_particles; "
            "print(sorted(m for m in ('numba', 'scipy', 'sklearn', "
            "'particles') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True,
                         text=True, check=True).stdout.strip()
    assert out == "[]"


#: the imports the documentation of the flat layout showed (before the
#: layered subpackages): each keeps working, as the same objects
FLAT_LAYOUT_IMPORTS = [
    ("pac_particles.posterior", "run_smc", "pac_particles.smc.posterior"),
    ("pac_particles.kernels", "SquaredExponential", "pac_particles.core.kernels"),
    ("pac_particles.estimator", "PACBayesAUC", "pac_particles.sklearn.estimator"),
    ("pac_particles.estimator", "PACBayesClassifier", "pac_particles.sklearn.classifier"),
    ("pac_particles.vb", "ClassificationVB",
     "pac_particles.approx.classification_vb"),
    ("pac_particles.theorem_hyperparameters", "theorem_2_3",
     "pac_particles.bounds.theorem_hyperparameters"),
    ("pac_particles.pu_class_prior", "estimate_pu_prior",
     "pac_particles.sklearn.pu_class_prior"),
    ("pac_particles.priors", "SquaredExponential", "pac_particles.core.kernels"),
    ("pac_particles.moves", "ExactEllipseGibbs", "pac_particles.smc.moves"),
    ("pac_particles.models", "GPAUCModel", "pac_particles.smc.models"),
    ("pac_particles.models", "RobustAdaptiveTempering", "pac_particles.smc.tempering"),
    ("pac_particles.model_file", "load_model", "pac_particles.sklearn.model_file"),
    ("pac_particles.label_noise", "label_noise_evidence_curve",
     "pac_particles.smc.label_noise"),
    ("pac_particles.kernel_gibbs_sampler", "KernelGibbsSampler",
     "pac_particles.smc.kernel_gibbs_sampler"),
    ("pac_particles.data", "load_dataset", "pac_particles.problem.datasets"),
    ("pac_particles.committee", "Committee", "pac_particles.sklearn.committee"),
    ("pac_particles.selection", "cv_lambda", "pac_particles.sklearn.selection"),
    ("pac_particles.ep", "EPLinear", "pac_particles.approx.ep"),
    ("pac_particles.ep.base", "lam_path_scores", "pac_particles.approx.ep.base"),
]


@pytest.mark.parametrize("old, name, new", FLAT_LAYOUT_IMPORTS)
def test_the_import_paths_of_the_flat_layout_keep_working(old, name, new):
    import importlib
    assert getattr(importlib.import_module(old), name) is getattr(
        importlib.import_module(new), name)


def test_an_old_module_path_is_the_new_module_itself():
    import importlib
    import pac_particles.smc.models as new
    old = importlib.import_module("pac_particles.models")
    assert old is new and new.__spec__.name == "pac_particles.smc.models"
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("pac_particles.no_such_module")


#: names that left a module for the one of their concept: (old module,
#: name, new module)
MOVED_NAMES = [
    ("pac_particles.sklearn.selection.scorers", "cv_lambda",
     "pac_particles.sklearn.selection.folds"),
    ("pac_particles.bounds.ranking", "prior_split",
     "pac_particles.bounds.certification"),
    ("pac_particles.smc.models", "lam_from_label_noise",
     "pac_particles.smc.label_noise"),
    ("pac_particles.smc.models", "label_noise_from_lam",
     "pac_particles.smc.label_noise"),
]


@pytest.mark.parametrize("old, name, new", MOVED_NAMES)
def test_a_moved_name_still_resolves_with_a_warning_naming_its_new_home(
        old, name, new):
    import importlib
    with pytest.warns(DeprecationWarning, match=f"use {new}.{name}"):
        found = getattr(importlib.import_module(old), name)
    assert found is getattr(importlib.import_module(new), name)
