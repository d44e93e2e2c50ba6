"""The autotuning community's T4 results format, to datasets and back, as files in the wild write it.

T4 (schema 1.0.0) is a JSON object with ``results``: one entry per evaluated
configuration with ``configuration``, ``times`` (``compilation_time`` or, as
Kernel Tuner writes it, ``compilation``; ``runtimes``, ``benchmark``,
``framework``, ``search_algorithm``, ``validation``), ``invalidity``,
``correctness``, ``objectives`` and ``measurements`` (name/value/unit: the
objective and any counters), plus ``schema_version`` and ``metadata``. Only
``configuration`` is required here; everything else may be missing.

Units: the objective measurement's unit decides the scale of the entry's
times; an empty or missing unit falls back to ``metadata.timeunit`` (Kernel
Tuner writes it, for years spelled ``"miliseconds"``: read as milliseconds), then to
milliseconds. Columns hold milliseconds.

Lossless round trip (T4 -> dataset -> T4): what the dataset has no column
for (unknown keys, a non-canonical invalidity spelling, correctness,
objectives, non-numeric measurement values and their positions, which times
keys were present) travels per row in ``t4_rest`` (JSON); the file's top level
(schema_version, metadata, ...) and the measurement names, columns and units
travel in the metadata under ``extra["t4"]``. Times in another unit than
milliseconds also keep their original numbers, written back while the
millisecond column still equals them converted (so an edited value is
written converted, and an unedited one exactly as read).
"""

from __future__ import annotations

import json
import math
from collections.abc import Hashable, Mapping
from pathlib import Path
from typing import Any, TypeGuard

import numpy as np
import pandas as pd

from bat.core.dataset import CORE_COLUMNS, Dataset, DatasetMeta, Status, counter_columns, make_frame
from bat.core.errors import DatasetError
from bat.formats.kerneltuner import write_json
from bat.formats.records import parse_records

SCHEMA_VERSION = "1.0.0"
INVALIDITY_STATUS = {
    "correct": Status.OK,
    "compile": Status.COMPILE_ERROR,
    "runtime": Status.RUNTIME_ERROR,
    "correctness": Status.INCORRECT,
    "constraints": Status.CONSTRAINT_VIOLATION,
    "timeout": Status.TIMEOUT,
}
#: spellings seen outside the schema
INVALIDITY_ALIASES = {"compilation": "compile", "valid": "correct", "none": "correct", "": "correct",
                      "incorrect": "correctness", "constraint": "constraints"}
STATUS_INVALIDITY = {v: k for k, v in INVALIDITY_STATUS.items()}
STATUS_INVALIDITY[Status.MISSING] = "runtime"
UNIT_TO_MS = {"milliseconds": 1.0, "millisecond": 1.0, "ms": 1.0, "microseconds": 1e-3, "microsecond": 1e-3,
              "us": 1e-3, "µs": 1e-3, "seconds": 1e3, "second": 1e3, "s": 1e3, "nanoseconds": 1e-6,
              "nanosecond": 1e-6, "ns": 1e-6,
              "miliseconds": 1.0}  # sic: Kernel Tuner's T4 converter wrote this spelling until 2024
OBJECTIVE = "time"
COMPILE_KEYS = ("compilation_time", "compilation")
#: times keys with a core column (besides runtimes and the compile time)
TIME_COLUMNS = {"benchmark": "benchmark_ms"}
REST = "t4_rest"
_MODELLED = ("configuration", "times", "measurements", "invalidity", "timestamp")


def is_t4(raw: object) -> bool:
    """A T4 results document: ``results``, a list of entries with a ``configuration`` object."""
    if not isinstance(raw, dict) or not isinstance(raw.get("results"), list):
        return False
    return "schema_version" in raw or all(isinstance(r, dict) and "configuration" in r for r in raw["results"][:1])


def _scale(unit: Any, fallback: float, where: str) -> float:
    text = str(unit or "").strip().lower()
    if not text:
        return fallback
    if text not in UNIT_TO_MS:
        raise DatasetError(f"{where}: time unit {unit!r} unknown; known: {', '.join(sorted(UNIT_TO_MS))}")
    return UNIT_TO_MS[text]


def _number(v: Any) -> TypeGuard[int | float]:
    return isinstance(v, int | float) and not isinstance(v, bool)


#: entry keys a writer adds by default; the ones an entry lacked are listed in ``bat:absent``
_DEFAULT_KEYS = ("objectives", "times", "invalidity", "correctness", "measurements")


