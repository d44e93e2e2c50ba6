"""The bad-input battery: every row of bad_input_cases.CASES, through ``bat``'s real entry point.

Each row must exit with its status (2), print exactly one line on stderr
(``error: ...``) naming its culprit, print no traceback, and leave every
file as it was: its own folder (which is also its temporary folder: command
backend scratch, and its data folder: default outputs) and the repository's
results/. The number of rows is printed
at the end of the test session (conftest.py).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from bad_input_builders import ROOT
from bad_input_cases import CASES, Case

from bat.cli import app, main
from bat.core.locking import FolderLock

#: at least this many rows, across every command and input format (issue 19)
MINIMUM = 150


def snapshot(*roots: Path) -> dict[str, tuple[int, int]]:
    """Every file and folder below ``roots``: (size, modification time); folders as (-1, 0)."""
    seen: dict[str, tuple[int, int]] = {}
    for root in roots:
        for folder, dirs, files in os.walk(root):
            for d in dirs:
                seen[os.path.join(folder, d)] = (-1, 0)
            for f in files:
                st = os.stat(os.path.join(folder, f))
                seen[os.path.join(folder, f)] = (st.st_size, st.st_mtime_ns)
    return seen


def build(case: Case, folder: Path) -> None:
    for name, content in case.files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if callable(content):
            content(path)
        elif isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)


def test_the_battery_is_big_enough() -> None:
    assert len(CASES) >= MINIMUM
    assert len({c.id for c in CASES}) == len(CASES)
    covered = {c.argv[0] for c in CASES}
    assert {c.name for c in app.registered_commands} <= covered, "a command without bad-input rows"


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input(case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / ".tmp"))  # command backend scratch goes here
    monkeypatch.setenv("BAT_DATA_DIR", str(tmp_path / "bat-data"))  # and default outputs here
    for key, value in case.env.items():
        monkeypatch.setenv(key, value)
    build(case, tmp_path)
    before = snapshot(tmp_path, ROOT / "results")
    code = main(list(case.argv))
    out = capsys.readouterr()
    lines = [line for line in out.err.splitlines() if line.strip()]
    assert code == case.code, f"exit {code}; stderr: {out.err}"
    assert "Traceback" not in out.err + out.out
    assert len(lines) == 1 and lines[0].startswith("error: "), f"not one error line: {out.err!r}"
    assert case.culprit in lines[0], f"{case.culprit!r} not named in: {lines[0]}"
    assert "internal error" not in lines[0]
    assert snapshot(tmp_path, ROOT / "results") == before, "a file was written or changed"


def test_a_second_campaign_on_a_folder_in_use_names_the_holder(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    with FolderLock(tmp_path / "cmp", "--out"):
        before = snapshot(tmp_path)
        code = main(["compare", "-t", "reference:random", "-b", "pnpoly", "--budgets", "5", "--repeats", "1",
                     "-o", "cmp"])
        after = snapshot(tmp_path)
    err = capsys.readouterr().err
    assert code == 2 and f"in use by process {os.getpid()}" in err and "cmp" in err
    assert after == before
