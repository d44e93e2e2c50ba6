"""Command backend: tunes any program through its compile, run and verify commands.

Each configuration gets its own temporary directory: the compile template
is rendered with the configuration's values and run there, then the run
command is repeated ``repeats`` times (every sample kept), the objective read
from its output (or its wall time taken), and the optional verify command
run after the first run (its exit status decides correctness; the first
run's standard output is saved as ``run.out`` in the directory for it).
Commands are run without a shell (see bat/core/commandspec.py), each in its own
session under the step's time limit, tagged ``BAT_STEP=...`` in its
environment (bat.core.lifetime): a step past its limit has its whole process
group and every tagged descendant killed (also one that called ``setsid``)
and the configuration is recorded as ``timeout``; leftovers of a
configuration are killed when it is done. A step's output goes to an
unnamed temporary file, of which only the last ``TAIL_BYTES`` are read (the
objective regex sees those; a run printing 300 MB costs no memory), except
the first run's standard output when a verify command reads it as
``run.out``. The per-configuration directories live in one scratch folder
per backend (bat/backends/scratch.py), removed at close, by a guardian
process if BAT is killed, or at the next start.

Compiles of configurations announced with ``prefetch`` run ahead in a
thread pool while runs go on: the work is done by child processes, so
threads are enough to keep several compilers busy (a process pool would only
add a second layer of processes). On a machine with few cores a compile
competes with the timed run, so the pool holds one worker unless asked.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from bat.backends.scratch import Scratch
from bat.core.commandspec import DIR_PLACEHOLDER, CommandSpec, Template, value_text
from bat.core.dataset import Status
from bat.core.errors import BackendError
from bat.core.lifetime import TAG_VARIABLE, kill_tagged
from bat.core.problem import Backend, EvalResult, no_noise

if TYPE_CHECKING:
    from bat.core.benchmark import Benchmark

#: Characters of a failing step's output kept in the message.
MESSAGE_CHARS = 2000
#: Bytes read from the end of a step's output (the objective regex sees these).
TAIL_BYTES = 1 << 20


@dataclass(frozen=True)
class StepResult:
    """One finished (or killed) command; ``stdout`` and ``stderr`` hold the last TAIL_BYTES of each."""

    returncode: int | None  # None: killed at the time limit, or the program was not found
    stdout: str
    stderr: str
    seconds: float
    timed_out: bool = False

    def tail(self) -> str:
        """The end of stderr (stdout when stderr is empty), for messages."""
        text = (self.stderr.strip() or self.stdout.strip())
        return text[-MESSAGE_CHARS:]


def run_step(argv: list[str], cwd: Path, limit_s: float, *, tag: str = "",
             stdout_path: Path | None = None) -> StepResult:
    """Run ``argv`` in ``cwd`` without a shell, in its own session, killed with its descendants after
    ``limit_s``; ``tag`` marks its processes (bat.core.lifetime); ``stdout_path`` keeps all of stdout."""
    start = time.perf_counter()
    env = {**os.environ, TAG_VARIABLE: tag} if tag else None
    with _output(stdout_path) as out, tempfile.TemporaryFile() as err:
        try:
            proc = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                    env=env, start_new_session=True)
        except OSError as exc:  # not found, not executable
            return StepResult(None, "", f"cannot start {argv[0]!r}: {exc.strerror}",
                              time.perf_counter() - start)
        try:
            proc.wait(timeout=limit_s)
            timed_out = False
        except subprocess.TimeoutExpired:
            _kill(proc, tag)
            proc.wait()
            timed_out = True
        seconds = time.perf_counter() - start
        _kill_group(proc.pid)  # background children the program left behind in its group
        return StepResult(None if timed_out else proc.returncode, _tail(out), _tail(err), seconds, timed_out)


def _output(path: Path | None) -> BinaryIO:
    """Where a step's stdout goes: ``path`` (kept), or an unnamed file gone when closed."""
    return open(path, "w+b") if path is not None else tempfile.TemporaryFile()


def _tail(fh: BinaryIO) -> str:
    size = fh.seek(0, os.SEEK_END)
    fh.seek(max(0, size - TAIL_BYTES))
    return fh.read().decode(errors="replace")


