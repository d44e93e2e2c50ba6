"""The command backend's scratch folder, and what removes it and its processes whatever happens.

Each backend gets one folder ``<tmp>/bat-command-<random>/`` holding a
directory per configuration, and locks it (bat.core.locking) for as long as it
lives. Every command step runs tagged ``BAT_STEP=<folder name>/...``
(bat.core.lifetime). Three things clean up:

- ``Scratch.close``: kills what is left of its steps, removes the folder;
- a guardian process started with the folder, which waits for the end of a
  pipe only the backend holds: when the backend's process dies in any way
  (``kill -9`` included), the pipe closes and the guardian kills every
  process tagged with the folder (descendants that changed session or
  process group included) and removes the folder;
- ``sweep_stale``, on every start: a ``bat-command-*`` folder whose lock is
  free has no owner left (its guardian was killed too); its tagged processes
  are killed and the folder removed.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from bat.core.errors import FolderInUseError
from bat.core.lifetime import kill_tagged
from bat.core.locking import FolderLock

PREFIX = "bat-command-"


class Scratch:
    """A locked, guarded scratch folder; ``tag`` prefixes the ``BAT_STEP`` of its steps."""

    def __init__(self) -> None:
        sweep_stale(Path(tempfile.gettempdir()))
        self.path = Path(tempfile.mkdtemp(prefix=PREFIX))
        self.tag = self.path.name
        self._lock = FolderLock(self.path, "command backend scratch folder").acquire()
        read, self._pipe = os.pipe()  # both ends close-on-exec: no step inherits them
        self._guardian = subprocess.Popen([sys.executable, "-m", __name__, self.tag, str(self.path)],
                                          stdin=read, stdout=subprocess.DEVNULL, close_fds=True)
        os.close(read)

    def close(self) -> None:
        """Kill the steps' leftovers, remove the folder, let the guardian go."""
        if self._pipe < 0:
            return
        kill_tagged(self.tag + "/")
        shutil.rmtree(self.path, ignore_errors=True)
        self._lock.release()
        os.close(self._pipe)
        self._pipe = -1
        self._guardian.wait()


def sweep_stale(root: Path) -> list[Path]:
    """Remove the scratch folders under ``root`` whose owner is gone (their lock is free); return them."""
    removed = []
    for folder in sorted(root.glob(PREFIX + "*")):
        lock = FolderLock(folder, "stale scratch folder")
        try:
            if not folder.is_dir():
                continue
            lock.acquire()
        except (FolderInUseError, OSError):  # alive, or removed by another sweeper meanwhile
            continue
        try:
            kill_tagged(folder.name + "/")
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
        finally:
            lock.release()
    return removed


def _guard(tag: str, folder: str) -> None:
    """The guardian: wait until the backend's pipe closes, then clean up after it."""
    with contextlib.suppress(OSError):
        while os.read(0, 4096):
            pass
    kill_tagged(tag + "/")
    shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    _guard(sys.argv[1], sys.argv[2])
