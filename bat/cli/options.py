"""Checks shared by the commands' options (typer callbacks), so a bad value fails before any work."""

from __future__ import annotations

import math

import typer


def finite(value: float | None) -> float | None:
    """A float option must be a finite number (typer's ranges let ``nan`` through)."""
    if value is not None and not math.isfinite(value):
        raise typer.BadParameter(f"expected a finite number, got {value}")
    return value


def positive_finite(value: float | None) -> float | None:
    """A float option that must be finite and greater than 0 (seconds, minutes)."""
    if value is not None and not (math.isfinite(value) and value > 0):
        raise typer.BadParameter(f"expected a finite number > 0, got {value}")
    return value


def worker_count(value: int) -> int:
    """Compile workers or devices of the simulated clock: 1 to ``bat.core.schedule.MAX_WORKERS``."""
    from bat.core.schedule import MAX_WORKERS

    if not 1 <= value <= MAX_WORKERS:
        raise typer.BadParameter(f"expected 1 to {MAX_WORKERS}, got {value}")
    return value
