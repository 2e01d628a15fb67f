"""Figures: ROC curves, the posterior of the score's direction, the tempering
path, marginal posteriors and sampler diagnostics.

All functions draw on a matplotlib ``Axes`` (created if not given) and return
it; :func:`save` writes a figure to a PNG, :func:`save_rows` (that is,
:func:`pac_particles.apps.tables.write_rows`) the numbers behind it to a CSV.
The non-interactive ``Agg`` backend is used when no display is available.

Example
-------
::

    from pac_particles.apps.plots import plot_roc, save
    ax = plot_roc(y_test, {"PAC-Bayes": s_pac, "logistic": s_logit})
    save(ax.figure, "roc.png")
"""

import os

import matplotlib

if not os.environ.get("DISPLAY"):
    matplotlib.use("Agg")
import matplotlib.lines  # noqa: E402
import matplotlib.patches  # noqa: E402
import matplotlib.ticker  # noqa: E402
import matplotlib.transforms  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from sklearn.metrics import roc_curve  # noqa: E402

from scipy import stats  # noqa: E402

from pac_particles.problem.auc import auc_risk  # noqa: E402
from pac_particles.problem.data import binary_labels  # noqa: E402
from pac_particles.core.weighted_particles import directions, weighted_quantiles  # noqa: E402
# the numbers behind a figure are written by the package's one table writer
from pac_particles.apps.tables import write_rows as save_rows  # noqa: E402

__all__ = ["plot_roc", "plot_directions", "plot_tempering_path",
           "plot_marginals", "plot_cv_curve", "plot_fitted_directions",
           "plot_adjusted_variance", "plot_boxplots_vs_k",
           "plot_spike_slab_path", "save", "save_rows"]


def _axes(ax, figsize=(5, 5)):
    if ax is None:
        _, ax = plt.subplots(figsize=figsize)
    return ax


#: line styles of successive curves, so that curves drawn over each other
#: stay visible (a dashed line over a solid one shows both)
_STYLES = ("-", "--", "-.", ":")


def plot_roc(y, scores_by_name, ax=None, title="ROC curves"):
    """ROC curves of several scorers on the same labels, AUC in the legend.

    Successive curves differ in colour, line style and width (the first the
    widest), so that one drawn over another stays visible; a curve equal to
    an earlier one (two scores that rank the rows alike) says so in the
    legend. The legend sits below the axes, where it hides no curve."""
    ax = _axes(ax, figsize=(5.5, 6))
    positives = binary_labels(y)
    drawn = []
    for k, (name, scores) in enumerate(scores_by_name.items()):
        fpr, tpr, _ = roc_curve(positives, scores)
        label = f"{name} (AUC {1 - auc_risk(scores, positives):.3f})"
        same = [other for other, (f, t) in drawn
                if f.shape == fpr.shape and np.array_equal(f, fpr)
                and np.array_equal(t, tpr)]
        if same:
            label += (": the curve above" if same[0] == drawn[-1][0]
                      else f": {same[0]}'s curve")
        ax.plot(fpr, tpr, color=f"C{k}", ls=_STYLES[k % len(_STYLES)],
                lw=max(2.6 - 0.7 * k, 1.0), label=label)
        drawn.append((name, (fpr, tpr)))
    ax.plot([0, 1], [0, 1], color="grey", lw=0.8, ls=":",
            label="chance (AUC 0.5)")
    ax.set_xlabel("false positive rate")
    ax.set_ylabel("true positive rate")
    ax.set_title(title)
    _legend_below(ax)
    return ax


def _legend_below(ax, ncol=1, handles=None, labels=None):
    """The legend under the axes (and their x label), where it cannot hide
    what is drawn."""
    extra = {} if handles is None else {"handles": handles, "labels": labels}
    # a fixed distance in points below the axes, whatever their height
    below = matplotlib.transforms.offset_copy(ax.transAxes, fig=ax.figure,
                                              y=-36, units="points")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, 0.0),
              bbox_transform=below, fontsize="small", ncol=ncol,
              frameon=False, **extra)


