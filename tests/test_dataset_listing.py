"""Listing datasets and reading their metadata cheaply: every change on disk is still seen, copies stay apart."""

from __future__ import annotations

import os

import pytest

from bat.core.dataset import Dataset, DatasetMeta, make_frame
from bat.core.datasetmeta import read_meta, shared_meta
from bat.data.checks import registry_peers
from bat.registry import dataset_entries


def _save(path, gpu: str, best: float = 1.0):
    rows = [{"a": 1, "status": "ok", "objective_ms": best, "times_ms": [best]}]
    meta = DatasetMeta(benchmark="toy", space_hash="abc", gpu=gpu, problem_size={"n": 4}, extra={"k": [1]})
    path.parent.mkdir(parents=True, exist_ok=True)
    return Dataset(frame=make_frame(("a",), rows), meta=meta, parameters=("a",)).save(path)


@pytest.fixture
def folders(tmp_path, monkeypatch):
    shipped, data = tmp_path / "shipped", tmp_path / "data"
    shipped.mkdir()
    monkeypatch.setenv("BAT_RESULTS", str(shipped))
    monkeypatch.setenv("BAT_DATA_DIR", str(data))
    return shipped, data / "datasets"


def test_each_read_gets_a_copy_of_its_own_and_the_shared_one_is_kept(tmp_path):
    path = _save(tmp_path / "toy.parquet", "G1")
    first = read_meta(path)
    first.extra["k"].append(2)
    first.problem_size["n"] = 5
    assert read_meta(path).extra == {"k": [1]} and read_meta(path).problem_size == {"n": 4}
    assert read_meta(path) == shared_meta(path) and shared_meta(path) is shared_meta(path)


@pytest.mark.parametrize("shared", [False, True])
def test_a_dataset_added_replaced_or_removed_is_seen_by_the_next_listing(folders, shared):
    shipped, mine = folders
    _save(shipped / "toy_G1.parquet", "G1")
    assert [e.meta.gpu for e in dataset_entries(shared=shared)] == ["G1"]
    _save(mine / "toy_G2.parquet", "G2")
    assert [e.meta.gpu for e in dataset_entries(shared=shared)] == ["G1", "G2"]
    os.replace(_save(mine / "other.parquet", "G3"), mine / "toy_G2.parquet")
    assert [e.meta.gpu for e in dataset_entries(shared=shared)] == ["G1", "G3"]
    (shipped / "toy_G1.parquet").unlink()
    assert [e.meta.gpu for e in dataset_entries(shared=shared)] == ["G3"]


def test_a_file_under_two_roots_is_listed_once_and_hard_links_twice(folders):
    shipped, mine = folders
    first = _save(shipped / "toy_G1.parquet", "G1")
    mine.mkdir(parents=True)
    (mine / "link.parquet").symlink_to(first)
    assert [e.id for e in dataset_entries()] == ["shipped/toy_G1"]
    os.link(first, mine / "hard.parquet")
    assert [e.id for e in dataset_entries()] == ["data/hard", "shipped/toy_G1"]


def test_peers_follow_a_replaced_dataset(folders):
    shipped, _ = folders
    _save(shipped / "toy_G1.parquet", "G1", best=2.0)
    assert [(p.gpu, p.best_ms) for p in registry_peers("toy")] == [("G1", 2.0)]
    os.replace(_save(shipped / "new.parquet", "G9", best=3.0), shipped / "toy_G1.parquet")
    assert [(p.gpu, p.best_ms) for p in registry_peers("toy")] == [("G9", 3.0)]


def test_a_frame_without_rows_or_without_a_parameter_is_as_pandas_made_it():
    empty = make_frame((), [])
    assert [str(t) for t in empty.dtypes] == ["str", "float64", "float64", "float64", "float64", "str"]
    with pytest.raises(KeyError, match=r"\['b'\] not in index"):
        make_frame(("a", "b"), [{"a": 1}])
