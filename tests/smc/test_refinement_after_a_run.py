"""The importance refinement after a tempering run is one function
(``smc.posterior.with_refinement``), for run_smc's runs and for the step of
the path that the estimator's choice of lam by SMC keeps."""
import numpy as np
from builders import two_d_problem

from pac_particles.smc import posterior as smc_posterior
from pac_particles.smc.models import AUCGibbsModel
from pac_particles.smc.posterior import run_smc, with_refinement


def _recording(monkeypatch, module):
    """Replace ``module.with_refinement`` by a wrapper of the one function
    that records its posteriors and results."""
    calls = []

    def recording(post, model, n_draws, **kwargs):
        refined = with_refinement(post, model, n_draws, **kwargs)
        calls.append((post, model, n_draws, refined))
        return refined
    monkeypatch.setattr(module, "with_refinement", recording)
    return calls


def test_run_smc_refines_its_run_through_with_refinement(monkeypatch):
    X, y = two_d_problem(n=60, seed=2)
    calls = _recording(monkeypatch, smc_posterior)
    post = run_smc(AUCGibbsModel(X, y, lam=60.0, standardize=False),
                   n_particles=40, len_chain=5, seed=0, start="prior")
    assert len(calls) == 1 and calls[0][3].log_z == post.log_z
    # decided on a pilot: its draws counted beside the estimate's
    imp = post.importance
    assert imp.reliable and imp.earlier_draws == imp.n_draws == 200


def test_the_estimators_chosen_step_is_refined_as_run_smc_refines_a_run(
        monkeypatch):
    """lam='cv' with SMC (the certified rule): the chosen step of the path
    gets the piloted refinement of with_refinement, and the fit's posterior
    is its result; the same call again gives the same estimate."""
    from pac_particles.sklearn.estimator import PACBayesAUC
    from pac_particles.sklearn.methods import smc as smc_method
    X, y = two_d_problem(n=80, seed=5)
    calls = _recording(monkeypatch, smc_method)
    est = PACBayesAUC(method="smc", lam="cv", lam_max=400.0, n_folds=2,
                      grid_size=4, n_particles=30, len_chain=4,
                      random_state=0, n_jobs=1).fit(X, y)
    assert len(calls) == 1
    step, model, n_draws, refined = calls[0]
    assert est.posterior_ is refined
    assert step.start == "prior" and step.lam == est.lam_
    imp = refined.importance
    if imp.reliable:            # a pilot decided, fresh draws estimate
        assert imp.earlier_draws == imp.n_draws == n_draws
        assert refined.log_z == imp.log_z
    else:                       # the pilot's own draws, not used
        assert refined.log_z == step.log_z
    again = with_refinement(step, model, n_draws, seed=0)
    assert again.log_z == refined.log_z
    np.testing.assert_array_equal(again.weights, refined.weights)