def plot_directions(directions, weights, names=None, ax=None, max_features=30,
                    title=None):
    """Posterior of the normalised direction ``theta_k / ||theta||`` per
    feature: one violin (weighted kernel density) per feature with its 50%
    and 95% weighted intervals and the posterior mean (the Bayes point),
    features sorted by the absolute mean.

    The AUC only sees the direction of a linear score, so these are the
    quantities the data inform; the raw coefficients' scale is set by the
    prior. On standardised features (the default of the models) the
    components are comparable feature importances.

    Parameters
    ----------
    directions : (N, d) unit-norm rows, e.g.
        :attr:`~pac_particles.core.weighted_particles.WeightedParticles.directions`.
    weights : (N,) normalised weights (equal weights for draws).
    names : feature names (default ``x1..xd``).
    ax : matplotlib Axes, optional.
    max_features : show the ``max_features`` largest by absolute mean.
    title : str, optional.

    Returns
    -------
    matplotlib Axes.
    """
    directions = np.atleast_2d(np.asarray(directions, dtype=float))
    weights = np.asarray(weights, dtype=float)
    d = directions.shape[1]
    names = list(names) if names is not None else [f"x{k + 1}" for k in range(d)]
    mean = weights @ directions
    shown = np.argsort(-np.abs(mean), kind="stable")[:max_features][::-1]
    ax = _axes(ax, figsize=(7, 1.2 + 0.45 * len(shown)))
    grid = np.linspace(-1.0, 1.0, 401)
    for row, k in enumerate(shown):
        col = directions[:, k]
        if np.ptp(col) > 0:
            density = stats.gaussian_kde(col, weights=weights)(grid)
            half = 0.42 * density / density.max()
            ax.fill_between(grid, row - half, row + half, color="C0", alpha=0.3,
                            lw=0)
        lo95, lo50, hi50, hi95 = weighted_quantiles(
            col, weights, [0.025, 0.25, 0.75, 0.975])
        ax.plot([lo95, hi95], [row, row], color="C0", lw=1.2)
        ax.plot([lo50, hi50], [row, row], color="C0", lw=4, solid_capstyle="butt")
        ax.plot(mean[k], row, "o", color="white", mec="C0", ms=5, zorder=3)
    ax.axvline(0.0, color="grey", lw=0.8, ls=":")
    ax.set_yticks(range(len(shown)))
    ax.set_yticklabels([names[k] for k in shown])
    ax.set_ylim(-0.6, len(shown) - 0.4)
    lo, hi = np.min(directions[:, shown]), np.max(directions[:, shown])
    pad = 0.05 * max(hi - lo, 0.1)
    ax.set_xlim(max(-1.0, lo - pad), min(1.0, hi + pad))
    ax.set_xlabel("theta_k / ||theta||  (normalised coefficient, standardised "
                  "features)")
    ax.set_ylabel("feature")
    key = [matplotlib.patches.Patch(color="C0", alpha=0.3, lw=0,
                                    label="posterior density"),
           matplotlib.lines.Line2D([], [], color="C0", lw=4,
                                   label="50% interval"),
           matplotlib.lines.Line2D([], [], color="C0", lw=1.2,
                                   label="95% interval"),
           matplotlib.lines.Line2D([], [], ls="", marker="o", color="white",
                                   mec="C0", ms=5, label="posterior mean")]
    _legend_below(ax, ncol=4, handles=key,
                  labels=[h.get_label() for h in key])
    ax.set_title(title or "posterior of the score direction: density, 50% / "
                 "95% intervals, mean", fontsize="medium")
    return ax


def plot_tempering_path(gammas, log_z_path, cv=None, ax=None, title=None):
    """The tempering path: ``log Z_t`` against ``gamma_t = lam * exponent_t``
    and, when a cross-validation result is given, the validation AUC along
    the same axis (right-hand scale).

    Parameters
    ----------
    gammas, log_z_path : (T + 1,) arrays, ``SMCPosterior.gammas`` and
        ``SMCPosterior.log_z_path`` (the point ``gamma = 0`` is left out of
        the log axis).
    cv : :class:`~pac_particles.sklearn.selection.LamCVResult`, optional: its mean
        validation AUC (+/- 1 sd) on the grid and the chosen ``lam``.
    ax : matplotlib Axes, optional.
    title : str, optional.

    Returns
    -------
    matplotlib Axes (of ``log Z``; the AUC axis is its twin).
    """
    ax = _axes(ax, figsize=(6.5, 4))
    gammas = np.asarray(gammas, dtype=float)
    log_z_path = np.asarray(log_z_path, dtype=float)
    on_axis = gammas > 0
    ax.plot(gammas[on_axis], log_z_path[on_axis], "o-", color="C0", ms=4,
            label="log Z (SMC)")
    ax.set_xscale("log")
    ax.set_xlabel("gamma = lam * tempering exponent")
    ax.set_ylabel("log evidence  log Z_gamma", color="C0")
    handles, labels = ax.get_legend_handles_labels()
    if cv is not None:
        twin = ax.twinx()
        twin.plot(cv.grid, cv.mean_auc, color="C1", label="CV AUC (mean over folds)")
        twin.fill_between(cv.grid, cv.mean_auc - cv.std_auc,
                          cv.mean_auc + cv.std_auc, color="C1", alpha=0.2)
        twin.axvline(cv.best_lam, color="C3", ls="--",
                     label=f"chosen lam = {cv.best_lam:.4g}")
        twin.set_ylabel("validation AUC", color="C1")
        more_handles, more_labels = twin.get_legend_handles_labels()
        handles, labels = handles + more_handles, labels + more_labels
    _legend_below(ax, ncol=2, handles=handles, labels=labels)
    ax.set_title(title or "tempering path")
    return ax


