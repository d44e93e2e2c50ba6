"""Random search: uniform over the valid configurations, without replacement."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from bat.core.batches import keep_full
from bat.core.hyperparams import HyperParam
from bat.core.problem import Config, Problem
from bat.core.tuner import Tuner


@dataclass(kw_only=True)
class RandomSearch(Tuner):
    """Draws valid configurations uniformly without replacement until the budget is spent.

    Draws of ``batch`` distinct configurations follow each other, whatever the
    budget, and configurations already evaluated are skipped (never proposed
    again): a run with budget k evaluates exactly the first k configurations
    of a longer run with the same seed (budget-agnostic). Its proposals never
    depend on results, so it keeps every slot of the simulated machine busy
    (``proposes_batches``, bat.core.batches).
    """

    batch: int = 256
    summary = "uniform random sampling of valid configurations, without replacement"
    budget_agnostic = True  # the draws never depend on the budget
    proposes_batches = True
    HYPERPARAMETERS = (HyperParam("batch", "int", 256, 1, 1 << 16, log=True, doc="configurations per draw"),)

    def __post_init__(self) -> None:
        if self.batch < 1:
            raise ValueError(f"batch must be >= 1, got {self.batch}")

    def tune(self, problem: Problem, rng: np.random.Generator) -> None:
        keep_full(problem, self._fresh(problem, rng))

    def _fresh(self, problem: Problem, rng: np.random.Generator) -> Iterator[Config]:
        """Valid configurations not proposed yet, ``batch`` drawn at a time, until every one has been."""
        space = problem.space
        total = space.count_valid()
        while problem.stats.evaluated < total:
            for row in space.sample_valid(min(self.batch, total), rng):
                config = space.config(row)
                if not problem.is_evaluated(config):
                    yield config
