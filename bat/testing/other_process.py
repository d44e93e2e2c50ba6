"""Battery runs in a second Python process with another hash seed (the battery's cross-process check).

The parent pickles a fresh tuner, the seed and the names of the runs, and
starts ``python -m bat.testing.other_process OUT`` with a ``PYTHONHASHSEED``
different from its own and its own import path; the child makes every run
(bat.testing.runs.execute), and pickles each run's trace (or the
type and message of what it raised) to ``OUT``. One child serves all the
runs of one tuner, and it runs while the parent makes its own runs.

Pickle travels only between this process and the child it started. A tuner
whose class cannot be pickled (defined inside a function) cannot be sent:
the check then fails saying so.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: seconds the child may take for all its runs
TIMEOUT_S = 900


def other_hash_seed() -> str:
    """A ``PYTHONHASHSEED`` other than this process's (a fixed one when this process's is random)."""
    mine = os.environ.get("PYTHONHASHSEED", "random")
    return str((int(mine) + 1) % 4294967296) if mine.isdigit() else "1"


@dataclass
class Outcome:
    """One run in the other process: its trace, or the exception type's name and message."""

    trace: Any = None  # pandas.DataFrame
    error: tuple[str, str] | None = None


class OtherProcess:
    """A child interpreter making the named runs of one tuner; ``outcomes()`` waits for it."""

    def __init__(self, tuner: Any, seed: int, runs: tuple[str, ...]) -> None:
        self.hash_seed = other_hash_seed()
        self._dir = tempfile.TemporaryDirectory(prefix="bat-battery-")
        self._out = Path(self._dir.name) / "outcomes.pickle"
        try:
            payload = pickle.dumps({"tuner": tuner, "seed": seed, "runs": runs})
        except Exception as exc:  # any pickling failure means the tuner cannot reach another process
            self._dir.cleanup()
            raise AssertionError(f"the tuner cannot be sent to another process ({type(exc).__name__}: "
                                 f"{exc}); define its class at module level, with picklable "
                                 "hyper-parameters") from exc
        env = {**os.environ, "PYTHONHASHSEED": self.hash_seed,
               "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        self._stderr = (Path(self._dir.name) / "stderr.txt").open("wb")
        self._proc = subprocess.Popen([sys.executable, "-m", "bat.testing.other_process", str(self._out)],
                                      stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=self._stderr,
                                      env=env)
        assert self._proc.stdin is not None
        self._proc.stdin.write(payload)
        self._proc.stdin.close()
        self._result: dict[str, Outcome] | None = None

    def outcomes(self) -> dict[str, Outcome]:
        """Each run's outcome in the child (waits for it; AssertionError when it died)."""
        if self._result is None:
            try:
                self._proc.wait(timeout=TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
            finally:
                self._stderr.close()
            try:
                if self._proc.returncode != 0 or not self._out.exists():
                    err = (Path(self._dir.name) / "stderr.txt").read_text(errors="replace")
                    raise AssertionError(f"the second process (PYTHONHASHSEED={self.hash_seed}) exited with "
                                         f"{self._proc.returncode} (killed after {TIMEOUT_S} s when negative): "
                                         + " | ".join(err.strip().splitlines()[-5:]))
                self._result = pickle.loads(self._out.read_bytes())
            finally:
                self._dir.cleanup()
        return self._result


def main(out: str) -> None:
    """The child: read the request from stdin, make the runs, pickle the outcomes to ``out``."""
    from bat.testing.other_process import Outcome as Shared  # not __main__'s copy: the parent unpickles it
    from bat.testing.runs import execute

    request = pickle.loads(sys.stdin.buffer.read())
    blob = pickle.dumps(request["tuner"])
    outcomes: dict[str, Outcome] = {}
    for name in request["runs"]:
        try:
            outcomes[name] = Shared(trace=execute(name, pickle.loads(blob), request["seed"]).trace)
        except Exception as exc:  # the parent compares what each process raised
            outcomes[name] = Shared(error=(type(exc).__name__, str(exc)))
    tmp = Path(out + ".tmp")
    tmp.write_bytes(pickle.dumps(outcomes))
    tmp.replace(out)


if __name__ == "__main__":
    main(sys.argv[1])
