"""What the rules of cheaper measurements and timeouts read of a result, as a protocol.

``bat.core.problem.EvalResult`` satisfies it; bat.core.fidelity and
bat.core.timeouts change a result through ``dataclasses.replace`` and read it
through this protocol, so that they need not import the Problem's module
(which imports them).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, TypeVar


class Measured(Protocol):
    """The result of one evaluation: its times, the parts of its charge, its extras."""

    objective_ms: float | None
    times_ms: tuple[float, ...]
    compile_s: float
    verify_s: float
    extra: Mapping[str, float]
    __dataclass_fields__: dict[str, Any]

    @property
    def ok(self) -> bool: ...

    @property
    def measure_s(self) -> float: ...


#: a result type that satisfies ``Measured`` (a function returns the type it was given)
R = TypeVar("R", bound=Measured)
