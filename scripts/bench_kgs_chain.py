"""ESS per second of the kernel Gibbs sampler's chain against tempering SMC
with the exact ellipse move, on the same label-noise posterior.

Problems: ``sphere`` (m = 100 unit vectors uniform on the sphere of R^3,
labels of ``w* = (0, 1, 0)`` flipped with probability q = 0.05, the size of
[GH01, Sec. 5]) and ``sphere10`` (the same in R^10, q = 0.1); both under the
assumed flip rate ``--q`` if given. The chain
(:class:`pac_particles.smc.kernel_gibbs_sampler.KernelGibbsSampler`, primal form)
and waste-free SMC (:func:`pac_particles.smc.posterior.run_smc` with
:class:`pac_particles.smc.moves.ExactEllipseGibbs`, prior N(0, I), no intercept,
``lam = m log((1 - q) / q)``, ``evidence="tempering"``) each estimate the
Bayes point ``E[w]`` in ``--repeats`` independent runs; the ESS of a method
is ``tr Cov_post(w) / tr Cov_runs(estimate)`` and is divided by the mean
wall time of a run (``lab.study.kgs_efficiency.compare_with_smc``).
Also printed: each method's own single-run ESS (ArviZ bulk ESS of the chain;
``1 / sum W^2`` of the SMC weights) per second, and the agreement of the
two means.

    python scripts/bench_kgs_chain.py                  # ~1 minute
    python scripts/bench_kgs_chain.py --problems sphere --repeats 40
"""
import argparse
import os
import sys

from pac_particles.smc.kernel_gibbs_sampler import sphere_data
# lab/ sits beside the package (outside the wheel): found from a checkout
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from lab.study.kgs_efficiency import compare_with_smc

PROBLEMS = {"sphere": dict(m=100, dim=3, q=0.05),
            "sphere10": dict(m=100, dim=10, q=0.1)}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--problems", nargs="+", choices=sorted(PROBLEMS),
                        default=sorted(PROBLEMS))
    parser.add_argument("--q", type=float, default=None,
                        help="assumed label-flip rate (default: the true one)")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--draws", type=int, default=2000, help="per chain")
    parser.add_argument("--burn-in", type=int, default=200)
    parser.add_argument("--particles", type=int, default=200, help="SMC M")
    parser.add_argument("--len-chain", type=int, default=10, help="SMC P")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args(argv)
    print(f"{os.cpu_count()} CPUs; numba compilation excluded; times are "
          f"wall-clock seconds per run\n")
    for name in args.problems:
        spec = PROBLEMS[name]
        X, y = sphere_data(spec["m"], spec["q"], seed=args.seed, dim=spec["dim"])
        q = spec["q"] if args.q is None else args.q
        result = compare_with_smc(
            X, y, q, n_repeats=args.repeats, n_chains=args.chains,
            n_draws=args.draws, burn_in=args.burn_in,
            n_particles=args.particles, len_chain=args.len_chain,
            seed=args.seed, verbose=args.verbose,
            problem=f"{name}: m = {spec['m']}, d = {spec['dim']}, q = {q:g}")
        print(result.table(), "\n")


if __name__ == "__main__":
    main()
