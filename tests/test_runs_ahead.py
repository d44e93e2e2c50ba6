"""Proposals that run ahead of their results (bat.core.ahead): the clock overlaps their compiles.

A tuner fed one configuration at a time that declares ``runs_ahead`` sees the same results in the
same order; only the clock changes. Checked: the clock against a brute-force schedule and its bounds,
nothing changes on one worker, the overlap for a tuner that declares it and none for one that does
not, and that every declaration is true (the results a tuner says it ignores are perturbed and its
proposals stay the same).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from clock_fixtures import clock_dataset, clock_space, run, running_sum
from hypothesis import given, settings
from hypothesis import strategies as st

from bat.backends.replay import ReplayBackend
from bat.core.ahead import ALWAYS, WAITS, RunsAhead
from bat.core.flight import InFlight
from bat.core.problem import Budget, EvalResult, Problem
from bat.core.schedule import Parallelism
from bat.core.trace import TraceRecorder
from bat.registry import make_tuner

space = pytest.fixture(name="space")(clock_space)
dataset = pytest.fixture(name="dataset")(clock_dataset)


def answered(jobs: list[tuple[float, float]], ignored: list[int], par: Parallelism) -> list[float]:
    """When each job's answer is handed back, jobs proposed one at a time, job i ignoring ``ignored[i]``
    of the latest answers (the path ``Problem.evaluate`` takes)."""
    flight: InFlight[int] = InFlight(par)
    out = []
    for i, ((c, d), a) in enumerate(zip(jobs, ignored, strict=True)):
        flight.add(i, i, measures=True, compile_s=c, device_s=d, total_s=c + d, ahead=a)
        assert flight.take() == i
        out.append(flight.now)
    return out


def brute_force(jobs: list[tuple[int, int]], ignored: list[int], k: int, g: int) -> list[float]:
    """The same model one time unit after another (integer durations).

    Job i is known once the answer of job i - 1 - min(ignored[i], K + G - 2) is handed back (at once
    when there is none) and job i - 1 is known; free workers compile known jobs in order (nothing to
    compile: no worker); free devices measure compiled jobs in the order proposed, each once every job
    before it has compiled; answers are handed back in that order, each once its job is done and the
    one before it handed back.
    """
    n, slots = len(jobs), k + g - 1
    worker_free, device_free = [0] * k, [0] * g
    known, next_device = 0, 0
    waiting: list[int] = []
    compiled: dict[int, int] = {}  # job -> compile end, waiting for a device
    done: dict[int, int] = {}  # job -> finish
    handed: list[float] = []
    t = 0
    while len(handed) < n:
        changed = True
        while changed:
            changed = False
            while known < n and (known - 1 - min(ignored[known], slots - 1) < 0
                                 or known - 1 - min(ignored[known], slots - 1) < len(handed)):
                waiting.append(known)
                known += 1
                changed = True
            for j in list(waiting):
                if jobs[j][0] == 0:
                    end = t
                else:
                    w = next((i for i, free in enumerate(worker_free) if free <= t), None)
                    if w is None:
                        break  # in order: a later job waits for this one's worker
                    end = worker_free[w] = t + jobs[j][0]
                waiting.remove(j)
                compiled[j] = end
                changed = True
            while next_device < n and next_device in compiled and compiled[next_device] <= t:
                j = next_device
                if jobs[j][1] == 0:
                    done[j] = compiled.pop(j)
                else:
                    d = next((i for i, free in enumerate(device_free) if free <= t), None)
                    if d is None:
                        break
                    compiled.pop(j)
                    done[j] = device_free[d] = t + jobs[j][1]
                next_device += 1
                changed = True
            while len(handed) in done and done[len(handed)] <= t:
                handed.append(float(t))
                changed = True
        t += 1
    return handed


jobs_st = st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), min_size=1, max_size=9)


def test_hand_made_one_worker_one_device_changes_nothing() -> None:
    jobs = [(3.0, 1.0), (3.0, 1.0), (3.0, 1.0)]
    assert answered(jobs, [5, 5, 5], Parallelism(1, 1)) == [4.0, 8.0, 12.0]


def test_hand_made_two_workers() -> None:
    # B compiles beside A (0-3) and is measured after it (4-5); C compiles from 4, when A's answer
    # came (it may run one answer ahead), and is measured 7-8
    jobs = [(3.0, 1.0), (3.0, 1.0), (3.0, 1.0)]
    assert answered(jobs, [ALWAYS] * 3, Parallelism(2, 1)) == [4.0, 5.0, 8.0]
    assert answered(jobs, [0, 0, 0], Parallelism(2, 1)) == [4.0, 8.0, 12.0]  # waits for each result


@settings(max_examples=300, deadline=None)
@given(data=st.data(), jobs=jobs_st, k=st.integers(1, 3), g=st.integers(1, 2))
def test_equals_the_brute_force_schedule(data, jobs: list[tuple[int, int]], k: int, g: int) -> None:
    ignored = data.draw(st.lists(st.integers(0, 4), min_size=len(jobs), max_size=len(jobs)))
    floats = [(float(c), float(d)) for c, d in jobs]
    assert answered(floats, ignored, Parallelism(k, g)) == brute_force(jobs, ignored, k, g)


@settings(max_examples=300, deadline=None)
@given(data=st.data(), jobs=st.lists(st.tuples(st.floats(0, 100), st.floats(0, 100)), min_size=1, max_size=30),
       k=st.integers(1, 16))
def test_makespan_bounds(data, jobs: list[tuple[float, float]], k: int) -> None:
    ignored = data.draw(st.lists(st.integers(0, 40), min_size=len(jobs), max_size=len(jobs)))
    makespan = answered(jobs, ignored, Parallelism(k, 1))[-1]
    sequential = sum(c + d for c, d in jobs)
    slack = 1e-9 * max(1.0, sequential)
    assert makespan <= sequential + slack
    assert makespan >= sum(d for _, d in jobs) - slack  # the measuring time alone
    assert makespan >= sequential / k - slack  # never more than K in flight


def test_one_worker_is_the_sequential_clock(space, dataset) -> None:
    problem, trace = run(space, dataset, "optuna:random", Parallelism(1, 1))
    assert trace["elapsed_cost_s"].tolist() == running_sum(trace["cost_s"])
    assert problem.stats.clock_s == problem.stats.cost_s


def test_overlap_for_a_tuner_that_runs_ahead_and_none_for_one_that_waits(space, dataset) -> None:
    p1, t1 = run(space, dataset, "optuna:random", Parallelism(1, 1))
    p8, t8 = run(space, dataset, "optuna:random", Parallelism(8, 1))
    assert t1.drop(columns="elapsed_cost_s").equals(t8.drop(columns="elapsed_cost_s"))  # the same run ...
    assert p8.stats.clock_s < 0.5 * p1.stats.clock_s  # ... sooner
    assert p8.stats.clock_s >= p1.stats.clock_s / 8
    assert (np.diff(t8["elapsed_cost_s"]) >= 0).all()
    _, c1 = run(space, dataset, "reference:coordinate", Parallelism(1, 1))
    _, c8 = run(space, dataset, "reference:coordinate", Parallelism(8, 1))
    assert c1.equals(c8)


def test_tpe_overlaps_its_start_up_trials_only(space, dataset) -> None:
    made = make_tuner("optuna")
    assert made.runs_ahead == RunsAhead(first=made.n_startup_trials)
    _, t1 = run(space, dataset, "optuna", Parallelism(1, 1))
    _, t8 = run(space, dataset, "optuna", Parallelism(8, 1))
    assert t1.drop(columns="elapsed_cost_s").equals(t8.drop(columns="elapsed_cost_s"))
    gain = t1["elapsed_cost_s"] - t8["elapsed_cost_s"]
    start = made.n_startup_trials
    assert gain.iloc[start - 1] > 0  # the start-up trials compiled together
    # after them each trial waits for the last result: every later step costs what it cost alone
    assert np.allclose(np.diff(t8["elapsed_cost_s"].iloc[start - 1:]), np.diff(t1["elapsed_cost_s"].iloc[start - 1:]))


def test_a_timeout_is_measured_after_the_answers_before_it(space, dataset) -> None:
    """Its bound is the best so far, so a proposal cut off at a timeout does not run ahead."""
    tuner = make_tuner("optuna:random")
    clocks = []
    for k in (1, 8):
        problem = Problem(space=space, backend=ReplayBackend(dataset), budget=Budget(max_evals=30),
                          tuner_charge_s=0.0, parallelism=Parallelism(k, 1), timeout_factor=1.5,
                          runs_ahead=tuner.runs_ahead)
        tuner.tune(problem, np.random.default_rng(3))
        clocks.append(problem.stats.clock_s)
    assert clocks[0] == clocks[1]


@pytest.mark.parametrize("bad", [-1, 1.5, True, None])
def test_declaration_is_checked(bad: object) -> None:
    with pytest.raises(ValueError, match=r"RunsAhead\.first"):
        RunsAhead(first=bad)  # type: ignore[arg-type]
    assert not WAITS and RunsAhead(lag=1).ignored(5) == 1 and RunsAhead(first=3).ignored(2) == 2


class Perturbed:
    """The replay of ``dataset``, with every result from the ``after``-th evaluation on another one's."""

    name = "perturbed"
    recorded = True

    def __init__(self, dataset, after: int) -> None:
        self._replay, self._after, self._count = ReplayBackend(dataset), after, 0
        frame = dataset.frame
        self._others = [self._replay.evaluate(dict(zip(dataset.parameters, row, strict=True)))
                        for row in frame[list(dataset.parameters)].itertuples(index=False)]

    def describe(self) -> str:
        return "replay with perturbed results"

    def evaluate(self, config) -> EvalResult:
        self._count += 1
        own = self._replay.evaluate(config)
        if self._count <= self._after:
            return own
        other = self._others[(self._count * 7) % len(self._others)]
        return dataclasses.replace(other, config=own.config)

    def close(self) -> None:
        pass


