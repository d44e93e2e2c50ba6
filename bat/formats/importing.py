"""Read measured data in other tools' formats into datasets, and write it back.

``import_file`` recognises the format from the file's content (Kernel Tuner
cache, T4 results, KTT output; a T1 file holds a space, not data) and decides:

- the space: ``benchmark`` as a registered name, or a space file by path
  (ours or T1: bat.core.t1), used as written; without it, the registered benchmark
  whose parameters and values hold the file's, else a space inferred from the
  file's own value lists. A space that is not a registered benchmark's own
  file travels with the dataset (``DatasetMeta.space``, and ``space_file``
  when it came from a file), so the dataset needs nothing else to be replayed.
- the parameters, for a benchmark given: the file's names mapped onto the
  benchmark's (its space file's ``other_names`` for the file's format, else
  names matched ignoring case), problem-size constants checked, parameters
  the file lacks fixed (``fix``, or a single value): bat.formats.mapping. A
  dataset of a slice is ``partial`` with ``extra["slice"]``.
- the names: ``benchmark`` (when it is not a space) and ``gpu`` override what
  the file says. Otherwise the benchmark is the space's name, or for an
  inferred space the file name up to its first dot without a trailing
  ``_<GPU>``; the GPU is a T4 file's ``metadata.gpu`` or an id derived from
  the device name, with a warning when there is none. Names given as names
  must be safe in file names (bat.core.userdata), else an error names the field.
  ``DatasetMeta.gpu_source`` says where the GPU came from; a file that names
  no device takes its GPU name from the GPU facts (bat.core.gpus) of the GPU
  given.
- a warning when the space is inferred, has no constraints and holds more
  configurations than the file: the file's value lists then admit
  configurations the tuner never measured, and the T1 file gives the real space.
"""

from __future__ import annotations

import re
from collections.abc import Mapping as Table
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from bat.core.benchmark import Benchmark, benchmark_from_dict, benchmark_names, load_benchmark
from bat.core.dataset import CORE_COLUMNS, Dataset, DatasetMeta
from bat.core.errors import DatasetError, SpaceMismatchError, UnsafeNameError
from bat.core.gpus import gpu_facts
from bat.core.space import SearchSpace
from bat.core.t1 import is_t1
from bat.core.userdata import safe_name
from bat.formats import kerneltuner, t4
from bat.formats.mapping import Mapping, map_parameters
from bat.formats.suspect import refuse_or_quarantine

UNKNOWN_GPU = "unknown_gpu"


@dataclass
class Imported:
    """An imported dataset with the space it belongs to."""

    dataset: Dataset
    space: SearchSpace
    benchmark: Benchmark | None  # None when the space was inferred from the file
    format: str
    n_constraint_violations: int
    warnings: list[str] = field(default_factory=list)
    mapping: Mapping | None = None  # how the file's parameters became the benchmark's (None: as they were)


@dataclass
class _Read:
    """What one data file holds, before a space and names are chosen."""

    format: str
    params: list[str]
    frame: pd.DataFrame
    meta: DatasetMeta
    device: str  # the device name as the file writes it ('' when none)
    named_gpu: str | None = None  # a GPU id the file states (T4 metadata.gpu written by BAT)
    value_lists: dict[str, list[Any]] = field(default_factory=dict)


def _read(path: Path) -> _Read:
    raw = kerneltuner.read_json(path)
    if kerneltuner.is_kernel_tuner_cache(raw):
        header, frame = kerneltuner.parse_cache(raw, str(path))
        device = str(header.get("device_name", ""))
        values = dict(header.get("tune_params") or {})  # lists of scalars: checked by _check_scalars
        return _Read("kernel_tuner", list(header["tune_params_keys"]), frame,
                     kerneltuner.cache_meta(header, "", "", UNKNOWN_GPU), device, value_lists=values)
    if t4.is_t4(raw):
        params, frame, info = t4.read_t4(raw, str(path))
        meta = t4.t4_meta(raw, "", "", UNKNOWN_GPU)
        meta.extra["t4"] = info
        return _Read("t4", params, frame, meta, t4.t4_gpu_name(raw), named_gpu=t4.t4_gpu(raw))
    from bat.formats import ktt  # only this format needs it

    if ktt.is_ktt(raw):
        params, frame, header = ktt.read_ktt(raw, str(path))
        meta = DatasetMeta(benchmark="", space_hash="", gpu=UNKNOWN_GPU, gpu_name=header["device_name"],
                           extra={"ktt_header": header}, date=str(header.get("Timestamp", ""))[:10],
                           toolkit=f"KTT {header.get('KttVersion', '?')}")
        return _Read("ktt", params, frame, meta, header["device_name"])
    if is_t1(raw):
        raise DatasetError(f"{path}: a T1 file describes a search space and holds no measurements; import "
                           f"data with it as `bat import DATA --benchmark {path}`")
    keys = sorted(raw)[:8] if isinstance(raw, dict) else type(raw).__name__
    raise DatasetError(f"{path}: neither a Kernel Tuner cache (keys 'tune_params_keys' and 'cache'), a T4 file "
                       f"('results') nor KTT output; the file has {keys}")


