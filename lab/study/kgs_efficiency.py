"""The Kernel Gibbs Sampler against tempering SMC: effective samples per
second of the Bayes point on one posterior, the chain
(:class:`pac_particles.smc.kernel_gibbs_sampler.KernelGibbsSampler`) against
waste-free SMC with the exact ellipse move
(:class:`pac_particles.smc.moves.ExactEllipseGibbs`) [GH01, Sec. 3]. The
logic of ``scripts/bench_kgs_chain.py``.

Example
-------
::

    from pac_particles.smc.kernel_gibbs_sampler import sphere_data
    from lab.study.kgs_efficiency import compare_with_smc
    X, y = sphere_data(50, q=0.1, seed=0)
    print(compare_with_smc(X, y, q=0.1, n_repeats=3).table())

References
----------
[GH01] Graepel, T. and Herbrich, R. (2001). The kernel Gibbs sampler.
NIPS 13.
"""

import time
from dataclasses import dataclass

import numpy as np

from pac_particles.core.checks import check_count
from pac_particles.core.progress import Progress
from pac_particles.smc.kernel_gibbs_sampler import KernelGibbsSampler
from pac_particles.smc.models import ClassificationGibbsModel
from pac_particles.smc.moves import ExactEllipseGibbs
from pac_particles.smc.posterior import run_smc

__all__ = ["ChainComparison", "compare_with_smc"]


@dataclass
class ChainComparison:
    """Effective samples per second of the KGS chain and of tempering SMC
    with the exact ellipse move, on one posterior (:func:`compare_with_smc`).

    ``rows``: one dict per method with ``method``, ``config``, ``seconds``
    (mean wall time of a run), ``ess_repeat`` (variance ESS over repeated
    runs: ``tr Cov_post(w) / tr Cov_runs(estimate of E[w])``),
    ``ess_per_s``, ``ess_own`` (the method's own single-run ESS: ArviZ bulk
    ESS of ``w``, averaged over components, for the chain; ``1 / sum W^2``
    of the final weights for SMC) and ``ess_own_per_s``. ``bayes_point``:
    the pooled estimate of ``E[w]``; ``posterior_sd``: posterior standard
    deviations of ``w`` (pooled chain draws); ``agreement_z``: the largest
    over components of ``|mean_KGS - mean_SMC| / se`` (means and standard
    errors over the runs), near 2 or below when both sample one posterior.
    """

    rows: list
    bayes_point: np.ndarray
    posterior_sd: np.ndarray
    n_repeats: int
    agreement_z: float
    problem: str = ""

    @property
    def speedup(self):
        """ESS per second (repeat definition) of the chain over SMC."""
        by = {r["method"]: r for r in self.rows}
        return by["KGS chain"]["ess_per_s"] / by["SMC exact ellipse"]["ess_per_s"]

    def table(self):
        """The comparison as aligned text."""
        head = (f"{'method':<19} {'config':<38} {'s/run':>7} {'ESS':>8} "
                f"{'ESS/s':>9} {'own ESS':>8} {'own ESS/s':>10}")
        lines = [self.problem, head, "-" * len(head)] if self.problem else [
            head, "-" * len(head)]
        for r in self.rows:
            lines.append(f"{r['method']:<19} {r['config']:<38} "
                         f"{r['seconds']:>7.3f} {r['ess_repeat']:>8.0f} "
                         f"{r['ess_per_s']:>9.0f} {r['ess_own']:>8.0f} "
                         f"{r['ess_own_per_s']:>10.0f}")
        lines.append(f"KGS / SMC ESS per second: {self.speedup:.2f} "
                     f"({self.n_repeats} runs each; the ESS of the repeats "
                     f"has a relative error of about "
                     f"{np.sqrt(2 / (self.n_repeats - 1)):.0%}); largest "
                     f"|E_KGS[w] - E_SMC[w]| / se = {self.agreement_z:.2f}")
        return "\n".join(lines)


