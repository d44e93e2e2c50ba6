"""Kernel Tuner cache files (``.json``, ``.json.gz``) to datasets and back.

A cache holds a header (device, kernel, problem size, parameter order and
value lists) and ``cache``: records keyed by the comma-joined parameter
values. Failed configurations carry a string in ``time``
(``CompilationFailedConfig``, ``RuntimeFailedConfig``, ``InvalidConfig``).
Fields this format has and ours does not (timestamps, framework and strategy
times, verification time, GFLOP/s, any observer's scalar values) travel in
the dataset's metadata and in per-row ``kt_<field>`` columns so an export
gives the same cache back. Both shapes found in the wild are read: older
caches (no ``schema_version``, ``objective`` or ``tune_params``; records
with only some timings) and the versioned ones (``schema_version`` 1.x,
an empty ``device_name`` allowed). An old cache is written back in the
newer shape (value lists added).
"""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path
from types import UnionType
from typing import Any

import numpy as np
import pandas as pd

from bat.core.atomic import publish
from bat.core.dataset import Dataset, DatasetMeta, Status, make_frame
from bat.core.errors import DatasetError, InputLimitError
from bat.core.limits import MAX_DATA_BYTES, loads, read_text
from bat.core.userdata import derived_name
from bat.formats.records import parse_records

FAILURE_STATUS = {
    "CompilationFailedConfig": Status.COMPILE_ERROR,
    "RuntimeFailedConfig": Status.RUNTIME_ERROR,
    "InvalidConfig": Status.CONSTRAINT_VIOLATION,
}
STATUS_FAILURE = {v: k for k, v in FAILURE_STATUS.items()}
# Our statuses that Kernel Tuner has no word for are written as runtime failures.
STATUS_FAILURE.update(
    {
        Status.INCORRECT: "RuntimeFailedConfig",
        Status.TIMEOUT: "RuntimeFailedConfig",
        Status.MISSING: "RuntimeFailedConfig",
    }
)
#: Record fields with a column of their own; every other scalar field is kept as ``kt_<field>``.
MODELLED_FIELDS = ("time", "times", "compile_time", "benchmark_time")


def read_json(path: Path) -> dict[str, Any]:
    """Read a JSON or gzip-compressed JSON file within the limits of bat.core.limits (size, decompressed
    size, depth, digits)."""
    try:
        text = read_text(path, MAX_DATA_BYTES)
    except InputLimitError as exc:
        raise DatasetError(str(exc)) from None
    try:
        return _loads(text, path)
    except json.JSONDecodeError:
        # Kernel Tuner leaves a cache being written without its closing braces.
        try:
            return _loads(text.rstrip().rstrip(",") + "}}", path)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{path}: not a JSON file: {exc}") from exc


def _loads(text: str, path: Path) -> Any:
    try:
        return loads(text, str(path), finite=False)  # NaN times are refused with their row (bat.formats.suspect)
    except InputLimitError as exc:
        raise DatasetError(str(exc)) from None


def gpu_id(device_name: str) -> str:
    """Short GPU id from a device name: 'NVIDIA GeForce RTX 3090' -> 'RTX_3090' ('' for no name).

    Only letters, digits, '_', '-' and '.' remain (bat.core.userdata.derived_name), so a device name
    can never lead a file name out of its folder.
    """
    words = [w for w in device_name.replace("-", " ").split() if w not in {"NVIDIA", "GeForce", "GPU"}]
    return derived_name("_".join(words))


def is_kernel_tuner_cache(raw: dict[str, Any]) -> bool:
    return isinstance(raw, dict) and "cache" in raw and "tune_params_keys" in raw


#: header keys a reader uses, with the JSON type they must have
HEADER_TYPES: tuple[tuple[str, type | UnionType | tuple[type, ...], str], ...] = (
    ("device_name", str, "a string"), ("kernel_name", str, "a string"), ("objective", str, "a string"),
    ("tune_params", dict, "an object of value lists"), ("problem_size", int | float | str | list, "a size"),
)


def parse_cache(raw: Any, path: str) -> tuple[dict[str, Any], pd.DataFrame]:
    """Parse a loaded cache into (header, frame in dataset layout)."""
    if not is_kernel_tuner_cache(raw):
        raise DatasetError(f"{path}: not a Kernel Tuner cache (no 'tune_params_keys'/'cache')")
    keys = raw["tune_params_keys"]
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
        raise DatasetError(f"{path}: 'tune_params_keys' must be a list of parameter names")
    if not isinstance(raw["cache"], dict):
        raise DatasetError(f"{path}: 'cache' must be an object of records keyed by parameter values")
    if not raw["cache"]:
        raise DatasetError(f"{path}: 'cache' holds no measurements")
    for key, kind, what in HEADER_TYPES:
        if key in raw and (isinstance(raw[key], bool) or not isinstance(raw[key], kind)):
            raise DatasetError(f"{path}: '{key}' must be {what}, got {json.dumps(raw[key])[:60]}")
    if any(not isinstance(v, list) for v in raw.get("tune_params", {}).values()):
        raise DatasetError(f"{path}: 'tune_params' must map each parameter to a list of its values")
    rows = parse_records(((f"{path}: cache[{key!r}]", (key, rec)) for key, rec in raw["cache"].items()),
                         lambda where, item: _cache_row(item[0], item[1], keys, path),
                         "an object with every parameter, 'time' and optionally a list of numbers 'times'")
    frame = make_frame(keys, rows, str(path))
    header = {k: v for k, v in raw.items() if k != "cache"}
    return header, frame


