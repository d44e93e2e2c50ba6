"""The tuner battery: the rules every tuner must follow, as checks any tuner author can run.

Use it as ``check_tuner(factory)`` (runs every check, raises AssertionError
listing the failures, returns a ``BatteryReport`` otherwise) or as the mix-in
``TunerBattery`` (one pytest test per check; subclass it and define
``make_tuner``). ``factory`` returns a fresh tuner. The checks run the tuner
on small synthetic spaces behind a fake in-memory backend that also serves
counters (:mod:`bat.testing.synthetic`), with the facts a real target gives
(a GPU, its cores, a launch geometry, a replayable dataset), so they need no
data and take little time.

What the Problem and the trace recorder guarantee whatever the tuner does
(only valid configurations reach the backend, a repeat is answered from
memory, the budget is never overrun, the trace has the common schema) is
tested with them, not here. The checks test what only the tuner decides:

- ``full_budget``: on a space of 456 valid configurations (four in five of
  the 2,400 violate a constraint), the tuner spends the whole budget of 15
  evaluations before it returns;
- ``time_budget``: with a simulated-time budget worth 6 evaluations, it
  spends all of it;
- ``small_space``: on a space of 6 valid configurations with a budget of 24,
  it evaluates all 6 and returns (it does not give up early, nor loop
  forever on repeats: more than ``MAX_PROPOSALS`` proposals fail the check);
- ``value_types``: on a space with string-valued and single-valued
  parameters (and floats), it spends the whole budget;
- ``proposal_waste``: over the first and the fourth run, the share of its
  proposals that were rejected (violating a constraint) or repeated stays
  at most ``MAX_WASTE`` = 75 %; the rate is reported (``BatteryReport.waste``).
  A sampler that ignores the constraints and draws from the whole product
  wastes about 69 % there (four in five of the first space's configurations
  are invalid), so the bound lets a tuner ignore constraints but not do
  worse than blind sampling, e.g. by re-proposing what it has seen;
- ``budget_agnostic``: a tuner that declares itself budget-agnostic (bat.core.tuner)
  evaluates, with a budget of 5, exactly the first 5 configurations it evaluates with a
  budget of 15 and the same seed, in the same order (a tuner that does not declare it
  passes: the claim is what is checked, for every tuner that makes it);
- ``cross_process``: the same seed gives identical traces (every column but
  the wall-clock ``tuner_s``) in this process and in a second Python
  process with another ``PYTHONHASHSEED`` (bat.testing.other_process: one
  child per test process serves every tuner's request). The child makes the
  runs of the first and fourth checks while this process makes its own;
- ``parallel``: on a simulated machine of 4 compile workers and 2 devices
  (bat.core.schedule) it spends the whole budget of 15 evaluations; a tuner
  that declares ``proposes_batches`` (or ``runs_ahead``: bat.core.ahead)
  finishes sooner than the sum of its charges (it kept evaluations in
  flight), and one that declares neither takes exactly that sum (it kept
  none in flight without saying so).

A tuner that cannot meet a check declares it on its class, with the
exception type the check raises and the reason:
``battery_expected_failures = {"small_space": ExpectedFailure(IndexError,
"why")}`` (a property when it depends on a hyper-parameter). The check then
still runs and must raise that type (an AssertionError when an assertion of
the check fails); if it passes, the declaration is reported as stale, and a
declaration that is not an ``ExpectedFailure`` of a known check is an error.
The battery never skips a check by a tuner's name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import pandas as pd

from bat.core.errors import TunerError
from bat.core.tuner import ExpectedFailure, Tuner
from bat.testing.other_process import OtherProcess, shared
from bat.testing.runs import BUDGET, COMPARED, PARALLEL, TIME_EVALS, Run, execute
from bat.testing.synthetic import FAKE_COST_S

CHECKS = ("full_budget", "time_budget", "small_space", "value_types", "proposal_waste", "budget_agnostic",
          "cross_process", "parallel")
#: the largest share of proposals that may be rejected or repeated (``proposal_waste``; see the module docstring)
MAX_WASTE = 0.75
#: trace columns that measure wall-clock time (left out when traces are compared)
WALL_CLOCK = ("tuner_s",)

TunerFactory = Callable[[], Tuner]


def expected_failures(tuner: Tuner) -> dict[str, ExpectedFailure]:
    """The checks a tuner declares it fails; TunerError for a declaration that is not one."""
    declared = dict(getattr(tuner, "battery_expected_failures", {}) or {})
    for check, expected in declared.items():
        if check not in CHECKS:
            raise TunerError(f"{type(tuner).__name__}.battery_expected_failures names check {check!r}; "
                             f"valid: {', '.join(CHECKS)}")
        if not (isinstance(expected, ExpectedFailure) and isinstance(expected.raises, type)
                and issubclass(expected.raises, BaseException)):
            raise TunerError(f"{type(tuner).__name__}.battery_expected_failures[{check!r}] is {expected!r}; "
                             "declare bat.core.tuner.ExpectedFailure(raises=<exception type>, reason=...)")
    return declared


@dataclass
class BatteryReport:
    """What the battery found: each check's outcome, and the share of wasted proposals."""

    tuner: str
    outcomes: dict[str, str] = field(default_factory=dict)  # check -> "passed" | "expected failure: ..." | error
    waste: float | None = None  # (rejected + repeated) / proposals over the compared runs

    @property
    def failures(self) -> dict[str, str]:
        return {c: o for c, o in self.outcomes.items() if o != "passed" and not o.startswith("expected failure")}


