"""Issue 43, class 5: a Parquet dataset that still holds times no GPU gives (negative, zero, NaN, infinite) or a
configuration twice never yields a best time from them. ``Dataset.load`` quarantines those rows (bat.core.suspect)
and every output drawn on the dataset says so; ``bat check`` reads the file as recorded and flags it (exit 3)."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest
from bad_input_builders import PNPOLY_DATA
from refusal import run_in

from bat.core.dataset import Dataset
from bat.core.suspect import suspect_reasons

DS = "ds.parquet"


def _write(folder: Path, value: float, *, duplicate: bool = False) -> float:
    """pnpoly on RTX 3090 with its best ok row's objective set to ``value`` (or that row twice, the copy faster);
    the best time of the rows left clean comes back."""
    ds = Dataset.load(PNPOLY_DATA)
    ok = ds.frame[ds.frame["status"] == "ok"].sort_values("objective_ms")
    best, clean_best = ok.index[0], float(ok["objective_ms"].iloc[0 if duplicate else 1])
    if duplicate:
        ds.frame = pd.concat([ds.frame, ds.frame.loc[[best]].assign(objective_ms=value)], ignore_index=True)
    else:
        ds.frame.loc[best, "objective_ms"] = value
    ds.save(folder / DS)
    return clean_best


@pytest.mark.parametrize(("value", "duplicate"), [(-21.28, False), (float("nan"), False), (float("inf"), False),
                                                  (0.0, False), (0.001, True)],
                         ids=["negative", "nan", "infinite", "zero", "duplicate-faster"])
def test_a_run_never_reports_a_suspect_time_and_says_why(value, duplicate, tmp_path, monkeypatch, capsys):
    clean_best = _write(tmp_path, value, duplicate=duplicate)
    assert run_in(tmp_path, monkeypatch, ["run", "-t", "reference:random", "-d", DS, "-n", "4092", "-o",
                                          "t.parquet"]) == 0
    out = capsys.readouterr().out
    best = next(line for line in out.splitlines() if line.startswith("best time"))
    assert best == f"best time: {clean_best:.4f} ms"
    mark = [line for line in out.splitlines() if line.startswith("quarantined: ")]
    assert len(mark) == 1 and DS in mark[0] and "1 quarantined suspect rows" in mark[0]
    assert run_in(tmp_path, monkeypatch, ["check", DS]) == 3  # read as recorded, and flagged


def test_loading_quarantines_and_as_recorded_keeps(tmp_path):
    _write(tmp_path, -21.28)
    read = Dataset.load(tmp_path / DS)
    recorded = Dataset.load(tmp_path / DS, as_recorded=True)
    assert (read.ok["objective_ms"] > 0).all() and read.best_ms > 0
    assert recorded.best_ms == -21.28
    row = read.frame[read.frame["suspect"] != ""]
    assert list(row["status"]) == ["missing"] and math.isnan(row["objective_ms"].iloc[0])
    assert row["suspect_objective_ms"].iloc[0] == -21.28
    assert (suspect_reasons(recorded.frame, recorded.parameters) != "").sum() == 1


def test_an_export_writes_no_suspect_time_and_says_why(tmp_path, monkeypatch, capsys):
    """``bat export`` wrote a negative time to the T4 file without a word."""
    _write(tmp_path, -21.28)
    assert run_in(tmp_path, monkeypatch, ["export", DS, "--to", "t4", "-o", "x.T4.json"]) == 0
    out = capsys.readouterr().out
    assert any(line.startswith("quarantined: ") and DS in line for line in out.splitlines())
    text = (tmp_path / "x.T4.json").read_text()
    assert "-21.28" not in text
