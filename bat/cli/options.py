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


#: text options where an empty value means something (no source, no licence, no notes)
EMPTY_ALLOWED = {("import", "source"), ("import", "licence"), ("import", "notes")}


def refuse_empty_values(group: Any) -> None:
    """Every text option of every command refuses an empty value (``--gpus ''``, ``--dataset ' '``), which
    some commands took as the option left out and others refused: one rule, set once on the command tree
    ``bat.cli`` builds. The options in ``EMPTY_ALLOWED`` keep it."""
    from typer._click.types import StringParamType

    for name, command in group.commands.items():
        for param in command.params:
            if (param.param_type_name == "option" and type(param.type) is StringParamType
                    and (name, param.name) not in EMPTY_ALLOWED):
                param.callback = _not_empty(param.callback)


def _not_empty(callback: Any) -> Any:
    def check(ctx: Any, param: Any, value: Any) -> Any:
        values = value if isinstance(value, list | tuple) else [value]
        if any(isinstance(v, str) and not v.strip() for v in values):
            raise typer.BadParameter("an empty value; leave the option out for its default")
        return callback(ctx, param, value) if callback is not None else value

    return check
