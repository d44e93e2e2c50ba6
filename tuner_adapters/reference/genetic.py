"""Genetic algorithm on value-index vectors, with valid offspring only.

A population of ``population`` distinct valid configurations evolves by
generations: the ``elite`` best survive unchanged; every other member of the
next generation is a child of two parents chosen by tournament selection
(the fitter of ``tournament`` random members), made by uniform crossover
(with probability ``crossover_rate``, otherwise a copy of the first parent)
and mutation (each parameter, with probability ``mutation_rate``, moves to a
random other value). A child that violates a constraint or was evaluated
already is bred again, up to ``max_tries`` times; after that a random valid,
not yet evaluated configuration takes its place (counted in
``immigrants``). So every child sent to the problem is valid and new.

A generation is one batch (``proposes_batches``): its children are bred from
the last generation, so up to ``problem.slots`` of them are measured at once
on a simulated machine with parallel compile workers (bat.core.batches); with
one worker and one device the run is the sequential one.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bat.core.batches import keep_full
from bat.core.hyperparams import HyperParam
from bat.core.problem import Problem
from bat.core.tuner import Tuner
from bat.tuner_adapters.reference.steps import random_unevaluated


@dataclass(kw_only=True)
class GeneticAlgorithm(Tuner):
    """Elitist genetic algorithm: tournament selection, uniform crossover, rare mutation."""

    population: int = 20
    elite: int = 2
    tournament: int = 2
    crossover_rate: float = 0.9
    mutation_rate: float = 0.1
    max_tries: int = 20
    #: children replaced by random configurations because breeding found no valid new one
    immigrants: int = field(default=0, init=False)
    summary = "genetic algorithm: tournament selection, uniform crossover, rare mutation, valid offspring only"
    budget_agnostic = True  # population and generations do not depend on the budget
    proposes_batches = True  # a generation's members are bred from the last one: measured as one batch
    HYPERPARAMETERS = (
        HyperParam("population", "int", 20, 6, 64, log=True, doc="individuals per generation"),
        HyperParam("elite", "int", 2, 0, 4, doc="best individuals kept unchanged"),
        HyperParam("tournament", "int", 2, 1, 6, doc="tournament size of the selection"),
        HyperParam("crossover_rate", "float", 0.9, 0.0, 1.0, doc="chance that two parents cross"),
        HyperParam("mutation_rate", "float", 0.1, 0.0, 0.5, doc="chance that a gene mutates"),
        HyperParam("max_tries", "int", 20, 1, 100, log=True, doc="breeding tries for a valid new child"),
    )

    def __post_init__(self) -> None:
        if self.population < 2:
            raise ValueError(f"population must be >= 2, got {self.population}")
        if not 0 <= self.elite < self.population:
            raise ValueError(f"elite must be in [0, population), got {self.elite}")
        if self.tournament < 1:
            raise ValueError(f"tournament must be >= 1, got {self.tournament}")
        for name in ("crossover_rate", "mutation_rate"):
            if not 0 <= getattr(self, name) <= 1:
                raise ValueError(f"{name} must be in [0, 1], got {getattr(self, name)}")
        if self.max_tries < 1:
            raise ValueError(f"max_tries must be >= 1, got {self.max_tries}")

    def tune(self, problem: Problem, rng: np.random.Generator) -> None:
        space = problem.space
        self.immigrants = 0
        n = min(self.population, space.count_valid())
        pop = list(space.sample_valid(n, rng))
        fit = self._measure(problem, iter(pop))
        while not problem.exhausted and len(fit) == len(pop):
            order = np.argsort(fit, kind="stable")
            elite = [pop[i] for i in order[: self.elite]]
            children: list[np.ndarray] = []
            fit = [fit[i] for i in order[: self.elite]] + self._measure(
                problem, self._children(problem, pop, fit, n - len(elite), children, rng))
            if len(children) < n - len(elite):  # the whole space is evaluated: nothing new to breed
                return
            pop = elite + children

    def _measure(self, problem: Problem, rows: Iterator[np.ndarray]) -> list[float]:
        """The fitness of each row, in order, the rows measured up to ``problem.slots`` at once (a generation
        is one batch: its members are bred from the last one); short when the budget ran out."""
        space = problem.space
        sent: list[tuple] = []
        found: dict[tuple, float] = {}

        def configs() -> Iterator[Mapping[str, Any]]:
            for row in rows:
                config = space.config(row)
                sent.append(problem.key(config))
                yield config

        keep_full(problem, configs(), lambda a: found.__setitem__(problem.key(a.result.config), a.result.fitness))
        return [found[k] for k in sent if k in found]

    def _children(self, problem: Problem, pop: list[np.ndarray], fit: list[float], count: int,
                  out: list[np.ndarray], rng: np.random.Generator) -> Iterator[np.ndarray]:
        """Up to ``count`` children, each bred when the problem asks for it (so the ones sent before
        count as evaluated), kept in ``out``; fewer when the whole space is evaluated."""
        for _ in range(count):
            child = self._breed(problem, pop, fit, rng)
            if child is None:
                return
            out.append(child)
            yield child

    def _select(self, fit: list[float], rng: np.random.Generator) -> int:
        picks = rng.integers(0, len(fit), size=self.tournament)
        return int(min(picks, key=lambda i: fit[i]))

    def _breed(self, problem: Problem, pop: list[np.ndarray], fit: list[float],
               rng: np.random.Generator) -> np.ndarray | None:
        """A valid child not evaluated yet (None when the whole space is evaluated)."""
        space = problem.space
        radices = space.radices
        for _ in range(self.max_tries):
            a, b = pop[self._select(fit, rng)], pop[self._select(fit, rng)]
            child = np.where(rng.random(len(a)) < 0.5, a, b) if rng.random() < self.crossover_rate else a.copy()
            mutate = (rng.random(len(child)) < self.mutation_rate) & (radices > 1)
            shift = rng.integers(1, np.maximum(radices, 2))
            child = np.where(mutate, (child + shift) % radices, child)
            if space.is_valid(child[None, :])[0] and not problem.is_evaluated(space.config(child)):
                return child
        self.immigrants += 1
        return random_unevaluated(problem, rng)
