"""How tight the certificates are on real data, and whether they hold.

* :func:`certificate_row`: one stratified train/test split of a data set,
  one fit of an estimator (by default ``PACBayesAUC()``), and side by side the
  test AUC of its point estimate, the empirical and test AUC of its
  randomised score, the certified AUC of the dissertation's Corollary 19
  (``bound_``), of the previous default (two-sample Hoeffding), of every
  candidate of the new certificate and of the one chosen
  (``certificate_``), and the held-out test-set bound of the point estimate.
* :func:`classification_certificate_row`: the same for the classification
  risk on a data set of the dissertation's tables: the VB 0-1 posterior at
  the dissertation's setting with its Corollary 11 bound beside our
  kl/Catoni certificate of the same posterior, and the default
  ``PACBayesClassifier()`` with its certificate.
* :func:`coverage`: the certificate's frequency of holding on a simulated
  distribution whose population AUC is known (two Gaussian classes, so
  ``1 - AUC(theta) = Phi(-theta . delta / (sqrt(2) |theta|))`` in closed form)
  or estimated on a very large sample.
* :func:`negative_control_coverage`: the power of such a study. A coverage
  frequency is evidence only if the same harness rejects a wrong bound, so
  it computes the correct kl bound (``m = min(n_pos, n_neg)``, the true
  ``KL``) beside wrong variants (``m = n``, ``KL = 0``, all pairs
  independent) in settings where the correct one is nearly tight
  (:data:`NEGATIVE_CONTROLS`: few positives, negatives at one point so that
  ``R_n`` is a mean of ``n_pos`` i.i.d. terms, a fixed score or a Gibbs
  posterior over scores of equal population risk); the correct one must
  cover and each wrong one fail (:func:`coverage_p_value`, a binomial test).

Example
-------
::

    from pac_particles.problem.datasets import load_dataset
    from lab.study.certificates import (
        NEGATIVE_CONTROLS, certificate_row, coverage,
        negative_control_coverage)
    X, y, _ = load_dataset("pima")
    row = certificate_row(X, y, name="pima", seed=0)
    row["certified_auc"], row["certificate"], row["test_auc_point"]
    cov = coverage(n=400, repetitions=200, seed=0)
    cov["coverage"] >= 1 - cov["delta"]
    ctrl = negative_control_coverage(**NEGATIVE_CONTROLS["fixed score"])
    ctrl["coverage"]["correct"], ctrl["coverage"]["m = n"]   # 0.999, 0.571

References
----------
[ARC16] Alquier, P., Ridgway, J. and Chopin, N. (2016). On the properties of
variational approximations of Gibbs posteriors. JMLR 17(239), 1-41.

[PRST21] Perez-Ortiz, M., Rivasplata, O., Shawe-Taylor, J. and Szepesvari, C.
(2021). Tighter risk certificates for neural networks. JMLR 22(227), 1-40.
"""

import math
import time

import numpy as np
from scipy.special import logsumexp
from scipy.stats import binom, norm
from sklearn.model_selection import train_test_split

from pac_particles.problem.auc import auc_risk, linear_auc_risk, split_risk
from pac_particles.problem.data import binary_labels
from pac_particles.bounds import (corollary11_bound, held_out_bound,
                                  kl_inverse_upper, maurer_constant)
from pac_particles.core.checks import check_count, check_positive, check_probability

__all__ = ["certificate_row", "classification_certificate_row", "coverage",
           "gaussian_population", "randomized_test_auc", "posterior_draws_raw",
           "format_table", "format_classification_table",
           "BOUND_VARIANTS", "kl_bound_variants", "coverage_p_value",
           "finite_gibbs_posterior", "coordinate_score_sample",
           "NEGATIVE_CONTROLS", "negative_control_coverage",
           "format_negative_controls"]


def randomized_test_auc(estimator, X_test, y_test):
    """Expected test AUC of the fitted estimator's randomised score
    (``theta`` drawn from its posterior: SMC particles, or 200 draws of a
    Gaussian posterior), linear scores only; None for GP scores."""
    if estimator.kernel is not None:
        return None
    theta, weights = posterior_draws_raw(estimator, np.random.default_rng(0))
    positives = y_test == estimator.classes_[1]
    return 1.0 - float(weights @ linear_auc_risk(theta, X_test[positives],
                                                 X_test[~positives]))


