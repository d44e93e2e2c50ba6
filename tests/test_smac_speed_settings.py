"""The SMAC adapter's speed settings: freed memory kept in the heap during a run, SMAC's refit schedule."""

from __future__ import annotations

import ctypes
import platform
import resource

import pytest

from bat.errors import TunerError
from bat.registry import make_tuner
from tuner_adapters.heap import heap_kept


def faults_of_a_second_allocation() -> int:
    """Page faults while 64 MiB are taken from malloc, written and freed, right after the same was done once.

    Through glibc's malloc itself (ctypes), not numpy: numpy asks for transparent huge pages on large
    arrays, which would hide the 4 KiB faults this counts on a machine where they are granted.
    """
    libc = ctypes.CDLL(None)
    libc.malloc.restype = ctypes.c_void_p
    libc.free.argtypes = [ctypes.c_void_p]
    size = 64 << 20

    def once() -> None:
        block = libc.malloc(size)
        assert block
        ctypes.memset(block, 1, size)
        libc.free(block)

    once()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    once()
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="mallopt is glibc's")
def test_heap_kept_reuses_freed_memory_and_restores_the_defaults() -> None:
    outside = faults_of_a_second_allocation()
    with heap_kept() as changed:
        assert changed
        inside = faults_of_a_second_allocation()
    after = faults_of_a_second_allocation()
    assert outside > 100  # glibc maps a block this large afresh each time by default ...
    assert inside < outside / 10  # ... and inside the block reuses the freed heap memory
    assert after > 100  # the defaults are back


def test_retrain_after_is_smacs_default_unless_set_and_is_checked() -> None:
    assert make_tuner("smac").retrain_after is None
    assert make_tuner("smac", ["retrain_after=16"]).retrain_after == 16
    with pytest.raises(TunerError, match="retrain_after"):
        make_tuner("smac", ["retrain_after=0"])
    assert "threads" in type(make_tuner("smac")).notes
