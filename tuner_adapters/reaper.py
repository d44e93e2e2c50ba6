"""The isolated tuner's supervisor: starts it sandboxed, and ends and reaps every process it started.

bat.tuner_adapters.isolated runs ``python -I -S reaper.py SPEC`` in a new
session; SPEC is JSON: the tuner's ``argv``, the sandbox's ``read`` and
``write`` paths, and ``report``, a file descriptor for the end-of-run
report. Standard library only (its two siblings are imported by file), so it
starts in milliseconds and runs nothing a tuner could have placed on a path.

By construction rather than by list:

- the supervisor is a *child subreaper* (``PR_SET_CHILD_SUBREAPER``): a
  descendant whose parent exits (a double fork, a ``setsid`` helper) is
  re-parented to it, never to init, so every process the tuner starts stays
  below it;
- the tuner is forked from it, sandboxed (Landlock: bat.tuner_adapters.sandbox)
  and without network (seccomp: bat.tuner_adapters.seccomp), then executed;
  from inside its Landlock domain (ABI 6+) it cannot signal the supervisor;
- when the tuner exits, or the harness sends SIGTERM (the run is over, or the
  harness itself died: ``PR_SET_PDEATHSIG``), the supervisor lists what is
  left below it (zombies included), kills it all and reaps until it has no
  child at all; then it writes the report (the tuner's exit status, what was
  left, its own CPU time) and exits. Whatever the descendants spent, reaped
  by anyone, has by then flowed into the supervisor's ``wait4`` usage, which
  the harness reads: the tuner's whole CPU time, threads that ended and
  children never waited for included.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import resource
import signal
import sys
import time
from typing import TYPE_CHECKING

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
if TYPE_CHECKING:  # the same two files, by their names in the package
    from bat.tuner_adapters.sandbox import Sandbox
    from bat.tuner_adapters.seccomp import deny_network
else:  # this file runs as a script: its siblings by file
    from sandbox import Sandbox
    from seccomp import deny_network

_PR_SET_PDEATHSIG, _PR_SET_CHILD_SUBREAPER = 1, 36
#: processes named in the report at most (a fork bomb's thousands would not fit the report's pipe)
MAX_LISTED = 50


class _Stop(Exception):
    """SIGTERM: the run is over."""


def _stop(signum: int, frame: object) -> None:
    raise _Stop


def descendants(root: int) -> list[dict[str, object]]:
    """Every process below ``root`` (zombies too): pid, command name and state, from /proc."""
    parent: dict[int, int] = {}
    facts: dict[int, tuple[str, str]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                raw = f.read()
        except OSError:
            continue
        name, _, rest = raw.partition(b"(")[2].rpartition(b")")
        fields = rest.split()
        parent[int(entry)] = int(fields[1])
        facts[int(entry)] = (name.decode(errors="replace"), fields[0].decode())
    below, frontier = [], [root]
    while frontier:
        children = [pid for pid, ppid in parent.items() if ppid in frontier]
        below += children
        frontier = children
    return [{"pid": pid, "name": facts[pid][0], "state": facts[pid][1]} for pid in sorted(below)]


def end_all() -> None:
    """Kill everything below this process and reap it, until no child is left."""
    me = os.getpid()
    while True:
        for p in descendants(me):
            with contextlib.suppress(OSError):
                os.kill(int(str(p["pid"])), signal.SIGKILL)
        try:
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        except ChildProcessError:
            return
        time.sleep(0.001)


def main(spec: dict) -> int:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0 or libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM,
                                                                          0, 0, 0) != 0:
        os.write(2, f"isolate: cannot supervise the tuner: {os.strerror(ctypes.get_errno())}\n".encode())
        return 70
    signal.signal(signal.SIGTERM, _stop)
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})  # held until the supervisor waits for the tuner
    report_fd = int(spec["report"])
    tuner = os.fork()
    if tuner == 0:
        try:
            os.close(report_fd)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
            own = f"/proc/{os.getpid()}"  # its own /proc entry (maps, status, limits): what a library reads of itself
            Sandbox((*spec["read"], own), tuple(spec["write"])).apply()
            deny_network()
            os.execv(spec["argv"][0], spec["argv"])
        except BaseException as exc:  # the child never returns into the supervisor
            os.write(2, f"isolate: cannot start the tuner: {exc}\n".encode())
        os._exit(127)
    devnull = os.open(os.devnull, os.O_RDWR)  # the protocol's pipes are the tuner's alone
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    status: int | None
    try:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
        status = os.waitstatus_to_exitcode(os.waitpid(tuner, 0)[1])
    except _Stop:
        status = None
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    left = [p for p in descendants(os.getpid()) if p["pid"] != tuner]
    end_all()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    report = {"status": status, "left": left[:MAX_LISTED], "left_count": len(left),
              "supervisor_cpu_s": usage.ru_utime + usage.ru_stime}
    os.write(report_fd, json.dumps(report).encode())
    return 0


if __name__ == "__main__":
    sys.exit(main(json.loads(sys.argv[1])))
