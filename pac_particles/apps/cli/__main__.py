"""``python -m pac_particles.apps.cli``: the ``pac-particles`` command."""

import sys

from pac_particles.apps.cli import main

sys.exit(main())
