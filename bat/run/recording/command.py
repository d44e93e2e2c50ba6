"""Recording a command benchmark: the host's provenance and the executor ``bat record`` drives.

The recording engine (bat/record.py: work list, journal, resume, merge into a
dataset) is device-neutral; ``CommandExecutor`` is its device side for a
benchmark with a "command" section. The engine's own compile pool is meant
for NVRTC jobs; here compiling is part of the command backend, so the
executor's pool job is a no-op and the executor itself starts the compiles of
the next configurations of the work list in the backend's thread pool (run
the engine with ``workers=0``). The dataset's metadata records where it was
measured: host CPU, compiler version, date and the command templates.
"""

from __future__ import annotations

import platform
import re
import shutil
import subprocess
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bat.backends.command import CommandBackend, command_backend
from bat.core.commandspec import CommandSpec
from bat.core.dataset import Dataset, DatasetMeta
from bat.core.problem import EvalResult
from bat.run.recording.destination import check_out, default_out, journal_of
from bat.run.recording.engine import (
    CompileJob,
    Outcome,
    RecordPlan,
    WorkList,
    all_valid,
    open_journal,
    run_recording,
    sample_valid,
    to_dataset,
)
from bat.toolchain.nvrtc import CompileResult

if TYPE_CHECKING:
    from bat.core.benchmark import Benchmark


def host_cpu() -> str:
    """The CPU model name (from /proc/cpuinfo on Linux), else what ``platform`` knows."""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text(errors="replace").splitlines():
            if line.lower().startswith(("model name", "hardware")) and ":" in line:
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def host_id(cpu: str | None = None) -> str:
    """A short id for the host CPU, used where GPU datasets hold the GPU's (``Intel_Xeon_Gold_6230``)."""
    text = re.sub(r"\((R|TM|tm|r)\)|\bCPU\b|@.*$|\bProcessor\b|\d+-Core", " ", cpu or host_cpu())
    words = re.findall(r"[A-Za-z0-9]+", text)
    return "_".join(words) or platform.machine() or "host"


def compiler_version(spec: CommandSpec) -> str:
    """First line of ``<compiler> --version`` for the compile template's program ('' if unknown)."""
    program = spec.compile.program if spec.compile is not None else None
    if program is None or shutil.which(program) is None:
        return ""
    try:
        out = subprocess.run([program, "--version"], capture_output=True, text=True, timeout=20,
                             check=False)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    lines = (out.stdout or out.stderr).strip().splitlines()
    return lines[0].strip() if lines else ""


def command_meta(benchmark: Benchmark, backend: CommandBackend, *, size_name: str) -> DatasetMeta:
    """Dataset metadata of a command recording, with the host's provenance."""
    cpu = host_cpu()
    spec = backend.spec
    return DatasetMeta(
        benchmark=benchmark.name, space_hash=benchmark.space.space_hash, gpu=host_id(cpu),
        gpu_name=cpu, problem_size=dict(backend.size),
        input_recipe={"size": size_name, "note": "inputs are made by the program itself"},
        toolkit=compiler_version(spec), date=datetime.now(UTC).isoformat(timespec="seconds"),
        source=f"measured with bat's command backend ({platform.system()} {platform.machine()})",
        extra={"backend": "command", "host_cpu": cpu, "commands": spec.templates(),
               "objective": spec.objective.describe(), "repeats": spec.repeats,
               "time_limit_s": dict(spec.limits_s)},
    ).remember(benchmark)


def skip_compile(job: CompileJob) -> CompileResult:
    """The engine's compile step: nothing to do, the command backend compiles."""
    return CompileResult(True, "", 0.0)


class CommandExecutor:
    """The device side of ``run_recording`` for a command benchmark."""

    compiler = staticmethod(skip_compile)

    def __init__(self, backend: CommandBackend, plan: RecordPlan, *, ahead: int = 2) -> None:
        self.backend = backend
        self.plan = plan
        self.ahead = ahead
        self.broken: str | None = None
        self._position = {int(k): i for i, k in enumerate(plan.work.ids.tolist())}

    def job(self, key: int, config: Mapping[str, Any]) -> CompileJob:
        """Announce ``key``: start compiling it and the next ``ahead`` configurations."""
        pos = self._position[key]
        upcoming = self.plan.work.ids[pos:pos + 1 + self.ahead]
        space = self.plan.space
        self.backend.prefetch(space.config(row) for row in space.from_ids(upcoming))
        return CompileJob(key=key, source="", macros=dict(config), arch="host")

    def measure(self, config: Mapping[str, Any], compiled: CompileResult) -> EvalResult:
        return self.backend.evaluate(config)


def record_command_benchmark(
    benchmark: Benchmark,
    out: str | Path | None,
    *,
    small: bool = False,
    sample: int | None = None,
    seed: int = 0,
    compile_workers: int = 1,
    limit: int | None = None,
    max_seconds: float | None = None,
    resume: bool = False,
    force: bool = False,
    repeats: int | None = None,
    timeout_s: float | None = None,
) -> tuple[Dataset, Outcome, Path]:
    """Measure every valid configuration (or a seeded sample) into the dataset ``out`` (None: the data
    folder's default file for this host); returns the dataset, how far it got, and where it went.

    A journal beside ``out`` (``<out>.journal.jsonl``, as ``bat record``) keeps finished
    configurations, so an interrupted recording resumes with ``resume=True``; an existing dataset
    is replaced only with ``force``. ``limit`` and ``max_seconds`` stop it early, between configurations.
    ``repeats`` and ``timeout_s`` (of one run) replace the command section's when given.
    """
    out = check_out(Path(out), resume=resume, force=force) if out is not None else default_out(
        benchmark, host_id(), small=small, resume=resume, force=force)
    space = benchmark.space
    work: WorkList = sample_valid(space, sample, seed) if sample else all_valid(space)
    backend = command_backend(benchmark, small=small, compile_workers=compile_workers, repeats=repeats,
                              run_timeout_s=timeout_s)
    size_name = "small" if small else "published"
    plan = RecordPlan(space=space, work=work, size_name=size_name,
                      meta=command_meta(benchmark, backend, size_name=size_name),
                      device={"host": host_id(), "compiler": compiler_version(backend.spec)})
    journal = open_journal(plan, journal_of(out), resume=resume)
    try:
        outcome = run_recording(plan, CommandExecutor(backend, plan, ahead=compile_workers + 1),
                                journal, workers=0, limit=limit, max_seconds=max_seconds)
    finally:
        backend.close()
    dataset = to_dataset(plan, journal)
    dataset.save(out)
    if outcome.complete:
        journal.remove()
    return dataset, outcome, out
