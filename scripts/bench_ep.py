"""Benchmark: wall time of EP for AUC scoring, against the paper and against
the O(P d^2) formulation of the same algorithm.

For each data set it fits :class:`pac_particles.approx.ep.EPLinear` (lam = n by
default, standardised inputs, prior N(0, I)), reports the median wall time
over ``--repeats`` runs, the number of sweeps, log Z and the EP
cross-validation (leave-one-out) AUC, and compares with

* Table 2 of Ridgway et al. (2014): their C implementation of EP-AUC and
  GP-EP-AUC;
* the same parallel EP written the way the paper describes it (appendix
  B.2: per-pair cavities ``d' V d`` and ``Lambda = S0^-1 + sum_ij K_ij d d'``,
  O(P d^2 + d^3) per sweep), :func:`lab.reference.pairwise_ep.pairwise_ep`,
  as the naive baseline; it runs with the same damping and stopping rule and
  must land on the same fixed point (the maximum difference of the posterior
  means is printed).

GP-EP (squared-exponential kernel, lengthscale sqrt(d), no hyper-parameter
search) is timed on the data sets of the paper's GP column.

Data: Pima and Sonar from ``particles``; German credit (one-hot, 61
columns), SPECTF (44 continuous), SPECT rows 1-80 (22 binary covariates,
50/50: the shape of the paper's "SPECTF" row), glass (type 6 against the
rest), DNA (Statlog, 3186 x 180 binary) and Colon (Alon et al., 62 x 2000)
from the CSVs in ``--data-dir`` (never copied here); "pima200" is 200
seeded rows of Pima without insulin (7 covariates, the shape of the paper's
MASS ``Pima.tr``).

Usage::

    python scripts/bench_ep.py                  # everything
    python scripts/bench_ep.py --skip-naive --skip-gp
    python scripts/bench_ep.py --only dna german_credit colon
    python scripts/bench_ep.py --data-dir /path/to/shared/datasets
"""

import argparse
import os
import statistics
import sys
import time
import warnings

import numpy as np

from pac_particles import parallel
from pac_particles.problem.datasets import load_csv, load_dataset
from pac_particles.approx.ep import (EPGP, EPLinear, KernelJitterWarning,
                              SquaredExponential)
# lab/ sits beside the package (outside the wheel): found from a checkout
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from lab.reference.pairwise_ep import pairwise_ep

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_DATA_DIR = os.path.join(REPO, "..", "shared", "datasets")

# Ridgway et al. (2014), Table 2, seconds (i7-3720QM, C implementation)
PAPER_EP = {"pima200": 0.06, "pima": 0.06, "german_credit": 1.98,
            "spect80": 0.25, "spectf": 0.25, "glass": 0.23, "dna": 11.26,
            "colon": 636.63}
PAPER_GP = {"pima200": 7.75, "pima": 7.75, "german_credit": 7.59,
            "spect80": 63.47, "spectf": 63.47, "glass": 1.33, "dna": 63.47,
            "colon": 60.99}


def datasets(data_dir, seed):
    """name -> (X, y, note)."""
    out = {}
    X, y, _ = load_dataset("pima")
    out["pima"] = (X, y, "particles UCI Pima, 768 x 8")
    rows = np.random.default_rng(seed).choice(len(y), 200, replace=False)
    out["pima200"] = (np.delete(X[rows], 4, axis=1), y[rows],
                      "200 rows, no insulin (paper's Pima.tr shape)")
    X, y, _ = load_dataset("sonar")
    out["sonar"] = (X, y, "208 x 60")
    path = lambda name: os.path.join(data_dir, name)
    X, y, _ = load_csv(path("german_credit.csv"))
    out["german_credit"] = (X, y, "German credit one-hot, 1000 x 61")
    X, y, _ = load_csv(path("spectf.csv"))
    out["spectf"] = (X, y, "SPECTF 267 x 44")
    X, y, _ = load_csv(path("spect.csv"))
    out["spect80"] = (X[:80], y[:80], "SPECT rows 1-80, 22 binary (paper shape)")
    X, y, _ = load_csv(path("glass.csv"))
    out["glass"] = (X, y, "glass type 6 vs rest, 214 x 9")
    X, y, _ = load_csv(path("dna.csv"))
    out["dna"] = (X, y, "Statlog DNA class 1, 3186 x 180 binary")
    X, y, _ = load_csv(path("colon.csv"))
    out["colon"] = (X, y, "Alon et al. colon, 62 x 2000, 40 tumours")
    return out


