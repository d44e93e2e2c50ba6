"""The CPU time of an isolated tuner's whole process tree, read from ``/proc`` by the harness.

The tree is everything below the tuner's supervisor (bat.tuner_adapters.reaper,
a child subreaper, so an orphaned descendant stays in it). Each process counts
with ``/proc/<pid>/stat``: its user and system time (every thread it ever had,
those that ended included) plus the time of the children it has waited for;
a zombie still shows its own. The threads still alive are also read from
``schedstat`` (nanoseconds), so that a process whose threads all live is read
finer than the clock tick. The supervisor itself counts only through the
children it reaped. Descendants are found by their parent: a process is in
the tree when its parent is (pids are visited in increasing order, and a
child's pid follows its parent's until the pid counter wraps, which the exact
end-of-run total covers). The reading never decreases.
"""

from __future__ import annotations

import os


class CpuClock:
    """CPU seconds of every process below ``root`` (see the module docstring); ``total()`` the last reading."""

    def __init__(self, root: int) -> None:
        self.root = root
        self.tick = os.sysconf("SC_CLK_TCK")
        self._last = 0.0
        self._ours: set[int] = set()
        self._others: set[int] = set()

    def __call__(self) -> float:
        seconds = 0.0
        alive = set()
        for entry in sorted(int(e) for e in os.listdir("/proc") if e.isdigit()):
            if entry < self.root or entry in self._others:
                continue
            fields = _stat(entry)
            if fields is None:
                continue
            parent = int(fields[1])
            if entry != self.root and parent != self.root and parent not in self._ours:
                self._others.add(entry)
                continue
            alive.add(entry)
            self._ours.add(entry)
            waited = (int(fields[13]) + int(fields[14])) / self.tick  # cutime, cstime
            if entry == self.root:
                seconds += waited
                continue
            own = (int(fields[11]) + int(fields[12])) / self.tick  # utime, stime
            seconds += max(own, _live_threads_s(entry)) + waited
        self._ours &= alive
        self._last = max(self._last, seconds)
        return self._last

    def total(self) -> float:
        return self._last


def _stat(pid: int) -> list[bytes] | None:
    """The fields of /proc/PID/stat after the command name (state first), None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rpartition(b")")[2].split()
    except OSError:
        return None


def _live_threads_s(pid: int) -> float:
    ns = 0
    try:
        with os.scandir(f"/proc/{pid}/task") as tasks:
            for task in tasks:
                try:
                    with open(f"/proc/{pid}/task/{task.name}/schedstat", "rb") as f:
                        ns += int(f.read().split()[0])
                except (OSError, ValueError, IndexError):
                    continue
    except OSError:
        return 0.0
    return ns / 1e9
