"""The package's public API: the names a user imports from
``pac_particles`` itself, and its version."""

import subprocess
import sys

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
