"""Waiting for what a test means, not for a time: a process gone (tests judge kills by this, never by sleeping)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path


def wait_for(check: Callable[[], bool], seconds: float = 30.0) -> bool:
    """Poll ``check`` until it holds (True) or ``seconds`` pass (its last answer)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if check():
            return True
        time.sleep(0.02)
    return check()


def dead(pid: int) -> bool:
    """The process ``pid`` has ended (no longer in /proc, or a zombie)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return True
    return "State:\tZ" in status


def gone(pid_file: Path, seconds: float = 30.0) -> bool:
    """The process whose pid ``pid_file`` holds has ended; a missing file: it never ran its first command."""
    try:
        pid = int(pid_file.read_text())
    except FileNotFoundError:
        return True
    return wait_for(lambda: dead(pid), seconds)
