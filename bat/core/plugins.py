"""Entry points of the installed distributions, read once per process; each registry takes its group from them.

Reading entry points scans every installed distribution's metadata; `bat list` asks for five groups
(benchmarks, tuners, tuner schemes, backends, datasets), which one scan serves.
"""

from __future__ import annotations

from functools import cache
from importlib.metadata import EntryPoints, entry_points
from typing import Protocol


class _Selectable(Protocol):
    """What ``entry_points()`` gives: SelectableGroups on Python 3.11, EntryPoints from 3.12; both select."""

    def select(self, *, group: str) -> EntryPoints: ...


@cache
def _installed() -> _Selectable:
    return entry_points()


def group(name: str) -> EntryPoints:
    """The entry points of group ``name`` (as ``importlib.metadata.entry_points(group=name)``)."""
    return _installed().select(group=name)
