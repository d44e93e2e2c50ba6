"""Shared data for the analysis tests: published BAT 2.0 datasets imported from ../shared."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from analysis.data import BenchmarkData
from bat.importers import import_file

BAT2 = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "bat2-kerneltuner"
GPU_FILES = ("RTX_2080_Ti", "RTX_3060_laptop", "RTX_3090", "RTX_Titan")


@cache
def _load(benchmark: str, gpus: tuple[str, ...]) -> BenchmarkData:
    datasets, space = {}, None
    for g in gpus:
        imported = import_file(BAT2 / f"{benchmark}_{g}.json.gz")
        datasets[imported.dataset.meta.gpu] = imported.dataset
        space = imported.space
    return BenchmarkData(benchmark, space, datasets)


def bat2(benchmark: str, gpus: tuple[str, ...] = GPU_FILES) -> BenchmarkData:
    """The published datasets of ``benchmark`` (cached for the session), or a visible skip."""
    if not BAT2.exists():
        pytest.skip(f"published data not found at {BAT2} (it lies beside the checkout in ../shared)")
    return _load(benchmark, gpus)
