"""Kernel Tuning Toolkit (KTT 2.x) JSON output, to datasets and back.

A KTT results file is ``{"Metadata": {...}, "Results": [...]}``. Metadata
names the device and the ``TimeUnit`` of every duration. Each result holds
``Configuration`` (a list of Name/Value pairs, in the tuner's parameter
order), ``Status`` and ``ComputationResults``: one entry per kernel function
launched, with ``Duration``, ``Overhead``, ``GlobalSize`` and ``LocalSize``
(x/y/z; with ``GlobalSizeType`` CUDA the global size counts blocks, with
OpenCL it counts threads), ``CompilationData`` (registers and local, shared
and constant memory) and ``ProfilingData.Counters`` (Nsight Compute
metrics by name).

Mapping to dataset columns (times in ms): ``objective_ms`` is
``TotalDuration``; ``times_ms`` the duration of each computation;
``compile_ms`` stays NaN because KTT does not report compilation apart from
its other overheads, which are kept as ``ktt_overhead_ms`` (the
computation's), ``ktt_total_overhead_ms``, ``ktt_data_movement_ms``,
``ktt_validation_ms`` and ``ktt_searcher_ms``. Geometry and resources of the
first computation go to ``threads``, ``blocks``, ``grid_x..z``, ``block_x..z``, ``registers``,
``shared_bytes`` (KTT's LocalMemorySize: OpenCL's name for shared memory),
``local_bytes`` (PrivateMemorySize), ``constant_bytes`` and
``max_block_threads``; counters keep their metric names.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from bat.core.dataset import Dataset, Status, counter_columns, make_frame
from bat.core.errors import DatasetError
from bat.formats.kerneltuner import write_json
from bat.formats.records import parse_records

#: KTT time units -> milliseconds
UNIT_TO_MS = {"nanoseconds": 1e-6, "microseconds": 1e-3, "milliseconds": 1.0, "seconds": 1e3}
STATUS = {
    "Ok": Status.OK,
    "CompilationFailed": Status.COMPILE_ERROR,
    "ComputationFailed": Status.RUNTIME_ERROR,
    "DeviceLimitsExceeded": Status.RUNTIME_ERROR,
    "ValidationFailed": Status.INCORRECT,
}
#: statuses written back (runtime_error -> ComputationFailed)
STATUS_BACK = {
    Status.OK: "Ok",
    Status.COMPILE_ERROR: "CompilationFailed",
    Status.RUNTIME_ERROR: "ComputationFailed",
    Status.INCORRECT: "ValidationFailed",
    Status.TIMEOUT: "ComputationFailed",
    Status.MISSING: "ComputationFailed",
    Status.CONSTRAINT_VIOLATION: "DeviceLimitsExceeded",
}
#: top-level overheads of a result and their columns
OVERHEADS = {
    "TotalOverhead": "ktt_total_overhead_ms",
    "DataMovementOverhead": "ktt_data_movement_ms",
    "ValidationOverhead": "ktt_validation_ms",
    "SearcherOverhead": "ktt_searcher_ms",
}
GRID = ("grid_x", "grid_y", "grid_z")
BLOCK = ("block_x", "block_y", "block_z")
#: CompilationData fields and their columns
COMPILATION = {
    "RegistersCount": "registers",
    "LocalMemorySize": "shared_bytes",
    "PrivateMemorySize": "local_bytes",
    "ConstantMemorySize": "constant_bytes",
    "MaxWorkGroupSize": "max_block_threads",
}


def is_ktt(raw: object) -> bool:
    return isinstance(raw, dict) and isinstance(raw.get("Results"), list) and "Metadata" in raw


def read_ktt(raw: dict[str, Any], source: str) -> tuple[list[str], pd.DataFrame, dict[str, Any]]:
    """Parse KTT output into (parameter order, frame in dataset layout, header).

    The header is the file's Metadata plus ``device_name``.
    """
    meta = raw.get("Metadata")
    if not isinstance(meta, dict):
        raise DatasetError(f"{source}: KTT file: 'Metadata' is not an object")
    unit = str(meta.get("TimeUnit", "")).lower()
    if unit not in UNIT_TO_MS:
        raise DatasetError(f"{source}: Metadata.TimeUnit {meta.get('TimeUnit')!r} unknown "
                           f"(known: {sorted(UNIT_TO_MS)})")
    scale = UNIT_TO_MS[unit]
    cuda_sizes = str(meta.get("GlobalSizeType", "CUDA")).upper() == "CUDA"
    results = raw["Results"]
    if not results:
        raise DatasetError(f"{source}: KTT file has no Results")
    params = parse_records([(f"{source}: Results[0].Configuration", results[0])],
                           lambda where, res: [str(p["Name"]) for p in res.get("Configuration", [])],
                           "a list of Name/Value objects")[0]
    rows = parse_records(((f"{source}: Results[{i}]", res) for i, res in enumerate(results)),
                         lambda where, res: _row(res, params, scale, cuda_sizes, where),
                         "an object with 'Configuration' (Name/Value objects), 'Status', 'TotalDuration' and "
                         "'ComputationResults' (objects with a numeric 'Duration')")
    header = {**meta, "device_name": str(meta.get("Device", ""))}
    return params, make_frame(params, rows, f"{source}: Results[0].Configuration"), header


def _row(res: dict[str, Any], params: list[str], scale: float, cuda_sizes: bool, where: str) -> dict[str, Any]:
    cfg = {str(p["Name"]): p["Value"] for p in res.get("Configuration", [])}
    if list(cfg) != params and set(cfg) != set(params):
        raise DatasetError(f"{where}.Configuration has parameters {sorted(cfg)}, expected {sorted(params)}")
    status_name = str(res.get("Status", ""))
    if status_name not in STATUS:
        raise DatasetError(f"{where}.Status {status_name!r} unknown (known: {sorted(STATUS)})")
    status = STATUS[status_name]
    comps = res.get("ComputationResults") or []
    row: dict[str, Any] = {p: cfg[p] for p in params}
    row["status"] = status.value
    row["times_ms"] = [float(c["Duration"]) * scale for c in comps if "Duration" in c]
    if status is Status.OK:
        total = res.get("TotalDuration")
        if total is None and not row["times_ms"]:
            raise DatasetError(f"{where}: status Ok but no TotalDuration nor Duration")
        row["objective_ms"] = float(total) * scale if total is not None else float(sum(row["times_ms"]))
    for key, col in OVERHEADS.items():
        if key in res:
            row[col] = float(res[key]) * scale
    if comps:
        first = comps[0]
        if "Overhead" in first:
            row["ktt_overhead_ms"] = float(first["Overhead"]) * scale
        if "GlobalSize" in first and "LocalSize" in first:
            glob = _dim3(first["GlobalSize"], f"{where}.ComputationResults[0].GlobalSize")
            loc = _dim3(first["LocalSize"], f"{where}.ComputationResults[0].LocalSize")
            blocks = glob if cuda_sizes else [g // max(1, lo) for g, lo in zip(glob, loc, strict=True)]
            row["blocks"] = int(np.prod(blocks))
            row["threads"] = int(np.prod(blocks)) * int(np.prod(loc))
            row["grid_x"], row["grid_y"], row["grid_z"] = blocks
            row["block_x"], row["block_y"], row["block_z"] = loc
        for key, col in COMPILATION.items():
            if key in (first.get("CompilationData") or {}):
                row[col] = int(first["CompilationData"][key])
        for counter in (first.get("ProfilingData") or {}).get("Counters", []):
            name = str(counter["Name"])
            if name in row:  # a counter never overwrites a parameter, a time or another counter
                raise DatasetError(f"{where}.ComputationResults[0].ProfilingData: the counter {name[:80]!r} is "
                                   "named twice, or like a parameter or a column")
            row[name] = float(counter["Value"])
    return row


def _dim3(raw: Any, where: str) -> list[int]:
    if not isinstance(raw, dict) or not {"X", "Y", "Z"} <= set(raw):
        raise DatasetError(f"{where}: expected an object with X, Y, Z")
    return [int(raw[k]) for k in ("X", "Y", "Z")]


def to_ktt(dataset: Dataset, *, time_unit: str = "Microseconds") -> dict[str, Any]:
    """A KTT results dict with every row: geometry, compilation data and counters kept."""
    unit = time_unit.lower()
    if unit not in UNIT_TO_MS:
        raise DatasetError(f"time unit {time_unit!r} unknown (known: {sorted(UNIT_TO_MS)})")
    per_ms = 1.0 / UNIT_TO_MS[unit]
    header = dict(dataset.meta.extra.get("ktt_header") or {})
    header.pop("device_name", None)
    header.update(Device=dataset.meta.gpu_name or dataset.meta.gpu, TimeUnit=time_unit, GlobalSizeType="CUDA")
    counters = counter_columns(dataset.frame)
    results = []
    for rec in dataset.frame.to_dict("records"):
        status = Status(rec["status"])
        comp: dict[str, Any] = {}
        times = list(rec["times_ms"]) or ([rec["objective_ms"]] if status is Status.OK else [])
        comp["Duration"] = float(times[0]) * per_ms if times else 0.0
        if _has(rec, "ktt_overhead_ms"):
            comp["Overhead"] = float(rec["ktt_overhead_ms"]) * per_ms
        if all(_has(rec, c) for c in (*GRID, *BLOCK)):
            comp["GlobalSize"] = {k: int(rec[c]) for k, c in zip("XYZ", GRID, strict=True)}
            comp["LocalSize"] = {k: int(rec[c]) for k, c in zip("XYZ", BLOCK, strict=True)}
        compilation = {k: int(rec[c]) for k, c in COMPILATION.items() if _has(rec, c)}
        if compilation:
            comp["CompilationData"] = compilation
        values = [{"Name": c, "Type": "Double", "Value": float(rec[c])} for c in counters if _has(rec, c)]
        if values:
            comp["ProfilingData"] = {"Counters": values, "RemainingProfilingRuns": 0}
        entry: dict[str, Any] = {
            "Configuration": [{"Name": p, "Value": _plain(rec[p])} for p in dataset.parameters],
            "Status": STATUS_BACK[status],
            "ComputationResults": [comp, *({"Duration": float(t) * per_ms} for t in times[1:])],
        }
        if status is Status.OK:
            entry["TotalDuration"] = float(rec["objective_ms"]) * per_ms
        for key, col in OVERHEADS.items():
            if _has(rec, col):
                entry[key] = float(rec[col]) * per_ms
        results.append(entry)
    return {"Metadata": header, "Results": results}


def write_ktt(dataset: Dataset, path: str | Path, *, overwrite: bool = True) -> Path:
    """Write ``dataset`` as KTT JSON (gzip-compressed when the name ends in .gz)."""
    return write_json(to_ktt(dataset), path, overwrite=overwrite)


def _has(rec: Mapping[Hashable, Any], col: str) -> bool:
    v = rec.get(col)
    return v is not None and not (isinstance(v, float) and math.isnan(v))


def _plain(v: object) -> object:
    return v.item() if isinstance(v, np.generic) else v