class Battery:
    """Runs a tuner on the synthetic problems (lazily, each run once) and checks the rules."""

    def __init__(self, factory: TunerFactory, *, seed: int = 1) -> None:
        self.factory = factory
        self.seed = seed
        self._runs: dict[str, Run | BaseException] = {}
        self._other: tuple[OtherProcess, int] | AssertionError | None = None
        self.waste: float | None = None

    def run(self, name: str) -> Run:
        """The run ``name`` of ``RUNS`` (made once; what it raised is raised again)."""
        self._start_other()
        if name not in self._runs:
            try:
                self._runs[name] = execute(name, self.factory(), self.seed)
            except Exception as exc:  # kept, so each check that needs this run sees the same failure
                self._runs[name] = exc
        outcome = self._runs[name]
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    def _start_other(self) -> None:
        """Ask the second process for its runs once, so it makes them while this one makes its own."""
        if self._other is None:
            process = shared()
            try:
                self._other = (process, process.submit(self.factory(), self.seed, COMPARED))
            except AssertionError as exc:
                self._other = exc

    # -- the checks ---------------------------------------------------------------
    def check_full_budget(self) -> None:
        run = self.run("main")
        assert run.stats.evaluated == BUDGET, (
            f"evaluated {run.stats.evaluated} configurations for a budget of {BUDGET} on a space of "
            f"{run.space.count_valid()} valid ones")

    def check_time_budget(self) -> None:
        run = self.run("timed")
        assert run.stats.evaluated == TIME_EVALS, (
            f"a budget of {FAKE_COST_S * TIME_EVALS:g} simulated seconds at {FAKE_COST_S} s each "
            f"should give {TIME_EVALS} evaluations, got {run.stats.evaluated}")

    def check_parallel(self) -> None:
        run = self.run("parallel")
        assert run.stats.evaluated == BUDGET, (
            f"evaluated {run.stats.evaluated} configurations for a budget of {BUDGET} on {PARALLEL.describe()}")
        tuner = self.factory()
        if tuner.proposes_batches or tuner.runs_ahead:
            declared = "proposes_batches" if tuner.proposes_batches else "runs_ahead"
            assert run.stats.clock_s < run.stats.cost_s, (
                f"declares {declared} but gained nothing on {PARALLEL.describe()}: simulated time "
                f"{run.stats.clock_s:g} s for {run.stats.cost_s:g} s of work (no evaluations kept in flight)")
        else:
            assert run.stats.clock_s == run.stats.cost_s, (
                f"kept evaluations in flight on {PARALLEL.describe()} without declaring proposes_batches "
                "or runs_ahead")

    def check_small_space(self) -> None:
        run = self.run("small")
        total = run.space.count_valid()
        assert run.stats.evaluated == total, (
            f"evaluated {run.stats.evaluated} of the {total} valid configurations with budget to spare")

    def check_value_types(self) -> None:
        run = self.run("types")
        assert run.stats.evaluated == BUDGET, (
            f"evaluated {run.stats.evaluated} configurations for a budget of {BUDGET} on a space with "
            "string-valued and single-valued parameters")

    def check_proposal_waste(self) -> None:
        stats = [self.run(name).stats for name in COMPARED]
        proposals = sum(s.proposals for s in stats)
        wasted = sum(s.rejected + s.repeated for s in stats)
        self.waste = wasted / proposals if proposals else 0.0
        assert self.waste <= MAX_WASTE, (
            f"{wasted} of {proposals} proposals ({self.waste:.0%}) were rejected or repeated; "
            f"the bound is {MAX_WASTE:.0%}")

    def check_budget_agnostic(self) -> None:
        if not self.factory().budget_agnostic:
            return
        main, prefix = self.run("main"), self.run("prefix")
        names = list(main.space.names)
        short = prefix.trace.loc[prefix.trace["charged"], names].reset_index(drop=True)
        long = main.trace.loc[main.trace["charged"], names].head(len(short)).reset_index(drop=True)
        assert len(short) == BUDGET // 3 and short.equals(long), (
            f"declared budget-agnostic, but with a budget of {BUDGET // 3} it evaluated {short.to_dict('records')}, "
            f"not the first {BUDGET // 3} of its run with a budget of {BUDGET}: {long.to_dict('records')}")

    def check_cross_process(self) -> None:
        self._start_other()
        if isinstance(self._other, AssertionError):
            raise self._other
        assert self._other is not None
        process, request = self._other
        theirs = process.outcomes(request)
        for name in COMPARED:
            try:
                mine: Any = self.run(name).trace
            except Exception as exc:  # both processes must fail alike
                mine = exc
            other = theirs[name]
            where = f"run {name!r} in this process and in one with PYTHONHASHSEED={process.hash_seed}"
            if isinstance(mine, BaseException) or other.error is not None:
                got = (type(mine).__name__, str(mine)) if isinstance(mine, BaseException) else None
                assert got is not None and other.error is not None and got[0] == other.error[0], (
                    f"{where}: one raised and the other did not, or not alike: {got} vs {other.error}")
                continue
            cols = [c for c in mine.columns if c not in WALL_CLOCK]
            pd.testing.assert_frame_equal(mine[cols], other.trace[cols], check_exact=True,
                                          obj=f"trace of {where}")

    # -- running a check with the tuner's declarations -------------------------------
    def verify(self, check: str) -> str:
        """Run ``check`` honouring the tuner's declaration; its outcome ("passed" or "expected failure: ...")."""
        if check not in CHECKS:
            raise ValueError(f"unknown check {check!r}; valid: {CHECKS}")
        declared = expected_failures(self.factory())
        run = getattr(self, f"check_{check}")
        if check not in declared:
            run()
            return "passed"
        expected = declared[check]
        try:
            run()
        except expected.raises:  # the declared failure, raised as declared
            return f"expected failure: {expected.raises.__name__} ({expected.reason})"
        raise AssertionError(f"check {check} passed but the tuner declares it fails "
                             f"({expected.reason}); remove the declaration")

    def report(self, name: str = "") -> BatteryReport:
        """Every check's outcome (an exception inside the tuner is a failed check too)."""
        report = BatteryReport(name or type(self.factory()).__name__)
        for check in CHECKS:
            try:
                report.outcomes[check] = self.verify(check)
            except Exception as exc:  # a failed check, whatever the tuner raised
                report.outcomes[check] = f"{type(exc).__name__}: {exc}"
        report.waste = self.waste
        return report


