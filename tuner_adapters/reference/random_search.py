"""Random search: uniform over the valid configurations, without replacement."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from bat.core.batches import keep_full
from bat.core.hyperparams import HyperParam
from bat.core.problem import Config, Problem
from bat.core.timeouts import check_factor
from bat.core.tuner import ExpectedFailure, Tuner


@dataclass(kw_only=True)
class RandomSearch(Tuner):
    """Draws valid configurations uniformly without replacement until the budget is spent.

    Draws of ``batch`` distinct configurations follow each other, whatever the
    budget, and configurations already evaluated are skipped (never proposed
    again): a run with budget k evaluates exactly the first k configurations
    of a longer run with the same seed (budget-agnostic). Its proposals never
    depend on results, so it keeps every slot of the simulated machine busy
    (``proposes_batches``, bat.core.batches). With ``timeout_factor`` F it
    stops measuring a configuration past F x the best time so far (the
    ``reference:random-timeout`` variant: F = 2), saving the time of slow ones.
    """

    batch: int = 256
    timeout_factor: float = 0.0
    summary = "uniform random sampling of valid configurations, without replacement"
    budget_agnostic = True  # the draws never depend on the budget
    proposes_batches = True
    HYPERPARAMETERS = (HyperParam("batch", "int", 256, 1, 1 << 16, log=True, doc="configurations per draw"),)

    @classmethod
    def hyperparameters(cls, variant: Mapping[str, Any]) -> tuple[HyperParam, ...]:
        """The draw size and the timeout factor (its default the variant's: 2 for random-timeout)."""
        factor = HyperParam("timeout_factor", "choice", variant.get("timeout_factor", 0.0),
                            choices=(0.0, 1.25, 1.5, 2.0, 3.0, 5.0),
                            doc="stop measuring a configuration past this factor x the best so far "
                                "(0: never; bat.core.timeouts)")
        return (*cls.HYPERPARAMETERS, factor)

    def __post_init__(self) -> None:
        if self.batch < 1:
            raise ValueError(f"batch must be >= 1, got {self.batch}")
        if self.timeout_factor != 0.0:
            check_factor(self.timeout_factor)

    @property
    def battery_expected_failures(self) -> dict[str, ExpectedFailure]:  # type: ignore[override]  # a class flag of Tuner, per instance here (its options)
        """With timeouts, slow configurations cost less than their recorded time: a time budget buys more."""
        if not self.timeout_factor:
            return {}
        return {"time_budget": ExpectedFailure(AssertionError, "timeouts cut slow measurements short, so a "
                                               "simulated-time budget affords more evaluations than at full cost")}

    def tune(self, problem: Problem, rng: np.random.Generator) -> None:
        keep_full(problem, self._fresh(problem, rng), timeout_factor=self.timeout_factor or None)

    def _fresh(self, problem: Problem, rng: np.random.Generator) -> Iterator[Config]:
        """Valid configurations not proposed yet, ``batch`` drawn at a time, until every one has been."""
        space = problem.space
        total = space.count_valid()
        evaluated = problem.is_evaluated_id
        while problem.stats.evaluated < total:
            rows = space.sample_valid(min(self.batch, total), rng)
            fresh = [not evaluated(flat) for flat in space.to_ids(rows).tolist()]  # distinct rows: checked at once
            if any(fresh):
                yield from space.configs(rows[fresh])
