"""A tuner in another process, in any language: ``exec:PROGRAM [ARGS]`` speaks the BAT protocol.

``tune`` starts the program with the protocol on its stdin and stdout (its
stderr is ours) and serves it the problem (bat.protocol.server), so it is
benchmarked under the rules, the budget and the trace of an in-process tuner.
Its own time, start-up included, is the tuner time: the time between a reply
and its next evaluation request. The program gets ``library_seed(rng)`` as
its seed in the hello reply.

A program that exits before its hello is an error (nothing was evaluated);
one that exits later ends the run, with its trace intact and a warning in the
trace metadata (``tuner_report``) that names its exit status.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import signal
import subprocess
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bat.core.atomic import check_output
from bat.core.errors import TunerError
from bat.core.tuner import Tuner, library_seed
from bat.protocol.pacing import DEFAULT_IDLE_S, DEFAULT_REQUEST_S, Pacing

if TYPE_CHECKING:  # the protocol server and NumPy load when a run starts, not when `bat list` reads the summary
    import numpy as np

    from bat.core.problem import Problem
    from bat.protocol.server import Outcome

#: seconds a program gets to exit after its session ended, before it is killed (one that stalled: none)
EXIT_GRACE_S = 10.0


@dataclass(kw_only=True)
class ExternalTuner(Tuner):
    """Runs ``command`` (a program and its arguments, shell-quoted) as a protocol client."""

    command: str
    transcript: str | None = None  # a file to write every message to, both ways (JSON lines)
    idle_s: float = DEFAULT_IDLE_S  # limits on a stalling program (bat.protocol.pacing): -O idle_s=...
    request_s: float = DEFAULT_REQUEST_S
    summary = "a tuner in another process, any language, over the BAT protocol: exec:PROGRAM [ARGS]"
    notes = "the program speaks docs/PROTOCOL.md on stdin/stdout; its own time, start-up included, is tuner time"
    _report: dict[str, Any] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        try:
            argv = shlex.split(self.command)
        except ValueError as exc:
            raise ValueError(f"{self.command!r}: {exc}") from None
        if not argv:
            raise ValueError("exec: needs a program: exec:PROGRAM [ARGS]")
        if shutil.which(argv[0]) is None:  # a bare name is looked up on PATH, a path checked as it is
            raise ValueError(f"{argv[0]}: no such executable program")
        if self.transcript:  # a FIFO, a device, a link loop or a folder refused now, before the program starts
            check_output(self.transcript, what="-O transcript")
        self.argv = argv
        self.pacing = Pacing(float(self.idle_s), float(self.request_s))

    @classmethod
    def scheme_arguments(cls, text: str) -> dict[str, Any]:
        """The keyword arguments of ``exec:TEXT`` (the registry's scheme table calls this)."""
        return {"command": text}

    def tune(self, problem: Problem, rng: np.random.Generator) -> None:
        from bat.protocol.server import Session

        with contextlib.ExitStack() as stack:
            transcript = stack.enter_context(open(self.transcript, "w")) if self.transcript else None
            session = Session(problem, seed=library_seed(rng), transcript=transcript, pacing=self.pacing)
            try:  # a session of its own: its process group, children included, ends with the run
                process = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                           start_new_session=True)
            except OSError as exc:
                raise TunerError(f"exec:{self.argv[0]}: cannot start it: {exc}") from exc
            assert process.stdin is not None and process.stdout is not None
            outcome = None
            try:
                outcome = session.run(process.stdout, process.stdin)
            finally:  # a program that stalled already had its silence limit to answer: it is killed at once
                status = _finish(process, 0.0 if outcome is not None and outcome.stalled else EXIT_GRACE_S)
        self._report = _report(outcome, status, self.argv[0])
        if not outcome.hello:
            raise TunerError(f"exec:{self.argv[0]} ended (exit status {status}) before its hello; "
                             "its error output, if any, is above")

    def run_report(self) -> dict[str, Any]:
        return dict(self._report)


def _finish(process: subprocess.Popen, grace_s: float) -> int:
    """Close the program's input, give it ``grace_s`` seconds to exit, kill it otherwise, then end whatever of
    its process group is left (a child it started in the background); its exit status."""
    assert process.stdin is not None and process.stdout is not None
    for stream in (process.stdin, process.stdout):
        with contextlib.suppress(OSError):  # a broken pipe on the final flush
            stream.close()
    try:
        status = process.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        process.kill()
        status = process.wait()
    with contextlib.suppress(ProcessLookupError, PermissionError):  # none left
        os.killpg(process.pid, signal.SIGKILL)
    return status


def _report(outcome: Outcome, status: int, program: str) -> dict[str, Any]:
    report = {**outcome.report(), "program": program, "exit_status": status}
    if status != 0:
        report["warning"] = (f"exec:{program} exited with status {status} after {outcome.requests} requests "
                             f"(ended: {outcome.ended}); the trace holds what it evaluated")
    return report
