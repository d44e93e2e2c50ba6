"""``bat run --dataset FILE`` on another tool's file (issue 42): a Kernel Tuner cache is read as Kernel Tuner's
simulation mode reads it, imported on the fly into the data folder and said so; the same file again reuses
that import; a file that would replace other data, and every other command given one, say ``bat import``."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from refusal import assert_refused, run_in

from bat.cli import EXIT_OK, main


@pytest.fixture
def cache(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """pnpoly on the RTX 3090 as a Kernel Tuner cache (the shipped dataset exported)."""
    path = tmp_path / "my_kernel.json"
    assert main(["export", "pnpoly_RTX_3090", "--to", "kernel_tuner", "--out", str(path)]) == EXIT_OK
    capsys.readouterr()
    return path


def test_a_kernel_tuner_cache_replays_imported_on_the_fly(cache: Path, tmp_path: Path, monkeypatch, capsys):
    run = ["run", "-t", "reference:random", "--dataset", str(cache), "-n", "10", "--seed", "3"]
    assert run_in(tmp_path, monkeypatch, run) == EXIT_OK
    first = capsys.readouterr().out
    stored = tmp_path / "bat-data" / "datasets" / "pnpoly_RTX_3090.parquet"
    assert "imported on the fly" in first.splitlines()[0] and stored.exists()
    assert first.splitlines()[1].startswith("the dataset chosen: replaying 4092 recorded configurations")
    assert run_in(tmp_path, monkeypatch, run) == EXIT_OK
    again = capsys.readouterr().out
    assert "imported before from this file" in again.splitlines()[0]
    best = [line for line in first.splitlines() if line.startswith("best time")]
    assert best and best == [line for line in again.splitlines() if line.startswith("best time")]


def test_a_gzipped_cache_too(cache: Path, tmp_path: Path, monkeypatch, capsys):
    packed = tmp_path / "my_kernel.json.gz"
    packed.write_bytes(gzip.compress(cache.read_bytes()))
    assert run_in(tmp_path, monkeypatch, ["run", "-t", "reference:random", "--dataset", str(packed),
                                          "-n", "5"]) == EXIT_OK
    assert "a kernel_tuner file, imported on the fly" in capsys.readouterr().out


def test_other_data_in_the_way_is_refused(cache: Path, tmp_path: Path, monkeypatch, capsys):
    assert run_in(tmp_path, monkeypatch, ["run", "-t", "reference:random", "--dataset", str(cache), "-n", "5"]) == 0
    data = json.loads(cache.read_text())
    data["date"] = "2001-01-01T00:00:00"  # another recording of the same kernel and GPU
    other = tmp_path / "other.json"
    other.write_text(json.dumps(data))
    line = assert_refused(tmp_path, monkeypatch, capsys,
                          ["run", "-t", "reference:random", "--dataset", str(other), "-n", "5"], "other.json")
    assert "bat import" in line


def test_other_commands_name_bat_import(cache: Path, tmp_path: Path, monkeypatch, capsys):
    line = assert_refused(tmp_path, monkeypatch, capsys, ["analyze", "--dataset", str(cache), "-o", "rep"],
                          "my_kernel.json")
    assert "bat import" in line and "Parquet magic" not in line
