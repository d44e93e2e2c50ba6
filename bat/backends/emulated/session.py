"""Verifying configurations on the CPU: one benchmark at one problem size, emulated under a sanitizer.

``EmulatedSession.verify(config)`` runs what a GPU would run, on the CPU, through the
same runner contract and measurement procedure as the live backend
(bat.backends.procedure): the launches of the configuration; the NVRTC gate
(bat.backends.emulated.gate: only what a GPU accepts is emulated); the host build
(bat.backends.emulated.build); one run per block order on the emulated device, with pure
outputs poisoned and read-write arrays restored; ``verify`` against the NumPy reference.
A HIP source (bat.backends.emulated.hip) takes the same path: its names are checked against
the HIP layer first, and the gate compiles it through that layer.
The result carries a status and a message, never a time: ``objective_ms`` is always
None, ``cost_s`` is the wall time the evaluation took on this machine.
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bat.backends.emulated import gate, hip
from bat.backends.emulated.build import Builder, cache_root
from bat.backends.emulated.device import ORDERS, EmulatedDevice
from bat.backends.procedure import INPUT_SEED, allocate, check, execute
from bat.core.benchmark import Benchmark, ProblemSize
from bat.core.dataset import Status
from bat.core.errors import KernelRunError, OrderDependenceError
from bat.core.kernel import load_runner
from bat.core.problem import EvalResult

#: Seconds one block may take before it counts as a deadlock.
BLOCK_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class Verification:
    """One configuration checked on the CPU, and the seconds this machine spent on it.

    ``gate_s`` is what NVRTC took for this configuration (perhaps in an earlier, cached check);
    ``build_s`` and ``run_s`` are this check's host build (0 when cached) and emulated run.
    """

    result: EvalResult
    error_ratio: float | None = None  # largest error / tolerance of ``verify`` (None: not compared)
    refused: bool = False  # a GPU would not run it (NVRTC or the launch limits): not emulated
    gate_s: float = 0.0
    build_s: float = 0.0
    run_s: float = 0.0
    outputs: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def ok(self) -> bool:
        return self.result.ok


class EmulatedSession:
    """A benchmark at one problem size, verified configuration by configuration on the CPU."""

    def __init__(self, bench: Benchmark, size: ProblemSize, *, sanitizer: str = "address", seed: int = INPUT_SEED,
                 use_gate: bool = True, block_timeout_s: float = BLOCK_TIMEOUT_S, cache: str | None = None,
                 orders: tuple[str, ...] = ORDERS) -> None:
        self.bench, self.size, self.seed = bench, size, seed
        self.runner = load_runner(bench)
        self.builder = Builder(sanitizer, cache=cache)
        self.cache = cache_root(cache)
        self.use_gate = use_gate and gate.nvrtc_available()
        self.block_timeout_s, self.orders = block_timeout_s, orders
        path = self.runner.source_path()
        self.source_name, self.source = path.name, self.runner.source_text()
        self.includes = self.runner.headers()
        self.host = self.runner.make_inputs(size.extents, seed)

    @functools.cached_property
    def reference(self) -> dict:
        """The expected outputs (computed on first use, then kept)."""
        return self.runner.reference(self.host, self.size.extents)

    def describe(self) -> str:
        gated = f"only what NVRTC accepts for {gate.ARCH}" if self.use_gate else "no NVRTC gate (cuda-bindings absent)"
        return (f"{self.bench.name} at the {self.size.describe()} on the CPU, {self.builder.describe()}, "
                f"blocks in {' and '.join(self.orders)} order; {gated}")

    def gpu_accepts(self, config: Mapping[str, Any]) -> bool:
        """Would a GPU run this configuration (NVRTC for sm_90, launch limits)? True without the gate."""
        if not self.use_gate:
            return True
        values = self.size.extents
        verdict = gate.check(self.runner.prepare_source(self.source, config), self.source_name,
                             self.runner.macros(config, values),
                             self.runner.launches(config, values), self.cache, self.includes)
        return verdict.compiled and not verdict.refusal

    def check_source(self, text: str, name: str) -> bool:
        """True for a HIP source (checked against the HIP layer: BackendError names what it lacks)."""
        if hip.is_hip(text, name):
            hip.check(text, name)
            return True
        return False

    def verify(self, config: Mapping[str, Any], *, source: str | None = None,
               source_name: str | None = None) -> Verification:
        """Check one configuration (``source`` replaces the kernel's source, e.g. a broken variant or a
        HIP twin; ``source_name`` is its file name, default the kernel's)."""
        cfg, text = dict(config), self.source if source is None else source
        name = Path(source_name).name if source_name else self.source_name
        headers = {**self.includes, **(hip.nvrtc_headers() if self.check_source(text, name) else {})}
        text = self.runner.prepare_source(text, cfg)
        start = time.perf_counter()
        timings = {"gate_s": 0.0, "build_s": 0.0, "run_s": 0.0}

        def done(status: Status, message: str = "", ratio: float | None = None,
                 outputs: dict | None = None, refused: bool = False) -> Verification:
            result = EvalResult(config=cfg, status=status, cost_s=time.perf_counter() - start, message=message)
            return Verification(result, ratio, refused, outputs=outputs or {}, **timings)

        values = self.size.extents
        try:
            launches = self.runner.launches(cfg, values)
            macros = self.runner.macros(cfg, values)
        except Exception as exc:  # geometry this configuration cannot have is its failure
            return done(Status.RUNTIME_ERROR, f"launch geometry: {type(exc).__name__}: {exc}")
        if self.use_gate:
            verdict = gate.check(text, name, macros, launches, self.cache, headers)
            timings["gate_s"] = verdict.seconds
            if not verdict.compiled:
                return done(Status.COMPILE_ERROR, verdict.refusal, refused=True)
            if verdict.refusal:
                return done(Status.RUNTIME_ERROR, f"a GPU would refuse the launch: {verdict.refusal}", refused=True)
        build = self.builder.build(text, name, macros, self.runner.kernel_names, self.runner.symbol_names(),
                                   self.includes)
        timings["build_s"] = build.seconds
        if not build.ok:
            return done(Status.COMPILE_ERROR, f"host compiler: {build.first_error()}")
        device = EmulatedDevice(build, block_timeout_s=self.block_timeout_s, orders=self.orders)
        failure: KernelRunError | None = None
        try:
            allocate(device, self.runner, self.host)
            outputs = execute(device, self.runner, self.host, launches, warmups=0, repeats=1).outputs
        except KernelRunError as exc:
            failure = exc
        finally:
            timings["run_s"] = device.run_seconds
            device.close()
        if failure is not None:
            bad = Status.INCORRECT if isinstance(failure, OrderDependenceError) else Status.RUNTIME_ERROR
            return done(bad, f"{failure} (configuration {json.dumps(cfg)})")
        outcome = check(self.runner, outputs, self.reference)
        status = Status.OK if outcome.ok else Status.INCORRECT
        return done(status, outcome.message, outcome.error_ratio, outputs)

    def close(self) -> None:
        """Nothing to release: built executables stay in the cache."""
