"""Benchmark of classification Gibbs posteriors, side by side in one run.

1. Risk evaluations per second of the batched hinge / 0-1 risk
   (``ClassificationRisk.linear``: BLAS scores on one thread, then one numba
   pass over the margins, parallel over particles) against the one-line
   numpy expression ``mean(loss(y * (theta @ X.T)), axis=1)`` (BLAS on its
   default threads) and against a fused numba kernel that forms each
   particle's scores and losses in one loop (no score matrix), on breast
   cancer (n = 569) and students dropout (n = 4424).
2. Fit time of the SMC Gibbs posterior (0-1 loss, ``lam = n``; with
   ``--smc-cv`` also ``lam="cv"``, five tempering paths to ``10 n``) against ``LogisticRegressionCV`` (5-fold accuracy) on
   students dropout, with the training error of each.

    python scripts/bench_classification.py --data-dir ../shared/datasets
"""
import argparse
import os
import time

import numba
import numpy as np

from pac_particles.sklearn.classifier import PACBayesClassifier
from pac_particles.apps.cli import logistic_classifier
from pac_particles.problem.datasets import load_csv, load_dataset
from pac_particles.smc.models import ClassificationGibbsModel
from pac_particles.problem.losses import get_loss


def fused_risk(loss):
    """Scores and losses in one pass per particle, ``XT`` (d, n): the
    candidate that avoids writing the (N, n) score matrix (the loss of the
    table inlined, as in the risk's own kernels)."""
    point = numba.njit(inline="always")(get_loss(loss).point)

    @numba.njit(parallel=True)
    def risk(theta, XT, signs, weights):
        out = np.empty(theta.shape[0])
        for r in numba.prange(theta.shape[0]):
            s = np.zeros(XT.shape[1])
            for k in range(XT.shape[0]):
                t = theta[r, k]
                for i in range(XT.shape[1]):
                    s[i] += t * XT[k, i]
            total = 0.0
            for i in range(XT.shape[1]):
                total += weights[i] * point(signs[i] * s[i])
            out[r] = total
        return out
    return risk


def numpy_risk(theta, X, signs, loss):
    u = signs * (theta @ X.T)
    if loss == "hinge":
        return np.maximum(0.0, 1.0 - u).mean(axis=1)
    return ((u < 0) + 0.5 * (u == 0)).mean(axis=1)


def best_rates(funcs, n_particles, repeats):
    """Evaluations per second of each function, best of ``repeats``, the
    functions taking turns (a shared machine's load hits all alike)."""
    for func in funcs:
        func()  # compile / load the cache
    best = np.full(len(funcs), np.inf)
    for _ in range(repeats):
        for k, func in enumerate(funcs):
            start = time.perf_counter()
            func()
            best[k] = min(best[k], time.perf_counter() - start)
    return n_particles / best


def timed(func):
    start = time.perf_counter()
    result = func()
    return result, time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-dir", default=os.path.normpath(os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared",
        "datasets")))
    parser.add_argument("--particles", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--no-smc", action="store_true")
    parser.add_argument("--smc-cv", action="store_true",
                        help="also time SMC with lam chosen by 5-fold CV")
    args = parser.parse_args()
    students = load_csv(os.path.join(args.data_dir, "students_dropout.csv"))
    data = {"breast_cancer": load_dataset("breast_cancer"),
            "students_dropout": students}
    rng = np.random.default_rng(0)
    print(f"{'data':17s} {'loss':9s} {'n':>5s} {'d':>3s} {'kernel/s':>10s} "
          f"{'numpy/s':>10s} {'fused/s':>10s} {'kernel/numpy':>13s} "
          f"{'fused/kernel':>13s}")
    for name, (X, y, _) in data.items():
        for loss in ("hinge", "zero_one"):
            model = ClassificationGibbsModel(X, y, lam=1.0, loss=loss)
            risk = model.empirical_risk
            Z = risk.ordered(model.data.X)
            theta = rng.normal(size=(args.particles, Z.shape[1])) * 0.3
            ZT = np.ascontiguousarray(Z.T)
            fused = fused_risk(loss)
            np.testing.assert_allclose(
                risk.linear(theta, Z), numpy_risk(theta, Z, risk.signs, loss),
                atol=1e-12)
            kernel, plain, fused = best_rates([
                lambda: risk.linear(theta, Z),
                lambda: numpy_risk(theta, Z, risk.signs, loss),
                lambda: fused(theta, ZT, risk.signs, risk.weights)],
                len(theta), args.repeats)
            print(f"{name:17s} {loss:9s} {Z.shape[0]:5d} {Z.shape[1]:3d} "
                  f"{kernel:10.0f} {plain:10.0f} {fused:10.0f} "
                  f"{kernel / plain:12.2f}x {fused / kernel:12.2f}x")
    if args.no_smc:
        return
    X, y, _ = students
    print(f"\nstudents dropout, all {len(y)} points:")
    lr, lr_s = timed(lambda: logistic_classifier(0).fit(X, y))
    print(f"  LogisticRegressionCV (5-fold)   {lr_s:7.1f} s   train error "
          f"{1 - lr.score(X, y):.3f}")
    for lam in (float(len(y)),) + (("cv",) if args.smc_cv else ()):
        est, s = timed(lambda: PACBayesClassifier(
            method="smc", loss="zero_one", lam=lam, random_state=0).fit(X, y))
        print(f"  SMC 0-1, lam = {lam!s:8s}        {s:7.1f} s   train error "
              f"{1 - est.score(X, y):.3f}   ratio SMC / LR {s / lr_s:.1f}x")


if __name__ == "__main__":
    main()
