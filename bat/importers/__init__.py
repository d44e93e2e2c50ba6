"""Read measured data in other tools' formats into datasets, and write it back.

``import_file`` recognises the format from the file's content (Kernel Tuner
cache, T4 results, KTT output), matches it to a registered benchmark by its
parameter names (or the one the caller names), checks every parameter and
value against that benchmark's space, and, for a kernel this project does
not know, infers a space from the file's own parameter lists.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bat.benchmark import Benchmark, benchmark_names, load_benchmark
from bat.dataset import Dataset, DatasetMeta
from bat.errors import DatasetError, SpaceMismatchError
from bat.importers import kerneltuner, t4
from bat.space import SearchSpace
from bat.spacefile import space_from_dict


@dataclass
class Imported:
    """An imported dataset with the space it belongs to."""

    dataset: Dataset
    space: SearchSpace
    benchmark: Benchmark | None  # None when the space was inferred from the file
    format: str
    n_constraint_violations: int


def import_file(
    path: str | Path,
    *,
    benchmark: str | None = None,
    gpu: str | None = None,
    source: str = "",
    licence: str = "",
) -> Imported:
    """Import a Kernel Tuner cache, T4 or KTT file as a dataset."""
    path = Path(path)
    raw = kerneltuner.read_json(path)
    if kerneltuner.is_kernel_tuner_cache(raw):
        header, frame = kerneltuner.read_cache(path)
        fmt, params = "kernel_tuner", list(header["tune_params_keys"])
        name_hint = str(header.get("kernel_name", path.stem))
        value_lists = {k: list(v) for k, v in header.get("tune_params", {}).items()}
        gpu = gpu or kerneltuner.gpu_id(str(header.get("device_name", "")))
    elif t4.is_t4(raw):
        params, frame = t4.read_t4(raw, str(path))
        fmt, name_hint, header = "t4", path.name.split(".")[0], {}
        value_lists = {}
        gpu = gpu or str((raw.get("metadata") or {}).get("gpu", "unknown_gpu"))
    else:
        from bat.importers import ktt  # only this format needs it

        if not ktt.is_ktt(raw):
            raise DatasetError(f"{path}: neither a Kernel Tuner cache, a T4 file nor KTT output")
        params, frame, header = ktt.read_ktt(raw, str(path))
        fmt, name_hint, value_lists = "ktt", path.name.split(".")[0], {}
        gpu = gpu or kerneltuner.gpu_id(str(header.get("device_name", "")))

    bench = _match_benchmark(params, benchmark, str(path))
    if bench is not None:
        space = bench.space
        frame = frame[[*space.names, *[c for c in frame.columns if c not in space.names]]]
    else:
        inferred = {
            "name": name_hint,
            "description": f"inferred from {path.name}",
            "parameters": [
                {"name": p, "values": value_lists.get(p) or sorted(frame[p].unique().tolist())}
                for p in params
            ],
            "constraints": [],
            "problem_size": {},
        }
        space = space_from_dict(inferred, source=str(path))
    _check_values(frame, space, str(path))

    if fmt == "kernel_tuner":
        meta = kerneltuner.cache_meta(header, space.name, space.space_hash, gpu)
    elif fmt == "t4":
        meta = t4.t4_meta(raw, space.name, space.space_hash, gpu or "unknown_gpu")
    else:
        meta = DatasetMeta(benchmark=space.name, space_hash=space.space_hash, gpu=gpu or "unknown_gpu",
                           gpu_name=str(header.get("device_name", "")), extra={"ktt_header": header},
                           date=str(header.get("Timestamp", ""))[:10], toolkit=f"KTT {header.get('KttVersion', '?')}")
    if bench is None:
        meta.extra["space"] = space_dict(space)
    if "kt_timestamp" in frame.columns and not meta.date:
        stamps = frame["kt_timestamp"].dropna().astype(str).str[:10]
        if len(stamps):
            meta.date = stamps.min() if stamps.min() == stamps.max() else f"{stamps.min()} to {stamps.max()}"
    meta.source = source or meta.source or f"imported from {path.name} ({fmt})"
    meta.licence = licence or meta.licence
    dataset = Dataset(frame=frame.reset_index(drop=True), meta=meta, parameters=tuple(space.names))
    valid = space.is_valid(space.encode(dataset.configs()))
    return Imported(dataset, space, bench, fmt, int((~valid).sum()))


def dataset_space(dataset: Dataset) -> SearchSpace:
    """The space a dataset belongs to: its registered benchmark's, or the one stored with it."""
    stored: dict[str, Any] | None = dataset.meta.extra.get("space")
    if stored is not None:
        return space_from_dict(stored, source=f"dataset {dataset.name}")
    return load_benchmark(dataset.meta.benchmark).space


def space_dict(space: SearchSpace) -> dict[str, Any]:
    """The space-file form of ``space`` (parameters and constraints)."""
    return {
        "name": space.name,
        "description": f"search space {space.name}",
        "parameters": [{"name": p.name, "values": list(p.values)} for p in space.parameters],
        "constraints": [{"expr": c.expr, "why": c.why} for c in space.constraints],
        "problem_size": dict(getattr(space, "problem_size", None) or {}),
    }


def _match_benchmark(params: list[str], name: str | None, where: str) -> Benchmark | None:
    if name is not None:
        bench = load_benchmark(name)
        if set(bench.space.names) != set(params):
            only_file = sorted(set(params) - set(bench.space.names))
            only_space = sorted(set(bench.space.names) - set(params))
            raise SpaceMismatchError(
                f"{where}: parameters do not match benchmark {bench.name}: "
                f"only in the file {only_file}, only in the space {only_space}"
            )
        return bench
    for candidate in benchmark_names():
        bench = load_benchmark(candidate)
        if set(bench.space.names) == set(params):
            return bench
    return None


def _check_values(frame: Any, space: SearchSpace, where: str) -> None:
    problems = []
    for p in space.parameters:
        extra = sorted(set(frame[p.name].unique().tolist()) - set(p.values), key=str)
        if extra:
            problems.append(f"{p.name}: values {extra} not in the space (allowed {list(p.values)})")
    if problems:
        raise SpaceMismatchError(f"{where}: does not match space {space.name}: " + "; ".join(problems))
