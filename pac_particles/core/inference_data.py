"""Export of posteriors to ArviZ ``InferenceData``.

:func:`to_inference_data` turns what the package fits into the object the
PyMC/ArviZ ecosystem works with, so that ``az.summary``,
``az.plot_posterior``, ``az.plot_forest`` etc. apply unchanged:

* a tempering SMC posterior (:class:`~pac_particles.smc.posterior.SMCPosterior`,
  or several independent runs, one chain each) or any weighted particle
  system (:class:`~pac_particles.core.weighted_particles.WeightedParticles`, e.g.
  an SVGD fit). The ``posterior`` group holds **equally weighted draws
  resampled from the weighted particles** (systematic resampling with a
  seeded generator, then shuffled): they are not a Markov chain, so ArviZ's
  ``ess_*`` and ``mcse_*`` describe the resample, not the sampler; the
  weights' own effective sample size is in ``sample_stats``. ``r_hat``
  needs two chains or more: give a list of independent runs.
* a Gaussian approximation (:class:`~pac_particles.approx.ep.EPResult`,
  :class:`~pac_particles.approx.vb.VBResult`, or the fitted ``EPLinear``,
  ``EPSpikeSlab``, ``EPGP``, ``GaussianVB`` holding one): independent draws
  from ``N(mean, cov)`` with a seeded generator.

Groups and variables
--------------------
``posterior``
    ``theta`` (chain, draw, feature): the linear coefficients on the model's
    (standardised) scale; ``direction`` (chain, draw, feature):
    ``theta / ||theta||``, the only part of ``theta`` the AUC sees; ``z``
    (chain, draw, feature), 0/1 inclusion indicators, for spike-and-slab SMC
    posteriors. GP posteriors hold ``latent_score`` (chain, draw,
    training_point) instead. Coordinates ``feature`` are the feature names.
``sample_stats``
    ``log_marginal_likelihood`` (chain): the SMC estimate of ``log Z`` (the
    name PyMC's SMC uses) or EP's energy; VB results give ``elbo``, a lower
    bound, instead. SMC runs add the tempering path on the dimension
    ``tempering_step`` (``t = 0..T``): ``beta`` (the exponent, PyMC's name),
    ``gamma = lam * beta``, ``log_z`` (``log Z_t``, 0 at ``t = 0``) and
    ``ess`` (ESS of the weights at each step; the prior draws at ``t = 0``
    are equally weighted, ESS = N); ``tempering_step`` is a coordinate
    (``0..T``), so ``sample_stats.gamma.sel(tempering_step=3)`` works.
    Runs of different lengths are padded with NaN after their last step.
    ``lam`` (chain), ``n_particles`` (chain) and, for SMC,
    ``log_marginal_likelihood_se`` (chain; NaN where a run has none)
    complete it.

Attributes record the method, the seed and how the draws were made; the
``InferenceData``'s own ``attrs`` (and those of ``sample_stats``) say which
estimate ``log_marginal_likelihood`` is
(``log_marginal_likelihood_estimate``: ``"importance sampling"`` or
``"tempering"`` for SMC -- :func:`~pac_particles.smc.posterior.run_smc` keeps
the tempering estimate where the importance weights' tail is unreliable
--, ``"EP energy"``, or for VB ``"ELBO"`` under ``elbo``) and its Monte
Carlo standard error (``log_marginal_likelihood_se``: one value per chain,
for SMC only; EP and VB are deterministic).

Chains
------
One SMC run is one chain: ``r_hat`` needs two or more, independent runs of
one model (:func:`~pac_particles.smc.posterior.run_smc_chains`, or the
estimators' ``chains=``), given here as a list. The runs belong to the fit,
not to the export: this function never runs a sampler.

Example
-------
::

    import arviz as az
    from pac_particles.problem.datasets import load_dataset
    from pac_particles.smc.models import AUCGibbsModel
    from pac_particles.smc.posterior import run_smc

    X, y, names = load_dataset("pima")
    post = run_smc(AUCGibbsModel(X, y, lam=len(y)), seed=1)
    idata = post.to_inference_data(feature_names=names, seed=0)
    az.summary(idata, var_names=["direction"])
    float(idata.sample_stats.log_marginal_likelihood[0])   # == post.log_z

References
----------
[KCHM19] Kumar, R., Carroll, C., Hartikainen, A. and Martin, O. (2019).
ArviZ a unified library for exploratory analysis of Bayesian models in
Python. Journal of Open Source Software 4(33), 1143.
[DC22] Dau, H.-D. and Chopin, N. (2022). Waste-free sequential Monte Carlo.
Journal of the Royal Statistical Society B 84(1), 114-148 (the tempering
path and its evidence).
"""

