"""Coverage of an estimator's certificates where the population risk is known.

A certificate is a statement about a population risk; on simulated data
whose population risk has a closed form, its coverage can be counted, and a
coverage study is evidence only if it also *rejects* wrong variants of the
bound in a setting where the correct one is nearly tight. Here:

* :func:`gaussian_population` -- ``X | y ~ N(y shift, I)``: a linear score
  ``x . theta`` has population ``1 - AUC = Phi(-theta . shift / (sqrt(2)
  |theta|))`` (the score difference of a positive and a negative is
  ``N(theta . shift, 2 |theta|^2)``), :func:`population_auc_risk`;
* :func:`certificate_variants` -- for one fitted posterior, the bound of
  :func:`~pac_particles.bounds.certify` and of its wrong variants, each
  beside the population risk of the score it certifies: ``"m = n"`` (the
  rows of ``B`` taken as independent terms instead of ``min(n_pos,
  n_neg)``), ``"KL = 0"`` (the randomised score certified on ``B`` as if it
  had not seen ``B``), ``"no union"`` (every candidate at the whole
  ``delta``), for the all-rows deployed score (derandomised)
  ``"deployed, m = n"``, ``"deployed, no union"`` (its grid unpaid) and
  ``"deployed, KL = 0"`` (its prior moved onto ``w``, as if ``w`` had not
  seen ``B``), and for the certified deployed score (``deploy=
  "certified"``: the part-A score's test-set bound at ``delta``)
  ``"certified deployed, m = n"`` and ``"certified deployed, all rows"``
  (the test-set bound of ``B`` given to the all-rows score, which saw
  ``B``); ``"randomised route"`` counts the fits whose certificate took the
  randomised route (the only case where ``"no union"`` differs from a
  valid bound);
* :func:`coverage_p_value` -- the one-sided binomial test of "covers at
  ``1 - delta``".

Its test is tests/bounds/test_estimator_coverage.py (its figures, at
more samples, are in docs/benchmarks.md). :func:`logistic_population` is
the synthetic logistic data of the certificates table.
"""

import numpy as np
from scipy.special import ndtr
from scipy.stats import binomtest

from pac_particles.bounds.certificates import held_out_bound, kl_bound
from pac_particles.bounds.certification import (certificate_candidates,
                                                certificate_setting,
                                                certificate_stream)
from pac_particles.bounds.derandomised import derandomised_bound

__all__ = ["gaussian_population", "logistic_population", "population_auc_risk",
           "certificate_variants", "coverage_p_value", "VARIANTS"]

#: the variants :func:`certificate_variants` returns, the correct ones first
VARIANTS = ("correct", "deployed", "certified deployed", "m = n", "KL = 0",
            "no union", "deployed, m = n", "deployed, no union",
            "deployed, KL = 0", "certified deployed, m = n",
            "certified deployed, all rows")


def gaussian_population(n, pi, shift, rng):
    """``n`` points: labels Bernoulli(``pi``), ``X | y ~ N(y shift, I)``."""
    shift = np.asarray(shift, dtype=float)
    y = rng.random(n) < pi
    X = rng.normal(size=(n, shift.size)) + np.outer(y, shift)
    return X, y


def population_auc_risk(theta_raw, shift):
    """``Phi(-theta . shift / (sqrt(2) |theta|))`` for each row of
    ``theta_raw`` (coefficients on the raw inputs)."""
    theta_raw = np.atleast_2d(theta_raw)
    norms = np.maximum(np.linalg.norm(theta_raw, axis=1), 1e-300)
    return ndtr(-(theta_raw @ np.asarray(shift, float)) / (np.sqrt(2) * norms))


def _risk_of(candidate, data, shift, rng, draws):
    """Population risk of a candidate's score: a point, or the mean over
    ``draws`` draws of its Gaussian (Monte Carlo)."""
    if candidate.cov is None:
        theta = candidate.mean[None, :]
    else:
        theta = rng.multivariate_normal(candidate.mean, candidate.cov, draws)
    return float(np.mean(population_auc_risk(data.raw_linear(theta)[0],
                                             shift)))


