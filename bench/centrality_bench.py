"""Benchmark of proportion-of-centrality PageRank on every shipped space; not a test.

Each measurement runs in a fresh Python process (whole-process wall time,
CPU time and peak RSS, interpreter and fitness included) and prints one
Markdown table row:

- ``ours l1``: ``bat.analysis.centrality.proportion_of_centrality`` under the
  default rule (L1 residual <= 1e-9; compiled product-FFG solver);
- ``ours networkx rule``: the same under the paper's rule (NumPy power
  iteration, ``bat.analysis.ffg``), spaces up to 10^5 points;
- ``networkx``: the networkx DiGraph built node by node plus
  ``nx.pagerank`` to an L1 change below 1e-9 (tol = 1e-9 / N), spaces up to
  10^5 points, with the largest relative difference from ``ours l1`` (that
  process also runs ``ours l1`` for the comparison, after the timed part).

Fitness: the shipped measurements (RTX 3090; coulomb: RTX 2080 Ti) where
the repository has data; elsewhere (expdist, hotspot, dedispersion, nbody,
matmul_c) a deterministic analytic stand-in, NOT measured data: a bowl with
ripples over the value indices, 1e10 where a constraint is violated. It
measures the graph algorithm only and says nothing about those kernels.

``dask SPACE``: the l1 proportion of centrality of a product through
``proportion_of_centrality_dask`` on a LocalCluster of 2 single-thread
workers in this process (slabs of 8 leading-parameter rows), beside the
single-machine solver in the same process, with their largest difference.

Usage: python bench/centrality_bench.py all          (every space, every engine)
       python bench/centrality_bench.py one SPACE ENGINE
       python bench/centrality_bench.py dask SPACE
"""

from __future__ import annotations

import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from bat.core.space import SearchSpace

ROOT = Path(__file__).resolve().parents[1]
MEASURED = {"gemm": "RTX_3090", "convolution": "RTX_3090", "pnpoly": "RTX_3090", "coulomb": "RTX_2080_Ti"}
SPACES = ("pnpoly", "coulomb", "matmul_c", "nbody", "convolution", "gemm", "expdist", "hotspot", "dedispersion")
ENGINES = ("ours l1", "ours networkx rule", "networkx")
NETWORKX_LIMIT = 100_000


def stand_in_fitness(space: SearchSpace) -> np.ndarray:
    """Deterministic analytic stand-in (NOT measured data): 1 + sum_d u_d^2 + 0.05 sum_d cos(3 i_d),
    u_d = (i_d - (r_d - 1) / 3) / r_d over value indices i_d; 1e10 where a constraint is violated."""
    from bat.analysis.centrality import INVALID_FITNESS

    shape = tuple(int(r) for r in space.radices)
    fitness = np.ones(shape)
    for d, r in enumerate(shape):
        idx = np.arange(r)
        term = ((idx - (r - 1) / 3.0) / r) ** 2 + 0.05 * np.cos(3.0 * idx)
        axes = [1] * len(shape)
        axes[d] = r
        fitness += term.reshape(axes)
    fitness[~space.valid_mask()] = INVALID_FITNESS
    return fitness


def fitness_of(name: str) -> tuple[np.ndarray, str]:
    from bat.analysis.centrality import fitness_array
    from bat.core.benchmark import load_benchmark

    space = load_benchmark(name).space
    if name in MEASURED:
        from bat.analysis.data import load_benchmark_data

        root = ROOT / "results" / ("ktt-coulomb" if name == "coulomb" else "bat2-kerneltuner")
        data = load_benchmark_data(name, [MEASURED[name]], root=root)
        return fitness_array(next(iter(data.datasets.values())), space), f"measured, {MEASURED[name]}"
    return stand_in_fitness(space), "stand-in"


