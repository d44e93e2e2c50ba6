"""Registries by name: tuners (as ``"module:attr"`` strings, so listing imports no
tuning library) and the recorded datasets shipped in ``results/``."""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from bat.dataset import Dataset, DatasetMeta
from bat.errors import DatasetError, MissingDependencyError, UnknownNameError
from bat.tuner import Tuner

#: GPU replayed when none is named: the one GPU with complete data for every shipped benchmark.
DEFAULT_GPU = "RTX_3090"


@dataclass(frozen=True)
class TunerEntry:
    """A tuner by name: where its class lives, the arguments that make this variant, one line."""

    name: str
    target: str  # "module:attr"
    summary: str
    kwargs: dict[str, Any] = field(default_factory=dict)
    requires: str = ""  # the library it needs, for a clear error when it is missing


_TUNERS: dict[str, TunerEntry] = {}


def register_tuner(entry: TunerEntry) -> None:
    _TUNERS[entry.name] = entry


def tuner_names() -> list[str]:
    _load_builtin_tuners()
    return sorted(_TUNERS)


def tuner_entry(name: str) -> TunerEntry:
    _load_builtin_tuners()
    if name not in _TUNERS:
        raise UnknownNameError("tuner", name, sorted(_TUNERS))
    return _TUNERS[name]


def make_tuner(name: str, **overrides: Any) -> Tuner:
    """Instantiate a registered tuner; ``overrides`` replace its hyper-parameters."""
    entry = tuner_entry(name)
    module_name, attr = entry.target.split(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        lib = entry.requires or module_name
        raise MissingDependencyError(f"tuner {name} needs {lib}, which is not installed ({exc})") from exc
    cls = getattr(module, attr)
    return cls(**{**entry.kwargs, **overrides})


@cache
def _load_builtin_tuners() -> None:
    # The table lives with the adapters; importing it imports no tuning library.
    importlib.import_module("tuner_adapters.catalogue")


# -- datasets ------------------------------------------------------------------
def results_dir() -> Path:
    """Where recorded datasets live (``BAT_RESULTS`` overrides the repository's ``results/``)."""
    env = os.environ.get("BAT_RESULTS")
    return Path(env) if env else Path(__file__).resolve().parents[1] / "results"


@dataclass(frozen=True)
class DatasetEntry:
    path: Path
    meta: DatasetMeta

    @property
    def key(self) -> tuple[str, str]:
        return (self.meta.benchmark, self.meta.gpu)


def dataset_entries(root: Path | None = None) -> list[DatasetEntry]:
    """Every dataset under ``root`` (default: ``results_dir()``), sorted by benchmark and GPU."""
    root = root or results_dir()
    entries = [DatasetEntry(p, Dataset.read_meta(p)) for p in sorted(root.rglob("*.parquet"))]
    return sorted(entries, key=lambda e: e.key)


def gpus_for(benchmark: str, root: Path | None = None) -> list[str]:
    return [e.meta.gpu for e in dataset_entries(root) if e.meta.benchmark == benchmark]


def find_dataset(benchmark: str, gpu: str | None = None, root: Path | None = None) -> DatasetEntry:
    """The dataset of ``benchmark`` on ``gpu`` (default: DEFAULT_GPU, else the first one)."""
    entries = [e for e in dataset_entries(root) if e.meta.benchmark == benchmark]
    if not entries:
        have = sorted({e.meta.benchmark for e in dataset_entries(root)})
        raise DatasetError(
            f"no recorded dataset for benchmark {benchmark!r} in {root or results_dir()}; "
            f"benchmarks with data: {', '.join(have) or '(none)'}"
        )
    gpus = [e.meta.gpu for e in entries]
    if gpu is None:
        gpu = DEFAULT_GPU if DEFAULT_GPU in gpus else gpus[0]
    for e in entries:
        if e.meta.gpu == gpu:
            return e
    raise UnknownNameError(f"GPU for {benchmark}", gpu, gpus)
