"""A tiny tuner that reads its prior (``problem.facts.others``), for the transfer study's tests.

It evaluates each source GPU's fastest configurations first (round robin over the sources, fastest
first), then draws at random: enough to tell in a test that the prior reached the tuner and helped.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bat.core.problem import Problem
from bat.core.tuner import Tuner


@dataclass(kw_only=True)
class SourceBestFirst(Tuner):
    """The sources' best configurations first, then random valid configurations."""

    per_source: int = 3
    summary = "test tuner: the prior's best configurations first, then random"
    budget_agnostic = True

    def tune(self, problem: Problem, rng: np.random.Generator) -> None:
        space = problem.space
        names = list(space.names)
        ranked = [data.ok.sort_values("objective_ms").head(self.per_source)
                  for _, data in sorted(problem.facts.others.items())]
        for i in range(self.per_source):
            for frame in ranked:
                if i < len(frame) and not problem.exhausted:
                    config = {p: frame[p].iloc[i].item() if hasattr(frame[p].iloc[i], "item") else frame[p].iloc[i]
                              for p in names}
                    if not problem.is_evaluated(config):
                        problem.evaluate(config)
        total = space.count_valid()
        while not problem.exhausted and problem.stats.evaluated < total:
            for row in space.sample_valid(64, rng):
                config = space.config(row)
                if problem.exhausted:
                    return
                if not problem.is_evaluated(config):
                    problem.evaluate(config)


@dataclass(kw_only=True)
class NeedsPrior(SourceBestFirst):
    """Refuses to run without a prior: a run that gets none fails loudly (the prior must arrive)."""

    def tune(self, problem: Problem, rng: np.random.Generator) -> None:
        if not problem.facts.others:
            raise AssertionError("no prior reached the tuner")
        if problem.facts.gpu in problem.facts.others:
            raise AssertionError("the target's own data reached the tuner")
        super().tune(problem, rng)
