"""The measuring session on a GPU: load a compiled configuration, run it, time and verify it.

One ``LiveSession`` holds a benchmark at one problem size on one device: the
inputs (already on the device before any timer starts), the reference outputs
(computed once, on first use) and the kernel source. Measuring a compiled
configuration: load the cubin (``cupy.RawModule(path=...)``), check each
launch against the kernel's limits, run once to warm up, then ``repeats``
timed runs between CUDA events (all kept; the objective is their mean, as in
the published data), and compare the outputs with the reference.

Every failure is data (a status plus a message): compile error, a launch the
driver refuses (too many threads, registers or shared memory), wrong output,
timeout. Timeouts are detected by polling the run's end event
(``cudaEventQuery``) against a deadline; a kernel still running then gets a
grace period as long again. A hung kernel cannot be stopped from Python: when
it is still running after the grace period, or after a sticky CUDA error
(illegal address), the session marks itself ``broken`` and only a fresh
process (``bat record --resume``) gets a usable device back.

The same session is the executor of ``bat record`` (bat.recording.engine): there the
NVRTC compilation runs ahead in worker processes (``cupy_compiler``, NVRTC
through CuPy's bindings, no CUDA context needed) and only the cubin reaches
this process. CuPy is imported only when a session starts.

``launch_once`` runs a configuration once, untimed and unverified: what
``python -m bat.profile_one`` does under ncu to collect counters
(``LiveBackend(counters=True)``, ``bat record --counters``).
"""

from __future__ import annotations

import ctypes
import math
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from bat.backends.live.device import cupy_module, device_info
from bat.benchmark import Benchmark, ProblemSize
from bat.compiling import CompileJob, CompileResult, cupy_compiler
from bat.dataset import Status
from bat.errors import BackendError
from bat.kernel import load_runner
from bat.problem import EvalResult

#: Timed runs after the warm-up (the published data used 7 and more).
DEFAULT_REPEATS = 7
#: Seconds one run (all launches of one configuration) may take before it counts as a timeout.
DEFAULT_TIMEOUT_S = 10.0
#: Seed of the input recipe (inputs are byte-identical for a given size and seed).
INPUT_SEED = 0


class _Timeout(Exception):
    pass


