"""The Problem on the simulated clock: K compile workers and G devices, batches, repeats in flight."""

from __future__ import annotations

import json

import numpy as np
import pytest
from clock_fixtures import clock_dataset, clock_space, run, running_sum

from bat.backends.replay import ReplayBackend
from bat.core.batches import keep_full
from bat.core.costs import recorded_costs
from bat.core.errors import TunerError
from bat.core.problem import Budget, Problem
from bat.core.schedule import Parallelism
from bat.core.trace import TraceRecorder

space = pytest.fixture(name="space")(clock_space)
dataset = pytest.fixture(name="dataset")(clock_dataset)


def test_costs_in_parts_and_a_compile_failure_costs_its_compile_time(dataset) -> None:
    costs = recorded_costs(dataset.frame)
    assert np.allclose(costs.compile_s + costs.verify_s + costs.measure_s, costs.cost_s)
    failed = (dataset.frame["status"] == "compile_error").to_numpy()
    assert failed.any() and costs.compile_failures == failed.sum()
    assert np.array_equal(costs.cost_s[failed], dataset.frame["compile_ms"].to_numpy()[failed] / 1000)
    assert "failed to compile are charged their compile time alone" in costs.describe()


def test_the_trace_carries_each_charge_in_its_parts(space, dataset) -> None:
    _, trace = run(space, dataset, "reference:random", Parallelism(4, 1))
    costs = recorded_costs(dataset.frame)
    row = {(x, y): i for i, (x, y) in enumerate(dataset.frame[["x", "y"]].itertuples(index=False))}
    charged = trace[trace["charged"]]
    at = [row[x, y] for x, y in charged[["x", "y"]].itertuples(index=False)]
    assert np.allclose(charged["compile_s"], costs.compile_s[at])
    assert np.allclose(charged["verify_s"], costs.verify_s[at])
    assert np.allclose(charged["cost_s"] - charged["compile_s"] - charged["verify_s"], costs.measure_s[at])
    assert (charged["compile_s"] > 0).all() and (charged["verify_s"][charged["status"] == "ok"] > 0).all()
    assert (trace.loc[~trace["charged"], ["compile_s", "verify_s"]] == 0).all().all()


@pytest.mark.parametrize("tuner", ["reference:random", "reference:grid", "reference:genetic"])
def test_one_worker_one_device_is_the_sequential_clock_exactly(space, dataset, tuner) -> None:
    problem, trace = run(space, dataset, tuner, Parallelism(1, 1))
    assert trace["elapsed_cost_s"].tolist() == running_sum(trace["cost_s"])
    assert problem.stats.clock_s == problem.stats.cost_s


def test_batch_random_search_overlaps_compiles(space, dataset) -> None:
    p1, t1 = run(space, dataset, "reference:random", Parallelism(1, 1))
    p8, t8 = run(space, dataset, "reference:random", Parallelism(8, 1))
    charged = t8[t8["charged"]]
    # the same configurations, answered in another order and sooner
    assert set(map(tuple, t1[t1["charged"]][["x", "y"]].to_numpy())) == set(map(tuple, charged[["x", "y"]].to_numpy()))
    assert p8.stats.cost_s == pytest.approx(p1.stats.cost_s)
    assert p8.stats.clock_s < 0.5 * p1.stats.clock_s
    assert p8.stats.clock_s >= p1.stats.clock_s / 8
    device = sum(r.device_s for r in map(_result(dataset), charged[["x", "y"]].to_dict("records")))
    assert p8.stats.clock_s >= device - 1e-9
    assert (np.diff(t8["elapsed_cost_s"]) >= 0).all()  # answers come in simulated-time order


def _result(dataset):
    backend = ReplayBackend(dataset)
    return backend.evaluate


def test_a_tuner_that_waits_for_each_result_gains_nothing(space, dataset) -> None:
    _, t1 = run(space, dataset, "reference:coordinate", Parallelism(1, 1))
    _, t8 = run(space, dataset, "reference:coordinate", Parallelism(8, 2))
    assert t8["elapsed_cost_s"].tolist() == t1["elapsed_cost_s"].tolist()


def test_time_budget_on_the_parallel_clock(space, dataset) -> None:
    budget = Budget(max_time_s=2.0)
    p1, _ = run(space, dataset, "reference:random", Parallelism(1, 1), budget)
    p8, t8 = run(space, dataset, "reference:random", Parallelism(8, 1), budget)
    assert p8.exhausted and p8.in_flight == 0
    assert p8.stats.evaluated > p1.stats.evaluated  # more configurations in the same simulated time
    # once the clock passed the budget nothing more was proposed: only what was in flight came back after it
    assert 1 <= (t8["elapsed_cost_s"] >= 2.0).sum() <= p8.slots


