"""Benchmark: the risk on an accelerator (JAX) against the numba kernels.

One run, same data and particles, ratios side by side, on whatever the
machine has (``jax.devices()``: a GPU where a CUDA build of jaxlib is
installed, else the CPU):

1. the risk of linear scores, in ns per row and particle: the numba kernel
   on all the host's threads, and the JAX backend's two ways of counting
   pairs (``DeviceLinearRisk(count=...)``), plus the hinge point risk, on
   synthetic logistic data (d = 10, ``scripts/bench_scale.py``'s generator)
   at n = 1e5 and 1e6 with N = 100 particles, and N = 2000 at 1e6 on a GPU
   (the numba kernel is skipped there: a minute a call);
2. the package's default SMC run (``run_smc``: lam = n, 200 x 10
   particles, the importance-sampling evidence included; the refits of
   ``q`` by adaptive importance sampling and the Pareto ``k`` of the
   draws used), then the
   tempering from the prior with the tempering evidence (``start="prior",
   evidence="tempering"``, the issue's prototype),
   with each backend: seconds, steps, risk evaluations, the seconds of
   the evidence step, and the test AUC against scikit-learn's
   LogisticRegression (numba only up to ``--smc-numba-max-n``).

    python scripts/bench_accelerator.py            # a GPU: n = 1e5, 1e6
    python scripts/bench_accelerator.py --quick    # the CPU: small sizes
"""
import argparse
import inspect
import platform
import time

import numba
import numpy as np

from bench_scale import TEST_ROWS, make_data
from pac_particles.problem.accelerated_risk import (COUNT_METHODS,
                                                    DeviceLinearRisk, import_jax)
from pac_particles.problem.risks import AUCRisk, ClassificationRisk
from pac_particles.smc.models import AUCGibbsModel
from pac_particles.smc.posterior import run_smc


def timed(call, repeats):
    """``(first, best, out)``: the seconds of the first call (JAX compiles
    there), the fastest of ``repeats`` more, and the last result."""
    begin = time.perf_counter()
    out = call()
    first = time.perf_counter() - begin
    best = np.inf
    for _ in range(repeats):
        begin = time.perf_counter()
        out = call()
        best = min(best, time.perf_counter() - begin)
    return first, best, out


def risk_table(sizes, particles, numba_max_entries, repeats):
    """ns per row x particle of each implementation, ratios to numba."""
    print("\n## The risk of N particles (ns per row x particle; numba / "
          "this; the first call's seconds, JAX compiling)\n")
    print("| risk | n | N | chunk | numba | " + " | ".join(
        f"jax {c}" for c in COUNT_METHODS) + " | same risks as numba |")
    print("|---|---|---|---|---|" + "---|" * len(COUNT_METHODS) + "---|")
    for n in sizes:
        X, y = make_data(n, 1)
        rng = np.random.default_rng(0)
        for name, risk, counts, Ns in (
                ("auc", AUCRisk(y), COUNT_METHODS, particles),
                ("hinge", ClassificationRisk(y, "hinge"), ("merge",),
                 particles[:1])):
            X_ordered = risk.ordered(X)
            for N in Ns:
                theta = rng.normal(size=(N, X.shape[1]))
                ns = 1e9 / (N * n)
                numba_ns, reference = None, None
                if N * n <= numba_max_entries:
                    _, t, reference = timed(
                        lambda: risk.linear(theta, X_ordered), repeats)
                    numba_ns = t * ns
                cells, same = [], []
                for count in counts:
                    device = DeviceLinearRisk(risk, X_ordered, count=count)
                    first, t, out = timed(lambda: device.linear(theta),
                                          repeats)
                    ratio = ("" if numba_ns is None
                             else f"{numba_ns / (t * ns):.3g}x; ")
                    cells.append(f"{t * ns:.3g} ({ratio}{first:.1f} s)")
                    if reference is not None:
                        same.append(np.sum(out != reference) if name == "auc"
                                    else np.max(np.abs(out - reference)))
                cells += ["—"] * (len(COUNT_METHODS) - len(counts))
                if not same:
                    same_text = "—"
                elif name == "auc":
                    same_text = "differing: " + ", ".join(map(str, same))
                else:
                    same_text = f"max abs diff {same[0]:.1e}"
                numba_text = "—" if numba_ns is None else f"{numba_ns:.3g}"
                print(f"| {name} | {n:,} | {N} | {device.chunk_particles} | "
                      f"{numba_text} | " + " | ".join(cells)
                      + f" | {same_text} |", flush=True)


