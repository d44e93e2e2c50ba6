"""Class 6 of issue 32: bad data is refused (or quarantined on request, marked), never warned about; every
silent fallback is an error (empty list options, colliding labels, a trace of other data, a folder in use)."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from bad_input_builders import cache, first_cache_record, t4
from refusal import assert_refused, run_in

from bat.core.dataset import Dataset
from bat.core.locking import FolderLock
from bat.core.trace import write_trace
from bat.formats.suspect import suspect_reasons


def set_time(value):
    return first_cache_record(lambda r: r.update(time=value))


@pytest.mark.parametrize(("value", "words"), [(-36.7, "-36.7"), (0, "0.0"), (1e999, "inf"),
                                              (float("nan"), "nan")])
def test_an_impossible_time_is_refused_at_import(value, words, tmp_path, monkeypatch, capsys) -> None:
    cache(set_time(value))(tmp_path / "c.json")
    line = assert_refused(tmp_path, monkeypatch, capsys, ["import", "c.json", "-b", "pnpoly", "-o", "d.parquet"],
                          "c.json")
    assert words in line
    if math.isfinite(value):  # NaN and infinity are refused by the cache reader itself
        assert "--allow-suspect" in line and "row 0" in line


def test_with_allow_suspect_the_rows_are_quarantined_and_marked(tmp_path, monkeypatch, capsys) -> None:
    cache(set_time(-36.7))(tmp_path / "c.json")
    assert run_in(tmp_path, monkeypatch, ["import", "c.json", "-b", "pnpoly", "-o", "d.parquet",
                                          "--allow-suspect"]) == 0
    assert "quarantined" in capsys.readouterr().err
    ds = Dataset.load(tmp_path / "d.parquet")
    bad = ds.frame[ds.frame["suspect"] != ""]
    assert len(bad) == 1 and list(bad["status"]) == ["missing"] and math.isnan(bad["objective_ms"].iloc[0])
    assert bad["suspect_objective_ms"].iloc[0] == pytest.approx(-36.7)
    assert ds.meta.extra["quarantined"] == 1 and "quarantined" in ds.meta.notes
    assert (ds.ok["objective_ms"] > 0).all()


def test_a_configuration_listed_twice_is_refused(tmp_path, monkeypatch, capsys) -> None:
    t4(lambda raw: raw["results"].append(dict(raw["results"][3])))(tmp_path / "t.json")
    line = assert_refused(tmp_path, monkeypatch, capsys, ["import", "t.json", "-b", "pnpoly"], "t.json")
    assert "repeat of a configuration" in line
    (tmp_path / "c.json").write_text('{"cache": {"1": {}, "1": {}}}')
    assert "twice" in assert_refused(tmp_path, monkeypatch, capsys, ["import", "c.json", "-b", "pnpoly"], "c.json")


def test_suspect_reasons_name_each_row() -> None:
    frame = pd.DataFrame({"X": [1, 2, 3, 1, 4], "status": ["ok", "ok", "timeout", "ok", "ok"],
                          "objective_ms": [1.0, -1.0, float("nan"), 2.0, 3.0],
                          "times_ms": [[1.0], [1.0], [], [2.0], [3.0, float("inf")]]})
    reasons = list(suspect_reasons(frame, ["X"]))
    assert reasons[0] == "" and "objective_ms -1.0" in reasons[1] and reasons[2] == ""
    assert "repeat" in reasons[3] and "times_ms" in reasons[4]


COMPARE = ["compare", "-t", "reference:random", "-b", "pnpoly", "--gpus", "RTX_3090", "--budgets", "5",
           "--repeats", "1", "-o", "cmp"]


@pytest.mark.parametrize(("option", "value"), [("--budgets", ",,"), ("--budgets", "5,,10"), ("--gpus", ","),
                                               ("--tuners", " , ")])
def test_an_option_list_with_an_empty_item_is_an_error(option, value, tmp_path, monkeypatch, capsys) -> None:
    argv = list(COMPARE)
    argv[argv.index("-t" if option == "--tuners" else option) + 1] = value
    assert_refused(tmp_path, monkeypatch, capsys, argv, option)


def test_labels_that_share_a_file_name_are_an_error(tmp_path, monkeypatch, capsys) -> None:
    argv = list(COMPARE)
    argv[argv.index("-t") + 1] = "a b=reference:random,a_b=reference:random"
    line = assert_refused(tmp_path, monkeypatch, capsys, argv, "'a_b'")
    assert "'a b'" in line


@pytest.mark.parametrize(("bench", "gpu", "culprit"), [("gemm", "RTX_3090", "benchmark 'gemm'"),
                                                       ("pnpoly", "H100", "GPU 'H100'"),
                                                       ("pnpoly", "RTX_3090", "another space")])
def test_a_trace_of_other_data_is_an_error(bench, gpu, culprit, tmp_path, monkeypatch, capsys) -> None:
    frame = pd.DataFrame({"step": [0], "charged": [True], "status": ["ok"], "objective_ms": [1.0],
                          "best_so_far_ms": [1.0]})
    meta = {"benchmark": bench, "gpu": gpu, "tuner": "x"}
    if culprit == "another space":
        meta["space_hash"] = "0" * 64
    write_trace(frame, meta, tmp_path / "t.parquet")
    assert_refused(tmp_path, monkeypatch, capsys, ["analyze", "-b", "pnpoly", "--gpus", "RTX_3090",
                                                   "--no-importance", "--trace", "t.parquet", "-o", "rep"], culprit)


def test_an_analysis_into_a_folder_in_use_is_refused(tmp_path, monkeypatch, capsys) -> None:
    with FolderLock(tmp_path / "rep", "--out"):
        assert_refused(tmp_path, monkeypatch, capsys, ["analyze", "-b", "pnpoly", "--gpus", "RTX_3090",
                                                       "--no-importance", "-o", "rep"], "in use")
