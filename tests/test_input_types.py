"""Class 3 of issue 32: one parameter one type, names exactly as written, finite sizes, reserved names and
metadata objects, checked where the file is read (one line, exit 2, nothing written)."""

from __future__ import annotations

import json

import pytest
from bad_input_builders import PNPOLY_DATA, setitem, space, t1
from refusal import assert_refused

from bat.core.dataset import CORE_COLUMNS, RESOURCE_COLUMNS, Dataset, DatasetMeta
from bat.core.errors import DatasetError
from bat.core.spacefile import RESERVED_NAMES
from bat.core.trace import TRACE_COLUMNS

SPACES = {
    "mixed-types": (space(setitem("parameters[0].values", [1, "a"])), "mixes strings and numbers"),
    "ligature": (space(lambda s: s["parameters"].append({"name": "\ufb01", "values": [1]})), "NFKC"),
    "fullwidth": (space(lambda s: s["parameters"].append({"name": "\uff41", "values": [1]})), "NFKC"),
    "list-value": (space(setitem("parameters[0].values", [[1], [2]])), "parameters[0].values[0]"),
    "object-value": (space(setitem("parameters[0].values", [{"a": 1}])), "parameters[0].values[0]"),
    "status": (space(lambda s: s["parameters"].append({"name": "status", "values": [1]})), "reserved"),
    "objective": (space(lambda s: s["parameters"].append({"name": "objective_ms", "values": [1]})),
                  "reserved"),
    "nan-size": (space(setitem("problem_size.n_points", "NaN")).replace('"NaN"', "NaN"), "NaN"),
    "inf-size": (space(setitem("problem_size.n_points", "I")).replace('"I"', "Infinity"), "Infinity"),
    "overflow-size": (space(setitem("problem_size.n_points", "I")).replace('"I"', "1e309"), "infinity"),
    "t1-list-value": (t1(lambda r: r["ConfigurationSpace"]["TuningParameters"][0].update(Values=[[1], [2]])),
                      "not a number or a string"),
}


@pytest.mark.parametrize("case", list(SPACES), ids=list(SPACES))
def test_a_space_of_mixed_or_unsafe_types_is_refused(case, tmp_path, monkeypatch, capsys) -> None:
    text, culprit = SPACES[case]
    name = "s.T1.json" if case.startswith("t1") else "s.json"
    (tmp_path / name).write_text(text, encoding="utf-8")
    assert_refused(tmp_path, monkeypatch, capsys, ["space", name], culprit)


def test_numbers_of_both_kinds_are_one_type_and_duplicates_across_them_are_refused(tmp_path, monkeypatch,
                                                                                       capsys) -> None:
    (tmp_path / "s.json").write_text(space(setitem("parameters[0].values", [1, 1.0])))
    assert_refused(tmp_path, monkeypatch, capsys, ["space", "s.json"], "duplicate value")


def test_reserved_names_are_every_column_of_datasets_and_traces() -> None:
    assert set(CORE_COLUMNS) | set(RESOURCE_COLUMNS) | set(TRACE_COLUMNS) == RESERVED_NAMES


@pytest.mark.parametrize("text", ["[]", '"x"', "1", '{"benchmark": [' * 100 + "]" * 100 + "}"])
def test_dataset_metadata_that_is_not_an_object_is_refused(text) -> None:
    with pytest.raises(DatasetError, match=r"m\.parquet"):
        DatasetMeta.from_json(text, "m.parquet")


def test_a_dataset_whose_metadata_is_a_list_is_refused(tmp_path, monkeypatch, capsys) -> None:
    import pyarrow.parquet as pq

    table = pq.read_table(PNPOLY_DATA)
    meta = dict(table.schema.metadata)
    meta[b"bat"] = json.dumps([1, 2]).encode()
    pq.write_table(table.replace_schema_metadata(meta), tmp_path / "d.parquet")
    with pytest.raises(DatasetError, match="not an object"):
        Dataset.load(tmp_path / "d.parquet")
