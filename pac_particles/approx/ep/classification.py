"""EP for the 0-1 Gibbs posterior of a linear classifier [ARC16, Sec. 3].

Target ``N(theta; 0, prior_var I) * exp(-lam r_n(theta))`` with the 0-1
risk ``r_n = (1/n) sum_i 1{y_i x_i . theta < 0}``
(:class:`pac_particles.problem.risks.ClassificationRisk`, ``y_i = +-1``, an
intercept column appended by default). It has one step site per point on
its margin ``u_i = y_i s_i``::

    t_i(u) = exp(-kappa_i 1{u < 0}),    kappa_i = lam / n

(``lam * weight_i`` for positive-unlabelled labels), whose tilted moments are
those of the AUC pair sites; the sites are listed margins of the EP core
(:mod:`pac_particles.approx.ep.sparse_sites`), a sweep costs O(n r + r^3). The
model is :class:`~pac_particles.approx.ep.EPLinear` on another risk: primal or
score space, ``log_z`` (the EP energy), ``converged`` and ``degenerate``
(the 0-1 risk is invariant to ``theta -> c theta``, intercept included, so
the scale identity ``E||w||^2 = r`` of every EP fixed point holds here too).

The posterior predictive of the randomised classifier is
``P(x . theta > 0) = Phi(x m / sqrt(x S x))`` (:meth:`predict_proba`);
removing a point's one site gives its leave-one-out predictive (the site's
cavity [OW00]), hence a leave-one-out accuracy without refitting
(:meth:`loo_accuracy`).

Example
-------
::

    from pac_particles.approx.ep import EPClassification
    ep = EPClassification(X, y, lam=len(y))
    res = ep.fit()
    res.mean, res.log_z, res.converged
    ep.predict_proba(X[:5]), ep.loo_accuracy()

References
----------
[ARC16] Alquier, P., Ridgway, J. and Chopin, N. (2016). On the properties of
variational approximations of Gibbs posteriors. JMLR 17(239), 1-41.

[OW00] Opper, M. and Winther, O. (2000). Gaussian processes for
classification: mean-field algorithms. Neural Computation 12(11), 2655-2684.

[RACL14] Ridgway, J., Alquier, P., Chopin, N. and Liang, F. (2014).
PAC-Bayesian AUC classification and scoring. NIPS 27, section 3.3.
"""

from pac_particles.core.checks import InputError
from pac_particles.core.gaussian import positive_probability
from pac_particles.problem.problem import as_problem
from pac_particles.approx.ep.core import _Sites
from pac_particles.approx.ep.linear import EPLinear


class EPClassification(EPLinear):
    """EP for the 0-1 Gibbs posterior of a linear classifier.

    Parameters
    ----------
    X : (n, d) array; y : (n,) binary labels (the larger value positive).
    lam : float > 0, multiplies the mean 0-1 loss (``kappa = lam / n``).
    prior_var : float or (d,) array (d with the intercept), > 0.
    fit_intercept : bool, default True: append a constant column (the last
        coordinate of ``mean`` is the intercept).
    standardize : bool, default True.
    space, damping, tol, max_sweeps : as :class:`~pac_particles.approx.ep.EPLinear`.
    pu_prior : float in [0, 1), optional: the positive-unlabelled risk of
        :class:`~pac_particles.problem.risks.ClassificationRisk` (per-point
        ``kappa_i = lam * weight_i``).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((80, 2)); y = X[:, 0] - X[:, 1] > 0
    >>> ep = EPClassification(X, y, lam=80.0)
    >>> bool(ep.fit().converged), ep.predict_proba(X[:2]).shape
    (True, (2,))
    """

    _label = "EPClassification"
    _task = "classification"

    def __init__(self, X, y=None, lam=None, prior_var=1.0, fit_intercept=True,
                 standardize=True, space="auto", damping=0.7, tol=1e-3,
                 max_sweeps=500, pu_prior=None):
        # the PU risk is reweighted per point: lam as given
        self._configure(as_problem(
            X, y, lam, self._task, type(self).__name__, loss="zero_one",
            standardize=standardize, fit_intercept=fit_intercept,
            pu_prior=pu_prior),
            prior_var, space, damping, tol, max_sweeps)

    def _configure(self, problem, prior_var=1.0, space="auto", damping=0.7,
                   tol=1e-3, max_sweeps=500):
        if problem.loss != "zero_one":
            raise InputError(f"EPClassification has step sites: it takes "
                             f"the 0-1 loss, got {problem.loss!r}")
        self.problem = problem
        self.data = problem.data
        self.lam, self.lam_pn = problem.lam, problem.lam_pn
        self.pu_prior = problem.pu_prior
        self.standardize = problem.standardize
        self.fit_intercept = problem.fit_intercept
        self._setup_risk(problem.risk)
        self._setup_prior(prior_var, space, damping, tol, max_sweeps)

    def _input_sites(self):
        """A point whose input row is 0 has margin 0 for every theta: it
        adds ``exp(-kappa / 2)`` and carries no site."""
        return _Sites(self.risk, self.risk.zero_margins(self._Xs), self.lam)

    def predict_proba(self, X_new):
        """``P(x . theta > 0) = Phi(x m / sqrt(x S x))`` for new raw inputs:
        the posterior predictive of the randomised classifier."""
        mean, var = self.predict(X_new, return_var=True)
        return positive_probability(mean, var)

    def loo_proba(self):
        """Leave-one-out predictive probabilities of the positive class at
        the training points (each point's site removed, no refit)."""
        mean, var = self.loo_scores(return_var=True)
        return positive_probability(mean, var)

    def loo_accuracy(self):
        """``1 - r_n`` of the leave-one-out scores: the accuracy of the
        leave-one-out predictions (ties count 1/2); for positive-unlabelled
        labels, the unbiased estimate of the positive-negative accuracy."""
        return 1.0 - self.risk(self.loo_scores())

