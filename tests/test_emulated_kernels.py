"""Every kernel run on the CPU under AddressSanitizer + UBSan, on the configurations CI checks.

For each of the nine kernels, bat.backends.emulated.selection picks the first valid
configuration, the fewest and the most threads per block, the largest tiling and one
configuration per code-path combination, each one a GPU would accept (NVRTC for sm_90 and
the launch limits, when cuda-bindings is installed); each is built with the host compiler
against the CUDA compatibility header, run at its edge size (the emulation problem size grown
to two blocks with a partial last tile in every dimension the kernel tiles,
bat.backends.emulated.edges) with its blocks (and their threads) in forward and in reverse
order, and compared with the NumPy reference.
Executables are cached by source hash (bat.backends.emulated.build), so a second run only
emulates. The wider check (TSan, random samples) is ``bat verify``; see the README.
"""

from __future__ import annotations

import math

import pytest

from bat.backends.emulated.edges import EdgeSessions
from bat.backends.emulated.selection import ci_selection
from bat.core.benchmark import load_benchmark

BENCHMARKS = ["gemm", "nbody", "hotspot", "pnpoly", "convolution", "expdist", "dedispersion", "convolution_milo",
              "dedispersion_milo"]


#: over 10 CPU seconds with a cold build cache (bench/slow_marks.py, tests/cpu_seconds.json): marked slow
SLOW_SELECTIONS = {"nbody"}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW_SELECTIONS else n
                                  for n in BENCHMARKS])
def test_ci_selection_is_correct_under_sanitizers(name: str) -> None:
    bench = load_benchmark(name)
    sessions = EdgeSessions(bench, bench.size("emulation"))
    selection = ci_selection(bench, sessions.base, accept=sessions.gpu_accepts)
    whys = [item.why for item in selection]
    assert whys[0] == "first valid configuration" and len(selection) >= 4
    assert any(w.startswith("code path") for w in whys)
    failures, ran = [], 0
    for item in selection:
        edge, checked = sessions.verify(item.config)
        assert edge.two_blocks, (item.why, edge.describe())
        if checked.refused and item.why == "first valid configuration":
            continue  # a GPU would not run it either; every other pick was chosen among accepted ones
        ran += 1
        if not checked.ok:
            failures.append(f"{item.why} {item.config}: {checked.result.status.value}: {checked.result.message}")
        else:
            assert checked.error_ratio is not None and checked.error_ratio <= 1.0
            assert checked.result.objective_ms is None and not checked.result.times_ms  # never a timing
    assert not failures, "\n".join(failures)
    assert ran >= 4


@pytest.mark.parametrize("name", BENCHMARKS)
def test_emulation_size_runs_two_blocks_with_partial_edges(name: str) -> None:
    bench = load_benchmark(name)
    size = bench.size("emulation")
    assert set(bench.raw["emulation_problem_size"]) <= set(bench.problem_size)
    for item in ci_selection(bench, size):
        grid, _ = bench.geometry(item.config, dict(size.values))
        assert math.prod(grid) >= 2, (item.why, item.config, grid)


def test_selection_covers_every_allowed_code_path_and_the_extremes() -> None:
    bench = load_benchmark("nbody")
    selection = ci_selection(bench)
    combos = {(c.config["use_soa"], c.config["local_mem"], c.config["vector_type"]) for c in selection}
    allowed = {(soa, mem, vt) for soa in (0, 1) for mem in (0, 1) for vt in (1, 2, 4) if soa == 1 or vt == 1}
    assert combos == allowed  # use_soa = 0 reads one float4 per body: vector_type 1 only
    blocks = [c.config["block_size"] for c in selection]
    assert min(blocks) == 64 and max(blocks) == 512
    assert max(c.config["outer_unroll_factor"] for c in selection) == 8
