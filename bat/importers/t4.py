"""The autotuning-methodology T4 results format, to datasets and back.

T4 (schema 1.0.0) is a JSON object with ``results``: one entry per evaluated
configuration with ``configuration``, ``times`` (compilation, runtimes,
framework, search_algorithm, validation), ``invalidity``, ``correctness``,
``objectives`` and ``measurements`` (name/value/unit; the objective and any
performance counters). Runtimes are written in milliseconds here; on import
the unit of the objective measurement decides the scale.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from bat.dataset import Dataset, DatasetMeta, Status, counter_columns, make_frame
from bat.errors import DatasetError
from bat.importers.kerneltuner import write_json

SCHEMA_VERSION = "1.0.0"
INVALIDITY_STATUS = {
    "correct": Status.OK,
    "compile": Status.COMPILE_ERROR,
    "runtime": Status.RUNTIME_ERROR,
    "correctness": Status.INCORRECT,
    "constraints": Status.CONSTRAINT_VIOLATION,
    "timeout": Status.TIMEOUT,
}
STATUS_INVALIDITY = {v: k for k, v in INVALIDITY_STATUS.items()}
STATUS_INVALIDITY[Status.MISSING] = "runtime"
UNIT_TO_MS = {"milliseconds": 1.0, "ms": 1.0, "microseconds": 1e-3, "us": 1e-3, "seconds": 1e3, "s": 1e3,
              "nanoseconds": 1e-6, "ns": 1e-6}
OBJECTIVE = "time"


def is_t4(raw: object) -> bool:
    return isinstance(raw, dict) and "results" in raw and "schema_version" in raw


def read_t4(raw: dict[str, Any], source: str) -> tuple[list[str], pd.DataFrame]:
    """Parse T4 results into (parameter order, frame in dataset layout)."""
    results = raw.get("results")
    if not isinstance(results, list) or not results:
        raise DatasetError(f"{source}: T4 file has no results")
    params = list(results[0]["configuration"])
    rows = []
    for i, res in enumerate(results):
        cfg = res.get("configuration", {})
        if set(cfg) != set(params):
            raise DatasetError(f"{source}: results[{i}] has parameters {sorted(cfg)}, expected {sorted(params)}")
        inv = res.get("invalidity", "correct")
        if inv not in INVALIDITY_STATUS:
            raise DatasetError(f"{source}: results[{i}].invalidity {inv!r} unknown")
        objective_name = (res.get("objectives") or [OBJECTIVE])[0]
        measurements = {m["name"]: m for m in res.get("measurements", [])}
        scale = 1.0
        if objective_name in measurements:
            unit = str(measurements[objective_name].get("unit", "ms")).lower()
            if unit not in UNIT_TO_MS:
                raise DatasetError(f"{source}: results[{i}] objective unit {unit!r} unknown")
            scale = UNIT_TO_MS[unit]
        times = res.get("times", {})
        row: dict[str, Any] = {p: cfg[p] for p in params}
        row["status"] = INVALIDITY_STATUS[inv].value
        runtimes = [float(t) * scale for t in times.get("runtimes", [])]
        row["times_ms"] = runtimes
        if row["status"] == Status.OK.value:
            m = measurements.get(objective_name)
            row["objective_ms"] = float(m["value"]) * scale if m else float(np.mean(runtimes))
        row["compile_ms"] = float(times["compilation_time"]) * scale if "compilation_time" in times else np.nan
        for key in ("framework", "search_algorithm", "validation"):
            if key in times:
                row[f"t4_{key}_ms"] = float(times[key]) * scale
        if "timestamp" in res:
            row["t4_timestamp"] = res["timestamp"]
        for name, m in measurements.items():
            if name != objective_name:
                row[name] = float(m["value"])
        rows.append(row)
    return params, make_frame(params, rows)


def to_t4(dataset: Dataset) -> dict[str, Any]:
    """A T4 results dict with every row (counters kept as measurements)."""
    counters = counter_columns(dataset.frame)
    out = []
    for rec in dataset.frame.to_dict("records"):
        status = Status(rec["status"])
        times: dict[str, Any] = {"runtimes": [float(t) for t in rec["times_ms"]]}
        if not _nan(rec["compile_ms"]):
            times["compilation_time"] = float(rec["compile_ms"])
        for key in ("framework", "search_algorithm", "validation"):
            col = f"t4_{key}_ms"
            if col in rec and not _nan(rec[col]):
                times[key] = float(rec[col])
        measurements = []
        if status is Status.OK:
            measurements.append({"name": OBJECTIVE, "value": float(rec["objective_ms"]), "unit": "milliseconds"})
        measurements += [
            {"name": c, "value": float(rec[c]), "unit": ""} for c in counters if not _nan(rec[c])
        ]
        entry = {
            "configuration": {p: _plain(rec[p]) for p in dataset.parameters},
            "objectives": [OBJECTIVE],
            "times": times,
            "invalidity": STATUS_INVALIDITY[status],
            "correctness": 1 if status is Status.OK else 0,
            "measurements": measurements,
        }
        if "t4_timestamp" in rec and isinstance(rec["t4_timestamp"], str):
            entry["timestamp"] = rec["t4_timestamp"]
        out.append(entry)
    return {"schema_version": SCHEMA_VERSION, "metadata": json.loads(dataset.meta.to_json()), "results": out}


def write_t4(dataset: Dataset, path: str | Path) -> Path:
    return write_json(to_t4(dataset), path)


def t4_meta(raw: dict[str, Any], benchmark: str, space_hash: str, gpu: str) -> DatasetMeta:
    """Metadata for a T4 import: the file's own BAT metadata when it has it."""
    meta = raw.get("metadata")
    if isinstance(meta, dict) and {"benchmark", "gpu"} <= set(meta):
        kept = DatasetMeta.from_json(json.dumps(meta))
        kept.space_hash = space_hash
        return kept
    return DatasetMeta(benchmark=benchmark, space_hash=space_hash, gpu=gpu)


def _nan(v: object) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def _plain(v: object) -> object:
    return v.item() if isinstance(v, np.generic) else v
