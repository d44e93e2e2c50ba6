"""Entry points of the installed distributions, read once per process; each registry takes its group from them.

Reading entry points scans every installed distribution's metadata; `bat list` asks for five groups
(benchmarks, tuners, tuner schemes, backends, datasets), which one scan serves.
"""

from __future__ import annotations

from functools import cache
from importlib.metadata import EntryPoints, entry_points


@cache
def _installed() -> EntryPoints:
    return entry_points()


def group(name: str) -> EntryPoints:
    """The entry points of group ``name`` (as ``importlib.metadata.entry_points(group=name)``)."""
    return _installed().select(group=name)
