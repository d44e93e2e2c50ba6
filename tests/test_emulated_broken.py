"""Deliberately broken kernels are caught: emulated checks that can fail, and do.

Each variant edits the text of a benchmark's kernel source (a barrier removed, a bounds
guard removed, an output left unwritten, a barrier put where not every thread reaches
it) and runs one valid configuration on the CPU under AddressSanitizer + UBSan, in two
block orders, against the reference. Every variant must be reported, and the report
must say what went wrong: a sanitizer's finding, a poisoned (unwritten) element, outputs
that depend on the order blocks run in, or a misused barrier naming the kernel.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field

import pytest
from kernel_configs import CONFIGS

from bat.backends.emulated.session import EmulatedSession
from bat.core.benchmark import load_benchmark
from bat.core.dataset import Status

ORDER = "depends on the order"
OVERFLOW = "heap-buffer-overflow"


@dataclass(frozen=True)
class Broken:
    """``old`` (its ``nth`` occurrence, counting from 1) replaced by ``new`` in a kernel's source."""

    benchmark: str
    what: str
    old: str
    new: str
    status: Status
    says: str
    nth: int = 1
    options: dict = field(default_factory=dict)

    def apply(self, source: str) -> str:
        parts = source.split(self.old)
        assert len(parts) > self.nth, f"{self.benchmark}: {self.old!r} occurs {len(parts) - 1} times"
        return self.old.join(parts[: self.nth]) + self.new + self.old.join(parts[self.nth:])


