"""Checks and ranges shared by the commands' options (typer callbacks), so a bad value fails before any work.

Every numeric option of every command has a range stated here (``--help`` shows it) and checked by
typer when the command line is parsed: a number past what C, NumPy or a library can hold (``10**30``)
or past any sensible run (a week of seconds, 10^9 evaluations) is one line and exit 2, before a file
is written. ``tests/test_option_ranges.py`` walks every command and holds each numeric option to it.
"""

from __future__ import annotations

import math
from typing import Any

import typer

#: seeds: NumPy, Optuna and SMAC take any seed below 2**32
MAX_SEED = 2**32 - 1
#: seconds: a timeout, a charge, a simulated time budget (about 11.6 days)
MAX_SECONDS = 1_000_000.0
#: evaluations of one run or recording (a space has at most 10^8 valid configurations in practice)
MAX_EVALUATIONS = 1_000_000_000
#: repeats of one measurement or one comparison cell
MAX_REPEATS = 10_000
#: local worker processes or settings proposed at a time
MAX_WORKERS = 1024
#: --timeout-factor: a measurement stopped past this factor x the best time so far
MAX_TIMEOUT_FACTOR = 1_000_000.0
#: CatBoost iterations per model (its own limit is far above; beyond this the analysis takes days)
MAX_ITERATIONS = 100_000
#: configurations `bat verify --random` checks (each takes seconds under the sanitizers)
MAX_VERIFY_RANDOM = 1000


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


def open_unit(value: float | None) -> float | None:
    """A level of a test: a number strictly between 0 and 1."""
    if value is not None and not (math.isfinite(value) and 0 < value < 1):
        raise typer.BadParameter(f"expected a number strictly between 0 and 1, got {value}")
    return value


def worker_count(value: int) -> int:
    """Compile workers or devices of the simulated clock: 1 to ``bat.core.schedule.MAX_WORKERS``."""
    from bat.core.schedule import MAX_WORKERS

    if not 1 <= value <= MAX_WORKERS:
        raise typer.BadParameter(f"expected 1 to {MAX_WORKERS}, got {value}")
    return value


def devices_option() -> Any:
    """``--devices`` of ``bat run`` and ``bat compare`` (the same option on both)."""
    return typer.Option(1, "--devices", callback=worker_count,
                        help="Devices measuring at once on the simulated clock, one configuration each.")


def timeout_factor_option() -> Any:
    """``--timeout-factor`` of ``bat run`` and ``bat compare`` (the same option on both)."""
    return typer.Option(None, "--timeout-factor", min=1.0, max=MAX_TIMEOUT_FACTOR, callback=finite,
                        help="Stop a measurement once it runs past this factor x the best time so far: charged "
                             "the time spent, recorded as a timeout.")
