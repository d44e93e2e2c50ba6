"""Grid search: every valid configuration, exhaustively, in flat-id order."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bat.core.batches import keep_full
from bat.core.hyperparams import HyperParam
from bat.core.problem import Problem
from bat.core.tuner import Tuner


@dataclass(kw_only=True)
class GridSearch(Tuner):
    """Evaluates the valid configurations in flat-id order until the budget is spent.

    The order is the space's mixed-radix order: parameters in the space's order,
    the last parameter fastest, each through its values as listed. The seed has
    no effect (the order is fixed). Its proposals never depend on results, so it
    keeps every slot of the simulated machine busy (``proposes_batches``,
    bat.core.batches).
    """

    chunk: int = 1 << 16
    summary = "exhaustive search of the valid configurations in flat-id order (last parameter fastest)"
    budget_agnostic = True  # enumerates in id order whatever the budget
    proposes_batches = True
    HYPERPARAMETERS = (HyperParam("chunk", "int", 1 << 16, 1, 1 << 20, log=True,
                                  doc="configurations listed at a time (no effect on the order)"),)

    def __post_init__(self) -> None:
        if self.chunk < 1:
            raise ValueError(f"chunk must be >= 1, got {self.chunk}")

    def tune(self, problem: Problem, rng: np.random.Generator) -> None:
        space = problem.space
        keep_full(problem, (space.config(row) for rows in space.iter_valid(self.chunk) for row in rows))