def timed(fn, repeats):
    times, out = [], None
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", default=DEFAULT_DATA_DIR,
                        help="folder with german_credit.csv, spectf.csv, "
                             "spect.csv, glass.csv, dna.csv, colon.csv "
                             "(default: %(default)s)")
    parser.add_argument("--lam-factor", type=float, default=1.0,
                        help="lam = factor * n (default 1)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", nargs="*", help="subset of data sets")
    parser.add_argument("--skip-naive", action="store_true")
    parser.add_argument("--skip-gp", action="store_true")
    parser.add_argument("--naive-max-sweeps", type=int, default=300)
    parser.add_argument("--blas-threads", type=int, default=1,
                        help="BLAS threads for the naive baseline (ours uses "
                             "1 inside EP)")
    args = parser.parse_args()
    data = datasets(args.data_dir, args.seed)
    names = args.only or list(data)
    unknown = sorted(set(names) - set(data))
    if unknown:
        parser.error(f"unknown data set(s) {unknown}: choose from {sorted(data)}")

    # compile / load the numba kernels outside the timings
    X, y, _ = data["glass"]
    EPLinear(X, y, lam=len(y)).fit()

    print(f"lam = {args.lam_factor:g} n; median of {args.repeats} runs; "
          f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    head = ("| data | n | d | P | space | sweeps | EP (s) | paper (s) | "
            "paper / ours | naive s/sweep | ours s/sweep | speed-up | "
            "max abs mean diff | log Z | LOO-AUC | LOO (s) |")
    print(head)
    print("|" + "|".join("---" for _ in range(head.count("|") - 1)) + "|")
    for name in names:
        X, y, note = data[name]
        lam = args.lam_factor * len(y)
        ep = EPLinear(X, y, lam=lam)
        seconds, res = timed(ep.fit, args.repeats)
        loo_seconds, loo_auc = timed(ep.loo_auc, 1)
        paper = PAPER_EP.get(name)
        per_sweep = seconds / max(res.n_sweeps, 1)
        naive = ("", "", "")
        if not args.skip_naive:
            with parallel.blas_threads(args.blas_threads):
                # the damping our run settled on (it may have lowered it)
                ref = pairwise_ep(ep.data.X, ep.data.y, lam,
                                  damping=res.damping, tol=ep.tol,
                                  max_sweeps=args.naive_max_sweeps)
            naive = (f"{ref.seconds_per_sweep:.4g}",
                     f"{ref.seconds_per_sweep / per_sweep:.1f}x",
                     f"{np.max(np.abs(ref.mean - res.mean)):.1e}")
        print(f"| {name} | {ep.data.n} | {ep.data.d} | {ep.data.n_pairs} | "
              f"{res.space} | {res.n_sweeps} | {seconds:.3g} | "
              f"{paper if paper else ''} | "
              f"{f'{paper / seconds:.3g}' if paper else ''} | {naive[0]} | "
              f"{per_sweep:.3g} | {naive[1]} | {naive[2]} | {res.log_z:.2f} | "
              f"{loo_auc:.4f} | {loo_seconds:.3g} |")

    if args.skip_gp:
        return
    print()
    head = ("| data | n | sweeps | GP-EP (s) | paper (s) | paper / ours | log Z | "
            "LOO-AUC | LOO (s) |")
    print(head)
    print("|" + "|".join("---" for _ in range(head.count("|") - 1)) + "|")
    for name in names:
        if name not in PAPER_GP:
            continue
        X, y, _ = data[name]
        kernel = SquaredExponential(lengthscale=np.sqrt(X.shape[1]))
        gp = EPGP(X, y, lam=args.lam_factor * len(y), kernel=kernel)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", KernelJitterWarning)
            seconds, res = timed(gp.fit, args.repeats)
        loo_seconds, loo_auc = timed(gp.loo_auc, 1)
        paper = PAPER_GP[name]
        print(f"| {name} | {gp.data.n} | {res.n_sweeps} | {seconds:.3g} | "
              f"{paper} | {paper / seconds:.3g} | {res.log_z:.2f} | "
              f"{loo_auc:.4f} | {loo_seconds:.3g} |")


if __name__ == "__main__":
    main()
