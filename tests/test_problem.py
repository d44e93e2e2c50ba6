"""The Problem's rules: constraint violations never reach the backend, repeats are free,
the budget is exact, and the replay backend answers recorded data (missing as missing)."""

from __future__ import annotations

import itertools

import pytest

from bat.backends.replay import ReplayBackend
from bat.core.dataset import Dataset, DatasetMeta, Status, make_frame
from bat.core.errors import BudgetExhaustedError, ProblemClosedError, TunerError
from bat.core.problem import Budget, Problem
from bat.core.spacefile import space_from_dict
from bat.core.trace import TRACE_COLUMNS, TraceRecorder, read_trace

SPACE = {
    "name": "toy",
    "description": "toy space",
    "parameters": [{"name": "x", "values": [1, 2, 4, 8]}, {"name": "y", "values": [1, 2, 4, 8]}],
    "constraints": [{"expr": "x * y <= 16", "why": "test"}],
    "problem_size": {},
}


def _dataset(space, drop=()):
    rows = []
    for x, y in itertools.product([1, 2, 4, 8], repeat=2):
        if x * y > 16 or (x, y) in drop:
            continue
        status = "compile_error" if (x, y) == (8, 2) else "ok"
        rows.append({"x": x, "y": y, "status": status,
                     "objective_ms": 100.0 / (x * y) + x if status == "ok" else None,
                     "times_ms": [1.0, 2.0], "compile_ms": 500.0, "benchmark_ms": 1500.0})
    meta = DatasetMeta(benchmark="toy", space_hash=space.space_hash, gpu="TEST")
    return Dataset(frame=make_frame(("x", "y"), rows), meta=meta, parameters=("x", "y"))


class CountingBackend(ReplayBackend):
    """Replay that remembers what it was asked (to prove rejected configs never arrive)."""

    def __init__(self, dataset):
        super().__init__(dataset)
        self.asked = []

    def evaluate(self, config):
        self.asked.append(dict(config))
        return super().evaluate(config)


@pytest.fixture
def space():
    return space_from_dict(SPACE, source="test")


def test_rejected_and_repeated_are_free(space):
    backend = CountingBackend(_dataset(space))
    rec = TraceRecorder(space.names)
    p = Problem(space=space, backend=backend, budget=Budget(max_evals=3), observers=[rec])
    r = p.evaluate({"x": 8, "y": 4})
    assert r.status is Status.CONSTRAINT_VIOLATION
    assert backend.asked == []
    first = p.evaluate({"x": 2, "y": 2})
    again = p.evaluate({"x": 2, "y": 2})
    assert again == first and len(backend.asked) == 1
    assert (p.stats.evaluated, p.stats.rejected, p.stats.repeated) == (1, 1, 1)
    assert p.stats.invalid_rate == pytest.approx(1 / 3)
    frame = rec.frame()
    assert list(frame["kind"]) == ["rejected", "evaluated", "repeat"]
    assert list(frame["charged"]) == [False, True, False]
    assert list(frame.columns) == ["x", "y", *TRACE_COLUMNS]


def test_budget_is_exact_and_enforced(space):
    p = Problem(space=space, backend=ReplayBackend(_dataset(space)), budget=Budget(max_evals=2))
    p.evaluate({"x": 1, "y": 1})
    assert not p.exhausted and p.remaining == 1
    p.evaluate({"x": 8, "y": 2})  # a compile failure still costs budget
    assert p.exhausted and p.stats.failed == 1
    p.evaluate({"x": 1, "y": 1})  # repeats stay free after exhaustion
    with pytest.raises(BudgetExhaustedError):
        p.evaluate({"x": 2, "y": 1})


def test_time_budget_counts_recorded_cost(space):
    p = Problem(space=space, backend=ReplayBackend(_dataset(space)), budget=Budget(max_time_s=4.5))
    for x, y in [(1, 1), (1, 2), (1, 4)]:
        assert not p.exhausted
        p.evaluate({"x": x, "y": y})
    assert p.stats.cost_s == pytest.approx(6.0)  # (500 + 1500) ms each
    assert p.exhausted and p.progress == 1.0


def test_missing_configuration_is_reported_as_missing(space):
    p = Problem(space=space, backend=ReplayBackend(_dataset(space, drop={(2, 4)})), budget=Budget(max_evals=5))
    r = p.evaluate({"x": 2, "y": 4})
    assert r.status is Status.MISSING and r.fitness == float("inf")
    assert p.stats.evaluated == 1 and p.stats.failed == 1
    assert p.best is None


