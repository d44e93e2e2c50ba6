"""Load every recorded dataset of one benchmark, with the space they belong to."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bat.core.dataset import Dataset, Status
from bat.core.errors import DatasetError, UnknownNameError
from bat.core.space import SearchSpace
from bat.registry import DatasetEntry, dataset_entries


def gpu_label(gpu: str, gpu_name: str | None) -> str:
    """How every figure and report names a GPU: the dataset's GPU name, else its id with spaces."""
    return gpu_name or gpu.replace("_", " ")


@dataclass
class BenchmarkData:
    """The datasets of one benchmark, keyed by GPU id, on one search space."""

    benchmark: str
    space: SearchSpace
    datasets: dict[str, Dataset]

    @property
    def gpus(self) -> list[str]:
        return list(self.datasets)

    def gpu_name(self, gpu: str) -> str:
        """Full GPU name for figures and tables (the id when the data has none)."""
        return gpu_label(gpu, self.datasets[gpu].meta.gpu_name)

    def vendor(self, gpu: str) -> str:
        """The GPU's vendor (bat.core.gpus), "" when neither its id nor its name tells."""
        return self.datasets[gpu].meta.vendor


def benchmarks_with_data(root: Path | None = None) -> list[str]:
    """Benchmarks that have at least one recorded dataset."""
    return sorted({e.meta.benchmark for e in dataset_entries(root)})


def load_benchmark_data(benchmark: str, gpus: list[str] | None = None,
                        root: Path | None = None) -> BenchmarkData:
    """The datasets recorded on ``benchmark``'s space (all GPUs, or those named).

    ``benchmark``: a registered name, a space file by path, or the name of imported datasets.
    Datasets are matched by the space they were recorded on, never by name alone.
    """
    from bat.registry import resolve_benchmark

    bench = resolve_benchmark(benchmark)
    entries = [e for e in dataset_entries(root) if e.meta.space_hash == bench.space.space_hash]
    if not entries:
        raise UnknownNameError("benchmark with recorded data", benchmark, benchmarks_with_data(root))
    known = sorted({e.meta.gpu for e in entries})
    for g in gpus or []:
        if g not in known:
            raise UnknownNameError(f"GPU for {benchmark}", g, known)
    return _group(bench.name, bench.space, [e for e in entries if gpus is None or e.meta.gpu in gpus])


def load_dataset_data(refs: list[str]) -> list[BenchmarkData]:
    """The datasets named by file or id, grouped by the space they were recorded on."""
    from bat.registry import resolve_dataset

    return group_by_space([resolve_dataset(ref) for ref in refs])


def group_by_space(entries: list[DatasetEntry]) -> list[BenchmarkData]:
    """Datasets grouped by the space they were recorded on, each group with its benchmark's name and space."""

    groups: dict[str, list[DatasetEntry]] = {}
    for entry in entries:
        groups.setdefault(entry.meta.space_hash, []).append(entry)
    out = []
    for entries in groups.values():
        bench = entries[0].meta.load_benchmark()
        out.append(_group(bench.name, bench.space, entries))
    return sorted(out, key=lambda d: d.benchmark)


def _group(name: str, space: SearchSpace, entries: list[DatasetEntry]) -> BenchmarkData:
    """One benchmark's data: at most one dataset per GPU (two are an error naming both files)."""
    by_gpu: dict[str, DatasetEntry] = {}
    for e in entries:
        if e.meta.gpu in by_gpu:
            raise DatasetError(f"two datasets of {name} on {e.meta.gpu}: {by_gpu[e.meta.gpu].path} and {e.path}; "
                               "choose one with --dataset FILE|ID")
        by_gpu[e.meta.gpu] = e
    return BenchmarkData(name, space, {g: Dataset.load(e.path) for g, e in by_gpu.items()})


def ok_times(dataset: Dataset) -> np.ndarray:
    """Objective (ms) of every ok configuration."""
    times = dataset.ok["objective_ms"].to_numpy(dtype=float)
    if len(times) == 0:
        raise DatasetError(f"dataset {dataset.name} has no valid measurement")
    return times


def times_failed_inf(dataset: Dataset) -> np.ndarray:
    """Objective of every recorded configuration, +inf for the ones that are not ok."""
    ok = (dataset.frame["status"] == Status.OK.value).to_numpy()
    return np.where(ok, dataset.frame["objective_ms"].to_numpy(dtype=float), np.inf)


def check_traces(paths: Sequence[Path], jobs: Sequence[BenchmarkData]) -> None:
    """Every trace given to ``bat analyze --trace`` is of a benchmark, space and GPU being analysed
    (DatasetError naming the trace otherwise: it would be left out of every figure silently)."""
    from bat.core.trace import read_trace

    for path in paths:
        _, meta = read_trace(path)
        bench, gpu, space_hash = meta.get("benchmark"), meta.get("gpu"), meta.get("space_hash")
        same = [d for d in jobs if d.benchmark == bench]
        if not same:
            raise DatasetError(f"--trace {path}: a trace of benchmark {bench!r}, which is not analysed here "
                               f"(analysed: {', '.join(sorted({d.benchmark for d in jobs}))})")
        if space_hash is not None and not any(d.space.space_hash == space_hash for d in same):
            raise DatasetError(f"--trace {path}: recorded on another space of {bench} (hash {str(space_hash)[:12]})")
        if not any(gpu in d.gpus for d in same):
            raise DatasetError(f"--trace {path}: a trace on GPU {gpu!r}, which has no data here (GPUs: "
                               f"{', '.join(sorted({g for d in same for g in d.gpus}))})")
