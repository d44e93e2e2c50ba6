"""The Backend of ``bat run --backend emulated``: every evaluation checked on the CPU, none timed.

A tuner gets a status per configuration (ok, incorrect, runtime or compile error) and
never an objective: ``objective_ms`` is None, so nothing emulated can be mistaken for a
GPU measurement; ``cost_s`` is the wall time the check took on this machine.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bat.backends.emulated.session import EmulatedSession
from bat.core.problem import Backend, EvalResult, no_noise


class EmulatedBackend:
    """Configurations verified on the CPU under sanitizers (bat.backends.emulated.session)."""

    name = "emulated"

    def __init__(self, session: EmulatedSession) -> None:
        self.session = session

    def describe(self) -> str:
        return self.session.describe()

    def evaluate(self, config: Mapping[str, Any]) -> EvalResult:
        return self.session.verify(config).result

    def with_noise(self, noise: str, seed: int) -> Backend:
        return no_noise(self, noise)

    def close(self) -> None:
        self.session.close()
