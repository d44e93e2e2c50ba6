"""Any BAT tuner in its own sandboxed process: ``isolate:NAME`` (``bat run/compare --isolate``).

The tuner runs as ``python -m bat.protocol.remote NAME`` (a Python tuner class
needs no change: it sees a ``RemoteProblem``) below a supervisor
(bat.tuner_adapters.reaper: a child subreaper, in a new session) that starts
it in a Landlock sandbox (bat.tuner_adapters.sandbox) reading only Python,
BAT and the tuner's own code (bat.tuner_adapters.grants), without network
(bat.tuner_adapters.seccomp), with a scratch working folder (also its HOME,
TMPDIR and data folder) that is removed afterwards and an environment without
the data paths; when the run ends every process the tuner started, ``setsid``
or zombie, is ended and reaped, and named in the report. The measured data
stay in this (the harness) process, behind the protocol Session and the
Problem. Before any run, the tuner is loaded once in its sandbox: a tuner the
sandboxed child cannot import is a one-line error (exit 2), not a run of
nothing.

Tuner time. Unless the campaign declares a charge per proposal, the tuner's
time is the CPU time of its whole process tree between a reply and its next
request (bat.tuner_adapters.tree_clock: threads that ended and children not
waited for included), read from ``/proc`` by this process; at the end the
tree's exact total (the supervisor's ``wait4`` usage) is charged, the part no
proposal carried added as ``charged_at_end_s``. Whatever the tuner does to
its own clocks changes nothing.

What the tuner's process does wrong ends its run, never the campaign: it
dies, hangs (nothing for ``stall_s`` seconds after a reply, or a request
not whole ``request_s`` seconds after its first byte), sends a line longer than
``MAX_LINE`` bytes, sends ``MAX_ERRORS`` malformed requests, floods (more
than ``flood_limit`` requests), or leaves processes behind. Each is one
``warning`` in the trace metadata (``tuner_report``) naming the tuner and
what it did, the trace keeps what it evaluated, and the whole tree is ended.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bat.core.errors import MissingDependencyError, TunerError
from bat.core.tuner import CAPABILITIES, Tuner, library_seed
from bat.protocol.pacing import DEFAULT_REQUEST_S, Pacing, PeerStalled, paced_lines
from bat.registry import make_tuner
from bat.tuner_adapters import grants
from bat.tuner_adapters.sandbox import Sandbox
from bat.tuner_adapters.tree_clock import CpuClock

if TYPE_CHECKING:  # the protocol server and NumPy load when a run starts, not when `bat list` reads the summary
    import numpy as np

    from bat.core.problem import Problem
    from bat.protocol.server import Session

#: the longest request line accepted (bytes); a longer one is nonsense
MAX_LINE = 8 << 20
#: malformed requests after which the tuner is stopped
MAX_ERRORS = 100
#: environment variables the tuner's process keeps (everything else, data paths included, is dropped)
KEEP_ENV = ("PATH", "LANG", "LC_ALL", "PYTHONHASHSEED", "PYTHONDONTWRITEBYTECODE", "OMP_NUM_THREADS")
#: the supervisor script (standard library only, run by file)
REAPER = str(Path(__file__).resolve().with_name("reaper.py"))
#: seconds of a whole CPU the tuner gets to exit on its own once its session ended, then the supervisor ends
#: it (``exit_grace_s``: more wall seconds on a machine busier than its cores)
EXIT_GRACE_S = 2.0
#: seconds the supervisor gets to end the tree
END_GRACE_S = 10.0


@dataclass(kw_only=True)
class IsolatedTuner(Tuner):
    """Runs the tuner ``spec`` (with ``options``) in its own sandboxed process over the protocol."""

    spec: str
    options: tuple[str, ...] = ()
    stall_s: float = 60.0
    request_s: float = DEFAULT_REQUEST_S  # a whole request's deadline, from its first byte
    flood_limit: int | None = None  # requests; None: 20 per evaluation of the budget, at least 10 000
    summary = "a BAT tuner in its own sandboxed process over the BAT protocol: isolate:NAME"
    notes = "the tuner's time is its process tree's CPU time; the measured data never leave this process"
    _report: dict[str, Any] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.spec.startswith("isolate:"):
            raise ValueError(f"{self.spec}: already isolated")
        Pacing(idle_s=self.stall_s, request_s=self.request_s)  # both > 0, or a ValueError naming the one
        inner = make_tuner(self.spec, self.options)  # an unknown tuner or option fails here, not in the child
        if inner.oracle:
            raise ValueError(f"{self.spec} is an oracle: the target's measurements never leave the harness")
        for name in CAPABILITIES:  # the tuner's own declarations hold for its isolated runs
            setattr(self, name, getattr(inner, name))
        # over the protocol, one proposal is in flight at a time (a capability set per instance, as above)
        self.proposes_batches = False  # type: ignore[misc]
        if isinstance(argv := getattr(inner, "argv", None), list):  # exec:PROGRAM: the program itself, sandboxed
            self.argv = list(argv)
            self.code = grants.exec_program(self.argv, self.spec)
        else:
            self.argv = [sys.executable, "-m", "bat.protocol.remote", self.spec]
            for option in self.options:
                self.argv += ["-O", option]
            self.code = grants.python_tuner(self.spec)
            _check_import(self.spec, self.options, self.code)
        self.sandbox = Sandbox(read=self.code.read, write=())

    @classmethod
    def scheme_arguments(cls, text: str) -> dict[str, Any]:
        """The keyword arguments of ``isolate:TEXT`` (the registry's scheme table calls this)."""
        return {"spec": text}

    def tune(self, problem: Problem, rng: np.random.Generator) -> None:
        from bat.protocol.server import Session

        scratch = _scratch(self.code)
        try:
            process, report = _start(self.argv, self.code, scratch)
        except (OSError, subprocess.SubprocessError) as exc:
            shutil.rmtree(scratch, ignore_errors=True)
            raise TunerError(f"isolate:{self.spec}: cannot start it: {exc}") from exc
        assert process.stdin is not None and process.stdout is not None
        clock = CpuClock(process.pid)
        problem.tuner_clock = clock
        session = Session(problem, seed=library_seed(rng))
        limit = self.flood_limit or max(10_000, 20 * (problem.budget.max_evals or 500))
        reader = GuardedReader(process.stdout.fileno(), self.stall_s, lambda: _misbehaving(session, limit),
                               self.request_s)
        try:
            outcome = session.run(reader, process.stdin)
        finally:
            ended = _finish(process, report)
            shutil.rmtree(scratch, ignore_errors=True)
        tail = max(0.0, ended.cpu_s - problem.stats.tuner_s) if problem.tuner_charge_s is None else 0.0
        problem.stats.tuner_s += tail  # work after its last proposal, or while the harness answered
        self._report = {**outcome.report(), "isolated": True, "sandbox": Sandbox(self.code.read, (
            str(scratch),)).describe(), "exit_status": ended.status, "tuner_cpu_s": ended.cpu_s,
            "charged_at_end_s": tail, "processes_left": ended.left}
        what = reader.reason or (f"left {ended.left_count} process(es) behind ({_named(ended)}; ended and "
                                 "reaped, their CPU time charged)" if ended.left_count else "")
        if not outcome.hello:  # it never ran: an error, not a run of nothing
            ended_how = f"exited with status {ended.status}" if ended.status is not None else "stopped"
            raise TunerError(f"isolate:{self.spec} {what or ended_how} before its hello; its error output, if "
                             "any, is above")
        if not what and ended.status is None:
            what = f"did not exit within {ended.grace_s:.3g} s of its session's end (ended)"
        elif not what and ended.status != 0:
            what = f"exited with status {ended.status} after {outcome.requests} requests"
        if what:
            self._report["warning"] = f"isolate:{self.spec} {what}; the trace holds what it evaluated"
            self._report["misbehaved"] = what

    def run_report(self) -> dict[str, Any]:
        return dict(self._report)


class GuardedReader:
    """Request lines from a pipe, paced (bat.protocol.pacing: ``stall_s`` of silence after a reply, and
    ``request_s`` for a whole request once its first byte came); stops (``reason`` says why) on a breach of
    either, an overlong line or ``stop()``."""

    def __init__(self, fd: int, stall_s: float, stop: Any, request_s: float = DEFAULT_REQUEST_S) -> None:
        self.fd, self.stop = fd, stop
        self.pacing = Pacing(idle_s=stall_s, request_s=request_s)
        self.reason = ""

    def __iter__(self) -> Iterator[bytes]:
        try:
            for line in paced_lines(self.fd, self.pacing):
                if len(line) > MAX_LINE:
                    self.reason = f"sent a line over {MAX_LINE} bytes (nonsense; stopped)"
                    return
                yield line
                if why := self.stop():
                    self.reason = why
                    return
        except PeerStalled as exc:
            self.reason = f"hung: {exc} (killed)"


def _misbehaving(session: Session, limit: int) -> str:
    o = session.outcome
    if o.errors >= MAX_ERRORS:
        return f"spoke nonsense: {o.errors} malformed requests (stopped)"
    if o.requests >= limit:
        return f"flooded the protocol: {o.requests} requests (stopped)"
    return ""


@dataclass
class Ended:
    """How the tuner's process tree ended: its exit status, what it left running, its whole CPU time."""

    status: int | None
    left: list[dict[str, Any]]  # the first MAX_LISTED of them (bat.tuner_adapters.reaper)
    left_count: int
    cpu_s: float
    grace_s: float  # the wall seconds it was given to exit on its own (``exit_grace_s``)


def _scratch(code: grants.CodeGrant) -> Path:
    """A fresh scratch folder with ``code/``: links to the tuner's own code (bat.tuner_adapters.grants)."""
    scratch = Path(tempfile.mkdtemp(prefix="bat-tuner-"))
    (scratch / "code").mkdir()
    for name, real in code.links:
        (scratch / "code" / name).symlink_to(real)
    return scratch


def _start(argv: list[str], code: grants.CodeGrant, scratch: Path,
           stderr: int | None = None) -> tuple[subprocess.Popen, int]:
    """The supervisor (bat.tuner_adapters.reaper) running ``argv`` sandboxed on pipes, and the read end of its
    report."""
    report_read, report_write = os.pipe()
    spec = {"argv": argv, "read": list(code.read), "write": [str(scratch), "/dev/null"], "report": report_write}
    try:
        process = subprocess.Popen([sys.executable, "-I", "-S", REAPER, json.dumps(spec)], stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, cwd=scratch, env=_environment(scratch),
                                   stderr=stderr, start_new_session=True, pass_fds=(report_write,))
    except BaseException:
        os.close(report_read)
        raise
    finally:
        os.close(report_write)
    return process, report_read


def _finish(process: subprocess.Popen, report: int) -> Ended:
    """Close the pipes; give the tuner a moment to exit, else have the supervisor end it; read what it left
    and the whole tree's CPU time (the supervisor's wait4 usage less its own)."""
    assert process.stdin is not None and process.stdout is not None
    for stream in (process.stdin, process.stdout):
        with contextlib.suppress(OSError):
            stream.close()
    grace = exit_grace_s()
    rusage = _wait4(process, grace)
    if rusage is None:  # still running: the supervisor ends the tree
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(signal.SIGTERM)
        rusage = _wait4(process, END_GRACE_S)
    if rusage is None:  # the supervisor itself hangs: its session goes (a last resort: orphans escape it)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        rusage = _wait4(process, None)
    said = _said(report, process)
    assert rusage is not None
    cpu = rusage.ru_utime + rusage.ru_stime - float(said["supervisor_cpu_s"])
    return Ended(status=said["status"], left=said["left"], left_count=said["left_count"], cpu_s=max(0.0, cpu),
                 grace_s=grace)


def exit_grace_s(load: float | None = None, cpus: int | None = None) -> float:
    """Wall seconds a tuner gets to exit after its session: ``EXIT_GRACE_S`` of a whole CPU, stretched by how
    much busier than its cores the machine is (1-minute load average over CPUs, at least 1). An interpreter
    with SMAC and scikit-learn loaded takes about a second of CPU to exit; at a load of 9 on 2 cores it gets
    a fifth of a core, and a fixed 2 s would call a well-behaved tuner misbehaving."""
    load = os.getloadavg()[0] if load is None else load
    cpus = (os.cpu_count() or 1) if cpus is None else cpus
    return EXIT_GRACE_S * max(1.0, load / cpus)


def _said(report: int, process: subprocess.Popen) -> dict[str, Any]:
    """The supervisor's report (read to its end, then closed); a supervisor that died says its own status."""
    with os.fdopen(report, "rb") as f:
        raw = f.read()
    try:
        return json.loads(raw)
    except ValueError:
        return {"status": process.returncode, "left": [], "left_count": 0, "supervisor_cpu_s": 0.0}


def _wait4(process: subprocess.Popen, timeout: float | None) -> Any:
    """The supervisor's resource usage once it exited within ``timeout`` seconds (None: wait), else None."""
    end = None if timeout is None else time.monotonic() + timeout
    while True:
        pid, status, rusage = os.wait4(process.pid, os.WNOHANG if end is not None else 0)
        if pid:
            process.returncode = os.waitstatus_to_exitcode(status)
            return rusage
        if end is not None and time.monotonic() > end:
            return None
        time.sleep(0.002)


def _named(ended: Ended) -> str:
    shown = ", ".join(f"{p['name']} {p['pid']} {'zombie' if p['state'] == 'Z' else 'running'}"
                      for p in ended.left[:5])
    return shown + (f" and {ended.left_count - 5} more" if ended.left_count > 5 else "")


_CHECKED: set[tuple] = set()


def _check_import(spec: str, options: tuple[str, ...], code: grants.CodeGrant) -> None:
    """Import the tuner once in its sandbox (cached per process): one line and a BatError (exit 2) when the
    sandboxed child cannot, before any run."""
    key = (spec, options, code, os.environ.get("PYTHONPATH"))
    if key in _CHECKED:
        return
    scratch = _scratch(code)
    argv = [sys.executable, "-m", "bat.protocol.remote", "--check", spec, *(f"-O{o}" for o in options)]
    try:
        process, report = _start(argv, code, scratch, stderr=subprocess.PIPE)
        _, err = process.communicate()
        status = _said(report, process).get("status")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if status != 0:
        raise MissingDependencyError(f"isolate:{spec}: its sandboxed process cannot load it ({_last_line(err)}); "
                                     f"its code is read from {_where(code)}")
    _CHECKED.add(key)


def _last_line(err: bytes | None) -> str:
    lines = [line.strip() for line in (err or b"").decode(errors="replace").splitlines() if line.strip()]
    return lines[-1].removeprefix("error: ") if lines else "no error output"


def _where(code: grants.CodeGrant) -> str:
    own = [real for _, real in code.links]
    return ", ".join(own) if own else "Python's installed packages and BAT"


def _environment(scratch: Path) -> dict[str, str]:
    """KEEP_ENV, the scratch folder as home and data folder, on the Python path the links to the tuner's
    code before the user's own PYTHONPATH (read only what the sandbox grants: bat.tuner_adapters.grants), and
    the bytecode cache folder that the sandbox grants, if any."""
    env = {k: v for k, v in os.environ.items() if k in KEEP_ENV}
    path = [str(scratch / "code"), *(p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p)]
    env.update(HOME=str(scratch), TMPDIR=str(scratch), BAT_DATA_DIR=str(scratch / "bat-data"),
               BAT_RESULTS=str(scratch / "no-datasets"), PYTHONNOUSERSITE="1", PYTHONPATH=os.pathsep.join(path))
    if cache := grants.bytecode_cache():  # granted read only: compiled modules read, not compiled again
        env["PYTHONPYCACHEPREFIX"] = cache
    return env
