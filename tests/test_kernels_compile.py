"""Every benchmark kernel compiles for sm_90 with NVRTC over a stratified sample of its space.

No GPU is needed: NVRTC builds a cubin, so ptxas runs and reports registers,
shared memory, stack frame and spills (parsed by bat.toolchain.resources). The sample
covers every value of every parameter, every combination of the small
(flag-like) parameters, the smallest and largest blocks and the largest code, and random
valid configurations up to 16 per benchmark (CI's time: the coverage above is what
the sample is for, reached by a greedy cover that spends the least code on it).
Compiles run in a process pool.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import ProcessPoolExecutor
from functools import cache

import numpy as np
import pytest

from bat.core.benchmark import load_benchmark
from bat.core.space import SearchSpace
from bat.toolchain.resources import parse_ptxas_log, usage_of

BENCHMARKS = ["gemm", "nbody", "hotspot", "pnpoly", "convolution", "expdist", "dedispersion"]
PER_BENCHMARK = 16
POOL = 4000
STATIC_SHARED_LIMIT = 49152
FLAGS = {  # parameters that switch code paths: every combination is compiled
    "gemm": ["SA", "SB"],
    "nbody": ["use_soa", "local_mem", "vector_type"],
    "hotspot": ["sh_power", "blocks_per_sm"],
    "pnpoly": ["between_method", "use_method"],
    "convolution": ["use_padding", "read_only"],
    "expdist": ["use_shared_mem", "use_column"],
    "dedispersion": ["tile_stride_x", "tile_stride_y"],
}

STORED_LOG = """\
ptxas warning : Value of threads per SM for entry k is out of range. .minnctapersm will be ignored
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'big' for 'sm_90'
ptxas info    : Function properties for big
ptxas         .     24 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads
ptxas info    : Used 12 registers, used 1 barriers, 80000 bytes smem, 368 bytes cmem[0]
ptxas info    : Compile time = 7.977 ms
ptxas info    : Compiling entry function 'k' for 'sm_90'
ptxas info    : Function properties for k
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 32 registers
"""


def test_parse_stored_ptxas_log() -> None:
    usages = parse_ptxas_log(STORED_LOG)
    assert set(usages) == {"big", "k"}
    big = usages["big"]
    assert (big.registers, big.shared_bytes, big.local_bytes) == (12, 80000, 24)
    assert (big.spill_stores_bytes, big.spill_loads_bytes, big.barriers) == (8, 12, 1)
    assert big.constant_bytes == 368 and big.arch == "sm_90"
    assert usages["k"].registers == 32 and usages["k"].shared_bytes == 0
    assert usage_of(STORED_LOG, "k") == usages["k"]
    from bat.core.errors import BackendError

    with pytest.raises(BackendError, match="missing"):
        usage_of(STORED_LOG, "missing")


def is_code_size(name: str) -> bool:
    """A parameter that multiplies the code the compiler emits (a tile size or an unroll factor)."""
    return "tile_size" in name or "unroll" in name or name in ("MWG", "NWG")


def code_size(config: dict) -> int:
    """A proxy for compile time: the product of the tile sizes and unroll factors."""
    return int(np.prod([max(int(v), 1) for k, v in config.items() if is_code_size(k)]))


def lowered(space: SearchSpace, row: np.ndarray, keep: str) -> np.ndarray:
    """``row`` with every code-size parameter but ``keep`` at its smallest value that keeps it valid."""
    row = row.copy()
    for j, param in enumerate(space.parameters):
        if param.name == keep or not is_code_size(param.name):
            continue
        trials = np.repeat(row[None, :], len(param.values), axis=0)
        trials[:, j] = np.argsort(param.values)  # smallest value first
        row = trials[int(np.argmax(space.is_valid(trials)))]  # the row itself is valid: one trial is
    return row


def stratified_sample(name: str, rng: np.random.Generator) -> list[dict]:
    """Configurations covering every value, every flag combination and the extremes.

    Extremes: the fewest and the most threads per block (of those, the least code) and the
    largest code (tiles x unroll factors; of that, the most threads), from a uniform pool of
    valid configurations. Every value of every parameter and every combination of the flags
    that the pool holds is then covered greedily: the target whose cheapest configuration has
    the most code goes first, and among its configurations of that least code, the one that
    covers the most targets still open. Candidates are the pool and, for each value of a tile size or an unroll
    factor, the pool's smallest-code configuration with that value, its other tile sizes
    and unroll factors lowered (NVRTC's time grows faster than the code: unrolling
    Dedispersion's channel loop 768 times takes 5 CPU s with one sample per thread and
    32 with three). Uniform configurations fill the sample up to PER_BENCHMARK.
    """
    bench = load_benchmark(name)
    space = bench.space
    rows = space.sample_valid(min(POOL, space.count_valid()), rng)
    threads = np.array([int(np.prod(bench.geometry(space.config(r))[1])) for r in rows])
    sizes = np.array([code_size(space.config(r)) for r in rows])
    # the fewest and the most threads (of those, the least code), the most code (of that, the most threads:
    # the largest shared-memory tiles, over the 48 KiB limit in Convolution's space)
    extremes = [int(np.lexsort((sizes, threads))[0]), int(np.lexsort((sizes, -threads))[0]),
                int(np.lexsort((-threads, -sizes))[0])]
    variants = []
    for j, param in enumerate(space.parameters):
        if is_code_size(param.name):
            for v in np.unique(rows[:, j]):
                hits = np.flatnonzero(rows[:, j] == v)
                variants.append(lowered(space, rows[hits[np.argmin(sizes[hits])]], param.name))
    candidates = np.unique(np.concatenate([rows, *(v[None, :] for v in variants)]), axis=0)
    cost = np.array([code_size(space.config(r)) for r in candidates])
    flags = [space.names.index(f) for f in FLAGS[name]]
    targets = [(j, v) for j in range(len(space.names)) for v in np.unique(rows[:, j])]
    covers = np.stack([candidates[:, j] == v for j, v in targets], axis=1)
    combos = np.unique(rows[:, flags], axis=0)  # the flag combinations the pool holds
    covers = np.concatenate([covers, (candidates[:, None, flags] == combos[None]).all(axis=2)], axis=1)
    chosen = [candidates.tolist().index(rows[i].tolist()) for i in extremes]
    open_ = ~covers[chosen].any(axis=0)
    while open_.any():
        least = np.where(covers[:, open_], cost[:, None], np.iinfo(np.int64).max).min(axis=0)
        target = np.flatnonzero(open_)[int(np.argmax(least))]
        among = np.flatnonzero(covers[:, target] & (cost == least.max()))
        pick = int(among[np.argmax(covers[among][:, open_].sum(axis=1))])
        chosen.append(pick)
        open_ &= ~covers[pick]
    sample = [candidates[i] for i in dict.fromkeys(chosen)]
    seen = {tuple(r) for r in sample}
    rest = [rows[i] for i in rng.permutation(len(rows)) if tuple(rows[i]) not in seen]
    sample += rest[: max(0, PER_BENCHMARK - len(sample))]
    return [dict(space.config(r)) for r in sample]


def _compile(job: tuple[str, dict]) -> tuple[str, dict, bool, str, dict, float]:
    from bat.core.kernel import load_runner
    from bat.toolchain.nvrtc import compile_config

    name, config = job
    result = compile_config(load_runner(name), config)
    usage = {k: u.as_columns() for k, u in (result.usage or {}).items()}
    return name, config, result.ok, result.log, usage, result.seconds


@cache
def compiled() -> tuple[dict[str, list], float]:
    pytest.importorskip("cuda.bindings.nvrtc", reason="cuda-bindings (the 'nvrtc' extra) absent")
    rng = np.random.default_rng(20240611)
    jobs = [(name, c) for name in BENCHMARKS for c in stratified_sample(name, rng)]
    jobs.sort(key=lambda job: -code_size(job[1]))  # the longest compiles first: none is left to run alone
    start = time.perf_counter()
    workers = max(1, min(8, os.cpu_count() or 1))
    with ProcessPoolExecutor(workers) as pool:
        results = list(pool.map(_compile, jobs, chunksize=1))
    elapsed = time.perf_counter() - start
    by_name: dict[str, list] = {name: [] for name in BENCHMARKS}
    for name, *rest in results:
        by_name[name].append(rest)
    return by_name, elapsed


def expected_shared(name: str, c: dict) -> int | None:
    """Static shared memory each kernel declares (None: not checked for that benchmark)."""
    if name == "gemm":
        return 4 * c["KWG"] * (c["MWG"] * c["SA"] + c["NWG"] * c["SB"])
    if name == "hotspot":
        t = c["temporal_tiling_factor"]
        width = c["block_size_x"] * c["tile_size_x"] + 2 * t
        return (2 + c["sh_power"]) * 4 * width * (c["block_size_y"] * c["tile_size_y"] + 2 * t)
    if name == "convolution":
        rows = c["block_size_y"] * c["tile_size_y"] + c["filter_height"] - 1
        cols = c["block_size_x"] * c["tile_size_x"] + c["filter_width"] - 1 + c["use_padding"]
        return 4 * rows * cols
    if name == "expdist":
        bx, by = c["block_size_x"], c["block_size_y"]
        tiles = (by * c["tile_size_y"] if c["use_shared_mem"] >= 1 else 0) + (
            bx * c["tile_size_x"] if c["use_shared_mem"] == 2 else 0)
        return 8 * bx * by + 24 * tiles
    if name == "nbody":
        return 16 * c["block_size"] * c["local_mem"]
    return 0


@pytest.mark.slow
@pytest.mark.parametrize("name", BENCHMARKS)
def test_sampled_configurations_compile(name: str) -> None:
    by_name, _ = compiled()
    results = by_name[name]
    assert len(results) >= PER_BENCHMARK
    kernel = load_benchmark(name).kernel["name"]
    for config, ok, log, usage, _ in results:
        shared = expected_shared(name, config)
        if shared is not None and shared > STATIC_SHARED_LIMIT:
            # only convolution's space (the published keys) holds tiles over 48 KiB
            assert name == "convolution", (config, shared)
            assert not ok and "too much shared data" in log, config
            continue
        assert ok, f"{name} {config} failed to compile:\n{log[-2000:]}"
        main = usage[kernel]
        assert main["registers"] > 0, config
        assert main["shared_bytes"] == shared, (config, main)
        assert main["spill_loads_bytes"] >= 0 and main["local_bytes"] >= 0


@pytest.mark.slow
def test_compile_sample_covers_failures_and_reports_time() -> None:
    by_name, elapsed = compiled()
    conv = by_name["convolution"]
    assert any(not ok for _, ok, *_ in conv), "the sample should include an over-sized tile"
    assert any(ok for _, ok, *_ in conv)
    total = sum(len(v) for v in by_name.values())
    compile_s = sum(r[-1] for v in by_name.values() for r in v)
    print(f"compiled {total} configurations in {elapsed:.1f} s wall ({compile_s:.1f} s NVRTC)")


def test_inspect_config_reports_usage() -> None:
    pytest.importorskip("cuda.bindings.nvrtc", reason="cuda-bindings (the 'nvrtc' extra) absent")
    from bat.core.errors import BackendError
    from bat.core.kernel import load_runner
    from bat.toolchain.nvrtc import inspect_config

    config = {"between_method": 0, "block_size_x": 256, "tile_size": 4, "use_method": 1}
    usage = inspect_config(load_runner("pnpoly"), config, size={"n_points": 1000, "n_vertices": 600})
    assert usage.kernel == "pnpoly_kernel" and usage.registers > 0 and usage.arch == "sm_90"
    big = {"block_size_x": 128, "block_size_y": 8, "filter_height": 15, "filter_width": 15,
           "read_only": 0, "tile_size_x": 3, "tile_size_y": 3, "use_padding": 0}
    with pytest.raises(BackendError, match="too much shared data"):
        inspect_config(load_runner("convolution"), big)
