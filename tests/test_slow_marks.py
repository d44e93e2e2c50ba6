"""Each measured test over the CPU limit carries the ``slow`` mark.

The figures are tests/cpu_seconds.json, written by ``bench/slow_marks.py --table`` (a test's own CPU
seconds and those of the processes it waited for; a module fixture's cost counts in the first test that
uses it); the check runs over the tests collected with it, so the whole suite's marks are checked in a
whole run (CI's). A test not yet measured is not checked here. The other way (a marked test measured
under the limit) is not yet a failure: the table holds tests measured cheap only because they were
skipped where measured (no Chromium, no GPU) or found a warm cache; ``bench/slow_marks.py`` lists them.
"""

from __future__ import annotations

import importlib.util

import pytest
from conftest import ROOT, SLOW_CPU_S, cpu_table


def test_the_limit_is_the_one_bench_slow_marks_measures_against() -> None:
    spec = importlib.util.spec_from_file_location("slow_marks", ROOT / "bench" / "slow_marks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.SLOW_CPU_S == SLOW_CPU_S


def test_every_measured_test_file_exists_and_every_figure_is_a_duration() -> None:
    table = cpu_table()
    assert table, "tests/cpu_seconds.json holds no figures"
    for name, seconds in table.items():
        assert (ROOT / name.partition("::")[0]).is_file(), name
        assert isinstance(seconds, float | int) and seconds >= 0, (name, seconds)


def test_every_test_measured_over_the_limit_is_marked_slow(request: pytest.FixtureRequest) -> None:
    table = cpu_table()
    unmarked = [f"{item.nodeid}: {table[item.nodeid]} CPU s" for item in request.session.items
                if table.get(item.nodeid, 0.0) > SLOW_CPU_S and item.get_closest_marker("slow") is None]
    assert not unmarked, "over the limit, not marked slow:\n" + "\n".join(unmarked)