def proposals(space, backend, tuner: str, n: int) -> list[tuple]:
    rec = TraceRecorder(space.names)
    problem = Problem(space=space, backend=backend, budget=Budget(max_evals=n), observers=[rec], tuner_charge_s=0.0)
    make_tuner(tuner).tune(problem, np.random.default_rng(5))
    return list(map(tuple, rec.frame()[["x", "y"]].to_numpy()))


DECLARING = ["optuna", "optuna:random", "kernel_tuner:random_sample", "kernel_tuner:brute_force",
             pytest.param("reference:random_forest", marks=pytest.mark.slow)]


@pytest.mark.parametrize("tuner", DECLARING)
def test_a_declaration_is_true(space, dataset, tuner) -> None:
    """The results a tuner declares it ignores are perturbed: its proposals stay the same."""
    declared = make_tuner(tuner).runs_ahead
    assert declared
    n = 30
    truth = proposals(space, ReplayBackend(dataset), tuner, n)
    for after in (0, 3, 12):
        seen = proposals(space, Perturbed(dataset, after), tuner, n)
        # proposal i depends on the answers before i - declared.ignored(i) only
        same = [i for i in range(min(len(truth), len(seen))) if i - declared.ignored(i) <= after]
        assert [truth[i] for i in same] == [seen[i] for i in same]
        assert same, "nothing checked"


def test_the_perturbation_changes_what_a_tuner_reads(space, dataset) -> None:
    """The check above can fail: a tuner that reads its results proposes otherwise on perturbed ones."""
    assert not make_tuner("reference:coordinate").runs_ahead
    truth = proposals(space, ReplayBackend(dataset), "reference:coordinate", 30)
    assert proposals(space, Perturbed(dataset, 3), "reference:coordinate", 30) != truth
