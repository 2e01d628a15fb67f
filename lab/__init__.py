"""The lab beside the package: studies, reference implementations and the
logic of the figures and tables, kept outside the wheel (``setup.cfg``
packages ``pac_particles*`` only), as ``particles`` keeps ``papers/`` and
``book/`` beside its package.

* :mod:`lab.study`: the studies behind ``scripts/`` and ``diagnostics/``
  (repeated runs, moves, certificates and their coverage, the papers'
  tables, the student report's sequential tuning);
* :mod:`lab.reference`: implementations kept as references for the tests
  and as benchmark baselines (the paper's pair-by-pair EP).

The lab is the top layer: it imports the package's public names, and the
package never imports the lab. It runs from a checkout: the tests run from
the repository root (``python -m pytest tests``), and the scripts put the
root on ``sys.path`` themselves (``python scripts/bench_ep.py``).
"""
