"""Shrinking sample (Li and Agrawal): grids of section medians that narrow down.

Each parameter's ordered values are split into ``k`` contiguous sections; every
combination of the section medians is evaluated (valid ones only, in flat-id
order); for each parameter the section holding the best configuration's value
is kept, split again, and so on while any kept section holds more than
``v_th`` values; the remaining sections are then searched exhaustively.

Choices this implementation makes: a section of m values has as its median
the value at position (m - 1) // 2 (the lower median); "the best
configuration" is the best one evaluated so far inside the current sections;
a round in which no combination was valid and ok goes straight to the
exhaustive search of the current sections; when the procedure has finished
and budget remains, the rest is spent on random search of the configurations
not yet evaluated.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from bat.core.hyperparams import HyperParam
from bat.core.problem import Problem
from bat.core.tuner import Tuner
from bat.tuner_adapters.reference.steps import evaluate_product, random_unevaluated


def sections(values: range | list[int], k: int) -> list[list[int]]:
    """``values`` split into at most ``k`` contiguous, non-empty sections of near-equal size."""
    return [list(map(int, s)) for s in np.array_split(np.asarray(list(values)), min(k, len(values)))]


def median(section: list[int]) -> int:
    return section[(len(section) - 1) // 2]


@dataclass(kw_only=True)
class ShrinkingSample(Tuner):
    """Li and Agrawal's shrinking sample with ``k`` partitions and threshold ``v_th``."""

    k: int = 3
    v_th: int = 2
    #: the median grids evaluated, one list of per-parameter medians per round (for inspection)
    rounds: list[list[list[int]]] = field(default_factory=list, init=False, repr=False)
    summary = "shrinking sample (Li and Agrawal): grids of section medians, narrowing to the best section"
    budget_agnostic = True  # never reads the budget
    HYPERPARAMETERS = (
        HyperParam("k", "int", 3, 2, 6, doc="sections per parameter"),
        HyperParam("v_th", "int", 2, 1, 6, doc="section size below which the search stops shrinking"),
    )

    def __post_init__(self) -> None:
        if self.k < 2:
            raise ValueError(f"k (partitions) must be >= 2, got {self.k}")
        if self.v_th < 1:
            raise ValueError(f"v_th (section size threshold) must be >= 1, got {self.v_th}")

    def tune(self, problem: Problem, rng: np.random.Generator) -> None:
        space = problem.space
        self.rounds = []
        region = [list(range(int(r))) for r in space.radices]
        memory: dict[tuple[int, ...], float] = {}
        while not problem.exhausted and max(len(r) for r in region) > self.v_th:
            parts = [sections(r, self.k) for r in region]
            medians = [[median(s) for s in p] for p in parts]
            self.rounds.append(medians)
            evaluate_product(problem, medians, memory)
            best = _best_in(memory, region)
            if best is None:
                break
            region = [next(s for s in p if int(best[j]) in s) for j, p in enumerate(parts)]
        evaluate_product(problem, region, memory)
        while not problem.exhausted:
            row = random_unevaluated(problem, rng)
            if row is None:
                return
            problem.evaluate(space.config(row))


def _best_in(memory: dict[tuple[int, ...], float], region: list[list[int]]) -> tuple[int, ...] | None:
    """The best ok configuration this run evaluated inside ``region`` (None if there is none)."""
    sets = [set(r) for r in region]
    inside = [(f, key) for key, f in memory.items()
              if np.isfinite(f) and all(v in s for v, s in zip(key, sets, strict=True))]
    return min(inside)[1] if inside else None
