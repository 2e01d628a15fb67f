"""Coverage with power at the estimator level: on Gaussian class-conditionals
with few positives (the population AUC of a linear score in closed form,
lab.study.certificate_coverage), the estimator's certificates cover the
population risk of the score they certify at 1 - delta, and a wrong variant
of the bound fails, both judged by a one-sided binomial test. The figures
of docs/benchmarks.md are ``failures`` below at 30 and 20 samples."""

import dataclasses
import warnings

import numpy as np
import pytest

from lab.study.certificate_coverage import (certificate_variants,
                                           coverage_p_value,
                                           gaussian_population)
from pac_particles.problem.problem import GibbsProblem
from pac_particles.sklearn.binary import certificate_spec
from pac_particles.sklearn.estimator import PACBayesAUC

# "covers at 1 - delta" is rejected when P(Binomial(reps, delta) >= failures)
# is below this: a correct bound fails the test with probability < 0.001
ALPHA = 1e-3
DELTA = 0.02


def failures(method, reps, setting, seed=1, spec_changes=None, **kwargs):
    """Failures of each variant over ``reps`` fits of ``method``
    (``spec_changes``: fields of the certificate's spec to change)."""
    n, pi, d, lam = setting
    shift = np.zeros(d)
    shift[0] = 1.2 if d < 20 else 0.8
    rng = np.random.default_rng(seed)
    counts = {}
    for r in range(reps):
        X, y = gaussian_population(n, pi, shift, rng)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = PACBayesAUC(method=method, lam=lam, eps=DELTA,
                              random_state=r, **kwargs).fit(X, y)
        spec = dataclasses.replace(certificate_spec(est),
                                   **(spec_changes or {}))
        found = certificate_variants(est.posterior_,
                                     GibbsProblem.ranking(X, y, est.lam_),
                                     spec, shift, rng)
        for name, (bound, population) in found.items():
            counts[name] = counts.get(name, 0) + int(population > bound)
    return counts


# few positives (about 18 of 600): m = min(n_pos, n_neg) is what binds
FEW_POSITIVES = (600, 0.03, 5, 100.0)


def test_ep_certificates_cover_and_wrong_variants_fail():
    reps = 30
    counts = failures("ep", reps, FEW_POSITIVES)
    for correct in ("correct", "deployed"):
        assert coverage_p_value(counts[correct], reps, DELTA) > ALPHA
    # m = n takes the rows of B for independent terms: it fails
    assert coverage_p_value(counts["m = n"], reps, DELTA) < ALPHA


def test_kl_zero_fails_where_the_posterior_overfits_b():
    """d = 60 on 200 rows at lam = 5000: the randomised score fitted on
    every row is certified on B as if it had not seen B (KL = 0): it
    fails; the correct certificate (its KL paid) covers. The randomised
    route is offered from m = 1 on here (by default from m = 100)."""
    reps = 8
    counts = failures("ep", reps, (200, 0.5, 60, 5000.0), seed=4,
                      spec_changes=dict(randomised_min_m=1))
    assert coverage_p_value(counts["correct"], reps, DELTA) > ALPHA
    assert coverage_p_value(counts["KL = 0"], reps, DELTA) < ALPHA


@pytest.mark.parametrize("method, kwargs", [
    ("vb", {}), ("smc", dict(n_particles=40, len_chain=3))])
def test_vb_and_smc_certificates_cover(method, kwargs):
    reps = 10
    counts = failures(method, reps, FEW_POSITIVES, seed=2, **kwargs)
    for correct in ("correct", "deployed"):
        assert coverage_p_value(counts[correct], reps, DELTA) > ALPHA


def test_smc_certified_step_certificates_cover():
    """SMC's default ``cv_rule='certified'`` picks a tempering step by its
    certificate: the certificate of the step picked still covers."""
    reps = 6
    counts = failures("smc", reps, FEW_POSITIVES[:3] + ("cv",), seed=3,
                      grid_size=5, n_folds=2, n_particles=30, len_chain=3)
    assert coverage_p_value(counts["correct"], reps, DELTA) > ALPHA