def _kill(proc: subprocess.Popen, tag: str) -> None:
    """The step, its process group and every process carrying its tag."""
    _kill_group(proc.pid)
    with contextlib.suppress(ProcessLookupError):
        proc.kill()
    if tag:
        kill_tagged(tag)


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


@dataclass
class _Build:
    """A configuration's directory after its compile step; ``tag`` prefixes its steps' tags."""

    workdir: Path
    tag: str
    seconds: float
    compile_ms: float | None
    failure: EvalResult | None = None


class CommandBackend:
    """Evaluates configurations by running the commands of ``spec`` (see the module docstring)."""

    name = "command"

    def __init__(self, spec: CommandSpec, *, benchmark: str, directory: Path,
                 parameters: tuple[str, ...], size: Mapping[str, Any] | None = None,
                 constants: Mapping[str, Any] | None = None, compile_workers: int = 1) -> None:
        if compile_workers < 1:
            raise BackendError(f"compile_workers must be >= 1, got {compile_workers}")
        for template in (spec.compile, spec.run, spec.verify):
            _check_program(template)
        self.spec = spec
        self.benchmark = benchmark
        self.directory = Path(directory).resolve()
        self.parameters = parameters
        self.size = dict(size or {})
        fixed = {**(constants or {}), **self.size}
        self._fixed = {k: value_text(v) for k, v in fixed.items()} | {DIR_PLACEHOLDER: str(self.directory)}
        self._scratch = Scratch()
        self._numbers = itertools.count()
        self._pool = ThreadPoolExecutor(max_workers=compile_workers, thread_name_prefix="bat-cc")
        self._pending: dict[tuple, Future[_Build]] = {}

    def describe(self) -> str:
        size = ", ".join(f"{k}={v}" for k, v in self.size.items())
        return (f"running commands of {self.benchmark} ({size}): {self.spec.repeats} run(s) per "
                f"configuration, objective {self.spec.objective.describe()}")

    # -- compile ---------------------------------------------------------------
    def prefetch(self, configs: Iterable[Mapping[str, Any]]) -> None:
        """Start compiling ``configs`` in the background; ``evaluate`` picks the builds up."""
        for config in configs:
            key = self._key(config)
            if key not in self._pending:
                self._pending[key] = self._pool.submit(self._compile, dict(config))

    def _compile(self, config: dict[str, Any]) -> _Build:
        number = next(self._numbers)
        workdir = Path(tempfile.mkdtemp(prefix=f"{number}-", dir=self._scratch.path))
        tag = f"{self._scratch.tag}/{number}/"
        if self.spec.compile is None:
            return _Build(workdir, tag, 0.0, None)
        step = run_step(self._render(self.spec.compile, config), workdir,
                        self.spec.limits_s["compile"], tag=tag + "compile")
        build = _Build(workdir, tag, step.seconds, step.seconds * 1e3)
        if step.timed_out:
            build.failure = self._result(config, Status.TIMEOUT, build, (), step.seconds,
                                         f"compile exceeded its {self.spec.limits_s['compile']:g} s limit")
        elif step.returncode != 0:
            build.failure = self._result(config, Status.COMPILE_ERROR, build, (), step.seconds,
                                         step.tail() or f"compiler exit status {step.returncode}")
        return build

    # -- evaluate ----------------------------------------------------------------
    def evaluate(self, config: Mapping[str, Any]) -> EvalResult:
        """Compile (or pick up the prefetched build), run ``repeats`` times, verify once."""
        cfg = dict(config)
        future = self._pending.pop(self._key(cfg), None)
        build = future.result() if future is not None else self._compile(cfg)
        try:
            return build.failure or self._run(cfg, build)
        finally:
            kill_tagged(build.tag)  # whatever the configuration's commands left running
            shutil.rmtree(build.workdir, ignore_errors=True)

    def _run(self, config: dict[str, Any], build: _Build) -> EvalResult:
        spec = self.spec
        argv = self._render(spec.run, config)
        spent = build.seconds
        times: list[float] = []
        for i in range(spec.repeats):
            keep = build.workdir / "run.out" if i == 0 and spec.verify is not None else None
            step = run_step(argv, build.workdir, spec.limits_s["run"], tag=f"{build.tag}run{i}", stdout_path=keep)
            spent += step.seconds
            if step.timed_out:
                return self._result(config, Status.TIMEOUT, build, times, spent,
                                    f"run exceeded its {spec.limits_s['run']:g} s limit")
            if step.returncode != 0:
                why = f"run exit status {step.returncode}" if step.returncode is not None else ""
                return self._result(config, Status.RUNTIME_ERROR, build, times, spent,
                                    "; ".join(filter(None, (why, step.tail()))))
            if spec.objective.is_wall:
                times.append(step.seconds * 1e3)
            else:
                try:
                    times.append(spec.objective.read_ms(step.stdout))
                except ValueError as exc:
                    return self._result(config, Status.RUNTIME_ERROR, build, times, spent,
                                        f"{exc}: {step.stdout.strip()[-MESSAGE_CHARS:]!r}")
            if keep is not None and spec.verify is not None:
                check = run_step(self._render(spec.verify, config), build.workdir,
                                 spec.limits_s["verify"], tag=f"{build.tag}verify")
                spent += check.seconds
                if check.timed_out:
                    return self._result(config, Status.TIMEOUT, build, times, spent,
                                        f"verify exceeded its {spec.limits_s['verify']:g} s limit")
                if check.returncode != 0:
                    return self._result(config, Status.INCORRECT, build, times, spent,
                                        "verification failed: " + (check.tail() or
                                                                   f"exit status {check.returncode}"))
        return self._result(config, Status.OK, build, times, spent, "")

    def _result(self, config: dict[str, Any], status: Status, build: _Build,
                times: Iterable[float], spent_s: float, message: str) -> EvalResult:
        samples = tuple(times)
        objective = sum(samples) / len(samples) if status is Status.OK else None
        return EvalResult(config=config, status=status, objective_ms=objective, times_ms=samples,
                          compile_ms=build.compile_ms, cost_s=spent_s, message=message)

    def _render(self, template: Template, config: Mapping[str, Any]) -> list[str]:
        return template.render(self._fixed | {k: value_text(v) for k, v in config.items()}, self.spec.free_text)

    def _key(self, config: Mapping[str, Any]) -> tuple:
        try:
            return tuple(config[name] for name in self.parameters)
        except KeyError as exc:
            raise BackendError(f"configuration lacks parameter {exc.args[0]!r} of "
                               f"{self.benchmark}") from None

    def with_noise(self, noise: str, seed: int) -> Backend:
        return no_noise(self, noise)

    def close(self) -> None:
        """Cancel compiles not yet started, wait for running ones, remove their directories."""
        for future in self._pending.values():
            future.cancel()
        self._pool.shutdown(wait=True)
        for future in self._pending.values():
            if not future.cancelled():
                shutil.rmtree(future.result().workdir, ignore_errors=True)
        self._pending.clear()
        self._scratch.close()


