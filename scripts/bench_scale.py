"""Scale benchmark: PACBayesAUC's methods against scikit-learn's logistic
regressions on synthetic logistic data, from 1e4 to 1e7 rows.

For each n: ``X ~ N(0, I_d)``, ``y ~ Bernoulli(expit(X w))``, ``lam = n``;
each fit runs in its own process after a fit of 3,000 rows there (numba's
kernels compiled beforehand and loaded from its cache: the timed fit is a
session's next fit, not its first), timed from the raw data to the fitted
estimator (the certificate included), with the process's peak resident
memory (the
interpreter's own ~230 MiB included; ``VmHWM``) also as a multiple of the size of
``X``; test AUCs on 100,000 fresh rows. Columns:

* ``LogisticRegression().fit`` (the baseline of every ratio) and
  ``LogisticRegressionCV(scoring="roc_auc")``;
* ``PACBayesAUC(method=m, lam=n)`` for VB (every n), EP and SMC (up to
  ``--ep-max-n`` / ``--smc-max-n``: above, EP samples pairs and does not
  converge, SMC takes hours);
* VB on a Dask array on a ``LocalCluster`` (up to ``--dask-max-n``; the
  rows in 8 chunks, stored sorted by label, two single-threaded workers in
  this process so that the data are not copied into the graph).

Prints one markdown table; ratios are to LogisticRegression on the same
rows, measured in the same run (``--repeat k``: the medians of k rounds,
each round every fit once, LogisticRegression first).

    python scripts/bench_scale.py                    # 1e4 ... 1e7
    python scripts/bench_scale.py --max-n 1e6 --smc-max-n 0
    python scripts/bench_scale.py --min-n 1e7 --lrcv-max-n 1e6
"""

import argparse
import multiprocessing as mp
import resource
import time

import numpy as np

D = 10
TEST_ROWS = 100_000


def make_data(n, seed):
    from scipy.special import expit
    rng = np.random.default_rng(seed)
    w = np.random.default_rng(12345).normal(size=D)
    X = rng.normal(size=(n, D))
    return X, (rng.random(n) < expit(X @ w)).astype(int)


def _fit(method, n, X, y):
    """The fitted model's test-scoring function, and its certified AUC."""
    if method == "lr":
        from sklearn.linear_model import LogisticRegression
        return LogisticRegression().fit(X, y).decision_function, None
    if method == "lrcv":
        from sklearn.linear_model import LogisticRegressionCV
        return LogisticRegressionCV(scoring="roc_auc").fit(
            X, y).decision_function, None
    from pac_particles.sklearn.estimator import PACBayesAUC
    if method == "dask":
        import warnings
        import dask.array as da
        from dask.distributed import Client, LocalCluster
        # the rows enter the graph from this process's memory, on purpose
        warnings.filterwarnings("ignore", message=".*large graph.*")
        order = np.argsort(y, kind="stable")       # stored sorted by label
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                          dashboard_address=None) as cluster, \
                Client(cluster):
            X_d = da.from_array(X[order], chunks=(-(-n // 8), D)).persist()
            y_d = da.from_array(y[order], chunks=-(-n // 8)).persist()
            start = time.perf_counter()
            est = PACBayesAUC(lam=float(n), random_state=0).fit(X_d, y_d)
            _fit.seconds = time.perf_counter() - start
        return est.decision_function, 1.0 - est.certified_auc_risk_
    est = PACBayesAUC(method=method, lam=float(n), random_state=0).fit(X, y)
    return est.decision_function, 1.0 - est.certified_auc_risk_


def _peak_mib():
    """This process's peak resident memory: ``VmHWM``, the high-water mark
    of its own address space (``ru_maxrss`` would carry the parent's peak
    across the child's exec)."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _child(method, n, queue):
    from sklearn.metrics import roc_auc_score
    # a first fit of 3,000 rows loads what a session loads once (numba's
    # cached kernels, lazy imports): the timed fit is a session's next one
    _fit(method, 3000, *make_data(3000, 2))
    X, y = make_data(n, 0)
    X_test, y_test = make_data(TEST_ROWS, 1)
    _fit.seconds = None
    start = time.perf_counter()
    score, certified = _fit(method, n, X, y)
    seconds = _fit.seconds or time.perf_counter() - start
    peak_mib = _peak_mib()
    queue.put((seconds, roc_auc_score(y_test, score(X_test)), peak_mib,
               certified))


def run(method, n):
    context = mp.get_context("spawn")
    queue = context.Queue()
    process = context.Process(target=_child, args=(method, n, queue))
    process.start()
    out = queue.get()
    process.join()
    return out


def warm_up(methods):
    """Compile the numba kernels (cached on disk) before the children load
    them."""
    from pac_particles.sklearn.estimator import PACBayesAUC
    X, y = make_data(3000, 2)
    for method in methods:
        PACBayesAUC(method=method, lam=3000.0, n_particles=20, len_chain=5,
                    random_state=0).fit(X, y)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--min-n", type=float, default=1e4)
    parser.add_argument("--max-n", type=float, default=1e7)
    parser.add_argument("--ep-max-n", type=float, default=1e5)
    parser.add_argument("--smc-max-n", type=float, default=1e5)
    parser.add_argument("--dask-max-n", type=float, default=1e6)
    parser.add_argument("--lrcv-max-n", type=float, default=1e7)
    parser.add_argument("--repeat", type=int, default=1,
                        help="rounds of fits per n; times are medians")
    args = parser.parse_args()
    limits = {"lrcv": args.lrcv_max_n, "vb": np.inf, "dask": args.dask_max_n,
              "ep": args.ep_max_n, "smc": args.smc_max_n}
    warm_up([m for m in ("vb", "ep", "smc") if limits[m] >= args.min_n])
    print("| n | X MiB | LR s (peak MiB) | method | s | / LR | test AUC - LR's "
          "| certified AUC | peak MiB | peak / X |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    n = int(args.min_n)
    while n <= args.max_n:
        x_mib = n * D * 8 / 2**20
        methods = [m for m, limit in limits.items() if n <= limit]
        # rounds of every fit, LogisticRegression first in each: the medians
        # compare fits that ran under the same load
        rounds = [{m: run(m, n) for m in ["lr"] + methods}
                  for _ in range(args.repeat)]
        lr_s = np.median([r["lr"][0] for r in rounds])
        _, lr_auc, lr_mem, _ = rounds[0]["lr"]
        for method in methods:
            s = np.median([r[method][0] for r in rounds])
            _, auc, mem, certified = rounds[0][method]
            cert = "" if certified is None else f"{certified:.4f}"
            print(f"| {n:,} | {x_mib:.0f} | {lr_s:.3f} ({lr_mem:.0f}) | "
                  f"{method} | {s:.3f} | {s / lr_s:.1f} | {auc - lr_auc:+.5f} "
                  f"| {cert} | {mem:.0f} | {mem / x_mib:.1f} |", flush=True)
        n *= 10


if __name__ == "__main__":
    main()
