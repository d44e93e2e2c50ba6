"""The fuzzer checks the CLI's property in process (bat.cli.main with captured streams, tests/fuzz_harness.py):
this module proves that equals the command run as a process of its own, on fuzzed examples of every format
that goes through the command line (same exit status, same error line)."""

from __future__ import annotations

import fuzz_harness
import pytest
from fuzz_harness import formats

#: the formats whose check runs a command line (the others call a library reader or the protocol server)
CLI_FORMATS = ["space", "t1", "kerneltuner", "kerneltuner-gz", "t4", "ktt"]


@pytest.mark.parametrize("name", CLI_FORMATS)
def test_in_process_equals_out_of_process(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    fmt = next(f for f in formats() if f.name == name)
    monkeypatch.setattr(fuzz_harness, "CROSS_CHECK_EVERY", [1])
    monkeypatch.setattr(fuzz_harness, "COUNTS", [0, 0])

    fmt.fuzz(4)
    assert fuzz_harness.COUNTS[1] == fuzz_harness.COUNTS[0] >= 4


def test_a_hang_is_named_not_waited_for(monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    monkeypatch.setattr(fuzz_harness, "WALL_LIMIT_S", 0.2)  # blocked, no CPU used: the wall clock ends it
    with pytest.raises(fuzz_harness.Hang, match=r"a hang: sleeper past 0\.2 s"), fuzz_harness.time_limit("sleeper"):
        time.sleep(5)
    monkeypatch.setattr(fuzz_harness, "WALL_LIMIT_S", 60.0)
    monkeypatch.setattr(fuzz_harness, "TIME_LIMIT_S", 0.2)  # busy: the CPU clock ends it, whatever the load
    with pytest.raises(fuzz_harness.Hang, match="of CPU time"), fuzz_harness.time_limit("spinner"):
        while True:
            pass
