"""Issue 32, class 2: checkpoint journals are read through the limits like every other input.

A journal that is no regular file, too big, holds a line nested too deep or an integer too long, a header or a
record that is no object or lacks a field of its kind, is refused in one line naming the file and the line.
The documented recovery stays: a torn last line (a kill while writing) is cut off, the rest kept. ``bat run
--resume`` names a damaged journal of its run instead of silently starting afresh (bat/run/recording)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from refusal import assert_refused

from bat.core.errors import DatasetError
from bat.run.recording import journal as journal_module
from bat.run.recording.journal import HEADER_FIELDS, RECORD_FIELDS, Journal
from bat.run.recording.run_journal import FIELDS, KIND, SUFFIX

RECORD = {"id": 3, "config": {"x": 1}, "status": "ok", "objective_ms": 1.5, "times_ms": [1.5], "compile_ms": None,
          "benchmark_ms": 2.0, "message": "", "extra": {}}
HEADER = {"kind": journal_module.KIND, "version": 1, "meta": {"date": "2026-11-25"}}


def write(path: Path, *lines: object, tail: bytes = b"") -> Path:
    path.write_bytes(b"".join((x if isinstance(x, bytes) else json.dumps(x).encode()) + b"\n" for x in lines) + tail)
    return path


def open_recording(path: Path) -> Journal:
    return Journal.read(path, fields=RECORD_FIELDS, header_fields=HEADER_FIELDS)


def test_a_good_journal_reads_and_a_torn_last_line_is_cut_off(tmp_path: Path) -> None:
    path = write(tmp_path / "j.jsonl", HEADER, RECORD, tail=b'{"id": 4, "conf')
    journal = open_recording(path)
    assert journal.records == [RECORD]
    assert path.read_bytes().endswith(json.dumps(RECORD).encode() + b"\n")  # the recovery: the torn line is gone


@pytest.mark.parametrize(("lines", "culprit"), [
    ((HEADER, b"[" * 100_000 + b"]" * 100_000, RECORD), "line 2: JSON nested deeper"),
    ((HEADER, b'{"id": ' + b"1" * 5000 + b"}", RECORD), "line 2: an integer of 5000 digits"),
    (([1, 2], RECORD), "not a journal of kind"),
    ((HEADER, [RECORD], RECORD), "line 2: a list, not a JSON object"),
    ((HEADER, {k: v for k, v in RECORD.items() if k != "status"}, RECORD), "line 2: no field 'status'"),
    ((HEADER, dict(RECORD, objective_ms="fast"), RECORD), "line 2: field 'objective_ms' is a str"),
    ((HEADER, dict(RECORD, id=True), RECORD), "line 2: field 'id' is a bool"),
    ((HEADER, dict(RECORD, status="great"), RECORD), "line 2: status 'great'"),
    (({k: v for k, v in HEADER.items() if k != "meta"}, RECORD), "line 1 (the header): no field 'meta'"),
])
def test_a_damaged_journal_is_refused_naming_its_line(lines, culprit: str, tmp_path: Path) -> None:
    path = write(tmp_path / "j.jsonl", *lines)
    with pytest.raises(DatasetError, match=culprit.replace("(", r"\(").replace(")", r"\)")) as caught:
        open_recording(path)
    assert "\n" not in str(caught.value) and str(path) in str(caught.value)


def test_a_journal_over_its_size_limit_is_refused_before_it_is_read(tmp_path: Path, monkeypatch) -> None:
    path = write(tmp_path / "j.jsonl", HEADER, RECORD, RECORD)
    monkeypatch.setattr(journal_module, "MAX_JOURNAL_BYTES", 100)
    with pytest.raises(DatasetError, match="over the limit of 100 bytes"):
        open_recording(path)


@pytest.mark.parametrize("how", ["fifo", "dev-zero", "folder"])
def test_a_journal_that_is_no_regular_file_is_refused_at_once(how: str, tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    if how == "fifo":
        os.mkfifo(path)
    elif how == "dev-zero":
        path.symlink_to("/dev/zero")
    else:
        path.mkdir()
    with pytest.raises(DatasetError, match="no journal to resume"):
        open_recording(path)


def test_a_run_journal_record_is_checked_for_its_own_fields(tmp_path: Path) -> None:
    header = {"kind": KIND, "version": 1}
    record = {"config": {}, "status": "ok", "objective_ms": 1.0, "times_ms": [], "compile_ms": None, "cost_s": 0.1,
              "message": "", "extra": {}}
    assert Journal.read(write(tmp_path / "a.jsonl", header, record), kind=KIND, fields=FIELDS).records == [record]
    with pytest.raises(DatasetError, match="field 'cost_s'"):
        Journal.read(write(tmp_path / "b.jsonl", header, dict(record, cost_s=[])), kind=KIND, fields=FIELDS)


RUN = ["run", "-b", "matmul_c", "--backend", "command", "-t", "reference:random", "-n", "2", "-o", "t.parquet",
       "--resume"]


@pytest.mark.parametrize("damage", [b"[" * 100_000, b'{"kind": "bat-run-journal", "version": 1}\n[1]\n'])
def test_bat_run_resume_names_a_damaged_journal(damage: bytes, tmp_path: Path, monkeypatch, capsys) -> None:
    (tmp_path / f"t.parquet.0123abcd{SUFFIX}").write_bytes(damage + b"\n")
    assert_refused(tmp_path, monkeypatch, capsys, RUN, f"t.parquet.0123abcd{SUFFIX}")