def certificate_row(X, y, name="", estimator=None, test_size=0.25, seed=0):
    """Fit ``estimator`` (default ``PACBayesAUC(random_state=seed)``) on a
    stratified ``1 - test_size`` split and return the certificates' figures
    as a dict (AUC scale: certified AUC = 1 - bound)."""
    from pac_particles.sklearn.estimator import PACBayesAUC
    X = np.asarray(X, dtype=float)
    y = binary_labels(y).astype(int)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=test_size,
                                              stratify=y, random_state=seed)
    est = PACBayesAUC(random_state=seed) if estimator is None else estimator
    start = time.perf_counter()
    est.fit(X_tr, y_tr)
    seconds = time.perf_counter() - start
    cert, old = est.certificate_, est.bound_
    point_risk = auc_risk(est.decision_function(X_te), y_te)
    m_test = int(min(y_te.sum(), (1 - y_te).sum()))
    held_out = held_out_bound(point_risk, m_test, est.eps, trivial=0.5)
    row = {
        "dataset": name, "n_train": len(y_tr), "d": X.shape[1],
        "m": int(min(y_tr.sum(), (1 - y_tr).sum())), "method": est.method_,
        "lam": est.lam_, "test_auc_point": 1.0 - point_risk,
        "empirical_auc_randomized": 1.0 - cert.empirical_randomized_risk
        if cert.prior == "data-free" else None,
        "test_auc_randomized": randomized_test_auc(est, X_te, y_te),
        "certified_auc_corollary19": 1.0 - old.auc_risk_bound_rigorous,
        "certified_auc_two_sample_hoeffding": 1.0 - old.auc_risk_bound_two_sample,
        "certified_auc": 1.0 - est.certified_auc_risk_,
        "certificate": cert.name, "prior": cert.prior.split(":")[0],
        "vacuous": cert.vacuous, "delta": cert.delta,
        "kl": cert.kl, "test_set_certified_auc_point": 1.0 - held_out.bound,
        "fit_seconds": seconds,
    }
    labels = ("part_a_score", "randomised_score")
    for label, (_, bound) in zip(labels, cert.alternatives):
        row[f"candidate_{label}"] = 1.0 - bound
    if row["empirical_auc_randomized"] is None:
        # on the certifying part B of the certificate's split
        row["empirical_auc_randomized"] = 1.0 - cert.empirical_randomized_risk
    return row


def classification_certificate_row(X, y, name="", test_size=0.3, seed=0):
    """Certificates of the classification risk on one stratified
    ``1 - test_size`` split (the dissertation's 70/30), error scale.

    * The dissertation's setting [ARC16, Cor. 13]: Gaussian VB of the 0-1
      Gibbs posterior on the isotropic family at ``lam = sqrt(n d)`` under
      ``N(0, I / d)`` (``d`` counts the intercept), with the dissertation's
      bound on it (Corollary 11, Hoeffding: linear in ``lam``) and the
      tightest kl/Catoni certificate (``m = n``) of the *same* posterior.
    * The default ``PACBayesClassifier(random_state=seed)`` (VB, hinge
      loss, ``lam`` by cross-validation) with its certificate.

    Each gets the test error of its deployed classifier (``predict``: the
    posterior mean's score cut where Platt's sigmoid passes 1/2) and the
    training error of its randomised classifier (``E_rho[r_n]``). Returns a
    dict.
    """
    from pac_particles.sklearn.classifier import PACBayesClassifier
    X = np.asarray(X, dtype=float)
    y = binary_labels(y).astype(int)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=test_size,
                                              stratify=y, random_state=seed)
    n, d = X_tr.shape[0], X_tr.shape[1] + 1
    lam, prior_var = math.sqrt(n * d), 1.0 / d
    vb = PACBayesClassifier(method="vb", loss="zero_one", lam=lam,
                            prior_var=prior_var, vb_family="isotropic",
                            random_state=seed)
    default = PACBayesClassifier(random_state=seed)
    row = {"dataset": name, "n_train": n, "d": X.shape[1]}
    for label, est in (("vb", vb), ("default", default)):
        start = time.perf_counter()
        est.fit(X_tr, y_tr)
        row[f"{label}_seconds"] = time.perf_counter() - start
        row[f"{label}_test_error"] = float(np.mean(
            est.predict(X_te) != (y_te == 1)))
        cert = est.certificate_
        row[f"{label}_randomized_error"] = cert.empirical_randomized_risk
        row[f"{label}_certified_error"] = cert.bound
        row[f"{label}_certificate"] = cert.name
    row["default_lam"] = default.lam_
    result = vb.approximation_.result_
    row["vb_corollary11"] = corollary11_bound(
        row["vb_randomized_error"], result.mean, result.cov, lam, n,
        prior_var=prior_var, delta=vb.eps).bound
    return row


