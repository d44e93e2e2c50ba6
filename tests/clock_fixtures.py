"""A small space whose configurations cost different compile, verification and measuring times, and a
helper that runs a tuner on it on a given simulated machine (tests of the clock and of timeouts).

A test module takes them as fixtures: ``space = pytest.fixture(name="space")(clock_space)``.
"""

from __future__ import annotations

import functools
import itertools

import numpy as np

from bat.backends.replay import ReplayBackend
from bat.core.dataset import Dataset, DatasetMeta, make_frame
from bat.core.problem import Budget, Problem
from bat.core.schedule import Parallelism
from bat.core.space import SearchSpace
from bat.core.spacefile import space_from_dict
from bat.core.trace import TraceRecorder
from bat.registry import make_tuner

SPACE = {
    "name": "clock",
    "description": "a space whose configurations cost different compile, verification and measuring times",
    "parameters": [{"name": "x", "values": list(range(1, 9))}, {"name": "y", "values": list(range(1, 9))}],
    "constraints": [{"expr": "x + y <= 14", "why": "test"}],
    "problem_size": {},
}


@functools.cache
def clock_space() -> SearchSpace:
    return space_from_dict(SPACE, source="test")


@functools.cache
def clock_dataset() -> Dataset:
    space = clock_space()
    rows = []
    for x, y in itertools.product(range(1, 9), repeat=2):
        if x + y > 14:
            continue
        failed = (x * y) % 9 == 0
        objective = 1.0 + ((x * 7 + y * 3) % 13) / 3
        rows.append({"x": x, "y": y, "status": "compile_error" if failed else "ok",
                     "objective_ms": None if failed else objective,
                     "times_ms": [] if failed else [0.8 * objective, 1.2 * objective],
                     "compile_ms": 300.0 + 97.0 * ((x * y) % 7),
                     "benchmark_ms": 40.0 + 31.0 * ((x + 2 * y) % 5), "verify_ms": 10.0 + x})
    meta = DatasetMeta(benchmark="clock", space_hash=space.space_hash, gpu="TEST")
    return Dataset(frame=make_frame(("x", "y"), rows), meta=meta, parameters=("x", "y"))


def run(space, dataset, tuner: str, par: Parallelism, budget: Budget | None = None):
    rec, made = TraceRecorder(space.names), make_tuner(tuner)
    problem = Problem(space=space, backend=ReplayBackend(dataset), budget=budget or Budget(max_evals=30),
                      observers=[rec], tuner_charge_s=0.0, parallelism=par, runs_ahead=made.runs_ahead)
    made.tune(problem, np.random.default_rng(3))
    return problem, rec.frame()


def running_sum(costs) -> list[float]:
    out, total = [], 0.0
    for c in costs:
        total += c  # the sequential replay's clock: stats.cost_s += each charge
        out.append(total)
    return out
