"""Positive-unlabelled classification by simulation: the symmetric ramp loss
makes the PU risk unbiased, the hinge loss does not [dPNS14, Sec. 3].

Two Gaussian classes ``N(+-sep e_1, I)`` in ``d`` dimensions, class prior
``pi``. A PU sample is ``n`` labelled positives plus ``n`` unlabelled points
of the mixture; the *fully labelled* sample is the same ``n`` unlabelled
points with their true labels. On each, :class:`PACBayesClassifier` fits
the Gibbs posterior of the ramp and of the hinge loss (``lam = 2n``, the PU
fit with ``pu_prior=pi``: the cost-sensitive risk ``(2 pi / n_P) sum_P
l(s) + (1 / n_U) sum_U l(-s) - pi`` of
:class:`~pac_particles.problem.risks.ClassificationRisk`), and every fit is scored by
its misclassification rate on a large test sample of the mixture, next to
the Bayes error (closed form: the optimal rule is linear here).

With ``l(u) + l(-u) = 1`` (ramp) the PU risk equals the
positive-vs-negative risk in expectation, so the PU fit approaches the fully
labelled one; the hinge adds ``pi E_P[l_h(s) + l_h(-s)]``, which exceeds
``2 pi`` once ``|s| > 1`` on positives and drags the rule towards calling
everything positive when ``pi`` is large. That is the posterior mean's own
cut (0, ``error_pu_own_cut``); the classifier deploys the cut of Platt's
sigmoid fitted to the PU labels by their case-control likelihood
(:func:`~pac_particles.sklearn.binary.platt_sigmoid`), which moves the
biased hinge rule back (``error_pu``).

Example
-------
::

    from lab.study.pu_classification import (format_pu_study,
                                                       pu_study)
    rows = pu_study(priors=(0.85,), sizes=(200,), n_repeats=2)
    print(format_pu_study(rows))

References
----------
[dPNS14] du Plessis, M. C., Niu, G. and Sugiyama, M. (2014). Analysis of
learning from positive and unlabeled data. NIPS 27 (Sections 3-4; the
notes ``pu_learning_and_svgd_notes.txt``, Section 1).
"""

import math

import numpy as np
from scipy.stats import norm

from pac_particles.core.checks import InputError, check_count, check_positive, check_pu_prior
from pac_particles.sklearn.classifier import PACBayesClassifier

__all__ = ["gaussian_pu_sample", "bayes_error", "pu_study",
           "summarise_pu_study", "format_pu_study"]

LOSSES = ("ramp", "hinge")


def _study_priors(priors):
    """The study's class priors, checked: each in (0, 1) (the unlabelled
    points need positives)."""
    checked = [check_pu_prior(pi) for pi in priors]
    if 0.0 in checked:
        raise InputError("pu_prior must be > 0: the unlabelled points "
                         "need positives")
    return checked

def gaussian_pu_sample(n, pi, rng, d=2, sep=2.0, n_test=20_000):
    """``X_labelled`` (n positives), ``X_unlabelled`` and their true labels
    (n points of the mixture), ``X_test``, ``y_test`` (``n_test`` points of
    the mixture)."""
    mean = np.zeros(d)
    mean[0] = sep

    def mixture(size, positive=None):
        y = (np.ones(size, dtype=bool) if positive
             else rng.random(size) < pi)
        return rng.normal(size=(size, d)) + np.where(y[:, None], mean,
                                                     -mean), y
    X_labelled, _ = mixture(n, positive=True)
    X_unlabelled, y_unlabelled = mixture(n)
    X_test, y_test = mixture(n_test)
    return X_labelled, X_unlabelled, y_unlabelled, X_test, y_test


def bayes_error(pi, sep):
    """Error of the optimal rule between ``N(+-sep e_1, I)`` with prior
    ``pi``: threshold ``t = log((1 - pi) / pi) / (2 sep)`` on ``x_1``."""
    t = math.log((1.0 - pi) / pi) / (2.0 * sep)
    return float(pi * norm.cdf(t - sep) + (1.0 - pi) * norm.cdf(-t - sep))