def _check_program(template: Template | None) -> None:
    """Fail early when a step's program (no placeholder, no path) is not on PATH."""
    if template is None or template.program is None or "/" in template.program:
        return
    if shutil.which(template.program) is None:
        raise BackendError(f"program {template.program!r} of command {template.text!r} is not "
                           "on PATH")


def command_backend(benchmark: Benchmark, *, small: bool = False, compile_workers: int = 1,
                    repeats: int | None = None, run_timeout_s: float | None = None) -> CommandBackend:
    """The backend of a benchmark with a command section, at its published (or small) size; ``repeats`` and
    ``run_timeout_s`` replace the section's repeats and run time limit when given."""
    spec = benchmark.command_spec
    if spec is None:
        raise BackendError(f"{benchmark.path}: command: this benchmark has no command section")
    if repeats is not None:
        spec = dataclasses.replace(spec, repeats=repeats)
    if run_timeout_s is not None:
        spec = dataclasses.replace(spec, limits_s={**spec.limits_s, "run": run_timeout_s})
    size = dict(benchmark.size("small" if small else None).values)
    return CommandBackend(spec, benchmark=benchmark.name, directory=benchmark.directory,
                          parameters=tuple(benchmark.space.names), size=size,
                          constants=benchmark.constants, compile_workers=compile_workers)
