"""The label-noise posterior's modes on the sphere [GH01, Fig. 1]: against
a plain flood fill over the grid, the closed-form mass of a hemisphere, and
the choice of a multi-modal data set."""

from collections import deque

import numpy as np
import pytest

from lab.study.kgs_sphere import (multimodal_seed, posterior_modes,
                                  sphere_grid)
from pac_particles.smc.kernel_gibbs_sampler import (KernelGibbsSampler,
                                                    sphere_data)


def _flood_fill_modes(level):
    """Plateaus with no higher 8-neighbour (longitude wrapping round), by
    breadth-first search: sorted list of (level, number of cells)."""
    n_lat, n_lon = level.shape
    seen = np.zeros(level.shape, dtype=bool)
    out = []
    for start in np.ndindex(level.shape):
        if seen[start]:
            continue
        value, queue, cells, is_mode = level[start], deque([start]), 0, True
        seen[start] = True
        while queue:
            i, j = queue.popleft()
            cells += 1
            for di in (-1, 0, 1):
                for dj in (-1, 0, 1):
                    a, b = i + di, (j + dj) % n_lon
                    if not 0 <= a < n_lat or (a, b) == (i, j):
                        continue
                    if level[a, b] > value:
                        is_mode = False
                    elif level[a, b] == value and not seen[a, b]:
                        seen[a, b] = True
                        queue.append((a, b))
        if is_mode:
            out.append((float(value), cells))
    return sorted(out)


def test_modes_match_a_flood_fill_of_the_grid():
    grid = sphere_grid(72, 36)
    for seed in (7, 3):
        X, y = sphere_data(10, 0.2, seed=seed)
        log_post = KernelGibbsSampler(X, y, q=0.2).log_likelihood(grid.centres)
        modes = posterior_modes(log_post, grid.area)
        level = np.round(log_post - log_post.max(), 9)
        assert sorted((m.level, int(m.mask.sum())) for m in modes) == \
            _flood_fill_modes(level)
        assert sum(m.share for m in modes) <= 1.0


def test_two_poles_give_one_mode_holding_its_closed_form_mass():
    """A positive point at the north pole and a negative one at the south
    pole: the northern hemisphere has no error and the southern two, so the
    only mode is the north, with mass (1 - q)^2 / ((1 - q)^2 + q^2)."""
    grid = sphere_grid(36, 18)
    kgs = KernelGibbsSampler(np.array([[0.0, 0.0, 1.0], [0.0, 0.0, -1.0]]),
                             np.array([1, -1]), q=0.2)
    modes = posterior_modes(kgs.log_likelihood(grid.centres), grid.area)
    assert len(modes) == 1
    assert modes[0].share == pytest.approx(0.8 ** 2 / (0.8 ** 2 + 0.2 ** 2),
                                           rel=1e-9)
    assert grid.area.sum() == pytest.approx(4 * np.pi)


def test_multimodal_seed_returns_a_posterior_with_a_second_mode():
    grid = sphere_grid(72, 36)
    seed, modes = multimodal_seed(10, 0.2, min_share=0.1, grid=grid)
    assert modes[1].share >= 0.1
    X, y = sphere_data(10, 0.2, seed=seed)
    log_post = KernelGibbsSampler(X, y, q=0.2).log_likelihood(grid.centres)
    assert [m.share for m in posterior_modes(log_post, grid.area)] == \
        [m.share for m in modes]