class _Reader:
    """Reads the entries of one T4 document into rows, collecting what the file says once."""

    def __init__(self, raw: dict[str, Any], source: str) -> None:
        self.source = source
        results = raw["results"]
        if not results:
            raise DatasetError(f"{source}: T4 file has no results")
        first = results[0] if isinstance(results[0], dict) else {}
        config = first.get("configuration")
        if not isinstance(config, dict) or not config:
            raise DatasetError(f"{source}: results[0].configuration: expected an object of parameter values")
        self.params = [str(p) for p in config]
        objectives = first.get("objectives") or [OBJECTIVE]
        if not isinstance(objectives, list) or not all(isinstance(o, str) for o in objectives):
            raise DatasetError(f"{source}: results[0].objectives: expected a list of objective names")
        self.objective = objectives[0]
        meta = given if isinstance(given := raw.get("metadata"), dict) else {}
        self.fallback = _scale(meta.get("timeunit"), 1.0, f"{source}: metadata.timeunit")
        self.unit: Any = None  # the objective's unit as the first entry with an objective spells it
        self.unit_seen = False
        self.measurements: dict[str, dict[str, Any]] = {}  # name -> column and unit, first-seen order
        self.compile_key: str | None = None

    def column(self, name: str, unit: Any) -> str:
        if name not in self.measurements:
            clash = name in self.params or name in CORE_COLUMNS or name == REST
            self.measurements[name] = {"column": f"t4_{name}" if clash else name, "unit": unit}
        return self.measurements[name]["column"]

    def row(self, i: int, res: Any) -> dict[str, Any]:
        where = f"{self.source}: results[{i}]"
        if not isinstance(res, dict):
            raise DatasetError(f"{where}: expected an object")
        cfg = res.get("configuration")
        if not isinstance(cfg, dict) or set(cfg) != set(self.params):
            got = sorted(cfg) if isinstance(cfg, dict) else cfg
            raise DatasetError(f"{where}.configuration has parameters {got}, expected {sorted(self.params)}")
        row: dict[str, Any] = {p: cfg[p] for p in self.params}
        rest = {k: v for k, v in res.items() if k not in _MODELLED}
        if absent := [k for k in _DEFAULT_KEYS if k not in res]:
            rest["bat:absent"] = absent
        row["status"] = self.status(res, rest, where).value
        measurements = res.get("measurements") or []
        if not isinstance(measurements, list):
            raise DatasetError(f"{where}.measurements: expected a list")
        scale = self.entry_scale(measurements, rest, where)
        originals: dict[str, Any] = {}
        others = []
        for j, m in enumerate(measurements):
            if not isinstance(m, dict) or "name" not in m:
                raise DatasetError(f"{where}.measurements[{j}]: expected an object with name and value")
            name, value = str(m["name"]), m.get("value")
            if not _number(value):
                others.append({"at": j, **m})
            elif name == self.objective:
                row["objective_ms"] = float(value) * scale
                originals["objective"] = value
            else:
                row[self.column(name, m.get("unit"))] = float(value)
        if others:
            rest["bat:measurements"] = others
        self.times(res.get("times", {}), row, rest, originals, scale, where)
        if "timestamp" in res:
            row["t4_timestamp"] = res["timestamp"]
        if scale != 1.0:
            rest["bat:raw"] = originals
        row[REST] = json.dumps(rest, sort_keys=True) if rest else ""
        return row

    def status(self, res: dict[str, Any], rest: dict[str, Any], where: str) -> Status:
        raw_inv = res.get("invalidity", "correct")
        text = INVALIDITY_ALIASES.get(str(raw_inv or "").strip().lower(), str(raw_inv or "").strip().lower())
        if text not in INVALIDITY_STATUS:
            raise DatasetError(f"{where}.invalidity {raw_inv!r} unknown; valid: {', '.join(INVALIDITY_STATUS)}")
        if raw_inv != text:
            rest["bat:invalidity"] = raw_inv
        status = INVALIDITY_STATUS[text]
        if status is Status.OK and res.get("correctness", 1) in (0, False):
            status = Status.INCORRECT
        return status

    def entry_scale(self, measurements: list[Any], rest: dict[str, Any], where: str) -> float:
        """The entry's time scale: its objective's unit, else the file's, else metadata.timeunit."""
        for m in measurements:
            if isinstance(m, dict) and str(m.get("name")) == self.objective and _number(m.get("value")):
                unit = m.get("unit")  # None: the entry has no unit key
                if not self.unit_seen:
                    self.unit, self.unit_seen = unit, True
                if unit != self.unit:
                    rest["bat:unit"] = unit
                return _scale(unit, self.fallback, f"{where}: objective {self.objective!r}")
        return _scale(self.unit, self.fallback, where)

    def times(self, times: Any, row: dict[str, Any], rest: dict[str, Any], originals: dict[str, Any],
              scale: float, where: str) -> None:
        if not isinstance(times, dict):
            raise DatasetError(f"{where}.times: expected an object")
        kept: dict[str, Any] = {}
        for key, value in times.items():
            if key == "runtimes" and isinstance(value, list) and all(_number(t) for t in value):
                row["times_ms"] = [float(t) * scale for t in value]
            elif not _number(value):
                kept[key] = value
                continue
            elif key in COMPILE_KEYS and "compile_ms" not in row:
                self.compile_key = self.compile_key or key
                if key != self.compile_key:
                    rest["bat:compile_key"] = key
                row["compile_ms"] = float(value) * scale
            else:
                row[TIME_COLUMNS.get(key, f"t4_{key}_ms")] = float(value) * scale
            originals[key] = value
        if "runtimes" not in times:
            rest["bat:no_runtimes"] = True
        if kept:
            rest["bat:times"] = kept

    def info(self, raw: dict[str, Any]) -> dict[str, Any]:
        """What the file says once: its top level, objective, unit, measurements and compile-time key."""
        return {"header": {k: v for k, v in raw.items() if k != "results"}, "objective": self.objective,
                "unit": self.unit, "fallback": self.fallback,
                "measurements": self.measurements,
                "compile_key": self.compile_key or COMPILE_KEYS[0]}