def one(name: str, engine: str) -> dict[str, object]:
    """One measurement, in this process."""
    from bat.analysis.centrality import proportion_of_centrality
    from bat.analysis.pagerank_rule import StopRule

    t0 = time.perf_counter()
    fitness, source = fitness_of(name)
    t_fit = time.perf_counter() - t0
    out: dict[str, object] = {"space": name, "engine": engine, "source": source, "n": int(fitness.size),
                              "fitness_s": t_fit}
    t0 = time.perf_counter()
    if engine == "networkx":
        from bat.analysis.ffg_reference import reference_pagerank

        rank = reference_pagerank(fitness, l1_change=1e-9, max_iter=10_000)
        out["pagerank_s"] = time.perf_counter() - t0
        ours = proportion_of_centrality(fitness).pagerank.rank.reshape(fitness.shape)
        on = rank > 0
        out["max_rel_diff_vs_ours_l1"] = float(np.max(np.abs(ours[on] - rank[on]) / rank[on]))
    else:
        rule = StopRule("l1") if engine == "ours l1" else StopRule("networkx")
        c = proportion_of_centrality(fitness, rule=rule)
        out["pagerank_s"] = time.perf_counter() - t0
        out.update(iterations=c.pagerank.iterations, residual=c.pagerank.residual, n_edges=c.n_edges,
                   proportion_p0=float(c.proportion[0]), proportion_p5=float(c.proportion[5]),
                   mass_on_minima=c.mass_on_minima, error_bound=c.proportion_error_bound(),
                   method=c.pagerank.method)
    out["peak_rss_gb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    return out


def measure(name: str, engine: str) -> dict[str, object]:
    """One measurement in a fresh process: its result plus whole-process wall and CPU time."""
    cache = os.environ.get("PYTHONPYCACHEPREFIX", str(Path(tempfile.gettempdir()) / "bat-bench-pycache"))
    env = {**os.environ, "PYTHONPYCACHEPREFIX": cache}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, __file__, "one", name, engine], capture_output=True, text=True,
                          env=env, cwd=ROOT, check=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    result["process_wall_s"] = wall
    result["process_cpu_s"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return result


def row(r: dict[str, object]) -> str:
    common = (f"| {r['space']} ({r['n']:,}, {r['source']}) | {r['engine']} | {r['process_wall_s']:.1f} s "
              f"(CPU {r['process_cpu_s']:.1f} s; PageRank {r['pagerank_s']:.2f} s) | {r['peak_rss_gb']:.2f} GB |")
    if r["engine"] == "networkx":
        return common + f" - | - | max relative difference from ours l1 {r['max_rel_diff_vs_ours_l1']:.1e} |"
    return common + (f" {r['iterations']} | {r['residual']:.2g} | p=0: {r['proportion_p0']:.4g}, "
                     f"p=0.05: {r['proportion_p5']:.4g} (within {r['error_bound']:.1g}) |")


def main() -> None:
    print(f"{platform.machine()} {platform.python_version()} numpy {np.__version__}, {os.cpu_count()} cores, "
          f"load average before {os.getloadavg()}")
    measure("pnpoly", "ours l1")  # compiles the Numba kernels into their cache: not timed
    print("| space (points, fitness) | engine | whole process (CPU) | peak RSS | iterations | residual | result |")
    print("|---|---|---|---|---|---|---|")
    for name in SPACES:
        from bat.core.benchmark import load_benchmark

        small = load_benchmark(name).space.cardinality <= NETWORKX_LIMIT
        for engine in ENGINES:
            if engine != "ours l1" and not small:
                continue
            print(row(measure(name, engine)), flush=True)
    print(f"load average after {os.getloadavg()}")


def dask_vs_single(name: str) -> None:
    from distributed import Client, LocalCluster

    from bat.analysis.centrality import proportion_of_centrality, proportion_of_centrality_dask

    fitness, source = fitness_of(name)
    print(f"{name}: {fitness.size:,} points ({source}); load average {os.getloadavg()}")
    t0 = time.perf_counter()
    single = proportion_of_centrality(fitness)
    t_single = time.perf_counter() - t0
    with (LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster,
          Client(cluster) as client):
        t0 = time.perf_counter()
        dask = proportion_of_centrality_dask(client, lambda lo, hi: fitness[lo:hi], fitness.shape, n_slabs=8)
        t_dask = time.perf_counter() - t0
    diff = float(np.abs(dask.proportion - single.proportion).max())
    print(f"single machine: {t_single:.1f} s, {single.pagerank.iterations} sweeps, residual "
          f"{single.pagerank.residual:.2g}; Dask LocalCluster (2 workers, 8 slabs): {t_dask:.1f} s, "
          f"{dask.pagerank.iterations} sweeps, residual {dask.pagerank.residual:.2g}; largest difference of the "
          f"proportions {diff:.1e}; peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20:.2f} GB")


if __name__ == "__main__":
    if sys.argv[1:2] == ["all"]:
        main()
    elif sys.argv[1:2] == ["dask"] and len(sys.argv) == 3:
        dask_vs_single(sys.argv[2])
    elif sys.argv[1:2] == ["one"] and len(sys.argv) == 4:
        print(json.dumps(one(sys.argv[2], sys.argv[3])))
    else:
        sys.exit(__doc__)