_CLASSIFICATION_COLUMNS = [
    ("dataset", "data set", "{}"), ("n_train", "n", "{}"), ("d", "d", "{}"),
    ("vb_test_error", "VB 0-1: test error (point)", "{:.3f}"),
    ("vb_randomized_error", "VB 0-1: train error (randomised)", "{:.3f}"),
    ("vb_corollary11", "VB 0-1: Cor. 11 (dissertation)", "{:.3f}"),
    ("vb_certified_error", "VB 0-1: kl/Catoni (same posterior)", "{:.3f}"),
    ("default_test_error", "default SMC: test error (point)", "{:.3f}"),
    ("default_randomized_error", "default SMC: train error (randomised)",
     "{:.3f}"),
    ("default_certified_error", "default SMC: certified error", "{:.3f}")]


def format_classification_table(rows):
    """Markdown table of :func:`classification_certificate_row` dicts (error
    scale; a bound of 1/2 or more is marked "(vacuous)")."""
    lines = ["| " + " | ".join(t for _, t, _ in _CLASSIFICATION_COLUMNS) + " |",
             "|" + "---|" * len(_CLASSIFICATION_COLUMNS)]
    for row in rows:
        cells = []
        for key, _, fmt in _CLASSIFICATION_COLUMNS:
            cell = fmt.format(row[key])
            if key.endswith(("corollary11", "certified_error")) \
                    and row[key] >= 0.5:
                cell += " (vacuous)"
            cells.append(cell)
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def gaussian_population(n, pi, shift, rng):
    """``n`` points: labels Bernoulli(``pi``), ``X | y ~ N(y * shift, I)``;
    for a linear score ``x . theta`` the population
    ``1 - AUC = Phi(-theta . shift / (sqrt(2) |theta|))``."""
    y = rng.random(n) < pi
    X = rng.normal(size=(n, shift.size)) + np.outer(y, shift)
    return X, y


def coverage(n=400, pi=0.4, shift=(1.5, -1.0, 0.5), repetitions=200,
             delta=0.05, estimator_kwargs=None, seed=0, population_size=None):
    """Frequency with which ``certified_auc_risk_`` of ``PACBayesAUC`` bounds
    the population ``E_rho[1 - AUC]`` of its randomised score.

    Data: :func:`gaussian_population` (``n`` points, prevalence ``pi``).
    The population risk of each particle (or draw of a Gaussian posterior)
    is ``Phi(-theta . shift / (sqrt(2) |theta|))`` in closed form on the
    standardised scale mapped back to the raw one; with ``population_size``
    it is instead estimated on that many fresh points (a check of the closed
    form). Returns a dict: ``coverage``, ``delta``, the certified and
    population risks per repetition, and the chosen bounds' names.
    """
    from pac_particles.sklearn.estimator import PACBayesAUC
    repetitions = check_count(repetitions, "repetitions")
    delta = check_probability(delta, "delta")
    shift = np.asarray(shift, dtype=float)
    rng = np.random.default_rng(seed)
    kwargs = dict(method="ep", lam="cv", grid_size=10)
    kwargs.update(estimator_kwargs or {})
    certified, population, names = [], [], []
    for r in range(repetitions):
        X, y = gaussian_population(n, pi, shift, rng)
        est = PACBayesAUC(eps=delta, random_state=r, **kwargs).fit(X, y)
        theta_raw, weights = posterior_draws_raw(est, rng)
        if population_size:
            X_pop, y_pop = gaussian_population(population_size, pi, shift, rng)
            risks = linear_auc_risk(theta_raw, X_pop[y_pop], X_pop[~y_pop])
        else:
            norms = np.linalg.norm(theta_raw, axis=1)
            risks = norm.cdf(-(theta_raw @ shift) / (np.sqrt(2) * norms))
        risk = float(weights @ risks)
        certified.append(est.certified_auc_risk_)
        population.append(risk)
        names.append(f"{est.certificate_.name} ({est.certificate_.prior.split(':')[0]})")
    certified, population = np.array(certified), np.array(population)
    return {"coverage": float(np.mean(population <= certified)),
            "delta": delta, "repetitions": repetitions, "n": n,
            "certified": certified, "population": population,
            "chosen": names}