def read_t4(raw: dict[str, Any], source: str) -> tuple[list[str], pd.DataFrame, dict[str, Any]]:
    """Parse T4 results into (parameter order, frame in dataset layout, what to keep as ``extra["t4"]``)."""
    if not is_t4(raw):
        raise DatasetError(f"{source}: not a T4 results file (no 'results' list of configurations)")
    reader = _Reader(raw, source)
    rows = parse_records(((f"{source}: results[{i}]", (i, res)) for i, res in enumerate(raw["results"])),
                         lambda where, item: reader.row(*item),
                         "an object with 'configuration', 'times' (an object of numbers), 'invalidity' and "
                         "'measurements' (a list of name/value/unit objects)")
    return reader.params, make_frame(reader.params, rows, source), reader.info(raw)


# -- writing --------------------------------------------------------------------------------
def _back(ms: float, original: Any, scale: float) -> Any:
    """A millisecond value in the file's unit: the original number while ``ms`` still equals it converted."""
    if _number(original) and float(original) * scale == ms:
        return original
    return ms / scale


def _times(rec: Mapping[Hashable, Any], rest: dict[str, Any], raw: dict[str, Any], info: dict[str, Any],
           scale: float) -> dict[str, Any]:
    times: dict[str, Any] = {}
    originals = raw.get("runtimes")
    if not rest.get("bat:no_runtimes"):
        same = originals if isinstance(originals, list) and len(originals) == len(rec["times_ms"]) else None
        times["runtimes"] = [_back(float(t), same[k] if same is not None else None, scale)
                             for k, t in enumerate(rec["times_ms"])]
    if not _nan(rec["compile_ms"]):
        key = rest.get("bat:compile_key", info["compile_key"])
        times[key] = _back(float(rec["compile_ms"]), raw.get(key), scale)
    for key, col in TIME_COLUMNS.items():
        if not _nan(rec[col]):
            times[key] = _back(float(rec[col]), raw.get(key), scale)
    for name, value in rec.items():
        col = str(name)
        if col.startswith("t4_") and col.endswith("_ms") and not _nan(value):
            times[col[3:-3]] = _back(float(value), raw.get(col[3:-3]), scale)
    times.update(rest.get("bat:times", {}))
    return times


def _measure(name: str, value: Any, unit: Any) -> dict[str, Any]:
    return {"name": name, "value": value} if unit is None else {"name": name, "value": value, "unit": unit}


