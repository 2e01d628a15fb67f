"""The empirical risk as a concept: what every model, approximation and bound takes.

A Gibbs pseudo-posterior ``prior(theta) * exp(-lam * r_n(s_theta))`` is defined
by its empirical risk ``r_n`` of the score vector ``s`` of the n training
points. Every risk of this package is a mean of a loss of *margins*
``u = A s``::

    r_n(s) = (1 / n_terms) sum_k loss(u_k),        u = A s,

and the samplers, EP, VB and the certificates only need to know

* how to evaluate it on a batch of score vectors (SMC: one per particle),
  fast (:meth:`Risk.__call__`, :meth:`Risk.linear`);
* the margin operator ``A``, never materialised: ``A' diag(w) A C``
  (:meth:`Risk.gram_times`), ``A' h`` (:meth:`Risk.adjoint`), and the blocks
  of a score covariance that margin variances need (:meth:`Risk.cross_block`)
  -- EP's site machinery works on any such ``A`` [RACL14, Alg. 4];
* which margins are identically 0 (:meth:`Risk.tied_sites`: they add a
  constant and carry no site);
* how many independent terms its concentration rests on
  (:attr:`Risk.n_independent`, for the PAC-Bayes bounds);
* the per-site weight ``kappa = lam / n_terms`` of the step site
  ``exp(-kappa 1{u < 0})``.

:class:`AUCRisk` is the AUC pair risk ``R_n = 1 - AUC`` of [RACL14]: margins
``u_ij = s_i - s_j`` over the ``P = n_pos n_neg`` positive/negative pairs,
loss ``1{u < 0} + 0.5 1{u = 0}``. ``A`` is the incidence operator of the
bipartite pair graph, so ``A' diag(w) A`` is that graph's weighted Laplacian,
built in O(P). Site arrays have shape ``(n_pos, n_neg)``, and n-vectors are
ordered *positives first* (:attr:`Risk.order`) inside every algorithm.

:class:`SampledAUCRisk` is the incomplete U-statistic of [CCB16]: the same
pair loss on B positive/negative pairs sampled once (uniformly with
replacement, or balanced over the points), O(B) instead of O(P), with site
arrays of shape ``(B,)`` listed by :meth:`SampledAUCRisk.margin_list`.

:class:`ClassificationRisk` is the point risk of binary classification
[ARC16, Sec. 3.1, 4.1, 4.2]: margins ``u_i = y_i s_i`` (``y_i = +-1``), so
``A = diag(y)`` is a signed diagonal and ``A' diag(w) A = diag(w)``; the loss
is the 0-1 loss (a margin of exactly 0 counts 1/2, the tie rule of the AUC),
the hinge ``max(0, 1 - u)``, the exponential ``exp(-u)`` or the symmetric
ramp ``max(0, min(2, 1 - u)) / 2`` of [dPNS14] (``l(u) + l(-u) = 1``, what
the unbiased PU risk needs). Its n-vectors keep the input order.

Example
-------
::

    import numpy as np
    from pac_particles.problem.risks import AUCRisk
    y = np.array([1, 0, 1, 0]); s = np.array([0.9, 0.1, 0.4, 0.4])
    risk = AUCRisk(y)
    risk(s)                              # 0.125, as pac_particles.problem.auc.auc_risk
    X = np.random.randn(4, 3)
    risk.linear(np.random.randn(50, 3), risk.ordered(X))   # (50,) risks
    ClassificationRisk(y, "hinge")(s)    # mean of max(0, 1 - y_i s_i), y in +-1

References
----------
[ARC16] Alquier, P., Ridgway, J. and Chopin, N. (2016). On the properties of
variational approximations of Gibbs posteriors. JMLR 17(239), 1-41.

[CCB16] Clemencon, S., Colin, I. and Bellet, A. (2016). Scaling-up
empirical risk minimization: optimization of incomplete U-statistics. JMLR
17(76), 1-36.

[dPNS14] du Plessis, M. C., Niu, G. and Sugiyama, M. (2014). Analysis of
learning from positive and unlabeled data. NIPS 27.

[RACL14] Ridgway, J., Alquier, P., Chopin, N. and Liang, F. (2014).
PAC-Bayesian AUC classification and scoring. NIPS 27.
"""