class LiveSession:
    """A benchmark at one problem size on one GPU; measures compiled configurations.

    It is also the ``Executor`` of bat.recording.engine (``compiler``, ``job``, ``measure``,
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
        self.source_name, self.source = source.name, source.read_text()
        self.cp = cupy_module()
        self.cp.cuda.Device(device_id).use()
        self.info = device_info(device_id)
        self.arch = f"sm_{self.info['compute_capability']}"
        self.host = self.runner.make_inputs(self.size.values, seed)
        symbols = set(self.runner.symbol_names())
        self.dev = {n: self.cp.asarray(a) for n, a in self.host.items() if n not in symbols}
        self._reference: dict | None = None
        self._tmp = tempfile.TemporaryDirectory(prefix="bat-cubin-")
        self.broken: str | None = None
        self._pending: Any = None  # the end event of a run that timed out

    # -- what a recording needs ----------------------------------------------------------
    @property
    def reference(self) -> dict:
        """The expected outputs (computed on first use, then kept)."""
        if self._reference is None:
            self._reference = self.runner.reference(self.host, self.size.values)
        return self._reference

    def input_recipe(self) -> dict[str, Any]:
        return self.runner.input_recipe(self.size.values, self.seed)

    def job(self, key: int, config: Mapping[str, Any]) -> CompileJob:
        macros = self.runner.macros(config, self.size.values)
        return CompileJob(key, self.source, dict(macros), self.arch, self.source_name)

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
                cost_s=(compile_ms + bench_ms) / 1000.0, message=message, extra=extra)

        try:
            launches = self.runner.launches(cfg, self.size.values)
        except Exception as exc:  # geometry this configuration cannot have is its failure
            return result(Status.RUNTIME_ERROR, f"launch geometry: {type(exc).__name__}: {exc}")
        try:
            kernels = self._load(compiled.cubin, {launch.kernel for launch in launches})
        except Exception as exc:  # a cubin the driver refuses is this configuration's failure
            return result(Status.RUNTIME_ERROR, f"loading the module failed: {exc}")
        extra.update(_resources(kernels, launches, compiled))
        if refused := _over_limits(kernels, launches):
            return result(Status.RUNTIME_ERROR, refused)
        try:
            self._poison_outputs()
            self._run(kernels, launches)  # warm-up
            times = tuple(self._run(kernels, launches) for _ in range(self.repeats))
            outputs = {n: self.cp.asnumpy(self.dev[n]) for n in self.runner.output_names()}
        except _Timeout:
            return result(Status.TIMEOUT, self._after_timeout())
        except Exception as exc:  # launch failures: too many resources, illegal address, ...
            message = f"{type(exc).__name__}: {exc}"
            if sick := self._unhealthy():
                self.broken = f"CUDA error after {cfg}: {sick}"
            return result(Status.RUNTIME_ERROR, message)
        try:
            check = self.runner.verify(outputs, self.reference)
        except Exception as exc:  # a verifier that cannot compare says the output is wrong
            return result(Status.INCORRECT, f"verification failed: {type(exc).__name__}: {exc}", times)
        if not check.ok:
            return result(Status.INCORRECT, check.message, times)
        return result(Status.OK, "", times)

    def launch_once(self, config: Mapping[str, Any], compiled: CompileResult) -> None:
        """Load and run one compiled configuration once, untimed and unverified (for a profiler)."""
        launches = self.runner.launches(dict(config), self.size.values)
        kernels = self._load(compiled.cubin, {launch.kernel for launch in launches})
        if refused := _over_limits(kernels, launches):
            raise BackendError(refused)
        try:
            self._run(kernels, launches)
        except _Timeout:
            raise BackendError(self._after_timeout()) from None
        self.cp.cuda.runtime.deviceSynchronize()

    def _load(self, cubin: bytes, names: set[str]) -> dict[str, Any]:
        path = Path(self._tmp.name) / "module.cubin"
        path.write_bytes(cubin)
        try:
            module = self.cp.RawModule(path=str(path))
            kernels = {name: module.get_function(name) for name in sorted(names)}
            for name in self.runner.symbol_names():
                array = np.ascontiguousarray(self.host[name])
                module.get_global(name).copy_from_host(array.ctypes.data_as(ctypes.c_void_p),
                                                        array.nbytes)
        finally:
            path.unlink(missing_ok=True)
        return kernels

    def _poison_outputs(self) -> None:
        """Fill outputs that are not reset before each run with 0xFF bytes (NaN for floats)."""
        resets = set(self.runner.reset_names())
        for name in self.runner.output_names():
            if name not in resets:
                self.dev[name].view(self.cp.uint8).fill(0xFF)

    def _run(self, kernels: Mapping[str, Any], launches: list) -> float:
        """One run: restore the reset arrays, then time every launch between two events (ms)."""
        for name in self.runner.reset_names():
            self.dev[name].set(self.host[name])
        start, end = self.cp.cuda.Event(), self.cp.cuda.Event()
        start.record()
        for launch in launches:
            args = tuple(a[1] if isinstance(a, tuple) else self.dev[a] for a in launch.args)
            kernels[launch.kernel](launch.grid, launch.block, args, shared_mem=launch.shared_bytes)
        end.record()
        if not self._wait(end, self.timeout_s):
            self._pending = end
            raise _Timeout
        return float(self.cp.cuda.get_elapsed_time(start, end))

    @staticmethod
    def _wait(event: Any, seconds: float) -> bool:
        """Poll ``event`` until it completes (True) or ``seconds`` pass (False)."""
        deadline = time.monotonic() + seconds
        pause = 1e-5
        while not event.done:
            if time.monotonic() >= deadline:
                return False
            time.sleep(pause)
            pause = min(pause * 2, 2e-3)
        return True

    def _after_timeout(self) -> str:
        message = f"a run took longer than {self.timeout_s:g} s"
        if self._wait(self._pending, self.timeout_s):
            return message + " (it finished within the grace period; the device is usable)"
        self.broken = f"a kernel is still running {2 * self.timeout_s:g} s after its launch"
        return message + " and was still running after a grace period as long again"

    def _unhealthy(self) -> str | None:
        try:
            self.cp.cuda.runtime.deviceSynchronize()
        except Exception as exc:  # a sticky error: every later call fails the same way
            return str(exc)
        return None

    def close(self) -> None:
        self._tmp.cleanup()


def _resources(kernels: Mapping[str, Any], launches: list, compiled: CompileResult
               ) -> dict[str, float]:
    """Static resources of the first launch's kernel (CUDA attributes, spills from ptxas)."""
    main = launches[0]
    attrs = kernels[main.kernel].attributes
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


def _over_limits(kernels: Mapping[str, Any], launches: list) -> str:
    """Why the driver would refuse a launch (block larger than the kernel allows), or ""."""
    for launch in launches:
        attrs = kernels[launch.kernel].attributes
        threads = math.prod(launch.block)
        if threads > attrs["max_threads_per_block"]:
            return (f"{launch.kernel}: block {launch.block} has {threads} threads; this kernel "
                    f"allows {attrs['max_threads_per_block']} ({attrs['num_regs']} registers "
                    "per thread): too many resources requested for launch")
    return ""