def posterior_draws_raw(est, rng, size=400):
    """``(theta, weights)``: the fitted posterior's coefficients on the raw
    input scale, as weighted SMC particles or ``size`` equally weighted
    draws of a Gaussian posterior."""
    post = est.posterior_
    if est.method_ == "smc":
        # theta given the particles (exact draws when sampled in the
        # design's span, d > n; the particles themselves otherwise)
        model = post.predictor
        theta = model.sample_linear_coefficients(post.theta, rng)
        return model.design_data.raw_linear(theta)[0], post.weights
    return (post.data.raw_linear(post.sample(size, rng))[0],
            np.full(size, 1.0 / size))


# The negative controls: a coverage study is evidence only if it rejects a
# wrong bound, so the harness below computes the correct kl bound beside the
# wrong ones, in settings where the correct one is nearly tight.
BOUND_VARIANTS = ("correct", "m = n", "KL = 0", "all pairs")


def kl_bound_variants(empirical_risk, kl, n_pos, n_neg, delta=0.05):
    """The PAC-Bayes-kl bound of :func:`~pac_particles.bounds.kl_bound`,
    vectorised over repetitions, with the AUC's correct terms and three wrong
    ones (:data:`BOUND_VARIANTS`)::

        kl(q || bound) = (KL + log(xi(m) / delta)) / m,

    * ``"correct"``: ``m = min(n_pos, n_neg)``, the posterior's ``KL``;
    * ``"m = n"``: ``m = n_pos + n_neg``, as for a point risk;
    * ``"KL = 0"``: the correct ``m``, the posterior's ``KL`` dropped (right
      only for a posterior fixed before the data);
    * ``"all pairs"``: ``m = n_pos n_neg``, every pair taken as independent.

    Returns a dict, variant -> array of bounds (the shape of
    ``empirical_risk``).
    """
    q = np.asarray(empirical_risk, dtype=float)
    kl = np.broadcast_to(np.asarray(kl, dtype=float), q.shape)
    m = min(n_pos, n_neg)
    terms = {"correct": (m, kl), "m = n": (n_pos + n_neg, kl),
             "KL = 0": (m, np.zeros_like(kl)), "all pairs": (n_pos * n_neg, kl)}
    return {name: kl_inverse_upper(q, (k + math.log(maurer_constant(size)
                                                    / delta)) / size)
            for name, (size, k) in terms.items()}


def coverage_p_value(failures, repetitions, delta):
    """One-sided binomial p-value of "the bound holds with probability at
    least ``1 - delta``" given ``failures`` out of ``repetitions``:
    ``P(Binomial(repetitions, delta) >= failures)``. Small: the bound is
    wrong; not small: the study cannot tell it from a correct one."""
    return float(binom.sf(failures - 1, repetitions, delta))


def finite_gibbs_posterior(risks, lam):
    """Gibbs posterior ``rho_k ∝ exp(-lam r_k)`` over a finite class under
    the uniform prior, along the last axis of ``risks``: ``(weights,
    KL(rho || uniform))``, ``KL = sum_k rho_k log(K rho_k)`` exactly (0 at
    ``lam = 0``, ``log K`` for a point mass)."""
    risks = np.asarray(risks, dtype=float)
    log_w = -lam * risks
    log_w = log_w - logsumexp(log_w, axis=-1, keepdims=True)
    weights = np.exp(log_w)
    kl = np.sum(weights * (log_w + math.log(risks.shape[-1])), axis=-1)
    # rounding can leave -1e-16 where the posterior is the prior
    return weights, np.maximum(kl, 0.0)


