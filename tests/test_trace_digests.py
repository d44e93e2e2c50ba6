"""Results stay exactly as they were: every registered tuner's traces equal the recorded digests.

The digests (tests/fixtures/traces/digests.json) were made by
``python tests/trace_digests.py`` before the replay path learnt to carry
configurations as integers (issue 45); a change that moves any tuner's
sequence of evaluated configurations, or any value of its trace, fails here.
A tuner whose library is not installed has nothing to compare and must say
so with MissingDependencyError.
"""

from __future__ import annotations

import json

import pytest
from trace_digests import FIXTURE, digests

from bat.core.errors import MissingDependencyError
from bat.registry import make_tuner

RECORDED: dict[str, dict[str, str]] = json.loads(FIXTURE.read_text())["tuners"]
#: tuners whose digests take seconds (a library's own search): marked slow, so ``-m "not slow"`` keeps the
#: reference, transfer and profile tuners, which share every line of the replay path with them
SLOW_FAMILIES = ("smac", "kernel_tuner", "optuna")
SLOW = {"reference:random_forest", "transfer:model"}


def _params():
    for name in sorted(RECORDED):
        slow = name in SLOW or name.split(":")[0] in SLOW_FAMILIES
        yield pytest.param(name, marks=[pytest.mark.slow] if slow else [], id=name)


@pytest.mark.parametrize("name", list(_params()))
@pytest.mark.filterwarnings("ignore")
def test_traces_equal_the_recorded_ones(name: str) -> None:
    try:
        make_tuner(name)
        got = digests(name)
    except MissingDependencyError:
        pytest.skip(f"{name}: its library is not installed here")
    assert got == RECORDED[name]


def test_every_registered_tuner_that_runs_here_has_digests() -> None:
    from bat.registry import tuner_names

    missing = []
    for name in tuner_names():
        if name not in RECORDED:
            try:
                digests(name)
            except MissingDependencyError:
                continue
            missing.append(name)
    assert not missing, f"no recorded digests for {missing}: run python tests/trace_digests.py {' '.join(missing)}"
