"""A deliberately bad tuner, for testing comparison gates: it takes what it sees first.

``FirstValidTuner`` evaluates the valid configurations in id order (the
first one it is shown, then the next), ignoring every result and its random
generator. Any reasonable tuner beats it on a space whose good
configurations are not at the start; ``bat compare`` tests use it as the
regression a CI gate must catch.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bat.core.problem import Problem
from bat.core.tuner import Tuner


@dataclass(kw_only=True)
class FirstValidTuner(Tuner):
    """Valid configurations in id order until the budget is spent; no search at all."""

    summary = "test tuner: the first valid configurations in id order, no search"

    def tune(self, problem: Problem, rng: np.random.Generator) -> None:
        space = problem.space
        for rank in range(space.count_valid()):
            if problem.exhausted:
                return
            problem.evaluate(space.config(space.unrank_valid(np.array([rank]))[0]))