def plot_marginals(theta, weights, names=None, gaussians=None, axes=None,
                   bins=40):
    """Weighted histograms of the marginals of the first columns of ``theta``.

    ``gaussians``: optional ``(mean, var)`` arrays overlaid as densities
    (e.g. an EP or VB approximation), or a dict ``label -> (mean, var)``
    to overlay several (e.g. power EP at several ``alpha``).
    """
    if gaussians is not None and not isinstance(gaussians, dict):
        gaussians = {"Gaussian approx.": gaussians}
    k = theta.shape[1] if axes is None else len(axes)
    if axes is None:
        _, axes = plt.subplots(1, k, figsize=(4 * k, 3.2), squeeze=False)
        axes = axes[0]
    for j, ax in enumerate(axes):
        ax.hist(theta[:, j], bins=bins, weights=weights, density=True,
                alpha=0.6, label="SMC")
        if gaussians:
            grid = np.linspace(*ax.get_xlim(), 200)
            for label, (mean, var) in gaussians.items():
                ax.plot(grid, np.exp(-0.5 * (grid - mean[j]) ** 2 / var[j])
                        / np.sqrt(2 * np.pi * var[j]), label=label)
            ax.legend(fontsize=8)
        ax.set_title(names[j] if names is not None else f"theta[{j}]")
    return axes


#: x-axis labels of :func:`plot_cv_curve`: SMC scores its folds along one
#: tempering path, EP and VB fit once per grid value of lam
CV_XLABELS = {"path": "lam (gamma = lam_max * tempering exponent along "
                      "each fold's path)",
              "grid": "lam (one fit per grid value)"}


def plot_cv_curve(cv, ax=None, ylabel="validation AUC", along="path",
                  marks=None):
    """Validation score vs ``lam`` from :func:`pac_particles.sklearn.selection.cv_lambda`
    or :func:`~pac_particles.sklearn.selection.cross_validate_lam`: each fold's
    curve, the mean over folds with a +/- 1 sd band, and the chosen lam.

    Parameters
    ----------
    cv : :class:`~pac_particles.sklearn.selection.LamCVResult`.
    ax : matplotlib Axes, optional.
    ylabel : the validation score (``"validation accuracy"`` for a
        classifier).
    along : ``"path"`` (SMC: each fold's curve is scored along its
        tempering path) or ``"grid"`` (EP, VB: one fit per grid value);
        labels the x axis (:data:`CV_XLABELS`).
    marks : dict ``label -> lam``, optional: vertical lines; default the
        best mean, ``{"best mean: lam = ...": cv.best_lam}``.

    Returns
    -------
    matplotlib Axes.
    """
    ax = _axes(ax, figsize=(6.5, 5))
    if len(cv.fold_auc) == 1:
        # one curve (a leave-one-out criterion): no folds, no spread
        ax.plot(cv.grid, cv.mean_auc, color="C0", lw=2,
                label="leave-one-out")
    else:
        for k, (gammas, aucs) in enumerate(cv.fold_paths):
            ax.plot(gammas, aucs, color="grey", lw=0.7, alpha=0.6,
                    label="folds" if k == 0 else None)
        ax.plot(cv.grid, cv.mean_auc, color="C0", lw=2,
                label="mean over folds")
        ax.fill_between(cv.grid, cv.mean_auc - cv.std_auc,
                        cv.mean_auc + cv.std_auc, color="C0", alpha=0.2,
                        label="+- 1 sd over folds")
    if marks is None:
        marks = {f"best mean: lam = {cv.best_lam:.4g}": cv.best_lam}
    for k, (label, lam) in enumerate(marks.items()):
        ax.axvline(lam, color=("C3", "C2", "C4")[k % 3],
                   ls=("--", ":", "-.")[k % 3], label=label)
    ax.set_xscale("log")
    ax.set_xlabel(CV_XLABELS[along])
    ax.set_ylabel(ylabel)
    _legend_below(ax, ncol=2)
    return ax


