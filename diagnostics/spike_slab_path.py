"""Regularisation plot of the spike-and-slab AUC Gibbs posterior: posterior
means and inclusion probabilities against the spike variance v0 (Ridgway et
al. 2014, figure 3, there on DNA).

Prior prod_k [p N(0, v1) + (1 - p) N(0, v0)] on the standardised features
(v1 = 1, p = --p), lam = n, v0 on a log grid of --n-v0 points in
[--v0-min, --v0-max] = [1e-6, 0.1]. For each v0, one waste-free SMC run with
the spike-and-slab move (Gibbs z | theta, elliptical slice theta | z), the
same seed for every v0: posterior means of theta (filled circles where the
Rao-Blackwellised inclusion probability is >= 0.5) and inclusion
probabilities. Dashed: EP with the same prior (pac_particles.approx.ep.EPSpikeSlab;
--no-ep to skip); the CSV also has EP at v0 = 0 (a Dirac spike, which SMC
cannot do). The logic is lab.study.spike_slab_path.

Caveat: as v0 / v1 shrinks z hardly moves under the Gibbs update, so SMC's
inclusion probabilities at small v0 come from reweighting the initial
population; --n-flips K adds K scaled flips of single indicators per MCMC
step (pac_particles.smc.moves.SpikeSlabFlipMove), which mix z at any v0, at
K risk evaluations per step. EP is smooth but approximate.

Data: a built-in data set (--dataset) or any CSV with a header row
(--csv PATH, label column --target, default the last; read by
pac_particles.problem.datasets.load_csv), e.g. the paper's DNA (180 binary features,
3186 rows; ../shared/datasets/dna.csv, never copied into the repository).
The figure's third panel is the paper's Fig. 3b: the posterior means at the
smallest v0 against the coefficient's index, filled where the inclusion
probability is >= 0.5.

Writes spike_slab_path.png and spike_slab_path.csv (one row per method, v0,
coefficient: mean, inclusion probability, log Z); --name changes the stem.

    .venv/bin/python diagnostics/spike_slab_path.py --quick
    .venv/bin/python diagnostics/spike_slab_path.py --dataset breast_cancer
    .venv/bin/python diagnostics/spike_slab_path.py \
        --csv ../shared/datasets/dna.csv --target y --particles 200 \
        --len-chain 5 --n-jobs 2 --name spike_slab_path_dna
    .venv/bin/python diagnostics/spike_slab_path.py \
        --csv ../shared/datasets/dna.csv --target y --particles 200 \
        --len-chain 10 --n-flips 30 --n-jobs 2 --name spike_slab_path_dna
"""
import argparse
import os
import sys

import matplotlib.pyplot as plt
import numpy as np

from pac_particles.problem.data import validate_xy
from pac_particles.problem.datasets import DATASETS, load_csv, load_dataset
from pac_particles.approx.ep import EPSpikeSlab
from pac_particles.apps.plots import plot_spike_slab_path, save, save_rows
# lab/ sits beside the package (outside the wheel): found from a checkout
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from lab.study import SpikeSlabPath, spike_slab_path


