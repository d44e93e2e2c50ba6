"""What a test run may have written outside its temporary folders: the repository's tree and the user's home.

A snapshot is taken before the first test and compared after the last (tests/conftest.py): in the
repository, every path ``git status --ignored`` names (a new file, a changed one, a new ignored folder such
as ``bat-data/`` or ``.hypothesis/``), less Python's bytecode and pytest's own cache folder; in ``$HOME``,
the folders where the tools under test write by default (the emulator's builds, matplotlib's and
IPython's files, Jupyter's connection files) and the names in each. Names only, not times, and not the
rest of ``$HOME``: on a shared machine other programs write there (a shell's history, ``top``'s settings
in ``.config/procps`` appeared during one run), and a run must not fail for them.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

#: written by Python and pytest themselves, never by a test
INFRASTRUCTURE = ("__pycache__/", ".pytest_cache/")
#: where the tools under test write when tests/conftest.py does not send them to pytest's cache folder
HOME_FOLDERS = (".cache/bat/emulated", ".cache/matplotlib", ".config/matplotlib", ".ipython", ".local/share/jupyter")


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
    """The folders of ``HOME_FOLDERS`` that exist in ``home``, and the names in each."""
    present = [folder for folder in HOME_FOLDERS if (home / folder).is_dir()]
    return frozenset([*(f"{folder}/" for folder in present),
                      *(f"{folder}/{name}" for folder in present for name in os.listdir(home / folder))])


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