VARIANTS = [
    Broken("gemm", "barrier after the tile loads removed", "        __syncthreads();\n", "",
           Status.INCORRECT, ORDER),
    Broken("gemm", "result never stored", "                row[mv] = out;\n", "", Status.INCORRECT,
           "elements differ"),
    Broken("gemm", "A tile read one K-tile too far", "alm[kk * (MWG / VWM) + mv] = a_row(a, k0 + kk, m0)[mv];",
           "alm[kk * (MWG / VWM) + mv] = a_row(a, k0 + kk + KWG, m0)[mv];", Status.RUNTIME_ERROR, OVERFLOW),
    Broken("nbody", "barrier after the tile is used removed", "        __syncthreads();\n", "",
           Status.INCORRECT, ORDER, nth=2),
    Broken("nbody", "bodies never moved",
           "pos_out[i] = make_float4(pi[k].x + v.x * dt, pi[k].y + v.y * dt, pi[k].z + v.z * dt,\n"
           "                                 pi[k].w);", "pos_out[i] = pi[k];", Status.INCORRECT, "displacement"),
    Broken("nbody", "tile loop bound one tile too far", "t0 < n_bodies; t0 += block_size",
           "t0 <= n_bodies; t0 += block_size", Status.RUNTIME_ERROR, OVERFLOW),
    Broken("hotspot", "barrier after the loads removed", "    __syncthreads();\n\n    UNROLL", "\n    UNROLL",
           Status.INCORRECT, "got nan"),
    Broken("hotspot", "output column guard removed", "            if (gx >= grid_width) break;\n            temp_dst",
           "            temp_dst", Status.RUNTIME_ERROR, OVERFLOW),
    Broken("pnpoly", "bounds guard removed", "if (i < n_points) bitmap[i] = c[t] & 1;", "bitmap[i] = c[t] & 1;",
           Status.RUNTIME_ERROR, OVERFLOW),
    Broken("pnpoly", "only points inside written", "if (i < n_points) bitmap[i] = c[t] & 1;",
           "if (i < n_points && (c[t] & 1)) bitmap[i] = 1;", Status.INCORRECT, "got -1"),
    Broken("convolution", "barrier after the loads removed", "    __syncthreads();\n", "", Status.INCORRECT, ORDER),
    Broken("convolution", "shared-memory row loop one too far", "lx < SH_W; lx += block_size_x",
           "lx <= SH_W; lx += block_size_x", Status.RUNTIME_ERROR, "out of bounds"),
    Broken("convolution", "output guard removed",
           "if (x < image_width && y < image_height) output[", "output[", Status.RUNTIME_ERROR, OVERFLOW),
    Broken("expdist", "barrier in the block reduction removed",
           "red[tid] += red[tid + half];\n        __syncthreads();", "red[tid] += red[tid + half];",
           Status.INCORRECT, ORDER),
    Broken("expdist", "partial sums of the first column of blocks never written", "if (tid == 0) partial[",
           "if (tid == 0 && blockIdx.x > 0) partial[", Status.INCORRECT, "got nan"),
    Broken("expdist", "barrier only in the threads that add",
           "if (tid % (2 * half) == 0 && tid + half < THREADS) red[tid] += red[tid + half];\n        __syncthreads();",
           "if (tid % (2 * half) == 0 && tid + half < THREADS) {\n            red[tid] += red[tid + half];\n"
           "            __syncthreads();\n        }", Status.RUNTIME_ERROR, "returned while thread"),
    Broken("dedispersion", "sample index not clamped", "row[min(sample_of(i), n_samples - 1) + delay]",
           "row[sample_of(i) + delay]", Status.RUNTIME_ERROR, OVERFLOW),
    Broken("dedispersion", "output guard removed", "if (dm < n_dms && s < n_samples) output[", "output[",
           Status.RUNTIME_ERROR, OVERFLOW),
    Broken("dedispersion", "last DM never written", "if (dm < n_dms && s < n_samples) output[",
           "if (dm < n_dms - 1 && s < n_samples) output[", Status.INCORRECT, "got nan"),
    Broken("dedispersion", "every block writes its index to one element (last writer wins)",
           "output[(size_t)dm * n_samples + s] = acc[j][i];",
           "output[(size_t)dm * n_samples + s] = acc[j][i];\n            output[0] = (float)blockIdx.x;",
           Status.INCORRECT, ORDER),
    Broken("convolution_milo", "barrier after the shared-memory loads removed", "    __syncthreads();\n", "",
           Status.INCORRECT, ORDER),
    Broken("convolution_milo", "output guard removed", "if (y < image_height && x < image_width) {", "{",
           Status.RUNTIME_ERROR, OVERFLOW),
    Broken("convolution_milo", "input guard of the shared-memory loads removed",
           "if (y < input_height && x < input_width) {", "{", Status.RUNTIME_ERROR, OVERFLOW),
    Broken("convolution_milo", "shared-memory tile read one row too low",
           "sh_input[ty+yi*block_size_y+i][tx", "sh_input[ty+yi*block_size_y+i+1][tx",
           Status.RUNTIME_ERROR, "out of bounds"),
    Broken("dedispersion_milo", "DM guard removed", "if (dm < nr_dms) {", "{", Status.RUNTIME_ERROR, OVERFLOW, nth=2),
    Broken("dedispersion_milo", "sample guard removed", "if (sample < nr_samples) {", "{", Status.RUNTIME_ERROR,
           OVERFLOW, nth=2),
    Broken("dedispersion_milo", "shift of the next DM",
           "unsigned int shift = (dm_first + dm*dm_step) * shifts[channel];",
           "unsigned int shift = (dm_first + (dm+1)*dm_step) * shifts[channel];", Status.INCORRECT, "elements differ",
           nth=2),
    Broken("convolution", "threads wait at two different barriers", "    __syncthreads();\n",
           "    if (threadIdx.x % 2) {\n        __syncthreads();\n    } else {\n        __syncthreads();\n    }\n",
           Status.RUNTIME_ERROR, "barrier divergence"),
    Broken("pnpoly", "one thread spins forever", "    float2 p[tile_size];",
           "    if (threadIdx.x == 0) {\n        volatile int spin = 1;\n        while (spin) {}\n    }\n"
           "    float2 p[tile_size];", Status.RUNTIME_ERROR, "no progress", options={"block_timeout_s": 1.0}),
    Broken("convolution", "barrier after the loads removed, under ThreadSanitizer", "    __syncthreads();\n", "",
           Status.RUNTIME_ERROR, "ThreadSanitizer: data race", options={"sanitizer": "thread"}),
    Broken("gemm", "barrier at the end of the K loop removed, under ThreadSanitizer", "        __syncthreads();\n",
           "", Status.RUNTIME_ERROR, "ThreadSanitizer: data race", nth=2, options={"sanitizer": "thread"}),
]


@functools.cache
def session_for(name: str, options: tuple) -> EmulatedSession:
    """One session per kernel and options, shared by its variants (its inputs and reference made once)."""
    bench = load_benchmark(name)
    return EmulatedSession(bench, bench.size("emulation"), **dict(options))


@functools.cache
def shipped_passes(name: str, options: tuple) -> bool:
    return session_for(name, options).verify(CONFIGS[name]).ok


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: f"{v.benchmark}: {v.what}")
def test_broken_variant_is_caught(variant: Broken) -> None:
    options = tuple(sorted(variant.options.items()))
    assert shipped_passes(variant.benchmark, options)  # the kernel as shipped
    session = session_for(variant.benchmark, options)
    config = CONFIGS[variant.benchmark]
    result = session.verify(config, source=variant.apply(session.source)).result
    assert (result.status, variant.says in result.message) == (variant.status, True), result.message
    if result.status is Status.RUNTIME_ERROR:  # the report names the kernel and the configuration
        assert any(k in result.message for k in session.runner.kernel_names), result.message
        assert json.dumps(config) in result.message


def test_every_kernel_has_two_broken_variants_caught() -> None:
    counts = {name: sum(v.benchmark == name for v in VARIANTS) for name in CONFIGS}
    assert min(counts.values()) >= 2, counts
