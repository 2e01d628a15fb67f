"""Every certificate of a fitted posterior, from one pure function.

:func:`certify` takes a fitted posterior (the protocol of
:mod:`pac_particles.core.posterior_result`), the problem it was fitted on
(:class:`~pac_particles.problem.problem.GibbsProblem`: the AUC or the
error, its validated rows) and a :class:`CertificateSpec`, and returns a
:class:`~pac_particles.bounds.Certificate` that says which score it
certifies. What SMC, EP and VB differ in comes from the posterior's
protocol (its Gaussian summary, its space), never from a method's name.

The split
---------
The rows are split once into a prior part ``A`` and a certifying part
``B``: for the AUC stratified (a ``prior_fraction`` of each class: the AUC
is a statement about the class-conditional distributions, so ``B``'s class
counts may be fixed), for the error uniformly (a ``prior_fraction`` of the
rows, whatever their labels: ``B`` is then an i.i.d. sample of the
population, whose error weighs the classes by their population shares,
which a stratified ``B`` would replace by the sample's), from a seed
stream of its own (``SeedSequence([CERTIFICATE_STREAM, seed])``, independent
of every stream a fit draws from ``seed``). On ``A`` alone, by a rule fixed
in advance, a Gaussian prior is fitted: the Laplace approximation of an
L2-penalised logistic regression (prior variance ``spec.prior_var``) on
``A``'s columns centred and scaled with ``A``'s own moments, mapped exactly
into the posterior's coordinates (an affine map of a column changes no
ranking; the whole sample's standardisation of the fit is then harmless,
since the prior depends on ``A`` only). Nothing of ``B`` enters it.

The candidates, and what is paid
--------------------------------
Two routes, both evaluated on ``B`` only, joined by a union bound whose
shares are fixed in advance (``1 - spec.randomised_share`` and
``spec.randomised_share`` of ``delta``):

1. *The part-A score* ``x . mu_A``, fixed before ``B`` (``KL = 0``): the
   test-set bound [Lan05] ``kl(r_B || R) <= log(1 / delta_1) / m_B``, no
   PAC-Bayes ``log xi(m)`` term (one fixed predictor needs none). This is
   the test-set bound a user gets from a logistic regression on half the
   rows, at ``delta_1`` instead of ``delta``: at ``m = 108`` and 0.9 of
   ``delta`` it costs about 0.002 of AUC, where a union of two equal shares
   (``log 2``) would cost about 0.01.
2. *The fitted randomised score* ``theta ~ rho`` (the posterior's Gaussian
   summary: EP's and VB's Gaussian, the Gaussian fitted to SMC's
   particles), using every row: PAC-Bayes-kl [See02; Mau04] on ``B``
   against the part-A prior, ``KL`` of ``rho`` rescaled by the ``c > 0``
   that makes it smallest (the same ranking and signs; the bound holds for
   every ``rho`` at once, so ``c`` is free). Offered for posteriors over
   the design's coefficients (``space == "primal"``) when ``B`` has at
   least ``spec.randomised_min_m`` independent terms and at most
   ``spec.max_exact_pairs`` pairs, conditions on the sizes only.

The certificate is the smaller of the two, and names the score it
certifies; both bounds are kept in ``alternatives``.

``spec.score == "deployed"`` certifies instead the one linear score the
estimator returns by default (the posterior's point estimate ``w``, fitted
on every row), derandomised (:mod:`pac_particles.bounds.derandomised`): the
margin bound on ``B`` against the part-A prior, over a grid of widths and
margins fixed in advance (a union bound), paid inside.

``spec.score == "part_a"`` certifies the part-A score alone, at the whole
``delta``: the test-set bound on ``B`` of a score fitted on ``A`` only,
which is what an estimator deploying that score
(``deploy="certified"``) returns. No choice is made, so nothing is paid;
on the same split it is the bound a user gets from a logistic regression
fitted on ``A`` and tested on ``B``.

Example
-------
::

    from pac_particles.bounds import CertificateSpec, certify
    cert = certify(est.posterior_, problem, CertificateSpec(seed=0))
    str(cert)

References
----------
[Lan05] Langford, J. (2005). Tutorial on practical prediction theory for
classification. JMLR 6, 273-306.

[Mau04] Maurer, A. (2004). A note on the PAC Bayesian theorem. arXiv:cs/0411099.

[PRST21] Perez-Ortiz, M., Rivasplata, O., Shawe-Taylor, J. and Szepesvari, C.
(2021). Tighter risk certificates for neural networks. JMLR 22(227), 1-40.

[See02] Seeger, M. (2002). PAC-Bayesian generalisation error bounds for
Gaussian process classification. JMLR 3, 233-269.
"""

