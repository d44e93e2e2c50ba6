"""Load every recorded dataset of one benchmark, with the space they belong to."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bat.dataset import Dataset, Status
from bat.errors import DatasetError, UnknownNameError
from bat.registry import dataset_entries
from bat.space import SearchSpace


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
        return self.datasets[gpu].meta.gpu_name or gpu.replace("_", " ")


def benchmarks_with_data(root: Path | None = None) -> list[str]:
    """Benchmarks that have at least one recorded dataset."""
    return sorted({e.meta.benchmark for e in dataset_entries(root)})


def load_benchmark_data(benchmark: str, gpus: list[str] | None = None,
                        root: Path | None = None) -> BenchmarkData:
    """Read the datasets of ``benchmark`` (all GPUs, or those named) from the registry."""
    from bat.importers import dataset_space  # the importers pull in the benchmark registry

    entries = [e for e in dataset_entries(root) if e.meta.benchmark == benchmark]
    if not entries:
        raise UnknownNameError("benchmark with recorded data", benchmark, benchmarks_with_data(root))
    known = [e.meta.gpu for e in entries]
    for g in gpus or []:
        if g not in known:
            raise UnknownNameError(f"GPU for {benchmark}", g, known)
    chosen = [e for e in entries if gpus is None or e.meta.gpu in gpus]
    datasets = {e.meta.gpu: Dataset.load(e.path) for e in chosen}
    space = dataset_space(next(iter(datasets.values())))
    return BenchmarkData(benchmark, space, datasets)


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
