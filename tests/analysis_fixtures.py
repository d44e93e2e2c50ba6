"""Shared data for the analysis tests: the BAT 2.0 datasets shipped in results/ (cached per session)."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from bat.analysis.data import BenchmarkData, load_benchmark_data

RESULTS = Path(__file__).resolve().parents[1] / "results" / "bat2-kerneltuner"
GPU_FILES = ("RTX_2080_Ti", "RTX_3060_laptop", "RTX_3090", "RTX_Titan")


@cache
def bat2(benchmark: str, gpus: tuple[str, ...] = GPU_FILES) -> BenchmarkData:
    """The shipped datasets of ``benchmark`` on ``gpus`` (a missing one fails: it is in the repository)."""
    return load_benchmark_data(benchmark, list(gpus), root=RESULTS)
