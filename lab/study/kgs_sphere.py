"""The label-noise posterior on the sphere of R^3 [GH01, Fig. 1]: its log
density on a longitude-latitude grid, its modes there, and the choice of a
data set whose posterior is multi-modal. The logic of
``diagnostics/kgs_figure1.py``.

Under the uniform prior the posterior of a direction ``w`` is proportional
to ``((1 - q) / q)^(-errors(w))`` [GH01, Eq. (3)]: piecewise constant on the
cells that the training points' great circles cut the sphere into. A mode is
a plateau (a connected set of grid cells of one level) with no neighbouring
cell of a higher level; its share is the posterior mass of its cells. The
paper's panel (a) shows, at m = 10 and q = 0.2, several such modes, which a
typical draw of 10 points does not give (one plateau holds most of the
mass): :func:`multimodal_seed` looks for the first seed whose second mode
holds a given share.

Example
-------
::

    from lab.study.kgs_sphere import multimodal_seed
    seed, modes = multimodal_seed(10, q=0.2, min_share=0.1)
    [round(m.share, 2) for m in modes[:3]]

References
----------
[GH01] Graepel, T. and Herbrich, R. (2001). The kernel Gibbs sampler.
NIPS 13.
"""

from dataclasses import dataclass

import numpy as np
from scipy import ndimage

from pac_particles.core.checks import InputError, check_count
from pac_particles.smc.kernel_gibbs_sampler import (KernelGibbsSampler,
                                                    sphere_data,
                                                    sphere_directions)

__all__ = ["SphereGrid", "sphere_grid", "Mode", "posterior_modes",
           "multimodal_seed"]


@dataclass
class SphereGrid:
    """Cell edges (``lon``: n_lon + 1, ``lat``: n_lat + 1), the unit vectors
    of the cells' centres (n_lat, n_lon, 3) and their areas (n_lat, n_lon),
    summing to 4 pi."""

    lon: np.ndarray
    lat: np.ndarray
    centres: np.ndarray
    area: np.ndarray


def sphere_grid(n_lon: int = 180, n_lat: int = 90) -> SphereGrid:
    """An equal-angle grid of the sphere (:class:`SphereGrid`)."""
    lon = np.linspace(-np.pi, np.pi, check_count(n_lon, "n_lon", minimum=3) + 1)
    lat = np.linspace(-np.pi / 2, np.pi / 2,
                      check_count(n_lat, "n_lat", minimum=2) + 1)
    centres = sphere_directions(*np.meshgrid(0.5 * (lon[1:] + lon[:-1]),
                                             0.5 * (lat[1:] + lat[:-1])))
    area = np.outer(np.diff(np.sin(lat)), np.diff(lon))
    return SphereGrid(lon=lon, lat=lat, centres=centres, area=area)


@dataclass
class Mode:
    """A local maximum of the log posterior on the grid: its ``level``, the
    posterior mass ``share`` of its cells and their ``mask``."""

    level: float
    share: float
    mask: np.ndarray


def _seam_joined(labels, n_labels):
    """Component labels with those that meet across the longitude seam
    (first and last column) joined."""
    parent = np.arange(n_labels + 1)

    def root(a):
        while parent[a] != a:
            a = parent[a]
        return a

    # 8-neighbours across the seam: row i's first cell meets rows i-1..i+1
    # of the last column
    n_lat = labels.shape[0]
    for i in range(n_lat):
        for j in range(max(0, i - 1), min(n_lat, i + 2)):
            a, b = labels[i, 0], labels[j, -1]
            if a and b:
                parent[root(a)] = root(b)
    roots = np.array([root(a) for a in range(n_labels + 1)])
    return roots[labels]


def posterior_modes(log_post, area) -> list:
    """The modes of a log density given on a longitude-latitude grid
    (rows: latitude, columns: longitude, wrapping round), largest share
    first.

    Cells are neighbours across sides and corners (8 of them; the first and
    last longitude columns are neighbours, the polar rows are not joined
    through the pole). Levels are compared after rounding to 1e-9 (the
    label-noise posterior takes a few exact levels).

    Parameters
    ----------
    log_post : (n_lat, n_lon) array, the log density at the cells' centres.
    area : (n_lat, n_lon) array, the cells' areas.

    Returns
    -------
    list of :class:`Mode`
    """
    log_post = np.asarray(log_post, dtype=float)
    if log_post.ndim != 2 or log_post.shape != np.shape(area):
        raise InputError(f"log_post and area must be one (n_lat, n_lon) "
                         f"shape, got {log_post.shape} and {np.shape(area)}")
    level = np.round(log_post - log_post.max(), 9)
    padded = np.pad(np.pad(level, ((1, 1), (0, 0)), mode="edge"),
                    ((0, 0), (1, 1)), mode="wrap")
    highest_neighbour = ndimage.maximum_filter(padded, size=3)[1:-1, 1:-1]
    mass = np.asarray(area) * np.exp(level)
    mass /= mass.sum()
    modes = []
    for value in np.unique(level):
        plateau = level == value
        labels, n_labels = ndimage.label(plateau, structure=np.ones((3, 3)))
        joined = _seam_joined(labels, n_labels)
        for component in np.unique(joined[plateau]):
            mask = plateau & (joined == component)
            if np.all(highest_neighbour[mask] <= value):
                modes.append(Mode(level=float(value),
                                  share=float(mass[mask].sum()), mask=mask))
    return sorted(modes, key=lambda mode: -mode.share)


def multimodal_seed(m: int, q: float, min_share: float = 0.1,
                    inputs: str = "uniform", start: int = 0,
                    max_tries: int = 200, grid: SphereGrid = None):
    """The first seed from ``start`` whose data set
    (:func:`~pac_particles.smc.kernel_gibbs_sampler.sphere_data`) has a
    posterior whose second mode holds ``min_share`` of the mass or more.

    Returns
    -------
    (seed, modes) : the seed and :func:`posterior_modes` of its posterior.
    """
    grid = sphere_grid() if grid is None else grid
    for seed in range(start, start + check_count(max_tries, "max_tries")):
        X, y = sphere_data(m, q, seed=seed, inputs=inputs)
        log_post = KernelGibbsSampler(X, y, q=q).log_likelihood(grid.centres)
        modes = posterior_modes(log_post, grid.area)
        if len(modes) > 1 and modes[1].share >= min_share:
            return seed, modes
    raise InputError(f"no seed in [{start}, {start + max_tries}) gives a "
                     f"second mode of share {min_share} or more at m = {m}, "
                     f"q = {q}: lower min_share or raise max_tries")
