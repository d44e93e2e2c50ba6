"""Cheaper measurements: k of a configuration's recorded repeats instead of all of them.

A tuner may ask for a measurement with ``repeats=k`` (``problem.evaluate`` or
``problem.submit``). On a backend that answers from recorded data, the
answer is a *partial* measurement: k of the n recorded repeated times drawn
without replacement, reproducibly (from the run's draw seed, k and the
configuration), their mean as the objective, a noisier value at k/n of the
measuring time (the compile and verification times are charged in full).
The trace records the fidelity k/n. A partial measurement costs simulated
time but is not one of the budget's evaluations: the budget counts distinct
configurations measured in full, as always, and the clock. Where there is
nothing to draw from (k >= n, fewer than two recorded repeats, or a failed
configuration) the configuration is measured in full instead, as a normal
charged evaluation, and so is every configuration on a backend that measures
(live, command: their repeats are not recorded beforehand).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from bat.core.measured import R

#: the key of the fidelity (k/n) of a partial measurement, in ``EvalResult.extra``
FIDELITY_KEY = "fidelity"


def check_repeats(repeats: int | None) -> int | None:
    """None (all the repeats) or a positive integer."""
    if repeats is not None and (isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1):
        raise ValueError(f"repeats must be a positive integer or None, got {repeats!r}")
    return repeats


def fewer_repeats(result: R, k: int, seed: int, row: Sequence[int]) -> R | None:
    """``result`` measured with ``k`` of its recorded repeats; None when it must be measured in full."""
    n = len(result.times_ms)
    if not result.ok or n < 2 or k >= n:
        return None
    picks = np.sort(np.random.default_rng([seed, k, *row]).choice(n, size=k, replace=False))
    times = tuple(float(result.times_ms[i]) for i in picks)
    return replace(result, objective_ms=float(np.mean(times)), times_ms=times,
                   cost_s=result.compile_s + result.verify_s + result.measure_s * k / n,
                   extra={**result.extra, FIDELITY_KEY: k / n})