def import_file(
    path: str | Path,
    *,
    benchmark: str | None = None,
    gpu: str | None = None,
    source: str = "",
    licence: str = "",
    gpu_source: str = "",
    allow_suspect: bool = False,
    fix: Table[str, str] | None = None,
) -> Imported:
    """Import a Kernel Tuner cache, T4 or KTT file as a dataset (see the module docstring).

    ``gpu_source`` says where a given ``gpu`` came from (default: ``--gpu``); suspect rows (bat.formats.suspect)
    are refused, or quarantined with ``allow_suspect``; ``fix`` (``--fix name=value``) fixes parameters of the
    benchmark the file lacks, which makes the dataset a slice (bat.formats.mapping)."""
    path = Path(path)
    read = _read(path)
    _check_scalars(read, str(path))
    warnings: list[str] = []
    gpu, found = _gpu(read, gpu, path, warnings)
    bench, name = _space(read, benchmark, path, gpu, warnings)
    frame, meta = read.frame, read.meta
    mapping = None
    if bench is not None:
        space = bench.space
        frame, mapping = map_parameters(read.params, frame, bench, read.format, fix or {}, str(path))
        frame = frame[[*space.names, *[c for c in frame.columns if c not in space.names]]]
        meta.remember(bench)
        if mapping is not None:
            meta.extra["mapping"] = mapping.to_dict()
            if mapping.is_slice:
                meta.partial = True
                meta.extra["slice"] = {k: v for k, v in mapping.fixed.items() if mapping.fixed_how[k] == "--fix"}
    elif fix:
        raise DatasetError(f"{path}: --fix needs the benchmark the file's data is a slice of (--benchmark)")
    else:
        meta.space = _inferred(read, name, path)
        space = benchmark_from_dict(meta.space, path).space
        if not space.constraints and space.cardinality > len(frame):
            warnings.append(f"{path.name}: the space inferred from the file has no constraints and "
                            f"{space.cardinality:,} configurations, the file {len(frame):,}; give the space "
                            f"the data was tuned on with --benchmark (a benchmark name, or its T1 file: "
                            f"`bat import {path.name} --benchmark KERNEL.json`)")
    _check_values(frame, space, str(path))
    frame, quarantined = refuse_or_quarantine(frame, space.names, meta, str(path), allow=allow_suspect)
    if quarantined:
        warnings.append(f"{path.name}: {quarantined} suspect rows quarantined (status missing, column 'suspect')")
    meta.benchmark, meta.space_hash, meta.gpu = space.name, space.space_hash, gpu
    _name_gpu(meta, read, gpu, gpu_source if found == "--gpu" and gpu_source else found)
    stamp_column = next((c for c in ("kt_timestamp", "t4_timestamp") if c in frame.columns), None)
    if stamp_column and not meta.date:
        stamps = frame[stamp_column].dropna().astype(str).str[:10]
        if len(stamps):
            meta.date = stamps.min() if stamps.min() == stamps.max() else f"{stamps.min()} to {stamps.max()}"
    meta.source = source or meta.source or f"imported from {path.name} ({read.format})"
    meta.licence = licence or meta.licence
    dataset = Dataset(frame=frame.reset_index(drop=True), meta=meta, parameters=tuple(space.names))
    valid = space.is_valid(space.encode(dataset.frame))  # it reads the space's columns alone: no copy of them
    return Imported(dataset, space, bench, read.format, int((~valid).sum()), warnings, mapping)


def _gpu(read: _Read, given: str | None, path: Path, warnings: list[str]) -> tuple[str, str]:
    """The GPU id and where it came from."""
    if given:
        return safe_name(given, "--gpu"), "--gpu"
    if read.named_gpu:
        return safe_name(str(read.named_gpu), f"{path}: metadata.gpu"), "metadata.gpu in the file"
    derived = kerneltuner.gpu_id(read.device)
    if derived.lower() in ("", "unknown", UNKNOWN_GPU, "none"):
        warnings.append(f"{path.name} names no GPU (device name {read.device!r}); "
                        f"the dataset's GPU is {UNKNOWN_GPU!r} (give --gpu NAME)")
        return UNKNOWN_GPU, "none: the file names no device"
    return derived, "the file's device name"


def _name_gpu(meta: DatasetMeta, read: _Read, gpu: str, found: str) -> None:
    """Set the GPU's name and ``gpu_source``: the file's device name, else the GPU facts' name of ``gpu``."""
    meta.gpu_name = meta.gpu_name or read.device
    facts = gpu_facts(gpu)
    if meta.gpu_name:
        meta.gpu_source = f"GPU {gpu} from {found}; name {meta.gpu_name!r} from the file's device name"
    elif facts is not None:
        meta.gpu_name = facts.name
        meta.gpu_source = (f"GPU {gpu} from {found}; the file names no device, name {facts.name!r} from "
                           "the GPU facts (bat/core/gpu_specs.json)")
    else:
        meta.gpu_source = f"GPU {gpu} from {found}; the file names no device"


