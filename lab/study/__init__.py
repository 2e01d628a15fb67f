"""Studies of the samplers and scorers: the logic behind ``diagnostics/`` and
the comparison scripts, kept out of the library modules.

* :mod:`~lab.study.repeated_runs`: independent SMC runs over a grid
  of chain lengths, the adjusted variance of their estimates, matched
  standard / waste-free sizes [DC22];
* :mod:`~lab.study.moves`: efficiency of MCMC moves at an equal
  budget of risk evaluations;
* :mod:`~lab.study.spike_slab_path`: the regularisation path in the
  spike variance ``v0`` [RACL14, Fig. 3];
* :mod:`~lab.study.svgd_vs_smc`: SVGD [LW16] against tempering SMC;
* :mod:`~lab.study.scorers`: test AUC of scorers on repeated
  splits (the benchmark table);
* :mod:`~lab.study.sequential_tuning`: the student report's one-at-a-time
  K-fold tuning of the sampler's settings;
* :mod:`~lab.study.kgs_efficiency`: the Kernel Gibbs Sampler against
  tempering SMC, effective samples per second.

Example
-------
>>> from lab import study
>>> study.MATCHES                 # how matched_sizes pairs the two schemes
('particles', 'budget')

References
----------
[DC22] Dau, H.-D. and Chopin, N. (2022). Waste-free sequential Monte Carlo.
Journal of the Royal Statistical Society B 84(1), 114-148.
[LW16] Liu, Q. and Wang, D. (2016). Stein variational gradient descent: a
general purpose Bayesian inference algorithm. NIPS 29.
[RACL14] Ridgway, J., Alquier, P., Chopin, N. and Liang, F. (2014).
PAC-Bayesian AUC classification and scoring. NIPS 27.
"""

from lab.study.moves import compare_moves, format_move_table
from lab.study.repeated_runs import (MATCHES, RepeatedRuns, adjusted_variance,
                            matched_sizes, repeated_runs)
from lab.study.scorers import compare_scorers
from lab.study.spike_slab_path import SpikeSlabPath, spike_slab_path
from lab.study.svgd_vs_smc import compare_with_smc, format_comparison

__all__ = ["repeated_runs", "RepeatedRuns", "adjusted_variance",
           "matched_sizes", "MATCHES", "compare_moves", "format_move_table",
           "SpikeSlabPath", "spike_slab_path", "compare_with_smc",
           "format_comparison", "compare_scorers"]
