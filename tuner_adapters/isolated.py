"""Any BAT tuner in its own sandboxed process: ``isolate:NAME`` (``bat run/compare --isolate``).

The tuner runs as ``python -m bat.protocol.remote NAME`` (a Python tuner class
needs no change: it sees a ``RemoteProblem``), in a new session (process
group), with a scratch working folder (also its HOME, TMPDIR and data folder)
that is removed afterwards, an environment without the data paths, and on
Linux a Landlock sandbox (bat.tuner_adapters.sandbox) that lets it read only
its Python installation and its code. The measured data stay in this (the
harness) process, behind the protocol Session and the Problem.

Tuner time. Unless the campaign declares a charge per proposal, the tuner's
time is the CPU time of its process between a reply and its next request
(the sum over its threads, plus children it has waited for), read from
``/proc`` by this process; whatever the tuner does to its own clocks changes
nothing.

What the tuner's process does wrong ends its run, never the campaign: it
dies, hangs (nothing for ``stall_s`` seconds), sends a line longer than
``MAX_LINE`` bytes, sends ``MAX_ERRORS`` malformed requests, floods (more
than ``flood_limit`` requests), or leaves processes behind. Each is one
``warning`` in the trace metadata (``tuner_report``) naming the tuner and
what it did, the trace keeps what it evaluated, and the process group is
killed.
"""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from bat.core.errors import TunerError
from bat.core.problem import Problem
from bat.core.tuner import CAPABILITIES, Tuner, library_seed
from bat.protocol.server import Session
from bat.registry import make_tuner, tuner_class
from bat.tuner_adapters.sandbox import SYSTEM_READ, Sandbox, package_code, python_paths

#: the longest request line accepted (bytes); a longer one is nonsense
MAX_LINE = 8 << 20
#: malformed requests after which the tuner is stopped
MAX_ERRORS = 100
#: environment variables the tuner's process keeps (everything else, data paths included, is dropped)
KEEP_ENV = ("PATH", "LANG", "LC_ALL", "PYTHONHASHSEED", "PYTHONDONTWRITEBYTECODE", "OMP_NUM_THREADS")


@dataclass(kw_only=True)
class IsolatedTuner(Tuner):
    """Runs the tuner ``spec`` (with ``options``) in its own sandboxed process over the protocol."""

    spec: str
    options: tuple[str, ...] = ()
    stall_s: float = 60.0
    flood_limit: int | None = None  # requests; None: 20 per evaluation of the budget, at least 10 000
    summary = "a BAT tuner in its own sandboxed process over the BAT protocol: isolate:NAME"
    notes = "the tuner's time is its process's CPU time; the measured data never leave this process"
    _report: dict[str, Any] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.spec.startswith("isolate:"):
            raise ValueError(f"{self.spec}: already isolated")
        if self.stall_s <= 0:
            raise ValueError(f"stall_s must be > 0, got {self.stall_s}")
        inner = make_tuner(self.spec, self.options)  # an unknown tuner or option fails here, not in the child
        if inner.oracle:
            raise ValueError(f"{self.spec} is an oracle: the target's measurements never leave the harness")
        for name in CAPABILITIES:  # the tuner's own declarations hold for its isolated runs
            setattr(self, name, getattr(inner, name))
        self.proposes_batches = False  # over the protocol, one proposal is in flight at a time
        code = _code_paths(self.spec)
        if isinstance(getattr(inner, "argv", None), list):  # exec:PROGRAM: the program itself, sandboxed
            self.argv = list(inner.argv)
            code.append(os.path.dirname(os.path.realpath(shutil.which(self.argv[0]) or self.argv[0])))
        else:
            self.argv = [sys.executable, "-m", "bat.protocol.remote", self.spec]
            for option in self.options:
                self.argv += ["-O", option]
        self.sandbox = Sandbox(read=tuple(code), write=())

    @classmethod
    def scheme_arguments(cls, text: str) -> dict[str, Any]:
        """The keyword arguments of ``isolate:TEXT`` (the registry's scheme table calls this)."""
        return {"spec": text}

    def tune(self, problem: Problem, rng: np.random.Generator) -> None:
        scratch = Path(tempfile.mkdtemp(prefix="bat-tuner-"))
        sandbox = Sandbox(read=self.sandbox.read, write=(str(scratch), "/dev/null"))
        try:
            process = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=scratch,
                                       env=_environment(scratch), start_new_session=True,
                                       preexec_fn=sandbox.apply if sandbox.available else None)
        except (OSError, subprocess.SubprocessError) as exc:
            shutil.rmtree(scratch, ignore_errors=True)
            raise TunerError(f"isolate:{self.spec}: cannot start it: {exc}") from exc
        assert process.stdin is not None and process.stdout is not None
        clock = CpuClock(process.pid)
        problem.tuner_clock = clock
        session = Session(problem, seed=library_seed(rng))
        limit = self.flood_limit or max(10_000, 20 * (problem.budget.max_evals or 500))
        reader = GuardedReader(process.stdout.fileno(), self.stall_s, lambda: _misbehaving(session, limit))
        try:
            outcome = session.run(reader, process.stdin)
        finally:
            left = _descendants(process.pid)
            status = _finish(process)
            shutil.rmtree(scratch, ignore_errors=True)
        self._report = {**outcome.report(), "isolated": True, "sandbox": sandbox.describe(),
                        "exit_status": status, "tuner_cpu_s": clock.total()}
        what = reader.reason or (f"left {left} process(es) running after its session (killed; their work "
                                 "was never charged)" if left else "")
        if not what and not outcome.hello:
            what = f"exited with status {status} before its hello"
        elif not what and status != 0:
            what = f"exited with status {status} after {outcome.requests} requests"
        if what:
            self._report["warning"] = f"isolate:{self.spec} {what}; the trace holds what it evaluated"
            self._report["misbehaved"] = what

    def run_report(self) -> dict[str, Any]:
        return dict(self._report)


