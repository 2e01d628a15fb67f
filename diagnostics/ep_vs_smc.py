"""Marginal posteriors of the first coefficients: SMC (histogram) against EP
(Gaussian), paper figures 1 and 4. Writes ep_vs_smc.png and ep_vs_smc.csv
(means, variances and the EP/SMC variance ratio of every coefficient).

    python diagnostics/ep_vs_smc.py --dataset pima [--quick]
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
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="small run (smoke test)")
    parser.add_argument("--out", default="results/diagnostics")
    args = parser.parse_args()
    X, y, names = load_dataset(args.dataset)
    lam = args.lam or float(len(y))
    n_particles, len_chain = ((50, 5) if args.quick
                              else (args.n_particles, args.len_chain))
    ep = EPLinear(X, y, lam).fit()
    model = AUCGibbsModel(X, y, lam)
    # SMC on its own (no draws from an EP-based proposal pooled in)
    post = run_smc(model, n_particles=n_particles, len_chain=len_chain,
                   seed=args.seed, verbose=not args.quick,
                   evidence="tempering")
    smc_var = np.diag(post.cov)
    ep_var = np.diag(ep.cov)
    names = names or [f"x{k + 1}" for k in range(X.shape[1])]
    kept = [names[k] for k in model.data.columns]
    k = min(args.coefficients, model.d)
    axes = plot_marginals(post.theta[:, :k], post.weights, names=kept[:k],
                          gaussians=(ep.mean, ep_var))
    os.makedirs(args.out, exist_ok=True)
    png = save(axes[0].figure, os.path.join(args.out, "ep_vs_smc.png"))
    table = np.column_stack([post.mean, smc_var, ep.mean, ep_var, ep_var / smc_var])
    np.savetxt(os.path.join(args.out, "ep_vs_smc.csv"), table, delimiter=",",
               header="smc_mean,smc_var,ep_mean,ep_var,var_ratio", comments="",
               fmt="%.6g")
    print(f"log Z: EP {ep.log_z:.3f}, SMC {post.log_z:.3f}")
    print(f"{'coefficient':14s} {'SMC mean':>9s} {'EP mean':>9s} {'EP/SMC var':>11s}")
    for name, row in zip(kept, table):
        print(f"{name:14s} {row[0]:9.4f} {row[2]:9.4f} {row[4]:11.3f}")
    print(f"figure: {png}")


if __name__ == "__main__":
    main()
