"""Coordinate search on the grid of value indices (as in OptACC).

From a random start and a step of ``initial_step`` indices, a round tries,
for each parameter in turn, the point ``step`` indices above and then below
the current one (the step rounded to a whole number of indices, at least
one; clipped to the parameter's range) and moves at once to any improvement
(first improvement). Candidates that violate a constraint are skipped, never
proposed. The step shrinks by ``shrink`` (x0.75) only after a round without
improvement, down to ``min_step``; two unsuccessful rounds at the minimum
step end the search, which then restarts from a random configuration not
evaluated yet, with the initial step, while budget remains.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from bat.core.hyperparams import HyperParam
from bat.core.problem import Problem
from bat.core.tuner import Tuner
from bat.tuner_adapters.reference.steps import random_unevaluated


@dataclass(kw_only=True)
class CoordinateSearch(Tuner):
    """Coordinate search with a shrinking step, restarted when it stops."""

    initial_step: float = 4.0
    shrink: float = 0.75
    min_step: float = 1.0
    #: one (step, improved) pair per finished round, for inspection
    rounds: list[tuple[float, bool]] = field(default_factory=list, init=False, repr=False)
    summary = "coordinate search: +-step per parameter, step x0.75 after a round without improvement, restarts"
    budget_agnostic = True  # never reads the budget
    HYPERPARAMETERS = (
        HyperParam("initial_step", "float", 4.0, 2.0, 16.0, log=True, doc="first step, in value indices"),
        HyperParam("shrink", "float", 0.75, 0.3, 0.95, doc="step factor after a round without improvement"),
        HyperParam("min_step", "float", 1.0, 1.0, 2.0, doc="smallest step before a restart"),
    )

    def __post_init__(self) -> None:
        if self.min_step < 1:
            raise ValueError(f"min_step must be >= 1 index, got {self.min_step}")
        if self.initial_step < self.min_step:
            raise ValueError(f"initial_step ({self.initial_step}) must be >= min_step ({self.min_step})")
        if not 0 < self.shrink < 1:
            raise ValueError(f"shrink must be in (0, 1), got {self.shrink}")

    def tune(self, problem: Problem, rng: np.random.Generator) -> None:
        self.rounds = []
        while not problem.exhausted:
            start = random_unevaluated(problem, rng)
            if start is None:
                return
            self._search(problem, start)

    def _search(self, problem: Problem, x: np.ndarray) -> None:
        space = problem.space
        fx = problem.evaluate(space.config(x)).fitness
        step, failures_at_min = self.initial_step, 0
        while not problem.exhausted and failures_at_min < 2:
            improved = False
            for d in np.flatnonzero(space.radices > 1):
                for sign in (1, -1):
                    if problem.exhausted:
                        return
                    y = x.copy()
                    y[d] = np.clip(x[d] + sign * max(1, round(step)), 0, space.radices[d] - 1)
                    if y[d] == x[d] or not space.is_valid(y[None, :])[0]:
                        continue
                    fy = problem.evaluate(space.config(y)).fitness
                    if fy < fx:
                        x, fx, improved = y, fy, True
            self.rounds.append((step, improved))
            if improved:
                continue
            if step > self.min_step:
                step = max(self.min_step, step * self.shrink)
            else:
                failures_at_min += 1
