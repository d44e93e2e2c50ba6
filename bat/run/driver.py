"""The run driver: one tuner on one target, wired end to end (problem -> tuner -> trace).

``run_tuner`` is what ``bat run`` and ``bat compare`` call: given a target
(bat.run.targets), it builds the Problem with a trace recorder attached, runs the
tuner with a seeded generator, and returns the run's summary.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from bat.core.problem import Budget, EvalResult, Problem
from bat.core.trace import TraceRecorder
from bat.core.tuner import Tuner
from bat.registry import make_tuner
from bat.run.targets import Target


@dataclass
class RunResult:
    """What one tuner run found, and what it cost."""

    tuner: str
    seed: int
    benchmark: str
    gpu: str
    backend: str
    backend_description: str
    best: EvalResult | None
    best_known_ms: float | None
    evaluated: int
    rejected: int
    repeated: int
    failed: int
    tuner_s: float
    cost_s: float
    wall_s: float
    trace: pd.DataFrame
    trace_meta: dict[str, Any]
    trace_path: Path | None = None

    @property
    def ratio_to_best_known(self) -> float | None:
        """best known / best found, in (0, 1]; None without either."""
        if self.best is None or self.best_known_ms is None or self.best.objective_ms is None:
            return None
        return self.best_known_ms / self.best.objective_ms

    @property
    def invalid_rate(self) -> float:
        proposals = self.evaluated + self.rejected + self.repeated
        return self.rejected / proposals if proposals else 0.0


def run_tuner(
    tuner: str | Tuner,
    target: Target,
    *,
    budget: Budget,
    seed: int = 0,
    out: str | Path | None = None,
    progress: Callable[[float], None] | None = None,
    tuner_name: str | None = None,
) -> RunResult:
    """Run ``tuner`` on ``target`` under ``budget`` with ``seed``; write the trace to ``out``."""
    name = tuner_name or (tuner if isinstance(tuner, str) else type(tuner).__name__)
    tuner_obj = make_tuner(tuner) if isinstance(tuner, str) else tuner
    meta = {
        "tuner": name,
        "seed": seed,
        "benchmark": target.benchmark,
        "gpu": target.gpu,
        "backend": target.backend.name,
        "budget_evals": budget.max_evals,
        "budget_time_s": budget.max_time_s,
        "best_known_ms": target.best_known_ms,
        "space_hash": target.space.space_hash,
    }
    recorder = TraceRecorder(target.space.names, meta)
    observers: list[Any] = [recorder]
    if progress is not None:
        observers.append(_ProgressObserver(budget, progress))
    problem = Problem(space=target.space, backend=target.backend, budget=budget, observers=observers,
                      facts=target.facts)
    rng = np.random.default_rng(seed)
    start = time.perf_counter()
    problem.start_clock()
    tuner_obj.tune(problem, rng)
    wall = time.perf_counter() - start
    s = problem.stats
    meta.update(evaluated=s.evaluated, rejected=s.rejected, repeated=s.repeated, failed=s.failed,
                tuner_s=s.tuner_s, cost_s=s.cost_s, wall_s=wall)
    if report := tuner_obj.run_report():
        meta["tuner_report"] = report
    recorder.meta.update(meta)  # the saved trace carries the end-of-run counts too
    result = RunResult(
        tuner=name, seed=seed, benchmark=target.benchmark, gpu=target.gpu,
        backend=target.backend.name, backend_description=target.backend.describe(),
        best=problem.best, best_known_ms=target.best_known_ms,
        evaluated=s.evaluated, rejected=s.rejected, repeated=s.repeated, failed=s.failed,
        tuner_s=s.tuner_s, cost_s=s.cost_s, wall_s=wall,
        trace=recorder.frame(), trace_meta=meta,
    )
    if out is not None:
        result.trace_path = recorder.save(out)
    return result


class _ProgressObserver:
    def __init__(self, budget: Budget, callback: Callable[[float], None]) -> None:
        self.budget, self.callback = budget, callback
        self.evaluated = 0

    def on_result(self, event: Any) -> None:
        if event.charged:
            self.evaluated += 1
            self.callback(self.budget.progress(self.evaluated, event.elapsed_cost_s))
