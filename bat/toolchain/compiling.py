"""Compiling configurations ahead of the device: compile jobs, two NVRTC compilers, the pool.

A ``CompileJob`` (source, ``-D`` macros, architecture) is picklable and goes
to a worker process; a compiler turns it into a ``bat.toolchain.nvrtc.CompileResult``
(cubin, log, seconds, ptxas resource use) and never raises for a
configuration that does not compile: that is data. Two compilers: NVRTC
through cuda-bindings (``nvrtc_compiler``, bat.toolchain.nvrtc, needs no GPU) and NVRTC
through CuPy's own bindings (``cupy_compiler``, what the GPU machine has);
both use the same options (``bat.toolchain.nvrtc.compile_options``). Neither needs a
CUDA context. This module imports no pandas, so worker processes start fast.
"""

from __future__ import annotations

import multiprocessing
import time
from collections import deque
from collections.abc import Callable, Generator, Iterator, Mapping
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bat.core.errors import BackendError
from bat.toolchain.nvrtc import CompileResult, compile_options, compile_source
from bat.toolchain.resources import parse_ptxas_log

if TYPE_CHECKING:
    from bat.core.problem import EvalResult


@dataclass(frozen=True)
class CompileJob:
    """One configuration to compile; picklable, it travels to a worker process."""

    key: int
    source: str
    macros: dict[str, Any]
    arch: str
    name: str = "kernel.cu"
    headers: tuple[tuple[str, str], ...] = ()  # (include name, text) of files the source includes


Compiler = Callable[[CompileJob], CompileResult]


def nvrtc_compiler(job: CompileJob) -> CompileResult:
    """Compile with NVRTC through cuda-bindings (bat.toolchain.nvrtc): works without a GPU."""
    return compile_source(job.source, job.macros, arch=job.arch, name=job.name, headers=dict(job.headers))


def cupy_compiler(job: CompileJob) -> CompileResult:
    """Compile with NVRTC through CuPy's bindings (the GPU machine has CuPy, maybe no wheel)."""
    from cupy.cuda import nvrtc

    prog = nvrtc.createProgram(job.source, job.name, tuple(text for _, text in job.headers),
                               tuple(include for include, _ in job.headers))
    try:
        start = time.perf_counter()
        try:
            nvrtc.compileProgram(prog, compile_options(job.macros, job.arch))
            ok = True
        except nvrtc.NVRTCError:
            ok = False
        seconds = time.perf_counter() - start
        log = nvrtc.getProgramLog(prog)
        if not ok:
            return CompileResult(False, log or "NVRTC compilation failed", seconds)
        return CompileResult(True, log, seconds, nvrtc.getCUBIN(prog), parse_ptxas_log(log))
    finally:
        nvrtc.destroyProgram(prog)


# -- the compile pool ------------------------------------------------------------------------
def _compile_safely(compiler: Compiler, job: CompileJob) -> CompileResult:
    try:
        return compiler(job)
    except Exception as exc:  # any compiler failure is a compile error of this configuration
        return CompileResult(False, f"compiler raised {type(exc).__name__}: {exc}", 0.0)


def compile_ahead(
    jobs: Iterator[CompileJob], compiler: Compiler, *, workers: int, ahead: int | None = None
) -> Generator[tuple[CompileJob, CompileResult], None, None]:
    """Compile ``jobs`` in a pool of ``workers`` processes, yielding results in job order.

    Up to ``ahead`` jobs (default 2 per worker + 2) are in flight, so the
    device rarely waits for NVRTC. ``workers=0`` compiles in this process.
    Workers are spawned, never forked: the parent may hold a CUDA context.
    """
    if workers <= 0:
        for job in jobs:
            yield job, _compile_safely(compiler, job)
        return
    ahead = ahead or 2 * workers + 2
    pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"))
    pending: deque[tuple[CompileJob, Future]] = deque()
    try:
        for job in jobs:
            pending.append((job, pool.submit(_compile_safely, compiler, job)))
            if len(pending) >= ahead:
                yield _done(*pending.popleft())
        while pending:
            yield _done(*pending.popleft())
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _done(job: CompileJob, future: Future) -> tuple[CompileJob, CompileResult]:
    try:
        return job, future.result()
    except BrokenProcessPool as exc:
        raise BackendError(f"a compiler process died while compiling configuration id {job.key}; "
                           "finished configurations are in the journal: resume") from exc




def compile_failure(config: Mapping[str, Any], compiled: CompileResult) -> EvalResult:
    """The result of a configuration that did not compile (it never reaches the device)."""
    from bat.core.dataset import Status  # imported here: compile workers load this module without pandas
    from bat.core.problem import EvalResult

    ms = compiled.seconds * 1000.0
    return EvalResult(config=dict(config), status=Status.COMPILE_ERROR, compile_ms=ms,
                      cost_s=compiled.seconds, message=compiled.first_error())
