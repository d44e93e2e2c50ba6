"""One check for every refusal test of issue 32: exit 2, one ``error:`` line naming the culprit, nothing written."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from bat.cli import main


def snapshot(root: Path) -> dict[str, tuple[int, int]]:
    """Every file below ``root`` with its size and modification time."""
    seen = {}
    for folder, _, files in os.walk(root):
        for f in files:
            st = os.stat(os.path.join(folder, f), follow_symlinks=False)
            seen[os.path.join(folder, f)] = (st.st_size, st.st_mtime_ns)
    return seen


def run_in(folder: Path, monkeypatch: pytest.MonkeyPatch, argv: list[str]) -> int:
    """``bat argv`` with ``folder`` as working, temporary and data folder."""
    monkeypatch.chdir(folder)
    (folder / ".tmp").mkdir(exist_ok=True)
    monkeypatch.setattr(tempfile, "tempdir", str(folder / ".tmp"))
    monkeypatch.setenv("BAT_DATA_DIR", str(folder / "bat-data"))
    return main(argv)


def assert_refused(folder: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                   argv: list[str], culprit: str) -> str:
    """``bat argv`` exits 2 with one line naming ``culprit`` and writes nothing; the line comes back."""
    capsys.readouterr()
    before = snapshot(folder)
    code = run_in(folder, monkeypatch, argv)
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2, f"exit {code}; stderr: {err}"
    assert len(lines) == 1 and lines[0].startswith("error: "), f"not one error line: {err!r}"
    assert culprit in lines[0], f"{culprit!r} not named in: {lines[0]}"
    assert "internal error" not in lines[0]
    assert snapshot(folder) == before, "a file was written or changed"
    return lines[0]
