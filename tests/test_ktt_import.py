"""KTT JSON import/export, T4 round trips with counters, and the shipped Coulomb dataset."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bat.core.dataset import Dataset
from bat.core.errors import DatasetError
from bat.formats.importing import import_file
from bat.formats.ktt import read_ktt, to_ktt, write_ktt
from bat.formats.t4 import write_t4
from bat.registry import find_dataset
from bat.run.targets import replay_target

COUNTER = "dram__sectors_read.sum"


def small_ktt(unit: str = "Microseconds", status: str = "Ok") -> dict:
    """A hand-written KTT file of two results (layout of KTT 2.x output)."""

    def result(x: int, duration: float, reads: float) -> dict:
        return {
            "Configuration": [{"Name": "BX", "Value": x, "ValueType": "UnsignedInt"},
                              {"Name": "U", "Value": 1, "ValueType": "UnsignedInt"}],
            "Status": status, "TotalDuration": duration, "TotalOverhead": 900.0,
            "ComputationResults": [{
                "Duration": duration, "Overhead": 100.0,
                "GlobalSize": {"X": 8, "Y": 2, "Z": 1}, "LocalSize": {"X": x, "Y": 2, "Z": 1},
                "CompilationData": {"RegistersCount": 40, "LocalMemorySize": 1024, "PrivateMemorySize": 0,
                                    "ConstantMemorySize": 0, "MaxWorkGroupSize": 1024},
                "ProfilingData": {"Counters": [{"Name": COUNTER, "Type": "Double", "Value": reads}]},
            }],
        }

    return {"Metadata": {"Device": "NVIDIA GeForce RTX 2080 Ti", "TimeUnit": unit, "GlobalSizeType": "CUDA"},
            "Results": [result(16, 2000.0, 5.0), result(32, 1000.0, 7.0)]}


def test_read_ktt_maps_time_geometry_resources_and_counters():
    params, frame, header = read_ktt(small_ktt(), "mem")
    assert params == ["BX", "U"]
    assert header["device_name"] == "NVIDIA GeForce RTX 2080 Ti"
    first = frame.iloc[0]
    assert first["objective_ms"] == pytest.approx(2.0)
    assert first["times_ms"] == [pytest.approx(2.0)]
    assert first["blocks"] == 16 and first["threads"] == 16 * 16 * 2  # CUDA: global size counts blocks
    assert first["registers"] == 40 and first["shared_bytes"] == 1024
    assert first[COUNTER] == 5.0
    assert np.isnan(first["compile_ms"])
    _, ms, _ = read_ktt(small_ktt("Milliseconds"), "mem")
    assert ms.iloc[1]["objective_ms"] == pytest.approx(1000.0)


def test_read_ktt_errors_name_the_field():
    with pytest.raises(DatasetError, match="TimeUnit 'Fortnights'"):
        read_ktt(small_ktt("Fortnights"), "f.json")
    with pytest.raises(DatasetError, match=r"Results\[0\].Status 'Exploded'"):
        read_ktt(small_ktt(status="Exploded"), "f.json")
    _, failed, _ = read_ktt(small_ktt(status="CompilationFailed"), "f.json")
    assert set(failed["status"]) == {"compile_error"} and failed["objective_ms"].isna().all()


def coulomb() -> Dataset:
    return Dataset.load(find_dataset("coulomb", "RTX_2080_Ti").path)


def test_shipped_coulomb_dataset_and_replay():
    ds = coulomb()
    assert len(ds.frame) == 210 and len(ds.counters) == 33
    assert (ds.frame["status"] == "ok").all()
    assert "MIT" in ds.meta.licence and "38d7ce5b" in ds.meta.source
    target = replay_target("coulomb")
    assert target.space.count_valid() == 210 and target.gpu == "RTX_2080_Ti"
    row = ds.frame.iloc[0]
    result = target.backend.evaluate({p: row[p] for p in ds.parameters})
    assert result.objective_ms == pytest.approx(row["objective_ms"])
    assert result.extra[COUNTER] == row[COUNTER]


def test_ktt_round_trip_keeps_counters_geometry_and_times(tmp_path):
    ds = coulomb()
    path = write_ktt(ds, tmp_path / "c.ktt.json.gz")
    back = import_file(path, benchmark="coulomb").dataset
    assert back.meta.gpu == "RTX_2080_Ti"
    cols = [*ds.parameters, "status", "objective_ms", "threads", "blocks", "registers", *ds.counters,
            "ktt_overhead_ms", "ktt_total_overhead_ms"]
    pd.testing.assert_frame_equal(back.frame[cols], ds.frame[cols], check_dtype=False)
    assert to_ktt(back)["Results"][0] == to_ktt(ds)["Results"][0]


def test_t4_round_trip_keeps_counters(tmp_path):
    ds = coulomb()
    back = import_file(write_t4(ds, tmp_path / "c.T4.json"), benchmark="coulomb").dataset
    cols = [*ds.parameters, "objective_ms", *ds.counters]
    pd.testing.assert_frame_equal(back.frame[cols], ds.frame[cols], check_dtype=False)


def test_published_files_import_to_the_same_rows(published_dir):
    native = import_file(published_dir / "coulomb_RTX_2080_Ti.ktt.json.gz").dataset
    assert native.meta.benchmark == "coulomb" and len(native.frame) == 210 and len(native.counters) == 33
    t4 = import_file(published_dir / "coulomb_RTX_2080_Ti.T4.json.gz", benchmark="coulomb").dataset
    merged = native.frame.merge(t4.frame, on=list(native.parameters), suffixes=("", "_t4"))
    assert len(merged) == 210
    np.testing.assert_allclose(merged["objective_ms"], merged["objective_ms_t4"])
    np.testing.assert_allclose(merged[COUNTER], merged[f"{COUNTER}_t4"])
