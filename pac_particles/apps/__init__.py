"""Layer 6, apps: what runs the library -- the ``pac-particles`` command
(:mod:`~pac_particles.apps.cli`), figures (:mod:`~pac_particles.apps.plots`),
tables (:mod:`~pac_particles.apps.tables`) and the studies behind the
scripts and diagnostics (:mod:`~pac_particles.apps.study`).
"""
