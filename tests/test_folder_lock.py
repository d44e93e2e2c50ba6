"""The output-folder lock leaves nothing behind (issue 42): no ``.bat.lock`` in a finished output folder, no
empty folder from a command that wrote nothing, and still never two holders at once."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

import pytest

from bat.cli import EXIT_OK, main
from bat.core.errors import FolderInUseError
from bat.core.locking import LOCK_NAME, FolderLock, _same_file


def test_a_released_lock_leaves_no_file_and_no_empty_folder_it_made(tmp_path: Path):
    made = tmp_path / "new"
    with FolderLock(made, "--out"):
        assert (made / LOCK_NAME).exists()
        with pytest.raises(FolderInUseError):
            FolderLock(made, "--out").acquire()
    assert not made.exists()  # the lock made it, nothing was written: gone
    kept = tmp_path / "kept"
    kept.mkdir()
    with FolderLock(kept, "--out"):
        (kept / "report.md").write_text("x")
    assert sorted(p.name for p in kept.iterdir()) == ["report.md"]


def test_a_lock_on_a_removed_file_is_not_held(tmp_path: Path):
    """A process that opened the lock file before its holder removed it may lock that old file: it must see
    that the path names another file now (and so lock again), or two processes would hold the folder."""
    holder = FolderLock(tmp_path, "--out").acquire()
    late = os.open(tmp_path / LOCK_NAME, os.O_RDWR)
    holder.release()
    fcntl.flock(late, fcntl.LOCK_EX | fcntl.LOCK_NB)  # succeeds: the removed file's lock is free
    assert not _same_file(late, tmp_path / LOCK_NAME)
    with FolderLock(tmp_path, "--out") as fresh:  # a fresh file, locked for real
        assert _same_file(fresh._fd, tmp_path / LOCK_NAME)
    os.close(late)


@pytest.mark.slow
def test_finished_outputs_hold_no_lock_file(tmp_path: Path, capsys):
    assert main(["compare", "-t", "reference:random", "-b", "pnpoly", "--budgets", "5", "-r", "2",
                 "-o", str(tmp_path / "c"), "--no-plots"]) == EXIT_OK
    assert main(["analyze", "-b", "pnpoly", "--gpus", "RTX_3090", "--no-importance", "-o", str(tmp_path / "a")]) \
        == EXIT_OK
    assert not list(tmp_path.rglob(LOCK_NAME))
