"""Run sampled configurations of every kernel on a GPU with CuPy and check them against NumPy.

Skipped (with the reason shown) unless CuPy imports and a CUDA device is present.
Written against the runner contract (bat/kernel.py), with the same compile
options as the NVRTC checks (bat.nvrtc.macro_options), at the small problem size.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from bat.benchmark import load_benchmark
from bat.kernel import KernelRunner, load_runner
from bat.nvrtc import DEFAULT_OPTIONS, macro_options

BENCHMARKS = ["gemm", "nbody", "hotspot", "pnpoly", "convolution", "expdist", "dedispersion"]
PER_BENCHMARK = 12


def _cupy():
    try:
        import cupy
    except ImportError as exc:
        pytest.skip(f"CuPy is not installed ({exc})")
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            pytest.skip("no CUDA device")
    except cupy.cuda.runtime.CUDARuntimeError as exc:
        pytest.skip(f"no usable CUDA device ({exc})")
    return cupy


def run_once(cp, runner: KernelRunner, source: str, config: dict, size: dict,
             host: dict[str, np.ndarray]) -> dict[str, np.ndarray] | str:
    """Compile, launch every launch of one run, and return the outputs (or why it failed)."""
    options = (*DEFAULT_OPTIONS, *macro_options(runner.macros(config, size)))
    try:
        module = cp.RawModule(code=source, options=options)
        module.compile()
    except cp.cuda.compiler.CompileException as exc:
        return f"compile error: {str(exc).splitlines()[0]}"
    device = {k: cp.asarray(v) for k, v in host.items() if k not in runner.symbol_names()}
    for name in runner.symbol_names():
        symbol = module.get_global(name)
        data = np.ascontiguousarray(host[name])
        symbol.copy_from_host(data.ctypes.data, data.nbytes)
    for launch in runner.launches(config, size):
        args = [device[a] if isinstance(a, str) else a[1] for a in launch.args]
        module.get_function(launch.kernel)(launch.grid, launch.block, tuple(args),
                                           shared_mem=launch.shared_bytes)
    cp.cuda.Device().synchronize()
    return {k: cp.asnumpy(device[k]) for k in runner.output_names()}


@pytest.mark.gpu
@pytest.mark.parametrize("name", BENCHMARKS)
def test_sampled_configurations_are_correct_on_gpu(name: str) -> None:
    cp = _cupy()
    bench = load_benchmark(name)
    runner = load_runner(name)
    size = dict(bench.small_problem_size)
    source = (Path(bench.directory) / bench.kernel["source"]).read_text()
    host = runner.make_inputs(size, 1)
    reference = runner.reference(host, size)
    rng = np.random.default_rng(7)
    idx = bench.space.sample_valid(min(PER_BENCHMARK, bench.space.count_valid()), rng)
    failures = []
    for row in idx:
        config = {k: v.item() if hasattr(v, "item") else v
                  for k, v in bench.space.config(row).items()}
        outputs = run_once(cp, runner, source, config, size, host)
        if isinstance(outputs, str):
            if name == "convolution" and "shared data" in outputs:
                continue  # over-sized tiles are data in this space
            failures.append((config, outputs))
            continue
        check = runner.verify(outputs, reference)
        if not check:
            failures.append((config, check.message))
    assert not failures, failures