def coordinate_score_sample(n_pos, n_neg, shift, negative_scale, rng,
                            size=()):
    """Scores of the coordinate scores ``x -> x_k`` on ``size`` independent
    samples of ``n_pos`` positives ``N(shift, I)`` and ``n_neg`` negatives
    ``N(0, negative_scale^2 I)``: arrays ``size + (K, n_pos)`` and ``size +
    (K, n_neg)``, ``K = len(shift)``. The population risk of score ``k`` is
    ``Phi(-shift_k / sqrt(1 + negative_scale^2))``; with ``negative_scale =
    0`` every negative scores 0, so ``h(x+, x-) = 1{x+_k < 0}`` depends on
    the positive only and ``R_n`` is a mean of ``n_pos`` i.i.d. Bernoulli
    terms: the case where ``m = min(n_pos, n_neg)`` cannot be improved."""
    shift = np.asarray(shift, dtype=float)
    scores_pos = rng.normal(size=size + (shift.size, n_pos)) + shift[:, None]
    shape = size + (shift.size, n_neg)
    # negatives at one point need no draws (most of the cost at large n_neg)
    scores_neg = (np.zeros(shape) if negative_scale == 0
                  else negative_scale * rng.normal(size=shape))
    return scores_pos, scores_neg


# Settings of :func:`negative_control_coverage` where the correct bound is
# nearly tight (few positives, negatives at one point): a fixed score (KL = 0
# exactly; m = n and all pairs must fail), the Gibbs posterior at a large lam
# over 1000 scores of equal population risk (selection is pure noise, KL near
# log 1000; KL = 0 must fail), and, for contrast, a balanced sample where the
# negatives vary too, which cannot reject m = n.
NEGATIVE_CONTROLS = {
    "fixed score": dict(n_pos=20, n_neg=2000, n_scores=1, lam=0.0),
    "Gibbs over 1000 scores": dict(n_pos=20, n_neg=500, n_scores=1000,
                                   lam=200.0),
    "balanced, negatives N(0, I)": dict(n_pos=200, n_neg=200, n_scores=1,
                                        lam=0.0, negative_scale=1.0),
}


