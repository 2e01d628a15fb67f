"""The kernel Gibbs sampler: a Markov chain on the sphere of normalised weights.

The chain of [GH01, Sec. 3], as the paper defines it. Linear classifiers
``x -> <w, phi(x)>`` with ``||w|| = 1`` under the uniform prior on the unit
sphere, and the label-noise likelihood [GH01, Eq. (3)]

    P(y | x, w) = 1 - q  if y <w, phi(x)> > 0,   q  otherwise

(a margin of exactly 0 counts as half an error, likelihood
``sqrt(q (1 - q))``, as the package's 0-1 risk counts ties 1/2; the paper
counts it as an error, a difference of measure 0 for the posterior): the
posterior is ``exp(-lam r_n(w))`` on the sphere,
``r_n`` the training error, ``lam = n log((1 - q) / q)``
(:func:`pac_particles.smc.label_noise.lam_from_label_noise`). One step:

1. draw a direction ``v`` uniformly among the unit vectors orthogonal to
   the current ``w`` (a standard normal vector, projected on the tangent
   space and normalised);
2. along the great circle ``w cos t + v sin t`` every training margin is
   ``y_i (a_i cos t + b_i sin t)``, ``a = scores of w``, ``b = scores of
   v``: negative on a half-circle, so the training error is piecewise
   constant with ``2n`` break points;
3. draw ``t`` exactly from ``exp(-lam r_n)`` on the circle (uniform in arc
   length): an arc with probability ``length x exp(-lam r_arc)``, a
   uniform angle inside it -- the sweep of
   :func:`pac_particles.smc.moves.point_angle_draws`, shared with the SMC move
   :class:`~pac_particles.smc.moves.ExactEllipseGibbs`;
4. ``w <- w cos t + v sin t``.

Valid because ``(w, v)`` drawn this way is uniform on the orthonormal
2-frames when ``w`` is uniform on the sphere, a law invariant under the
rotations ``(w, v) -> (w cos t + v sin t, -w sin t + v cos t)``: steps 1 and 3
are two exact Gibbs updates of the posterior extended to frames. (The SMC
move travels on ellipses of a Gaussian prior instead; both sample the same
posterior of the direction, since the 0-1 risk only sees ``w / ||w||``.)

Two forms, one chain:

* **primal** (``kernel=None``): ``w`` in ``R^d``, scores ``X w``;
* **kernel** (``kernel=k``): ``w = sum_i alpha_i phi(x_i)`` on the unit
  sphere of the RKHS restricted to the span of the training points
  (``||w||^2 = alpha' K alpha``), scores ``K alpha`` [GH01, Eq. (1)].
  With ``K = U diag(e) U'`` (eigenvalues above ``rank_tol`` times the
  largest kept, r of them), ``c = diag(sqrt(e)) U' alpha`` are the
  coordinates of ``w`` in an orthonormal basis of that span: the RKHS
  metric is the Euclidean metric of ``c``, the scores are ``F c`` with
  ``F = U diag(sqrt(e))``, and the chain is the primal chain on ``c``
  (O(n r) per step, no inverse of ``K``; exact on rank-deficient ``K``).
  Draws are reported as ``alpha = U diag(1 / sqrt(e)) c``.

Several chains run in lockstep from uniform starting points (overdispersed
for the posterior); :class:`KGSChains` holds their draws and gives their
diagnostics (R-hat and ESS of the weights and the training margins, in
plain numpy; ArviZ's objects with the extra ``arviz``) and the Bayes point
[GH01, Eq. (5)].
The comparison of its effective samples per second with tempering SMC
(``scripts/bench_kgs_chain.py``) lives beside the package, in
``lab/study/kgs_efficiency.py``.

Example
-------
::

    from pac_particles.smc.kernel_gibbs_sampler import (KernelGibbsSampler,
                                                    sphere_data)
    X, y = sphere_data(100, q=0.05, seed=0)          # 3-D, 5% flipped labels
    kgs = KernelGibbsSampler(X, y, q=0.05)
    chains = kgs.sample(n_draws=2000, n_chains=4, seed=0)
    chains.bayes_point                               # posterior mean of w
    chains.summary()                                 # ESS, R-hat (ArviZ)

    from pac_particles.core.kernels import SquaredExponential
    rbf = KernelGibbsSampler(X, y, q=0.05, kernel=SquaredExponential(1.0))
    rbf.sample(1000, seed=1).decision_function(X[:5])   # (4000, 5)

References
----------
[GH01] Graepel, T. and Herbrich, R. (2001). The kernel Gibbs sampler.
NIPS 13.

[VGSCB21] Vehtari, A., Gelman, A., Simpson, D., Carpenter, B. and Buerkner,
P.-C. (2021). Rank-normalization, folding, and localization: an improved
R-hat for assessing convergence of MCMC. Bayesian Analysis 16(2), 667-718
(the ESS and R-hat of ArviZ).
"""