def certificate_variants(posterior, problem, spec, shift, rng, draws=200):
    """``{variant: (bound, population risk of the score it certifies)}``
    (:data:`VARIANTS`, module docstring) for a posterior fitted on
    :func:`gaussian_population` rows."""
    data = problem.data
    found = certificate_candidates(posterior, problem, spec)
    risks = [_risk_of(c, data, shift, rng, draws) for c in found]
    out = {}

    def smallest(bounds):
        k = int(np.argmin(bounds))
        return float(bounds[k]), risks[k]

    out["correct"] = smallest([c.certificate.bound for c in found])
    wrong_m, wrong_kl, no_union = [], [], []
    for c in found:
        cert = c.certificate
        if cert.kl is None:
            wrong_m.append(held_out_bound(cert.empirical_randomized_risk,
                                          c.n_rows, cert.delta).bound)
            wrong_kl.append(cert.bound)
            no_union.append(held_out_bound(cert.empirical_randomized_risk,
                                           cert.m, spec.delta).bound)
        else:
            wrong_m.append(kl_bound(cert.empirical_randomized_risk, cert.kl,
                                    c.n_rows, cert.delta).bound)
            wrong_kl.append(kl_bound(cert.empirical_randomized_risk, 0.0,
                                     cert.m, cert.delta).bound)
            no_union.append(kl_bound(cert.empirical_randomized_risk, cert.kl,
                                     cert.m, spec.delta).bound)
    out["m = n"] = smallest(wrong_m)
    out["KL = 0"] = smallest(wrong_kl)
    out["no union"] = smallest(no_union)
    k = int(np.argmin([c.certificate.bound for c in found]))
    # (1, 0): counted as a "failure" exactly when the randomised route won
    out["randomised route"] = (0.0, float(found[k].cov is not None))
    # the deployed score, and its variants from the same margin rows
    _, mu_a, cov_a, rows, _ = certificate_setting(problem, spec)
    w = posterior.linear_coefficients(posterior.point_estimate(spec.point))
    u, s, sampled = rows.margins(w, cov_a, spec.max_pairs,
                                 np.random.default_rng(
                                     certificate_stream(spec.seed).spawn(2)[1]))
    S_inv = np.linalg.inv(cov_a)
    risk_w = float(population_auc_risk(data.raw_linear(w)[0], shift)[0])
    grid = len(spec.widths) * len(spec.margins)
    for name, m, delta, centre in (
            ("deployed", rows.m, spec.delta, mu_a),
            ("deployed, m = n", rows.y.size, spec.delta, mu_a),
            ("deployed, no union", rows.m, spec.delta * grid, mu_a),
            ("deployed, KL = 0", rows.m, spec.delta, w)):
        bound = derandomised_bound(u, s, sampled, w, centre, S_inv, m,
                                   min(delta, 0.999), spec.widths,
                                   spec.margins)[0]
        out[name] = (bound, risk_w)
    # deploy="certified": the part-A score, its test-set bound at delta
    part_a = found[0]
    r_a = part_a.certificate.empirical_randomized_risk
    out["certified deployed"] = (held_out_bound(r_a, rows.m,
                                                spec.delta).bound, risks[0])
    out["certified deployed, m = n"] = (held_out_bound(
        r_a, rows.y.size, spec.delta).bound, risks[0])
    out["certified deployed, all rows"] = (held_out_bound(
        min(max(rows.risk(rows.X @ w), 0.0), 1.0), rows.m,
        spec.delta).bound, risk_w)
    return out


def coverage_p_value(failures, repetitions, delta):
    """One-sided binomial test of "fails with probability at most
    ``delta``": ``P(Binomial(repetitions, delta) >= failures)``."""
    return float(binomtest(int(failures), int(repetitions), float(delta),
                           alternative="greater").pvalue)


def logistic_population(n, d=10, seed=0, prevalence=0.3):
    """``n`` rows of synthetic logistic data: ``X ~ N(0, I_d)``, ``P(y = 1 |
    x) = expit(x . beta + b)`` with ``beta ~ N(0, I_d / 2)`` drawn from
    ``seed`` and ``b`` the ``prevalence`` quantile's offset (about that
    share of positives)."""
    rng = np.random.default_rng(seed)
    beta = rng.normal(size=d) * np.sqrt(0.5)
    X = rng.normal(size=(n, d))
    logits = X @ beta
    offset = np.quantile(logits, 1.0 - prevalence)
    y = rng.random(n) < 1.0 / (1.0 + np.exp(-(logits - offset)))
    return X, y
