"""The FAIR Benchmark Hub's data as found: T4 twins equal to the caches, a folder in the hub's layout, the
shipped datasets and the GPU facts behind them (fixtures: tests/fixtures/benchmark_hub, excerpts)."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from bat.cli import main
from bat.core.benchmark import benchmark_from_dict, load_benchmark
from bat.core.dataset import Dataset
from bat.core.errors import SpaceSpecError
from bat.core.gpus import KNOWN_GPUS, all_gpu_facts, gpu_facts
from bat.core.t1 import write_t1
from bat.formats.importing import import_file

HUB = Path(__file__).parent / "fixtures" / "benchmark_hub"
CONV = HUB / "convolution_milo"
SHIPPED = Path(__file__).resolve().parents[1] / "results" / "benchmark-hub"
HUB_GPUS = ("A100", "A4000", "A6000", "MI250X", "W6600")
NINE = ("RTX_2080_Ti", "RTX_Titan", "RTX_3060_laptop", "RTX_3090", *HUB_GPUS)


def run(args: list[str], capsys) -> tuple[int, str, str]:
    code = main(args)
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("gpu", ["A100", "MI250X"])
def test_t4_files_as_kernel_tuner_wrote_them_equal_the_cache_row_for_row(gpu):
    with gzip.open(CONV / f"{gpu}_T4.json.gz", "rt") as fh:
        assert json.load(fh)["metadata"]["timeunit"] == "miliseconds"  # the file's own spelling
    cache = import_file(CONV / f"{gpu}.json.gz", benchmark="convolution_milo", gpu=gpu).dataset
    t4 = import_file(CONV / f"{gpu}_T4.json.gz", benchmark="convolution_milo", gpu=gpu).dataset
    params = list(cache.parameters)
    a = cache.frame.sort_values(params).reset_index(drop=True)
    b = t4.frame.sort_values(params).reset_index(drop=True)
    assert len(a) == len(b) == 36
    assert a[params].equals(b[params])
    assert a["status"].tolist() == b["status"].tolist()
    assert set(a["status"]) == ({"ok", "compile_error", "runtime_error"} if gpu == "A100" else {"ok"})
    np.testing.assert_array_equal(a["objective_ms"].to_numpy(), b["objective_ms"].to_numpy())  # NaN == NaN here
    np.testing.assert_array_equal(a["compile_ms"].to_numpy(), b["compile_ms"].to_numpy())
    assert [list(t) for t in a["times_ms"]] == [list(t) for t in b["times_ms"]]
    np.testing.assert_array_equal(a["kt_framework_time"].to_numpy(), b["t4_framework_ms"].to_numpy())
    assert (a["kt_timestamp"].str[:19] == b["t4_timestamp"].str[:19]).all()
    assert cache.meta.date == t4.meta.date != ""


@pytest.mark.parametrize("space", ["convolution_milo", str(HUB / "convolution_milo.T1.json")],
                         ids=["name", "space-file"])
def test_a_hub_folder_imports_with_one_command(space, tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    code, text, err = run(["import", str(CONV), "--benchmark", space, "--out", str(out)], capsys)
    assert code == 0, err
    written = sorted(p.name for p in out.iterdir())
    assert written == [f"convolution_milo_{g}.parquet" for g in ("A100", "MI250X", "W6600")]
    assert text.count("skipped") == 2 and "A100_T4.json.gz: the T4 twin" in text
    mi = Dataset.load(out / "convolution_milo_MI250X.parquet")
    assert mi.meta.gpu == "MI250X" and mi.meta.gpu_name == "AMD Instinct MI250X"  # the file's device_name is ""
    assert "file name MI250X.json.gz" in mi.meta.gpu_source and "names no device" in mi.meta.gpu_source
    a100 = Dataset.load(out / "convolution_milo_A100.parquet")
    assert a100.meta.gpu_name == "NVIDIA A100-PCIE-40GB" and "device name" in a100.meta.gpu_source
    bench = a100.meta.load_benchmark()
    assert bench.name == "convolution_milo" and bench.space.count_valid() == 4362
    assert (a100.meta.space is None) == (space == "convolution_milo")  # a T1 by path travels with the data


def test_a_hub_folder_takes_its_benchmark_from_the_folder_name(tmp_path, capsys):
    code, _, err = run(["import", str(CONV), "--out", str(tmp_path)], capsys)
    assert code == 0, err
    assert len(list(tmp_path.glob("convolution_milo_*.parquet"))) == 3


def _folder_with(tmp_path: Path, name: str, source: Path | None, text: str | None = None) -> Path:
    folder = tmp_path / "convolution_milo"
    shutil.copytree(CONV, folder)
    if source is not None:
        shutil.copy(source, folder / name)
    else:
        (folder / name).write_text(text or "")
    return folder


@pytest.mark.parametrize(("name", "source", "text", "said"), [
    ("notes.json", None, json.dumps({"title": "not data"}), ["notes.json", "'tune_params_keys'", "'title'"]),
    ("A4000.json.gz", HUB / "dedispersion_milo" / "A100.json.gz", None,
     ["A4000.json.gz", "convolution_milo", "tile_stride_x"]),
])
def test_a_bad_file_in_a_hub_folder_fails_the_folder_and_writes_nothing(tmp_path, capsys, name, source, text, said):
    folder = _folder_with(tmp_path, name, source, text)
    out = tmp_path / "out"
    out.mkdir()
    code, _, err = run(["import", str(folder), "--benchmark", str(HUB / "convolution_milo.T1.json"),
                        "--out", str(out)], capsys)
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and all(s in err for s in said), err
    assert list(out.iterdir()) == []


def test_a_cache_without_its_space_warns_and_names_the_t1(capsys):
    imp = import_file(CONV / "A100.json.gz", benchmark="hub_convolution")  # not registered: inferred space
    assert imp.benchmark is None and not imp.space.constraints
    [warning] = [w for w in imp.warnings if "no constraints" in w]
    assert "10,240 configurations, the file 36" in warning and "--benchmark" in warning and "T1" in warning
    assert not [w for w in import_file(CONV / "A100.json.gz", benchmark="convolution_milo").warnings
                if "no constraints" in w]


def test_gpu_facts_cover_the_nine_gpus_with_a_source_for_each_figure():
    facts = all_gpu_facts()
    assert set(NINE) <= set(facts)
    for gpu in NINE:
        f = facts[gpu]
        assert f.vendor in ("NVIDIA", "AMD") and f.compute_units > 0 and f.memory_bandwidth_gbs > 0
        assert f.l2_bytes >= 2**20 and f.architecture
        assert {"architecture", "compute_units", "memory_bandwidth_gbs", "l2_bytes"} <= set(f.sources), gpu
        assert all(len(s) > 20 for s in f.sources.values())
    assert {g for g in NINE if facts[g].vendor == "AMD"} == {"MI250X", "W6600"}
    assert KNOWN_GPUS["A6000"] == (84, "8.6") and "MI250X" not in KNOWN_GPUS  # CUDA cores: NVIDIA only
    assert gpu_facts("nonexistent") is None


@pytest.mark.parametrize("kernel, rows", [("convolution_milo", 4362), ("dedispersion_milo", 11130)])
def test_the_shipped_hub_datasets_are_the_published_caches(kernel, rows):
    space = load_benchmark(kernel).space
    assert space.count_valid() == rows
    for gpu in HUB_GPUS:
        ds = Dataset.load(SHIPPED / f"{kernel}_{gpu}.parquet")
        m = ds.meta
        assert len(ds.frame) == rows and m.gpu == gpu and m.space_hash == space.space_hash
        assert "8eeb99e7179e6838af95d392ac6c60cebfd8c434" in m.source and "10.5281/zenodo.15364124" in m.source
        assert f"{kernel}/{gpu}.json.gz" in m.source and m.licence.startswith("MIT")
        assert m.gpu_name == gpu_facts(gpu).name or (gpu == "A6000" and m.gpu_name == "NVIDIA RTX A6000")
        assert f"file name {gpu}.json.gz" in m.gpu_source
        assert space.is_valid(space.encode(ds.configs())).all()


def test_the_t1_default_becomes_the_space_default_and_goes_back(tmp_path):
    bench = load_benchmark(HUB / "convolution_milo.T1.json")
    default = {"block_size_x": 16, "block_size_y": 16, "tile_size_x": 1, "tile_size_y": 1, "read_only": 0,
               "use_padding": 1, "use_shmem": 1, "use_cmem": 1, "filter_height": 15, "filter_width": 15}
    assert bench.raw["default"] == load_benchmark("convolution_milo").raw["default"] == default
    out = write_t1(bench.raw, bench.directory, tmp_path / "back.T1.json")
    back = json.loads(out.read_text())["ConfigurationSpace"]["TuningParameters"]
    assert {p["Name"]: p["Default"] for p in back} == default
    wrong = {**bench.raw, "default": {**default, "block_size_x": 17}}
    with pytest.raises(SpaceSpecError, match=r"default\.block_size_x"):
        benchmark_from_dict(wrong, tmp_path / "wrong.json")
