"""Timeouts: a measurement stopped once it runs past F times the best time found so far.

A tuner that cuts off slow configurations (``--timeout-factor F`` for the
whole run, or a factor a tuner passes with a proposal) saves the measuring
time of every configuration slower than F x the best so far. The model: the
first timed run of such a configuration already takes longer than the bound
F x best, so the measurement is stopped at the bound and the configuration
is not verified. It is charged its compile time and the bound (or its whole
recorded measuring time, when that is shorter), recorded with status
``timeout`` and the bound it exceeded (``extra["timeout_bound_ms"]``), and
its objective is unknown: the tuner sees a timeout, not a time.
"""

from __future__ import annotations

import math
from dataclasses import replace

from bat.core.dataset import Status
from bat.core.measured import R

#: the key of the bound a timed-out result exceeded, in ``EvalResult.extra`` (ms)
BOUND_KEY = "timeout_bound_ms"


def check_factor(factor: float | None, where: str = "timeout_factor") -> float | None:
    """A timeout factor is None (no timeout) or a finite number >= 1."""
    if factor is not None and not (math.isfinite(factor) and factor >= 1.0):
        raise ValueError(f"{where} must be a finite number >= 1, got {factor!r}")
    return factor


def cut_off(result: R, factor: float | None, best_ms: float | None) -> R:
    """``result`` as a timeout when its objective exceeds ``factor`` x ``best_ms``; else unchanged."""
    if factor is None or best_ms is None or not result.ok or result.objective_ms is None:
        return result
    bound_ms = factor * best_ms
    if result.objective_ms <= bound_ms:
        return result
    spent_s = min(result.measure_s, bound_ms / 1000.0)
    return replace(result, status=Status.TIMEOUT, objective_ms=None, times_ms=(),
                   cost_s=result.compile_s + spent_s, verify_s=0.0,
                   message=f"measurement stopped at {bound_ms:.6g} ms = {factor:g} x the best so far "
                           f"({best_ms:.6g} ms)",
                   extra={**result.extra, BOUND_KEY: bound_ms})
