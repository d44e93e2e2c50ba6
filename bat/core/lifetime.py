"""Child processes that do not outlive BAT: worker pools and the command backend's steps.

``die_with_parent`` runs in a child (a pool worker's initializer, or a
command step between ``fork`` and ``exec``) and asks the Linux kernel to
SIGKILL it the moment its parent dies (``prctl(PR_SET_PDEATHSIG)``, through
ctypes: the standard library has no binding), so a ``kill -9`` of ``bat
compare -j 2`` or ``bat record`` leaves no worker computing for minutes.
On other systems a pool worker instead watches its parent's pid from a
daemon thread (once a second).

Command steps are tagged instead: each runs with ``BAT_STEP=<tag>`` in its
environment, which every descendant inherits, also one that left the
step's session with ``setsid``; ``kill_tagged`` finds them all through
``/proc/<pid>/environ`` (Linux) and kills them, at a step's time limit, after
each configuration, and from the command backend's guardian when BAT dies.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import threading
import time
from pathlib import Path

PR_SET_PDEATHSIG = 1
#: Seconds between looks at the parent where the kernel cannot be asked to signal.
POLL_S = 1.0
_LINUX = sys.platform.startswith("linux")
_prctl = ctypes.CDLL(None, use_errno=True).prctl if _LINUX else None  # looked up before any fork


def kill_me_with_parent() -> None:
    """Linux: the kernel sends SIGKILL to this process when the thread that started it ends.

    Safe between ``fork`` and ``exec`` (``subprocess``'s ``preexec_fn``): one
    system call through a function looked up at import, nothing imported.
    """
    if _prctl is not None and _prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"prctl(PR_SET_PDEATHSIG): {os.strerror(err)}")


def die_with_parent(parent_pid: int) -> None:
    """Make this process end when ``parent_pid`` (its parent) does; exit now if it already has.

    Meant as a process pool's initializer: ``initializer=die_with_parent,
    initargs=(os.getpid(),)``.
    """
    if _LINUX:
        kill_me_with_parent()
    else:
        threading.Thread(target=_watch_parent, args=(parent_pid,), daemon=True,
                         name="bat-parent-watch").start()
    if os.getppid() != parent_pid:  # the parent died before the request was made
        os._exit(1)


def _watch_parent(parent_pid: int) -> None:
    while os.getppid() == parent_pid:
        time.sleep(POLL_S)
    os._exit(1)


# -- processes tagged through their environment -------------------------------------
#: Environment variable that marks every process of a command step (inherited by its descendants).
TAG_VARIABLE = "BAT_STEP"
#: Rounds of look-and-kill before giving up on processes that keep forking.
KILL_ROUNDS = 20


def tagged_pids(prefix: str) -> list[int]:
    """Processes whose environment holds ``BAT_STEP=<prefix>...`` (Linux /proc; [] elsewhere).

    A process started with a cleared environment (``env -i``) is not found.
    """
    proc = Path("/proc")
    if not _LINUX or not proc.is_dir():
        return []
    needle = f"{TAG_VARIABLE}={prefix}".encode()
    found = []
    for entry in os.scandir(proc):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry.name}/environ", "rb") as fh:
                environ = fh.read()
        except OSError:  # gone, or not ours
            continue
        if environ.startswith(needle) or b"\0" + needle in environ:
            found.append(int(entry.name))
    return found


def kill_tagged(prefix: str) -> int:
    """SIGKILL every process tagged ``prefix`` (see ``tagged_pids``), again until none is left."""
    killed = 0
    for _ in range(KILL_ROUNDS):
        pids = tagged_pids(prefix)
        if not pids:
            break
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
                killed += 1
        time.sleep(0.01)
    return killed
