"""Special files as inputs and outputs (issue 43, class 3): refused from their kind, in one place.

A FIFO or a device where BAT reads (``bat verify --source``, a space file, an import) would hang or fill
memory; a loop of symbolic links or a FIFO where BAT writes ended in an internal error. Every such path
goes through ``bat.core.limits`` (``regular_file`` to read, ``check_kind`` to write) before any work.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bat.cli import main
from bat.cli.output import EXIT_USAGE


def _listing(folder: Path) -> dict[str, tuple[int, int]]:
    """Every entry below ``folder`` without following links (a loop is listed, not followed)."""
    return {str(p): (os.lstat(p).st_size, os.lstat(p).st_mtime_ns) for p in folder.rglob("*")}


def _loop(folder: Path) -> None:
    (folder / "loop1").symlink_to("loop2")
    (folder / "loop2").symlink_to("loop1")


def _fifo(folder: Path) -> None:
    os.mkfifo(folder / "loop1")


def _device(folder: Path) -> None:
    (folder / "loop1").symlink_to(os.devnull)


@pytest.mark.parametrize("make", [_loop, _fifo, _device], ids=["symlink-loop", "fifo", "device"])
@pytest.mark.parametrize("argv", [
    ["verify", "-b", "pnpoly", "--first", "--source", "loop1"],
    ["space", "loop1"],
    ["import", "loop1", "-o", "out.parquet"],
    ["run", "-t", "reference:random", "-b", "pnpoly", "-n", "5", "-o", "loop1", "--force"],
    ["export", "gemm", "--to", "t1", "-o", "loop1", "--force"],
    ["export", "pnpoly_RTX_3090", "--to", "t4", "-o", "loop1", "--force"],
    ["compare", "-t", "r=reference:random", "-b", "pnpoly", "--budgets", "5", "--repeats", "1", "-o", "loop1"],
    ["analyze", "-b", "pnpoly", "--no-importance", "-o", "loop1"],
], ids=lambda argv: argv[0] + ("-out" if "-o" in argv else "-in"))
def test_a_special_path_is_one_line_and_writes_nothing(argv, make, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("BAT_DATA_DIR", str(tmp_path / "bat-data"))
    make(tmp_path)
    before = _listing(tmp_path)
    code = main(argv)
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == EXIT_USAGE, err
    assert len(lines) == 1 and "loop1" in lines[0] and "internal error" not in lines[0], err
    assert _listing(tmp_path) == before
