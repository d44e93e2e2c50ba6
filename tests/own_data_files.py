"""Files in every format users bring, in the shapes found in the wild, written by the tests themselves.

The numbers are real: a slice of the shipped BAT 2.0 pnpoly data (RTX 3090), with the parameters
renamed so that no shipped benchmark matches them (a kernel this project has never seen).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np

from bat.core.dataset import Dataset, DatasetMeta
from bat.formats.kerneltuner import to_cache
from bat.formats.ktt import to_ktt

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "results" / "bat2-kerneltuner" / "pnpoly_RTX_3090.parquet"
RENAME = {"between_method": "BM", "block_size_x": "BX", "tile_size": "TS", "use_method": "UM"}
DEVICE = "NVIDIA GeForce RTX 3090"


def toy(tile_sizes=(1, 18, 20), block_max: int = 640) -> Dataset:
    """Every configuration with the given tile sizes and blocks up to ``block_max`` (some fail)."""
    src = Dataset.load(SOURCE)
    f = src.frame
    rows = f[f["tile_size"].isin(tile_sizes) & (f["block_size_x"] <= block_max)].rename(columns=RENAME)
    meta = DatasetMeta(benchmark="toy", space_hash="", gpu="RTX_3090", gpu_name=DEVICE,
                       problem_size={"problem_size": 20000000})
    return Dataset(rows.reset_index(drop=True), meta, tuple(RENAME.values()))


def value_lists(ds: Dataset) -> dict[str, list]:
    return {p: sorted(ds.frame[p].unique().tolist()) for p in ds.parameters}


def kt_cache_new(ds: Dataset) -> dict:
    """A versioned cache (schema 1.1.0): header with objective and value lists, failures as strings."""
    cache = to_cache(ds)
    cache.update(schema_version="1.1.0", device_name=DEVICE, kernel_name="cn_pnpoly", problem_size=[20000000],
                 tune_params=value_lists(ds), objective="time")
    return cache


def kt_cache_old(ds: Dataset) -> dict:
    """An older cache: no schema_version, objective or value lists; records with few timings."""
    new = to_cache(ds)
    old = {"device_name": DEVICE.removeprefix("NVIDIA "), "kernel_name": "cn_pnpoly", "problem_size": 20000000,
           "tune_params_keys": list(ds.parameters), "cache": {}}
    for key, rec in new["cache"].items():
        old["cache"][key] = {k: v for k, v in rec.items() if k in (*ds.parameters, "time", "compile_time")}
    return old


def t4_from_kernel_tuner(ds: Dataset) -> dict:
    """Kernel Tuner's own T4 writer on tune_kernel-like results (failures carry ``__error__``)."""
    from kernel_tuner import util
    from kernel_tuner.file_utils import get_t4_results

    failures = {"RuntimeFailedConfig": util.RuntimeFailedConfig, "CompilationFailedConfig":
                util.CompilationFailedConfig, "InvalidConfig": util.InvalidConfig}
    results = []
    for rec in to_cache(ds)["cache"].values():
        result = dict(rec)
        for key in ("compile_time", "benchmark_time", "framework_time", "strategy_time", "verification_time"):
            result.setdefault(key, 0)
        if isinstance(rec["time"], str):
            result["time"] = result["__error__"] = failures[rec["time"]]()
        results.append(result)
    doc = get_t4_results(results, value_lists(ds))
    return json.loads(json.dumps(doc, cls=util.NpEncoder))


def t4_ktt_shape(ds: Dataset) -> dict:
    """T4 as KTT writes it: the objective TotalDuration in microseconds, times in microseconds."""
    results = []
    for rec in ds.frame.to_dict("records"):
        ok = rec["status"] == "ok"
        entry = {"timestamp": "2024-08-12 11:26:23 UTC",
                 "configuration": {p: int(rec[p]) for p in ds.parameters}, "objectives": ["TotalDuration"],
                 "times": {"compilation_time": round(rec["compile_ms"] * 1000, 3),
                           "runtimes": [round(t * 1000, 3) for t in rec["times_ms"]],
                           "framework": 45.5, "search_algorithm": 35.744, "validation": 10.363},
                 "invalidity": "correct" if ok else "runtime", "correctness": 1 if ok else 0,
                 "measurements": [{"name": "dram__throughput.avg.pct_of_peak_sustained_elapsed",
                                   "value": 6.5, "unit": ""}]}
        if ok:
            entry["measurements"].insert(0, {"name": "TotalDuration", "value": round(rec["objective_ms"] * 1000, 3),
                                             "unit": "Microseconds"})
        results.append(entry)
    return {"schema_version": "1.0.0", "results": results}


def t4_wild(ds: Dataset) -> dict:
    """Hand-written T4 quirks: empty and missing units, `compilation`, other invalidity spellings, missing
    optional fields (no times, no measurements, no objectives, no correctness, no schema_version)."""
    results = []
    for i, rec in enumerate(ds.frame.to_dict("records")):
        ok = rec["status"] == "ok"
        entry: dict = {"configuration": {p: int(rec[p]) for p in ds.parameters}}
        if i % 4 != 0:
            entry["times"] = {"compilation": rec["compile_ms"], "runtimes": list(rec["times_ms"])}
        if i % 5 != 1:
            entry["objectives"] = ["time"]
        if ok:
            unit = [{"unit": ""}, {}, {"unit": "ms"}][i % 3]
            entry["measurements"] = [{"name": "time", "value": rec["objective_ms"], **unit}]
            if i % 7 == 0:
                entry["invalidity"] = "Correct"
        else:
            entry["invalidity"] = "Runtime"
            entry["correctness"] = 0
        results.append(entry)
    return {"results": results}


def ktt_output(ds: Dataset) -> dict:
    """KTT 2.x output (Metadata + Results with ComputationResults), as KTT's own writer shapes it."""
    doc = to_ktt(ds, time_unit="Microseconds")
    doc["Metadata"].update(Device=DEVICE, KttVersion="2.1.0", Timestamp="2024-08-12T11:26:23Z")
    return doc


def t1_space(ds: Dataset, *, keep: str = "BX * TS <= 5000") -> dict:
    """A T1 file for the toy kernel: Values as Python strings, Conditions (one with `in`)."""
    lists = value_lists(ds)
    return {
        "General": {"BenchmarkName": "toy", "OutputFormat": "JSON"},
        "ConfigurationSpace": {
            "TuningParameters": [
                {"Name": "BM", "Type": "int", "Values": f"[i for i in range({len(lists['BM'])})]", "Default": 0},
                {"Name": "BX", "Type": "int", "Values": f"list(range(32, {max(lists['BX'])} + 1, 32))",
                 "Default": [32]},
                {"Name": "TS", "Type": "int", "Values": repr(lists["TS"]), "Default": 1},
                {"Name": "UM", "Type": "int", "Values": repr(lists["UM"]), "Default": 0}],
            "Conditions": [{"Expression": keep, "Parameters": ["BX", "TS"]},
                           {"Expression": "UM in [0, 1, 2]", "Parameters": ["UM"]}]},
        "KernelSpecification": {"Language": "CUDA", "KernelName": "cn_pnpoly", "KernelFile": "pnpoly.cu",
                                "GlobalSize": {"X": "20000000"}, "LocalSize": {"X": "BX"},
                                "ProblemSize": [20000000], "Arguments": []},
    }


def only(ds: Dataset, mask: np.ndarray) -> Dataset:
    return Dataset(ds.frame[mask].reset_index(drop=True), copy.deepcopy(ds.meta), ds.parameters)


def write(doc: dict, path: Path) -> Path:
    path.write_text(json.dumps(doc))
    return path
