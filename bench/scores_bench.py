"""Benchmark of the exact random-search forms and of what the new report steps cost; not a test.

1. Convergence of random search on one dataset at the METHODS.md budgets:
   the exact median and mean with the exact band (``bat.analysis.convergence``)
   against the Monte-Carlo estimate the spec describes (100 repeated random
   searches), in the same process; prints both times, the ratio and the
   largest difference between the Monte-Carlo median and the exact one.
2. The hypergeometric "none of the k best drawn" vector for every k:
   ``bat.analysis.convergence.none_drawn`` (gammaln) against
   ``scipy.stats.hypergeom.pmf``; both times, the ratio, the largest difference.
3. ``analyze_benchmark`` (no CatBoost) on one benchmark: wall time per step
   (from its progress callback), so the share of the data checks, the
   noise-aware optimum and the exact convergence under both definitions shows.

Usage: python bench/scores_bench.py DATASET.parquet BENCHMARK
"""

from __future__ import annotations

import platform
import sys
import time
from pathlib import Path
from tempfile import TemporaryDirectory

import numpy as np


def convergence(path: str) -> None:
    from bat.analysis.convergence import default_budgets, random_search_curve, sampled_random_relative_performance
    from bat.analysis.data import ok_times
    from bat.core.dataset import Dataset

    times = ok_times(Dataset.load(path))
    budgets = default_budgets(len(times))
    random_search_curve(times, budgets)  # imports and first-call costs out of the timing
    t0 = time.perf_counter()
    median = random_search_curve(times, budgets, "median")
    random_search_curve(times, budgets, "mean")
    t_exact = time.perf_counter() - t0
    t0 = time.perf_counter()
    mc = sampled_random_relative_performance(times, budgets, 100, np.random.default_rng(0))
    t_mc = time.perf_counter() - t0
    diff = np.abs(np.median(mc, axis=0) - np.array(median.centre)).max()
    print(f"convergence, {len(times)} ok configurations, {len(budgets)} budgets ({path})")
    print(f"  exact median + mean + band: {t_exact:.3f} s; Monte-Carlo, 100 searches: {t_mc:.3f} s; "
          f"ratio {t_mc / t_exact:.1f}x; max |MC median - exact median| {diff:.3f}")


def hypergeometric(n_total: int = 17956, draws: int = 100) -> None:
    from scipy.stats import hypergeom

    from bat.analysis.convergence import none_drawn

    k = np.arange(n_total + 1)
    none_drawn(10, k[:5], 2)
    t0 = time.perf_counter()
    ours = none_drawn(n_total, k, draws)
    t_ours = time.perf_counter() - t0
    t0 = time.perf_counter()
    theirs = hypergeom.pmf(0, n_total, k, draws)
    t_scipy = time.perf_counter() - t0
    print(f"none of the k best drawn, k = 0..{n_total}, {draws} draws")
    print(f"  gammaln: {t_ours * 1e3:.2f} ms; scipy.stats.hypergeom.pmf: {t_scipy * 1e3:.1f} ms; "
          f"ratio {t_scipy / t_ours:.0f}x; max |difference| {np.abs(ours - theirs).max():.1e}")


def report_steps(benchmark: str) -> None:
    from bat.analysis.data import load_benchmark_data
    from bat.analysis.report import AnalyzeSettings, analyze_benchmark

    data = load_benchmark_data(benchmark)
    marks: list[tuple[str, float]] = []
    with TemporaryDirectory() as tmp:
        start = time.perf_counter()
        analyze_benchmark(data, AnalyzeSettings(importance=False), Path(tmp),
                          lambda step, _f: marks.append((step, time.perf_counter())))
        total = time.perf_counter() - start
    spent: dict[str, float] = {}
    for (step, t), (_, t_next) in zip(marks, [*marks[1:], ("end", start + total)], strict=True):
        spent[step] = spent.get(step, 0.0) + (t_next - t)
    print(f"analyze_benchmark({benchmark}, {len(data.gpus)} GPUs, no importance): {total:.1f} s")
    for step, s in spent.items():
        print(f"  {step}: {s:.2f} s ({s / total:.0%})")


if __name__ == "__main__":
    print(f"{platform.machine()}, Python {platform.python_version()}, numpy {np.__version__}")
    convergence(sys.argv[1])
    hypergeometric()
    report_steps(sys.argv[2])
