"""Tuners that each break one rule of the battery (module level, so a second process can unpickle them)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bat.core.problem import Problem
from bat.core.tuner import ExpectedFailure, Tuner
from bat.tuner_adapters.reference.random_search import RandomSearch


@dataclass(kw_only=True)
class StopsEarly(Tuner):
    """Returns after a third of the budget (and after half of a small space)."""

    def tune(self, problem: Problem, rng: np.random.Generator) -> None:
        space = problem.space
        n = min((problem.remaining or 6) // 3, space.count_valid() // 2)
        for row in space.sample_valid(n, rng):
            problem.evaluate(space.config(row))


@dataclass(kw_only=True)
class NoConstants(RandomSearch):
    """Random search that scales each parameter to [0, 1] and so divides by zero on a single-valued one."""

    def tune(self, problem: Problem, rng: np.random.Generator) -> None:
        self.steps = [1 / (len(p.values) - 1) for p in problem.space.parameters]
        super().tune(problem, rng)


@dataclass(kw_only=True)
class Repeater(Tuner):
    """Random search that re-proposes its first configuration four times before each new one (80 % waste)."""

    def tune(self, problem: Problem, rng: np.random.Generator) -> None:
        space = problem.space
        rows = space.sample_valid(space.count_valid(), rng)
        first = space.config(rows[0])
        for row in rows:
            if problem.exhausted:
                return
            if problem.is_evaluated(first):
                for _ in range(4):
                    problem.evaluate(first)
            problem.evaluate(space.config(row))


@dataclass(kw_only=True)
class ReadsTheBudget(Tuner):
    """Claims to be budget-agnostic, but draws one sample the size of the remaining budget."""

    budget_agnostic = True

    def tune(self, problem: Problem, rng: np.random.Generator) -> None:
        space = problem.space
        while not problem.exhausted and problem.stats.evaluated < space.count_valid():
            for row in space.sample_valid(min(problem.remaining or 6, space.count_valid()), rng):
                if not problem.exhausted and not problem.is_evaluated(space.config(row)):
                    problem.evaluate(space.config(row))


@dataclass(kw_only=True)
class HashOrdered(RandomSearch):
    """Random search whose first proposal is chosen by a string's hash (which differs between processes)."""

    def tune(self, problem: Problem, rng: np.random.Generator) -> None:
        space = problem.space
        rank = hash("bat battery") % space.count_valid()
        problem.evaluate(space.config(space.unrank_valid(np.array([rank]))[0]))
        super().tune(problem, rng)


@dataclass(kw_only=True)
class DeclaresWrongly(RandomSearch):
    """Random search (passes every check) that declares a failure of full_budget."""

    battery_expected_failures = {"full_budget": ExpectedFailure(AssertionError, "claims it cannot")}  # noqa: RUF012


@dataclass(kw_only=True)
class DeclaresWithAString(RandomSearch):
    """A declaration in the old form: a reason without the exception type."""

    battery_expected_failures = {"full_budget": "claims it cannot"}  # noqa: RUF012


@dataclass(kw_only=True)
class DeclaresTheWrongType(StopsEarly):
    """Fails full_budget with an AssertionError but declares a ValueError."""

    battery_expected_failures = {"full_budget": ExpectedFailure(ValueError, "says it raises ValueError")}  # noqa: RUF012


@dataclass(kw_only=True)
class DeclaresItsEarlyStop(StopsEarly):
    """Stops early and says so, with the exception type the check raises."""

    battery_expected_failures = {  # noqa: RUF012
        "full_budget": ExpectedFailure(AssertionError, "stops after a third of the budget"),
        "small_space": ExpectedFailure(AssertionError, "stops after half of a small space"),
        "time_budget": ExpectedFailure(AssertionError, "stops after a third of the budget"),
        "value_types": ExpectedFailure(AssertionError, "stops after a third of the budget"),
        "parallel": ExpectedFailure(AssertionError, "stops after a third of the budget"),
    }


@dataclass(kw_only=True)
class ClaimsBatches(RandomSearch):
    """Declares that it proposes batches, but evaluates one configuration at a time."""

    proposes_batches = True

    def tune(self, problem: Problem, rng: np.random.Generator) -> None:
        space = problem.space
        for row in space.sample_valid(space.count_valid(), rng):
            if problem.exhausted:
                return
            problem.evaluate(space.config(row))


@dataclass(kw_only=True)
class HiddenBatches(RandomSearch):
    """Random search that keeps evaluations in flight without declaring proposes_batches."""

    proposes_batches = False
