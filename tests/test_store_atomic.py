"""The campaign store (``runs.sqlite``) appears with its schema or not at all (issue 31, test suite under load).

A reader that opens the file between its creation and its table's would fail; the store is made
under a private name and linked into place, so the first moment ``runs.sqlite`` exists it holds
the table.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import bat.campaign.store as store_module
from bat.campaign.store import FILE_NAME, RunStore


def tables(path: Path) -> set[str]:
    with sqlite3.connect(f"file:{path}?immutable=1", uri=True) as db:  # reads, leaves no -wal/-shm file
        return {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def test_the_file_is_complete_the_moment_it_appears(tmp_path: Path, monkeypatch) -> None:
    seen = []
    real_link = os.link

    def link(src, dst):
        assert not Path(dst).exists()
        seen.append(tables(Path(src)))  # what readers will see at once
        real_link(src, dst)

    monkeypatch.setattr(store_module.os, "link", link)
    RunStore(tmp_path)
    assert seen == [{"runs"}]
    assert tables(tmp_path / FILE_NAME) == {"runs"}
    assert sorted(p.name for p in tmp_path.iterdir() if "creating" in p.name) == []


def test_a_second_creator_keeps_the_first_store_and_leaves_nothing_behind(tmp_path: Path) -> None:
    first = RunStore(tmp_path)
    first.write([])
    store_module._create(tmp_path / FILE_NAME)  # what a process that lost the race does
    assert tables(tmp_path / FILE_NAME) == {"runs"}
    assert [p.name for p in tmp_path.iterdir() if "creating" in p.name] == []
    assert RunStore(tmp_path).done_ids() == set()


def test_processes_creating_one_store_at_once_all_open_it(tmp_path: Path) -> None:
    code = "import sys; from bat.campaign.store import RunStore; print(len(RunStore(sys.argv[1]).done_ids()))"
    procs = [subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(4)]
    results = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0] * 4, results
    assert [out.strip() for out, _ in results] == ["0"] * 4
