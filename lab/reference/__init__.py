"""Reference implementations: slower formulations of what the package
computes, kept as independent checks in the tests and as benchmark
baselines.

* :mod:`lab.reference.pairwise_ep`: EP-AUC written pair by pair, as
  [RACL14, appendix B.2] describes it, O(P d^2) per sweep.
* :mod:`lab.reference.quadrature`: the exact Gibbs posterior in d = 2 and
  d = 3 by quadrature, and the risks by their definitions.
"""