def _plot_estimate(ax, path, ep=None, threshold=0.5):
    """The paper's Fig. 3b: posterior means at the smallest v0 against the
    coefficient's index, filled where the inclusion probability is at least
    ``threshold``; EP's (at the same v0) as crosses."""
    index = np.arange(1, path.means.shape[1] + 1)
    means, on = path.means[0], path.inclusion_probs[0] >= threshold
    ax.vlines(index, 0.0, means, color="grey", lw=0.6)
    ax.scatter(index[on], means[on], s=22, color="C0", zorder=3,
               label=f"SMC, inclusion >= {threshold:g}")
    ax.scatter(index[~on], means[~on], s=10, facecolors="none",
               edgecolors="grey", lw=0.6, zorder=3, label="SMC, below")
    if ep is not None:
        k = int(np.argmin(np.abs(ep.v0 - path.v0[0])))
        ax.scatter(index, ep.means[k], marker="x", s=12, color="C3", lw=0.7,
                   label="EP")
    ax.axhline(0.0, color="grey", lw=0.6)
    ax.set_xlabel("coefficient index")
    ax.set_ylabel("posterior mean")
    ax.set_title(f"estimate at v0 = {path.v0[0]:.2g}")
    ax.legend(fontsize=7)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="sonar", choices=sorted(DATASETS))
    parser.add_argument("--csv", default=None,
                        help="a CSV with a header row instead of --dataset "
                             "(e.g. ../shared/datasets/dna.csv)")
    parser.add_argument("--target", default=None,
                        help="label column of --csv (default: the last)")
    parser.add_argument("--lam", type=float, default=None, help="default: n")
    parser.add_argument("--p", type=float, default=0.1,
                        help="prior inclusion probability")
    parser.add_argument("--v1", type=float, default=1.0, help="slab variance")
    parser.add_argument("--v0-min", type=float, default=1e-6)
    parser.add_argument("--v0-max", type=float, default=0.1)
    parser.add_argument("--n-v0", type=int, default=11)
    parser.add_argument("--particles", type=int, default=1000,
                        help="resampled particles M")
    parser.add_argument("--len-chain", type=int, default=10)
    parser.add_argument("--n-flips", type=int, default=None,
                        help="scaled indicator flips per MCMC step (default: "
                             "the Gibbs update of z alone)")
    parser.add_argument("--no-ep", action="store_true", help="skip EP")
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--threads", type=int, default=None,
                        help="numba threads per run (default cores / n-jobs)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="results/diagnostics")
    parser.add_argument("--name", default="spike_slab_path",
                        help="stem of the PNG and CSV written into --out")
    parser.add_argument("--quick", action="store_true",
                        help="3 values of v0, M = 30, chain 3: a smoke test")
    args = parser.parse_args(argv)
    if args.quick:
        args.n_v0, args.particles, args.len_chain, args.n_jobs = 3, 30, 3, 1

    if args.csv:
        X, y, names = load_csv(args.csv, target=args.target)
        label = os.path.splitext(os.path.basename(args.csv))[0]
    else:
        X, y, names = load_dataset(args.dataset)
        label = args.dataset
    lam = args.lam or float(len(y))
    names = names or [f"x{k + 1}" for k in range(X.shape[1])]
    names = [names[k] for k in validate_xy(X, y).columns]
    v0_grid = np.geomspace(args.v0_min, args.v0_max, args.n_v0)
    print(f"{label}: n = {len(y)}, d = {len(names)}, lam = {lam:g}, "
          f"p = {args.p:g}, v1 = {args.v1:g}, {args.n_v0} values of v0, "
          f"M = {args.particles}, chain {args.len_chain}, "
          f"flips {args.n_flips}", file=sys.stderr)
    path = spike_slab_path(X, y, lam, v0_grid, p=args.p, v1=args.v1,
                           n_particles=args.particles, len_chain=args.len_chain,
                           seed=args.seed, n_jobs=args.n_jobs,
                           numba_threads=args.threads, n_flips=args.n_flips)
    rows = path.rows(names)
    ep = None
    if not args.no_ep:
        ep_v0 = np.concatenate([[0.0], v0_grid])
        ep = SpikeSlabPath.from_fits(
            ep_v0, [EPSpikeSlab(X, y, lam, p=args.p, v0=v0, v1=args.v1).fit()
                    for v0 in ep_v0], args.p, args.v1)
        rows += ep.rows(names)
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.5))
    plot_spike_slab_path(
        v0_grid, path.means, path.inclusion_probs, names=names,
        ep=None if ep is None else (ep.v0, ep.means, ep.inclusion_probs),
        axes=axes[:2])
    axes[1].set_title(f"{label}: lam = {lam:g}, p = {args.p:g}, "
                      f"v1 = {args.v1:g}")
    _plot_estimate(axes[2], path, ep)
    png = save(fig, os.path.join(args.out, f"{args.name}.png"))
    save_rows(rows, os.path.join(args.out, f"{args.name}.csv"))
    for i, v0 in enumerate(v0_grid):
        ep_text = "" if ep is None else (
            f"   EP log Z {ep.log_z[i + 1]:8.3f}, "
            f"{np.sum(ep.inclusion_probs[i + 1] >= 0.5):3d} included")
        print(f"v0 = {v0:8.2g}  SMC log Z {path.log_z[i]:8.3f}, "
              f"{np.sum(path.inclusion_probs[i] >= 0.5):3d} included{ep_text}")
    if ep is not None:
        print(f"v0 = 0 (EP)  log Z {ep.log_z[0]:8.3f}, "
              f"{np.sum(ep.inclusion_probs[0] >= 0.5):3d} included")
    print(f"figure: {png}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