import functools

import numba
import numpy as np

from pac_particles.core import parallel
from pac_particles.problem.auc import blocked_linear_risk, split_risk
from pac_particles.problem.data import binary_labels
from pac_particles.core.checks import InputError, check_choice, check_count, check_pu_prior
from pac_particles.problem.losses import LOSSES, get_loss
from pac_particles.problem.point_kernels import point_rows_parallel, point_rows_serial

__all__ = ["Risk", "AUCRisk", "SampledAUCRisk", "ClassificationRisk",
           "LOSSES", "PAIR_SAMPLINGS", "duplicate_groups"]



def duplicate_groups(X):
    """Integer labels of the rows of ``X``: equal rows share a label.

    The one tie detector of the package: a margin between two identical
    inputs is 0 for every parameter (an AUC pair tie counts 1/2 whatever
    ``theta``), so EP gives it no site and VB a constant term.
    """
    # each row as one opaque item of its bytes: ``np.unique(axis=0)``
    # compares rows field by field through a structured dtype, several
    # times slower on wide rows; ``+ 0.0`` maps -0.0 to
    # 0.0, the one pair of equal floats with different bytes (inputs are
    # finite)
    X = np.ascontiguousarray(np.asarray(X, dtype=float) + 0.0)
    if X.ndim != 2:
        raise InputError(f"duplicate_groups needs a 2-D array, got shape "
                         f"{X.shape}")
    rows = X.view(np.dtype((np.void, X.dtype.itemsize * X.shape[1])))
    _, inverse = np.unique(rows.reshape(-1), return_inverse=True)
    return np.ascontiguousarray(np.asarray(inverse).reshape(-1),
                                dtype=np.int64)


class Risk:
    """An empirical risk ``r_n(s) = mean_k loss((A s)_k)`` (see the module
    docstring). Subclasses define the loss and the margin operator ``A``.

    Attributes
    ----------
    name : str
    positives : (n,) bool labels, in input order.
    order : (n,) permutation: the order of n-vectors inside the algorithms.
    inverse_order : (n,) its inverse (``v_input = v_ordered[inverse_order]``).
    n : number of training points.
    n_terms : number of margins the risk averages over.
    n_independent : number of independent terms behind its concentration.
    site_shape : shape of the arrays of per-margin (site) parameters.
    """

    name = None
    #: :attr:`order` is the positives, then the negatives, each in input
    #: order: the order of the validated data's class-ordered rows
    class_ordered = False

    def __init__(self, y):
        self.positives = binary_labels(y)
        self.n = self.positives.shape[0]

    # ------------------------------------------------------------ evaluation
    def __call__(self, scores):
        """Risk of score vectors in input order: (n,) -> float,
        (N, n) -> (N,)."""
        raise NotImplementedError

    def ordered(self, X):
        """Rows of ``X`` (n, ...) in :attr:`order`, C-contiguous."""
        return np.ascontiguousarray(np.asarray(X, dtype=float)[self.order])

    def linear(self, theta, X_ordered):
        """Risks of the linear scores ``X theta`` of particles ``theta``
        ((N, d) or (d,)); ``X_ordered = self.ordered(X)``: BLAS scores in
        blocks of particles (:func:`pac_particles.problem.auc.blocked_linear_risk`),
        then the risk of each score row (:meth:`_rows`)."""
        return blocked_linear_risk(theta, self._designs(X_ordered), self._rows)

    def _designs(self, X_ordered):
        """The design blocks whose scores :meth:`_rows` takes."""
        return (X_ordered,)

    def _rows(self, scores):
        """Risk of each row of an (N, n) array of scores in :attr:`order`."""
        raise NotImplementedError

    def kappa(self, lam):
        """Weight of one margin in ``lam * r_n``: ``lam / n_terms``."""
        return lam / self.n_terms

    # ------------------------------------------------------- margin operator
    def gram_times(self, W, C):
        """``A' diag(W) A C`` for site weights ``W`` (``site_shape``) and
        ``C`` (n, r), rows in :attr:`order`."""
        raise NotImplementedError

    def gram(self, W):
        """Dense ``A' diag(W) A`` (n x n), rows in :attr:`order`."""
        raise NotImplementedError

    def adjoint(self, H):
        """``A' H``: the n-vector ``g`` with ``sum_k H_k u_k = g . s``."""
        raise NotImplementedError

    def cross_block(self, B):
        """What margin variances need of the score covariance ``B' B``
        beyond its diagonal (``B`` is r x n, columns in :attr:`order`)."""
        raise NotImplementedError

    def tied_sites(self, groups):
        """Bool array (``site_shape``): margins that are 0 for every
        parameter, from :func:`duplicate_groups` of the ordered inputs."""
        raise NotImplementedError


