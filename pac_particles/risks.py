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
(Point risks of classification -- ``u_i = y_i s_i``, ``A`` a signed
diagonal -- are the other family this interface is made for.)

Example
-------
::

    import numpy as np
    from pac_particles.risks import AUCRisk
    y = np.array([1, 0, 1, 0]); s = np.array([0.9, 0.1, 0.4, 0.4])
    risk = AUCRisk(y)
    risk(s)                              # 0.125, as pac_particles.auc.auc_risk
    X = np.random.randn(4, 3)
    risk.linear(np.random.randn(50, 3), risk.ordered(X))   # (50,) risks

References
----------
[RACL14] Ridgway, J., Alquier, P., Chopin, N. and Liang, F. (2014).
PAC-Bayesian AUC classification and scoring. NIPS 27.
"""

import numpy as np

from .auc import binary_labels, linear_auc_risk, split_risk
from .checks import InputError

__all__ = ["Risk", "AUCRisk", "duplicate_groups"]


def duplicate_groups(X):
    """Integer labels of the rows of ``X``: equal rows share a label.

    The one tie detector of the package: a margin between two identical
    inputs is 0 for every parameter (an AUC pair tie counts 1/2 whatever
    ``theta``), so EP gives it no site and VB a constant term.
    """
    _, inverse = np.unique(np.asarray(X, dtype=float), axis=0,
                           return_inverse=True)
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
        ((N, d) or (d,)); ``X_ordered = self.ordered(X)``."""
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
    y : (n,) binary labels (see :func:`pac_particles.auc.binary_labels`).
    """

    name = "auc"

    def __init__(self, y):
        super().__init__(y)
        pos = self.positives
        self.n_pos = int(pos.sum())
        self.n_neg = self.n - self.n_pos
        if self.n_pos == 0 or self.n_neg == 0:
            raise InputError("the AUC risk needs at least one positive and "
                             "one negative")
        self.order = np.concatenate([np.flatnonzero(pos), np.flatnonzero(~pos)])
        self.inverse_order = np.empty_like(self.order)
        self.inverse_order[self.order] = np.arange(self.n)
        self.n_terms = self.n_pos * self.n_neg
        self.n_independent = min(self.n_pos, self.n_neg)
        self.site_shape = (self.n_pos, self.n_neg)

    @property
    def n_pairs(self):
        """``P = n_pos * n_neg``."""
        return self.n_terms

    def __call__(self, scores):
        s = np.asarray(scores, dtype=float)
        return split_risk(s[..., self.positives], s[..., ~self.positives])

    def linear(self, theta, X_ordered):
        return linear_auc_risk(theta, X_ordered[:self.n_pos],
                               X_ordered[self.n_pos:])

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