import dataclasses
import functools
from typing import Optional
from dataclasses import dataclass

import numpy as np
from sklearn.linear_model import LogisticRegression

from pac_particles.bounds.certificates import (Certificate, held_out_bound,
                                               kl_bound)
from pac_particles.bounds.derandomised import (covariance_root,
                                               derandomised_bound,
                                               margin_rows)
# the part-A prior, read here by name (its former home)
from pac_particles.bounds.part_a import (PRIOR_VAR_FOLDS,  # noqa: F401
                                         PRIOR_VAR_GRID, part_a_prior)
from pac_particles.bounds.rescaled_kl import rescaled_kl
from pac_particles.core.checks import (InputError, check_choice,
                                       check_fraction, check_probability)
from pac_particles.core.gaussian import row_variances
from pac_particles.problem.auc import auc_risk
from pac_particles.problem.data import binary_labels
from pac_particles.problem.probit_risk import expected_auc_risk

__all__ = ["CertificateSpec", "CertificateSetting", "Candidate", "certify", "certificate_candidates",
           "certified_score", "certificate_split", "prior_split",
           "certificate_setting",
           "certificate_stream", "part_a_prior",
           "test_set_comparator", "CERTIFICATE_STREAM", "SCORES"]

#: the first word of the certificate's seed sequence: its split and draws
#: never share a stream with a fit seeded by the same ``seed``
CERTIFICATE_STREAM = 0xCE27
#: which score a certificate certifies
SCORES = ("randomised", "deployed", "part_a")


@dataclass(frozen=True)
class CertificateSpec:
    """Everything a certificate depends on besides the posterior and the
    rows, fixed before seeing them.

    Attributes
    ----------
    delta : float in (0, 1)
        The statement holds with probability at least ``1 - delta``.
    prior_fraction : float in (0, 1)
        Share of each class (the AUC) or of the rows (the error) in the
        prior part ``A`` (0.5: the comparator's half).
    seed : int
        Seed of the certificate's own stream (:data:`CERTIFICATE_STREAM`).
    prior_var : float or ``"cv"``
        Prior variance of the part-A logistic regression (its ``C``): given,
        or chosen by a cross-validation within ``A`` (free in a bound on
        ``B``).
    randomised_share : float in (0, 1)
        Share of ``delta`` of the randomised route (the part-A score takes
        the rest).
    randomised_min_m : int
        The randomised route is offered from this ``m`` of ``B`` on (below
        it, the part-A score takes the whole ``delta``: at ``m = 4`` the
        share would cost 0.005 of AUC, and the randomised route's
        ``log(2 sqrt(m))`` and KL never beat a test-set bound there).
    score : ``"randomised"``, ``"deployed"`` or ``"part_a"``
        The fitted randomised score (or the part-A score, whichever is
        tighter), the all-rows point estimate (derandomised), or the
        part-A score alone at the whole ``delta``.
    point : str
        The point estimate of the deployed score (``posterior.point_estimate``).
    cut : float
        The deployed labels' cut on that score: the certified rule is
        ``x . w - cut > 0`` (``w``'s intercept coordinate lowered by
        ``cut``: a classification design with an intercept; 0 otherwise).
        Free, as ``w`` is: the bound holds for every posterior at once.
    widths, margins : tuples of float
        The deployed certificate's grid of ``t`` and ``gamma``.
    max_pairs : int
        Pairs of ``B`` above which the deployed route samples pairs.
    max_exact_pairs : int
        Pairs of ``B`` above which the randomised route is not offered (its
        ``E_rho[R_B]`` is summed over every pair).
    """

    delta: float = 0.05
    prior_fraction: float = 0.5
    seed: int = 0
    prior_var: object = 1.0
    randomised_share: float = 0.1
    randomised_min_m: int = 100
    score: str = "randomised"
    point: str = "mean"
    cut: float = 0.0
    widths: tuple = (0.5, 1.0, 2.0, 4.0)
    margins: tuple = (1.0, 2.0)
    max_pairs: int = 2_000_000
    max_exact_pairs: int = 20_000_000

    def __post_init__(self):
        check_probability(self.delta, "delta")
        check_fraction(self.prior_fraction, "prior_fraction")
        check_probability(self.randomised_share, "randomised_share")
        check_choice(self.score, "score", SCORES)