def _space(read: _Read, given: str | None, path: Path, gpu: str, warnings: list[str]
           ) -> tuple[Benchmark | None, str]:
    """The benchmark whose space the data belongs to (None: infer one) and the name of an inferred one."""
    if given and (given in benchmark_names() or Path(given).exists() or given.endswith(".json")):
        bench = load_benchmark(given)
        return bench, bench.name
    if given:
        return None, _checked_name(given, "--benchmark")
    for candidate in benchmark_names():
        bench = load_benchmark(candidate)
        if set(bench.space.names) == set(read.params) and _holds(bench.space, read.frame):
            return bench, bench.name
    name = name_from_file(path, gpu)
    if name in benchmark_names():
        warnings.append(f"{name!r} is also a shipped benchmark, with another space; this dataset keeps the "
                        "space read from the file (choose it with --dataset)")
    return None, name


def name_from_file(path: Path, gpu: str) -> str:
    """The benchmark part of a file name: up to the first dot, without a trailing ``_<gpu>``."""
    stem = path.name.split(".")[0]
    if gpu and stem.lower().endswith("_" + gpu.lower()) and len(stem) > len(gpu) + 1:
        stem = stem[: -len(gpu) - 1]
    name = re.sub(r"\W", "_", stem) or "imported"
    return f"b_{name}" if name[0].isdigit() else name


def _checked_name(name: str, what: str) -> str:
    safe_name(name, what)
    if not name.isidentifier():
        raise UnsafeNameError(f"{what} {name!r} is not usable as a benchmark name: use letters, digits and '_', "
                              "not starting with a digit")
    return name


def _holds(space: SearchSpace, frame: pd.DataFrame) -> bool:
    return all(set(frame[p.name].unique().tolist()) <= set(p.values) for p in space.parameters)


def _inferred(read: _Read, name: str, path: Path) -> dict[str, Any]:
    return {
        "name": name,
        "description": f"inferred from {path.name}",
        "parameters": [{"name": p, "values": read.value_lists.get(p) or sorted(read.frame[p].unique().tolist())}
                       for p in read.params],
        "constraints": [],
        "problem_size": {},
    }


def space_dict(space: SearchSpace) -> dict[str, Any]:
    """The space-file form of ``space`` (parameters and constraints)."""
    return {
        "name": space.name,
        "description": f"search space {space.name}",
        "parameters": [{"name": p.name, "values": list(p.values)} for p in space.parameters],
        "constraints": [{"expr": c.expr, "why": c.why} for c in space.constraints],
        "problem_size": dict(getattr(space, "problem_size", None) or {}),
    }


def _check_scalars(read: _Read, where: str) -> None:
    """Every parameter value of the file is a number or a string (a list or an object is refused here, where
    the file is read, not by whatever would hash or compare it later)."""
    if read.frame.empty or any(name not in read.frame.columns for name in read.params):
        raise DatasetError(f"{where}: the file holds no measurements")
    for name in read.params:
        if name not in read.frame.columns:
            continue
        for row, value in enumerate(read.frame[name].tolist()):
            if isinstance(value, bool) or not isinstance(value, int | float | str):
                raise DatasetError(f"{where}: parameter {name!r} of row {row}: {str(value)[:60]} is not a number "
                                   "or a string")
    for column in read.frame.columns:  # one column, one kind: Parquet cannot hold a mix
        if column in read.params or column in CORE_COLUMNS or read.frame[column].dtype != object:
            continue
        kinds = {_kind(v) for v in read.frame[column].tolist()} - {"missing"}
        if len(kinds) > 1:
            raise DatasetError(f"{where}: field {column!r} mixes {' and '.join(sorted(kinds))} values; one field "
                               "holds one kind")
    for name, values in read.value_lists.items():
        if not isinstance(values, list) or any(isinstance(v, bool) or not isinstance(v, int | float | str)
                                               for v in values):
            raise DatasetError(f"{where}: tune_params.{name}: a list of numbers or strings is expected")


def _kind(value: Any) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return "missing"
    if isinstance(value, bool | np.bool_):
        return "boolean"
    if isinstance(value, int | float | np.number):
        return "number"
    return "string" if isinstance(value, str) else type(value).__name__


def _check_values(frame: Any, space: SearchSpace, where: str) -> None:
    problems = []
    for p in space.parameters:
        extra = sorted(set(frame[p.name].unique().tolist()) - set(p.values), key=str)
        if extra:
            problems.append(f"{p.name}: values {extra} not in the space (allowed {list(p.values)})")
    if problems:
        raise SpaceMismatchError(f"{where}: does not match space {space.name}: " + "; ".join(problems))