def test_best_and_trace_best_so_far(space, tmp_path):
    rec = TraceRecorder(space.names, {"tuner": "manual", "seed": 0})
    p = Problem(space=space, backend=ReplayBackend(_dataset(space)), budget=Budget(max_evals=4), observers=[rec])
    for x, y in [(1, 1), (4, 4), (2, 2), (1, 8)]:
        p.evaluate({"x": x, "y": y})
    assert p.best.config == {"x": 4, "y": 4}
    frame, meta = read_trace(rec.save(tmp_path / "t.parquet"))
    assert list(frame["best_so_far_ms"]) == [101.0, 10.25, 10.25, 10.25]
    assert meta == {"tuner": "manual", "seed": 0}


def test_proposals_outside_the_space_are_tuner_errors(space):
    p = Problem(space=space, backend=ReplayBackend(_dataset(space)), budget=Budget(max_evals=2))
    with pytest.raises(TunerError, match="value 3 of x"):
        p.evaluate({"x": 3, "y": 1})
    with pytest.raises(TunerError, match="parameters"):
        p.evaluate({"x": 1})


def test_budget_needs_a_limit():
    with pytest.raises(ValueError):
        Budget()
    with pytest.raises(ValueError):
        Budget(max_evals=0)


def test_profiled_rerun_costs_time_not_budget(space):
    rec = TraceRecorder(space.names)
    p = Problem(space=space, backend=ReplayBackend(_dataset(space)), budget=Budget(max_evals=3), observers=[rec])
    p.evaluate({"x": 1, "y": 1})
    p.evaluate({"x": 1, "y": 1}, profiled=True)  # first profile of a config timed without counters
    p.evaluate({"x": 1, "y": 1}, profiled=True)  # already profiled: a free repeat
    assert p.stats.evaluated == 1 and p.stats.profiles == 1 and p.stats.repeated == 1
    assert p.stats.cost_s == pytest.approx(4.0)
    frame = rec.frame()
    assert list(frame["kind"]) == ["evaluated", "profile", "repeat"]
    assert list(frame["profiled"]) == [False, True, True]
    assert list(frame["cost_s"]) == [2.0, 2.0, 0.0]


def test_a_closed_problem_refuses_every_proposal_and_counts_it(space):
    backend = CountingBackend(_dataset(space))
    rec = TraceRecorder(space.names)
    p = Problem(space=space, backend=backend, budget=Budget(max_evals=5), observers=[rec])
    p.evaluate({"x": 1, "y": 1})
    p.close()
    assert p.closed
    for config in ({"x": 2, "y": 2}, {"x": 1, "y": 1}, {"x": 8, "y": 4}):  # fresh, repeat, rejected alike
        with pytest.raises(ProblemClosedError, match="after the tuner's tune"):
            p.evaluate(config)
    assert p.stats.after_close == 3
    assert backend.asked == [{"x": 1, "y": 1}] and len(rec.frame()) == 1
    assert (p.stats.evaluated, p.stats.repeated, p.stats.rejected) == (1, 0, 0)


def test_a_borrowed_configuration_is_copied_wherever_it_is_kept(space):
    """The replay backend copies each configuration into its result, so the Problem hands it the tuner's own
    (``copies_config``): the result, a rejected proposal's and a refused one's, never share the tuner's dict."""
    p = Problem(space=space, backend=ReplayBackend(_dataset(space)), budget=Budget(max_evals=1))
    valid, invalid, more = space.configs(space.encode([{"x": 1, "y": 2}, {"x": 8, "y": 4}, {"x": 2, "y": 2}]))
    assert p.evaluate(valid).config == {"x": 1, "y": 2}
    valid["x"] = 4  # the tuner changes its dict afterwards
    assert p.best is not None and p.best.config == {"x": 1, "y": 2} and type(p.best.config) is dict
    rejected = p.answer(invalid)
    assert rejected.kind == "rejected" and rejected.result.config is not invalid
    refused = p.answer(more)
    assert refused.kind == "refused" and refused.result.config == more and refused.result.config is not more


def test_tell_is_answer_heard_by_the_observers_alone(space):
    """``tell`` makes the trace ``answer`` makes, and says False where ``answer`` is refused."""
    proposals = [{"x": 1, "y": 2}, {"x": 8, "y": 4}, {"x": 1, "y": 2}, {"x": 2, "y": 2}, {"x": 4, "y": 4}]
    traces = []
    for told in (False, True):
        rec = TraceRecorder(space.names)
        p = Problem(space=space, backend=ReplayBackend(_dataset(space)), budget=Budget(max_evals=2),
                    observers=[rec], tuner_charge_s=0.5)
        made = [p.tell(c) if told else p.answer(c).kind != "refused" for c in proposals]
        assert made == [True, True, True, True, False]
        traces.append(rec.frame())
    assert traces[0].equals(traces[1]) and len(traces[0]) == 4
