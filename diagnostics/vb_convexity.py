"""Convexity of the Gaussian VB objective in sigma [ARC16, Fig. 1].

The dissertation's Figure 1 plots the hinge-loss VB objective (family F1,
``rho = N(m, sigma^2 I)``) against ``sigma`` on the breast cancer data:
``lam E_rho[r_n^H] + KL(rho || N(0, nu^2 I))``, convex in ``sigma``. Here
the same curve from the library's objective
(:func:`pac_particles.bounds.vb_objective_in_sigma`), at the mean of an F1
fit of :class:`pac_particles.approx.classification_vb.ClassificationVB` with the defaults of
[ARC16, Cor. 13, 15] (``lam = sqrt(nd)``, ``nu = 1/sqrt(d)``, standardised
inputs, intercept), for the hinge loss (the figure), the exponential loss
(also convex) and the 0-1 loss (for contrast), with its two terms and the
fitted ``sigma``. Prints, per loss, the fit's ``sigma``, the grid's
minimiser and whether the slopes are non-decreasing on the grid. Writes
vb_convexity.png.

    python diagnostics/vb_convexity.py [--out docs/figures] [--quick]
"""
import argparse
import os

import matplotlib.pyplot as plt
import numpy as np

from pac_particles.bounds import vb_objective_in_sigma
from pac_particles.problem.datasets import load_dataset
from pac_particles.apps.plots import save
from pac_particles.approx.classification_vb import ClassificationVB

LOSSES = ("hinge", "exponential", "zero_one")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--points", type=int, default=300,
                        help="grid points in sigma")
    parser.add_argument("--quick", action="store_true", help="small run (smoke test)")
    parser.add_argument("--out", default="results/diagnostics")
    args = parser.parse_args()
    X, y, _ = load_dataset("breast_cancer")
    if args.quick:
        X, y, args.points = X[:150], y[:150], 40
    fig, axes = plt.subplots(1, len(LOSSES), figsize=(13, 3.8))
    for ax, loss in zip(axes, LOSSES):
        vb = ClassificationVB(X, y, loss=loss, family="isotropic")
        fit = vb.fit()
        sigma_hat = float(np.sqrt(fit.cov[0, 0]))
        nu = float(np.sqrt(vb.prior_var))
        grid = np.linspace(0.02, 3.0, args.points) * nu
        profile = vb_objective_in_sigma(vb, grid)
        print(f"{loss:12s} lam {vb.lam:.4g}, nu {nu:.4g}: fitted sigma "
              f"{sigma_hat:.4g}, grid minimiser {profile.argmin:.4g}, "
              f"convex on the grid: {profile.is_convex()}")
        ax.plot(grid, profile.objective, "k-", lw=2, label="objective")
        ax.plot(grid, profile.lam * profile.expected_risk, "--",
                label=r"$\lambda\,E_\rho[r_n]$")
        ax.plot(grid, profile.kl, ":", label=r"KL$(\rho\,\|\,\pi)$")
        ax.axvline(sigma_hat, color="C3", lw=1,
                   label=rf"F1 fit $\hat\sigma$ = {sigma_hat:.3g}")
        ax.set_xlabel(r"$\sigma$  ($\rho = N(\hat m, \sigma^2 I)$)")
        ax.set_title(f"{loss}: convex on the grid: {profile.is_convex()}")
        ax.set_ylim(0, 3 * float(profile.objective.min()))
        ax.legend(fontsize=8)
    axes[0].set_ylabel("VB objective")
    fig.suptitle(f"Breast cancer (n = {len(y)}): VB objective in sigma "
                 f"at the fitted mean [ARC16, Fig. 1]", fontsize=10)
    print("figure:", save(fig, os.path.join(args.out, "vb_convexity.png")))


if __name__ == "__main__":
    main()
