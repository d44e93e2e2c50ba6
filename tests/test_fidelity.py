"""Cheaper measurements (bat.core.fidelity): k of the recorded repeats, charged k/n of the measuring time."""

from __future__ import annotations

import numpy as np
import pytest
from clock_fixtures import clock_dataset, clock_space

from bat.backends.replay import ReplayBackend
from bat.core.dataset import Status
from bat.core.fidelity import FIDELITY_KEY, fewer_repeats
from bat.core.problem import Budget, EvalResult, Problem
from bat.core.schedule import Parallelism
from bat.core.trace import TraceRecorder
from bat.registry import make_tuner
from bat.testing.synthetic import FakeBackend, constrained_space

TIMES = tuple(float(t) for t in range(1, 11))


def result(**kw) -> EvalResult:
    return EvalResult(config={}, status=Status.OK, objective_ms=5.5, times_ms=TIMES, cost_s=3.0, compile_s=1.0,
                      verify_s=1.0, **kw)


def test_k_of_n_repeats_reproducibly_at_k_over_n_of_the_measuring_cost() -> None:
    part = fewer_repeats(result(), 3, seed=7, row=[1, 2])
    assert part is not None and len(part.times_ms) == 3 and set(part.times_ms) <= set(TIMES)
    assert part.objective_ms == pytest.approx(np.mean(part.times_ms))
    assert part.cost_s == pytest.approx(1.0 + 1.0 + 1.0 * 3 / 10) and part.extra[FIDELITY_KEY] == 0.3
    assert fewer_repeats(result(), 3, seed=7, row=[1, 2]) == part  # the same draw, whatever the order
    draws = {fewer_repeats(result(), 3, seed=s, row=[1, 2]).times_ms for s in range(20)}
    assert len(draws) > 1  # another run's seed draws others
    assert fewer_repeats(result(), 10, seed=7, row=[1, 2]) is None  # k >= n: measured in full
    failed = EvalResult(config={}, status=Status.RUNTIME_ERROR, times_ms=TIMES, cost_s=3.0)
    assert fewer_repeats(failed, 3, seed=7, row=[1]) is None


def test_a_partial_measurement_costs_time_but_no_evaluation() -> None:
    space, dataset = clock_space(), clock_dataset()
    rec = TraceRecorder(space.names)
    problem = Problem(space=space, backend=ReplayBackend(dataset), budget=Budget(max_evals=1), observers=[rec],
                      draw_seed=3)
    config = {"x": 1, "y": 1}
    full = ReplayBackend(dataset).evaluate(config)
    part = problem.answer(config, repeats=1)
    assert part.kind == "partial" and not part.charged and part.result.objective_ms in full.times_ms
    assert problem.stats.evaluated == 0 and problem.stats.partial == 1 and not problem.exhausted
    assert problem.stats.clock_s == pytest.approx(full.compile_s + full.verify_s + full.measure_s / 2)
    assert problem.answer(config, repeats=1).kind == "repeat"  # answered from memory, free
    assert problem.answer(config).kind == "evaluated" and problem.exhausted  # in full: the budget's one
    assert problem.answer(config, repeats=1).kind == "repeat"  # measured in full already
    frame = rec.frame()
    assert frame["kind"].tolist() == ["partial", "repeat", "evaluated", "repeat"]
    assert frame["fidelity"].tolist() == [0.5, 0.5, 1.0, 1.0]
    assert frame["cost_s"].iloc[0] == pytest.approx(problem.stats.cost_s - full.cost_s)
    assert not frame["charged"].iloc[0]


def test_without_recorded_data_it_is_measured_in_full() -> None:
    space = constrained_space()
    problem = Problem(space=space, backend=FakeBackend(), budget=Budget(max_evals=3))
    config = space.config(space.sample_valid(1, np.random.default_rng(0))[0])
    with pytest.raises(ValueError, match="repeats"):
        problem.evaluate(config, repeats=0)
    answer = problem.answer(config, repeats=2)
    assert answer.kind == "evaluated" and answer.charged and problem.stats.partial == 0


def test_screened_random_search_measures_in_full_only_the_promising() -> None:
    space, dataset = clock_space(), clock_dataset()
    rec = TraceRecorder(space.names)
    problem = Problem(space=space, backend=ReplayBackend(dataset), budget=Budget(max_evals=8), observers=[rec],
                      tuner_charge_s=0.0)
    make_tuner("reference:random-screen", ["screen_repeats=1", "keep=1.0"]).tune(problem, np.random.default_rng(1))
    frame = rec.frame()
    partial = frame[frame["kind"] == "partial"]
    full = frame[frame["kind"] == "evaluated"]
    assert problem.stats.evaluated == 8 and len(partial) > len(full)
    assert (partial["fidelity"] == 0.5).all() and (full["fidelity"] == 1.0).all()
    best = np.inf
    for _, row in frame.iterrows():  # a configuration went on only when its screen beat the best so far
        if row["kind"] == "partial":
            screened = row["objective_ms"]
        elif row["kind"] == "evaluated":
            if row["status"] == "ok" and np.isfinite(best):
                assert screened <= best
            best = min(best, row["objective_ms"] if row["status"] == "ok" else np.inf)


def test_a_repeat_of_a_partial_measurement_in_flight_waits_for_it() -> None:
    space, dataset = clock_space(), clock_dataset()
    rec = TraceRecorder(space.names)
    problem = Problem(space=space, backend=ReplayBackend(dataset), budget=Budget(max_evals=3), observers=[rec],
                      parallelism=Parallelism(3, 1))
    config = {"x": 2, "y": 1}
    assert problem.submit(config, repeats=1) and problem.submit(config, repeats=1) and problem.submit(config)
    kinds = [problem.collect().kind for _ in range(3)]
    frame = rec.frame()
    assert sorted(kinds) == ["evaluated", "partial", "repeat"]
    assert kinds.index("repeat") > kinds.index("partial")  # never before the measurement it repeats
    partial_at = frame.loc[frame["kind"] == "partial", "elapsed_cost_s"].item()
    assert frame.loc[frame["kind"] == "repeat", "elapsed_cost_s"].item() == partial_at
