"""An exclusive lock on an output folder, so two campaigns never write into one.

``FolderLock`` takes ``flock(LOCK_EX | LOCK_NB)`` on ``<folder>/.bat.lock``
and writes who holds it (pid, host, start time, command line) into that file.
The kernel drops the lock when the holder exits in any way, ``kill -9``
included, so a stale lock cannot exist. A clean release removes the file
while still holding the lock (an output folder keeps only the outputs), and
a folder the lock itself created is removed too when nothing was written
into it; a process that locked the file just before it was removed sees that
the path no longer names the file it locked and tries again, so two holders
can never coexist. A second process gets FolderInUseError naming the holder. ``flock``
is not reliable on some network file systems (older NFS); keep such outputs
on a local disk. Hand-written because ``fcntl.flock`` is the whole mechanism;
the lock libraries on PyPI wrap the same call and add a dependency.
"""

from __future__ import annotations

import contextlib
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
        self._made_folder = False

    @property
    def path(self) -> Path:
        return self.folder / LOCK_NAME

    def acquire(self) -> FolderLock:
        """Take the lock (creating the folder) or raise FolderInUseError naming the holder."""
        self._made_folder = not self.folder.exists()
        self.folder.mkdir(parents=True, exist_ok=True)
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.pread(fd, 4096, 0).decode(errors="replace")
                os.close(fd)
                raise FolderInUseError(f"{self.what} {self.folder}: in use by {_describe(holder)}; wait for it "
                                       "to finish or choose another folder") from None
            if _same_file(fd, self.path):
                break
            os.close(fd)  # its holder removed it as we locked it: lock the file the path names now
        info = {"pid": os.getpid(), "host": socket.gethostname(),
                "started": time.strftime("%Y-%m-%d %H:%M:%S"), "command": " ".join(sys.argv)}
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(info).encode(), 0)
        self._fd = fd
        return self

    def release(self) -> None:
        """Remove the lock file (and the folder, if the lock made it and it is empty), then drop the lock."""
        if self._fd is not None:
            with contextlib.suppress(FileNotFoundError):  # the folder may be gone (a scratch folder)
                os.unlink(self.path)
            if self._made_folder:
                with contextlib.suppress(OSError):  # not empty: the command wrote its outputs
                    self.folder.rmdir()
            os.close(self._fd)  # closing drops the flock
            self._fd = None

    def __enter__(self) -> FolderLock:
        return self.acquire()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.release()


def _same_file(fd: int, path: Path) -> bool:
    """Does ``path`` still name the file open as ``fd``?"""
    try:
        on_disk = os.stat(path)
    except FileNotFoundError:
        return False
    mine = os.fstat(fd)
    return (on_disk.st_dev, on_disk.st_ino) == (mine.st_dev, mine.st_ino)


def _describe(holder: str) -> str:
    try:
        info = json.loads(holder)
        return (f"process {info['pid']} on {info['host']} since {info['started']} "
                f"({info['command'][:200]})")
    except (ValueError, KeyError, TypeError):
        return "another process (it has not written its name yet)"
