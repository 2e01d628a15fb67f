"""Convergence diagnostics of MCMC chains in plain numpy: rank-normalised
split R-hat and bulk / tail effective sample sizes [VGSCB21].

The same estimators as ``arviz.rhat`` and ``arviz.ess`` (checked against
them in the tests), without ArviZ, so that chains (the kernel Gibbs
sampler's) report their diagnostics on a plain install.

    >>> import numpy as np
    >>> from pac_particles.core.mcmc_diagnostics import ess_bulk, rhat
    >>> draws = np.random.default_rng(0).normal(size=(4, 500))
    >>> 1.0 < rhat(draws) < 1.02, 1500 < ess_bulk(draws) < 2500
    (True, True)

References
----------
[VGSCB21] Vehtari, Gelman, Simpson, Carpenter and Buerkner (2021),
    Rank-normalization, folding, and localization: an improved R-hat for
    assessing convergence of MCMC. Bayesian Analysis 16(2), 667-718.
"""
from __future__ import annotations

import numpy as np
from scipy.fft import next_fast_len
from scipy.stats import norm, rankdata

from pac_particles.core.checks import InputError

__all__ = ["rhat", "ess_bulk", "ess_tail"]


def _as_chains(draws, min_chains: int) -> np.ndarray:
    draws = np.asarray(draws, dtype=float)
    if draws.ndim == 1:
        draws = draws[None, :]
    if draws.ndim != 2:
        raise InputError(f"draws must be (n_chains, n_draws), got shape "
                         f"{draws.shape}: pass one scalar quantity at a time")
    if draws.shape[0] < min_chains or draws.shape[1] < 4:
        raise InputError(f"need {'two chains' if min_chains == 2 else 'one chain'} or more of 4 draws or "
                         f"more, got {draws.shape}: run longer chains")
    if not np.all(np.isfinite(draws)):
        raise InputError("draws contain NaN or infinite values")
    return draws


def _split(draws: np.ndarray) -> np.ndarray:
    """Each chain cut in two halves (the middle draw of an odd chain is
    dropped): 2M chains, which exposes a trend within a chain."""
    half = draws.shape[1] // 2
    return np.vstack([draws[:, :half], draws[:, -half:]])


def _z_scale(draws: np.ndarray) -> np.ndarray:
    """Rank-normalisation [VGSCB21, Eq. (14)]: ranks over all chains
    (ties averaged), then normal quantiles of ``(r - 3/8) / (S + 1/4)``."""
    ranks = rankdata(draws, method="average").reshape(draws.shape)
    return norm.ppf((ranks - 0.375) / (draws.size + 0.25))


def _constant(draws: np.ndarray) -> bool:
    return np.ptp(draws) < np.finfo(float).resolution


def _autocovariance(draws: np.ndarray) -> np.ndarray:
    """Biased autocovariance of each chain at every lag, by FFT."""
    n = draws.shape[1]
    centred = draws - draws.mean(axis=1, keepdims=True)
    spectrum = np.fft.rfft(centred, n=next_fast_len(2 * n), axis=1)
    return np.fft.irfft(spectrum * np.conj(spectrum), axis=1)[:, :n] / n


def _ess(draws: np.ndarray) -> float:
    """Multi-chain effective sample size [VGSCB21, Eqs. (10)-(13)]:
    autocorrelations from the within- and between-chain variances, summed
    over Geyer's initial positive and monotone sequence."""
    if _constant(draws):
        return float(draws.size)
    n_chains, n = draws.shape
    acov = _autocovariance(draws)
    mean_var = acov[:, 0].mean() * n / (n - 1.0)
    var_plus = mean_var * (n - 1.0) / n
    if n_chains > 1:
        var_plus += np.var(draws.mean(axis=1), ddof=1)
    rho = np.zeros(n)
    rho[0] = rho_even = 1.0
    rho[1] = rho_odd = 1.0 - (mean_var - acov[:, 1].mean()) / var_plus
    t = 1
    # initial positive sequence: pairs of autocorrelations while their sum > 0
    while t < n - 3 and rho_even + rho_odd > 0.0:
        rho_even = 1.0 - (mean_var - acov[:, t + 1].mean()) / var_plus
        rho_odd = 1.0 - (mean_var - acov[:, t + 2].mean()) / var_plus
        if rho_even + rho_odd >= 0:
            rho[t + 1], rho[t + 2] = rho_even, rho_odd
        t += 2
    max_t = t - 2
    if rho_even > 0:
        rho[max_t + 1] = rho_even
    # initial monotone sequence: the pair sums made non-increasing
    t = 1
    while t <= max_t - 2:
        if rho[t + 1] + rho[t + 2] > rho[t - 1] + rho[t]:
            rho[t + 1] = rho[t + 2] = 0.5 * (rho[t - 1] + rho[t])
        t += 2
    total = n_chains * n
    tau = -1.0 + 2.0 * rho[:max_t + 1].sum() + rho[max_t + 1:max_t + 2].sum()
    # the cap at S log10(S) keeps antithetic chains' ESS finite
    return float(total / max(tau, 1.0 / np.log10(total)))


def _rhat_plain(draws: np.ndarray) -> float:
    n = draws.shape[1]
    between = n * np.var(draws.mean(axis=1), ddof=1)
    within = np.mean(np.var(draws, axis=1, ddof=1))
    return float(np.sqrt((between / within + n - 1) / n))


def rhat(draws) -> float:
    """Rank-normalised split R-hat [VGSCB21, Eq. (15)]: the larger of the
    bulk R-hat (rank-normalised draws) and the tail R-hat (rank-normalised
    distances to the median).

    Parameters
    ----------
    draws : array (n_chains, n_draws)
        One scalar quantity; two chains or more.

    Returns
    -------
    float
        R-hat; values above 1.01 say the chains have not mixed.
    """
    split = _split(_as_chains(draws, min_chains=2))
    if _constant(split):
        return float("nan")
    folded = np.abs(split - np.median(split))
    return max(_rhat_plain(_z_scale(split)), _rhat_plain(_z_scale(folded)))


def ess_bulk(draws) -> float:
    """Bulk effective sample size [VGSCB21, Section 4.1]: the ESS of the
    rank-normalised split chains.

    Parameters
    ----------
    draws : array (n_chains, n_draws) or (n_draws,)

    Returns
    -------
    float
    """
    return _ess(_z_scale(_split(_as_chains(draws, min_chains=1))))


def ess_tail(draws) -> float:
    """Tail effective sample size [VGSCB21, Section 4.3]: the smaller ESS of
    the indicators of the 5% and 95% quantiles over the split chains.

    Parameters
    ----------
    draws : array (n_chains, n_draws) or (n_draws,)

    Returns
    -------
    float
    """
    draws = _as_chains(draws, min_chains=1)
    if _constant(draws):
        return float(draws.size)
    return min(_ess(_split((draws <= np.quantile(draws, p)).astype(float)))
               for p in (0.05, 0.95))
