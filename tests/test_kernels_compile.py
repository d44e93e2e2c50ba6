"""Every benchmark kernel compiles for sm_90 with NVRTC over a stratified sample of its space.

No GPU is needed: NVRTC builds a cubin, so ptxas runs and reports registers,
shared memory, stack frame and spills (parsed by bat.toolchain.resources). The sample
covers every value of every parameter, every combination of the small
(flag-like) parameters, the smallest and largest blocks, and random valid
configurations up to 16 per benchmark (CI's time: the coverage above is what
the sample is for). Compiles run in a process pool.
"""

from __future__ import annotations

import itertools
import os
import time
from concurrent.futures import ProcessPoolExecutor
from functools import cache

import numpy as np
import pytest

from bat.core.benchmark import load_benchmark
from bat.toolchain.resources import parse_ptxas_log, usage_of

BENCHMARKS = ["gemm", "nbody", "hotspot", "pnpoly", "convolution", "expdist", "dedispersion"]
PER_BENCHMARK = 16
POOL = 4000
STATIC_SHARED_LIMIT = 49152
#: one xdist worker runs every test that reads compiled() (--dist loadgroup), so the sample compiles once
pytestmark = pytest.mark.xdist_group("nvrtc")
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


def code_size(config: dict) -> int:
    """A proxy for compile time: the product of the tile sizes and unroll factors."""
    sizes = [max(int(v), 1) for k, v in config.items()
             if "tile_size" in k or "unroll" in k or k in ("MWG", "NWG")]
    return int(np.prod(sizes))


def stratified_sample(name: str, rng: np.random.Generator) -> list[dict]:
    """Configurations covering every value, every flag combination and the extremes.

    Extremes: the fewest and the most threads per block and the largest code
    (tiles x unroll factors). Value and flag coverage take the smallest-code
    configuration that has the value, so the sample compiles in CI time; the
    rest is uniform.
    """
    bench = load_benchmark(name)
    space = bench.space
    pool = space.decode(space.sample_valid(min(POOL, space.count_valid()), rng))
    pool = [{k: v.item() if hasattr(v, "item") else v for k, v in c.items()}
            for c in pool.to_dict("records")]
    sizes = np.array([code_size(c) for c in pool])
    threads = [int(np.prod(bench.geometry(c)[1])) for c in pool]
    chosen = [int(np.argmin(threads)), int(np.argmax(threads)), int(np.argmax(sizes))]

    def cheapest(match) -> None:
        hits = [i for i, c in enumerate(pool) if match(c)]
        if hits and not any(match(pool[i]) for i in chosen):
            chosen.append(min(hits, key=lambda i: (sizes[i], rng.random())))

    for param in space.parameters:
        for value in param.values:
            cheapest(lambda c, k=param.name, v=value: c[k] == v)
    flags = FLAGS[name]
    for combo in itertools.product(*(space.parameters[space.names.index(f)].values
                                     for f in flags)):
        want = dict(zip(flags, combo, strict=True))
        cheapest(lambda c, want=want: all(c[k] == v for k, v in want.items()))
    rest = [int(i) for i in rng.permutation(len(pool)) if i not in chosen]
    chosen += rest[: max(0, PER_BENCHMARK - len(chosen))]
    return [pool[i] for i in dict.fromkeys(chosen)]


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
