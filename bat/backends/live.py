"""Live CuPy backend: compile a configuration with NVRTC, run it on the GPU, time and verify it.

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

The same session is the executor of ``bat record`` (bat.record): there the
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
import re
import tempfile
import time
from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from bat.compiling import CompileJob, CompileResult, cupy_compiler
from bat.dataset import Status
from bat.errors import BackendError, MissingDependencyError
from bat.problem import EvalResult
from bat.record import compile_failure

#: Timed runs after the warm-up (the published data used 7 and more).
DEFAULT_REPEATS = 7
#: Seconds one run (all launches of one configuration) may take before it counts as a timeout.
DEFAULT_TIMEOUT_S = 10.0
#: Seed of the input recipe (inputs are byte-identical for a given size and seed).
INPUT_SEED = 0


def _cupy():
    try:
        import cupy
    except ImportError as exc:
        raise MissingDependencyError(f"the live backend needs CuPy: {exc}") from exc
    return cupy


def short_gpu_name(name: str) -> str:
    """A dataset GPU id from a device name: ``NVIDIA GeForce RTX 3090`` -> ``RTX_3090``."""
    name = re.sub(r"^(NVIDIA\s+)?(GeForce\s+|Tesla\s+|Quadro\s+)?", "", name.strip())
    return re.sub(r"[^A-Za-z0-9]+", "_", name).strip("_") or "GPU"


def _version(v: int) -> str:
    return f"{v // 1000}.{(v % 1000) // 10}"


def device_info(device_id: int = 0) -> dict[str, Any]:
    """Name, compute capability, clocks and software versions of a CUDA device."""
    cp = _cupy()
    rt = cp.cuda.runtime
    props = rt.getDeviceProperties(device_id)
    name = props["name"]
    name = name.decode() if isinstance(name, bytes) else str(name)
    attrs = getattr(cp.cuda.Device(device_id), "attributes", {})
    driver_module = ""
    proc = Path("/proc/driver/nvidia/version")
    if proc.is_file() and (m := re.search(r"Kernel Module\s+(\S+)", proc.read_text())):
        driver_module = m.group(1)
    nv_major, nv_minor = cp.cuda.nvrtc.getVersion()
    return {
        "gpu_name": name,
        "compute_capability": cp.cuda.Device(device_id).compute_capability,
        "sm_count": props.get("multiProcessorCount"),
        "max_sm_clock_mhz": (attrs.get("ClockRate") or props.get("clockRate") or 0) / 1000 or None,
        "max_memory_clock_mhz": (attrs.get("MemoryClockRate") or props.get("memoryClockRate") or 0)
        / 1000 or None,
        "memory_bytes": props.get("totalGlobalMem"),
        "driver": driver_module or _version(rt.driverGetVersion()),
        "cuda_driver_api": _version(rt.driverGetVersion()),
        "cuda_runtime": _version(rt.runtimeGetVersion()),
        "nvrtc": f"{nv_major}.{nv_minor}",
        "cupy": cp.__version__,
    }


class _Timeout(Exception):
    pass


class LiveSession:
    """A benchmark at one problem size on one GPU; measures compiled configurations.

    It is also the ``Executor`` of bat.record (``compiler``, ``job``, ``measure``, ``broken``).
    """

    compiler = staticmethod(cupy_compiler)

    def __init__(
        self,
        benchmark: str,
        size: str | Mapping[str, int] | None = None,
        *,
        repeats: int = DEFAULT_REPEATS,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        seed: int = INPUT_SEED,
        device_id: int = 0,
    ) -> None:
        from bat.benchmark import load_benchmark
        from bat.kernel import load_runner

        if repeats < 1:
            raise BackendError(f"repeats must be >= 1, got {repeats}")
        self.bench = load_benchmark(benchmark)
        self.runner = load_runner(self.bench.name)
        self.size_name, self.size = _size(self.bench, size)
        self.repeats, self.timeout_s, self.seed = repeats, timeout_s, seed
        source = Path(self.bench.directory) / self.bench.kernel.get("source", self.runner.source)
        self.source_name, self.source = source.name, source.read_text()
        self.cp = _cupy()
        self.cp.cuda.Device(device_id).use()
        self.info = device_info(device_id)
        self.arch = f"sm_{self.info['compute_capability']}"
        self.host = self.runner.make_inputs(self.size, seed)
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
            self._reference = self.runner.reference(self.host, self.size)
        return self._reference

    def input_recipe(self) -> dict[str, Any]:
        return self.runner.input_recipe(self.size, self.seed)

    def job(self, key: int, config: Mapping[str, Any]) -> CompileJob:
        macros = self.runner.macros(config, self.size)
        return CompileJob(key, self.source, dict(macros), self.arch, self.source_name)

    def describe(self) -> str:
        size = ", ".join(f"{k}={v}" for k, v in self.size.items())
        return (f"live on {self.info['gpu_name']} ({self.arch}): {self.bench.name} at the "
                f"{self.size_name} size ({size}), {self.repeats} timed runs after a warm-up")

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
            launches = self.runner.launches(cfg, self.size)
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
        launches = self.runner.launches(dict(config), self.size)
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


def _size(bench: Any, size: str | Mapping[str, int] | None) -> tuple[str, dict[str, Any]]:
    if size is None or size == "published":
        return "published", dict(bench.problem_size)
    if size == "small":
        if not bench.small_problem_size:
            raise BackendError(f"{bench.path}: small_problem_size: this benchmark has none")
        return "small", {**bench.problem_size, **bench.small_problem_size}
    if isinstance(size, str):
        raise BackendError(f"unknown problem size {size!r}; valid: published, small")
    return "custom", {**bench.problem_size, **size}


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


class LiveBackend:
    """The Backend of ``bat run`` on a GPU: compiles in this process, then measures.

    With ``counters=True`` every configuration measured ok is also profiled
    under ncu in a separate process (bat.counters.profiler): the Problem does
    not tell the backend which evaluations a tuner wants profiled, so all are.
    That costs seconds of wall time per configuration; it lands in
    ``extra["profile_ms"]``, not in ``cost_s``, and the Problem charges it for
    a profiled re-run of an evaluated configuration.
    """

    name = "live"

    def __init__(self, session: LiveSession, *, counters: bool = False, ncu: str = "ncu") -> None:
        from bat.counters.profiler import CounterProfiler

        self.session = session
        self._key = 0
        self.profiler = (CounterProfiler(session.bench.name, size=session.size_name, seed=session.seed,
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

    def close(self) -> None:
        self.session.close()


def live_target(benchmark: str, size: str | Mapping[str, int] | None = None, *,
                gpu: str | None = None, repeats: int = DEFAULT_REPEATS,
                timeout_s: float = DEFAULT_TIMEOUT_S, counters: bool = False):
    """The target of ``bat run`` on the GPU (no best known time: nothing is replayed)."""
    from bat.runner import Target

    session = LiveSession(benchmark, size, repeats=repeats, timeout_s=timeout_s)
    name = gpu or short_gpu_name(session.info["gpu_name"])
    backend = LiveBackend(session, counters=counters)
    return Target(session.bench.name, name, session.bench.space, backend, None)


def provenance_meta(session: LiveSession, gpu: str | None = None) -> dict[str, Any]:
    """DatasetMeta fields describing a recording made with ``session`` (partial/n_expected aside)."""
    info = session.info
    return {
        "benchmark": session.bench.name,
        "space_hash": session.bench.space.space_hash,
        "gpu": gpu or short_gpu_name(info["gpu_name"]),
        "gpu_name": info["gpu_name"],
        "problem_size": dict(session.size),
        "input_recipe": session.input_recipe(),
        "driver": info["driver"],
        "toolkit": f"CUDA runtime {info['cuda_runtime']}, NVRTC {info['nvrtc']}, CuPy {info['cupy']}",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "source": "bat record (live CuPy backend)",
        "licence": "MIT",
        "notes": f"{session.size_name} problem size; objective = mean of {session.repeats} timed "
                 "runs after one warm-up run (CUDA events, data on the device)",
        "extra": {
            **{k: v for k, v in info.items() if k not in ("gpu_name", "driver")},
            "arch": session.arch,
            "repeats": session.repeats,
            "timeout_s": session.timeout_s,
            "size_name": session.size_name,
        },
    }
