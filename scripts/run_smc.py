"""The main job: waste-free tempering SMC on Pima (see `pac-particles demo -h`)."""
import sys

from pac_particles.cli import main

if __name__ == "__main__":
    sys.exit(main(["demo"] + sys.argv[1:]))
