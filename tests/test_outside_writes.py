"""The guard of tests/conftest.py: a run that writes outside its temporary folders is told what it wrote."""

from __future__ import annotations

import subprocess
from pathlib import Path

from outside_writes import snapshot, written


def test_new_files_in_the_repository_and_new_names_in_home_are_named(tmp_path: Path) -> None:
    repo, home = tmp_path / "repo", tmp_path / "home"
    (home / ".cache" / "bat" / "emulated").mkdir(parents=True)
    (repo / "__pycache__").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / ".gitignore").write_text("/bat-data/\n__pycache__/\n")
    before = snapshot(repo, home)
    assert before[0] is not None and written(before, snapshot(repo, home)) == []
    (repo / "bat-data").mkdir()  # an ignored folder
    (repo / "bat-data" / "x.parquet").write_text("")
    (repo / "trace.parquet").write_text("")  # an untracked file
    (repo / "__pycache__" / "m.pyc").write_text("")  # Python's, not a test's
    (home / ".cache" / "bat" / "emulated" / "f2").mkdir()  # a kernel built where no test may build it
    (home / ".ipython").mkdir()  # a tool's folder that was not there
    (home / ".config" / "procps").mkdir(parents=True)  # another program's: not looked at
    assert written(before, snapshot(repo, home)) == [
        "repository: !! bat-data/", "repository: ?? trace.parquet", "$HOME: .cache/bat/emulated/f2",
        "$HOME: .ipython/"]


def test_outside_a_checkout_only_home_is_compared(tmp_path: Path) -> None:
    before = snapshot(tmp_path / "not-a-repo", tmp_path)
    assert before[0] is None
    (tmp_path / ".config" / "matplotlib").mkdir(parents=True)
    assert written(before, snapshot(tmp_path / "not-a-repo", tmp_path)) == ["$HOME: .config/matplotlib/"]