def plot_fitted_directions(estimator, names=None, title=None, ax=None,
                           max_features=30):
    """:func:`plot_directions` of a fitted
    :class:`~pac_particles.sklearn.estimator.PACBayesAUC` with linear scores: SMC's
    weighted particles (in score space, the coefficients ``E[theta | w]``
    they stand for), or 2000 draws of EP's or VB's Gaussian, on the fit's
    standardised columns.

    ``names``: names of all the input columns (default the estimator's
    feature names); the plot shows the columns the fit kept.
    """
    draws, weights = estimator.coefficient_draws()
    names = list(names) if names is not None else estimator.feature_names()
    kept = estimator.kept_columns_
    return plot_directions(directions(draws), weights,
                           names=[names[k] for k in kept], ax=ax,
                           max_features=max_features, title=title)


def plot_adjusted_variance(k, adjusted_var, names=None, ax=None, title=None,
                           reference=None):
    """Adjusted variance of posterior-mean estimates against the number of
    MCMC steps K, one line per coefficient (SMC-AUC student report, figure 4).

    Parameters
    ----------
    k : (n_grid,) numbers of MCMC steps.
    adjusted_var : (n_grid, n_coefficients), e.g.
        ``RepeatedRuns.adjusted_variance`` of ``lab/study``
        (``K x var over runs / mean estimated posterior variance``).
    names : coefficient names (default ``theta[j]``).
    ax : matplotlib Axes, optional.
    title : str, optional.
    reference : tuple ``(label, values)``, optional: a dashed black line,
        e.g. ``("independent draws: K / N", k / N)`` (the adjusted variance
        of an average of N independent draws from the posterior).

    Returns
    -------
    matplotlib Axes (log-log axes; lower is better).
    """
    ax = _axes(ax, figsize=(6, 4))
    k = np.asarray(k)
    adjusted_var = np.atleast_2d(np.asarray(adjusted_var, dtype=float))
    for j in range(adjusted_var.shape[1]):
        ax.plot(k, adjusted_var[:, j], marker="o", ms=3, lw=1,
                label=names[j] if names is not None else f"theta[{j}]")
    if reference is not None:
        ax.plot(k, reference[1], color="black", ls="--", lw=1, label=reference[0])
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks(k)
    ax.set_xticklabels([str(v) for v in k])
    ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
    ax.set_xlabel("K (MCMC steps)")
    ax.set_ylabel("K x var(estimates) / mean posterior variance")
    if title:
        ax.set_title(title)
    ax.legend(fontsize="x-small", ncol=2)
    return ax


def plot_boxplots_vs_k(values_by_name, ax=None, ylabel="", title=None,
                       xlabel="K (MCMC steps)"):
    """Side-by-side box plots over independent runs, one group per K
    (SMC-AUC student report, figures 3 and 5).

    Parameters
    ----------
    values_by_name : dict ``name -> (k, values)``, ``k`` of shape (n_grid,)
        and ``values`` of shape (n_grid, n_runs) (e.g. ``log_z`` of
        ``RepeatedRuns`` of ``lab/study`` for standard and
        waste-free SMC). The grids may differ; NaNs are dropped.
    ax : matplotlib Axes, optional.
    ylabel, title, xlabel : str.

    Returns
    -------
    matplotlib Axes.
    """
    ax = _axes(ax, figsize=(7, 4))
    grid = sorted({int(v) for k, _ in values_by_name.values() for v in k})
    slot = {v: i for i, v in enumerate(grid)}
    n = max(1, len(values_by_name))
    width = 0.8 / n
    handles = []
    for m, (name, (k, values)) in enumerate(values_by_name.items()):
        values = np.atleast_2d(np.asarray(values, dtype=float))
        data = [row[np.isfinite(row)] for row in values]
        positions = [slot[int(v)] - 0.4 + width * (m + 0.5) for v in k]
        color = f"C{m}"
        parts = ax.boxplot(data, positions=positions, widths=0.9 * width,
                           patch_artist=True, manage_ticks=False,
                           flierprops={"marker": ".", "markersize": 3,
                                       "markeredgecolor": color})
        for box in parts["boxes"]:
            box.set(facecolor=color, alpha=0.5)
        for median in parts["medians"]:
            median.set(color="black")
        handles.append(matplotlib.patches.Patch(facecolor=color, alpha=0.5,
                                                label=name))
    ax.set_xticks(range(len(grid)))
    ax.set_xticklabels([str(v) for v in grid])
    ax.set_xlim(-0.6, len(grid) - 0.4)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    ax.legend(handles=handles, fontsize="small")
    return ax