def certificate_stream(seed):
    """The certificate's own seed stream, apart from every fit's: its split
    draws from the first child, its Monte Carlo pairs from the second."""
    return np.random.SeedSequence([CERTIFICATE_STREAM,
                                   0 if seed is None else int(seed)])


def certificate_split(y, spec: CertificateSpec, stratified: bool = True
                      ) -> np.ndarray:
    """Mask of the prior part ``A`` (:func:`prior_split`, ``stratified``:
    the AUC's split, else the error's) of ``spec.prior_fraction``, from the
    certificate's own stream alone (:data:`CERTIFICATE_STREAM`)."""
    seed = certificate_stream(spec.seed).spawn(2)[0]
    return prior_split(y, spec.prior_fraction, seed, stratified)


def prior_split(y, fraction=0.5, seed=0, stratified=True):
    """Boolean mask of the prior part ``A`` of a split: a ``fraction`` of
    the positives and of the negatives (``stratified``), else of the rows
    whatever their labels, drawn with ``seed`` (so independent of the
    features given the labels). At least one point of each class (of the
    rows) stays on each side.
    """
    fraction = check_fraction(fraction, "prior_fraction")
    if stratified:
        positives = binary_labels(y)
        groups = [np.flatnonzero(positives), np.flatnonzero(~positives)]
        if min(idx.size for idx in groups) < 2:
            raise InputError("a data-dependent prior needs at least two "
                             "points of each class")
    else:
        groups = [np.arange(np.asarray(y).shape[0])]
    rng = np.random.default_rng(seed)
    in_prior = np.zeros(np.asarray(y).shape[0], dtype=bool)
    for idx in groups:
        k = min(max(int(round(fraction * idx.size)), 1), idx.size - 1)
        in_prior[rng.permutation(idx)[:k]] = True
    return in_prior


