"""Profiling one configuration in a separate process under ncu, for ``bat record`` and the live backend.

The timed run stays unprofiled. After it, ``CounterProfiler.profile`` starts
``python -m bat.run.profile_one`` (it compiles that one configuration and
launches it once) under Nsight Compute's ``ncu``, filtered to the
benchmark's kernel, and returns the metrics ncu gave, the metrics it gave no
value for (named, never zero), and ``profile_ms``: the profiled run's wall
time. That time covers the whole process (Python and CuPy start, NVRTC
compilation, ncu's kernel replays), typically seconds per configuration: it
is what a searcher pays for a profile, and bat.core.problem charges it for
profiled re-runs.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bat.core.benchmark import Benchmark, ProblemSize
from bat.core.counters import SPEC_METRICS
from bat.core.errors import BackendError, MissingDependencyError
from bat.toolchain.ncu import collect_counters


@dataclass(frozen=True)
class Profile:
    """The counters of one configuration's profiled run."""

    counters: dict[str, float]
    missing: tuple[str, ...]
    profile_ms: float

    def extra(self) -> dict[str, float]:
        """What goes into ``EvalResult.extra``: the counters by metric name, and ``profile_ms``."""
        return {**self.counters, "profile_ms": self.profile_ms}


def kernel_name(bench: Any) -> str:
    """The entry point ncu profiles: the benchmark's ``kernel.name`` in its space file."""
    name = (bench.kernel or {}).get("name")
    if not name:
        raise BackendError(f"{bench.path}: kernel.name: needed to tell ncu which kernel to profile")
    return str(name)


def profile_one_command(bench: Benchmark, config: Mapping[str, Any], *, size: ProblemSize, seed: int,
                        python: str = sys.executable) -> list[str]:
    """The command line that compiles ``config`` and launches it once (``python -m bat.run.profile_one``).

    The benchmark travels as its space file's path (so a space file outside the package is the
    one profiled) and the size as a JSON object of its values.
    """
    return [python, "-m", "bat.run.profile_one", "--benchmark", str(bench.path),
            "--config", _json(config), "--size", _json(size.values), "--seed", str(seed)]


def _json(mapping: Mapping[str, Any]) -> str:
    return json.dumps(dict(mapping), sort_keys=True, separators=(",", ":"))


class CounterProfiler:
    """Collects ``metrics`` for configurations of one benchmark at one size, one ncu run each.

    Raises MissingDependencyError at once when ``ncu`` is not found, so a
    recording fails before it measures anything.
    """

    def __init__(self, bench: Benchmark, *, size: ProblemSize, seed: int, ncu: str = "ncu",
                 metrics: Sequence[str] = SPEC_METRICS, timeout_s: float = 600.0) -> None:
        exe = shutil.which(ncu)
        if exe is None:
            raise MissingDependencyError(
                f"--counters needs Nsight Compute's command-line profiler, but {ncu!r} is not on PATH "
                "(install Nsight Compute or put its ncu on PATH)")
        self.bench, self.size, self.seed = bench, size, seed
        self.ncu, self.metrics, self.timeout_s = exe, tuple(metrics), timeout_s
        self.kernel = f"^{re.escape(kernel_name(bench))}$"

    def command(self, config: Mapping[str, Any]) -> list[str]:
        return profile_one_command(self.bench, config, size=self.size, seed=self.seed)

    def profile(self, config: Mapping[str, Any]) -> Profile:
        """Run ``config`` once under ncu; metrics without a value are named in ``missing``."""
        got = collect_counters(self.command(config), self.metrics, kernel=self.kernel, ncu=self.ncu,
                               timeout_s=self.timeout_s, allow_missing=True)
        return Profile(dict(got.counters), tuple(got.missing), got.wall_s * 1000.0)

    def describe(self) -> str:
        return (f"{len(self.metrics)} counters by {self.ncu} in a separate run of each ok "
                f"configuration (kernel {self.kernel}; its wall time is profile_ms)")


def counter_provenance(metrics: Sequence[str], missing: Iterable[Sequence[str]], profiled: int
                       ) -> tuple[dict[str, Any], str]:
    """Dataset metadata for recorded counters: an ``extra`` entry and a sentence for ``notes``.

    ``missing`` holds, per profiled configuration, the metrics ncu gave no value for.
    """
    counts = Counter(m for names in missing for m in names)
    extra = {"tool": "ncu", "metrics": list(metrics), "profiled": profiled,
             "missing": {m: counts[m] for m in metrics if counts[m]}}
    note = (f"counters: {len(metrics)} Nsight Compute metrics from a separate ncu run of each of "
            f"{profiled} ok configurations (its wall time in profile_ms)")
    if counts:
        note += ("; no value (NaN, never zero) for " +
                 ", ".join(f"{m} in {counts[m]}" for m in metrics if counts[m]))
    return extra, note
