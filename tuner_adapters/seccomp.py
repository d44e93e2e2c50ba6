"""No network for a tuner's process: a seccomp filter that refuses ``socket()`` of every address family.

The isolated tuner speaks the protocol on pipes it inherits, so it needs no
socket at all: the filter answers ``socket()`` with EACCES whatever the
family (IP, UDP, raw, netlink, UNIX), and ``io_uring_setup`` with ENOSYS
(io_uring can open sockets without the ``socket`` system call). A connected
pair (``socketpair``, which reaches nothing outside the process tree) and
every other call are allowed. A call made through another architecture's
system-call table (x86's 32-bit ``int 0x80``, x32) ends the process, so the
filter cannot be gone around by calling the same thing by another number.

Why seccomp rather than a network namespace: a namespace needs root or
unprivileged user namespaces, which containers and some distributions turn
off, while a seccomp filter is unprivileged on every Linux since 3.17 once
``no_new_privs`` is set (the Landlock sandbox sets it). The filter is a
dozen classic-BPF instructions, built here with ``struct`` and installed with
``prctl`` through ``ctypes``. Standard library only: the supervisor
(bat.tuner_adapters.reaper) imports this file by path.
"""

from __future__ import annotations

import ctypes
import errno
import os
import struct
import sys

#: per machine: the audit architecture, the numbers of socket and io_uring_setup, whether x32 calls exist
_ARCH = {"x86_64": (0xC000003E, 41, 425, True), "aarch64": (0xC00000B7, 198, 425, False)}
_PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 38, 22, 2
_RET_KILL_PROCESS, _RET_ALLOW, _RET_ERRNO = 0x80000000, 0x7FFF0000, 0x00050000
_LD_W_ABS, _JEQ_K, _JGE_K, _RET_K = 0x20, 0x15, 0x35, 0x06
_X32_BIT = 0x40000000


def available() -> bool:
    """Whether this machine gets the filter (Linux on x86_64 or aarch64)."""
    return sys.platform.startswith("linux") and os.uname().machine in _ARCH


def _program(machine: str) -> bytes:
    """The filter for ``machine`` as packed ``struct sock_filter`` instructions."""
    arch, socket_nr, uring_nr, x32 = _ARCH[machine]

    def op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
        return struct.pack("=HBBI", code, jt, jf, k)

    checks = [op(_JGE_K, _X32_BIT, 3, 0)] if x32 else []  # an x32 call: to the ENOSYS return
    body = [
        *checks,
        op(_JEQ_K, socket_nr, 3, 0),  # to the EACCES return
        op(_JEQ_K, uring_nr, 1, 0),  # to the ENOSYS return
        op(_RET_K, _RET_ALLOW),
        op(_RET_K, _RET_ERRNO | errno.ENOSYS),
        op(_RET_K, _RET_ERRNO | errno.EACCES),
    ]
    return b"".join([
        op(_LD_W_ABS, 4),  # seccomp_data.arch
        op(_JEQ_K, arch, 1, 0),
        op(_RET_K, _RET_KILL_PROCESS),
        op(_LD_W_ABS, 0),  # seccomp_data.nr
        *body,
    ])


class _Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]


def deny_network() -> None:
    """Install the filter on this process and everything it starts (call between fork and exec); OSError
    when the kernel refuses, nothing where ``available()`` is false."""
    if not available():
        return
    code = _program(os.uname().machine)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
    program = _Program(len(code) // 8, code)
    if libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(program), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP)")
