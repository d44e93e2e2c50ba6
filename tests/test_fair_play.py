"""Fair play: a tuner sees only its entitled facts (bat.core.facts); the problem alone applies the budget rule."""

from __future__ import annotations

import numpy as np
import pytest

from bat.core.errors import BudgetExhaustedError, TunerError
from bat.core.facts import TargetFacts
from bat.core.problem import Budget, Problem
from bat.core.tuner import Tuner
from bat.registry import make_tuner
from bat.run.driver import run_tuner
from bat.run.targets import replay_target
from bat.testing.synthetic import FakeBackend, constrained_space


def _problem(evals: int = 2) -> tuple[Problem, FakeBackend]:
    backend = FakeBackend()
    return Problem(space=constrained_space(), backend=backend, budget=Budget(max_evals=evals)), backend


def test_answer_gives_result_kind_and_charge_and_refuses_past_the_budget():
    problem, backend = _problem(2)
    space = problem.space
    rows = space.sample_valid(3, np.random.default_rng(0))
    a = problem.answer(space.config(rows[0]))
    assert (a.kind, a.charged) == ("evaluated", True) and a.result.ok
    assert (problem.answer(space.config(rows[0])).kind, problem.answer(space.config(rows[0])).charged) == \
        ("repeat", False)
    problem.answer(space.config(rows[1]))
    calls = len(backend.calls)
    refused = problem.answer(space.config(rows[2]))
    assert (refused.kind, refused.charged) == ("refused", False) and len(backend.calls) == calls
    with pytest.raises(BudgetExhaustedError):
        problem.evaluate(space.config(rows[2]))
    assert problem.stats.evaluated == 2 and problem.stats.proposals == 4  # a refusal is no proposal answered


def test_a_tuner_sees_no_backend_and_no_measurements():
    target = replay_target("gemm", "RTX_3090")
    seen: list[Problem] = []

    class Peek(Tuner):
        def tune(self, problem: Problem, rng: np.random.Generator) -> None:
            seen.append(problem)
            problem.evaluate(problem.space.config(problem.space.sample_valid(1, rng)[0]))

    run_tuner(Peek(), target, budget=Budget(max_evals=1))
    problem = seen[0]
    assert not hasattr(problem, "backend") and problem.answer_key is None
    assert not hasattr(problem.facts, "dataset") and problem.facts.others == {}
    assert problem.facts.gpu_facts is not None and problem.facts.gpu_facts.compute_units == 82


def test_only_a_declared_oracle_gets_the_answer_key():
    target = replay_target("coulomb")
    keys: list[object] = []

    class Oracle(Tuner):
        oracle = True

        def tune(self, problem: Problem, rng: np.random.Generator) -> None:
            keys.append(problem.answer_key)
            problem.evaluate(problem.space.config(problem.space.sample_valid(1, rng)[0]))

    result = run_tuner(Oracle(), target, budget=Budget(max_evals=1))
    assert keys == [target.dataset] and result.trace_meta["oracle"] is True
    assert make_tuner("profile:exact").oracle and not make_tuner("profile").oracle
    assert make_tuner("reference:random").capabilities()["oracle"] is False


def test_facts_of_other_gpus_never_hold_the_targets_own():
    with pytest.raises(TunerError, match="its own measurements"):
        TargetFacts(gpu="A100", others={"A100": object()})  # type: ignore[dict-item]


def test_the_scalar_validity_check_agrees_with_the_vectorised_one():
    space = constrained_space()
    rows = np.array([[i % len(p.values) for i, p in zip(r, space.parameters, strict=False)]
                     for r in np.random.default_rng(1).integers(0, 50, size=(200, len(space.names)))])
    flags = space.is_valid(rows)
    assert flags.any() and not flags.all()
    assert [space.is_valid_one([int(x) for x in r]) for r in rows] == flags.tolist()
