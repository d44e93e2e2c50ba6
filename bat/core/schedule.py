"""The simulated clock of a tuning run: K compile workers and G devices, event by event.

An evaluation is a job of two stages: its compilation, on one of ``K``
compile workers (K compile at once), then its verification and
measurement, on one of ``G`` devices (each measures one configuration at a
time). A job enters at the time it is submitted (the clock's ``now``: the
time of the last result handed back), compiles on the worker that is free
first, and waits for a device after it; devices take the compiled jobs in
the order their compilations ended (first come, first served; ties in
submission order). A job with no device stage (a compile failure) is done
when its compilation ends. ``next`` hands back the job that finishes first.

Device work is assigned lazily: a compiled job is given a device only once
no result due before its start is still to be handed back, so a job
submitted after that result, whose compilation ends earlier, is measured
first, as it would be on a machine.

A job may enter before ``now`` (``submit(at=...)``): the proposal of a tuner
that evaluates one configuration at a time but whose proposal did not depend
on its latest results was known, in simulated time, when the result it does
depend on came (bat.core.ahead); it is submitted when nothing else is in
flight, so such jobs take workers in the order proposed, and are measured in
that order too: a device takes one once every job proposed before it has
compiled (whether that one needs a device is known only then).

With one worker and one device, and jobs submitted one at a time (each after
the previous result), a job finishes at ``now + total_s``: the sum of the
charges in order, the clock of a sequential replay to the last bit.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence
from dataclasses import dataclass

#: The most compile workers or devices a run may simulate.
MAX_WORKERS = 4096
#: Changes when the clock on several workers or devices gives other times for the same run (stored runs are
#: then made again): 2 since proposals may run ahead of their results (bat.core.ahead).
CLOCK_REVISION = 2


@dataclass(frozen=True)
class Parallelism:
    """How many configurations compile at once (``compile_workers``), and how many devices measure."""

    compile_workers: int = 1
    devices: int = 1

    def __post_init__(self) -> None:
        for name in ("compile_workers", "devices"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_WORKERS:
                raise ValueError(f"{name} must be an integer in 1..{MAX_WORKERS}, got {value!r}")

    @property
    def sequential(self) -> bool:
        return self.compile_workers == 1 and self.devices == 1

    @property
    def slots(self) -> int:
        """Jobs a tuner may keep in flight: K + G - 1, one at a time when K = G = 1 (the sequential clock)."""
        return self.compile_workers + self.devices - 1

    def describe(self) -> str:
        return (f"{self.compile_workers} compile worker{'s' * (self.compile_workers != 1)}, "
                f"{self.devices} device{'s' * (self.devices != 1)}")


#: One compile worker and one device: the sequential clock (the default).
SEQUENTIAL = Parallelism()


class Schedule:
    """The event-driven clock (see the module docstring); jobs are named by the caller's integer keys."""

    def __init__(self, parallelism: Parallelism = SEQUENTIAL) -> None:
        self.parallelism = parallelism
        #: the time of the last result handed back (a job submitted now starts no earlier)
        self.now = 0.0
        self._workers = [0.0] * parallelism.compile_workers  # heap of the times each worker is free
        self._devices = [0.0] * parallelism.devices  # heap of the times each device is free
        self._compiled: list[tuple[float, int, int, float, float, float]] = []  # waiting for a device
        self._done: list[tuple[float, int, int]] = []  # finish time known, not handed back yet
        self._seq = 0
        self._compiled_by = 0.0  # when every job submitted so far has compiled

    @property
    def in_flight(self) -> int:
        return len(self._compiled) + len(self._done)

    def submit(self, key: int, compile_s: float, device_s: float, total_s: float | None = None,
               at: float | None = None) -> None:
        """Start job ``key`` now (or at ``at``): ``compile_s`` on a worker, then ``device_s`` on a device.

        ``total_s`` is the job's whole charge (``compile_s + device_s`` when None); a job that
        never waits finishes at its compile start + ``total_s``, so a sequential clock adds
        exactly the charges. ``at`` (no later than ``now``) is when the job became known, for a
        job submitted with nothing else in flight whose proposal ran ahead of its results
        (bat.core.flight); jobs so submitted must come in the order of their ``at``, and are
        measured in that order: not before every job submitted earlier has compiled.
        """
        if not (0 <= compile_s < math.inf and 0 <= device_s < math.inf):
            raise ValueError(f"job {key}: compile {compile_s!r} s and device {device_s!r} s must be finite and >= 0")
        total = compile_s + device_s if total_s is None else total_s
        start = end = self.now if at is None else at
        if compile_s > 0:  # nothing to compile (a profiled re-run, an answer from memory): no worker needed
            start = max(start, heapq.heappop(self._workers))
            end = start + min(compile_s, total)  # a total rounded below its compile time still ends the job
            heapq.heappush(self._workers, end)
        if at is not None and device_s > 0 and end < self._compiled_by:  # in order: after the jobs before it compiled
            total, end = self._compiled_by - start + device_s, self._compiled_by
        self._compiled_by = max(self._compiled_by, end)
        self._seq += 1
        if device_s > 0:
            heapq.heappush(self._compiled, (end, self._seq, key, start, total, device_s))
        else:
            heapq.heappush(self._done, (start + total, self._seq, key))

    def run_alone(self, key: int, compile_s: float, device_s: float, total_s: float) -> float:
        """``submit`` and ``next`` of job ``key`` with nothing else in flight, on one worker and one device
        (``parallelism.sequential``), in one step: the same checks, state and finish time (returned), but
        ``now``, which the caller moves to that time when it hands the result back (``next`` moves it)."""
        if not (0 <= compile_s < math.inf and 0 <= device_s < math.inf):
            raise ValueError(f"job {key}: compile {compile_s!r} s and device {device_s!r} s must be finite and >= 0")
        start = end = self.now
        if compile_s > 0:
            start = max(start, self._workers[0])
            end = self._workers[0] = start + min(compile_s, total_s)
        self._compiled_by = max(self._compiled_by, end)
        self._seq += 1
        if device_s > 0:
            free = self._devices[0]
            finish = self._devices[0] = start + total_s if free <= end else max(end, free) + device_s
        else:
            finish = start + total_s
        return finish

    def next(self) -> tuple[int, float]:
        """The job that finishes first and its finish time; the clock moves there."""
        while self._compiled:
            end, seq, key, start, total, device_s = self._compiled[0]
            begin = max(end, self._devices[0])
            if self._done and self._done[0][0] <= begin:
                break  # that result comes first; a later submission may still be measured before this one
            heapq.heappop(self._compiled)
            free = heapq.heappop(self._devices)
            finish = start + total if free <= end else begin + device_s
            heapq.heappush(self._devices, finish)
            heapq.heappush(self._done, (finish, seq, key))
        if not self._done:
            raise LookupError("no job in flight")
        finish, _, key = heapq.heappop(self._done)
        self.now = max(self.now, finish)
        return key, finish


def stream_clock(compile_s: Sequence[float], device_s: Sequence[float], total_s: Sequence[float],
                 parallelism: Parallelism) -> tuple[list[int], list[float]]:
    """Jobs fed in order with ``parallelism.slots`` in flight (a tuner whose proposals ignore results):
    the jobs in the order they finish, and their finish times."""
    clock, order, times = Schedule(parallelism), [], []
    n, fed = len(total_s), 0
    while fed < min(parallelism.slots, n):
        clock.submit(fed, compile_s[fed], device_s[fed], total_s[fed])
        fed += 1
    while clock.in_flight:
        job, finish = clock.next()
        order.append(job)
        times.append(finish)
        if fed < n:
            clock.submit(fed, compile_s[fed], device_s[fed], total_s[fed])
            fed += 1
    return order, times
