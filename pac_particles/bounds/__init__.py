"""PAC-Bayes certificates: bounds on the expected risk of a randomised predictor.

Every bound on a risk in [0, 1] is returned in [0, 1] with a ``vacuous`` flag.
The package splits by topic; every name is importable from
``pac_particles.bounds``:

* :mod:`~pac_particles.bounds.kl` -- the binary kl divergence, its upper and
  lower inverses (vectorised bisection), Maurer's constant ``xi(m)``.
* :mod:`~pac_particles.bounds.certificates` -- :class:`Certificate` and the
  bounds for any risk with ``m`` independent terms: PAC-Bayes-kl (Seeger,
  Maurer), Catoni over a fixed grid, the linear Hoeffding form, the held-out
  test-set bound, the union over candidates (:func:`tightest`) and
  :func:`risk_certificate`.
* :mod:`~pac_particles.bounds.ranking` -- the AUC risk as a two-sample
  U-statistic (``m = min(n_pos, n_neg)``, derived there), Gaussian and Gibbs
  posteriors, data-dependent priors.
* :mod:`~pac_particles.bounds.classification` -- the dissertation's
  classification results (Lemma 10, Corollaries 11, 13, 15, Lemma 14,
  Theorem 17) and the certificate of a point risk (``m = n``).
* :mod:`~pac_particles.bounds.certification` -- :func:`certify`, the one function
  that turns a fitted posterior into the certificate of the randomised (or
  part-A) score or of the deployed score, from a :class:`CertificateSpec`;
  the deployed score's margin bound in
  :mod:`~pac_particles.bounds.derandomised`.
* :mod:`~pac_particles.bounds.corollary19` -- the dissertation's Corollary 19
  for ranking (:class:`PACBayesBound`), kept for reference; its Gaussian,
  Gibbs and SMC versions in :mod:`~pac_particles.bounds.corollary19_posteriors`.

Example
-------
::

    from pac_particles.bounds import gibbs_certificate
    # the Gibbs posterior sampled by SMC: post = run_smc(model, ...); a
    # lower confidence bound on log Z at 0.005, the kl bound at 0.045
    log_z, how = post.log_z_lower_bound(0.005)
    cert = gibbs_certificate(log_z, post.lam, risk=model.empirical_risk,
                             delta=0.045)
    cert.name, cert.bound, 1 - cert.bound, cert.vacuous   # at 1 - 0.05

References
----------
[ARC16] Alquier, P., Ridgway, J. and Chopin, N. (2016). On the properties of
variational approximations of Gibbs posteriors. JMLR 17(239), 1-41.

[Cat07] Catoni, O. (2007). PAC-Bayesian supervised classification. IMS
Lecture Notes 56.

[CLV08] Clemencon, S., Lugosi, G. and Vayatis, N. (2008). Ranking and
empirical minimization of U-statistics. Annals of Statistics 36(2), 844-874.

[Mau04] Maurer, A. (2004). A note on the PAC Bayesian theorem. arXiv:cs/0411099.

[PRST21] Perez-Ortiz, M., Rivasplata, O., Shawe-Taylor, J. and Szepesvari, C.
(2021). Tighter risk certificates for neural networks. JMLR 22(227), 1-40.
"""

from pac_particles.bounds.certificates import (BOUNDS, CATONI_GRID, Certificate, catoni_bound,
                           kl_bound, linear_bound, risk_certificate,
                           held_out_bound, tightest)
from pac_particles.bounds.classification import (CLASSIFICATION_TRIVIAL,
                             classification_certificate, corollary11_bound,
                             corollary13_hyperparameters,
                             corollary13_oracle_bound, corollary15_oracle_bound,
                             hinge_bound, hinge_hoeffding_function,
                             lemma10_hoeffding_function, theorem17_iterate_bound,
                             remark16_excess_risks,
                             remark16_zero_one_excess_bound,
                             corollary21_oracle_bound, SigmaProfile,
                             vb_objective_in_sigma)
from pac_particles.bounds.certification import (CertificateSetting,
                                                CertificateSpec, certify,
                                                prior_split)
from pac_particles.bounds.corollary19 import (TRIVIAL_BOUND, PACBayesBound, pac_bayes_bound,
                          prevalence_factor_lower)
from pac_particles.bounds.corollary19_posteriors import (
    pac_bayes_bound_gaussian, pac_bayes_bound_gibbs, pac_bayes_bound_gp,
    smc_certificate)
from pac_particles.bounds.kl import binary_kl, kl_inverse_lower, kl_inverse_upper, maurer_constant
from pac_particles.bounds.ranking import (AUC_TRIVIAL, EXACT_RISK_MAX_PAIRS, RISK_SAMPLE_PAIRS,
                      auc_certificate, check_log_z, sampled_expected_risk_bound,
                      paired_expected_risk_bound,
                      data_dependent_candidate, data_dependent_prior,
                      gaussian_auc_certificate, gibbs_kl,
                      EVIDENCE_SHARE, GIBBS_RISK_GRID, gibbs_certificate)

__all__ = ["binary_kl", "kl_inverse_upper", "kl_inverse_lower",
           "maurer_constant", "Certificate", "CATONI_GRID", "BOUNDS",
           "kl_bound", "catoni_bound", "linear_bound", "held_out_bound",
           "tightest", "risk_certificate", "AUC_TRIVIAL", "auc_certificate",
           "gaussian_auc_certificate", "check_log_z", "gibbs_kl",
           "gibbs_certificate", "GIBBS_RISK_GRID", "EVIDENCE_SHARE",
           "prior_split", "data_dependent_prior", "data_dependent_candidate",
           "EXACT_RISK_MAX_PAIRS", "RISK_SAMPLE_PAIRS",
           "sampled_expected_risk_bound", "paired_expected_risk_bound",
           "classification_certificate", "lemma10_hoeffding_function",
           "corollary11_bound", "corollary13_hyperparameters",
           "corollary13_oracle_bound", "hinge_hoeffding_function",
           "hinge_bound", "corollary15_oracle_bound", "CLASSIFICATION_TRIVIAL",
           "theorem17_iterate_bound", "remark16_excess_risks",
           "remark16_zero_one_excess_bound", "corollary21_oracle_bound",
           "SigmaProfile", "vb_objective_in_sigma",
           "TRIVIAL_BOUND", "PACBayesBound",
           "pac_bayes_bound", "pac_bayes_bound_gaussian", "pac_bayes_bound_gp",
           "pac_bayes_bound_gibbs", "prevalence_factor_lower",
           "smc_certificate", "CertificateSetting", "CertificateSpec",
           "certify"]
