"""Bringing your own data: formats in the wild, names, the data folder, datasets by id, spaces by path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from own_data_files import (
    ROOT,
    kt_cache_new,
    kt_cache_old,
    t1_space,
    t4_from_kernel_tuner,
    t4_ktt_shape,
    t4_wild,
    toy,
    write,
)

from bat.cli import main
from bat.core.dataset import Dataset, Status
from bat.core.errors import DatasetError, UnsafeNameError
from bat.core.problem import Budget, Problem
from bat.core.trace import read_trace
from bat.core.userdata import dataset_file
from bat.formats.importing import import_file
from bat.formats.kerneltuner import to_cache
from bat.formats.t4 import to_t4
from bat.registry import dataset_entries, find_dataset, resolve_dataset
from bat.run.targets import TargetRequest, make_target

PNPOLY = ROOT / "results" / "bat2-kerneltuner" / "pnpoly_RTX_3090.parquet"


def run(args: list[str], capsys) -> tuple[int, str, str]:
    code = main(args)
    out = capsys.readouterr()
    return code, out.out, out.err


def _saved(imp, tmp_path: Path) -> Dataset:
    return Dataset.load(imp.dataset.save(tmp_path / "round.parquet"))


# -- T4 as found in the wild, and back ------------------------------------------------------
@pytest.mark.parametrize("shape", ["kernel_tuner", "ktt", "wild", "bat"])
def test_t4_round_trip_gives_the_file_back(shape, tmp_path):
    if shape == "kernel_tuner":
        pytest.importorskip("kernel_tuner")
    ds = toy()
    doc = {"kernel_tuner": t4_from_kernel_tuner, "ktt": t4_ktt_shape, "wild": t4_wild,
           "bat": lambda d: to_t4(d)}[shape](ds)
    imp = import_file(write(doc, tmp_path / f"toy_{shape}.T4.json"), gpu="RTX_3090")
    back = to_t4(_saved(imp, tmp_path))
    assert back == json.loads(json.dumps(doc))
    frame = imp.dataset.frame
    assert (frame["status"] == "ok").sum() == (ds.frame["status"] == "ok").sum()
    ok = frame[frame["status"] == "ok"]
    assert ok["objective_ms"].to_numpy() == pytest.approx(ds.ok["objective_ms"].to_numpy(), rel=1e-6)


def test_t4_compilation_key_empty_units_and_timeunit_are_read(tmp_path):
    ds = toy()
    frame = import_file(write(t4_wild(ds), tmp_path / "w.T4.json"), gpu="X").dataset.frame
    has_times = frame.index % 4 != 0
    assert frame.loc[has_times, "compile_ms"].to_numpy() == pytest.approx(ds.frame["compile_ms"][has_times])
    ktt = import_file(write(t4_ktt_shape(ds), tmp_path / "k.T4.json"), gpu="X").dataset.frame
    assert ktt["compile_ms"].to_numpy() == pytest.approx(ds.frame["compile_ms"].to_numpy(), abs=1e-6)
    seconds = t4_wild(ds)
    seconds["metadata"] = {"timeunit": "seconds"}
    frame = import_file(write(seconds, tmp_path / "s.T4.json"), gpu="X").dataset.frame
    ok = frame["status"] == "ok"
    units = [r["measurements"][0].get("unit") for r in seconds["results"] if "measurements" in r]
    scale = [1000.0 if u in ("", None) else 1.0 for u in units]
    assert frame.loc[ok, "objective_ms"].to_numpy() == pytest.approx(ds.ok["objective_ms"].to_numpy() * scale)


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: d["results"][3].update(invalidity="exploded"), r"results\[3\].invalidity 'exploded' unknown"),
    (lambda d: d["results"][0]["measurements"][0].update(unit="fortnights"), "time unit 'fortnights' unknown"),
    (lambda d: d["results"][2].update(configuration={"BM": 0}), r"results\[2\].configuration has parameters"),
    (lambda d: d["results"][1].update(times=[1, 2]), r"results\[1\].times: expected an object"),
])
def test_malformed_t4_names_the_entry(change, message, tmp_path):
    doc = t4_ktt_shape(toy())
    change(doc)
    with pytest.raises(DatasetError, match=message):
        import_file(write(doc, tmp_path / "bad.T4.json"))


# -- Kernel Tuner caches, old and new ------------------------------------------------------------
@pytest.mark.parametrize("shape", ["old", "new"])
def test_kernel_tuner_caches_old_and_new(shape, tmp_path):
    ds = toy()
    doc = (kt_cache_old if shape == "old" else kt_cache_new)(ds)
    imp = import_file(write(doc, tmp_path / f"toy_RTX_3090.{shape}.json"))
    assert imp.dataset.meta.gpu == "RTX_3090" and imp.dataset.meta.benchmark == "toy"
    assert imp.benchmark is None and imp.space.cardinality == len(ds.frame)
    back = to_cache(_saved(imp, tmp_path))
    if shape == "new":
        assert back == json.loads(json.dumps(doc))
    else:  # an old cache comes back in the newer shape: the same records, value lists added
        assert back["cache"] == doc["cache"] and back["tune_params"] == {p: sorted(v) for p, v in
                                                                         back["tune_params"].items()}


# -- names ------------------------------------------------------------------------------
def test_names_from_the_file_name_and_overrides(tmp_path):
    path = write(kt_cache_new(toy()), tmp_path / "mykernel_RTX_3090.json")
    imp = import_file(path)
    assert (imp.dataset.meta.benchmark, imp.dataset.meta.gpu) == ("mykernel", "RTX_3090")
    imp = import_file(path, benchmark="other_name", gpu="A100")
    assert (imp.dataset.meta.benchmark, imp.dataset.meta.gpu) == ("other_name", "A100")
    assert imp.dataset.meta.gpu_name == "NVIDIA GeForce RTX 3090"


@pytest.mark.parametrize("device", ["", "unknown"])
def test_empty_or_unknown_gpu_is_one_warning(device, tmp_path, capsys):
    doc = kt_cache_new(toy())
    doc["device_name"] = device
    path = write(doc, tmp_path / "nogpu.json")
    code, out, err = run(["import", str(path)], capsys)
    assert code == 0
    warnings = [line for line in err.splitlines() if "warning" in line]
    assert len(warnings) == 1 and "unknown_gpu" in warnings[0] and "--gpu" in err
    assert "nogpu_unknown_gpu.parquet" in out.replace("\n", "")


# -- path traversal: no name leads a file out of the data folder ---------------------------------
def _before(root: Path) -> set[Path]:
    return set(root.rglob("*"))


@pytest.mark.parametrize(("args", "field"), [
    (["--gpu", "../../escaped"], "--gpu"),
    (["--benchmark", "../escaped"], "--benchmark"),
    (["--gpu", ".hidden"], "--gpu"),
    (["--benchmark", "a/b"], "--benchmark"),
])
def test_names_given_on_the_command_line_cannot_escape(args, field, tmp_path, capsys):
    path = write(kt_cache_new(toy()), tmp_path / "k.json")
    before = _before(tmp_path.parent)
    code, _, err = run(["import", str(path), *args], capsys)
    assert code == 2 and field in err and "cannot be part of a file name" in err
    assert _before(tmp_path.parent) == before


def test_t4_metadata_gpu_cannot_escape(tmp_path, capsys):
    doc = t4_ktt_shape(toy())
    doc["metadata"] = {"gpu": "../../../escaped"}
    path = write(doc, tmp_path / "t.T4.json")
    code, _, err = run(["import", str(path)], capsys)
    assert code == 2 and "metadata.gpu" in err.replace("\n", "") and "cannot be part of a file name" in err


@pytest.mark.parametrize("device", ["../../../escaped", "..", "/etc/passwd", "AMD Instinct MI250X / MI250"])
def test_device_names_become_safe_gpu_ids(device, tmp_path, capsys):
    data = tmp_path / "data"
    for name, doc in (("kt", kt_cache_new(toy())), ("t4", t4_ktt_shape(toy()))):
        if name == "kt":
            doc["device_name"] = device
        else:
            doc["metadata"] = {"gpu_name": device}
        code, _, _ = run(["--data-dir", str(data), "import", str(write(doc, tmp_path / f"{name}.json"))], capsys)
        assert code == 0
        written = {p for p in tmp_path.rglob("*.parquet")}
        assert written and all(data / "datasets" in p.parents for p in written)
        (meta,) = [e.meta for e in dataset_entries() if e.path in written and e.meta.source.startswith(
            f"imported from {name}")]
        assert meta.gpu_name == device
        for p in written:
            p.unlink()


def test_dataset_file_names_every_unsafe_field():
    assert dataset_file("gemm", "A100").name == "gemm_A100.parquet"
    bad = (("../x", "A100", "benchmark"), ("gemm", "a\\b", "--gpu-name"), ("gemm", "", "--gpu-name"))
    for bench, gpu, field in bad:
        with pytest.raises(UnsafeNameError, match=field):
            dataset_file(bench, gpu, fields=("benchmark", "--gpu-name"))


# -- the data folder ----------------------------------------------------------------------
def test_imports_go_to_the_data_folder_and_are_never_overwritten(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("BAT_DATA_DIR")
    path = write(kt_cache_new(toy()), tmp_path / "toy_RTX_3090.json")
    assert run(["import", str(path)], capsys)[0] == 0
    assert (tmp_path / "bat-data" / "datasets" / "toy_RTX_3090.parquet").exists()  # the documented default
    code, _, err = run(["import", str(path)], capsys)
    assert code == 2 and "exists" in err and "--force" in err
    assert run(["import", str(path), "--force"], capsys)[0] == 0
    other = tmp_path / "elsewhere"
    assert run(["--data-dir", str(other), "import", str(path)], capsys)[0] == 0
    assert (other / "datasets" / "toy_RTX_3090.parquet").exists()


def test_bat_list_datasets_shows_id_benchmark_gpu_size_source_path(tmp_path, capsys, monkeypatch):
    from bat.cli.console import console

    monkeypatch.setattr(console, "width", 250)
    assert run(["import", str(write(kt_cache_new(toy()), tmp_path / "toy_RTX_3090.json"))], capsys)[0] == 0
    code, out, _ = run(["list", "datasets"], capsys)
    assert code == 0
    for word in ("data/toy_RTX_3090", "toy", "RTX_3090", "shipped/bat2-kerneltuner/gemm_RTX_3090", "path",
                 "rows", "source", "bat-data", "datasets/toy_RTX_3090.parquet", "imported from toy_RTX_3090.json",
                 "17,956"):
        assert word in out, word


# -- two datasets of one (benchmark, GPU) --------------------------------------------------------
def test_two_datasets_of_one_benchmark_and_gpu_are_an_error_naming_both(tmp_path, capsys):
    copy = Dataset.load(PNPOLY)
    copy.save(dataset_file("pnpoly", "RTX_3090"))
    with pytest.raises(DatasetError) as err:
        find_dataset("pnpoly", "RTX_3090")
    assert str(PNPOLY) in str(err.value) and str(dataset_file("pnpoly", "RTX_3090")) in str(err.value)
    code, _, err_text = run(["run", "-t", "reference:random", "-b", "pnpoly", "-n", "5"], capsys)
    assert code == 2 and "--dataset" in err_text and "2 datasets of pnpoly on RTX_3090" in err_text
    code, out, _ = run(["run", "-t", "reference:random", "-d", "data/pnpoly_RTX_3090", "-n", "5",
                        "-o", str(tmp_path / "t.parquet")], capsys)
    assert code == 0
    assert str(dataset_file("pnpoly", "RTX_3090").name) in out.splitlines()[0]
    assert resolve_dataset("shipped/bat2-kerneltuner/pnpoly_RTX_3090").path == PNPOLY
    with pytest.raises(DatasetError, match="2 datasets of id 'pnpoly_RTX_3090'"):
        resolve_dataset("pnpoly_RTX_3090")


def test_run_names_the_dataset_file_on_its_first_line(tmp_path, capsys):
    code, out, _ = run(["run", "-t", "reference:random", "-b", "gemm", "-n", "5", "-o", str(tmp_path / "t.parquet")],
                       capsys)
    assert code == 0
    first = out.splitlines()[0]
    assert "replaying" in first and "gemm_RTX_3090.parquet" in first


def test_run_trace_goes_to_the_data_folder(capsys):
    code, out, _ = run(["run", "-t", "reference:random", "-b", "pnpoly", "-n", "3"], capsys)
    assert code == 0
    trace = Path(out.split("trace: ")[-1].replace("\n", "").strip())
    assert trace.exists() and Path(__import__("os").environ["BAT_DATA_DIR"]) in trace.parents


# -- a space by path is used as written ------------------------------------------------------
def _narrowed_pnpoly(tmp_path: Path) -> Path:
    spec = json.loads((ROOT / "benchmarks" / "pnpoly" / "space.json").read_text())
    spec["constraints"].append({"expr": "block_size_x * tile_size <= 1024", "why": "a user's own rule"})
    path = tmp_path / "space.json"
    path.write_text(json.dumps(spec))
    return path


def test_a_space_copy_with_another_constraint_is_not_replaced_by_the_shipped_one(tmp_path, capsys):
    space = _narrowed_pnpoly(tmp_path)
    code, _, err = run(["run", "-t", "reference:random", "-b", str(space), "-n", "40"], capsys)
    assert code == 2 and "no recorded dataset for the space of pnpoly" in err.replace("\n", " ")
    assert "--dataset" in err
    out_file = tmp_path / "t.parquet"
    code, out, _ = run(["run", "-t", "reference:random", "-b", str(space), "-d", str(PNPOLY), "-n", "40",
                        "-o", str(out_file)], capsys)
    assert code == 0 and "another space" in out.splitlines()[0]
    trace, _ = read_trace(out_file)
    evaluated = trace[trace["charged"]]
    assert len(evaluated) == 40
    assert (evaluated["block_size_x"] * evaluated["tile_size"] <= 1024).all()


def test_unchanged_copy_of_a_space_finds_its_data_by_hash(tmp_path, capsys):
    path = tmp_path / "mine.json"
    spec = json.loads((ROOT / "benchmarks" / "pnpoly" / "space.json").read_text())
    spec["name"] = "my_pnpoly"
    path.write_text(json.dumps(spec))
    code, out, _ = run(["run", "-t", "reference:random", "-b", str(path), "-n", "5",
                        "-o", str(tmp_path / "t.parquet")], capsys)
    assert code == 0 and "pnpoly_RTX_3090.parquet" in out.splitlines()[0]
    code, out, _ = run(["analyze", "-b", str(path), "--gpus", "RTX_Titan", "--no-importance",
                        "--out", str(tmp_path / "r")], capsys)
    assert code == 0 and "my_pnpoly: max speedup over median (all) RTX_Titan" in out
    code, out, err = run(["compare", "-t", "reference:random", "-b", str(path), "--gpus", "RTX_2080_Ti",
                          "--budgets", "5", "--repeats", "2", "--no-plots", "--out", str(tmp_path / "c")], capsys)
    assert code == 0, err
    targets = json.loads((tmp_path / "c" / "results.json").read_text())["campaign"]["targets"]
    assert targets == [[str(path), "RTX_2080_Ti"]]


# -- a never-seen kernel: T1 + Kernel Tuner cache ----------------------------------------------
def test_t1_and_cache_of_a_new_kernel_give_a_dataset_with_constraints(tmp_path, capsys):
    ds = toy()
    t1 = write(t1_space(ds), tmp_path / "toykernel.T1.json")
    valid = (ds.frame["BX"] * ds.frame["TS"] <= 5000).to_numpy()
    brute = type(ds)(ds.frame[valid].reset_index(drop=True), ds.meta, ds.parameters)
    cache = write(kt_cache_new(brute), tmp_path / "toykernel_RTX_3090.json")
    code, out, _ = run(["import", str(cache), "--benchmark", str(t1)], capsys)
    assert code == 0, out
    text = out.replace("\n", " ")
    assert f"the file has {len(brute.frame):,} of them (every one)" in text  # the constraints reproduce the cache
    entry = find_dataset("toykernel", "RTX_3090")
    assert entry.meta.space_file == str(t1.resolve()) and "space" not in entry.meta.extra
    assert len(entry.meta.space["constraints"]) == 2

    trace_file = tmp_path / "run.parquet"  # `bat run -b T1` needs nothing else: the dataset is found by hash
    code, out, _ = run(["run", "-t", "reference:random", "-b", str(t1), "-n", "25", "-o", str(trace_file)], capsys)
    assert code == 0 and "toykernel_RTX_3090.parquet" in out.splitlines()[0]
    trace, _ = read_trace(trace_file)
    assert int(trace["charged"].sum()) == 25
    assert "missing" not in set(trace["status"])  # every evaluated configuration was measured
    code, out, _ = run(["run", "-t", "reference:random", "-b", "toykernel", "-n", "5", "-o", str(trace_file),
                        "--force"], capsys)  # the imported benchmark by its name
    assert code == 0 and "toykernel_RTX_3090.parquet" in out.splitlines()[0]
    target, _ = make_target(None, request=TargetRequest(dataset=entry.path))
    problem = Problem(space=target.space, backend=target.backend, budget=Budget(max_evals=5))
    result = problem.evaluate({"BM": 0, "BX": 640, "TS": 20, "UM": 0})  # 640 * 20 > 5000
    assert result.status is Status.CONSTRAINT_VIOLATION
    assert problem.stats.evaluated == 0 and problem.remaining == 5 and target.backend.missing == 0

    report = tmp_path / "report"
    code, out, _ = run(["analyze", "-b", "toykernel", "--out", str(report), "--iterations", "20",
                        "--repeats", "2"], capsys)
    assert code == 0, out
    payload = json.loads((report / "results.json").read_text())
    (bench,) = payload["benchmarks"]
    for key in ("distribution", "speedup", "convergence", "centrality", "importance", "portability", "sizes"):
        assert bench[key], key


def test_analyze_and_compare_take_datasets(tmp_path, capsys):
    path = write(kt_cache_new(toy()), tmp_path / "toy_RTX_3090.json")
    assert run(["import", str(path)], capsys)[0] == 0
    code, out, _ = run(["analyze", "-d", "toy_RTX_3090", "--no-importance", "--out", str(tmp_path / "r")], capsys)
    assert code == 0 and "toy: max speedup" in out
    code, out, err = run(["compare", "-t", "reference:random", "-d", "toy_RTX_3090,shipped/bat2-kerneltuner/"
                          "pnpoly_RTX_Titan", "--budgets", "5", "--repeats", "2", "--no-plots",
                          "--out", str(tmp_path / "c")], capsys)
    assert code == 0, err
    result = json.loads((tmp_path / "c" / "results.json").read_text())
    assert {tuple(t) for t in result["campaign"]["targets"]} == {("toy", "RTX_3090"), ("pnpoly", "RTX_Titan")}
    code, _, err = run(["compare", "-t", "reference:random", "-d", "toy_RTX_3090", "-b", "gemm"], capsys)
    assert code == 2 and "not both" in err


def test_record_never_starts_a_second_dataset_of_a_space_and_gpu_by_default(capsys):
    from bat.core.benchmark import load_benchmark
    from bat.core.dataset import DatasetMeta, make_frame
    from bat.run.recording.command import host_id

    bench = load_benchmark("matmul_c")
    config = bench.space.config(bench.space.unrank_valid(__import__("numpy").array([0]))[0])
    meta = DatasetMeta(benchmark="matmul_c", space_hash=bench.space.space_hash, gpu=host_id())
    elsewhere = dataset_file("mine", "elsewhere")
    Dataset(make_frame(bench.space.names, [config]), meta, bench.space.names).save(elsewhere)
    code, _, err = run(["record", "-b", "matmul_c", "--sample", "2", "--size", "small"], capsys)
    assert code == 0  # the small size goes elsewhere and is never replayed
    code, _, err = run(["record", "-b", "matmul_c", "--sample", "2"], capsys)
    assert code == 2 and str(elsewhere) in err.replace("\n", "") and "--out" in err