def _measurements(rec: Mapping[Hashable, Any], rest: dict[str, Any], raw: dict[str, Any], info: dict[str, Any],
                  scale: float, counters: list[str]) -> list[dict[str, Any]]:
    out = []
    if not _nan(rec["objective_ms"]):
        value = _back(float(rec["objective_ms"]), raw.get("objective"), scale)
        out.append(_measure(info["objective"], value, rest.get("bat:unit", info["unit"])))
    for name, m in info["measurements"].items():
        if m["column"] in rec and not _nan(rec[m["column"]]):
            out.append(_measure(name, _plain(rec[m["column"]]), m["unit"]))
    out += [_measure(c, float(rec[c]), "") for c in counters if not _nan(rec[c])]
    for other in rest.get("bat:measurements", []):
        out.insert(min(other["at"], len(out)), {k: v for k, v in other.items() if k != "at"})
    return out


def to_t4(dataset: Dataset) -> dict[str, Any]:
    """A T4 results dict with every row (counters kept as measurements).

    A dataset imported from T4 gives back the file it came from; any other dataset is written
    in milliseconds with BAT's metadata.
    """
    info = dataset.meta.extra.get("t4") or {
        "header": {"schema_version": SCHEMA_VERSION, "metadata": json.loads(dataset.meta.to_json())},
        "objective": OBJECTIVE, "unit": "milliseconds", "fallback": 1.0, "measurements": {},
        "compile_key": COMPILE_KEYS[0]}
    modelled = {m["column"] for m in info["measurements"].values()}
    counters = [c for c in counter_columns(dataset.frame) if c not in modelled]
    out = []
    for rec in dataset.frame.to_dict("records"):
        rest = json.loads(rec.get(REST) or "{}")
        raw = rest.get("bat:raw", {})
        unit = rest.get("bat:unit", info["unit"])
        scale = _scale(unit, info["fallback"], f"dataset {dataset.name}")
        status = Status(rec["status"])
        entry: dict[str, Any] = {"configuration": {p: _plain(rec[p]) for p in dataset.parameters}}
        if isinstance(rec.get("t4_timestamp"), str):
            entry["timestamp"] = rec["t4_timestamp"]
        entry["objectives"] = [info["objective"]]
        entry["times"] = _times(rec, rest, raw, info, scale)
        entry["invalidity"] = rest.get("bat:invalidity", STATUS_INVALIDITY[status])
        entry["correctness"] = 1 if status is Status.OK else 0
        entry["measurements"] = _measurements(rec, rest, raw, info, scale, counters)
        entry.update({k: v for k, v in rest.items() if not k.startswith("bat:")})
        for key in rest.get("bat:absent", []):
            entry.pop(key, None)
        out.append(entry)
    return {**info["header"], "results": out}


def write_t4(dataset: Dataset, path: str | Path, *, overwrite: bool = True) -> Path:
    return write_json(to_t4(dataset), path, overwrite=overwrite)


def t4_meta(raw: dict[str, Any], benchmark: str, space_hash: str, gpu: str) -> DatasetMeta:
    """Metadata for a T4 import: the file's own BAT metadata when it has it."""
    meta = raw.get("metadata")
    if isinstance(meta, dict) and {"benchmark", "gpu", "space_hash"} <= set(meta):
        kept = DatasetMeta.from_json(json.dumps(meta), "metadata")
        kept.space_hash, kept.benchmark, kept.gpu = space_hash, benchmark, gpu
        return kept
    return DatasetMeta(benchmark=benchmark, space_hash=space_hash, gpu=gpu)


def t4_gpu(raw: dict[str, Any]) -> str | None:
    """The GPU id a T4 file states as ``metadata.gpu`` (BAT writes it), or None."""
    meta = raw.get("metadata")
    gpu = meta.get("gpu") if isinstance(meta, dict) else None
    return str(gpu) if gpu not in (None, "") else None


def t4_gpu_name(raw: dict[str, Any]) -> str:
    """The GPU's name in a T4 file: ``metadata.gpu_name``/``device_name``/``device``, or nvidia-smi's."""
    meta = raw.get("metadata")
    if not isinstance(meta, dict):
        return ""
    for key in ("gpu_name", "device_name", "device"):
        if isinstance(meta.get(key), str) and meta[key].strip():
            return meta[key]
    query = ((meta.get("environment") or {}).get("device_query") or {}).get("nvidia-smi") or {}
    gpus = (query.get("nvidia_smi_log") or {}).get("gpu") if isinstance(query, dict) else None
    first = gpus[0] if isinstance(gpus, list) and gpus else gpus
    return str(first.get("product_name", "")) if isinstance(first, dict) else ""


def _nan(v: object) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def _plain(v: object) -> object:
    return v.item() if isinstance(v, np.generic) else v
