"""Runs stored together (issue 45): traces encoded as one Arrow table read back as each alone, and a campaign in
this process commits its finished runs in flushes that an interruption does not lose."""

from __future__ import annotations

import gc
import sqlite3
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import bat.campaign.execute as execute
from bat.campaign.design import Campaign, TunerSpec
from bat.campaign.execute import run_campaign
from bat.campaign.store import FILE_NAME, decode_trace, encode_traces

RANDOM = TunerSpec.parse("reference:random")


def trace(n: int, tile: list | None = None, kind: object = "search") -> pd.DataFrame:
    return pd.DataFrame({
        "tile": tile if tile is not None else list(range(n)),
        "kind": pd.array([kind] * n, dtype="str"),
        "charged": [i % 2 == 0 for i in range(n)],
        "status": pd.array(["ok"] * n, dtype="str"),
        "objective_ms": [float(i) if i % 3 else np.nan for i in range(n)],
    })


def test_traces_encoded_together_read_back_as_each_encoded_alone() -> None:
    frames = [
        trace(3), trace(5),  # together
        trace(2, kind=None),  # a text column without a value: alone it is no text column
        trace(0),  # no rows
        trace(2, tile=[0.5, 1.5]),  # other types
        trace(4),
    ]
    together = encode_traces(frames)
    assert len(together) == len(frames)
    for frame, blob in zip(frames, together, strict=True):
        pd.testing.assert_frame_equal(decode_trace(blob), decode_trace(encode_traces([frame])[0]))
    for i in (0, 1, 4, 5):
        pd.testing.assert_frame_equal(decode_trace(together[i]), frames[i])


def stored(out: Path) -> int:
    with sqlite3.connect(out / FILE_NAME) as db:
        return int(db.execute("SELECT count(*) FROM runs").fetchone()[0])


def test_a_campaign_in_process_commits_flushes_and_an_interruption_keeps_every_finished_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(execute, "FLUSH_RUNS", 2)
    monkeypatch.setattr(execute, "FLUSH_S", 3600.0)
    c = Campaign(tuners=(RANDOM,), targets=(("pnpoly", "RTX_3090"),), budgets=(4, 8), repeats=6)
    seen = []

    def interrupt(done: int, _total: int) -> None:
        if done:
            seen.append(stored(tmp_path / "a"))  # committed so far: whole flushes of two runs
        if done == 5:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_campaign(c, tmp_path / "a", progress=interrupt)
    assert seen == [0, 2, 2, 4, 4]
    assert stored(tmp_path / "a") == 5  # the fifth, finished but not flushed, stored on the way out
    resumed = run_campaign(c, tmp_path / "a")
    assert (resumed.reused, resumed.executed) == (5, 1)
    clean = run_campaign(c, tmp_path / "b")
    assert [r.meta["per_budget"] for r in resumed.records] == [r.meta["per_budget"] for r in clean.records]
    for again, first in zip(resumed.records, clean.records, strict=True):
        pd.testing.assert_frame_equal(again.trace.drop(columns=["tuner_s"]), first.trace.drop(columns=["tuner_s"]))


def test_a_campaign_freezes_what_the_process_held_only_while_its_runs_run(tmp_path: Path) -> None:
    """``execute._settled``: the objects held before the runs are out of the collector's passes during them (so its
    full collections do not walk them), and given back after, an interruption included; a process that froze
    objects itself keeps them frozen, and nothing more."""
    c = Campaign(tuners=(RANDOM,), targets=(("pnpoly", "RTX_3090"),), budgets=(4,), repeats=2)
    held = gc.get_freeze_count()
    during = []

    def interrupt(done: int, _total: int) -> None:
        during.append(gc.get_freeze_count())
        if done == 2:
            raise KeyboardInterrupt

    run_campaign(c, tmp_path / "a", progress=lambda done, total: during.append(gc.get_freeze_count()))
    assert gc.get_freeze_count() <= held  # as it was (less where a frozen object was freed)
    with pytest.raises(KeyboardInterrupt):
        run_campaign(c, tmp_path / "b", progress=interrupt)
    assert gc.get_freeze_count() <= held
    assert during and all(n > held if held == 0 else n <= held for n in during)
    gc.freeze()  # this process's own choice, from here on
    try:
        held = gc.get_freeze_count()
        during.clear()
        run_campaign(c, tmp_path / "c", progress=lambda done, total: during.append(gc.get_freeze_count()))
        assert during and max(during) <= held  # nothing more frozen (a frozen object freed leaves the count)
        assert gc.get_freeze_count() > held // 2  # and nothing given back
    finally:
        gc.unfreeze()
