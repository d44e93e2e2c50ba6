"""The shared tuner battery (bat.testing) on every registered tuner.

A tuner whose library is not installed must say so with MissingDependencyError
naming it; the checks themselves never skip by name (declared expected
failures are run and must still fail).
"""

from __future__ import annotations

import importlib.util

import pytest

from bat.errors import MissingDependencyError
from bat.registry import make_tuner, tuner_entry, tuner_names
from bat.testing import CHECKS, Battery, check_tuner
from bat.testing.synthetic import FakeBackend, constrained_space

#: optional libraries some samplers need beyond their tuning library
EXTRA_NEEDS = {"optuna:cmaes": "cmaes", "optuna:gp": "torch"}

_BATTERIES: dict[str, Battery] = {}


#: import names of the distributions named in registry entries
IMPORT_NAMES = {"scikit-learn": "sklearn", "kernel-tuner": "kernel_tuner"}


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
@pytest.mark.parametrize("check", CHECKS)
def test_battery(name: str, check: str) -> None:
    if not _installed(name):
        with pytest.raises(MissingDependencyError):
            Battery(lambda: make_tuner(name)).verify(check)
        return
    battery = _BATTERIES.setdefault(name, Battery(lambda: make_tuner(name)))
    battery.verify(check)


def test_every_tuner_has_a_summary() -> None:
    for name in tuner_names():
        assert tuner_entry(name).summary.strip(), name


def test_check_tuner_reports_a_tuner_that_breaks_the_rules() -> None:
    """The battery catches a tuner that ignores the budget and proposes invalid configurations."""
    from bat.tuner import Tuner

    class Greedy(Tuner):
        def tune(self, problem, rng):
            space = problem.space
            for ids in range(space.cardinality):
                row = space.from_ids([ids])[0]
                if not problem.is_evaluated(space.config(row)):
                    problem.evaluate(space.config(row))  # ignores problem.exhausted

    with pytest.raises(AssertionError, match="tuner battery failed"):
        check_tuner(Greedy)


def test_declared_failure_that_passes_is_reported() -> None:
    from tuner_adapters.reference.random_search import RandomSearch

    class Declared(RandomSearch):
        battery_expected_failures = {"exact_budget": "claims it cannot"}  # noqa: RUF012

    with pytest.raises(AssertionError, match="remove the declaration"):
        Battery(Declared).verify("exact_budget")


def test_fake_backend_records_calls() -> None:
    backend = FakeBackend()
    space = constrained_space()
    row = space.sample_valid(1, __import__("numpy").random.default_rng(0))[0]
    result = backend.evaluate(space.config(row))
    assert backend.calls == [space.config(row)]
    assert result.cost_s > 0
