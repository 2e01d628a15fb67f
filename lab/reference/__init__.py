"""Reference implementations: slower formulations of what the package
computes, kept as independent checks in the tests and as benchmark
baselines.

* :mod:`lab.reference.pairwise_ep`: EP-AUC written pair by pair, as
  [RACL14, appendix B.2] describes it, O(P d^2) per sweep.
"""