class _Rows:
    """The certifying part ``B`` of a problem: its rows (the AUC's gathered
    when first used), labels, ``m`` and the empirical risk of a score
    vector (AUC risk or error)."""

    def __init__(self, problem, in_b):
        data = problem.data
        self.ranking = problem.task == "ranking"
        self._data, self._in_b = data, in_b
        if self.ranking:
            # B's positives, then its negatives (their pairs read views of
            # the rows, :attr:`X`)
            labels = np.asarray(data.y, dtype=bool)
            n_pos = int(np.count_nonzero(in_b[labels]))
            self.y = np.arange(int(np.count_nonzero(in_b))) < n_pos
        else:
            self.X = data.rows(in_b)
            self.y = np.asarray(data.y[in_b], dtype=bool)
            n_pos = int(self.y.sum())
        n_neg = self.y.size - n_pos
        self.m = min(n_pos, n_neg) if self.ranking else self.y.size
        self.n_pairs = n_pos * n_neg if self.ranking else self.y.size
        self.trivial = 0.5
        self.what = "AUC" if self.ranking else "error"

    @functools.cached_property
    def X(self):
        """B's rows, positives first (the AUC's: gathered on first use)."""
        return self._data.class_rows(self._in_b)[0]

    def scores(self, w):
        """``x . w`` on B's rows, in their order: for the AUC without
        gathering them (each class's scores, B's picked), unless they are
        gathered already."""
        if not self.ranking or "X" in self.__dict__:
            return self.X @ w
        return self._data.class_scores(w, self._in_b)

    def risk(self, scores):
        if self.ranking:
            return float(auc_risk(scores, self.y))
        # ties (score 0) count 1/2, as the 0-1 loss of the fit
        margins = np.where(self.y, scores, -scores)
        return float(np.mean((margins < 0) + 0.5 * (margins == 0)))

    def classes(self):
        """B's positive rows and negative rows (ranking: views)."""
        return np.split(self.X, [int(np.count_nonzero(self.y))])

    def expected_risk(self, mean, cov):
        from pac_particles.problem.gaussian_losses import GaussianPointRisk
        from pac_particles.problem.risks import ClassificationRisk
        if self.ranking:
            return expected_auc_risk(mean, cov, *self.classes())
        risk = ClassificationRisk(self.y, "zero_one")
        return float(GaussianPointRisk(self.X, risk)(mean, cov,
                                                     need_grad=False)[0])

    def margins(self, w, S, max_pairs, rng, root=None):
        if self.ranking:
            return margin_rows(*self.classes(), w, S, max_pairs, rng, root)
        # a margin's variance is its score's (the sign squares away): no
        # signed copy of the rows
        signs = np.where(self.y, 1.0, -1.0)
        return (signs * (self.X @ w),
                np.sqrt(np.maximum(row_variances(self.X, S), 0.0)), False)


def _clip(value):
    return min(max(float(value), 0.0), 1.0)


@dataclass(frozen=True)
class Candidate:
    """One route of :func:`certify`: its certificate at its own share of
    ``delta``, and the score it certifies in the posterior's coordinates:
    ``mean`` with ``cov`` None (one fixed linear score) or the Gaussian
    ``N(mean, cov)`` (a randomised score); ``n_rows``: the rows of ``B``."""
    name: str
    certificate: Certificate
    mean: np.ndarray
    cov: object
    n_rows: int


def certificate_setting(problem, spec):
    """``(in_a, mu_a, cov_a, rows, common)``: the split, the part-A prior,
    the certifying rows and the fields every certificate shares."""
    data = problem.data
    y = np.asarray(data.y, dtype=bool)
    if min(y.sum(), (~y).sum()) < 2:
        raise InputError("a certificate needs at least two rows of each "
                         "class")
    ranking = problem.task == "ranking"
    in_a = certificate_split(y, spec, stratified=ranking)
    intercept = bool(getattr(data, "intercept", False))
    # A's rows gathered here, so that the prior's fit reads a copy of them
    # and not the data
    mu_a, cov_a, prior_var = part_a_prior(data.rows(in_a), y[in_a], None,
                                          spec.prior_var, intercept)
    rows = _Rows(problem, ~in_a)
    tuned = spec.prior_var == "cv"
    split = (f"prior fitted on {spec.prior_fraction:.0%} of "
             + ("each class" if ranking else "the rows, drawn uniformly")
             + " (a "
             f"logistic regression, prior variance {prior_var:.3g}"
             + (" chosen by cross-validation within that part" if tuned
                else "") +
             f", centred and scaled on that part; its Laplace Gaussian), "
             f"certified on the other rows (m = {rows.m})")
    common = dict(prior="data-dependent: " + split,
                  prior_fraction=float(spec.prior_fraction),
                  hyperparameters=(("prior_var", prior_var),),
                  hyperparameters_tuned_on="prior part" if tuned else "none",
                  trivial=rows.trivial)
    return in_a, mu_a, cov_a, rows, common


