"""The fuzzer checks the CLI's property in process (bat.cli.main with captured streams, tests/fuzz_harness.py):
this module proves that equals the command run as a process of its own, on fuzzed examples of every format
that goes through the command line (same exit status, same error line).

Hypothesis's simplest examples are the same bytes for every plain JSON format (``null``, a 6000-digit integer,
bytes that are not UTF-8): ``bat space`` and ``bat import`` refuse them before telling one format from another,
so they run out of process once per command (under ``space`` and ``kerneltuner``); T1, T4 and KTT spend their
processes on inputs of their own (JSON objects: their bases mutated), two each."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import fuzz_harness
import pytest
from fuzz_harness import formats

#: the formats whose check runs a command line (the others call a library reader or the protocol server)
CLI_FORMATS = ["space", "t1", "kerneltuner", "kerneltuner-gz", "t4", "ktt"]
#: formats whose inputs other than JSON objects another format already runs out of process through the same
#: command (t1: space's ``bat space``; t4, ktt: kerneltuner's ``bat import``), and examples drawn for them
#: (seven: two of them objects)
OBJECTS_ONLY = {"t1": 7, "t4": 7, "ktt": 7}


def _object(data: bytes) -> bool:
    try:
        return isinstance(json.loads(data), dict)
    except ValueError:
        return False


@pytest.mark.parametrize("name", CLI_FORMATS)
def test_in_process_equals_out_of_process(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    fmt = next(f for f in formats() if f.name == name)
    monkeypatch.setattr(fuzz_harness, "CROSS_CHECK_EVERY", [1])
    monkeypatch.setattr(fuzz_harness, "COUNTS", [0, 0])
    if name not in OBJECTS_ONLY:
        fmt.fuzz(4)
        assert fuzz_harness.COUNTS[1] == fuzz_harness.COUNTS[0] >= 4
        return
    crossed: list[bytes] = []

    def check(data: bytes, folder: Path) -> None:
        fuzz_harness.CROSS_CHECK_EVERY[0] = 1 if _object(data) else 0
        before = fuzz_harness.COUNTS[1]
        fmt.check(data, folder)
        if fuzz_harness.COUNTS[1] > before:
            crossed.append(data)

    dataclasses.replace(fmt, check=check).fuzz(OBJECTS_ONLY[name])
    assert fuzz_harness.COUNTS[0] >= OBJECTS_ONLY[name] and fuzz_harness.COUNTS[1] == len(crossed) >= 2
    assert all(_object(data) for data in crossed)


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