class AUCRisk(Risk):
    """The AUC pair risk ``R_n = 1 - AUC`` (ties 1/2), [RACL14] eq. (1).

    Margins ``u_ij = s_i - s_j`` for positive i and negative j; ``A`` is the
    incidence operator of the bipartite pair graph, ``A' diag(W) A`` its
    weighted Laplacian. ``n_independent = min(n_pos, n_neg)``: Hoeffding's
    decomposition writes the two-sample U-statistic ``R_n`` as an average of
    averages of that many independent terms (Clemencon, Lugosi & Vayatis
    2008).

    Parameters
    ----------
    y : (n,) binary labels (see :func:`pac_particles.problem.data.binary_labels`).
    """

    name = "auc"
    class_ordered = True

    def __init__(self, y):
        super().__init__(y)
        pos = self.positives
        self.n_pos = int(pos.sum())
        self.n_neg = self.n - self.n_pos
        if self.n_pos == 0 or self.n_neg == 0:
            raise InputError("the AUC risk needs at least one positive and "
                             "one negative")
        self.n_terms = self.n_pos * self.n_neg
        self.n_independent = min(self.n_pos, self.n_neg)
        self.site_shape = (self.n_pos, self.n_neg)

    @functools.cached_property
    def order(self):
        """Positives, then negatives, each in input order (built on first
        use: two n-vectors of indices that a fit by sampled pairs never
        needs, 160 MB at ten million rows)."""
        pos = self.positives
        return np.concatenate([np.flatnonzero(pos), np.flatnonzero(~pos)])

    @functools.cached_property
    def inverse_order(self):
        inverse = np.empty_like(self.order)
        inverse[self.order] = np.arange(self.n)
        return inverse

    @property
    def n_pairs(self):
        """``P = n_pos * n_neg``."""
        return self.n_terms

    def __call__(self, scores):
        s = np.asarray(scores, dtype=float)
        return split_risk(s[..., self.positives], s[..., ~self.positives])

    def _designs(self, X_ordered):
        # positives and negatives scored apart: contiguous inputs for the kernel
        return (X_ordered[:self.n_pos], X_ordered[self.n_pos:])

    def _rows(self, scores_pos, scores_neg):
        return split_risk(scores_pos, scores_neg)

    def gram_times(self, W, C):
        """The weighted Laplacian times ``C``, in O(P r)."""
        Cp, Cn = C[:self.n_pos], C[self.n_pos:]
        return np.vstack([W.sum(axis=1)[:, None] * Cp - W @ Cn,
                          W.sum(axis=0)[:, None] * Cn - W.T @ Cp])

    def gram(self, W):
        n, n_pos = self.n, self.n_pos
        L = np.zeros((n, n))
        L[:n_pos, n_pos:] = -W
        L[n_pos:, :n_pos] = -W.T
        L[np.arange(n), np.arange(n)] = np.concatenate([W.sum(axis=1),
                                                        W.sum(axis=0)])
        return L

    def adjoint(self, H):
        return np.concatenate([H.sum(axis=1), -H.sum(axis=0)])

    def cross_block(self, B):
        """The positive x negative block of ``B' B``: pair variances are
        ``v_i + v_j - 2 c_ij``."""
        return B[:, :self.n_pos].T @ B[:, self.n_pos:]

    def tied_sites(self, groups):
        return groups[:self.n_pos, None] == groups[None, self.n_pos:]

    def draw_pairs(self, rng, size):
        """``size`` pairs drawn uniformly with replacement, as index arrays
        ``(i into the positives, j into the negatives)``: the incomplete
        U-statistic of the stochastic optimisers (VB's Adam, SVGD)."""
        return (rng.integers(self.n_pos, size=size),
                rng.integers(self.n_neg, size=size))