import types

import numpy as np

from pac_particles import __version__
from pac_particles.core.checks import InputError, check_count
from pac_particles.core.posterior_result import fitted_result
from pac_particles.core.weighted_particles import WeightedParticles, directions

__all__ = ["to_inference_data"]

#: estimates of ``log Z`` that are only a bound, exported under their own
#: name instead of ``log_marginal_likelihood``
_BOUND_NAMES = {"ELBO": "elbo"}


def _arviz():
    try:
        import arviz
    except ImportError as err:  # optional dependency
        raise ImportError("to_inference_data needs ArviZ: pip install "
                          "'pac_particles[arviz]'") from err
    return arviz


def _package():
    # ArviZ records the library's name and version in the groups' attributes
    return types.SimpleNamespace(__name__="pac_particles",
                                 __version__=__version__)


def _feature_names(feature_names, data, d):
    """Names of the ``d`` coefficients: ``feature_names`` of the raw columns
    (the kept ones are selected through ``data.columns``) or of the ``d``
    kept columns; default the data's names, else ``x1, ..., xd``."""
    if feature_names is not None:
        names = [str(name) for name in feature_names]
        if len(names) == d:
            return names
        if data is not None and len(names) == data.n_raw_features:
            return [names[k] for k in data.columns]
        raise InputError(f"{len(names)} feature names for {d} coefficients")
    names = list(data.feature_names) if data is not None else []
    return names if len(names) == d else [f"x{k + 1}" for k in range(d)]


def _padded_path(result, length):
    """The tempering path of one run padded with NaN to ``length``."""
    def padded(values):
        out = np.full(length, np.nan)
        out[:len(values)] = values
        return out
    return {key: padded(values) for key, values in result.tempering_path.items()}