class CertificateSetting:
    """:func:`certificate_setting` of one problem's rows under one spec's
    split (seed, ``prior_fraction``) and prior rule (``prior_var``),
    computed on first use and shared by every certificate of those rows:
    the randomised score's, the deployed score's and each step's of the
    certified choice of ``lam`` (their problems differ in ``lam`` alone),
    so that the split is drawn and the part-A prior fitted once a fit."""

    def __init__(self, problem, spec: CertificateSpec):
        self._problem, self._spec = problem, spec
        self._parts = None
        self._prior = None

    def without_rows(self) -> "CertificateSetting":
        """This setting with the split, the part-A prior and the shared
        fields it has computed (None of them yet: computed on first use),
        but not ``B``'s gathered rows, which its next use gathers again:
        what a certificate computed later keeps in the meantime."""
        light = CertificateSetting(self._problem, self._spec)
        if self._parts is not None:
            in_a, mu_a, cov_a, _, common = self._parts
            light._prior = (in_a, mu_a, cov_a, common)
        return light

    def parts(self, problem, spec: CertificateSpec):
        """:func:`certificate_setting` of ``(problem, spec)``, which must be
        the rows and split this setting was made for."""
        own = self._problem
        if (problem.data is not own.data or problem.task != own.task
                or _split_rule(spec) != _split_rule(self._spec)):
            raise InputError("this CertificateSetting was made for other "
                             "rows or another split: make one for these "
                             "(CertificateSetting(problem, spec))")
        if self._parts is None and self._prior is not None:
            in_a, mu_a, cov_a, common = self._prior
            self._parts = in_a, mu_a, cov_a, _Rows(own, ~in_a), common
        elif self._parts is None:
            self._parts = certificate_setting(own, self._spec)
        return self._parts


def _split_rule(spec):
    """The fields of ``spec`` that :func:`certificate_setting` reads."""
    return spec.seed, spec.prior_fraction, spec.prior_var


def _setting(problem, spec, setting):
    return (certificate_setting(problem, spec) if setting is None
            else setting.parts(problem, spec))


def certificate_candidates(posterior, problem, spec: CertificateSpec =
                           CertificateSpec(), setting=None) -> list:
    """The routes of :func:`certify` for the randomised score (module
    docstring), each a :class:`Candidate` at its share of ``spec.delta``
    (the shares add up to ``spec.delta``): the part-A score and, where
    offered, the fitted randomised score. ``setting``: a
    :class:`CertificateSetting` of these rows, if one is shared."""
    _, mu_a, cov_a, rows, common = _setting(problem, spec, setting)
    offered = (posterior.space == "primal"
               and spec.randomised_min_m <= rows.m
               and rows.n_pairs <= spec.max_exact_pairs)
    share = spec.randomised_share if offered else 0.0
    found = [_part_a_candidate(mu_a, rows, common,
                               spec.delta * (1.0 - share))]
    if offered:
        mean, cov = posterior.gaussian_summary()
        kl, scale = rescaled_kl(mean, cov, cov_a, mu_a)
        expected = _clip(rows.expected_risk(mean, cov))
        pac = kl_bound(expected, kl, rows.m, spec.delta * share,
                       trivial=rows.trivial)
        pac = dataclasses.replace(
            pac, posterior=f"the fitted randomised score (theta drawn from "
            f"the posterior's Gaussian, rescaled by c = {scale:.3g}, at each "
            f"use)", **common)
        found.append(Candidate("randomised score", pac, mean, cov,
                               rows.y.size))
    return found


