"""Waste-free chains extended until they forget their start.

A waste-free SMC sampler [DC22] keeps every state of M chains of length P
started from the resampled particles; its estimates are consistent when
the chains run long against the move's mixing time, and biased where they
do not: states that still remember the previous target's particles enter
the next step's weights, and the evidence falls short (the bridge from a
Gaussian approximation in d = 60, Sonar at ``lam = 10 n``, ran 0.5-0.75
nats low at P = 10 and agreed with a long run at P = 200:
docs/benchmarks.md, "Exactness of the default against quadrature"). How
long is long enough is a property of the target and the move, not known
in advance.

:class:`DecorrelatedChainsWF` measures it on the chains themselves: after
the P states it doubles the chains' length until the correlation, across
the M chains, between each chain's start and its last state (the mean over
the parameter's coordinates and the log-likelihood, :func:`start_correlation`)
falls to :data:`MAX_START_CORRELATION`, or the length reaches
:data:`MAX_CHAIN_GROWTH` times P (or the population
:data:`MAX_POPULATION_ENTRIES` numbers). Every state is kept (waste-free):
the population is M times the length reached, the layout (states of one
chain M apart) that of ``particles``, so the single-run variance
estimators read it unchanged. Where the chains forget their start within
P states (most tempering steps of a well-fitted bridge) nothing changes.
Like the adaptive exponents, the length is chosen from the particles, one
for all M chains: a choice that depends on each chain through an average
over M of them (an effect of order 1 / M, as that of the exponents the
tempering chooses); particles' own ``AdaptiveMCMCSequence`` stops a
standard sampler's chains by the change of their mean jump in the same
spirit.

References
----------
[DC22] Dau, H.-D. and Chopin, N. (2022). Waste-free sequential Monte
Carlo. JRSS B 84(1), 114-148.
"""

import warnings

import numpy as np
from particles import smc_samplers as ssp

from pac_particles.core.checks import InputError, check_count
from pac_particles.problem.priors import param_array

__all__ = ["DecorrelatedChainsWF", "start_correlation", "MAX_START_CORRELATION",
           "MAX_CHAIN_GROWTH", "MAX_POPULATION_ENTRIES",
           "ChainsRememberStartWarning"]

#: chains stop growing once the mean correlation between their starts and
#: their last states is at most this: an AR(1) of autocorrelation time
#: ``tau`` reaches it after ``L = 3 tau`` (``exp(-L / tau) = 0.05``); at
#: 0.1 the bridge on Sonar at 10 n still fell short of the long run
#: (docs/benchmarks.md, "Exactness of the default against quadrature")
MAX_START_CORRELATION = 0.05
#: ... or once they are this many times ``len_chain`` long (the last steps
#: on Sonar at 10 n reach it, a little above the threshold)
MAX_CHAIN_GROWTH = 32
#: ... or once the population holds this many parameter entries (M x
#: length x d floats, 256 MiB)
MAX_POPULATION_ENTRIES = 2 ** 25


class ChainsRememberStartWarning(RuntimeWarning):
    """Waste-free chains reached their longest length (``max_growth``
    times ``len_chain``, or ``max_entries``) with a start correlation
    above ``max_correlation``: they may not have forgotten their start, and
    the run's estimates (its ``log Z`` above all) can fall short; a longer
    ``len_chain`` lets them run further."""


def _statistics(x):
    """(N, d + 1): the particles' parameters and their log-likelihood."""
    theta = np.array(param_array(x.theta), dtype=float).reshape(x.N, -1)
    return np.column_stack([theta, np.asarray(x.llik, dtype=float)])


def start_correlation(start, end):
    """Mean over columns of the correlation, across rows, between ``start``
    and ``end`` (N, k): how much M chains (rows) still remember their
    starts. Columns constant at either end are left out; 0 when all
    are."""
    a = start - start.mean(axis=0)
    b = end - end.mean(axis=0)
    scale = np.sqrt(np.sum(a * a, axis=0) * np.sum(b * b, axis=0))
    keep = scale > 0
    if not np.any(keep):
        return 0.0
    return float(np.mean(np.sum(a * b, axis=0)[keep] / scale[keep]))


class DecorrelatedChainsWF(ssp.MCMCSequenceWF):
    """Waste-free chains of at least ``len_chain`` states, doubled until
    they forget their start (module docstring).

    Parameters
    ----------
    mcmc : particles ArrayMCMC, the step.
    len_chain : int, the shortest chain (P).
    max_correlation : float, :data:`MAX_START_CORRELATION`.
    max_growth : int, :data:`MAX_CHAIN_GROWTH`.
    max_entries : int, :data:`MAX_POPULATION_ENTRIES`.

    Each call records the length its chains reached in
    ``x.shared["chain_lengths"]`` and their last start correlation in
    ``x.shared["start_correlations"]``. The first call whose chains stop at
    their longest length above ``max_correlation`` warns
    (:class:`ChainsRememberStartWarning`), once per move.
    """

    def __init__(self, mcmc=None, len_chain=10,
                 max_correlation=MAX_START_CORRELATION,
                 max_growth=MAX_CHAIN_GROWTH,
                 max_entries=MAX_POPULATION_ENTRIES):
        super().__init__(mcmc=mcmc, len_chain=check_count(len_chain,
                                                          "len_chain"))
        if not 0.0 < max_correlation < 1.0:
            raise InputError(f"max_correlation must be in (0, 1), got "
                             f"{max_correlation}")
        self.max_correlation = float(max_correlation)
        self.max_growth = check_count(max_growth, "max_growth")
        self.max_entries = check_count(max_entries, "max_entries")
        self.warned = False

    def __call__(self, x, target):
        start = _statistics(x)
        entries = x.N * max(start.shape[1] - 1, 1)
        longest = max(self.nsteps + 1, min(
            self.max_growth * (self.nsteps + 1), self.max_entries // entries))
        xs, ars = [x], []
        length = self.nsteps + 1
        while True:
            while len(xs) < length:
                x = x.copy()
                ars.append(self.mcmc.step(x, target=target))
                xs.append(x)
            rho = start_correlation(start, _statistics(x))
            if rho <= self.max_correlation or length >= longest:
                break
            length = min(2 * length, longest)
        if rho > self.max_correlation and not self.warned:
            self.warned = True
            warnings.warn(
                f"waste-free chains reached their longest length, {length} "
                f"states, with a start correlation of {rho:.2f} (above "
                f"{self.max_correlation}): they may not have forgotten their "
                f"start, and log Z can fall short; raise len_chain",
                ChainsRememberStartWarning, stacklevel=2)
        xout = x.concatenate(*xs)
        shared = xout.shared
        shared["acc_rates"] = shared.get("acc_rates", []) + [ars]
        shared["chain_lengths"] = shared.get("chain_lengths", []) + [length]
        shared["start_correlations"] = (shared.get("start_correlations", [])
                                        + [rho])
        return xout
