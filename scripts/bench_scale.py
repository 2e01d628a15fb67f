"""Scale benchmark: Gaussian VB of the AUC Gibbs posterior against
scikit-learn's LogisticRegression on synthetic logistic data.

For each n: ``X ~ N(0, I_d)``, ``y ~ Bernoulli(expit(X w))``, ``lam = n``,
VB as ``PACBayesAUC(method="vb")`` builds it (diagonal family,
``n_pairs="auto"``, timed from the raw data: the problem's set-up included),
and ``LogisticRegression().fit`` on the same rows; test AUCs on 100,000
fresh rows. Each fit runs in its own process (numba compiled beforehand, cached on disk),
whose peak resident memory (``ru_maxrss``) is reported. Prints a markdown
table.

    python scripts/bench_scale.py                 # n = 1e4, 1e5, 1e6
    python scripts/bench_scale.py --max-n 1e7
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


def _child(method, n, queue):
    from sklearn.metrics import roc_auc_score
    X, y = make_data(n, 0)
    X_test, y_test = make_data(TEST_ROWS, 1)
    if method == "lr":
        from sklearn.linear_model import LogisticRegression
        start = time.perf_counter()
        model = LogisticRegression().fit(X, y)
        seconds = time.perf_counter() - start
        scores = model.decision_function(X_test)
        message = ""
    elif method == "estimator":
        # the whole fit a user runs: set-up, VB, coefficients, certificate
        from pac_particles.sklearn.estimator import PACBayesAUC
        start = time.perf_counter()
        est = PACBayesAUC(method="vb", lam=float(n), random_state=0).fit(X, y)
        seconds = time.perf_counter() - start
        scores = est.decision_function(X_test)
        message = 1.0 - est.certified_auc_risk_
    else:
        from pac_particles.approx.vb import GaussianVB
        from pac_particles.problem.problem import GibbsProblem
        start = time.perf_counter()
        problem = GibbsProblem.ranking(X, y, float(n))
        vb = GaussianVB.from_problem(problem, prior_var=1.0,
                                     family="diagonal", seed=0,
                                     n_pairs="auto", tol=1e-6)
        result = vb.fit()
        seconds = time.perf_counter() - start
        scores = vb.predict(X_test)
        message = result.message
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    queue.put((seconds, roc_auc_score(y_test, scores), peak_mib, message))


def run(method, n):
    queue = mp.get_context("spawn").Queue()
    process = mp.get_context("spawn").Process(target=_child,
                                             args=(method, n, queue))
    process.start()
    out = queue.get()
    process.join()
    return out


def warm_up():
    """Compile the numba kernels (cached on disk) before the children load them."""
    from pac_particles.approx.vb import GaussianVB
    X, y = make_data(3000, 2)
    GaussianVB(X, y, lam=3000.0, family="diagonal", n_pairs="auto",
               seed=0).fit()
    GaussianVB(X[:500], y[:500], lam=500.0, family="diagonal").fit()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-n", type=float, default=1e6)
    args = parser.parse_args()
    warm_up()
    print("| n | LR s | VB s | VB / LR | VB AUC - LR AUC | LR peak MiB "
          "| VB peak MiB | VB steps | PACBayesAUC(method='vb') s | / LR "
          "| its test AUC | certified AUC |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    n = 10_000
    while n <= args.max_n:
        lr_s, lr_auc, lr_mem, _ = run("lr", n)
        vb_s, vb_auc, vb_mem, message = run("vb", n)
        est_s, est_auc, _, certified = run("estimator", n)
        steps = message.split(" on ")[0]
        print(f"| {n:,} | {lr_s:.3f} | {vb_s:.3f} | {vb_s / lr_s:.1f} | "
              f"{vb_auc - lr_auc:+.5f} | {lr_mem:.0f} | {vb_mem:.0f} | "
              f"{steps} | {est_s:.3f} | {est_s / lr_s:.1f} | {est_auc:.4f} | "
              f"{certified:.4f} |", flush=True)
        n *= 10


if __name__ == "__main__":
    main()