def plot_spike_slab_path(v0, means, inclusion_probs, names=None, ep=None,
                         threshold=0.5, n_labels=6, axes=None):
    """Regularisation plot of a spike-and-slab posterior against the spike
    variance ``v0`` (Ridgway et al. 2014, figure 3).

    Left: posterior means against ``v0`` (log scale), filled circles where the
    posterior inclusion probability is at least ``threshold`` (the paper's
    blue circles), open circles elsewhere. Right: the inclusion probabilities.

    Parameters
    ----------
    v0 : (n_v0,) spike variances (> 0).
    means, inclusion_probs : (n_v0, d), e.g. from
        ``spike_slab_path`` of ``lab/study``.
    names : coefficient names (default ``theta[j]``).
    ep : tuple ``(v0, means, inclusion_probs)``, optional: an approximation
        (e.g. :class:`pac_particles.approx.ep.EPSpikeSlab`) overlaid as dashed lines
        of the same colours (its points with ``v0 = 0`` are left out of the
        log axis).
    threshold : float, inclusion probability of the filled circles.
    n_labels : int
        Colour and label the ``n_labels`` coefficients with the largest
        inclusion probability over the grid; the others are drawn in grey.
    axes : two matplotlib Axes, optional.

    Returns
    -------
    array of two matplotlib Axes.
    """
    if axes is None:
        _, axes = plt.subplots(1, 2, figsize=(11, 4.5))
    ax_mean, ax_prob = axes
    v0 = np.asarray(v0, dtype=float)
    means = np.atleast_2d(np.asarray(means, dtype=float))
    probs = np.atleast_2d(np.asarray(inclusion_probs, dtype=float))
    d = means.shape[1]
    names = names if names is not None else [f"theta[{j}]" for j in range(d)]
    highlighted = list(np.argsort(-probs.max(axis=0), kind="stable")[:n_labels])
    for j in sorted(range(d), key=lambda j: j in highlighted):  # colours on top
        if j in highlighted:
            color = f"C{highlighted.index(j) % 10}"
            lw, alpha, label = 1.2, 1.0, names[j]
        else:
            color, lw, alpha, label = "grey", 0.6, 0.5, None
        ax_mean.plot(v0, means[:, j], color=color, lw=lw, alpha=alpha, label=label)
        on = probs[:, j] >= threshold
        ax_mean.scatter(v0[on], means[on, j], s=18, color=color, alpha=alpha,
                        zorder=3)
        ax_mean.scatter(v0[~on], means[~on, j], s=10, facecolors="none",
                        edgecolors=color, lw=0.6, alpha=alpha, zorder=3)
        ax_prob.plot(v0, probs[:, j], color=color, lw=lw, alpha=alpha,
                     marker=".", ms=3, label=label)
        if ep is not None:
            ep_v0 = np.asarray(ep[0], dtype=float)
            shown = ep_v0 > 0
            ax_mean.plot(ep_v0[shown], np.asarray(ep[1])[shown, j], color=color,
                         lw=0.8 * lw, alpha=alpha, ls="--")
            ax_prob.plot(ep_v0[shown], np.asarray(ep[2])[shown, j], color=color,
                         lw=0.8 * lw, alpha=alpha, ls="--")
    ax_mean.axhline(0.0, color="grey", lw=0.6)
    ax_prob.axhline(threshold, color="grey", lw=0.6, ls=":")
    for ax in axes:
        ax.set_xscale("log")
        ax.set_xlabel("spike variance v0")
    ax_mean.set_ylabel("posterior mean")
    ax_mean.set_title(f"filled: inclusion probability >= {threshold:g}"
                      + ("; dashed: EP" if ep is not None else ""))
    ax_prob.set_ylabel("posterior inclusion probability")
    ax_prob.set_ylim(-0.02, 1.02)
    ax_mean.legend(fontsize="x-small")
    return np.asarray(axes)


def save(fig, path):
    """Save ``fig`` as a PNG (folders created) and close it."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.tight_layout()
    # "tight": a legend placed outside the axes stays in the file
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return path
