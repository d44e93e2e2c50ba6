"""Compile benchmark kernels to cubin with NVRTC (cuda-bindings), no GPU needed.

``cuda.bindings.nvrtc`` finds ``libnvrtc`` from the ``nvidia-cuda-nvrtc``
wheel through ``cuda-pathfinder`` (a dependency of cuda-bindings). Compiling
to a cubin for a real architecture (``sm_90``) runs ptxas, whose ``-v`` log
gives registers, shared memory, stack frame and spills (bat.toolchain.resources). A
configuration that fails to compile is data (``CompileResult.ok`` False, the
log says why); only a missing library or a broken NVRTC raises.

Cache: with ``BAT_NVRTC_CACHE`` naming a folder, each result is kept there
under the sha256 of what determines it (NVRTC's version, the file name, the
options with their macros, the source text) and a later compile of the same
input reads it back instead of compiling: the test suite sets it, so tests
that compile the same kernels share the work, within a run and across runs.
Entries are written whole under a temporary name and renamed, so processes
compiling in parallel never read half an entry.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from bat.core.benchmark import extents as benchmark_extents
from bat.core.errors import BackendError, MissingDependencyError
from bat.toolchain.resources import ResourceUsage, parse_ptxas_log

if TYPE_CHECKING:  # kept out of compile workers, which import this module
    from bat.core.kernel import KernelRunner

DEFAULT_OPTIONS: tuple[str, ...] = ("--std=c++17",)
#: environment variable naming the folder of cached compile results (unset: no cache)
CACHE_ENV = "BAT_NVRTC_CACHE"


@dataclass(frozen=True)
class CompileResult:
    """The outcome of one NVRTC compilation."""

    ok: bool
    log: str
    seconds: float
    cubin: bytes = b""
    usage: Mapping[str, ResourceUsage] | None = None  # per entry, when ok

    def first_error(self) -> str:
        """The first line of the log that names an error (or the log's first line)."""
        lines = [line.strip() for line in self.log.splitlines() if line.strip()]
        errors = [line for line in lines if "error" in line]
        return (errors or lines or ["(empty log)"])[0]


def _nvrtc():
    try:
        from cuda.bindings import nvrtc
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise MissingDependencyError(
            "compiling kernels needs cuda-bindings and nvidia-cuda-nvrtc "
            "(the 'nvrtc' extra: pip install 'bat-autotune[nvrtc]'): " + str(exc)
        ) from exc
    return nvrtc


def macro_options(macros: Mapping[str, object]) -> list[str]:
    """``-DNAME=value`` for every macro (floats in shortest round-trip form)."""
    return [f"-D{name}={value!r}" if isinstance(value, float) else f"-D{name}={value}"
            for name, value in macros.items()]


def compile_options(macros: Mapping[str, object], arch: str) -> list[str]:
    """The full option list: architecture, verbose ptxas, the standard, and the macros."""
    return [f"--gpu-architecture={arch}", "--ptxas-options=-v", *DEFAULT_OPTIONS,
            *macro_options(macros)]


def _check(nvrtc, result, what: str) -> None:
    if result != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        _, text = nvrtc.nvrtcGetErrorString(result)
        raise BackendError(f"NVRTC {what} failed: {text.decode(errors='replace')}")


def compile_source(
    source: str,
    macros: Mapping[str, object],
    *,
    arch: str = "sm_90",
    name: str = "kernel.cu",
    extra_options: Sequence[str] = (),
    headers: Mapping[str, str] | None = None,
) -> CompileResult:
    """Compile CUDA source to a cubin for ``arch`` with ``-D`` macros; parse ptxas' report.

    ``headers`` (include name -> text) are the files the source may ``#include "name"``.
    """
    nvrtc = _nvrtc()
    options = [*compile_options(macros, arch), *extra_options]
    included = sorted((headers or {}).items())
    folder = os.environ.get(CACHE_ENV)
    if not folder:
        return _compile(nvrtc, source, name, options, included)
    _, major, minor = nvrtc.nvrtcVersion()
    parts = [major, minor, name, options, source, *([included] if included else [])]
    key = hashlib.sha256(json.dumps(parts).encode()).hexdigest()
    path = Path(folder) / f"{key}.json"
    if path.exists():
        return _cached(path)
    result = _compile(nvrtc, source, name, options, included)
    _store(path, result)
    return result


def _cached(path: Path) -> CompileResult:
    entry = json.loads(path.read_text())
    cubin = base64.b64decode(entry["cubin"])
    return CompileResult(entry["ok"], entry["log"], entry["seconds"], cubin,
                         parse_ptxas_log(entry["log"]) if entry["ok"] else None)


def _store(path: Path, result: CompileResult) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps({"ok": result.ok, "log": result.log, "seconds": result.seconds,
                               "cubin": base64.b64encode(result.cubin).decode()}))
    os.replace(tmp, path)


def _compile(nvrtc, source: str, name: str, options: list[str],
             headers: Sequence[tuple[str, str]] = ()) -> CompileResult:
    err, prog = nvrtc.nvrtcCreateProgram(source.encode(), name.encode(), len(headers),
                                         [text.encode() for _, text in headers],
                                         [include.encode() for include, _ in headers])
    _check(nvrtc, err, "program creation")
    try:
        start = time.perf_counter()
        (status,) = nvrtc.nvrtcCompileProgram(prog, len(options), [o.encode() for o in options])
        seconds = time.perf_counter() - start
        err, size = nvrtc.nvrtcGetProgramLogSize(prog)
        _check(nvrtc, err, "log size")
        buf = b" " * size
        (err,) = nvrtc.nvrtcGetProgramLog(prog, buf)
        _check(nvrtc, err, "log")
        log = buf.rstrip(b"\x00 ").decode(errors="replace")
        if status == nvrtc.nvrtcResult.NVRTC_ERROR_COMPILATION:
            return CompileResult(False, log, seconds)
        _check(nvrtc, status, "compilation")
        err, size = nvrtc.nvrtcGetCUBINSize(prog)
        _check(nvrtc, err, "cubin size")
        cubin = b" " * size
        (err,) = nvrtc.nvrtcGetCUBIN(prog, cubin)
        _check(nvrtc, err, "cubin")
        return CompileResult(True, log, seconds, cubin, parse_ptxas_log(log))
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


def compile_config(
    runner: KernelRunner,
    config: Mapping[str, object],
    *,
    arch: str = "sm_90",
    size: Mapping[str, int | float] | None = None,
) -> CompileResult:
    """Compile one configuration of a runner's benchmark (published problem size unless ``size``)."""
    extents = benchmark_extents(runner.bench.problem_size if size is None else size)
    path = runner.source_path()
    source = runner.prepare_source(runner.source_text(), config)
    return compile_source(source, runner.macros(config, extents), arch=arch, name=path.name,
                          headers=runner.headers())


def inspect_config(
    runner: KernelRunner,
    config: Mapping[str, object],
    arch: str = "sm_90",
    size: Mapping[str, int | float] | None = None,
) -> ResourceUsage:
    """Static resource use of a benchmark's main kernel for one configuration (``bat inspect``).

    Raises BackendError with the compiler's first error line when it does not compile.
    """
    name = runner.bench.name
    result = compile_config(runner, config, arch=arch, size=size)
    if not result.ok:
        raise BackendError(
            f"{name}: configuration {dict(config)} does not compile for {arch}: {result.first_error()}"
        )
    kernel = runner.bench.kernel["name"]
    if result.usage is None or kernel not in result.usage:
        raise BackendError(f"{name}: no ptxas report for kernel {kernel!r} in the log")
    return result.usage[kernel]
