"""Figures: ROC curves and marginal posteriors.

All functions draw on a matplotlib ``Axes`` (created if not given) and return
it; :func:`save` writes a figure to a PNG. The non-interactive ``Agg`` backend
is used when no display is available.

Example
-------
::

    from pac_particles.plots import plot_roc, save
    ax = plot_roc(y_test, {"PAC-Bayes": s_pac, "logistic": s_logit})
    save(ax.figure, "roc.png")
"""

import os

import matplotlib

if not os.environ.get("DISPLAY"):
    matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from sklearn.metrics import roc_curve  # noqa: E402

from .auc import auc_risk, binary_labels  # noqa: E402

__all__ = ["plot_roc", "plot_marginals", "plot_cv_curve", "save"]


def _axes(ax, figsize=(5, 5)):
    if ax is None:
        _, ax = plt.subplots(figsize=figsize)
    return ax


def plot_roc(y, scores_by_name, ax=None, title="ROC curves"):
    """ROC curves of several scorers on the same labels, AUC in the legend."""
    ax = _axes(ax)
    positives = binary_labels(y)
    for name, scores in scores_by_name.items():
        fpr, tpr, _ = roc_curve(positives, scores)
        ax.plot(fpr, tpr, label=f"{name} (AUC {1 - auc_risk(scores, positives):.3f})")
    ax.plot([0, 1], [0, 1], color="grey", lw=0.8, ls=":")
    ax.set_xlabel("false positive rate")
    ax.set_ylabel("true positive rate")
    ax.set_title(title)
    ax.legend(loc="lower right")
    return ax


def plot_marginals(theta, weights, names=None, gaussians=None, axes=None,
                   bins=40):
    """Weighted histograms of the marginals of the first columns of ``theta``.

    ``gaussians``: optional ``(mean, var)`` arrays overlaid as densities
    (e.g. an EP or VB approximation).
    """
    k = theta.shape[1] if axes is None else len(axes)
    if axes is None:
        _, axes = plt.subplots(1, k, figsize=(4 * k, 3.2), squeeze=False)
        axes = axes[0]
    for j, ax in enumerate(axes):
        ax.hist(theta[:, j], bins=bins, weights=weights, density=True,
                alpha=0.6, label="SMC")
        if gaussians is not None:
            mean, var = gaussians
            grid = np.linspace(*ax.get_xlim(), 200)
            ax.plot(grid, np.exp(-0.5 * (grid - mean[j]) ** 2 / var[j])
                    / np.sqrt(2 * np.pi * var[j]), label="Gaussian approx.")
            ax.legend()
        ax.set_title(names[j] if names is not None else f"theta[{j}]")
    return axes


def plot_cv_curve(cv, ax=None):
    """Validation AUC vs ``gamma`` from :func:`pac_particles.selection.cv_lambda`:
    each fold's path, the mean over folds with a +/- 1 sd band, the chosen lam."""
    ax = _axes(ax, figsize=(6, 4))
    for k, (gammas, aucs) in enumerate(cv.fold_paths):
        ax.plot(gammas, aucs, color="grey", lw=0.7, alpha=0.6,
                label="folds" if k == 0 else None)
    ax.plot(cv.grid, cv.mean_auc, color="C0", label="mean over folds")
    ax.fill_between(cv.grid, cv.mean_auc - cv.std_auc, cv.mean_auc + cv.std_auc,
                    color="C0", alpha=0.2)
    ax.axvline(cv.best_lam, color="C3", ls="--", label=f"lam = {cv.best_lam:.4g}")
    ax.set_xscale("log")
    ax.set_xlabel("gamma = lam * tempering exponent")
    ax.set_ylabel("validation AUC")
    ax.legend()
    return ax


def save(fig, path):
    """Save ``fig`` as a PNG (folders created) and close it."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
