"""Battery runs in a second Python process with another hash seed (the battery's cross-process check).

One child interpreter per test process (``shared()``), started with a
``PYTHONHASHSEED`` other than this process's and this process's import path,
makes battery runs on request, one request after another: a request is a
pickled fresh tuner, a seed and the names of the runs
(bat.testing.runs.execute); the answer is each run's trace, or the type and
message of what it raised. Requests go to the child's standard input, answers
come back on a pipe of their own (a tuner may print to standard output),
where a thread collects them, so the parent makes its own runs meanwhile.
Reusing the child spares an interpreter start and the tuning libraries'
imports per tuner; a child that died is replaced on the next request.

Pickle travels only between this process and the child it started. A tuner
whose class cannot be pickled (defined inside a function) cannot be sent:
the check then fails saying so.
"""

from __future__ import annotations

import atexit
import os
import pickle
import struct
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

#: seconds one request (all runs of one tuner) may take in the child
TIMEOUT_S = 900
_HEADER = struct.Struct("!Q")


def other_hash_seed() -> str:
    """A ``PYTHONHASHSEED`` other than this process's (a fixed one when this process's is random)."""
    mine = os.environ.get("PYTHONHASHSEED", "random")
    return str((int(mine) + 1) % 4294967296) if mine.isdigit() else "1"


@dataclass
class Outcome:
    """One run in the other process: its trace, or the exception type's name and message."""

    trace: Any = None  # pandas.DataFrame
    error: tuple[str, str] | None = None


def _send(stream: IO[bytes], obj: object) -> None:
    data = pickle.dumps(obj)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def _receive(stream: IO[bytes]) -> Any:
    """The next message, or None at the end of the stream."""
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        return None
    (size,) = _HEADER.unpack(header)
    return pickle.loads(stream.read(size))


class OtherProcess:
    """The child interpreter and the answers it has sent so far."""

    def __init__(self) -> None:
        self.hash_seed = other_hash_seed()
        self._log = tempfile.NamedTemporaryFile(prefix="bat-battery-", suffix=".log", delete=False)  # noqa: SIM115
        read_fd, write_fd = os.pipe()
        env = {**os.environ, "PYTHONHASHSEED": self.hash_seed,
               "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        self._proc = subprocess.Popen([sys.executable, "-m", "bat.testing.other_process", str(write_fd)],
                                      stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=self._log,
                                      env=env, pass_fds=(write_fd,))
        os.close(write_fd)
        self._answers: dict[int, dict[str, Outcome]] = {}
        self._done = threading.Condition()
        self._closed = False
        self._next = 0
        threading.Thread(target=self._collect, args=(os.fdopen(read_fd, "rb"),), daemon=True).start()

    def _collect(self, stream: IO[bytes]) -> None:
        with stream:
            while (message := _receive(stream)) is not None:
                with self._done:
                    self._answers[message[0]] = message[1]
                    self._done.notify_all()
        with self._done:
            self._closed = True
            self._done.notify_all()

    @property
    def alive(self) -> bool:
        return self._proc.poll() is None and not self._closed

    def submit(self, tuner: Any, seed: int, runs: tuple[str, ...]) -> int:
        """Ask for ``runs`` of ``tuner`` with ``seed``; the request's number."""
        try:
            payload = pickle.dumps(tuner)
        except Exception as exc:  # any pickling failure means the tuner cannot reach another process
            raise AssertionError(f"the tuner cannot be sent to another process ({type(exc).__name__}: "
                                 f"{exc}); define its class at module level, with picklable "
                                 "hyper-parameters") from exc
        self._next += 1
        assert self._proc.stdin is not None
        _send(self._proc.stdin, (self._next, payload, seed, runs))
        return self._next

    def outcomes(self, request: int) -> dict[str, Outcome]:
        """The answer to ``request`` (waits for it; AssertionError when the child died or took too long)."""
        with self._done:
            self._done.wait_for(lambda: request in self._answers or self._closed, timeout=TIMEOUT_S)
            if request in self._answers:
                return self._answers.pop(request)
        self.close()
        log = Path(self._log.name).read_text(errors="replace").strip().splitlines()[-5:]
        raise AssertionError(f"the second process (PYTHONHASHSEED={self.hash_seed}) gave no answer within "
                             f"{TIMEOUT_S} s or ended (exit {self._proc.poll()}): " + " | ".join(log))

    def close(self) -> None:
        if self._proc.poll() is None:
            self._proc.kill()
        self._proc.wait()
        if self._proc.stdin is not None:
            self._proc.stdin.close()
        self._log.close()
        Path(self._log.name).unlink(missing_ok=True)


_SHARED: OtherProcess | None = None


def shared() -> OtherProcess:
    """This process's child (started, or restarted after it died, on demand)."""
    global _SHARED
    if _SHARED is None or not _SHARED.alive:
        if _SHARED is not None:
            _SHARED.close()
        _SHARED = OtherProcess()
    return _SHARED


@atexit.register
def _stop() -> None:
    if _SHARED is not None:
        _SHARED.close()


def main(answer_fd: int) -> None:
    """The child: answer requests from stdin until it closes."""
    from bat.testing.other_process import Outcome as Shared  # not __main__'s copy: the parent unpickles it
    from bat.testing.runs import execute

    with os.fdopen(answer_fd, "wb") as answers:
        while (request := _receive(sys.stdin.buffer)) is not None:
            number, payload, seed, runs = request
            outcomes: dict[str, Outcome] = {}
            for name in runs:
                try:
                    outcomes[name] = Shared(trace=execute(name, pickle.loads(payload), seed).trace)
                except Exception as exc:  # the parent compares what each process raised
                    outcomes[name] = Shared(error=(type(exc).__name__, str(exc)))
            _send(answers, (number, outcomes))


if __name__ == "__main__":
    main(int(sys.argv[1]))
