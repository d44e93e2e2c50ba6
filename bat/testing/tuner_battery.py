"""The tuner battery: the rules every tuner must follow, as checks any tuner author can run.

Use it as ``check_tuner(factory)`` (runs every check, raises AssertionError
listing the failures) or as the mix-in ``TunerBattery`` (one pytest test per
check; subclass it and define ``make_tuner``). ``factory`` returns a fresh
tuner. The checks run the tuner on a small synthetic space where four in five
configurations violate a constraint, behind a fake in-memory backend
(:mod:`bat.testing.synthetic`), so they need no data and take little time:

- ``only_valid``: every configuration that reached the backend satisfies the
  constraints, and none reached it twice;
- ``exact_budget``: with a budget smaller than the space, exactly that many
  configurations are evaluated (never more), and the tuner returns once the
  problem is exhausted without evaluating after it;
- ``time_budget``: with a simulated-time budget, the tuner stops as soon as it
  is spent;
- ``small_space``: on a space of 6 valid configurations with a budget of 24,
  the tuner returns (it does not loop forever on repeats) having evaluated
  each valid configuration at most once, and nothing else;
- ``same_seed``: two runs with the same seed give the same trace (all columns
  but the tuner's own time);
- ``trace_schema``: the trace has the common columns, in order, and its
  counts agree with the problem's.

A tuner that cannot meet a check declares it on its class, with the reason:
``battery_expected_failures = {"exact_budget": "why"}`` (a mapping; it may
also be a property when it depends on a hyper-parameter). The check then
still runs and must fail; if it passes, the declaration is reported as stale.
The battery never skips a check by a tuner's name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd

from bat.problem import Budget, Problem, ProblemStats
from bat.space import SearchSpace
from bat.testing.synthetic import FAKE_COST_S, FakeBackend, constrained_space, tiny_space
from bat.trace import TRACE_COLUMNS, TraceRecorder
from bat.tuner import Tuner

CHECKS = ("only_valid", "exact_budget", "time_budget", "small_space", "same_seed", "trace_schema")
#: evaluations asked for in the budget checks (the synthetic space has 456 valid configurations)
BUDGET = 15
#: evaluations that the time budget affords
TIME_EVALS = 6
#: a tuner that answers more proposals than this in one run is taken to loop forever
MAX_PROPOSALS = 5000

TunerFactory = Callable[[], Tuner]


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


def expected_failures(tuner: Tuner) -> Mapping[str, str]:
    """The checks a tuner declares it fails, with the reasons."""
    return dict(getattr(tuner, "battery_expected_failures", {}) or {})


class Battery:
    """Runs a tuner on the synthetic problems (lazily, each run once) and checks the rules."""

    def __init__(self, factory: TunerFactory, *, seed: int = 1) -> None:
        self.factory = factory
        self.seed = seed

    def _run(self, space_fn: Callable[[], SearchSpace], budget: Budget) -> Run:
        """One run, wired as ``bat.driver.run_tuner`` wires it, plus a cap on proposals."""
        space, backend = space_fn(), FakeBackend()
        recorder = TraceRecorder(space.names)
        problem = Problem(space=space, backend=backend, budget=budget, observers=[recorder, _ProposalCap()])
        problem.start_clock()
        self.factory().tune(problem, np.random.default_rng(self.seed))
        return Run(space, backend, problem.stats, recorder.frame())

    @cached_property
    def main(self) -> Run:
        return self._run(constrained_space, Budget(max_evals=BUDGET))

    @cached_property
    def again(self) -> Run:
        return self._run(constrained_space, Budget(max_evals=BUDGET))

    @cached_property
    def timed(self) -> Run:
        return self._run(constrained_space, Budget(max_time_s=FAKE_COST_S * TIME_EVALS))

    @cached_property
    def small(self) -> Run:
        return self._run(tiny_space, Budget(max_evals=4 * tiny_space().count_valid()))

    # -- the checks ---------------------------------------------------------------
    def check_only_valid(self) -> None:
        for run in (self.main, self.timed):
            calls = run.backend.calls
            if calls:
                bad = ~run.space.is_valid(run.space.encode(calls))
                assert not bad.any(), ("constraint-violating configurations reached the backend: "
                                       f"{[c for c, b in zip(calls, bad, strict=True) if b][:3]}")
            keys = [tuple(c[n] for n in run.space.names) for c in calls]
            assert len(keys) == len(set(keys)), "a configuration reached the backend twice"

    def check_exact_budget(self) -> None:
        run = self.main
        calls = len(run.backend.calls)
        assert calls <= BUDGET, f"{calls} evaluations for a budget of {BUDGET}"
        assert run.stats.evaluated == BUDGET == calls, (
            f"evaluated {run.stats.evaluated} configurations (the backend saw {calls}) for a "
            f"budget of {BUDGET} on a space of {run.space.count_valid()} valid ones")

    def check_time_budget(self) -> None:
        run = self.timed
        calls = len(run.backend.calls)
        assert calls == TIME_EVALS == run.stats.evaluated, (
            f"a budget of {FAKE_COST_S * TIME_EVALS} simulated seconds at {FAKE_COST_S} s each "
            f"should give {TIME_EVALS} evaluations, got {calls}")

    def check_small_space(self) -> None:
        run = self.small
        total = run.space.count_valid()
        calls = run.backend.calls
        assert len(calls) <= total, f"{len(calls)} evaluations on a space of {total}"
        keys = [tuple(c[n] for n in run.space.names) for c in calls]
        assert len(keys) == len(set(keys)), "a configuration reached the backend twice"
        if calls:
            assert run.space.is_valid(run.space.encode(calls)).all(), "an invalid configuration was evaluated"

    def check_same_seed(self) -> None:
        first, second = self.main.trace, self.again.trace
        cols = [c for c in first.columns if c != "tuner_s"]
        pd.testing.assert_frame_equal(first[cols], second[cols], check_exact=True,
                                      obj="trace of two runs with the same seed")

    def check_trace_schema(self) -> None:
        run = self.main
        trace, stats = run.trace, run.stats
        assert list(trace.columns) == [*run.space.names, *TRACE_COLUMNS], \
            f"trace columns {list(trace.columns)} are not the common schema"
        kinds = trace["kind"].value_counts().to_dict()
        assert set(kinds) <= {"evaluated", "rejected", "repeat", "profile"}, f"unknown kinds {kinds}"
        assert kinds.get("profile", 0) == stats.profiles
        assert kinds.get("evaluated", 0) == stats.evaluated == int(trace["charged"].sum())
        assert kinds.get("rejected", 0) == stats.rejected
        assert kinds.get("repeat", 0) == stats.repeated
        assert list(trace["step"]) == list(range(len(trace)))

    # -- running a check with the tuner's declarations -------------------------------
    def verify(self, check: str) -> None:
        """Run ``check``; a check the tuner declares it fails must fail (else it is stale)."""
        if check not in CHECKS:
            raise ValueError(f"unknown check {check!r}; valid: {CHECKS}")
        declared = expected_failures(self.factory())
        run = getattr(self, f"check_{check}")
        if check not in declared:
            run()
            return
        expected = declared[check]
        raises = getattr(expected, "raises", Exception)
        try:
            run()
        except raises:  # the declared failure, raised as declared
            return
        raise AssertionError(f"check {check} passed but the tuner declares it fails "
                             f"({declared[check]}); remove the declaration")


def check_tuner(factory: TunerFactory, *, seed: int = 1) -> None:
    """Run every check of the battery on the tuner ``factory`` makes; raise listing failures."""
    battery = Battery(factory, seed=seed)
    failures = []
    for check in CHECKS:
        try:
            battery.verify(check)
        except Exception as exc:  # an error inside the tuner is a failed check too
            failures.append(f"{check}: {type(exc).__name__}: {exc}")
    if failures:
        raise AssertionError("tuner battery failed:\n" + "\n".join(failures))


class TunerBattery:
    """Mix-in for pytest: subclass it, define ``make_tuner``, and each check becomes a test."""

    def make_tuner(self) -> Tuner:
        raise NotImplementedError("define make_tuner() returning a fresh tuner")

    def _battery(self) -> Battery:
        cls = type(self)
        if "_battery_cache" not in cls.__dict__:
            cls._battery_cache = Battery(self.make_tuner)
        return cls.__dict__["_battery_cache"]

    def test_only_valid(self) -> None:
        self._battery().verify("only_valid")

    def test_exact_budget(self) -> None:
        self._battery().verify("exact_budget")

    def test_time_budget(self) -> None:
        self._battery().verify("time_budget")

    def test_small_space(self) -> None:
        self._battery().verify("small_space")

    def test_same_seed(self) -> None:
        self._battery().verify("same_seed")

    def test_trace_schema(self) -> None:
        self._battery().verify("trace_schema")
