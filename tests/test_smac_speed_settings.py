"""The SMAC adapter's speed settings: freed memory kept in the heap during a run, SMAC's refit schedule."""

from __future__ import annotations

import json
import platform
import subprocess
import sys
import textwrap

import pytest

from bat.core.errors import TunerError
from bat.registry import make_tuner

MEASURE = textwrap.dedent(
    """
    import ctypes, json, resource
    from bat.tuner_adapters.heap import heap_kept

    libc = ctypes.CDLL(None)
    libc.malloc.restype = ctypes.c_void_p
    libc.free.argtypes = [ctypes.c_void_p]
    SIZE = 64 << 20

    def once():
        block = libc.malloc(SIZE)
        assert block
        ctypes.memset(block, 1, SIZE)
        libc.free(block)

    def faults_of_a_second_allocation():
        once()
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        once()
        return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before

    outside = faults_of_a_second_allocation()
    with heap_kept() as changed:
        inside = faults_of_a_second_allocation()
    after = faults_of_a_second_allocation()
    print(json.dumps({"changed": changed, "outside": outside, "inside": inside, "after": after}))
    """
)


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="mallopt is glibc's")
def test_heap_kept_reuses_freed_memory_and_restores_the_defaults() -> None:
    # A fresh interpreter: this process's heap may hold ranges an earlier test's numpy arrays marked for
    # transparent huge pages, which hide the 4 KiB faults counted here. The blocks come from glibc's
    # malloc itself (ctypes), not from numpy, for the same reason.
    proc = subprocess.run([sys.executable, "-c", MEASURE], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    m = json.loads(proc.stdout.strip().splitlines()[-1])
    assert m["changed"]
    assert m["outside"] > 100  # glibc maps a block this large afresh each time by default ...
    assert m["inside"] < m["outside"] / 10  # ... and inside the block reuses the freed heap memory
    assert m["after"] > 100  # the defaults are back


def test_retrain_after_is_smacs_default_unless_set_and_is_checked() -> None:
    assert make_tuner("smac").retrain_after is None
    assert make_tuner("smac", ["retrain_after=16"]).retrain_after == 16
    with pytest.raises(TunerError, match="retrain_after"):
        make_tuner("smac", ["retrain_after=0"])
    assert "threads" in type(make_tuner("smac")).notes


def test_smac_warnings_are_counted_in_the_report_not_printed(capfd) -> None:
    import logging

    from bat.tuner_adapters.smac_tuner import _smac_log_counted

    counts: dict[str, int] = {}
    logger = logging.getLogger("smac.main.config_selector")
    with _smac_log_counted(counts):
        logger.warning("Did not find enough configurations")
        logger.warning("Did not find enough configurations")
        logger.info("not counted")
    assert counts == {"Did not find enough configurations": 2}
    assert "Did not find" not in capfd.readouterr().err
    assert logging.getLogger("smac").propagate and not logging.getLogger("smac").handlers  # restored
