"""A filesystem sandbox for a tuner's process: Linux Landlock, applied between fork and exec.

Why Landlock, and why by hand: Landlock is an unprivileged Linux security
module (kernel 5.13+, on by default in the major distributions), so the
sandbox needs no root, no setuid helper and no user namespaces; a process
restricts itself and every program it executes afterwards, and the kernel
also refuses it ``ptrace`` (so ``/proc/<parent>/mem``) of processes outside
its domain. bubblewrap would need a Debian package and user namespaces, which
containers often disable. The Python bindings on PyPI are pre-releases
(``landlock`` 1.0.0.dev5, ``landlockpy`` 0.2.0), while the kernel interface
is three system calls with a stable ABI, so the calls are made here with
``ctypes`` (about forty lines) rather than through a pre-release dependency.

``Sandbox.apply`` runs in the child after ``fork`` (``subprocess.Popen(...,
preexec_fn=sandbox.apply)``): every filesystem right the kernel's ABI knows
is handled, then granted back only beneath ``read`` (read and execute) and
``write`` (everything) paths; with ABI 4+ TCP bind and connect are denied,
with ABI 6+ signals and abstract UNIX sockets outside the domain are too
(every other socket is refused by bat.tuner_adapters.seccomp).
``landlock_abi`` is 0 where the kernel lacks Landlock (or on another OS):
the caller then says so on the run's first line.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import struct
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446  # x86_64 and aarch64 share these numbers
_VERSION = 1  # landlock_create_ruleset flag: return the ABI version
_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38
#: filesystem rights by the ABI that introduced them (EXECUTE .. MAKE_SYM, REFER, TRUNCATE, IOCTL_DEV)
_FS_RIGHTS = {1: (1 << 13) - 1, 2: 1 << 13, 3: 1 << 14, 5: 1 << 15}
_FILE_RIGHTS = 1 | 2 | 4 | (1 << 14) | (1 << 15)  # execute, write, read, truncate, ioctl: allowed on a file
_READ = 1 | 4 | 8  # execute, read file, read dir


@cache
def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


@cache
def landlock_abi() -> int:
    """The kernel's Landlock ABI version, 0 when Landlock is not available here."""
    if not sys.platform.startswith("linux") or os.uname().machine not in ("x86_64", "aarch64"):
        return 0
    abi = _libc().syscall(_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_VERSION))
    return max(0, int(abi))


def _fs_rights(abi: int) -> int:
    return sum(bits for since, bits in _FS_RIGHTS.items() if abi >= since)


@dataclass(frozen=True)
class Sandbox:
    """Read-only ``read`` paths, read-write ``write`` paths; nothing else of the filesystem."""

    read: tuple[str, ...]
    write: tuple[str, ...]

    @property
    def available(self) -> bool:
        return landlock_abi() > 0

    def describe(self) -> str:
        """One line saying what the tuner's process may touch (or that no sandbox exists here), whether it has
        a network, and that its processes end with its run (bat.tuner_adapters.reaper)."""
        from bat.tuner_adapters import seccomp

        net = ("no network (seccomp: no socket of any family)" if seccomp.available()
               else "the network open (no seccomp filter on this machine)")
        tree = "every process it starts ended, reaped and charged with its run"
        abi = landlock_abi()
        if not abi:
            return ("isolation: the kernel has no Landlock, so the tuner's process runs without a filesystem "
                    f"sandbox (it is still a separate process with a scratch folder and no data path); {net}; "
                    f"{tree}")
        extra = "; no signals or abstract sockets outside it" if abi >= 6 else ""
        count = f" ({len(self.read)} paths)" if self.read else ""
        return (f"isolation: Landlock ABI {abi} sandbox: the tuner reads only Python, BAT and its own code"
                f"{count}, writes only its scratch folder; {net}{extra}; {tree}")

    def apply(self) -> None:
        """Restrict this process (call between fork and exec); OSError when the kernel refuses."""
        abi = landlock_abi()
        if not abi:
            return
        libc, fs = _libc(), _fs_rights(abi)
        attr = struct.pack("QQQ", fs, 3 if abi >= 4 else 0, 3 if abi >= 6 else 0)
        size = 8 if abi < 4 else 16 if abi < 6 else 24
        ruleset = libc.syscall(_CREATE_RULESET, ctypes.c_char_p(attr[:size]), ctypes.c_size_t(size),
                               ctypes.c_uint32(0))
        if ruleset < 0:
            raise OSError(ctypes.get_errno(), "landlock_create_ruleset")
        try:
            for paths, rights in ((self.read, _READ), (self.write, fs)):
                for path in paths:
                    self._allow(int(ruleset), path, rights & fs)
            if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
                raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
            if libc.syscall(_RESTRICT_SELF, ctypes.c_int(int(ruleset)), ctypes.c_uint32(0)) != 0:
                raise OSError(ctypes.get_errno(), "landlock_restrict_self")
        finally:
            os.close(int(ruleset))

    @staticmethod
    def _allow(ruleset: int, path: str, rights: int) -> None:
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            return  # a path that does not exist grants nothing
        try:
            if not os.path.isdir(path):
                rights &= _FILE_RIGHTS
            beneath = struct.pack("=Qi", rights, fd)  # struct landlock_path_beneath_attr is packed
            if _libc().syscall(_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(_PATH_BENEATH),
                               ctypes.c_char_p(beneath), ctypes.c_uint32(0)) != 0:
                raise OSError(ctypes.get_errno(), f"landlock_add_rule {path}")
        finally:
            os.close(fd)


#: system folders a Python process needs to start (shared libraries, the loader's cache, locales)
SYSTEM_READ = ("/usr", "/lib", "/lib64", "/bin", "/etc", "/sys/devices/system/cpu", "/dev/urandom", "/dev/null",
               "/proc/meminfo", "/proc/cpuinfo")


def python_paths() -> list[str]:
    """The running Python's installation: its prefixes and the real folder of its executable."""
    found = {sys.base_prefix, sys.prefix, sys.exec_prefix, str(Path(sys.executable).resolve().parent.parent)}
    return sorted(os.path.realpath(p) for p in found)


#: sub-packages of ``bat`` that pyproject.toml maps from folders of their own: an editable install leaves
#: them there, outside bat/ (tests/test_architecture.py checks this against pyproject.toml)
MAPPED = ("analysis", "benchmarks", "results", "tuner_adapters")


def package_code(package: str = "bat") -> list[str]:
    """The code of the imported ``package``: its folder, and each mapped sub-package found outside it, by real path.

    A sub-package outside it that holds data (``.parquet``) contributes only its ``.py`` files, so the
    data stays unreadable.
    """
    root = Path(os.path.realpath(sys.modules[package].__path__[0]))
    out = [str(root)]
    for name in MAPPED:
        spec = importlib.util.find_spec(f"{package}.{name}")
        where = spec.submodule_search_locations if spec and spec.origin else None
        real = Path(os.path.realpath(where[0])) if where else None
        if real is None or real.is_relative_to(root):
            continue
        if any(real.rglob("*.parquet")):
            out.extend(str(p) for p in sorted(real.rglob("*.py")))
        else:
            out.append(str(real))
    return out
