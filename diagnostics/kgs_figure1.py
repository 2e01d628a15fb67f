"""The log posterior on the sphere with label noise [GH01, Fig. 1], with the
draws of the kernel Gibbs sampler on it.

Data in R^3 (:func:`pac_particles.smc.kernel_gibbs_sampler.sphere_data`: unit
vectors, uniform on the sphere by default, labelled by ``w* = (0, 1, 0)``,
i.e. longitude pi/2 on the equator, with a fraction ``q`` of the labels
flipped) for three sample sizes, m = 10, 100 and 1000 (the paper's panels
are m = 10 and 1000), q = 0.2. Each panel maps the log posterior density under the
uniform prior (the label-noise log likelihood [GH01, Eq. (3)], up to the log
evidence) over longitude and latitude (Mollweide projection) and overlays
draws of 4 KGS chains (primal form), one colour per chain, and ``w*``.
Small m gives a multi-modal posterior; large m concentrates it near ``w*``.
A typical draw of 10 points gives one dominant mode, so the smallest panel's
data set is chosen as the paper's figure shows one
(:func:`lab.study.kgs_sphere.multimodal_seed`): the first seed from
``--seed`` whose second mode holds ``--second-mode`` of the posterior mass
(0: the seed as given). Prints the modes' shares, the chains' R-hat and ESS
(no ArviZ needed). Writes kgs_figure1.png.

    python diagnostics/kgs_figure1.py [--quick] [--inputs gh01]
"""
import argparse
import os
import sys

import matplotlib.pyplot as plt
import numpy as np

from pac_particles.smc.kernel_gibbs_sampler import KernelGibbsSampler, sphere_data
from pac_particles.apps.plots import save
# lab/ sits beside the package (outside the wheel): found from a checkout
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from lab.study.kgs_sphere import multimodal_seed, posterior_modes, sphere_grid


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--q", type=float, default=0.2, help="label-flip rate")
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--inputs", choices=["uniform", "gh01"], default="uniform",
                        help="inputs uniform on the sphere, or the paper's "
                             "Beta longitudes and latitudes")
    parser.add_argument("--second-mode", type=float, default=0.1,
                        help="share of the posterior mass the second mode of "
                             "the smallest panel must hold (0: no choice)")
    parser.add_argument("--quick", action="store_true", help="small run (smoke test)")
    parser.add_argument("--out", default=os.path.join("docs", "figures"))
    args = parser.parse_args()
    n_lon, n_lat, n_draws = (90, 45, 50) if args.quick else (360, 180, 500)
    grid = sphere_grid(n_lon, n_lat)
    fig = plt.figure(figsize=(6.0 * len(args.sizes), 4.6))
    for k, m in enumerate(args.sizes):
        seed = args.seed + k
        if k == 0 and args.second_mode > 0:
            seed, _ = multimodal_seed(m, args.q, min_share=args.second_mode,
                                      inputs=args.inputs, start=seed,
                                      grid=sphere_grid(180, 90))
        X, y = sphere_data(m, args.q, seed=seed, inputs=args.inputs)
        kgs = KernelGibbsSampler(X, y, q=args.q)
        log_post = kgs.log_likelihood(grid.centres)
        modes = posterior_modes(log_post, grid.area)
        chains = kgs.sample(n_draws=n_draws, n_chains=4, burn_in=100, thin=2,
                            seed=seed)
        lon, lat = grid.lon, grid.lat
        ax = fig.add_subplot(1, len(args.sizes), k + 1, projection="mollweide")
        mesh = ax.pcolormesh(lon, lat, log_post - log_post.max(),
                             cmap="viridis", shading="flat", rasterized=True)
        fig.colorbar(mesh, ax=ax, orientation="horizontal", fraction=0.05,
                     pad=0.08, label="log posterior - its maximum")
        for chain, colour in zip(chains.coef, ["tab:red", "tab:orange",
                                               "white", "tab:pink"]):
            ax.scatter(np.arctan2(chain[:, 1], chain[:, 0]),
                       np.arcsin(np.clip(chain[:, 2], -1, 1)), s=3,
                       color=colour, alpha=0.6, linewidths=0)
        ax.plot([np.pi / 2], [0.0], marker="o", markersize=12, fillstyle="none",
                color="k", markeredgewidth=1.5, linestyle="none")
        ax.set_xticklabels([])
        ax.grid(alpha=0.3)
        shares = ", ".join(f"{mode.share:.2f}" for mode in modes[:3])
        # grid cells resolve the arrangement's cells at small m only
        second = (f"{sum(mode.share >= 0.01 for mode in modes)} modes of 1% "
                  f"of the mass or more ({shares}), " if k == 0 else
                  "log posterior, ")
        ax.set_title(f"({'abcdef'[k % 6]}) m = {m}, q = {args.q:g}, data seed "
                     f"{seed}\n{second}4 x {n_draws} KGS draws, w* (circle)",
                     fontsize=9, pad=12)
        summary = chains.summary()
        print(f"m = {m} (seed {seed}): {len(modes)} modes on the grid, "
              f"shares {[round(mode.share, 3) for mode in modes[:5]]}; "
              f"lam = {kgs.lam:.1f}, R-hat max {summary['rhat_max_w']:.3f}, "
              f"bulk ESS min {summary['ess_bulk_min_w']:.0f} of "
              f"{4 * n_draws} draws, mean training error "
              f"{chains.training_error.mean():.3f}, {chains.wall_time:.2f} s")
    print("figure:", save(fig, os.path.join(args.out, "kgs_figure1.png")))


if __name__ == "__main__":
    main()
