"""Import of Kernel Tuner caches and T4 files, export back, and the mismatch errors."""

from __future__ import annotations

import gzip
import json

import pandas as pd
import pytest

from bat.core.benchmark import load_benchmark
from bat.core.dataset import Dataset, Status
from bat.core.errors import DatasetError, SpaceMismatchError
from bat.formats.importing import import_file
from bat.formats.kerneltuner import read_json, to_cache, write_cache
from bat.formats.t4 import read_t4, to_t4, write_t4


def _load(path):
    with gzip.open(path, "rt") as fh:
        return json.load(fh)


def test_pnpoly_cache_imports_against_its_benchmark(published_dir):
    imp = import_file(published_dir / "pnpoly_RTX_3090.json.gz")
    ds = imp.dataset
    assert imp.benchmark is not None and imp.benchmark.name == "pnpoly"
    assert len(ds.frame) == 4092
    counts = ds.frame["status"].value_counts().to_dict()
    assert counts == {"ok": 4092 - 318, "runtime_error": 318}
    assert ds.meta.gpu == "RTX_3090" and ds.meta.gpu_name == "NVIDIA GeForce RTX 3090"
    assert ds.meta.space_hash == load_benchmark("pnpoly").space.space_hash
    assert imp.n_constraint_violations == 0
    ds.check_space(load_benchmark("pnpoly").space)


@pytest.mark.parametrize("name", ["convolution_RTX_3090", "pnpoly_RTX_3090"])
def test_kernel_tuner_round_trip_loses_nothing(published_dir, tmp_path, name):
    original = _load(published_dir / f"{name}.json.gz")
    ds = import_file(published_dir / f"{name}.json.gz").dataset
    saved = Dataset.load(ds.save(tmp_path / "d.parquet"))
    out = write_cache(saved, tmp_path / "back.json.gz")
    back = read_json(out)
    assert {k: v for k, v in back.items() if k != "cache"} == {k: v for k, v in original.items() if k != "cache"}
    assert back["cache"] == original["cache"]


def test_failure_strings_become_statuses(published_dir):
    ds = import_file(published_dir / "convolution_RTX_3090.json.gz").dataset
    counts = ds.frame["status"].value_counts().to_dict()
    assert counts[Status.COMPILE_ERROR.value] == 1426
    assert counts[Status.RUNTIME_ERROR.value] == 122
    failed = ds.frame[ds.frame["status"] != "ok"]
    assert failed["objective_ms"].isna().all()


def test_unknown_kernel_gets_an_inferred_space(published_dir, tmp_path):
    raw = _load(published_dir / "pnpoly_RTX_3090.json.gz")
    rename = {"between_method": "BM", "block_size_x": "BX", "tile_size": "TS", "use_method": "UM"}
    raw["kernel_name"] = "mystery"
    raw["tune_params_keys"] = [rename[k] for k in raw["tune_params_keys"]]
    raw["tune_params"] = {rename[k]: v for k, v in raw["tune_params"].items()}
    raw["cache"] = {k: {rename.get(f, f): v for f, v in rec.items()} for k, rec in raw["cache"].items()}
    path = tmp_path / "mystery.json"
    path.write_text(json.dumps(raw))
    imp = import_file(path)
    assert imp.benchmark is None
    assert imp.space.name == "mystery"
    assert imp.space.names == ("BM", "BX", "TS", "UM")
    assert imp.space.cardinality == 4092
    saved = Dataset.load(imp.dataset.save(tmp_path / "m.parquet"))
    assert saved.meta.load_benchmark().space.space_hash == imp.space.space_hash


def test_value_outside_the_space_is_reported(published_dir, tmp_path):
    raw = _load(published_dir / "pnpoly_RTX_3090.json.gz")
    key = next(iter(raw["cache"]))
    raw["cache"][key]["tile_size"] = 3
    raw["cache"][key]["block_size_x"] = 33
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(raw))
    with pytest.raises(SpaceMismatchError) as err:
        import_file(path, benchmark="pnpoly")
    assert "tile_size: values [3]" in str(err.value)
    assert "block_size_x: values [33]" in str(err.value)


def test_wrong_parameters_for_named_benchmark(published_dir):
    with pytest.raises(SpaceMismatchError, match="cannot map the file's parameters between_method, block_size_x, "
                                                "tile_size, use_method onto benchmark gemm"):
        import_file(published_dir / "pnpoly_RTX_3090.json.gz", benchmark="gemm")


def test_not_a_known_format(tmp_path):
    path = tmp_path / "x.json"
    path.write_text(json.dumps({"hello": 1}))
    with pytest.raises(DatasetError, match="neither"):
        import_file(path)
    broken = tmp_path / "y.json"
    broken.write_text("{not json")
    with pytest.raises(DatasetError, match="not a JSON file"):
        import_file(broken)


def test_dataset_with_other_space_hash_is_rejected(published_dir):
    ds = import_file(published_dir / "pnpoly_RTX_3090.json.gz").dataset
    ds.meta.space_hash = "0" * 64
    with pytest.raises(SpaceMismatchError, match="space hash"):
        ds.check_space(load_benchmark("pnpoly").space)


def test_t4_round_trip(published_dir, tmp_path):
    ds = import_file(published_dir / "convolution_RTX_3090.json.gz").dataset
    ds.frame["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"] = range(len(ds.frame))
    path = write_t4(ds, tmp_path / "t4.json")
    params, frame, _ = read_t4(json.loads(path.read_text()), str(path))
    assert params == list(ds.parameters)
    cols = [*ds.parameters, "status", "objective_ms", "times_ms", "compile_ms",
            "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"]
    pd.testing.assert_frame_equal(frame[cols].reset_index(drop=True), ds.frame[cols].reset_index(drop=True),
                                  check_dtype=False)
    again = to_t4(Dataset(frame=frame, meta=ds.meta, parameters=ds.parameters))
    assert again["results"] == to_t4(ds)["results"]


def test_t4_import_through_import_file(published_dir, tmp_path):
    ds = import_file(published_dir / "pnpoly_RTX_3090.json.gz").dataset
    path = write_t4(ds, tmp_path / "p.T4.json")
    imp = import_file(path)
    assert imp.format == "t4" and imp.benchmark.name == "pnpoly"
    assert imp.dataset.meta.gpu == "RTX_3090"
    assert len(imp.dataset.frame) == len(ds.frame)


def test_to_cache_has_every_row(published_dir):
    ds = import_file(published_dir / "pnpoly_RTX_3090.json.gz").dataset
    assert len(to_cache(ds)["cache"]) == len(ds.frame)