def smc_table(sizes, numba_max_n, seed, starts=("auto", "prior")):
    """The default run_smc with each backend, then the tempering from the
    prior (the issue's prototype) where ``run_smc`` offers ``start``;
    the JAX runs first, so that a time limit cuts the slow numba runs.
    LogisticRegression's test AUC beside each."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score
    # the default run (Gaussian start where one applies, importance
    # evidence), then the prototype: tempering from the prior with
    # the tempering evidence (the evidence's Gaussian fit is host work)
    if "start" not in inspect.signature(run_smc).parameters:
        starts = [None]
    print("\n## run_smc (lam = n, 200 x 10 particles; start auto: the "
          "default, evidence included; start prior: tempering evidence)\n")
    print("| n x 10 | start | backend | s | / jax | of which evidence s | "
          "steps | refits of q | Pareto k | risk evaluations | risk s | "
          "test AUC | LR test AUC |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    X_test, y_test = make_data(TEST_ROWS, 2)
    jax_seconds, lr_auc = {}, {}
    runs = [("jax", start, n) for start in starts for n in sizes]
    runs += [("numba", start, n) for start in starts for n in sizes
             if n <= numba_max_n]
    for backend, start, n in runs:
        X, y = make_data(n, 1)
        if n not in lr_auc:
            lr = LogisticRegression().fit(X, y)
            lr_auc[n] = roc_auc_score(y_test, lr.decision_function(X_test))
        model = AUCGibbsModel(X, y, lam=float(n), backend=backend)
        options = ({} if start is None else {"start": start})
        if start == "prior":
            options["evidence"] = "tempering"
        begin = time.perf_counter()
        post = run_smc(model, seed=seed, **options)
        seconds = time.perf_counter() - begin
        jax_seconds.setdefault((start, n), seconds)
        imp = post.importance
        evidence = imp.seconds if imp is not None else float("nan")
        # adaptive importance sampling's refits of q before the draws used
        refits = getattr(imp, "rounds", "—") if imp is not None else "—"
        k = f"{imp.pareto_k:.2f}" if imp is not None else "—"
        auc = roc_auc_score(y_test, post.score(X_test))
        print(f"| {n:,} | {start or 'prior'} | {backend} | {seconds:.1f} | "
              f"{seconds / jax_seconds[start, n]:.2f} | {evidence:.1f} | "
              f"{post.n_steps} | {refits} | {k} | "
              f"{post.n_risk_evaluations:,} | "
              f"{model.loglik_seconds:.1f} | {auc:.5f} | {lr_auc[n]:.5f} |",
              flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="CPU sizes: risk at n = 2e4, 1e5; SMC at "
                             "--smc-n (default 1e4)")
    parser.add_argument("--sizes", type=str, default=None,
                        help="comma-separated n of the risk table")
    parser.add_argument("--smc-n", type=str, default=None,
                        help="comma-separated n of the SMC runs")
    parser.add_argument("--smc-numba-max-n", type=float, default=1e5,
                        help="largest n of a numba SMC run")
    parser.add_argument("--numba-max-entries", type=float, default=2e8,
                        help="largest N x n the numba kernel is timed at")
    parser.add_argument("--starts", type=str, default="auto,prior",
                        help="comma-separated starts of the SMC runs")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    jax = import_jax()
    devices = jax.devices()
    gpu = devices[0].platform != "cpu"
    print(f"jax {jax.__version__} devices {devices}; numpy "
          f"{np.__version__}, numba {numba.__version__} on "
          f"{numba.get_num_threads()} threads; {platform.processor() or platform.machine()}")
    if args.quick:
        sizes, smc_sizes = [20_000, 100_000], [10_000]
    else:
        sizes, smc_sizes = [100_000, 1_000_000], [100_000, 1_000_000]
    if args.sizes:
        sizes = [int(float(v)) for v in args.sizes.split(",")]
    if args.smc_n:
        smc_sizes = [int(float(v)) for v in args.smc_n.split(",")]
    particles = [100, 2000] if gpu else [100]
    risk_table(sizes, particles, args.numba_max_entries, args.repeats)
    smc_table(smc_sizes, args.smc_numba_max_n, args.seed,
              args.starts.split(","))


if __name__ == "__main__":
    main()
