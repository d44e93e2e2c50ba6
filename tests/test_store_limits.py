"""Issue 32, class 2: bat compare's run store (runs.sqlite) is read through the limits like every other input.

A store that is not a regular file, not SQLite, not a run store, or holds a run whose metadata is too deep,
too long, of the wrong types, stored for another run, or whose trace is not an Arrow stream, is refused in
one line naming the file, exit 2, before any run is made; nothing hangs (bat/campaign/store.py)."""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path

import pytest
from refusal import assert_refused, run_in

from bat.campaign import store

COMPARE = ["compare", "-t", "reference:random", "-b", "pnpoly", "--gpus", "RTX_3090", "--budgets", "5",
           "--repeats", "1", "-o", "cmp", "--no-plots"]


@pytest.fixture(scope="module")
def campaign(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished small campaign (its output folder with runs.sqlite)."""
    folder = tmp_path_factory.mktemp("campaign")
    with pytest.MonkeyPatch.context() as mp:
        assert run_in(folder, mp, COMPARE) == 0
    return folder / "cmp"


@pytest.fixture
def folder(campaign: Path, tmp_path: Path) -> Path:
    """A fresh copy of the campaign's store alone (its outputs removed: a rerun would write them anew)."""
    (tmp_path / "cmp").mkdir()
    shutil.copy(campaign / store.FILE_NAME, tmp_path / "cmp" / store.FILE_NAME)
    return tmp_path


def _db(folder: Path) -> Path:
    return folder / "cmp" / store.FILE_NAME


def _update(folder: Path, sql: str, *args: object) -> None:
    db = sqlite3.connect(_db(folder))
    with db:
        db.execute(sql, args)
    db.close()


def test_a_stored_campaign_is_reused(folder, monkeypatch, capsys) -> None:
    assert run_in(folder, monkeypatch, COMPARE) == 0
    assert "reused" in capsys.readouterr().out


@pytest.mark.parametrize("how", ["fifo", "dev-zero", "folder", "garbage", "other-table", "wal-fifo"])
def test_a_store_that_is_no_store_is_refused(how, folder, monkeypatch, capsys) -> None:
    path = _db(folder)
    if how != "wal-fifo":
        path.unlink()
    if how == "fifo":
        os.mkfifo(path)
    elif how == "dev-zero":
        path.symlink_to("/dev/zero")
    elif how == "folder":
        path.mkdir()
    elif how == "garbage":
        path.write_bytes(b"\x00not sqlite" * 100)
    elif how == "other-table":
        db = sqlite3.connect(path)
        db.execute("CREATE TABLE runs (a TEXT)")
        db.commit()
        db.close()
    else:
        os.mkfifo(path.with_name(store.FILE_NAME + "-wal"))
    assert_refused(folder, monkeypatch, capsys, COMPARE, store.FILE_NAME)


@pytest.mark.parametrize(("what", "meta"), [
    ("deep", "[" * 100_000 + "]" * 100_000),
    ("digits", '{"run_id": ' + "1" * 5000 + "}"),
    ("not JSON", "{"),
    ("a list", "[1, 2]"),
])
def test_stored_metadata_out_of_bounds_is_refused(what, meta, folder, monkeypatch, capsys) -> None:
    _update(folder, "UPDATE runs SET meta = ?", meta)
    assert_refused(folder, monkeypatch, capsys, COMPARE, store.FILE_NAME)


def _edit_meta(folder: Path, change) -> None:
    import json

    db = sqlite3.connect(_db(folder))
    (run_id, text), = db.execute("SELECT run_id, meta FROM runs").fetchall()
    meta = json.loads(text)
    change(meta)
    with db:
        db.execute("UPDATE runs SET meta = ? WHERE run_id = ?", (json.dumps(meta), run_id))
    db.close()


@pytest.mark.parametrize(("field", "value", "culprit"), [
    ("budgets", "x", "budgets"), ("budgets", [True], "budgets"), ("per_budget", {}, "per_budget"),
    ("label", 5, "label"), ("run_id", "another", "another"), ("best_known_ms", "fast", "best_known_ms"),
])
def test_stored_metadata_of_the_wrong_type_is_refused(field, value, culprit, folder, monkeypatch, capsys) -> None:
    _edit_meta(folder, lambda meta: meta.update({field: value}))
    assert_refused(folder, monkeypatch, capsys, COMPARE, culprit)


def test_a_run_stored_for_another_spec_is_refused(folder, monkeypatch, capsys) -> None:
    _edit_meta(folder, lambda meta: meta["spec"].update(seed=meta["spec"]["seed"] + 1))
    assert_refused(folder, monkeypatch, capsys, COMPARE, "another run")


def test_a_trace_that_is_no_arrow_stream_or_too_big_is_refused(folder, monkeypatch, capsys) -> None:
    _update(folder, "UPDATE runs SET trace = ?", b"\x00" * 64)
    assert_refused(folder, monkeypatch, capsys, COMPARE, "Arrow stream")
    monkeypatch.setattr(store, "MAX_RUN_BYTES", 32)
    assert_refused(folder, monkeypatch, capsys, COMPARE, "over the limit")
