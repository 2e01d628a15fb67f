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

Example
-------
::

    from pac_particles.data import load_dataset
    from pac_particles.study.certificates import certificate_row, coverage
    X, y, _ = load_dataset("pima")
    row = certificate_row(X, y, name="pima", seed=0)
    row["certified_auc"], row["certificate"], row["test_auc_point"]
    cov = coverage(n=400, repetitions=200, seed=0)
    cov["coverage"] >= 1 - cov["delta"]

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
from scipy.stats import norm
from sklearn.model_selection import train_test_split

from ..auc import auc_risk, binary_labels, linear_auc_risk
from ..bounds import (AUC_TRIVIAL, catoni_bound, corollary11_bound,
                      held_out_bound)
from ..checks import check_count, check_probability

__all__ = ["certificate_row", "classification_certificate_row", "coverage",
           "gaussian_population", "randomized_test_auc", "posterior_draws_raw",
           "format_table", "format_classification_table"]


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
    from ..estimator import PACBayesAUC
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
        "m": int(min(y_tr.sum(), (1 - y_tr).sum())), "method": est.method,
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
    labels = ("kl_data_free", "kl_data_dependent")
    for label, (_, bound) in zip(labels, cert.alternatives):
        row[f"candidate_{label}"] = 1.0 - bound
    # for reference, Catoni's bound at the same share of delta (not a
    # candidate of the estimator: never tighter than kl by more than 0.001)
    expected, kl, data, _, _ = est._data_free_terms(est.posterior_)
    row["reference_catoni_data_free"] = 1.0 - catoni_bound(
        expected, kl, int(min(data.n_pos, data.n_neg)),
        cert.delta / cert.n_candidates, trivial=AUC_TRIVIAL).bound
    if row["empirical_auc_randomized"] is None:
        # the chosen certificate used the certification part only; report
        # the randomised score's training AUC on the whole sample
        row["empirical_auc_randomized"] = 1.0 - expected
    return row


def classification_certificate_row(X, y, name="", test_size=0.3, seed=0):
    """Certificates of the classification risk on one stratified
    ``1 - test_size`` split (the dissertation's 70/30), error scale.

    * The dissertation's setting [ARC16, Cor. 13]: Gaussian VB of the 0-1
      Gibbs posterior on the isotropic family at ``lam = sqrt(n d)`` under
      ``N(0, I / d)`` (``d`` counts the intercept), with the dissertation's
      bound on it (Corollary 11, Hoeffding: linear in ``lam``) and the
      tightest kl/Catoni certificate (``m = n``) of the *same* posterior.
    * The default ``PACBayesClassifier(random_state=seed)`` (SMC, 0-1 loss,
      ``lam`` by cross-validation) with its certificate.

    Each gets the test error of its point classifier (the sign of the
    posterior mean's score) and the training error of its randomised
    classifier (``E_rho[r_n]``). Returns a dict.
    """
    from ..classifier import PACBayesClassifier
    X = np.asarray(X, dtype=float)
    y = binary_labels(y).astype(int)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=test_size,
                                              stratify=y, random_state=seed)
    n, d = X_tr.shape[0], X_tr.shape[1] + 1
    lam, prior_var = math.sqrt(n * d), 1.0 / d
    vb = PACBayesClassifier(method="vb", lam=lam, prior_var=prior_var,
                            vb_family="isotropic", random_state=seed)
    default = PACBayesClassifier(random_state=seed)
    row = {"dataset": name, "n_train": n, "d": X.shape[1]}
    for label, est in (("vb", vb), ("default", default)):
        start = time.perf_counter()
        est.fit(X_tr, y_tr)
        row[f"{label}_seconds"] = time.perf_counter() - start
        scores = X_te @ est.coef_ + est.intercept_
        row[f"{label}_test_error"] = float(np.mean((scores > 0) != (y_te == 1)))
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
    from ..estimator import PACBayesAUC
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
    post, data = est.posterior_, est._data
    if est.method == "smc" and post.is_gp:
        # sampled in score space (d > n): theta given the training scores
        theta = post.predictor.sample_linear_coefficients(post.theta, rng)
        weights = post.weights
    elif est.method == "smc":
        theta, weights = post.theta, post.weights
    else:
        theta = rng.multivariate_normal(post.mean, post.cov, size=size)
        weights = np.full(size, 1.0 / size)
    out = np.zeros((theta.shape[0], est.n_features_in_))
    out[:, est._columns[data.columns]] = theta / data.scale
    return out, weights


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
