"""Layer 6, apps: what runs the library -- the ``pac-particles`` command
(:mod:`~pac_particles.apps.cli`), figures (:mod:`~pac_particles.apps.plots`),
tables (:mod:`~pac_particles.apps.tables`). The studies behind the scripts
and diagnostics live beside the package, in ``lab/``, outside the wheel.
"""