import time
from dataclasses import dataclass, field

import numpy as np

from pac_particles.core.checks import (InputError, check_count, check_positive,
                     check_probability)
from pac_particles.problem.data import validate_xy
from pac_particles.core.kernels import gram_matrix
from pac_particles.core.mcmc_diagnostics import ess_bulk, ess_tail, rhat
from pac_particles.smc.label_noise import label_noise_from_lam, lam_from_label_noise
from pac_particles.smc.moves.exact_ellipse import point_angle_draws
from pac_particles.core.progress import Progress
from pac_particles.problem.risks import ClassificationRisk

__all__ = ["KernelGibbsSampler", "KGSChains", "sphere_data",
           "sphere_directions"]


def _generator(seed):
    """A numpy Generator from an int, None or a Generator."""
    if isinstance(seed, np.random.Generator):
        return seed
    return np.random.default_rng(seed)


def sphere_directions(longitude, latitude):
    """Unit vectors of R^3 at ``longitude`` in [-pi, pi] and ``latitude``
    in [-pi/2, pi/2] (arrays of one shape): shape ``(..., 3)``."""
    lon, lat = np.broadcast_arrays(np.asarray(longitude, dtype=float),
                                   np.asarray(latitude, dtype=float))
    return np.stack([np.cos(lat) * np.cos(lon), np.cos(lat) * np.sin(lon),
                     np.sin(lat)], axis=-1)


def sphere_data(m, q, seed=None, inputs="uniform", dim=3, w_star=None):
    """A small data set with label noise, in the spirit of [GH01, Sec. 5]:
    ``m`` unit vectors of R^dim labelled by ``sign(w_star . x)`` (in
    {-1, +1}; default ``w_star = (0, 1, 0, ...)``), each label flipped with
    probability ``q``.

    ``inputs="uniform"``: uniform on the sphere. ``inputs="gh01"`` (dim 3):
    the paper's Beta laws, longitude ``2 pi Beta(5, 5) - pi`` and latitude
    ``pi (Beta(0.1, 0.1) - 1/2)`` (our reading of its scaling): about 60%
    of the points lie within a degree of a pole, and at m = 100, q = 0.05
    the posterior is a band about 1e-7 rad wide around the equator, which
    random great circles cross in short arcs: the chains barely move there
    (R-hat 3.5 after 20000 steps). Returns ``X`` (m, dim), ``y`` (m,).
    """
    m = check_count(m, "m", minimum=2)
    dim = check_count(dim, "dim", minimum=2)
    q = check_probability(q, "q (label-flip rate)", closed=True)
    rng = _generator(seed)
    if inputs == "uniform":
        X = rng.standard_normal((m, dim))
        X /= np.linalg.norm(X, axis=1, keepdims=True)
    elif inputs == "gh01" and dim == 3:
        X = sphere_directions(2 * np.pi * rng.beta(5.0, 5.0, m) - np.pi,
                              np.pi * (rng.beta(0.1, 0.1, m) - 0.5))
    else:
        raise InputError(f"inputs must be 'uniform' or 'gh01' (dim 3), got "
                         f"{inputs!r} with dim {dim}")
    if w_star is None:
        w_star = np.eye(dim)[1]
    y = np.where(X @ np.asarray(w_star, dtype=float) > 0, 1, -1)
    flip = rng.uniform(size=m) < q
    return X, np.where(flip, -y, y)