class CpuClock:
    """CPU seconds of a process: its threads' run time (ns, schedstat) plus its waited-for children's."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.tick = os.sysconf("SC_CLK_TCK")
        self._last = 0.0

    def __call__(self) -> float:
        try:
            ns = 0
            with os.scandir(f"/proc/{self.pid}/task") as tasks:
                for task in tasks:
                    with open(f"/proc/{self.pid}/task/{task.name}/schedstat", "rb") as f:
                        ns += int(f.read().split()[0])
            with open(f"/proc/{self.pid}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
            children = (int(fields[13]) + int(fields[14])) / self.tick  # cutime, cstime
            self._last = ns / 1e9 + children
        except (OSError, IndexError, ValueError):  # the process is gone: its time stopped where it was
            pass
        return self._last

    def total(self) -> float:
        return self._last


class GuardedReader:
    """Request lines from a pipe; stops (``reason`` says why) on a stall, an overlong line or ``stop()``."""

    def __init__(self, fd: int, stall_s: float, stop: Any) -> None:
        self.fd, self.stall_s, self.stop = fd, stall_s, stop
        self.reason = ""

    def __iter__(self) -> Iterator[bytes]:
        buffer = b""
        while True:
            while b"\n" not in buffer:
                if len(buffer) > MAX_LINE:
                    self.reason = f"sent a line over {MAX_LINE} bytes (nonsense; stopped)"
                    return
                ready, _, _ = select.select([self.fd], [], [], self.stall_s)
                if not ready:
                    self.reason = f"hung: sent nothing for {self.stall_s:g} s (killed)"
                    return
                chunk = os.read(self.fd, 1 << 16)
                if not chunk:
                    if buffer.strip():
                        yield buffer
                    return
                buffer += chunk
            line, buffer = buffer.split(b"\n", 1)
            yield line + b"\n"
            if why := self.stop():
                self.reason = why
                return


def _misbehaving(session: Session, limit: int) -> str:
    o = session.outcome
    if o.errors >= MAX_ERRORS:
        return f"spoke nonsense: {o.errors} malformed requests (stopped)"
    if o.requests >= limit:
        return f"flooded the protocol: {o.requests} requests (stopped)"
    return ""


def _environment(scratch: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k in KEEP_ENV}
    env.update(HOME=str(scratch), TMPDIR=str(scratch), BAT_DATA_DIR=str(scratch / "bat-data"),
               BAT_RESULTS=str(scratch / "no-datasets"), PYTHONNOUSERSITE="1")
    return env


def _code_paths(spec: str) -> list[str]:
    """What the tuner's process may read: system folders, Python, BAT's code and the tuner class's package."""
    import bat.core.tuner as core_tuner

    bat_dir = Path(core_tuner.__file__).resolve().parents[1]  # bat/ (core/ is no link)
    paths = [*SYSTEM_READ, *python_paths(), *package_code(bat_dir)]
    cls, _ = tuner_class(spec)
    module = sys.modules.get(cls.__module__)
    top = sys.modules.get(cls.__module__.split(".")[0])
    for m in (top, module):
        where = getattr(m, "__path__", None) or ([os.path.dirname(m.__file__)] if getattr(m, "__file__", None)
                                                  else [])
        for p in where:
            real = os.path.realpath(p)
            if not any(real == q or real.startswith(q + os.sep) for q in paths):
                paths.append(real)
                break
    return paths


def _descendants(pid: int) -> int:
    """Processes of the tuner's session other than the tuner itself (it was started in a new session)."""
    count = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == pid:
            continue
        with contextlib.suppress(OSError, IndexError, ValueError):
            with open(f"/proc/{entry}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
            if int(fields[3]) == pid and fields[0] != b"Z":  # field 6 (session) is the tuner's pid
                count += 1
    return count


def _finish(process: subprocess.Popen) -> int:
    """Close the pipes, give the tuner a moment to exit, then kill its whole process group."""
    assert process.stdin is not None and process.stdout is not None
    for stream in (process.stdin, process.stdout):
        with contextlib.suppress(OSError):
            stream.close()
    try:
        status = process.wait(timeout=2.0)
    except subprocess.TimeoutExpired:
        status = None
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    if status is None:
        status = process.wait()
    return status
