"""What a test run may have written outside its temporary folders: the repository's tree and the user's home.

A snapshot is taken before the first test and compared after the last (tests/conftest.py): in the
repository, every path ``git status --ignored`` names (a new file, a changed one, a new ignored folder such
as ``bat-data/`` or ``.hypothesis/``), less Python's bytecode and pytest's own cache folder; in ``$HOME``,
the names in it and in its ``.cache``, ``.config`` and ``.local/share`` (a tool's new folder there: an
emulator build cache, a matplotlib font list, an IPython profile). Names only, not times: other programs
on a shared machine may touch what exists, and a run must not fail for that.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

#: written by Python and pytest themselves, never by a test
INFRASTRUCTURE = ("__pycache__/", ".pytest_cache/")
#: folders of $HOME whose names are listed
HOME_FOLDERS = ("", ".cache", ".config", ".local/share")


def repository_paths(root: Path) -> frozenset[str] | None:
    """``git status --ignored`` of ``root``, one entry a path; None where git cannot tell (no checkout)."""
    try:
        out = subprocess.run(["git", "status", "--porcelain=v1", "-z", "--ignored"], cwd=root,
                             capture_output=True, check=True, timeout=60).stdout.decode()
    except (OSError, subprocess.SubprocessError):
        return None
    return frozenset(entry for entry in out.split("\0")
                     if entry and not any(part in entry for part in INFRASTRUCTURE))


def home_names(home: Path) -> frozenset[str]:
    """The names in ``home`` and in its folders of ``HOME_FOLDERS`` (those that exist)."""
    return frozenset(str(Path(folder) / name) for folder in HOME_FOLDERS if (home / folder).is_dir()
                     for name in os.listdir(home / folder))


def snapshot(root: Path, home: Path) -> tuple[frozenset[str] | None, frozenset[str]]:
    """The repository's status and the home's names, now."""
    return repository_paths(root), home_names(home)


def written(before: tuple[frozenset[str] | None, frozenset[str]],
            after: tuple[frozenset[str] | None, frozenset[str]]) -> list[str]:
    """What appeared or changed between two snapshots, one line each (git's status code and path, or the
    name under the home folder)."""
    (repo_before, home_before), (repo_after, home_after) = before, after
    lines = [f"repository: {e}" for e in sorted((repo_after or frozenset()) - (repo_before or frozenset()))]
    return lines + [f"$HOME: {name}" for name in sorted(home_after - home_before)]
