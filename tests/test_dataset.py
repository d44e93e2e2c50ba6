"""Datasets: Parquet round trip with metadata, validation of columns and statuses."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bat.core.dataset import Dataset, DatasetMeta, Status, make_frame
from bat.core.errors import DatasetError


def _dataset() -> Dataset:
    rows = [
        {"a": 1, "b": 2, "status": "ok", "objective_ms": 1.5, "times_ms": [1.4, 1.6], "compile_ms": 10.0},
        {"a": 2, "b": 2, "status": "compile_error", "message": "ptxas: too much shared memory"},
        {"a": 4, "b": 8, "status": "ok", "objective_ms": 0.5, "times_ms": [0.5], "dram__sectors_read.sum": 7.0},
    ]
    meta = DatasetMeta(benchmark="toy", space_hash="abc", gpu="RTX_TEST", problem_size={"n": 4},
                       input_recipe={"seed": 1}, source="unit test", licence="MIT", date="2026-11-23")
    return Dataset(frame=make_frame(("a", "b"), rows), meta=meta, parameters=("a", "b"))


def test_round_trip_keeps_rows_and_metadata(tmp_path):
    ds = _dataset()
    path = ds.save(tmp_path / "toy.parquet")
    back = Dataset.load(path)
    assert back.meta == ds.meta
    assert back.parameters == ("a", "b")
    pd.testing.assert_frame_equal(back.frame, ds.frame, check_dtype=False)
    assert back.best_ms == 0.5
    assert back.counters == ["dram__sectors_read.sum"]
    assert Dataset.read_meta(path).gpu == "RTX_TEST"


def test_readable_with_plain_pandas(tmp_path):
    path = _dataset().save(tmp_path / "toy.parquet")
    frame = pd.read_parquet(path)
    assert list(frame["status"]) == ["ok", "compile_error", "ok"]
    assert np.isnan(frame["objective_ms"][1])


def test_unknown_status_is_rejected():
    ds = _dataset()
    frame = ds.frame.copy()
    frame.loc[0, "status"] = "fast"
    with pytest.raises(DatasetError, match="unknown statuses"):
        Dataset(frame=frame, meta=ds.meta, parameters=ds.parameters)


def test_missing_columns_are_named():
    ds = _dataset()
    with pytest.raises(DatasetError, match="objective_ms"):
        Dataset(frame=ds.frame.drop(columns=["objective_ms"]), meta=ds.meta, parameters=ds.parameters)


def test_load_errors_are_clear(tmp_path):
    with pytest.raises(DatasetError, match="no such dataset"):
        Dataset.load(tmp_path / "nope.parquet")
    bad = tmp_path / "bad.parquet"
    bad.write_text("not parquet")
    with pytest.raises(DatasetError, match="not a Parquet dataset"):
        Dataset.load(bad)
    plain = tmp_path / "plain.parquet"
    pd.DataFrame({"a": [1]}).to_parquet(plain)
    with pytest.raises(DatasetError, match="no BAT metadata"):
        Dataset.load(plain)


def test_status_values_are_the_documented_ones():
    assert {s.value for s in Status} == {
        "ok", "compile_error", "runtime_error", "incorrect", "timeout", "constraint_violation", "missing",
    }
