"""What the rules of cheaper measurements and timeouts read of a result, as a protocol.

``bat.core.problem.EvalResult`` satisfies it; bat.core.fidelity and
bat.core.timeouts change a result through ``dataclasses.replace`` and read it
through this protocol, so that they need not import the Problem's module
(which imports them).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import Field
from typing import Any, ClassVar, Protocol, TypeVar


class Measured(Protocol):
    """The result of one evaluation (a dataclass, frozen or not): its times, the parts of its charge, its extras."""

    __dataclass_fields__: ClassVar[dict[str, Field[Any]]]

    @property
    def objective_ms(self) -> float | None: ...

    @property
    def times_ms(self) -> tuple[float, ...]: ...

    @property
    def compile_s(self) -> float: ...

    @property
    def verify_s(self) -> float: ...

    @property
    def extra(self) -> Mapping[str, float]: ...

    @property
    def ok(self) -> bool: ...

    @property
    def measure_s(self) -> float: ...


#: a result type that satisfies ``Measured`` (a function returns the type it was given)
R = TypeVar("R", bound=Measured)