def _part_a_candidate(mu_a, rows, common, delta):
    """The part-A score's test-set bound on ``B`` at ``delta``."""
    held = held_out_bound(_clip(rows.risk(rows.scores(mu_a))), rows.m, delta,
                          trivial=rows.trivial)
    held = dataclasses.replace(
        held, posterior="the part-A score x . mu_A (fixed before B; "
        "test-set bound on B, no PAC-Bayes term)", **common)
    return Candidate("part-A score", held, mu_a, None, rows.y.size)


def certify(posterior, problem, spec: CertificateSpec = CertificateSpec(),
            setting: Optional[CertificateSetting] = None) -> Certificate:
    """The certificate of ``posterior`` fitted on ``problem`` (module
    docstring): of the randomised score (or the part-A score where that is
    tighter), with ``spec.score == "deployed"`` of the all-rows point
    estimate's linear score, with ``spec.score == "part_a"`` of the part-A
    score alone (its test-set bound at the whole ``delta``; its
    coefficients in ``score_coefficients``). The bound is on the AUC risk (ranking) or the error
    (classification), in [0, 1], at level ``1 - spec.delta``.

    With fewer than two rows of a class there is no split: the trivial
    certificate (bound 1, vacuous). ``setting``: a
    :class:`CertificateSetting` shared by several certificates of these
    rows (the split and the part-A prior computed once).

    Raises
    ------
    InputError
        for a deployed certificate of a posterior without linear
        coefficients (GP latent scores).
    """
    y = np.asarray(problem.data.y, dtype=bool)
    if min(y.sum(), (~y).sum()) < 2:
        # no split leaves a row of each class on each side: only R <= 1
        return Certificate(name="trivial", bound=1.0, delta=spec.delta,
                           vacuous=True, empirical_randomized_risk=1.0,
                           kl=None, m=int(min(y.sum(), (~y).sum())),
                           trivial=0.5, raw_bound=1.0,
                           posterior="any score (fewer than two rows of a "
                           "class: nothing to certify on)")
    if spec.score == "deployed":
        return _deployed(posterior, problem, spec, setting)
    if spec.score == "part_a":
        _, mu_a, _, rows, common = _setting(problem, spec, setting)
        found = [_part_a_candidate(mu_a, rows, common, spec.delta)]
    else:
        found = certificate_candidates(posterior, problem, spec, setting)
    chosen = min(found, key=lambda c: c.certificate.bound)
    # a fixed score's coefficients: the user can score with what is certified
    fixed = None if chosen.cov is not None else tuple(
        float(v) for v in np.asarray(chosen.mean, dtype=float))
    return dataclasses.replace(
        chosen.certificate, score_coefficients=fixed,
        delta=spec.delta, n_candidates=len(found),
        alternatives=tuple((c.name, c.certificate.bound) for c in found),
        delta_shares=tuple((c.name, c.certificate.delta) for c in found),
        note=_paid_note(len(found) > 1, spec.score == "part_a"))


def certified_score(posterior, problem, certificate, spec: CertificateSpec =
                    CertificateSpec()) -> Candidate:
    """The :class:`Candidate` whose score ``certificate`` (from
    :func:`certify` with ``spec``) certifies: its ``mean`` (and ``cov``
    for a randomised score) in the posterior's coordinates."""
    for found in certificate_candidates(posterior, problem, spec):
        if found.certificate.bound == certificate.bound:
            return found
    raise InputError("the certificate is not one of this posterior's")


def _paid_note(offered, alone=False):
    note = ("data-independent: the split (labels and the seed's own stream), "
            "the prior's rule, the shares of delta; fitted on A only: the "
            "prior's mean and covariance, the part-A score; ")
    if offered:
        note += ("paid by a union bound with shares fixed in advance: the "
                 "choice between the part-A score and the randomised score; "
                 "free (the kl bound holds for every posterior): the "
                 "posterior's fit on every row and its rescaling c")
    elif alone:
        note += ("one candidate (the part-A score alone, as deployed): "
                 "nothing to pay")
    else:
        note += ("one candidate (the randomised score's route is not offered "
                 "for this posterior's space or B's size): nothing to pay")
    return note


