"""Which tests the ``slow`` mark should name: each test's CPU seconds, set against its mark.

The rule (pyproject.toml, README): a test is marked ``slow`` when it takes more than ``SLOW_CPU_S`` CPU
seconds, its own process's and those of the processes it started and waited for (``bat`` commands, worker
pools). CPU time rather than wall time, so that the figure taken on a loaded shared machine still sorts the
tests as an idle one would (the load of other processes stretches wall time, hardly CPU time; contention for
caches still adds some, so the load average is printed with the figures).

The tests named run in this process, one after another (``pytest.main`` with this file's plugin, no
xdist), without pytest's cache. Printed: the load average before and after, each test over the limit not
marked (to mark), each test marked and under half the limit (to unmark), and the slowest tests.

With ``--table``, the CPU seconds measured are merged into that JSON file (test id -> CPU seconds),
``tests/cpu_seconds.json`` for the suite: tests/conftest.py starts the longest tests first from it, and
tests/test_slow_marks.py checks each test's ``slow`` mark against it.

Usage: ``python bench/slow_marks.py tests/test_x.py [tests/test_y.py ...] [--top 15] [--table FILE]``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

#: CPU seconds above which a test is marked slow
SLOW_CPU_S = 10.0


def cpu_seconds() -> float:
    """User and system CPU seconds of this process and of its children that have been waited for."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def merge_table(path: Path, cpu: dict[str, float]) -> None:
    """Write the CPU seconds measured into the JSON table at ``path``, keeping the entries not measured."""
    table = json.loads(path.read_text()) if path.exists() else {}
    table.update({name: round(seconds, 2) for name, seconds in cpu.items()})
    path.write_text(json.dumps(dict(sorted(table.items())), indent=0) + "\n")


class Timings:
    """A pytest plugin: each test's mark, CPU seconds and wall seconds (set-up, call and tear-down), each
    test's CPU seconds merged into ``table`` as soon as it is measured (a skipped test's never)."""

    def __init__(self, table: Path | None = None) -> None:
        self.table = table
        self.marked: dict[str, bool] = {}
        self.cpu: dict[str, float] = {}
        self.wall: dict[str, float] = {}
        self.skipped: set[str] = set()

    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        self.marked = {item.nodeid: item.get_closest_marker("slow") is not None for item in items}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.skipped:
            self.skipped.add(report.nodeid)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> object:
        cpu, wall = cpu_seconds(), time.perf_counter()
        try:
            return (yield)
        finally:
            self.cpu[item.nodeid] = cpu_seconds() - cpu
            self.wall[item.nodeid] = time.perf_counter() - wall
            # after every test, so that a run cut short keeps what it measured; a skipped test measured nothing
            if self.table is not None and item.nodeid not in self.skipped:
                merge_table(self.table, {item.nodeid: self.cpu[item.nodeid]})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+", help="test files (or node ids) to run")
    ap.add_argument("--top", type=int, default=15, help="how many of the slowest tests to print")
    ap.add_argument("--table", type=Path, help="JSON file (test id -> CPU seconds) to merge the figures into")
    args = ap.parse_args()
    load = os.getloadavg()[0]
    timings = Timings(args.table)
    code = pytest.main(["-q", "-p", "no:cacheprovider", "-p", "no:xdist", *args.files], plugins=[timings])
    print(f"\n{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {os.cpu_count()} CPUs, pytest exit {code}; load "
          f"average {load:.2f} before, {os.getloadavg()[0]:.2f} after; {len(timings.cpu)} tests, "
          f"{sum(timings.cpu.values()):.0f} CPU s, {sum(timings.wall.values()):.0f} wall s")
    to_mark = [n for n, s in timings.cpu.items() if s > SLOW_CPU_S and not timings.marked.get(n)]
    to_unmark = [n for n, s in timings.cpu.items() if s < SLOW_CPU_S / 2 and timings.marked.get(n)]
    for title, names in ((f"over {SLOW_CPU_S:g} CPU s, not marked slow", to_mark),
                         (f"marked slow, under {SLOW_CPU_S / 2:g} CPU s", to_unmark)):
        print(f"{title}: {len(names)}")
        for name in names:
            print(f"  {timings.cpu[name]:7.1f} CPU s {timings.wall[name]:7.1f} wall s  {name}")
    print(f"slowest {args.top} (CPU s, wall s, marked slow):")
    for name in sorted(timings.cpu, key=timings.cpu.__getitem__, reverse=True)[:args.top]:
        print(f"  {timings.cpu[name]:7.1f} {timings.wall[name]:7.1f} {'slow' if timings.marked.get(name) else '    '}"
              f"  {name}")


if __name__ == "__main__":
    main()
