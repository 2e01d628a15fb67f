"""Positive-unlabelled classification by simulation: the symmetric ramp loss
makes the PU risk unbiased, the hinge loss does not [dPNS14, Sec. 3].

Two Gaussian classes ``N(+-sep e_1, I)`` in ``d`` dimensions, class prior
``pi``. A PU sample is ``n`` labelled positives plus ``n`` unlabelled points
of the mixture; the *fully labelled* sample is the same ``n`` unlabelled
points with their true labels. On each, :class:`PACBayesClassifier` fits
the Gibbs posterior of the ramp and of the hinge loss (``lam = 2n``, the PU
fit with ``pu_prior=pi``: the cost-sensitive risk ``(2 pi / n_P) sum_P
l(s) + (1 / n_U) sum_U l(-s) - pi`` of
:class:`~pac_particles.risks.ClassificationRisk`), and every fit is scored by
its misclassification rate on a large test sample of the mixture, next to
the Bayes error (closed form: the optimal rule is linear here).

With ``l(u) + l(-u) = 1`` (ramp) the PU risk equals the
positive-vs-negative risk in expectation, so the PU fit approaches the fully
labelled one; the hinge adds ``pi E_P[l_h(s) + l_h(-s)]``, which exceeds
``2 pi`` once ``|s| > 1`` on positives and drags the rule towards calling
everything positive when ``pi`` is large.

Example
-------
::

    from pac_particles.study.pu_classification import (format_pu_study,
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

from ..checks import InputError, check_count, check_positive, check_pu_prior
from ..classifier import PACBayesClassifier

__all__ = ["gaussian_pu_sample", "bayes_error", "pu_study",
           "summarise_pu_study", "format_pu_study"]

LOSSES = ("ramp", "hinge")


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
    of the fully labelled fit (``error_pn``) and of the PU fit
    (``error_pu``), and the ``bayes_error``. Repeat r draws its data from
    ``default_rng(seed + r)``."""
    n_repeats = check_count(n_repeats, "n_repeats")
    check_positive(sep, "sep")
    for method in methods:
        if method not in ("vb", "smc"):
            raise InputError(f"methods must be 'vb' or 'smc', got {method!r}")
    rows = []
    for pi in priors:
        pi = check_pu_prior(pi)
        if pi == 0.0:
            raise InputError("pu_prior must be > 0: the unlabelled points "
                             "need positives")
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
                                                   != y_test))))
    return rows


def summarise_pu_study(rows):
    """(pi, n, method, loss) -> mean test errors over the repeats
    (``error_pn``, ``error_pu``, ``bayes_error``, ``n_repeats``)."""
    groups = {}
    for row in rows:
        key = (row["pi"], row["n"], row["method"], row["loss"])
        groups.setdefault(key, []).append(row)
    return {key: dict(n_repeats=len(group),
                      bayes_error=group[0]["bayes_error"],
                      error_pn=float(np.mean([g["error_pn"] for g in group])),
                      error_pu=float(np.mean([g["error_pu"] for g in group])))
            for key, group in groups.items()}


def format_pu_study(rows):
    """Markdown table of :func:`summarise_pu_study`: for each (pi, n,
    method) the Bayes error and the fully labelled / PU test errors of the
    ramp and hinge fits."""
    summary = summarise_pu_study(rows)
    lines = ["| pi | n | method | Bayes error | ramp, labelled | ramp, PU | "
             "hinge, labelled | hinge, PU |", "|---" * 8 + "|"]
    for (pi, n, method) in dict.fromkeys((k[0], k[1], k[2]) for k in summary):
        ramp, hinge = summary[(pi, n, method, "ramp")], summary[
            (pi, n, method, "hinge")]
        lines.append(f"| {pi:g} | {n} | {method} | {ramp['bayes_error']:.3f} | "
                     f"{ramp['error_pn']:.3f} | {ramp['error_pu']:.3f} | "
                     f"{hinge['error_pn']:.3f} | {hinge['error_pu']:.3f} |")
    return "\n".join(lines)