def pu_study(priors=(0.5, 0.7, 0.85), sizes=(200, 1000), n_repeats=5,
             methods=("vb",), d=2, sep=2.0, n_test=20_000, seed=0,
             n_particles=200, len_chain=10):
    """One row per (prior, size, repeat, method, loss) with the test errors
    of the fully labelled fit (``error_pn``), of the PU fit (``error_pu``:
    ``predict``, its Platt cut) and of the PU posterior mean's own cut 0
    (``error_pu_own_cut``), and the ``bayes_error``. Repeat r draws its
    data from ``default_rng(seed + r)``."""
    n_repeats = check_count(n_repeats, "n_repeats")
    check_positive(sep, "sep")
    for method in methods:
        if method not in ("vb", "smc"):
            raise InputError(f"methods must be 'vb' or 'smc', got {method!r}")
    rows = []
    for pi in _study_priors(priors):
        for n in sizes:
            n = check_count(n, "n", minimum=2)
            for r in range(n_repeats):
                rng = np.random.default_rng(seed + r)
                X_p, X_u, y_u, X_test, y_test = gaussian_pu_sample(
                    n, pi, rng, d=d, sep=sep, n_test=n_test)
                X_pu = np.vstack([X_p, X_u])
                y_pu = np.r_[np.ones(n, dtype=bool), np.zeros(n, dtype=bool)]
                for method in methods:
                    for loss in LOSSES:
                        kwargs = dict(method=method, loss=loss, lam=2.0 * n,
                                      n_particles=n_particles,
                                      len_chain=len_chain,
                                      random_state=seed + r)
                        pn = PACBayesClassifier(**kwargs).fit(X_u, y_u)
                        pu = PACBayesClassifier(pu_prior=pi,
                                                **kwargs).fit(X_pu, y_pu)
                        rows.append(dict(
                            pi=pi, n=n, repeat=r, method=method, loss=loss,
                            sep=sep, d=d, bayes_error=bayes_error(pi, sep),
                            error_pn=float(np.mean(pn.predict(X_test)
                                                   != y_test)),
                            error_pu=float(np.mean(pu.predict(X_test)
                                                   != y_test)),
                            error_pu_own_cut=float(np.mean(
                                (pu.decision_function(X_test)
                                 + pu.threshold_ > 0) != y_test))))
    return rows


def summarise_pu_study(rows):
    """(pi, n, method, loss) -> mean test errors over the repeats
    (``error_pn``, ``error_pu``, ``error_pu_own_cut``, ``bayes_error``,
    ``n_repeats``)."""
    groups = {}
    for row in rows:
        key = (row["pi"], row["n"], row["method"], row["loss"])
        groups.setdefault(key, []).append(row)
    return {key: dict(n_repeats=len(group),
                      bayes_error=group[0]["bayes_error"],
                      error_pn=float(np.mean([g["error_pn"] for g in group])),
                      error_pu=float(np.mean([g["error_pu"] for g in group])),
                      error_pu_own_cut=float(np.mean(
                          [g["error_pu_own_cut"] for g in group])))
            for key, group in groups.items()}


def format_pu_study(rows):
    """Markdown table of :func:`summarise_pu_study`: for each (pi, n,
    method) the Bayes error and the fully labelled / PU test errors of the
    ramp and hinge fits (PU: the posterior mean's own cut, then
    ``predict``'s)."""
    summary = summarise_pu_study(rows)
    lines = ["| pi | n | method | Bayes error | ramp, labelled | ramp, PU, "
             "own cut | ramp, PU | hinge, labelled | hinge, PU, own cut | "
             "hinge, PU |", "|---" * 10 + "|"]
    for (pi, n, method) in dict.fromkeys((k[0], k[1], k[2]) for k in summary):
        ramp, hinge = summary[(pi, n, method, "ramp")], summary[
            (pi, n, method, "hinge")]
        lines.append(f"| {pi:g} | {n} | {method} | {ramp['bayes_error']:.3f} | "
                     f"{ramp['error_pn']:.3f} | "
                     f"{ramp['error_pu_own_cut']:.3f} | "
                     f"{ramp['error_pu']:.3f} | {hinge['error_pn']:.3f} | "
                     f"{hinge['error_pu_own_cut']:.3f} | "
                     f"{hinge['error_pu']:.3f} |")
    return "\n".join(lines)


