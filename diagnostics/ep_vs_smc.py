"""Marginal posteriors of the first coefficients: SMC (histogram) against EP
(Gaussian), paper figures 1 and 4. Writes ep_vs_smc.png and ep_vs_smc.csv
(means, variances and the EP/SMC variance ratio of every coefficient, for
every ``alpha``).

``--alpha``: the power of fractional (power) EP [Min04], one Gaussian per
value; the paper's Fig. 4 compares fractional EP with SMC on Pima.

    python diagnostics/ep_vs_smc.py --dataset pima [--quick]
    python diagnostics/ep_vs_smc.py --dataset pima --alpha 1 0.5 0.1
"""
import argparse
import os

import numpy as np

from pac_particles.problem.datasets import DATASETS, load_dataset
from pac_particles.approx.ep import EPLinear
from pac_particles.smc.models import AUCGibbsModel
from pac_particles.apps.plots import plot_marginals, save
from pac_particles.smc.posterior import run_smc


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dataset", default="pima", choices=sorted(DATASETS))
    parser.add_argument("--lam", type=float, default=None, help="default: n")
    parser.add_argument("--n-particles", type=int, default=500)
    parser.add_argument("--len-chain", type=int, default=20)
    parser.add_argument("--coefficients", type=int, default=3)
    parser.add_argument("--alpha", type=float, nargs="+", default=[1.0],
                        help="power-EP fractions in (0, 1] (1: plain EP)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="small run (smoke test)")
    parser.add_argument("--out", default="results/diagnostics")
    args = parser.parse_args()
    X, y, names = load_dataset(args.dataset)
    lam = args.lam or float(len(y))
    n_particles, len_chain = ((50, 5) if args.quick
                              else (args.n_particles, args.len_chain))
    eps = {alpha: EPLinear(X, y, lam, alpha=alpha).fit() for alpha in args.alpha}
    model = AUCGibbsModel(X, y, lam)
    # SMC on its own (no draws from an EP-based proposal pooled in)
    post = run_smc(model, n_particles=n_particles, len_chain=len_chain,
                   seed=args.seed, verbose=not args.quick,
                   evidence="tempering")
    smc_var = np.diag(post.cov)
    names = names or [f"x{k + 1}" for k in range(X.shape[1])]
    kept = [names[k] for k in model.data.columns]
    k = min(args.coefficients, model.d)
    axes = plot_marginals(post.theta[:, :k], post.weights, names=kept[:k],
                          gaussians={f"EP, alpha = {a:g}": (ep.mean, np.diag(ep.cov))
                                     for a, ep in eps.items()})
    os.makedirs(args.out, exist_ok=True)
    png = save(axes[0].figure, os.path.join(args.out, "ep_vs_smc.png"))
    columns, header = [post.mean, smc_var], ["smc_mean", "smc_var"]
    for a, ep in eps.items():
        columns += [ep.mean, np.diag(ep.cov), np.diag(ep.cov) / smc_var]
        header += [f"ep_mean_alpha{a:g}", f"ep_var_alpha{a:g}",
                   f"var_ratio_alpha{a:g}"]
    table = np.column_stack(columns)
    np.savetxt(os.path.join(args.out, "ep_vs_smc.csv"), table, delimiter=",",
               header=",".join(header), comments="", fmt="%.6g")
    print(f"log Z: SMC {post.log_z:.3f}, "
          + ", ".join(f"EP (alpha = {a:g}) {ep.log_z:.3f}" for a, ep in eps.items()))
    print(f"{'coefficient':14s} {'SMC mean':>9s} "
          + " ".join(f"{'EP mean':>9s} {'EP/SMC var':>11s}" for _ in eps))
    print(f"{'alpha':14s} {'':9s} " + " ".join(f"{a:>21g}" for a in eps))
    for j, name in enumerate(kept):
        print(f"{name:14s} {post.mean[j]:9.4f} "
              + " ".join(f"{ep.mean[j]:9.4f} {np.diag(ep.cov)[j] / smc_var[j]:11.3f}"
                         for ep in eps.values()))
    print(f"figure: {png}")


if __name__ == "__main__":
    main()
