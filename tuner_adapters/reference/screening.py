"""Screened random search: a cheap measurement of every configuration, a full one of the promising.

It draws valid configurations uniformly without replacement, as random
search does, measures each with ``screen_repeats`` of its recorded repeats
(bat.core.fidelity: a noisier time at a fraction of the measuring cost,
which uses no evaluation of the budget), and measures it in full only when
that screened time is within ``keep`` x the best full time so far. Slow
configurations then cost their compile time and a few repeats; the budget
counts the full measurements. Where repeats are not recorded, the screen is
a full measurement and the search is plain random search.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from bat.core.hyperparams import HyperParam
from bat.core.problem import Problem
from bat.core.tuner import Tuner


@dataclass(kw_only=True)
class ScreenedRandom(Tuner):
    """Random search that screens each configuration with a few repeats first (see the module docstring)."""

    screen_repeats: int = 2
    keep: float = 1.2
    batch: int = 256
    summary = "random search that screens each configuration with a few recorded repeats, in full if promising"
    HYPERPARAMETERS = (
        HyperParam("screen_repeats", "int", 2, 1, 64, log=True, doc="recorded repeats of the screening measurement"),
        HyperParam("keep", "float", 1.2, 1.0, 4.0, doc="measured in full when screened within this x the best"),
    )
    def __post_init__(self) -> None:
        if self.screen_repeats < 1:
            raise ValueError(f"screen_repeats must be >= 1, got {self.screen_repeats}")
        if not (math.isfinite(self.keep) and self.keep >= 1.0):
            raise ValueError(f"keep must be a finite number >= 1, got {self.keep}")
        if self.batch < 1:
            raise ValueError(f"batch must be >= 1, got {self.batch}")

    def tune(self, problem: Problem, rng: np.random.Generator) -> None:
        space = problem.space
        total = space.count_valid()
        tried: set[tuple] = set()
        best = math.inf
        while len(tried) < total:
            for row in space.sample_valid(min(self.batch, total), rng):
                if problem.exhausted:
                    return
                config = space.config(row)
                key = problem.key(config)
                if key in tried:
                    continue
                tried.add(key)
                screen = problem.answer(config, repeats=self.screen_repeats)
                if screen.kind == "refused":
                    return
                if screen.kind != "partial":  # measured in full already (nothing to draw from)
                    best = min(best, screen.result.fitness)
                elif screen.result.ok and screen.result.fitness <= self.keep * best and not problem.exhausted:
                    best = min(best, problem.evaluate(config).fitness)