def _cache_row(key: str, rec: Any, keys: list[str], path: str) -> dict[str, Any]:
    """One cache record as a dataset row."""
    values = key.split(",")
    if len(values) != len(keys):
        raise DatasetError(f"{path}: cache key {key!r} has {len(values)} values for {len(keys)} parameters")
    missing = [k for k in keys if k not in rec]
    if missing:
        raise DatasetError(f"{path}: record {key!r} lacks parameters {missing}")
    row: dict[str, Any] = {k: rec[k] for k in keys}
    t = rec.get("time")
    if isinstance(t, str):
        if t not in FAILURE_STATUS:
            raise DatasetError(f"{path}: record {key!r} has unknown failure {t!r}")
        row["status"] = FAILURE_STATUS[t].value
        row["objective_ms"] = np.nan
        row["message"] = t
    elif isinstance(t, int | float) and math.isfinite(t):
        row["status"] = Status.OK.value
        row["objective_ms"] = float(t)
    else:
        raise DatasetError(f"{path}: record {key!r} has no usable 'time' ({t!r})")
    row["times_ms"] = [float(x) for x in rec.get("times", [])]
    row["compile_ms"] = rec.get("compile_time", np.nan)
    row["benchmark_ms"] = rec.get("benchmark_time", np.nan)
    for f, value in rec.items():
        if f not in MODELLED_FIELDS and f not in row and (value is None or isinstance(value, int | float | str)):
            row[f"kt_{f}"] = value
    return row


def to_cache(dataset: Dataset) -> dict[str, Any]:
    """A Kernel Tuner cache dict holding every row of ``dataset``."""
    header = dict(dataset.meta.extra.get("kernel_tuner_header", {}))
    params = list(dataset.parameters)
    frame = dataset.frame
    header.setdefault("device_name", dataset.meta.gpu_name or dataset.meta.gpu)
    header.setdefault("kernel_name", dataset.meta.benchmark)
    header.setdefault("problem_size", list(dataset.meta.problem_size.values()))
    header["tune_params_keys"] = params
    header.setdefault(
        "tune_params", {p: sorted(frame[p].unique().tolist()) for p in params}
    )
    cache: dict[str, Any] = {}
    for rec in frame.to_dict("records"):
        values = [_plain(rec[p]) for p in params]
        out: dict[str, Any] = dict(zip(params, values, strict=True))
        status = Status(rec["status"])
        out["time"] = float(rec["objective_ms"]) if status is Status.OK else STATUS_FAILURE[status]
        if len(rec["times_ms"]):  # failed records (and some old caches) carry no "times"
            out["times"] = [float(x) for x in rec["times_ms"]]
        for field, col in (("compile_time", "compile_ms"), ("benchmark_time", "benchmark_ms")):
            if not _is_nan(rec[col]):
                out[field] = _plain(rec[col])
        for name, value in rec.items():
            if str(name).startswith("kt_") and not _is_nan(value):
                out[str(name)[3:]] = _plain(value)
        cache[",".join(str(v) for v in values)] = out
    header["cache"] = cache
    return header


def write_json(obj: Any, path: str | Path, *, overwrite: bool = True) -> Path:
    """Write JSON atomically, gzip-compressed when the name ends in .gz."""
    path = Path(path)
    data = json.dumps(obj).encode()
    if path.name.endswith(".gz"):
        data = gzip.compress(data, mtime=0)
    return publish(path, lambda tmp: tmp.write_bytes(data), overwrite=overwrite)


def write_cache(dataset: Dataset, path: str | Path, *, overwrite: bool = True) -> Path:
    return write_json(to_cache(dataset), path, overwrite=overwrite)


def cache_meta(header: dict[str, Any], benchmark: str, space_hash: str, gpu: str | None) -> DatasetMeta:
    """Dataset metadata from a cache header (the caller adds source and licence)."""
    size = header.get("problem_size")
    problem_size = size if isinstance(size, dict) else {"problem_size": size}
    return DatasetMeta(
        benchmark=benchmark,
        space_hash=space_hash,
        gpu=gpu or gpu_id(str(header.get("device_name", ""))) or "unknown_gpu",
        gpu_name=str(header.get("device_name", "")),
        problem_size=problem_size,
        extra={"kernel_tuner_header": header},
    )


def _is_nan(v: object) -> bool:
    return isinstance(v, float) and math.isnan(v)


def _plain(v: object) -> object:
    """NumPy scalars to Python scalars; NaN stays NaN (JSON writes it as NaN)."""
    if isinstance(v, np.generic):
        return v.item()
    return v
