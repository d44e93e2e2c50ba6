"""Keep freed memory in the process's heap while a tuner runs (glibc's ``mallopt``, through ctypes).

Why: SMAC's random forest builds scikit-learn trees with room for 2^20
leaves, so every tree fit allocates node arrays of about 144 MiB (2^21
nodes) and frees them again. glibc serves blocks that large with ``mmap`` and gives them back with
``munmap`` on free, so each fit faults every page in afresh: in a 60-trial
GEMM run, 2.6 M page faults and more than half of the process's CPU time
in the kernel. Inside ``heap_kept()`` glibc serves every block from the heap
(``M_MMAP_MAX`` = 0) and keeps freed memory there (``M_TRIM_THRESHOLD`` =
1 GiB), so the next fit reuses pages already mapped. Afterwards both
parameters get glibc's default values again and the free memory is returned
(``malloc_trim``). Not everything is as before: setting either parameter
turns glibc's dynamic mmap threshold off for the rest of the process (see
``mallopt(3)``), so the threshold stays at its 128 KiB default instead of
rising as large blocks are freed; later large allocations of the process
are then served by ``mmap`` more often than they would have been.

The settings are the process's own, made by the adapter that needs them;
no environment variable is involved. Elsewhere than glibc (musl, macOS) the
block runs unchanged. Hand-written because no library exposes ``mallopt``.
"""

from __future__ import annotations

import ctypes
import platform
from collections.abc import Iterator
from contextlib import contextmanager

# glibc's mallopt parameters (malloc.h) and its documented defaults on 64-bit Linux
M_TRIM_THRESHOLD = -1
M_MMAP_MAX = -4
DEFAULT_TRIM_THRESHOLD = 128 * 1024
DEFAULT_MMAP_MAX = 65536
#: freed memory kept in the heap during the block
KEPT_BYTES = 1 << 30


def _glibc() -> ctypes.CDLL | None:
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return None
    libc = ctypes.CDLL(None)
    return libc if hasattr(libc, "mallopt") and hasattr(libc, "malloc_trim") else None


@contextmanager
def heap_kept() -> Iterator[bool]:
    """Serve large blocks from the heap and keep freed memory during the block; yields whether it could."""
    libc = _glibc()
    if libc is None:
        yield False
        return
    changed = bool(libc.mallopt(M_MMAP_MAX, 0)) and bool(libc.mallopt(M_TRIM_THRESHOLD, KEPT_BYTES))
    try:
        yield changed
    finally:
        libc.mallopt(M_MMAP_MAX, DEFAULT_MMAP_MAX)
        libc.mallopt(M_TRIM_THRESHOLD, DEFAULT_TRIM_THRESHOLD)
        libc.malloc_trim(0)
