"""The measuring session on a GPU: load a compiled configuration, run it, time and verify it.

One ``LiveSession`` holds a benchmark at one problem size on one device: the
inputs (already on the device before any timer starts), the reference outputs
(computed once, on first use) and the kernel source. Measuring a compiled
configuration: load the cubin, check each launch against the kernel's limits,
then the measurement procedure every backend shares (bat.backends.procedure):
pure outputs poisoned and read-write arrays restored before every run, one
warm-up run, ``repeats`` timed runs between CUDA events (all kept; the
objective is their mean, as in the published data), the outputs compared with
the reference. Every CuPy call is in bat.backends.live.cupy_device.

Every failure is data (a status plus a message): compile error, a launch the
driver refuses (too many threads, registers or shared memory), wrong output,
timeout. Timeouts are detected by polling the run's end event
(``cudaEventQuery``) against a deadline; a kernel still running then gets a
grace period as long again. A hung kernel cannot be stopped from Python: when
it is still running after the grace period, or after a sticky CUDA error
(illegal address), the session marks itself ``broken`` and only a fresh
process (``bat record --resume``) gets a usable device back.

The same session is the executor of ``bat record`` (bat.run.recording.engine): there the
NVRTC compilation runs ahead in worker processes (``cupy_compiler``, NVRTC
through CuPy's bindings, no CUDA context needed) and only the cubin reaches
this process. CuPy is imported only when a session starts.

``launch_once`` runs a configuration once, untimed and unverified: what
``python -m bat.run.profile_one`` does under ncu to collect counters
(``LiveBackend(counters=True)``, ``bat record --counters``).
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from bat.backends.live.cupy_device import CupyDevice
from bat.backends.live.device import device_info
from bat.backends.procedure import INPUT_SEED, allocate, check, execute
from bat.core.benchmark import Benchmark, ProblemSize
from bat.core.dataset import Status
from bat.core.errors import BackendError, RunTimeoutError
from bat.core.kernel import load_runner
from bat.core.problem import EvalResult
from bat.toolchain.compiling import CompileJob, CompileResult, cupy_compiler

__all__ = ["DEFAULT_REPEATS", "DEFAULT_TIMEOUT_S", "INPUT_SEED", "LiveSession"]

#: Timed runs after the warm-up (the published data used 7 and more).
DEFAULT_REPEATS = 7
#: Seconds one run (all launches of one configuration) may take before it counts as a timeout.
DEFAULT_TIMEOUT_S = 10.0


class LiveSession:
    """A benchmark at one problem size on one GPU; measures compiled configurations.

    It is also the ``Executor`` of bat.run.recording.engine (``compiler``, ``job``, ``measure``,
    ``broken``). ``bench`` may be any loaded benchmark with a kernel section, a space file given
    by path included.
    """

    compiler = staticmethod(cupy_compiler)

    def __init__(
        self,
        bench: Benchmark,
        size: ProblemSize,
        *,
        repeats: int = DEFAULT_REPEATS,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        seed: int = INPUT_SEED,
        device_id: int = 0,
    ) -> None:
        if repeats < 1:
            raise BackendError(f"repeats must be >= 1, got {repeats}")
        self.bench, self.size = bench, size
        self.runner = load_runner(bench)
        self.repeats, self.timeout_s, self.seed = repeats, timeout_s, seed
        source = self.runner.source_path()
        self.source_name, self.source = source.name, self.runner.source_text()
        self.device = CupyDevice(device_id, timeout_s=timeout_s)
        self.info = device_info(device_id)
        self.arch = f"sm_{self.info['compute_capability']}"
        self.host = self.runner.make_inputs(self.size.extents, seed)
        allocate(self.device, self.runner, self.host)  # on the device before any timer starts
        self.broken: str | None = None

    # -- what a recording needs ----------------------------------------------------------
    @functools.cached_property
    def reference(self) -> dict:
        """The expected outputs (computed on first use, then kept)."""
        return self.runner.reference(self.host, self.size.extents)

    def input_recipe(self) -> dict[str, Any]:
        return self.runner.input_recipe(self.size.extents, self.seed)

    def job(self, key: int, config: Mapping[str, Any]) -> CompileJob:
        macros = self.runner.macros(config, self.size.extents)
        source = self.runner.prepare_source(self.source, config)
        return CompileJob(key, source, dict(macros), self.arch, self.source_name,
                          tuple(sorted(self.runner.headers().items())))

    def describe(self) -> str:
        return (f"live on {self.info['gpu_name']} ({self.arch}): {self.bench.name} at the "
                f"{self.size.describe()}, {self.repeats} timed runs after a warm-up")

    # -- measuring -----------------------------------------------------------------------
    def measure(self, config: Mapping[str, Any], compiled: CompileResult) -> EvalResult:
        """Load, check, warm up, time and verify one compiled configuration."""
        cfg = dict(config)
        if self.broken:
            raise BackendError(f"the GPU is unusable in this process: {self.broken}")
        compile_ms = compiled.seconds * 1000.0
        wall = time.perf_counter()
        extra: dict[str, float] = {}

        def result(status: Status, message: str = "", times: tuple[float, ...] = ()) -> EvalResult:
            bench_ms = (time.perf_counter() - wall) * 1000.0
            return EvalResult(
                config=cfg, status=status, times_ms=times, compile_ms=compile_ms,
                objective_ms=float(np.mean(times)) if status is Status.OK else None,
                cost_s=(compile_ms + bench_ms) / 1000.0, message=message, extra=extra, compile_s=compiled.seconds)

        try:
            launches = self.runner.launches(cfg, self.size.extents)
        except Exception as exc:  # geometry this configuration cannot have is its failure
            return result(Status.RUNTIME_ERROR, f"launch geometry: {type(exc).__name__}: {exc}")
        try:
            attributes = self.device.load(compiled.cubin, {launch.kernel for launch in launches})
        except Exception as exc:  # a cubin the driver refuses is this configuration's failure
            return result(Status.RUNTIME_ERROR, f"loading the module failed: {exc}")
        extra.update(_resources(attributes, launches, compiled))
        if refused := _over_limits(attributes, launches):
            return result(Status.RUNTIME_ERROR, refused)
        try:
            run = execute(self.device, self.runner, self.host, launches, warmups=1, repeats=self.repeats)
        except RunTimeoutError as exc:
            return result(Status.TIMEOUT, self._after_timeout(str(exc)))
        except Exception as exc:  # launch failures: too many resources, illegal address, ...
            message = f"{type(exc).__name__}: {exc}"
            if sick := self.device.synchronize():
                self.broken = f"CUDA error after {cfg}: {sick}"
            return result(Status.RUNTIME_ERROR, message)
        outcome = check(self.runner, run.outputs, self.reference)
        return result(Status.OK if outcome.ok else Status.INCORRECT, outcome.message, run.times_ms)

    def launch_once(self, config: Mapping[str, Any], compiled: CompileResult) -> None:
        """Load and run one compiled configuration once, untimed and unverified (for a profiler)."""
        launches = self.runner.launches(dict(config), self.size.extents)
        attributes = self.device.load(compiled.cubin, {launch.kernel for launch in launches})
        if refused := _over_limits(attributes, launches):
            raise BackendError(refused)
        for name in self.runner.symbol_names():
            self.device.set_symbol(name, self.host[name])
        try:
            self.device.run(launches)
        except RunTimeoutError as exc:
            raise BackendError(self._after_timeout(str(exc))) from None
        if sick := self.device.synchronize():
            raise BackendError(f"CUDA error: {sick}")

    def _after_timeout(self, message: str) -> str:
        if self.device.wait(self.device.pending, self.timeout_s):
            return message + " (it finished within the grace period; the device is usable)"
        self.broken = f"a kernel is still running {2 * self.timeout_s:g} s after its launch"
        return message + " and was still running after a grace period as long again"

    def close(self) -> None:
        self.device.close()


def _resources(attributes: Mapping[str, Mapping[str, int]], launches: list, compiled: CompileResult
               ) -> dict[str, float]:
    """Static resources of the first launch's kernel (CUDA attributes, spills from ptxas)."""
    main = launches[0]
    attrs = attributes[main.kernel]
    out = {
        "registers": float(attrs["num_regs"]),
        "shared_bytes": float(attrs["shared_size_bytes"]),
        "local_bytes": float(attrs["local_size_bytes"]),
        "threads": float(math.prod(main.block)),
        "blocks": float(math.prod(main.grid)),
    }
    usage = (compiled.usage or {}).get(main.kernel)
    if usage is not None:
        out["spill_stores_bytes"] = float(usage.spill_stores_bytes)
        out["spill_loads_bytes"] = float(usage.spill_loads_bytes)
    return out


def _over_limits(attributes: Mapping[str, Mapping[str, int]], launches: list) -> str:
    """Why the driver would refuse a launch (block larger than the kernel allows), or ""."""
    for launch in launches:
        attrs = attributes[launch.kernel]
        threads = math.prod(launch.block)
        if threads > attrs["max_threads_per_block"]:
            return (f"{launch.kernel}: block {launch.block} has {threads} threads; this kernel "
                    f"allows {attrs['max_threads_per_block']} ({attrs['num_regs']} registers "
                    "per thread): too many resources requested for launch")
    return ""
