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
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

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
        fit: list[float] = []
        for row in pop:
            if problem.exhausted:
                return
            fit.append(problem.evaluate(space.config(row)).fitness)
        while not problem.exhausted:
            order = np.argsort(fit, kind="stable")
            nxt = [pop[i] for i in order[: self.elite]]
            nxt_fit = [fit[i] for i in order[: self.elite]]
            while len(nxt) < n and not problem.exhausted:
                child = self._breed(problem, pop, fit, rng)
                if child is None:
                    return
                nxt.append(child)
                nxt_fit.append(problem.evaluate(space.config(child)).fitness)
            pop, fit = nxt, nxt_fit

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