class KernelGibbsSampler:
    """The kernel Gibbs sampler [GH01, Sec. 3]: a Markov chain on the unit
    sphere of weight vectors under the uniform prior and the label-noise
    likelihood (module docstring).

    Parameters
    ----------
    X : (n, d) inputs (used as given: append a column of ones for a bias).
    y : (n,) binary labels (any two values, the larger one positive).
    q : float in (0, 1/2), the assumed label-flip rate; or
    lam : float > 0, the inverse temperature of the 0-1 risk
        (``lam = n log((1 - q) / q)``). Give exactly one of them.
    kernel : callable ``k(X1, X2)``, optional
        The kernel form (e.g. :class:`~pac_particles.core.kernels.SquaredExponential`);
        default the primal form ``w`` in ``R^d``.
    rank_tol : float
        Kernel form: eigenvalues of ``K`` below ``rank_tol`` times the
        largest are dropped (the span of the training points has the
        dimension r of the kept ones).

    Attributes
    ----------
    lam, q : the two parametrisations of the likelihood.
    n : number of training points; dim : dimension of the sphere's space
        (d, or the rank r of ``K``).
    coef_name : ``"w"`` (primal) or ``"alpha"`` (kernel form).
    risk : the 0-1 :class:`~pac_particles.problem.risks.ClassificationRisk`.
    gram : (n, n) the kernel matrix (kernel form), else None.
    """

    def __init__(self, X, y, q=None, lam=None, kernel=None, rank_tol=1e-10):
        data = validate_xy(X, y, drop_constant=False)
        self.X = data.X
        self.risk = ClassificationRisk(data.y, loss="zero_one")
        self.n = self.risk.n
        if (q is None) == (lam is None):
            raise InputError("give exactly one of q (label-flip rate) and lam")
        self.lam = (lam_from_label_noise(q, self.n) if q is not None
                    else check_positive(lam, "lam"))
        self.q = label_noise_from_lam(self.lam, self.n)
        self.kernel = kernel
        if kernel is None:
            self.coef_name = "w"
            self.gram = None
            self._features = self.X
            self._alpha_basis = None
        else:
            self.coef_name = "alpha"
            self.gram = gram_matrix(kernel, self.X)
            eigval, eigvec = np.linalg.eigh(self.gram)
            top = eigval[-1]
            if not top > 0:
                raise InputError("the kernel matrix has no positive eigenvalue:"
                                 " every training point is the zero function")
            keep = eigval > check_positive(rank_tol, "rank_tol") * top
            root = np.sqrt(eigval[keep])
            self._features = np.ascontiguousarray(eigvec[:, keep] * root)
            self._alpha_basis = np.ascontiguousarray(eigvec[:, keep] / root)
        self.dim = self._features.shape[1]
        if self.dim < 2:
            raise InputError(f"the sphere of a {self.dim}-dimensional space is "
                             f"two points: the kernel Gibbs sampler needs 2 "
                             f"dimensions or more")

    # ----------------------------------------------------- coordinates
    def _to_coef(self, coords):
        """User coefficients (``w`` or ``alpha``) of orthonormal coordinates."""
        if self._alpha_basis is None:
            return coords
        return coords @ self._alpha_basis.T

    def _to_coords(self, coef):
        """Orthonormal coordinates of ``w`` (primal) or ``alpha`` (kernel
        form: ``c = F' alpha``, the projection on the span)."""
        if self._alpha_basis is None:
            return coef
        return coef @ self._features

    def scores(self, coef):
        """Training scores ``X w`` or ``K alpha`` of coefficients (..., p)."""
        coef = np.asarray(coef, dtype=float)
        return coef @ (self.X.T if self.gram is None else self.gram)

    def log_likelihood(self, coef):
        """Log label-noise likelihood [GH01, Eq. (3)] of the directions of
        ``coef`` (..., p): ``n log(1 - q) - lam r_n``, ties 1/2. On the
        sphere under the uniform prior, the log posterior density up to the
        constant ``-log`` evidence."""
        scores = self.scores(coef)
        flat = scores.reshape(-1, self.n)
        risk = np.asarray(self.risk(flat)).reshape(scores.shape[:-1])
        return self.n * np.log1p(-self.q) - self.lam * risk

    def random_directions(self, size, seed=None):
        """``size`` coefficients uniform on the unit sphere (``alpha' K
        alpha = 1`` in the kernel form): (size, p)."""
        rng = _generator(seed)
        coords = rng.standard_normal((check_count(size, "size"), self.dim))
        coords /= np.linalg.norm(coords, axis=1, keepdims=True)
        return self._to_coef(coords)

    # ----------------------------------------------------- the step
    def circle_angle_draws(self, a, b, seed=None):
        """Exact draws of the angle ``t`` along great circles: row ``k`` has
        training scores ``a[k] cos t + b[k] sin t`` (``a``, ``b``: (N, n),
        the scores of two orthonormal vectors); the density of ``t`` on
        [0, 2 pi) is proportional to ``exp(-lam r_n)`` there [GH01, Sec. 3,
        steps 3-7]. Returns (N,) angles."""
        a, b = np.atleast_2d(a), np.atleast_2d(b)
        u = _generator(seed).uniform(size=(2, a.shape[0]))
        return point_angle_draws(a, b, self.risk.signs,
                                 self.risk.kappa(self.lam), u[0], u[1])

    def _step(self, coords, scores, rng):
        """One step of every chain (rows of ``coords`` (C, r), unit norm,
        and their training ``scores`` (C, n)), in place."""
        v = rng.standard_normal(coords.shape)
        v -= np.einsum("ij,ij->i", v, coords)[:, None] * coords
        v /= np.sqrt(np.einsum("ij,ij->i", v, v))[:, None]
        b = v @ self._features.T
        t = self.circle_angle_draws(scores, b, rng)
        cos, sin = np.cos(t)[:, None], np.sin(t)[:, None]
        coords *= cos
        coords += sin * v
        scores *= cos
        scores += sin * b
        # no drift off the sphere over long runs
        norm = np.sqrt(np.einsum("ij,ij->i", coords, coords))[:, None]
        coords /= norm
        scores /= norm

    def sample(self, n_draws=1000, n_chains=4, burn_in=None, thin=1, init=None,
               seed=None, verbose=False):
        """Run ``n_chains`` independent chains in lockstep.

        Parameters
        ----------
        n_draws : int, draws kept per chain.
        n_chains : int, independent chains (2 or more for R-hat).
        burn_in : int, steps discarded first (default ``n_draws // 10``).
        thin : int, keep every ``thin``-th step.
        init : (n_chains, p) starting coefficients (``w`` or ``alpha``;
            normalised here), default uniform on the sphere.
        seed : int or numpy Generator.
        verbose : bool or str, progress of the steps on stderr
            (:mod:`pac_particles.core.progress`).

        Returns
        -------
        KGSChains
        """
        n_draws = check_count(n_draws, "n_draws", minimum=1)
        n_chains = check_count(n_chains, "n_chains", minimum=1)
        thin = check_count(thin, "thin", minimum=1)
        burn_in = (n_draws // 10 if burn_in is None
                   else check_count(burn_in, "burn_in", minimum=0))
        rng = _generator(seed)
        if init is None:
            coords = self._to_coords(self.random_directions(n_chains, rng))
        else:
            init = np.asarray(init, dtype=float)
            p = self.n if self.gram is not None else self.X.shape[1]
            if init.shape != (n_chains, p) or not np.all(np.isfinite(init)):
                raise InputError(f"init must be a finite ({n_chains}, {p}) "
                                 f"array, got shape {init.shape}")
            coords = self._to_coords(init)
        coords = np.array(coords, dtype=float)
        norm = np.linalg.norm(coords, axis=1, keepdims=True)
        if np.any(norm == 0):
            raise InputError("init has a row of norm 0 (in the span of the "
                             "training points): it is no direction")
        coords /= norm
        scores = coords @ self._features.T
        kept = np.empty((n_chains, n_draws, self.dim))
        total = burn_in + n_draws * thin
        every = max(1, total // 20)
        start = time.perf_counter()
        with Progress(verbose, total=total, desc="KGS", unit="step") as bar:
            for k in range(total):
                self._step(coords, scores, rng)
                j, r = divmod(k - burn_in, thin)
                if k >= burn_in and r == thin - 1:
                    kept[:, j] = coords
                if (k + 1) % every == 0 or k + 1 == total:
                    bar.update(position=k + 1,
                               text=f"KGS step {k + 1}/{total} ({n_chains} "
                                    f"chains, {bar.elapsed:.1f} s)")
        wall_time = time.perf_counter() - start
        return KGSChains(coef=self._to_coef(kept), sampler=self,
                         wall_time=wall_time, burn_in=burn_in, thin=thin)


@dataclass
class KGSChains:
    """Draws of several independent kernel Gibbs chains and their diagnostics.

    Attributes
    ----------
    coef : (n_chains, n_draws, p) unit weight vectors ``w`` (primal) or
        coefficients ``alpha`` with ``alpha' K alpha = 1`` (kernel form).
    sampler : the :class:`KernelGibbsSampler` that ran them.
    wall_time : seconds of sampling, burn-in included.
    burn_in, thin : as run.
    """

    coef: np.ndarray
    sampler: KernelGibbsSampler
    wall_time: float
    burn_in: int
    thin: int
    _idata: object = field(default=None, repr=False)

    @property
    def n_chains(self):
        return self.coef.shape[0]

    @property
    def n_draws(self):
        """Draws kept per chain."""
        return self.coef.shape[1]

    @property
    def draws(self):
        """All draws, chains stacked: (n_chains * n_draws, p)."""
        return self.coef.reshape(-1, self.coef.shape[-1])

    @property
    def margins(self):
        """Training margins ``y_i <w, phi(x_i)>`` of every draw:
        (n_chains, n_draws, n)."""
        return self.sampler.risk.signs * self.sampler.scores(self.coef)

    @property
    def training_error(self):
        """Training error ``r_n`` (ties 1/2) of every draw: (n_chains, n_draws)."""
        scores = self.sampler.scores(self.draws)
        return np.asarray(self.sampler.risk(scores)).reshape(self.coef.shape[:2])

    @property
    def bayes_point(self):
        """Mean of the draws [GH01, Eq. (5)]: the Bayes point ``w_bp`` (or
        its ``alpha``), not renormalised."""
        return self.draws.mean(axis=0)

    def decision_function(self, X_new):
        """Scores ``<w, phi(x)>`` of new inputs for every draw:
        (n_chains * n_draws, m)."""
        s = self.sampler
        X_new = np.asarray(X_new, dtype=float)
        design = X_new if s.kernel is None else _cross_gram(s, X_new)
        return self.draws @ design.T

    def to_inference_data(self):
        """ArviZ ``InferenceData``: posterior ``w`` (or ``alpha``) on
        (chain, draw, feature or training_point), ``margin`` on (chain,
        draw, training_point) and ``training_error`` on (chain, draw)."""
        if self._idata is None:
            import arviz as az  # optional dependency (extra "arviz"): on use
            coef_dim = "feature" if self.sampler.kernel is None else "training_point"
            self._idata = az.from_dict(
                posterior={self.sampler.coef_name: self.coef,
                           "margin": self.margins,
                           "training_error": self.training_error},
                dims={self.sampler.coef_name: [coef_dim],
                      "margin": ["training_point"]},
                attrs={"method": "kernel Gibbs sampler [GH01]",
                       "lam": self.sampler.lam, "q": self.sampler.q})
        return self._idata

    def ess(self, var_names=None, method="bulk"):
        """``arviz.ess`` of the chains (an xarray Dataset); ``var_names``
        default all of ``w``/``alpha``, ``margin``, ``training_error``."""
        import arviz as az
        return az.ess(self.to_inference_data(), var_names=var_names,
                      method=method)

    def rhat(self, var_names=None):
        """``arviz.rhat`` (rank-normalised split R-hat [VGSCB21]); needs
        two chains or more."""
        if self.n_chains < 2:
            raise InputError("R-hat needs two chains or more")
        import arviz as az
        return az.rhat(self.to_inference_data(), var_names=var_names)

    def summary(self):
        """Worst-case diagnostics over the components of the coefficient
        and the training margins: minimum bulk and tail ESS, maximum
        R-hat (two chains or more), bulk ESS per second of sampling.
        Computed in plain numpy (:mod:`pac_particles.core.mcmc_diagnostics`,
        the estimators of ``arviz.ess`` / ``arviz.rhat``): no ArviZ needed."""
        out = {"n_chains": self.n_chains, "n_draws": self.n_draws,
               "wall_time": self.wall_time}
        for name, values in ((self.sampler.coef_name, self.coef),
                             ("margin", self.margins)):
            # one scalar quantity per component: (n_chains, n_draws) each
            components = np.moveaxis(values, -1, 0)
            low = float(np.nanmin([ess_bulk(c) for c in components]))
            out[f"ess_bulk_min_{name}"] = low
            out[f"ess_tail_min_{name}"] = float(np.nanmin(
                [ess_tail(c) for c in components]))
            out[f"ess_bulk_per_s_{name}"] = low / self.wall_time
            if self.n_chains >= 2:
                out[f"rhat_max_{name}"] = float(np.nanmax(
                    [rhat(c) for c in components]))
        return out


def _cross_gram(sampler, X_new):
    """``k(X_new, X)`` of a kernel-form sampler: (m, n)."""
    K = np.asarray(sampler.kernel(X_new, sampler.X), dtype=float)
    if K.shape != (X_new.shape[0], sampler.n) or not np.all(np.isfinite(K)):
        raise InputError(f"the kernel returned a matrix of shape {K.shape} "
                         f"(expected ({X_new.shape[0]}, {sampler.n})) or "
                         f"non-finite entries")
    return K
