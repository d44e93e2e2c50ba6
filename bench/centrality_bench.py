"""Benchmark of the FFG + PageRank engine (bat.analysis.ffg); not a test.

``gemm``: proportion-of-centrality PageRank of the full GEMM product
(82,944 nodes, published definition) with ``bat.analysis.ffg`` against the
straightforward networkx build plus ``nx.pagerank`` (bat.analysis.ffg_reference)
in the same run; prints both times, the ratio and the largest difference.

``large``: PageRank on Hotspot's full product (2.22e7 nodes). There is no
Hotspot data, so the fitness is a deterministic analytic stand-in (a smooth
function of the value indices; constraint violations get 1e10): it measures
the time and memory of the graph algorithm only and is not a performance
landscape. Prints wall time per stage and the peak resident memory.

Usage: python bench/centrality_bench.py gemm DATASET.parquet
       python bench/centrality_bench.py large
"""

from __future__ import annotations

import platform
import resource
import sys
import time

import numpy as np

from bat.analysis.centrality import INVALID_FITNESS, build_graph, fitness_array, local_minima
from bat.analysis.ffg import FitnessFlowGraph
from bat.analysis.ffg_reference import reference_pagerank
from bat.core.benchmark import load_benchmark
from bat.core.dataset import Dataset


def peak_rss_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # Linux: KiB


def bench_gemm(dataset_path: str) -> None:
    space = load_benchmark("gemm").space
    fitness = fitness_array(Dataset.load(dataset_path), space)
    t0 = time.perf_counter()
    fast = FitnessFlowGraph(fitness).pagerank()
    t_fast = time.perf_counter() - t0
    t0 = time.perf_counter()
    slow = reference_pagerank(fitness)
    t_ref = time.perf_counter() - t0
    print(f"gemm full product: {fitness.size} nodes ({dataset_path})")
    print(f"bat.analysis.ffg: {t_fast:.3f} s; networkx build + nx.pagerank: {t_ref:.3f} s; "
          f"ratio {t_ref / t_fast:.1f}x; max |difference| {np.abs(fast - slow).max():.2e}")


def stand_in_fitness(space) -> np.ndarray:
    """Deterministic analytic stand-in (NOT measured data): a bowl with ripples over value indices."""
    fitness = np.empty(space.cardinality)
    chunk = 1 << 21
    centre = (space.radices - 1) / 3.0
    for start in range(0, space.cardinality, chunk):
        ids = np.arange(start, min(start + chunk, space.cardinality))
        idx = space.from_ids(ids)
        u = (idx - centre) / space.radices
        f = 1.0 + (u ** 2).sum(axis=1) + 0.05 * np.cos(3.0 * idx).sum(axis=1)
        fitness[ids] = np.where(space.is_valid(idx), f, INVALID_FITNESS)
    return fitness.reshape(tuple(int(r) for r in space.radices))


def bench_large() -> None:
    space = load_benchmark("hotspot").space
    t0 = time.perf_counter()
    fitness = stand_in_fitness(space)
    t_fit = time.perf_counter() - t0
    t0 = time.perf_counter()
    graph = build_graph(fitness)
    t_graph = time.perf_counter() - t0
    minima = local_minima(graph)
    print(f"hotspot full product: {fitness.size} nodes, {graph.n_edges} edges, "
          f"{int(minima.sum())} local minima; stand-in fitness {t_fit:.1f} s; graph {t_graph:.1f} s")
    # networkx stops when the L1 change < N * tol: at N = 2.2e7 that is one step; the second
    # run asks for an L1 change below 1e-6 in total (tol = 1e-6 / N).
    for label, tol in (("networkx rule, tol 1e-6", 1e-6), ("L1 change < 1e-6", 1e-6 / fitness.size)):
        t0 = time.perf_counter()
        iterations: list[int] = []
        rank = graph.pagerank(tol=tol, max_iter=300, progress=iterations.append)
        t_pr = time.perf_counter() - t0
        print(f"PageRank ({label}): {t_pr:.1f} s, {len(iterations)} iterations, sum {rank.sum():.6f}, "
              f"mass on minima {rank[minima].sum():.4f}; peak RSS so far {peak_rss_gb():.2f} GB")


if __name__ == "__main__":
    print(f"{platform.machine()} {platform.python_version()} numpy {np.__version__}")
    if sys.argv[1:2] == ["gemm"]:
        bench_gemm(sys.argv[2])
    elif sys.argv[1:2] == ["large"]:
        bench_large()
    else:
        sys.exit(__doc__)
