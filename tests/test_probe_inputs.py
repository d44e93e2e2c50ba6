"""Issue 32, inputs nobody listed, probed as an attacker would (2026-11-25): environment variables the CLI reads,
special files where a dataset is named, values echoed in messages. Each is handled by a mechanism, not a case:
a data folder or shipped-data folder that is not a folder is an error (never "no data"); a dataset named by a
path that is a FIFO or a device is refused as such (bat.core.limits.regular_file), not "no such dataset"; every
error line and error document is cut at MAX_MESSAGE_CHARS (bat.cli.output.bounded)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from refusal import assert_refused, run_in

from bat.cli.output import MAX_MESSAGE_CHARS


@pytest.mark.parametrize("where", ["a-file", "/dev/zero"])
def test_a_data_folder_that_is_no_folder_is_an_error(where, tmp_path, monkeypatch, capsys) -> None:
    (tmp_path / "a-file").write_text("x")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("BAT_DATA_DIR", where)
    capsys.readouterr()
    from bat.cli import main

    assert main(["list", "datasets"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "BAT_DATA_DIR" in err and "not a folder" in err


@pytest.mark.parametrize("where", ["missing", "a-file", "/dev/zero"])
def test_shipped_data_replaced_by_no_folder_is_an_error(where, tmp_path, monkeypatch, capsys) -> None:
    (tmp_path / "a-file").write_text("x")
    monkeypatch.setenv("BAT_RESULTS", where)
    assert_refused(tmp_path, monkeypatch, capsys, ["list", "datasets"], "BAT_RESULTS")


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_a_dataset_path_that_is_a_special_file_is_named_as_such(kind, tmp_path, monkeypatch, capsys) -> None:
    path = tmp_path / "d.parquet"
    os.mkfifo(path) if kind == "fifo" else path.symlink_to("/dev/zero")
    for argv in (["run", "-t", "reference:random", "-d", "d.parquet", "-n", "3"], ["export", "d.parquet", "--to",
                                                                                     "t4", "-o", "e.json"]):
        line = assert_refused(tmp_path, monkeypatch, capsys, argv, "d.parquet")
        assert "not a regular file" in line


@pytest.mark.parametrize("value", ["a" * 100_000, "x\n" * 50_000, "[/]" * 40_000])
def test_a_value_echoed_in_an_error_is_cut(value, tmp_path, monkeypatch, capsys) -> None:
    line = assert_refused(tmp_path, monkeypatch, capsys, ["run", "-t", value, "-b", "pnpoly", "-n", "3"], "tuner")
    assert len(line) < MAX_MESSAGE_CHARS + 100 and "more characters" in line
    assert run_in(tmp_path, monkeypatch, ["run", "-t", value, "-b", "pnpoly", "-n", "3", "--json"]) == 2
    doc = json.loads(capsys.readouterr().out)
    assert len(doc["error"]) < MAX_MESSAGE_CHARS + 100


def test_a_data_folder_named_with_brackets_and_a_newline_works(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("BAT_DATA_DIR", str(tmp_path / "d[/]\nx"))
    monkeypatch.chdir(tmp_path)
    from bat.cli import main

    assert main(["run", "-t", "reference:random", "-b", "pnpoly", "-n", "3"]) == 0
    out = capsys.readouterr().out
    assert "d[/]\\nx" in out and Path(tmp_path / "d[/]\nx" / "runs").is_dir()