# ------------------------------------------------- the class prior, estimated
# The PU fits above are given the true pi; below, pi is estimated from the
# same simulated samples (:mod:`pac_particles.sklearn.pu_class_prior`) and the
# estimates and their bootstrap intervals are compared with the true pi.

from pac_particles.sklearn.pu_class_prior import METHODS as PRIOR_METHODS  # noqa: E402
from pac_particles.sklearn.pu_class_prior import estimate_pu_prior  # noqa: E402

__all__ += ["PRIOR_METHODS", "pu_prior_study", "summarise_pu_prior_study",
            "format_pu_prior_study"]


def pu_prior_study(priors=(0.2, 0.4, 0.6, 0.8), n=500, n_repeats=20,
                   n_bootstrap=100, level=0.95, methods=PRIOR_METHODS, d=2,
                   sep=2.0, seed=0):
    """One row per (prior, repeat, method): the estimate of ``pi`` from
    ``n`` labelled positives and ``n`` unlabelled points of
    :func:`gaussian_pu_sample`, its percentile-bootstrap interval at
    ``level`` (``n_bootstrap`` replicates), whether the interval covers the
    true ``pi`` (``covered``) and the unlabelled sample's own fraction of
    positives (``sample_pi``). Repeat r draws its data from
    ``default_rng(seed + r)`` and seeds the estimator with ``seed + r``."""
    n_repeats = check_count(n_repeats, "n_repeats")
    n = check_count(n, "n", minimum=2)
    check_positive(sep, "sep")
    methods = tuple(methods)
    for method in methods:
        if method not in PRIOR_METHODS:
            raise InputError(f"methods must be among {PRIOR_METHODS}, got "
                             f"{method!r}")
    rows = []
    for pi in _study_priors(priors):
        for r in range(n_repeats):
            rng = np.random.default_rng(seed + r)
            X_p, X_u, y_u, _, _ = gaussian_pu_sample(n, pi, rng, d=d, sep=sep,
                                                     n_test=1)
            X_pu = np.vstack([X_p, X_u])
            y_pu = np.r_[np.ones(n), np.zeros(n)]
            for method in methods:
                est = estimate_pu_prior(X_pu, y_pu, method=method,
                                        n_bootstrap=n_bootstrap, level=level,
                                        seed=seed + r)
                low, high = est.interval if est.interval else (est.pi, est.pi)
                rows.append(dict(pi=pi, n=n, repeat=r, method=method, sep=sep,
                                 d=d, sample_pi=float(y_u.mean()),
                                 estimate=est.pi, low=low, high=high,
                                 level=level, covered=bool(low <= pi <= high)))
    return rows


def summarise_pu_prior_study(rows):
    """(pi, n, method) -> mean and sd of the estimates, their RMSE about the
    true ``pi``, the intervals' coverage of it and mean width, and the
    number of repeats."""
    groups = {}
    for row in rows:
        groups.setdefault((row["pi"], row["n"], row["method"]), []).append(row)
    out = {}
    for (pi, n, method), group in groups.items():
        est = np.array([g["estimate"] for g in group])
        out[(pi, n, method)] = dict(
            n_repeats=len(group), level=group[0]["level"],
            mean=float(est.mean()), sd=float(est.std(ddof=1)) if len(est) > 1
            else 0.0, rmse=float(np.sqrt(np.mean((est - pi) ** 2))),
            coverage=float(np.mean([g["covered"] for g in group])),
            width=float(np.mean([g["high"] - g["low"] for g in group])),
            sample_pi=float(np.mean([g["sample_pi"] for g in group])))
    return out


def format_pu_prior_study(rows):
    """Markdown table of :func:`summarise_pu_prior_study`: estimated against
    true ``pi`` for each method, with the bootstrap intervals' coverage."""
    summary = summarise_pu_prior_study(rows)
    lines = ["| true pi | n | method | mean estimate | sd | RMSE | coverage "
             "| mean width | repeats |", "|---" * 9 + "|"]
    for (pi, n, method), s in summary.items():
        lines.append(f"| {pi:g} | {n} | {method} | {s['mean']:.3f} | "
                     f"{s['sd']:.3f} | {s['rmse']:.3f} | "
                     f"{s['coverage']:.2f} ({s['level']:.0%}) | "
                     f"{s['width']:.3f} | {s['n_repeats']} |")
    return "\n".join(lines)
