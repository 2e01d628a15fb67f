"""SVGD on the smoothed Gibbs posterior against tempering SMC on the exact
one: coefficients, point estimates, test AUC and time.

:func:`compare_with_smc` puts an :class:`~pac_particles.approx.svgd.SVGDResult`
[LW16] and an :class:`~pac_particles.smc.posterior.SMCPosterior` [RACL14]
fitted on the same training data side by side (``scripts/svgd_vs_smc.py``);
:func:`format_comparison` prints them.

Example
-------
::

    from pac_particles.smc.posterior import run_smc
    from pac_particles.approx.svgd import SVGD
    from pac_particles.smc.models import AUCGibbsModel
    from lab.study import compare_with_smc, format_comparison
    sv = SVGD(X_train, y_train, lam=len(y_train), seed=0).fit()
    smc = run_smc(AUCGibbsModel(X_train, y_train, lam=len(y_train)), seed=0)
    print(format_comparison(*compare_with_smc(sv, smc, X_test, y_test)))

References
----------
[LW16] Liu, Q. and Wang, D. (2016). Stein variational gradient descent: a
general purpose Bayesian inference algorithm. NIPS 29.
[RACL14] Ridgway, J., Alquier, P., Chopin, N. and Liang, F. (2014).
PAC-Bayesian AUC classification and scoring. NIPS 27.
"""

import numpy as np

from pac_particles.problem.auc import auc_risk
from pac_particles.core.checks import InputError

__all__ = ["compare_with_smc", "format_comparison"]


def _cosine(a, b):
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def compare_with_smc(svgd_result, smc_posterior, X_test, y_test,
                     feature_names=None):
    """Compare an SVGD fit with an SMC posterior fitted on the same data.

    Both must share the training preprocessing (same ``X_train``, same
    ``standardize``), so that coefficients are comparable. ``X_test`` is raw
    (it goes through ``data.transform``); ``feature_names`` name the raw
    columns (default: those of the SVGD data).

    Returns
    -------
    coefficients : list of dict, one per feature: ``feature``,
        ``svgd_mean``, ``smc_mean``, ``svgd_bayes_point``,
        ``smc_bayes_point``.
    summary : dict with ``cosine_mean``, ``cosine_bayes_point`` (cosines of
        the two methods' estimates), test AUCs ``svgd_auc_bayes_point``,
        ``smc_auc_bayes_point``, ``svgd_auc_mean``, ``smc_auc_mean``, their
        differences ``auc_diff_*`` (SVGD - SMC), wall times and
        ``time_ratio`` (SVGD / SMC), ``svgd_n_iter``, ``svgd_converged``.
    """
    sv, sm = svgd_result, smc_posterior
    if sv.theta.shape[1] != sm.theta.shape[1]:
        raise InputError(f"SVGD has d = {sv.theta.shape[1]}, SMC has d = "
                         f"{sm.theta.shape[1]}: fit both on the same data")
    if feature_names is not None:
        names = [feature_names[k] for k in sv.data.columns]
    else:
        names = list(sv.data.feature_names)
    coefficients = [
        dict(feature=name, svgd_mean=float(a), smc_mean=float(b),
             svgd_bayes_point=float(c), smc_bayes_point=float(e))
        for name, a, b, c, e in zip(names, sv.mean, sm.mean, sv.bayes_point,
                                    sm.bayes_point)]
    summary = dict(cosine_mean=_cosine(sv.mean, sm.mean),
                   cosine_bayes_point=_cosine(sv.bayes_point, sm.bayes_point))
    for point in ("bayes_point", "mean"):
        auc_sv = 1.0 - auc_risk(sv.score(X_test, point=point), y_test)
        auc_sm = 1.0 - auc_risk(sm.score(X_test, point=point), y_test)
        summary[f"svgd_auc_{point}"] = auc_sv
        summary[f"smc_auc_{point}"] = auc_sm
        summary[f"auc_diff_{point}"] = auc_sv - auc_sm
    summary.update(svgd_wall_time=sv.wall_time, smc_wall_time=sm.wall_time,
                   time_ratio=sv.wall_time / sm.wall_time,
                   svgd_n_iter=sv.n_iter, svgd_converged=sv.converged)
    return coefficients, summary


def format_comparison(coefficients, summary):
    """Plain-text table of :func:`compare_with_smc`'s output."""
    lines = [f"{'feature':<16}{'SVGD mean':>11}{'SMC mean':>11}"
             f"{'SVGD bp':>11}{'SMC bp':>11}"]
    for row in coefficients:
        lines.append(f"{row['feature'][:15]:<16}{row['svgd_mean']:>11.4f}"
                     f"{row['smc_mean']:>11.4f}{row['svgd_bayes_point']:>11.4f}"
                     f"{row['smc_bayes_point']:>11.4f}")
    s = summary
    lines += [
        "",
        f"cosine of means {s['cosine_mean']:.5f}   cosine of Bayes points "
        f"{s['cosine_bayes_point']:.5f}",
        f"test AUC (Bayes point)  SVGD {s['svgd_auc_bayes_point']:.4f}  SMC "
        f"{s['smc_auc_bayes_point']:.4f}  diff {s['auc_diff_bayes_point']:+.4f}",
        f"test AUC (mean)         SVGD {s['svgd_auc_mean']:.4f}  SMC "
        f"{s['smc_auc_mean']:.4f}  diff {s['auc_diff_mean']:+.4f}",
        f"wall time  SVGD {s['svgd_wall_time']:.2f} s ({s['svgd_n_iter']} "
        f"iterations, converged={s['svgd_converged']})  SMC "
        f"{s['smc_wall_time']:.2f} s  ratio SVGD/SMC {s['time_ratio']:.2f}",
    ]
    return "\n".join(lines)
