"""Fixtures shared by the tests (pytest finds them here; nothing imports
this file). The data builders of fixed size and seed are in
``builders.py``, the helpers that check against the independent
references (``lab/reference/quadrature.py``) in ``reference.py``; both sit
on the path of every test directory through this file's directory.
"""

import numpy as np
import pytest

from pac_particles.problem.datasets import load_dataset

# ---------------------------------------------------------------- fixtures


@pytest.fixture
def seed():
    """The seed of the :func:`rng` fixture."""
    return 20141208


@pytest.fixture
def rng(seed):
    return np.random.default_rng(seed)


@pytest.fixture(scope="session")
def pima():
    """The Pima Indians diabetes data (768 x 8), labels in {0, 1}."""
    X, y, _ = load_dataset("pima")
    return X, y