def test_a_repeat_in_flight_is_answered_with_the_first(space, dataset) -> None:
    rec = TraceRecorder(space.names)
    problem = Problem(space=space, backend=ReplayBackend(dataset), budget=Budget(max_evals=5), observers=[rec],
                      parallelism=Parallelism(4, 1))
    a, b = {"x": 1, "y": 1}, {"x": 2, "y": 1}
    assert problem.submit(a) and problem.submit(a) and problem.submit(b)
    answers = [problem.collect() for _ in range(3)]
    frame = rec.frame()
    kinds = dict(zip(frame["kind"], frame["elapsed_cost_s"], strict=False))
    first = frame[(frame["x"] == 1) & (frame["kind"] == "evaluated")]["elapsed_cost_s"].item()
    assert kinds["repeat"] == first  # never before the configuration's own answer
    assert [a.kind for a in answers].index("repeat") > [a.kind for a in answers].index("evaluated")
    assert problem.stats.evaluated == 2 and problem.stats.repeated == 1


def test_batch_rules(space, dataset) -> None:
    problem = Problem(space=space, backend=ReplayBackend(dataset), budget=Budget(max_evals=5),
                      parallelism=Parallelism(2, 1))
    with pytest.raises(TunerError, match="no proposal in flight"):
        problem.collect()
    assert problem.slots == 2
    problem.submit({"x": 1, "y": 1})
    with pytest.raises(TunerError, match="collect the submitted"):
        problem.evaluate({"x": 2, "y": 2})
    with pytest.raises(TunerError, match="profiled after its answer"):
        problem.submit({"x": 1, "y": 1}, profiled=True)
    problem.submit({"x": 2, "y": 1})
    with pytest.raises(TunerError, match="2 proposals are in flight"):
        problem.submit({"x": 3, "y": 1})


def test_keep_full_stops_at_the_budget(space, dataset) -> None:
    problem = Problem(space=space, backend=ReplayBackend(dataset), budget=Budget(max_evals=4),
                      parallelism=Parallelism(3, 1))
    heard = []
    keep_full(problem, ({"x": x, "y": 1} for x in range(1, 9)), heard.append)
    assert problem.stats.evaluated == 4 and len(heard) == 4 and problem.in_flight == 0


def test_bat_run_on_eight_compile_workers(tmp_path, capsys) -> None:
    from bat.cli import main
    from bat.core.trace import read_trace

    clocks = {}
    for k in (1, 8):
        out = tmp_path / f"k{k}.parquet"
        assert main(["run", "-t", "reference:random", "-b", "pnpoly", "-n", "40", "-s", "1", "--tuner-charge", "0",
                     "--compile-workers", str(k), "-o", str(out), "--json"]) == 0
        doc = json.loads(capsys.readouterr().out)
        trace, meta = read_trace(out)
        assert (doc["compile_workers"], meta["compile_workers"], meta["devices"]) == (k, k, 1)
        assert doc["clock_s"] == meta["clock_s"] == trace["elapsed_cost_s"].max()
        clocks[k] = doc["clock_s"], doc["cost_s"]
    assert clocks[1][0] == clocks[1][1]  # one worker: the clock is the work charged
    assert clocks[8][1] / 8 <= clocks[8][0] < clocks[1][0]


def test_bat_run_refuses_zero_workers(capsys) -> None:
    from bat.cli import main

    assert main(["run", "-t", "reference:random", "-b", "pnpoly", "--compile-workers", "0"]) == 2
    assert "--compile-workers" in capsys.readouterr().err


def test_tpe_with_a_constant_liar_keeps_the_workers_busy(space, dataset) -> None:
    p1, t1 = run(space, dataset, "optuna:tpe-liar", Parallelism(1, 1))
    p8, _ = run(space, dataset, "optuna:tpe-liar", Parallelism(8, 1))
    assert p1.stats.evaluated == p8.stats.evaluated == 30
    assert p8.stats.clock_s < 0.5 * p1.stats.clock_s
    assert t1["elapsed_cost_s"].tolist() == running_sum(t1["cost_s"])
    # plain TPE waits for each result after its start-up trials: tests/test_runs_ahead.py


def test_the_genetic_algorithm_measures_a_generation_at_once(space, dataset) -> None:
    p1, t1 = run(space, dataset, "reference:genetic", Parallelism(1, 1))
    p8, t8 = run(space, dataset, "reference:genetic", Parallelism(8, 1))
    one, eight = (sorted(map(tuple, t[t["charged"]][["x", "y"]].to_numpy())) for t in (t1, t8))
    assert one == eight  # the same children (bred from the last generation), answered sooner
    assert p8.stats.clock_s < 0.6 * p1.stats.clock_s
