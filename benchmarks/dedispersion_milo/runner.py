"""dedispersion_milo runner: inputs, macros, launch and NumPy reference of the hub's dedispersion.cu.

The kernel (FAIR Benchmark Hub, shipped unchanged but for ``#ifndef`` guards around the
sizes in dedispersion.h, see PROVENANCE.md) computes, for every DM d < nr_dms and sample
s < nr_samples, output[d * nr_samples + s] = the sum over channels c < nr_channels, in
channel order in float32, of input[c * (nr_samples + max_shift) + s + shift(c, d)], where
shift(c, d) is the float32 product (dm_first + d * dm_step) * shifts[c] truncated to an
unsigned integer (dm_first 0, dm_step 0.02, max_shift 650). Each thread takes tile_size_x
samples by tile_size_y DMs, consecutive (tile_stride 0) or strided by the block (1).

Inputs: ``shifts`` by the formula of the hub's script (channel c at 1425 + 0.1953125 c MHz,
sampling time 4.096e-5 s, the delay of channel c per unit DM relative to the highest channel,
4148.808 (1/f_c^2 - 1/f_max^2) / t_samp, in float32, the last channel 0); ``input`` uint8
uniform over 0..255 (the hub's script casts normal draws to uint8), nr_channels rows of
nr_samples + 650. Sums of at most 1536 * 255 are exact in float32, so the check is exact.
The reference covers every DM when nr_dms <= 64, otherwise 16 sampled DMs (always the first
and the last; PCG64(0) picks the rest), all samples.

``loop_unroll_factor_channel`` reaches the kernel as Kernel Tuner passes parameters named
``loop_unroll_factor_*`` to CUDA and HIP (the hub's kernel was written for that): not as a
``-D`` macro, which ``#pragma unroll`` would not expand (nvcc: "identifier is undefined"),
but 0 removes the ``#pragma unroll loop_unroll_factor_channel`` line (the compiler decides)
and any other value is declared ``constexpr int`` before the source.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import numpy as np

from bat.core.kernel import CheckResult, KernelRunner, Launch, compare, rng_for, sample_indices

MAX_SHIFT = 650  # dedispersion.h's max_shift: the input row is nr_samples + MAX_SHIFT long
DM_FIRST = np.float32(0.0)
DM_STEP = np.float32(0.02)
T_SAMP = 4.096e-5
F_LOW = 1425.0
CHANNEL_WIDTH = 0.1953125
DISPERSION = 4148.808
FULL_LIMIT = 64
SAMPLED = 16
UNROLL = "loop_unroll_factor_channel"


def channel_shifts(nr_channels: int) -> np.ndarray:
    """Delay per unit DM of every channel, in samples, relative to the highest channel (float32)."""
    inverse_high = 1.0 / (F_LOW + (nr_channels - 1) * CHANNEL_WIDTH) ** 2
    inverse = 1.0 / (F_LOW + np.arange(nr_channels, dtype=np.float32) * CHANNEL_WIDTH) ** 2
    shifts = (DISPERSION * (inverse - inverse_high) / T_SAMP).astype("<f4")
    shifts[-1] = 0.0
    return shifts


def integer_shifts(shifts: np.ndarray, dms: np.ndarray) -> np.ndarray:
    """shift(c, d) as the kernel computes it: float32 arithmetic, truncated (channels x dms)."""
    dm_value = DM_FIRST + dms.astype(np.float32) * DM_STEP
    return (dm_value[None, :] * shifts.astype(np.float32)[:, None]).astype(np.uint32)


def dedisperse(data: np.ndarray, shifts: np.ndarray, dms: np.ndarray, nr_samples: int) -> np.ndarray:
    """output[k, s] = sum_c data[c, s + shift(c, dms[k])], exact (int64), as float32."""
    offsets = integer_shifts(shifts, dms).astype(np.int64)
    out = np.zeros((dms.size, nr_samples), np.int64)
    cols = np.arange(nr_samples)
    for c in range(data.shape[0]):
        out += data[c, offsets[c][:, None] + cols[None, :]]
    return out.astype(np.float32)


class DedispersionMiloRunner(KernelRunner):
    """nr_dms x nr_samples dedispersed series from nr_channels 8-bit channels (the hub's kernel)."""

    benchmark = "dedispersion_milo"
    kernel_names = ("dedispersion_kernel",)

    def make_inputs(self, size: Mapping[str, int], seed: int) -> dict[str, np.ndarray]:
        shifts = channel_shifts(size["nr_channels"])
        largest = int(integer_shifts(shifts, np.array([size["nr_dms"] - 1])).max())
        if largest >= MAX_SHIFT:
            raise ValueError(f"nr_dms {size['nr_dms']} shifts a channel by {largest} samples; "
                             f"dedispersion.h allows {MAX_SHIFT - 1}")
        rng = rng_for(seed)
        data = rng.integers(0, 256, (size["nr_channels"], size["nr_samples"] + MAX_SHIFT), dtype=np.uint8)
        return {
            "input": data,
            "output": np.zeros((size["nr_dms"], size["nr_samples"]), "<f4"),
            "shifts": shifts,
        }

    def macros(self, config: Mapping[str, object], size: Mapping[str, int]) -> dict[str, object]:
        kept = {k: v for k, v in config.items() if k != UNROLL}  # see prepare_source
        return {**kept, **{k: size[k] for k in ("nr_samples", "nr_dms", "nr_channels")}}

    def prepare_source(self, source: str, config: Mapping[str, Any]) -> str:
        factor = int(config[UNROLL])
        if factor == 0:
            return re.sub(rf"\n\s*#pragma\s+unroll\s+{UNROLL}\b", "\n", source)
        return f"constexpr int {UNROLL} = {factor};\n#line 1\n{source}"

    def launches(self, config: Mapping[str, object], size: Mapping[str, int]) -> list[Launch]:
        grid, block = self.geometry(config, size)
        return [Launch("dedispersion_kernel", grid, block, ("input", "output", "shifts"))]

    def output_names(self) -> list[str]:
        return ["output"]

    def reference(self, inputs: Mapping[str, np.ndarray], size: Mapping[str, int]) -> dict:
        n = size["nr_dms"]
        dms = np.arange(n) if n <= FULL_LIMIT else sample_indices(n, SAMPLED, rng_for(0))
        return {"dms": dms, "output": dedisperse(inputs["input"], inputs["shifts"], dms, size["nr_samples"])}

    def verify(self, outputs: Mapping[str, np.ndarray], reference: Mapping) -> CheckResult:
        got = outputs["output"][reference["dms"]]
        return compare("output", got, reference["output"], rtol=0.0, atol=0.0)

    def input_recipe(self, size: Mapping[str, int], seed: int) -> dict:
        return {
            "size": dict(size),
            "seed": seed,
            "generator": "numpy PCG64",
            "distribution": f"input: Generator.integers(0, 256) uint8, nr_channels rows of nr_samples + "
            f"{MAX_SHIFT}; shifts computed (not drawn)",
            "constants": {"t_samp": T_SAMP, "f_low_mhz": F_LOW, "channel_width_mhz": CHANNEL_WIDTH,
                          "dm_first": float(DM_FIRST), "dm_step": float(DM_STEP),
                          "dispersion_constant": DISPERSION, "max_shift": MAX_SHIFT},
        }

    def bytes_moved(self, size: Mapping[str, int]) -> float:
        return float(size["nr_channels"] * size["nr_samples"] + 4 * size["nr_dms"] * size["nr_samples"])
