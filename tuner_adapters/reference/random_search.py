"""Random search: uniform over the valid configurations, without replacement."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bat.core.hyperparams import HyperParam
from bat.core.problem import Problem
from bat.core.tuner import Tuner


@dataclass(kw_only=True)
class RandomSearch(Tuner):
    """Draws valid configurations uniformly without replacement until the budget is spent.

    Draws of ``batch`` distinct configurations follow each other, whatever the
    budget, and configurations already evaluated are skipped (never proposed
    again): a run with budget k evaluates exactly the first k configurations
    of a longer run with the same seed (budget-agnostic).
    """

    batch: int = 256
    summary = "uniform random sampling of valid configurations, without replacement"
    budget_agnostic = True  # the draws never depend on the budget
    HYPERPARAMETERS = (HyperParam("batch", "int", 256, 1, 1 << 16, log=True, doc="configurations per draw"),)

    def __post_init__(self) -> None:
        if self.batch < 1:
            raise ValueError(f"batch must be >= 1, got {self.batch}")

    def tune(self, problem: Problem, rng: np.random.Generator) -> None:
        space = problem.space
        total = space.count_valid()
        while not problem.exhausted and problem.stats.evaluated < total:
            n = min(self.batch, total)
            for row in space.sample_valid(n, rng):
                config = space.config(row)
                if problem.exhausted:
                    return
                if not problem.is_evaluated(config):
                    problem.evaluate(config)