PAIR_SAMPLINGS = ("uniform", "stratified")

#: Positives per tile of the sampled pairs' order (:class:`SampledAUCRisk`):
#: their rows of an (n, r) factor, r about 10, fit in a core's cache.
PAIR_TILE_ROWS = 8192


@numba.njit(cache=True)
def _pair_gram_times(first, second, W, C):
    """``A' diag(W) A C`` for the pair incidence ``A`` of a list of pairs."""
    out = np.zeros(C.shape)
    for k in range(first.size):
        a, b, w = first[k], second[k], W[k]
        if w == 0.0:
            continue
        for l in range(C.shape[1]):
            t = w * (C[a, l] - C[b, l])
            out[a, l] += t
            out[b, l] -= t
    return out


class SampledAUCRisk(AUCRisk):
    """The incomplete AUC U-statistic: the pair risk on B sampled pairs
    [CCB16, Sec. 2.2].

    ``U_B(s) = (1/B) sum_k 1{s_{i_k} < s_{j_k}} + 0.5 1{s_{i_k} = s_{j_k}}``
    over B positive/negative pairs ``(i_k, j_k)`` drawn once (seeded), an
    unbiased estimate of the complete statistic ``U_n = R_n`` of
    :class:`AUCRisk` that costs O(B) instead of O(n_pos n_neg). Drawn
    uniformly with replacement, conditionally on the data it is a mean of B
    independent draws from the P pair losses, so [CCB16, Prop. 1]::

        Var(U_B) = (1 - 1/B) Var(U_n) + Var(h) / B,

    ``h = 1{s_i < s_j}`` the loss of one random pair (``Var(h) = R (1 - R)``
    without ties): the sampling adds ``(Var(h) - Var(U_n)) / B``, negligible
    against ``Var(U_n) ~ 1 / min(n_pos, n_neg)`` once B is a few times n.
    ``"stratified"`` draws a balanced design: the positives in successive
    random permutations, the negatives likewise, paired in order, so every
    point enters ``B / n_pos`` (or ``B / n_neg``) pairs up to one; each pair
    is still uniform over the P pairs (unbiased), and balancing the points'
    counts removes the variance the uneven counts of uniform sampling add to
    the Hoeffding projection terms.

    The margin operator is the incidence of the sampled pair graph (``A'
    diag(W) A C`` in O(B r), the cross covariances read per pair by the EP
    pass from ``B'``); site arrays have shape ``(B,)``, sites share
    ``kappa = lam / B``. Ordering, labels and ``n_independent`` are those of
    :class:`AUCRisk` (a bound on the complete risk must add the sampling
    deviation).

    Parameters
    ----------
    y : (n,) binary labels.
    n_pairs : int, the number B of sampled pairs.
    sampling : "uniform" (with replacement) or "stratified" (balanced).
    seed : int or numpy Generator, optional.

    Attributes
    ----------
    pair_pos, pair_neg : (B,) indices into the positives and the negatives.
    first, second : (B,) node indices of the pairs in :attr:`order`.
    """

    name = "sampled_auc"

    def __init__(self, y, n_pairs, sampling="stratified", seed=None):
        super().__init__(y)
        self.sampling = check_choice(sampling, "sampling", PAIR_SAMPLINGS)
        B = check_count(n_pairs, "n_pairs")
        rng = np.random.default_rng(seed)
        if self.sampling == "uniform":
            self.pair_pos, self.pair_neg = self.draw_pairs(rng, B)
        else:
            self.pair_pos = _balanced_sequence(rng, self.n_pos, B)
            self.pair_neg = _balanced_sequence(rng, self.n_neg, B)
        # The pairs are a set (the statistic does not depend on their
        # order): list them in tiles of PAIR_TILE_ROWS positives, negatives
        # ascending within a tile, so that the O(B) passes over the pairs
        # stream the negatives' rows and find the tile's positives in cache
        # (faster than drawing order at a million rows: docs/benchmarks.md).
        order = np.lexsort((self.pair_pos, self.pair_neg,
                            self.pair_pos // PAIR_TILE_ROWS))
        self.pair_pos, self.pair_neg = self.pair_pos[order], self.pair_neg[order]
        self.first = np.ascontiguousarray(self.pair_pos, dtype=np.int64)
        self.second = np.ascontiguousarray(self.pair_neg + self.n_pos,
                                           dtype=np.int64)
        self.n_terms = B
        self.site_shape = (B,)

    @property
    def n_pairs(self):
        """``P = n_pos * n_neg``, the pairs of the complete statistic."""
        return self.n_pos * self.n_neg

    def __call__(self, scores):
        s = np.asarray(scores, dtype=float)
        out = self._rows(np.atleast_2d(s)[:, self.order])
        return float(out[0]) if s.ndim == 1 else out

    # sampled pairs take the whole score row
    _designs = Risk._designs

    def _rows(self, scores):
        u = scores[:, self.first] - scores[:, self.second]
        return np.mean((u < 0) + 0.5 * (u == 0), axis=1)

    def gram_times(self, W, C):
        """The weighted Laplacian of the sampled pair graph times ``C``,
        in O(B r)."""
        return _pair_gram_times(self.first, self.second,
                                np.ascontiguousarray(W, dtype=float),
                                np.ascontiguousarray(C, dtype=float))

    def gram(self, W):
        return self.gram_times(W, np.eye(self.n))

    def adjoint(self, H):
        return (np.bincount(self.first, H, minlength=self.n)
                - np.bincount(self.second, H, minlength=self.n))

    def cross_block(self, B):
        """``B'`` (n, r), C-contiguous: the EP pass reads the covariance
        ``b_i . b_j`` of each sampled pair from it (O(r) per pair)."""
        return np.ascontiguousarray(B.T)

    def tied_sites(self, groups):
        return groups[self.first] == groups[self.second]

    def margin_list(self):
        """``(first, second, sign)``: margin ``k`` is ``s_first - s_second``
        (see :mod:`pac_particles.approx.ep.sparse_sites`)."""
        return self.first, self.second, np.ones(self.n_terms)


def _balanced_sequence(rng, m, size):
    """``size`` indices in ``range(m)``: successive random permutations, so
    every index appears ``size // m`` or ``size // m + 1`` times."""
    reps = -(-size // m)
    return np.argsort(rng.random((reps, m)), axis=1).ravel()[:size]


# ---------------------------------------------------------------- point risks

class ClassificationRisk(Risk):
    """The point risk ``r_n = (1/n) sum_i loss(y_i s_i)`` of binary
    classification [ARC16, Sec. 3.1, 4.1, 4.2], ``y_i`` in {-1, +1}.

    Losses: any registered in :data:`pac_particles.problem.losses.LOSSES`
    (``zero_one`` ``1{u < 0} + 0.5 1{u = 0}``, ``hinge`` ``max(0, 1 - u)``,
    ``exponential`` ``exp(-u)``, ``ramp`` ``max(0, min(2, 1 - u)) / 2``,
    symmetric: ``l(u) + l(-u) = 1`` [dPNS14]). ``A = diag(y)``: ``A' diag(W) A = diag(W)`` since
    ``y_i^2 = 1``; margin variances are the diagonal of the score
    covariance (no cross block). ``n_independent = n``: the n terms are
    independent, the setting of Hoeffding's inequality [ARC16, Lemma 10].

    Positive-unlabelled labels (``pu_prior = pi``: ``y = 1`` marks labelled
    positives, ``y = 0`` unlabelled points of which a fraction ``pi`` is
    positive) give the cost-sensitive risk of [dPNS14, Sec. 3]::

        r_PU(s) = (2 pi / n_P) sum_{i in P} l(s_i)
                  + (1 / n_U) sum_{j in U} l(-s_j) - pi,

    an unbiased estimate of the positive-vs-negative risk when
    ``l(u) + l(-u) = 1`` (``MarginLoss.symmetric``: 0-1, ramp) and biased otherwise (hinge,
    exponential: an extra ``pi E_P[l(s) + l(-s)] - pi``). It is the same
    margin operator with per-margin weights (:attr:`weights`) and a
    constant (:attr:`offset`); the site weights are ``lam * weights``.

    Parameters
    ----------
    y : (n,) binary labels (see :func:`pac_particles.problem.data.binary_labels`).
    loss : the name of a registered loss (:func:`~pac_particles.problem.losses.get_loss`).
    pu_prior : float in [0, 1), optional (positive-unlabelled labels).

    Attributes
    ----------
    signs : (n,) ``y`` in {-1, +1}.
    weights : (n,) weight of each margin (``1/n`` without ``pu_prior``).
    offset : the constant added to the weighted losses (``-pi`` or 0).
    """

    name = "classification"

    def __init__(self, y, loss="zero_one", pu_prior=None):
        super().__init__(y)
        self.loss = get_loss(loss).name
        self.signs = np.where(self.positives, 1.0, -1.0)
        self.pu_prior = pu_prior
        if pu_prior is None:
            self.weights = np.full(self.n, 1.0 / self.n)
            self.offset = 0.0
        else:
            pi = check_pu_prior(pu_prior)
            n_labelled = int(self.positives.sum())
            self.weights = np.where(self.positives, 2.0 * pi / n_labelled,
                                    1.0 / (self.n - n_labelled))
            self.offset = -pi
        self.order = np.arange(self.n)
        self.inverse_order = self.order
        self.n_terms = self.n_independent = self.n
        self.site_shape = (self.n,)

    @property
    def margin_loss(self):
        """The :class:`~pac_particles.problem.losses.MarginLoss` of the
        table (looked up by name: the risk pickles without functions)."""
        return get_loss(self.loss)

    @property
    def bounded(self):
        """Whether the loss lies in [0, 1] (0-1 and ramp)."""
        return self.margin_loss.bounded

    def __call__(self, scores):
        s = np.asarray(scores, dtype=float)
        if s.ndim == 1:
            return float(self._rows(s[None, :])[0])
        return self._rows(s)

    def _rows(self, scores):
        scores = np.ascontiguousarray(scores, dtype=float)
        kernel = parallel.dispatch(point_rows_serial, point_rows_parallel,
                                   scores.size)
        return kernel(scores, self.signs, self.weights, self.margin_loss) \
            + self.offset

    def kappa(self, lam):
        """Weight of each margin in ``lam * r_n``: ``lam / n``, or the array
        ``lam * weights`` for positive-unlabelled labels."""
        if self.pu_prior is None:
            return lam / self.n
        return lam * self.weights

    def margins(self, scores):
        """``u = y * s`` (input order)."""
        return self.signs * np.asarray(scores, dtype=float)

    def gram_times(self, W, C):
        """``diag(W) C``: ``y_i^2 = 1``."""
        return W[:, None] * C

    def gram(self, W):
        return np.diag(W)

    def adjoint(self, H):
        return self.signs * H

    def cross_block(self, B):
        """None: a margin's variance is a diagonal entry of ``B' B``."""
        return None

    def tied_sites(self, groups):
        """No margin is 0 for every parameter unless its input is the zero
        vector, which groups of duplicates cannot tell: see
        :meth:`zero_margins`."""
        return np.zeros(self.n, dtype=bool)

    def margin_list(self):
        """The margins as a list for EP's margin-list pass
        (:mod:`pac_particles.approx.ep.sparse_sites`): ``(first, second, sign)``,
        margin ``i`` is ``sign_i s_i`` (``second = -1``: one node)."""
        return (np.arange(self.n, dtype=np.int64),
                np.full(self.n, -1, dtype=np.int64), self.signs.copy())

    def zero_margins(self, X):
        """Bool (n,): rows of ``X`` that are 0, whose margin is 0 whatever
        the parameter (a constant ``loss(0)``; no site)."""
        return ~np.any(np.asarray(X, dtype=float) != 0.0, axis=1)
