"""The tuner battery's runs: which synthetic space under which budget, wired as ``bat run`` wires a tuner.

Shared by the battery (bat.testing.tuner_battery) and the second process of
its cross-process check (bat.testing.other_process), which makes the same
runs with another hash seed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from bat.core.problem import Budget, Problem, ProblemStats
from bat.core.schedule import SEQUENTIAL, Parallelism
from bat.core.space import SearchSpace
from bat.core.trace import TraceRecorder
from bat.core.tuner import Tuner
from bat.testing.synthetic import (
    FAKE_COST_S,
    FakeBackend,
    constrained_space,
    synthetic_dataset,
    synthetic_facts,
    tiny_space,
    typed_space,
)

#: evaluations asked for in the budget checks (the synthetic space has 456 valid configurations)
BUDGET = 15
#: evaluations that the time budget affords
TIME_EVALS = 6
#: a tuner that answers more proposals than this in one run is taken to loop forever
MAX_PROPOSALS = 5000

#: the battery's runs: space, budget
RUNS: dict[str, tuple[Callable[[], SearchSpace], Budget]] = {
    "main": (constrained_space, Budget(max_evals=BUDGET)),
    "timed": (constrained_space, Budget(max_time_s=FAKE_COST_S * TIME_EVALS)),
    "small": (tiny_space, Budget(max_evals=4 * 6)),
    "types": (typed_space, Budget(max_evals=BUDGET)),
    "prefix": (constrained_space, Budget(max_evals=BUDGET // 3)),  # budget_agnostic: a prefix of "main"
    "parallel": (constrained_space, Budget(max_evals=BUDGET)),  # on PARALLEL's simulated machine
}
#: the simulated machine of the ``parallel`` run (every other run: one compile worker, one device)
PARALLEL = Parallelism(compile_workers=4, devices=2)
#: the runs the second process repeats (``cross_process``) and that ``proposal_waste`` counts
COMPARED = ("main", "types")


class _ProposalCap:
    """Observer that stops a run whose tuner keeps proposing without end."""

    def __init__(self) -> None:
        self.count = 0

    def on_result(self, event: object) -> None:
        self.count += 1
        if self.count > MAX_PROPOSALS:
            raise AssertionError(f"the tuner made more than {MAX_PROPOSALS} proposals; "
                                 "it does not stop when nothing new is left to evaluate")


@dataclass
class Run:
    """One battery run: the space, the backend (with its record of calls), the counts, the trace."""

    space: SearchSpace
    backend: FakeBackend
    stats: ProblemStats
    trace: pd.DataFrame


def execute(name: str, tuner: Tuner, seed: int) -> Run:
    """Run ``RUNS[name]`` with ``tuner``, wired as ``bat.run.driver.run_tuner`` wires it, plus a cap on proposals."""
    space_fn, budget = RUNS[name]
    space, backend = space_fn(), FakeBackend()
    recorder = TraceRecorder(space.names)
    problem = Problem(space=space, backend=backend, budget=budget, observers=[recorder, _ProposalCap()],
                      facts=synthetic_facts(space), parallelism=PARALLEL if name == "parallel" else SEQUENTIAL,
                      runs_ahead=tuner.runs_ahead)
    if tuner.oracle:
        problem.answer_key = synthetic_dataset(space)
    problem.start_clock()
    try:
        tuner.tune(problem, np.random.default_rng(seed))
    finally:
        problem.close()  # as the driver does: nothing after tune() reaches the backend
    return Run(space, backend, problem.stats, recorder.frame())