def negative_control_coverage(n_pos=20, n_neg=2000, n_scores=1, lam=0.0,
                              population_risk=0.3, negative_scale=0.0,
                              repetitions=1000, delta=0.05, seed=0):
    """Coverage of the correct kl bound and of its wrong variants
    (:func:`kl_bound_variants`) for the Gibbs posterior at ``lam`` over
    ``n_scores`` coordinate scores (:func:`coordinate_score_sample`), each of
    population risk ``population_risk``.

    The prior is uniform over the scores, fixed before the data; the
    posterior ``rho ∝ exp(-lam R_n)`` (:func:`finite_gibbs_posterior`) has an
    exact ``KL``, and ``E_rho[1 - AUC] = population_risk`` whatever ``rho``
    picks, so a low ``E_rho[R_n]`` is selection noise only. One score (or
    ``lam = 0``) is a posterior fixed in advance, ``KL = 0``. Only ``R_n``
    per score and repetition is needed: repetitions are drawn in blocks
    and ranked by :func:`~pac_particles.problem.auc.split_risk`.

    Returns a dict: per variant ``coverage`` (fraction of repetitions with
    ``population_risk <= bound``), ``failures``, ``p_value``
    (:func:`coverage_p_value`) and ``mean_bound``; the settings; per
    repetition ``empirical`` (``E_rho[R_n]``) and ``kl``.
    """
    repetitions = check_count(repetitions, "repetitions")
    n_pos, n_neg = check_count(n_pos, "n_pos"), check_count(n_neg, "n_neg")
    n_scores = check_count(n_scores, "n_scores")
    delta = check_probability(delta, "delta")
    risk = check_probability(population_risk, "population_risk")
    lam = check_positive(lam, "lam", allow_zero=True)
    negative_scale = check_positive(negative_scale, "negative_scale",
                                    allow_zero=True)
    shift = np.full(n_scores, math.sqrt(1.0 + negative_scale ** 2)
                    * norm.isf(risk))
    rng = np.random.default_rng(seed)
    # about 4 million scores per block
    block = max(1, 4_000_000 // (n_scores * (n_pos + n_neg)))
    empirical, kl = [], []
    for start in range(0, repetitions, block):
        size = min(block, repetitions - start)
        pos, neg = coordinate_score_sample(n_pos, n_neg, shift,
                                           negative_scale, rng, (size,))
        risks = split_risk(pos.reshape(-1, n_pos),
                           neg.reshape(-1, n_neg)).reshape(size, n_scores)
        weights, block_kl = finite_gibbs_posterior(risks, lam)
        empirical.append(np.sum(weights * risks, axis=1))
        kl.append(block_kl)
    empirical, kl = np.concatenate(empirical), np.concatenate(kl)
    bounds = kl_bound_variants(empirical, kl, n_pos, n_neg, delta)
    result = {"n_pos": n_pos, "n_neg": n_neg, "n_scores": n_scores,
              "lam": lam, "population_risk": risk,
              "negative_scale": negative_scale, "repetitions": repetitions,
              "delta": delta, "empirical": empirical, "kl": kl,
              "coverage": {}, "failures": {}, "p_value": {},
              "mean_bound": {}}
    for name, bound in bounds.items():
        failures = int(np.sum(risk > bound))
        result["coverage"][name] = 1.0 - failures / repetitions
        result["failures"][name] = failures
        result["p_value"][name] = coverage_p_value(failures, repetitions,
                                                   delta)
        result["mean_bound"][name] = float(bound.mean())
    return result


def format_negative_controls(results):
    """Markdown table of :func:`negative_control_coverage` results, keyed
    by setting name: coverage (mean bound) of each variant, with the
    binomial p-value of "covers at 1 - delta" where it is below 0.001 (a
    ``KL = 0`` variant of a posterior whose KL is 0 is the correct bound)."""
    head = ["setting", "n_pos", "n_neg", "scores", "lam", "mean KL",
            "mean E_rho[R_n]", "R", "reps", "delta"] + list(BOUND_VARIANTS)
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, res in results.items():
        cells = [name, str(res["n_pos"]), str(res["n_neg"]),
                 str(res["n_scores"]), f"{res['lam']:g}",
                 f"{res['kl'].mean():.2f}", f"{res['empirical'].mean():.3f}",
                 f"{res['population_risk']:.3f}", str(res["repetitions"]),
                 f"{res['delta']:g}"]
        for variant in BOUND_VARIANTS:
            if variant == "KL = 0" and not np.any(res["kl"]):
                cells.append("= correct (KL is 0)")
                continue
            cell = (f"{res['coverage'][variant]:.3f} "
                    f"({res['mean_bound'][variant]:.3f})")
            p_value = res["p_value"][variant]
            if p_value < 1e-3:
                # binom.sf underflows to 0 below about 1e-308
                cell += (f", p = {p_value:.0e}" if p_value > 0
                         else ", p < 1e-300")
            cells.append(cell)
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


_COLUMNS = [("dataset", "data set", "{}"), ("n_train", "n", "{}"),
            ("d", "d", "{}"), ("m", "m", "{}"),
            ("test_auc_point", "test AUC (point)", "{:.3f}"),
            ("empirical_auc_randomized", "train AUC (randomised)", "{:.3f}"),
            ("test_auc_randomized", "test AUC (randomised)", "{:.3f}"),
            ("certified_auc_corollary19", "Cor. 19", "{:.3f}"),
            ("certified_auc_two_sample_hoeffding", "two-sample Hoeffding", "{:.3f}"),
            ("candidate_kl_data_free", "kl", "{:.3f}"),
            ("reference_catoni_data_free", "Catoni (reference)", "{:.3f}"),
            ("candidate_kl_data_dependent", "kl, data-dep. prior", "{:.3f}"),
            ("certified_auc", "certified AUC (new default)", "{:.3f}"),
            ("test_set_certified_auc_point", "test-set bound (point)", "{:.3f}")]


def format_table(rows):
    """Markdown table of :func:`certificate_row` dicts (AUC scale; a
    vacuous certificate, 0.5 or less, is marked "(vacuous)")."""
    head = "| " + " | ".join(title for _, title, _ in _COLUMNS) + " |"
    lines = [head, "|" + "---|" * len(_COLUMNS)]
    for row in rows:
        cells = []
        for key, _, fmt in _COLUMNS:
            value = row.get(key)
            cell = "-" if value is None else fmt.format(value)
            if key.startswith(("certified", "candidate", "test_set",
                               "reference")) \
                    and value is not None and value <= 0.5:
                cell += " (vacuous)"
            if key == "certified_auc":
                cell = f"**{cell}** ({row['certificate']}, {row['prior']})"
            cells.append(cell)
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
