"""An exclusive lock on an output folder, so two campaigns never write into one.

``FolderLock`` takes ``flock(LOCK_EX | LOCK_NB)`` on ``<folder>/.bat.lock``
and writes who holds it (pid, host, start time, command line) into that file.
The kernel drops the lock when the holder exits in any way, ``kill -9``
included, so a stale lock cannot exist; the file itself stays (removing it
would let a third process lock a fresh file while a second still holds the
old one). A second process gets FolderInUseError naming the holder. ``flock``
is not reliable on some network file systems (older NFS); keep such outputs
on a local disk. Hand-written because ``fcntl.flock`` is the whole mechanism;
the lock libraries on PyPI wrap the same call and add a dependency.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import sys
import time
from pathlib import Path
from types import TracebackType

from bat.core.errors import FolderInUseError

LOCK_NAME = ".bat.lock"


class FolderLock:
    """``with FolderLock(folder, "bat compare --out"):`` holds ``folder`` for this process."""

    def __init__(self, folder: str | Path, what: str = "folder") -> None:
        self.folder = Path(folder)
        self.what = what
        self._fd: int | None = None

    @property
    def path(self) -> Path:
        return self.folder / LOCK_NAME

    def acquire(self) -> FolderLock:
        """Take the lock (creating the folder) or raise FolderInUseError naming the holder."""
        self.folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 4096, 0).decode(errors="replace")
            os.close(fd)
            raise FolderInUseError(f"{self.what} {self.folder}: in use by {_describe(holder)}; wait for it "
                                   "to finish or choose another folder") from None
        info = {"pid": os.getpid(), "host": socket.gethostname(),
                "started": time.strftime("%Y-%m-%d %H:%M:%S"), "command": " ".join(sys.argv)}
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(info).encode(), 0)
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is not None:
            os.ftruncate(self._fd, 0)
            os.close(self._fd)  # closing drops the flock
            self._fd = None

    def __enter__(self) -> FolderLock:
        return self.acquire()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.release()


def _describe(holder: str) -> str:
    try:
        info = json.loads(holder)
        return (f"process {info['pid']} on {info['host']} since {info['started']} "
                f"({info['command'][:200]})")
    except (ValueError, KeyError, TypeError):
        return "another process (it has not written its name yet)"
