"""What a fitted ranking reports about its coefficients.

:class:`CoefficientReport` is the mixin of
:class:`~pac_particles.sklearn.estimator.PACBayesAUC` that reads the fitted
posterior through its protocol
(:class:`~pac_particles.core.posterior_result.PosteriorResult`): the
coefficients by feature name, posterior draws and intervals of the
quantity ``coef_`` estimates, and the ArviZ export. It reads
``point``, ``kernel``, ``random_state`` and the fitted ``posterior_``,
``posteriors_``, ``coef_``, ``kept_columns_``.
"""

from typing import Any, Optional, Tuple

import numpy as np
import pandas as pd
from sklearn.utils.validation import check_is_fitted

from pac_particles.core.checks import InputError, check_probability
from pac_particles.core.inference_data import to_inference_data
from pac_particles.sklearn.binary import feature_series

__all__ = ["CoefficientReport"]


class CoefficientReport:
    """Coefficients, draws, intervals and export of a fitted ranking
    (module docstring)."""

    # the estimator's parameters and fitted attributes this mixin reads
    point: str
    kernel: Any
    random_state: Optional[int]
    coef_: np.ndarray
    kept_columns_: np.ndarray
    inclusion_probs_: np.ndarray
    posterior_: Any
    posteriors_: list
    feature_names: Any

    @property
    def coefficients_(self) -> pd.Series:
        """``coef_`` as a pandas Series indexed by feature name."""
        check_is_fitted(self, "coef_")
        return feature_series(self.coef_, self.feature_names(), "coefficient")

    @property
    def inclusion_probabilities_(self) -> pd.Series:
        """``inclusion_probs_`` by the names of the features kept in the fit."""
        check_is_fitted(self, "inclusion_probs_")
        return feature_series(self.inclusion_probs_,
                              self.feature_names(self.kept_columns_),
                              "inclusion_probability")

    def coefficient_draws(self, n_draws: int = 2000, seed: Optional[int] = None
                          ) -> Tuple[np.ndarray, np.ndarray]:
        """``(draws, weights)``: posterior draws, on the fit's standardised
        kept columns (names: ``feature_names(self.kept_columns_)``), of the
        quantity ``coef_`` estimates: SMC's weighted particles (their
        directions for the Bayes point; in score space the coefficients
        ``E[theta | w]``), else ``n_draws`` equally weighted draws of the
        Gaussian (``seed``, default ``random_state``)."""
        check_is_fitted(self, "coef_")
        rng = self.random_state if seed is None else seed
        return self.posterior_.point_draws(self.point, n_draws, rng)

    def coefficient_intervals(self, level: float = 0.95) -> pd.DataFrame:
        """Equal-tailed posterior intervals of probability ``level`` of the
        quantity ``coef_`` estimates, on the raw inputs: a DataFrame by
        feature (``coefficient``, ``lower``, ``upper``). SMC: weighted
        quantiles of :meth:`coefficient_draws`; EP and VB: the Gaussian's
        marginals. Read signs, ratios and whether an interval holds 0: the
        AUC sees the direction only. Dropped columns get zeros."""
        level = check_probability(level, "level")
        if self.kernel is not None:
            raise InputError("GP-kernel scores have no coefficients, so no "
                             "coefficient intervals")
        check_is_fitted(self, "coef_")
        post = self.posterior_
        lower, upper = post.coefficient_intervals(level, self.point)
        raw = post.data.raw_linear
        return pd.DataFrame(
            {"coefficient": self.coef_, "lower": raw(lower)[0],
             "upper": raw(upper)[0]},
            index=pd.Index(self.feature_names(), name="feature"))

    def to_inference_data(self, n_draws: Optional[int] = None,
                          seed: int = 0) -> Any:
        """ArviZ ``InferenceData`` of the fitted posterior, one chain per
        run of ``posteriors_`` (:func:`pac_particles.core.inference_data.to_inference_data`),
        coordinates named by feature for coefficients on the design."""
        check_is_fitted(self)
        # one chain per independent run (a Gaussian fit has one)
        source = self.posteriors_
        names = (self.feature_names(self.kept_columns_)
                 if self.posterior_.space == "primal" else None)
        return to_inference_data(source, n_draws=n_draws, seed=seed,
                                 feature_names=names)
