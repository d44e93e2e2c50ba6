"""The CPU time of an isolated tuner's whole process tree, read by the harness.

The tree is everything below the tuner's supervisor (bat.tuner_adapters.reaper,
a child subreaper, so an orphaned descendant stays in it). Each process counts
with its process CPU-time clock (``clock_gettime`` on the clock of another
process, nanoseconds: every thread it ever had, those that ended included; a
zombie's still reads) plus the time of the children it has waited for
(``/proc/<pid>/stat``). The supervisor is not read: it waits for the tuner
alone and reaps the rest only when the run ends, where the exact total (its
``wait4`` usage) takes over. The reading never decreases.

Finding descendants cheaply: pids are handed out in increasing order, and
``/proc/loadavg`` names the last one. At each reading only the pids created
since the last one are looked at (a process is in the tree when its parent
is; a new thread, which also takes a pid, is told apart by its ``Tgid``); a
jump of more than ``MAX_NEW`` pids, or the counter wrapping, walks all of
``/proc`` instead. A process created and gone between two readings has been
reaped by its parent (counted there) or is a zombie (found).
"""

from __future__ import annotations

import os
import time

#: new pids looked at one by one; past this, all of /proc is walked
MAX_NEW = 4096


class CpuClock:
    """CPU seconds of every process below ``root`` (see the module docstring); ``total()`` the last reading."""

    #: the tuner's CPU time while the harness answers it is the tuner's too (bat.core.problem reads once a lap)
    counts_waiting = True

    def __init__(self, root: int) -> None:
        self.root = root
        self.tick = os.sysconf("SC_CLK_TCK")
        self._last = 0.0
        self._ours = {root}
        self._seen = _last_pid()
        self._adopt(_all_pids())

    def __call__(self) -> float:
        last = _last_pid()
        if last != self._seen:
            fresh = range(self._seen + 1, last + 1) if 0 < last - self._seen <= MAX_NEW else _all_pids()
            self._seen = last
            self._adopt(fresh)
        seconds = 0.0
        for pid in sorted(self._ours - {self.root}):
            fields = _stat(pid)
            if fields is None:  # reaped: its time is in its parent's children's time now
                self._ours.discard(pid)
                continue
            seconds += (int(fields[13]) + int(fields[14])) / self.tick  # cutime, cstime
            seconds += _process_cpu_s(pid, fields, self.tick)
        self._last = max(self._last, seconds)
        return self._last

    def total(self) -> float:
        return self._last

    def _adopt(self, pids: range | list[int]) -> None:
        """Add the processes among ``pids`` whose parent is in the tree (in pid order: parents first)."""
        for pid in pids:
            if pid in self._ours:
                continue
            fields = _stat(pid)
            if fields is not None and int(fields[1]) in self._ours and _is_process(pid):
                self._ours.add(pid)


def _last_pid() -> int:
    with open("/proc/loadavg", "rb") as f:
        return int(f.read().split()[-1])


def _all_pids() -> list[int]:
    return sorted(int(e) for e in os.listdir("/proc") if e.isdigit())


def _stat(pid: int) -> list[bytes] | None:
    """The fields of /proc/PID/stat after the command name (state first), None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rpartition(b")")[2].split()
    except OSError:
        return None


def _is_process(pid: int) -> bool:
    """Whether ``pid`` is a process (its own thread group), not a thread of another."""
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            for line in f:
                if line.startswith(b"Tgid:"):
                    return int(line.split()[1]) == pid
    except OSError:
        pass
    return False


def _process_cpu_s(pid: int, fields: list[bytes], tick: int) -> float:
    """The process's CPU-time clock (all its threads, ended ones too), else its stat's user and system time."""
    try:
        return time.clock_gettime(((~pid) << 3) | 2)  # MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED)
    except OSError:
        return (int(fields[11]) + int(fields[12])) / tick