def _deployed(posterior, problem, spec, setting=None):
    """The derandomised certificate of the point estimate's linear score
    (:mod:`pac_particles.bounds.derandomised`)."""
    if posterior.is_gp:
        raise InputError("a deployed certificate needs linear coefficients; "
                         "GP latent scores have none")
    _, mu_a, cov_a, rows, common = _setting(problem, spec, setting)
    seed = certificate_stream(spec.seed).spawn(2)[1]
    w = posterior.linear_coefficients(posterior.point_estimate(spec.point))
    if spec.cut:
        # the design's last column is the constant intercept column
        if not getattr(problem.data, "intercept", False):
            raise InputError("a deployed cut needs the design's intercept "
                             "column: fit with fit_intercept=True, or "
                             "certify the cut 0")
        w = np.array(w, dtype=float)
        w[-1] -= spec.cut
    # one factor of S = cov_a for the pairs' scales and the KL's precision
    # (a Cholesky factor: its triangular solves, no inverse)
    root = covariance_root(cov_a)
    factored = not np.any(np.triu(root, 1))
    u, s, sampled = rows.margins(w, cov_a, spec.max_pairs,
                                 np.random.default_rng(seed), root)
    bound, how = derandomised_bound(
        u, s, sampled, w, mu_a, None if factored else np.linalg.inv(cov_a),
        rows.m, spec.delta, spec.widths, spec.margins,
        root=root if factored else None)
    empirical = rows.risk(rows.scores(w))
    return Certificate(
        name="derandomised kl", bound=bound, delta=spec.delta,
        vacuous=bool(bound >= rows.trivial),
        empirical_randomized_risk=_clip(empirical), kl=how["kl"], m=rows.m,
        parameter=how["width"], grid_size=how["grid_size"],
        raw_bound=bound,
        posterior=(f"the deployed score x . w (the posterior's "
                   f"{spec.point}"
                   + (f", cut at {spec.cut:g}" if spec.cut else "")
                   + "), derandomised with margin gamma = "
                   f"{how['margin']:g} and width t = {how['width']:g}"),
        note=("data-independent: the split, the prior's rule, the grid of "
              f"(t, gamma) ({how['grid_size']} values, union bound paid)"
              + ("; B's pairs sampled from the certificate's own stream, "
                 "their confidence bound paid at 0.1 of delta"
                 if sampled else "")
              + "; free: w and its scale c (every posterior at once)"),
        **common)


def test_set_comparator(X, y, train_fraction=0.5, seed=0, delta=0.05,
                        in_a=None):
    """The test-set bound a user gets without this library, the yardstick of
    :func:`certify`: a standardised ``LogisticRegression`` (scikit-learn's
    defaults) fitted on a stratified ``train_fraction`` of the rows, the kl
    test-set bound (:func:`~pac_particles.bounds.held_out_bound`) of its
    AUC risk on the others, ``m = min(n_pos, n_neg)`` there; ``in_a``: the
    mask of the fitting rows instead (the certificate's split,
    :func:`certificate_split`, for a comparison on the very same rows).
    Returns the bound on ``1 - AUC``."""
    from sklearn.model_selection import train_test_split
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    X = np.asarray(X, dtype=float)
    y = np.asarray(y) == np.max(y)
    if in_a is None:
        X_a, X_b, y_a, y_b = train_test_split(
            X, y, train_size=train_fraction, stratify=y, random_state=seed)
    else:
        X_a, X_b, y_a, y_b = X[in_a], X[~in_a], y[in_a], y[~in_a]
    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))
    risk = auc_risk(model.fit(X_a, y_a).decision_function(X_b), y_b)
    return held_out_bound(_clip(risk), int(min(y_b.sum(), (~y_b).sum())),
                          delta, trivial=0.5).bound
