"""Posterior decision boundaries of a kernel classifier under label noise
[GH01, Fig. 3].

A 2-d toy set of m = 76 points (scikit-learn's two moons, noise 0.25), an
RBF kernel (squared exponential, lengthscale 1 on standardised inputs),
the 0-1 Gibbs posterior of the GP latent scores at lam = n log((1 - q) / q)
for assumed label-noise levels q = 0 (approximated by q = 0.001), 0.1 and
0.2, sampled by waste-free SMC with the exact ellipse move on the latent
scores. 50 classifiers drawn from each posterior (resampled by weight) are
drawn as their zero level sets ``k(x, X) K^-1 s = 0``. Writes
kgs_boundaries.png.

    python diagnostics/kgs_boundaries.py [--quick]
"""
import argparse
import os

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_moons

from pac_particles.sklearn.committee import Committee
from pac_particles.core.kernels import SquaredExponential
from pac_particles.smc.label_noise import lam_from_label_noise
from pac_particles.smc.models import GPClassificationModel
from pac_particles.smc.moves import ExactEllipseGibbs
from pac_particles.apps.plots import save
from pac_particles.smc.posterior import run_smc


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="small run (smoke test)")
    parser.add_argument("--out", default="results/diagnostics")
    args = parser.parse_args()
    X, y = make_moons(76, noise=0.25, random_state=args.seed)
    size = dict(n_particles=30, len_chain=4) if args.quick else dict(
        n_particles=300, len_chain=10)
    lo, hi = X.min(axis=0) - 0.5, X.max(axis=0) + 0.5
    g1, g2 = np.meshgrid(np.linspace(lo[0], hi[0], 120),
                         np.linspace(lo[1], hi[1], 120))
    grid = np.column_stack([g1.ravel(), g2.ravel()])
    fig, axes = plt.subplots(1, 3, figsize=(13, 4.5))
    rng = np.random.default_rng(args.seed)
    for ax, (label, q) in zip(axes, [("q = 0", 0.001), ("q = 0.1", 0.1),
                                     ("q = 0.2", 0.2)]):
        model = GPClassificationModel(X, y, lam=lam_from_label_noise(q, len(y)),
                                      kernel=SquaredExponential(1.0))
        post = run_smc(model, move=ExactEllipseGibbs(model), seed=args.seed, **size)
        committee = Committee.from_posterior(post)
        draws = rng.choice(post.weights.size, size=50, p=post.weights)
        scores = committee.scores(grid)[:, draws]
        for k in range(50):
            ax.contour(g1, g2, scores[:, k].reshape(g1.shape), levels=[0.0],
                       colors="tab:blue", linewidths=0.6, alpha=0.5)
        ax.scatter(*X[y == 1].T, marker="o", facecolors="none",
                   edgecolors="k", s=30)
        ax.scatter(*X[y == 0].T, marker="x", color="k", s=30)
        print(f"{label}: log Z {post.log_z:.2f}, {post.n_steps} tempering "
              f"steps, training error of the vote "
              f"{np.mean(committee.decide(X) != (y == 1)):.3f}")
        ax.set_title(f"{label} (lam = {model.lam:.0f})")
        ax.set_xticks([])
        ax.set_yticks([])
    fig.suptitle("50 posterior decision boundaries, RBF kernel, 0-1 Gibbs "
                 "posterior (m = 76)")
    print("figure:", save(fig, os.path.join(args.out, "kgs_boundaries.png")))


if __name__ == "__main__":
    main()
