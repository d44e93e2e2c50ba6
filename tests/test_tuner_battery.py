"""The shared tuner battery (bat.testing) on every registered tuner, and on tuners that break its rules.

Each registered tuner runs every check in one test (so one battery, and one
second process for the cross-process check, serves all its checks). A tuner
whose library is not installed must say so with MissingDependencyError
naming it; the checks never skip by name (a declared expected failure runs
and must raise the declared type). Each check is shown to catch a tuner
that breaks its rule (tests/battery_tuners.py).
"""

from __future__ import annotations

import importlib.util
import signal
from collections.abc import Iterator
from functools import partial

import battery_tuners as bad
import pytest

from bat.core.errors import MissingDependencyError, TunerError
from bat.registry import make_tuner, tuner_entry, tuner_names
from bat.testing import CHECKS, MAX_WASTE, Battery, TunerBattery, check_tuner
from bat.testing.synthetic import FakeBackend, constrained_space, synthetic_dataset, typed_space
from bat.tuner_adapters.reference.random_search import RandomSearch

#: optional libraries some samplers need beyond their tuning library
EXTRA_NEEDS = {"optuna:cmaes": "cmaes", "optuna:gp": "torch"}
#: import names of the distributions named in registry entries
IMPORT_NAMES = {"scikit-learn": "sklearn", "kernel-tuner": "kernel_tuner"}


#: CPU seconds a battery test may use: a tuner that never returns (one looped forever on a space it had
#: wholly evaluated) fails its test instead of hanging the suite; CPU time, so machine load cannot trip it
CPU_LIMIT_S = 600


@pytest.fixture(autouse=True)
def cpu_limit() -> Iterator[None]:
    def stop(signum: int, frame: object) -> None:
        raise TimeoutError(f"the battery used {CPU_LIMIT_S} s of CPU: a tuner that never returns?")

    before = signal.signal(signal.SIGPROF, stop)
    signal.setitimer(signal.ITIMER_PROF, CPU_LIMIT_S)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, before)


def _installed(name: str) -> bool:
    requires = tuner_entry(name).requires
    needs = [IMPORT_NAMES.get(requires, requires) or None, EXTRA_NEEDS.get(name)]
    return all(importlib.util.find_spec(n) is not None for n in needs if n)


def _slow(name: str) -> bool:
    """The tuner's own ``slow`` capability (its class imports no library until it tunes)."""
    try:
        return bool(make_tuner(name).slow)
    except MissingDependencyError:
        return False


def _params():
    for name in tuner_names():
        marks = [pytest.mark.slow] if _slow(name) else []
        yield pytest.param(name, marks=marks, id=name)


@pytest.mark.parametrize("name", list(_params()))
def test_battery(name: str, record_property) -> None:
    battery = Battery(partial(make_tuner, name, announce=False) if name.startswith("profile")
                      else partial(make_tuner, name))
    if not _installed(name):
        with pytest.raises(MissingDependencyError):
            battery.verify("full_budget")
        return
    report = battery.report(name)
    record_property("proposal_waste", report.waste)
    assert report.failures == {}, f"{name}: waste {report.waste}"
    assert set(report.outcomes) == set(CHECKS)


def test_every_tuner_has_a_summary() -> None:
    for name in tuner_names():
        assert tuner_entry(name).summary.strip(), name


def _failures(tuner: type) -> dict[str, str]:
    return Battery(tuner).report().failures


def test_each_check_catches_the_tuner_that_breaks_it() -> None:
    assert set(_failures(bad.StopsEarly)) == {"full_budget", "time_budget", "small_space", "value_types",
                                              "parallel"}
    failures = _failures(bad.NoConstants)
    assert set(failures) == {"value_types", "proposal_waste"} and "ZeroDivisionError" in failures["value_types"]
    failures = _failures(bad.Repeater)
    assert set(failures) == {"proposal_waste"} and f"the bound is {MAX_WASTE:.0%}" in failures["proposal_waste"]
    failures = _failures(bad.HashOrdered)
    assert set(failures) == {"cross_process"} and "PYTHONHASHSEED" in failures["cross_process"]
    failures = _failures(bad.ReadsTheBudget)
    assert set(failures) == {"budget_agnostic"} and "declared budget-agnostic" in failures["budget_agnostic"]
    failures = _failures(bad.ClaimsBatches)
    assert set(failures) == {"parallel"} and "gained nothing" in failures["parallel"]
    failures = _failures(bad.HiddenBatches)
    assert set(failures) == {"parallel"} and "without declaring" in failures["parallel"]


def test_check_tuner_reports_a_tuner_that_breaks_the_rules() -> None:
    """A tuner that ignores the budget fails, and one defined in a function cannot reach another process."""
    from bat.core.tuner import Tuner

    class Greedy(Tuner):
        def tune(self, problem, rng):
            space = problem.space
            for ids in range(space.cardinality):
                row = space.from_ids([ids])[0]
                if not problem.is_evaluated(space.config(row)):
                    problem.evaluate(space.config(row))  # ignores problem.exhausted

    with pytest.raises(AssertionError, match="tuner battery failed") as info:
        check_tuner(Greedy)
    assert "BudgetExhaustedError" in str(info.value)
    assert "cannot be sent to another process" in str(info.value)


def test_declarations_name_the_exception_and_must_still_fail() -> None:
    with pytest.raises(AssertionError, match="remove the declaration"):
        Battery(bad.DeclaresWrongly).verify("full_budget")
    with pytest.raises(TunerError, match=r"declare bat.core.tuner.ExpectedFailure\(raises="):
        Battery(bad.DeclaresWithAString).verify("full_budget")
    with pytest.raises(AssertionError, match="evaluated 5 configurations"):  # not the declared ValueError
        Battery(bad.DeclaresTheWrongType).verify("full_budget")
    report = check_tuner(bad.DeclaresItsEarlyStop)
    assert report.outcomes["full_budget"].startswith("expected failure: AssertionError (stops after")
    assert report.outcomes["cross_process"] == "passed"


class TestRandomSearchThroughTheMixin(TunerBattery):
    """The pytest mix-in a tuner author outside this repository subclasses."""

    def make_tuner(self) -> RandomSearch:
        return RandomSearch()


def test_fake_backend_serves_counters_and_its_whole_space_as_a_dataset() -> None:
    import numpy as np

    from bat.core.counters import METRICS

    backend = FakeBackend()
    space = constrained_space()
    rows = space.sample_valid(20, np.random.default_rng(0))
    results = [backend.evaluate(space.config(row)) for row in rows]
    assert backend.calls == [space.config(row) for row in rows]
    assert all(r.cost_s > 0 for r in results) and {r.status.value for r in results} == {"ok", "compile_error"}
    assert all(set(METRICS.values()) <= set(r.extra) for r in results if r.ok)
    data = synthetic_dataset(typed_space())
    assert len(data.frame) == typed_space().count_valid() and len(data.counters) == len(METRICS)
    data.check_space(typed_space())
