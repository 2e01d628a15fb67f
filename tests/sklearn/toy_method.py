"""A method in one file and one registration line: the difference of the
class means as a narrow Gaussian posterior (a toy, for the registry's test).
"""

import dataclasses

import numpy as np

from pac_particles.core.posterior_result import GaussianPosterior
from pac_particles.sklearn.methods import Method, MethodFit, register

TOY_NAME = "mean_difference"


@dataclasses.dataclass
class MeanDifferenceResult(GaussianPosterior):
    mean: np.ndarray
    cov: np.ndarray
    data: object
    lam: float

    @property
    def log_evidence(self):
        return float("nan")


class MeanDifference(Method):
    name = TOY_NAME
    summary = "the difference of the class means (a toy)"

    def refusal(self, options, task="ranking", in_memory=True):
        why = super().refusal(options, task, in_memory)
        if why is None and options.choose_lam:
            why = f"method={self.name!r} takes a float lam"
        return why

    def fit_ranking(self, problem, options, X):
        data = problem.data
        mean = data.X[data.y].mean(axis=0) - data.X[~data.y].mean(axis=0)
        post = MeanDifferenceResult(mean, 1e-4 * np.eye(data.d), data,
                                    problem.lam)
        return MethodFit(posterior=post, lam=problem.lam_pn,
                         hyperparameters=options.hyper)


register(MeanDifference())