def compare_with_smc(X, y, q, n_repeats=10, n_chains=4, n_draws=2000,
                     burn_in=200, n_particles=200, len_chain=10, seed=0,
                     verbose=False, problem=""):
    """ESS per second of the kernel Gibbs chain against waste-free
    tempering SMC with :class:`~pac_particles.smc.moves.ExactEllipseGibbs`
    (:func:`~pac_particles.smc.posterior.run_smc`, ``evidence="tempering"``) on
    the same label-noise posterior of the direction (SMC: prior N(0, I) on
    ``theta``, no intercept, no standardisation, 0-1 risk at the same
    ``lam``: the posterior of ``theta / ||theta||`` is the chain's).

    Both estimate the Bayes point ``E[w]`` ``n_repeats`` times with
    independent seeds; the effective sample size of a method is
    ``tr Cov_post(w) / tr Cov_runs(estimate)`` (the number of independent
    posterior draws whose mean would be as precise), ``Cov_post`` from the
    pooled chain draws; divided by the mean wall time of a run (numba
    compilation excluded by a warm-up run of each). Returns
    :class:`ChainComparison`.
    """
    n_repeats = check_count(n_repeats, "n_repeats", minimum=2)
    kgs = KernelGibbsSampler(X, y, q=q)
    model = ClassificationGibbsModel(X, y, lam=kgs.lam, loss="zero_one",
                                     fit_intercept=False, standardize=False)
    seeds = np.random.SeedSequence(seed).generate_state(2 * n_repeats + 2)
    # numba compilation and caches outside the timings
    kgs.sample(n_draws=5, n_chains=n_chains, burn_in=0, seed=int(seeds[-1]))
    run_smc(model, n_particles=20, len_chain=2, move=ExactEllipseGibbs(model),
            evidence="tempering", seed=int(seeds[-2]))

    methods = {"KGS chain": dict(estimates=[], seconds=[], own=[]),
               "SMC exact ellipse": dict(estimates=[], seconds=[], own=[])}
    pooled = []
    with Progress(verbose, total=2 * n_repeats, desc="KGS vs SMC",
                  unit="run") as bar:
        for r in range(n_repeats):
            start = time.perf_counter()
            chains = kgs.sample(n_draws=n_draws, n_chains=n_chains,
                                burn_in=burn_in, seed=int(seeds[r]))
            kg = methods["KGS chain"]
            kg["seconds"].append(time.perf_counter() - start)
            kg["estimates"].append(chains.bayes_point)
            kg["own"].append(float(np.mean(chains.ess(["w"])["w"].values)))
            pooled.append(chains.draws)
            bar.update(advance=1, text=f"KGS run {r + 1}/{n_repeats} "
                                       f"({bar.elapsed:.1f} s)")
            start = time.perf_counter()
            post = run_smc(model, n_particles=n_particles, len_chain=len_chain,
                           move=ExactEllipseGibbs(model), evidence="tempering",
                           seed=int(seeds[n_repeats + r]))
            sm = methods["SMC exact ellipse"]
            sm["seconds"].append(time.perf_counter() - start)
            sm["estimates"].append(post.bayes_point)
            sm["own"].append(float(post.ess))
            bar.update(advance=1, text=f"SMC run {r + 1}/{n_repeats} "
                                       f"({bar.elapsed:.1f} s)")
    pooled = np.concatenate(pooled)
    post_var = pooled.var(axis=0)
    configs = {"KGS chain": f"{n_chains} chains x {n_draws} draws "
                            f"+ {burn_in} burn-in",
               "SMC exact ellipse": f"waste-free M = {n_particles}, P = "
                                    f"{len_chain}"}
    rows, means, sq_se = [], [], []
    for name, m in methods.items():
        est = np.array(m["estimates"])
        seconds = float(np.mean(m["seconds"]))
        ess = float(post_var.sum() / est.var(axis=0, ddof=1).sum())
        own = float(np.mean(m["own"]))
        means.append(est.mean(axis=0))
        sq_se.append(est.var(axis=0, ddof=1) / n_repeats)
        rows.append(dict(method=name, config=configs[name], seconds=seconds,
                         ess_repeat=ess, ess_per_s=ess / seconds, ess_own=own,
                         ess_own_per_s=own / seconds))
    return ChainComparison(rows=rows, bayes_point=pooled.mean(axis=0),
                           posterior_sd=np.sqrt(post_var),
                           n_repeats=n_repeats, problem=problem,
                           agreement_z=float(np.max(np.abs(means[0] - means[1])
                                                    / np.sqrt(sq_se[0] + sq_se[1]))))