def check_tuner(factory: TunerFactory, *, seed: int = 1, name: str = "") -> BatteryReport:
    """Run every check of the battery on the tuner ``factory`` makes; raise listing failures."""
    report = Battery(factory, seed=seed).report(name)
    if report.failures:
        raise AssertionError("tuner battery failed:\n" + "\n".join(f"{c}: {o}" for c, o in report.failures.items()))
    return report


class TunerBattery:
    """Mix-in for pytest: subclass it, define ``make_tuner``, and each check becomes a test."""

    _battery_cache: ClassVar[Battery]  # one per subclass, set on first use

    def make_tuner(self) -> Tuner:
        raise NotImplementedError("define make_tuner() returning a fresh tuner")

    def _battery(self) -> Battery:
        cls = type(self)
        if "_battery_cache" not in cls.__dict__:
            cls._battery_cache = Battery(self.make_tuner)
        return cls.__dict__["_battery_cache"]

    def test_full_budget(self) -> None:
        self._battery().verify("full_budget")

    def test_time_budget(self) -> None:
        self._battery().verify("time_budget")

    def test_small_space(self) -> None:
        self._battery().verify("small_space")

    def test_value_types(self) -> None:
        self._battery().verify("value_types")

    def test_proposal_waste(self) -> None:
        self._battery().verify("proposal_waste")

    def test_budget_agnostic(self) -> None:
        self._battery().verify("budget_agnostic")

    def test_cross_process(self) -> None:
        self._battery().verify("cross_process")

