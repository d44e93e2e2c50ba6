"""A small synthetic space where most configurations violate a constraint, and a
fake in-memory backend for it.

The fake backend stands in for replay data in the tuner battery: it answers
from a closed-form objective, fails a known share of configurations, charges
a fixed simulated cost, and records every configuration it is asked about,
so a test can check that no constraint-violating configuration reached it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from bat.dataset import Status
from bat.problem import EvalResult
from bat.space import Constraint, Parameter, SearchSpace

#: simulated seconds each fake evaluation costs
FAKE_COST_S = 0.5


def constrained_space() -> SearchSpace:
    """5 parameters, 2,400 configurations, of which 456 (19 %) are valid.

    Mixed value types (ints, a float, strings) and constraints that tie
    parameters together, like a real kernel's thread-block limits.
    """
    return SearchSpace(
        "battery",
        [
            Parameter("bx", (1, 2, 4, 8, 16, 32)),
            Parameter("by", (1, 2, 4, 8, 16)),
            Parameter("tile", (1, 2, 3, 4, 6, 8, 12, 16)),
            Parameter("ratio", (0.25, 0.5, 1.0, 2.0, 4.0)),
            Parameter("layout", ("row", "col")),
        ],
        [
            Constraint("bx * by <= 64 and bx * by >= 4", "threads per block"),
            Constraint("tile % by == 0", "a tile covers whole rows of the block"),
            Constraint("bx >= by", "blocks are at least as wide as tall"),
            Constraint("tile * by <= 32 and ratio * tile <= 8", "shared memory"),
        ],
    )


def tiny_space() -> SearchSpace:
    """A space with only a handful of valid configurations (budget larger than the space)."""
    return SearchSpace(
        "battery_tiny",
        [Parameter("a", (1, 2, 3, 4)), Parameter("b", (1, 2, 3))],
        [Constraint("a + b <= 4")],
    )


class FakeBackend:
    """In-memory backend: a closed-form objective; records every configuration it evaluates.

    It replaces replay data in tests (no dataset needed). Configurations whose
    ``bx`` is 32 fail to compile (when the space has ``bx``): failures count
    against the budget like any evaluation.
    """

    name = "fake"

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def describe(self) -> str:
        return "fake in-memory backend (closed-form objective, for tests)"

    def evaluate(self, config: Mapping[str, Any]) -> EvalResult:
        config = dict(config)
        self.calls.append(config)
        if config.get("bx") == 32:
            return EvalResult(config=config, status=Status.COMPILE_ERROR, cost_s=FAKE_COST_S,
                              message="fake compile error")
        ms = 1.0
        for name, value in sorted(config.items()):
            x = value if isinstance(value, int | float) else len(str(value))
            ms += (math.log2(x) - 2.0) ** 2 * (1.0 + 0.1 * len(name)) if x > 0 else 0.0
        return EvalResult(config=config, status=Status.OK, objective_ms=ms, times_ms=(ms,),
                          cost_s=FAKE_COST_S)

    def close(self) -> None:
        """Nothing to release."""
