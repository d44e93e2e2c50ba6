"""Proposals in flight on the simulated clock: their answers to come, in the order they finish.

The Problem (bat.core.problem) puts each answered proposal here with its
charge; ``take`` hands back the one that finishes first on the clock
(bat.core.schedule). A repeat of a configuration still in flight is not on
the clock: it waits for that configuration's own answer and comes right
after it, so a tuner never learns a result before it exists.

A proposal made with nothing in flight may say how many of the latest
answers it ignored (``ahead``, bat.core.ahead): it entered the clock when the
answer before those came, at most ``slots - 1`` answers back (no more than
``slots`` proposals are ever in flight), so its compilation overlaps the
measurements of the proposals before it.

On one compile worker and one device only one proposal is ever in flight:
it is put on the clock and its finish computed in one step
(``Schedule.run_alone``), the same times as the general path.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable
from typing import Generic, TypeVar

from bat.core.schedule import Parallelism, Schedule

#: what the owner keeps with each proposal in flight (the Problem: the answer and its bookkeeping)
T = TypeVar("T")


class InFlight(Generic[T]):
    """The proposals in flight on a machine of ``parallelism``."""

    def __init__(self, parallelism: Parallelism) -> None:
        self.clock = Schedule(parallelism)
        self._items: dict[int, tuple[T, Hashable | None]] = {}  # job -> (item, key when it measures one)
        self._running: dict[Hashable, int] = {}  # configuration measured in flight -> its job
        self._followers: dict[int, list[int]] = {}  # job -> repeats of its configuration, answered with it
        self._released: deque[int] = deque()  # repeats whose configuration's answer has come
        self._job = 0
        self._slots = parallelism.slots
        self._answered: deque[float] = deque(maxlen=self._slots)  # when the latest answers were handed back
        self._known = 0.0  # when the latest proposal was known
        self._alone: float | None = None  # the finish time of the one job in flight on a sequential clock

    def __len__(self) -> int:
        return len(self._items)

    @property
    def now(self) -> float:
        """The simulated time of the last answer handed back."""
        return self.clock.now

    def measuring(self, key: Hashable) -> bool:
        """Is configuration ``key`` being measured (its answer still to come)?"""
        return key in self._running

    def add(self, item: T, key: Hashable, *, measures: bool, compile_s: float = 0.0, device_s: float = 0.0,
            total_s: float = 0.0, ahead: int = 0) -> None:
        """Put ``item`` in flight: a measurement of ``key`` (``measures``) or an answer that costs the given
        time; an answer about a configuration being measured waits for that measurement. ``ahead``: how
        many of the latest answers the proposal ignored (used when nothing else is in flight)."""
        self._job += 1
        if self._slots == 1 and not self._items:  # the sequential clock, one job at a time: its finish at once
            self._alone = self.clock.run_alone(self._job, compile_s, device_s, total_s)
            self._items[self._job] = (item, key if measures else None)
            if measures:
                self._running[key] = self._job
            return
        if not measures and key in self._running:
            self._followers.setdefault(self._running[key], []).append(self._job)
            self._items[self._job] = (item, None)
            return
        at = None
        if ahead > 0 and self._slots > 1 and not self._items:
            back = min(ahead, self._slots - 1) + 1  # the answer this proposal depends on last, counted back
            # known then, and not before the proposal before it (a tuner proposes in order)
            at = max(self._answered[-back] if len(self._answered) >= back else 0.0, self._known)
        self._known = self.clock.now if at is None else at
        self.clock.submit(self._job, compile_s, device_s, total_s, at)
        self._items[self._job] = (item, key if measures else None)
        if measures:
            self._running[key] = self._job

    def take(self) -> T:
        """The item that finishes first (LookupError when none is in flight)."""
        if self._alone is not None:
            job, self.clock.now, self._alone = self._job, max(self.clock.now, self._alone), None
        else:
            job = self._released.popleft() if self._released else self.clock.next()[0]
        item, key = self._items.pop(job)
        if key is not None:
            del self._running[key]
        if self._followers:
            self._released.extend(self._followers.pop(job, ()))
        self._answered.append(self.clock.now)
        return item