def to_inference_data(posterior, n_draws=None, seed=0, feature_names=None):
    """An ArviZ ``InferenceData`` of ``posterior`` (see the module notes).

    Parameters
    ----------
    posterior : a :class:`~pac_particles.core.posterior_result.PosteriorResult`
        (SMCPosterior, WeightedParticles, EPResult, VBResult, SVGDResult), a
        fitted approximation holding one in ``result_`` (:func:`fitted_result`),
        or a list of them (independent runs of the same model: one chain
        each).
    n_draws : int, optional
        Draws per chain: default the result's ``default_draws`` -- the
        number of particles of a weighted system (``M * len_chain`` for
        waste-free SMC), 1000 for a Gaussian.
    seed : int
        Seeds the ``numpy.random.Generator`` of the resampling or of the
        Gaussian draws (chain ``c`` of a list uses ``seed + c``).
    feature_names : sequence of str, optional
        Names of the raw input columns (the columns a model dropped as
        constant are left out through ``data.columns``) or of the ``d``
        coefficients; default the names the data carry, else ``x1..xd``.

    Returns
    -------
    arviz.InferenceData with groups ``posterior`` and ``sample_stats``.

    Raises
    ------
    InputError
        for runs of different dimensions or kinds, a bad ``n_draws`` or
        names that do not match the coefficients; ImportError without ArviZ.
    """
    az = _arviz()
    import xarray  # an ArviZ dependency
    seed = check_count(seed, "seed", minimum=0)
    chains = list(posterior) if isinstance(posterior, (list, tuple)) else [posterior]
    if not chains:
        raise InputError("no posterior to export")
    results = [fitted_result(p) for p in chains]
    first = results[0]
    if len({r.draws_description for r in results}) > 1:
        raise InputError("cannot mix particle and Gaussian posteriors as chains")
    draws = []
    for c, result in enumerate(results):
        m = check_count(result.default_draws if n_draws is None else n_draws,
                        "n_draws", minimum=1)
        draws.append(result.sample_variables(m, np.random.default_rng(seed + c)))
    shapes = {d["theta"].shape for d in draws}
    if len(shapes) != 1:
        raise InputError(f"the chains have different shapes {sorted(shapes)}: "
                         "give runs of one model with the same n_draws")
    theta = np.stack([d["theta"] for d in draws])
    d = theta.shape[2]
    if first.is_gp:
        variables = {"latent_score": theta}
        dims = {"latent_score": ["training_point"]}
        coords = {"training_point": np.arange(d)}
    else:
        variables = {"theta": theta,
                     "direction": directions(theta.reshape(-1, d)).reshape(theta.shape)}
        dims = {"theta": ["feature"], "direction": ["feature"]}
        coords = {"feature": _feature_names(feature_names, first.data, d)}
        if all("z" in draw for draw in draws):
            variables["z"] = np.stack([draw["z"] for draw in draws])
            dims["z"] = ["feature"]
    attrs = {"pac_particles_method": type(chains[0]).__name__,
             "draws": first.draws_description, "draws_seed": seed}
    posterior_group = az.dict_to_dataset(variables, coords=coords, dims=dims,
                                         attrs=attrs, library=_package())
    # per-chain and per-step statistics have no draw dimension, which
    # ArviZ's dict_to_dataset requires: build the Dataset directly, with the
    # posterior's chain coordinate and attributes
    stats, stat_dims = _sample_stats(results)
    coords = {"chain": posterior_group.chain.values}
    if any("tempering_step" in dims for dims in stat_dims.values()):
        coords["tempering_step"] = np.arange(stats["beta"].shape[1])
    evidence = _evidence_attrs(results)
    stats_group = xarray.Dataset(
        {key: (["chain"] + stat_dims.get(key, []), value)
         for key, value in stats.items()},
        coords=coords, attrs=dict(posterior_group.attrs, **evidence))
    return az.InferenceData(attrs=evidence, posterior=posterior_group,
                            sample_stats=stats_group)


def _evidence_attrs(results):
    """``log_marginal_likelihood_estimate`` (one name, or the chains of
    each where they differ: ``"importance sampling (chains 0, 1);
    tempering (chain 2)"``) and, for a Monte Carlo estimate,
    ``log_marginal_likelihood_se`` (a float for one chain, a list for
    several; NaN where a run has none)."""
    names = [r.evidence_method for r in results]
    if names[0] is None:
        return {}
    groups = {name: [c for c, other in enumerate(names) if other == name]
              for name in dict.fromkeys(names)}
    attrs = {"log_marginal_likelihood_estimate": (
        names[0] if len(groups) == 1 else "; ".join(
            f"{name} (chain{'s' if len(chains) > 1 else ''} "
            f"{', '.join(map(str, chains))})"
            for name, chains in groups.items()))}
    if results[0].log_evidence_se is not None:
        se = [float(r.log_evidence_se) for r in results]
        attrs["log_marginal_likelihood_se"] = se[0] if len(se) == 1 else se
    return attrs


def _sample_stats(results):
    """``sample_stats`` variables (chain first) and their extra dimensions."""
    first = results[0]
    stats, dims = {}, {}
    if first.evidence_method is not None:
        name = _BOUND_NAMES.get(first.evidence_method,
                                "log_marginal_likelihood")
        stats[name] = np.array([r.log_evidence for r in results], dtype=float)
    if all(r.lam is not None for r in results):  # a bare sample has none
        stats["lam"] = np.array([r.lam for r in results], dtype=float)
    if first.log_evidence_se is not None:
        stats["log_marginal_likelihood_se"] = np.array(
            [r.log_evidence_se for r in results], dtype=float)
    if all(r.tempering_path is not None for r in results):
        length = max(len(r.tempering_path["beta"]) for r in results)
        paths = [_padded_path(r, length) for r in results]
        for key in ("beta", "gamma", "log_z", "ess"):
            if all(key in p for p in paths):
                stats[key] = np.stack([p[key] for p in paths])
            dims[key] = ["tempering_step"]
    if all(isinstance(r, WeightedParticles) for r in results):
        stats["n_particles"] = np.array([r.n_particles for r in results])
    return stats, dims
