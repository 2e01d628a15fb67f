"""How the pieces plug into ``particles``: one waste-free tempering SMC run,
written out by hand.

The data go into :class:`pac_particles.smc.models.AUCGibbsModel` (a
``particles`` static model whose log-likelihood is ``-lam * R_n``); the
Feynman-Kac model is :class:`pac_particles.smc.tempering.RobustAdaptiveTempering`
(``particles.smc_samplers.AdaptiveTempering`` works too) with waste-free
chains of the package's default move (:func:`pac_particles.smc.moves.default_move`);
``particles.SMC`` runs it. The script then checks that the tempering reached
exponent 1 and summarises the particles with
:meth:`pac_particles.smc.posterior.SMCPosterior.from_smc`: Bayes point, log
evidence and test AUC (printed, and written to ``results/run_smc/summary.json``
or ``--out``). :func:`pac_particles.smc.posterior.run_smc` does the same
in one call; ``pac-particles demo`` adds the baselines and the certificate.

    python scripts/run_smc.py --dataset pima --n-particles 200 --len-chain 10
    python scripts/run_smc.py --csv data.csv --target y --lam 500 --out results/mine

References
----------
[RACL14] Ridgway, Alquier, Chopin & Liang (2014), PAC-Bayesian AUC
classification and scoring. [DC22] Dau & Chopin (2022), Waste-free
sequential Monte Carlo.
"""
import argparse
import os
import time

import numpy as np
import particles
from particles import smc_samplers as ssp
from sklearn.model_selection import train_test_split

from pac_particles.problem.auc import auc_risk
from pac_particles.apps.cli import parent_parsers
from pac_particles.problem.datasets import DATASETS, load_csv, load_dataset
from pac_particles.smc.models import AUCGibbsModel
from pac_particles.smc.tempering import RobustAdaptiveTempering, check_reached_target
from pac_particles.smc.moves import default_move
from pac_particles.smc.posterior import SMCPosterior
from pac_particles.apps.tables import write_json


def main(argv=None):
    parents = parent_parsers()
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n")[0],
        parents=[parents[k] for k in ("run", "sampler", "split")])
    parser.add_argument("--dataset", default="pima", choices=sorted(DATASETS))
    parser.add_argument("--csv", help="a CSV file instead (header row)")
    parser.add_argument("--target", help="label column of --csv (default: last)")
    parser.add_argument("--lam", type=float, default=None,
                        help="inverse temperature (default: n_train)")
    parser.add_argument("--max-iter", type=int, default=1000,
                        help="maximum number of tempering steps")
    args = parser.parse_args(argv)

    X, y, names = (load_csv(args.csv, target=args.target) if args.csv
                   else load_dataset(args.dataset))
    X_tr, X_te, y_tr, y_te = train_test_split(
        X, y, test_size=args.test_size, stratify=y, random_state=args.seed)
    lam = float(len(y_tr)) if args.lam is None else args.lam
    model = AUCGibbsModel(X_tr, y_tr, lam=lam)
    move = ssp.MCMCSequenceWF(mcmc=default_move(model), len_chain=args.len_chain)
    fk = RobustAdaptiveTempering(model, wastefree=True, len_chain=args.len_chain,
                                 move=move, max_iter=args.max_iter)
    np.random.seed(args.seed)  # particles draws from numpy's global generator
    smc = particles.SMC(fk=fk, N=args.n_particles, ESSrmin=1.0, verbose=False)
    start = time.perf_counter()
    smc.run()
    check_reached_target(smc)  # particles stops silently at max_iter
    post = SMCPosterior.from_smc(smc, model, time.perf_counter() - start)

    summary = {
        "lam": post.lam, "n_train": len(y_tr), "n_test": len(y_te),
        "particles": post.theta.shape[0], "tempering_steps": post.n_steps,
        "log_evidence": post.log_z, "wall_time_s": post.wall_time,
        "bayes_point": dict(zip([names[k] if names else f"x{k + 1}"
                                 for k in model.data.columns], post.bayes_point)),
        "test_auc_bayes_point": 1 - auc_risk(post.score(X_te, "bayes_point"), y_te),
        "test_auc_mean": 1 - auc_risk(post.score(X_te, "mean"), y_te),
    }
    print(f"lam {summary['lam']:g}: {summary['tempering_steps']} tempering steps, "
          f"{summary['particles']} particles, {summary['wall_time_s']:.2f} s")
    print(f"log evidence {summary['log_evidence']:.3f}")
    print("Bayes point (standardised inputs): " + ", ".join(
        f"{name} {value:+.3f}" for name, value in summary["bayes_point"].items()))
    print(f"test AUC: Bayes point {summary['test_auc_bayes_point']:.4f}, "
          f"posterior mean {summary['test_auc_mean']:.4f}")
    print(write_json(summary, os.path.join(args.out or "results/run_smc",
                                           "summary.json")))


if __name__ == "__main__":
    main()
