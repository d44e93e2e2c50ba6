"""The Backend of ``bat run`` on a GPU: compile a configuration in this process, then measure it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from bat.backends.live.session import LiveSession
from bat.core.problem import Backend, EvalResult, no_noise
from bat.toolchain.compiling import compile_failure, cupy_compiler


class LiveBackend:
    """The Backend of ``bat run`` on a GPU: compiles in this process, then measures.

    With ``counters=True`` every configuration measured ok is also profiled
    under ncu in a separate process (bat.toolchain.profiler): the Problem does
    not tell the backend which evaluations a tuner wants profiled, so all are.
    That costs seconds of wall time per configuration; it lands in
    ``extra["profile_ms"]``, not in ``cost_s``, and the Problem charges it for
    a profiled re-run of an evaluated configuration.
    """

    name = "live"

    def __init__(self, session: LiveSession, *, counters: bool = False, ncu: str = "ncu") -> None:
        from bat.toolchain.profiler import CounterProfiler

        self.session = session
        self._key = 0
        self.profiler = (CounterProfiler(session.bench, size=session.size, seed=session.seed,
                                         ncu=ncu) if counters else None)

    def describe(self) -> str:
        if self.profiler is None:
            return self.session.describe()
        return (f"{self.session.describe()}; every ok evaluation profiled: {self.profiler.describe()}, "
                "seconds each")

    def evaluate(self, config: Mapping[str, Any]) -> EvalResult:
        self._key += 1
        compiled = cupy_compiler(self.session.job(self._key, config))
        if not compiled.ok:
            return compile_failure(config, compiled)
        result = self.session.measure(config, compiled)
        if self.profiler is None or not result.ok:
            return result
        profile = self.profiler.profile(config)  # after the timed runs, in another process
        return replace(result, extra={**result.extra, **profile.extra()})

    def with_noise(self, noise: str, seed: int) -> Backend:
        return no_noise(self, noise)

    def close(self) -> None:
        self.session.close()
