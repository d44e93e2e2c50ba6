"""Dedispersion runner: inputs, macros, launch and NumPy reference of benchmarks/dedispersion/kernel.cu.

ARTS survey parameters (Apertif): sampling time 4.096e-5 s, channel c at
1425 + 0.1953125 c MHz, DM d = 0.02 d pc/cm^3 (first DM 0). The delay of
channel c at DM d, in samples, relative to the highest channel, is
round(4148.808 * DM * (1/f_c^2 - 1/f_max^2) / t_samp) (the cold-plasma
dispersion constant in MHz^2 s cm^3/pc); ``delays`` is n_channels x n_dms
int32. ``input`` is n_channels rows of n_samples + max delay samples, uint8
uniform over 0..255; ``output`` is n_dms rows of n_samples float32.

Verification: exact (the sums are integers below 2^24). The reference covers
every DM when n_dms <= 64, otherwise 16 sampled DMs (always the first and the
last; PCG64(0) picks the rest), all samples.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from bat.core.kernel import CheckResult, KernelRunner, Launch, compare, rng_for, sample_indices

T_SAMP = 4.096e-5
F_LOW = 1425.0
CHANNEL_WIDTH = 0.1953125
DM_STEP = 0.02
DISPERSION = 4148.808
FULL_LIMIT = 64
SAMPLED = 16


def delay_table(n_channels: int, n_dms: int) -> np.ndarray:
    """Delay in samples of every channel (rows) at every DM (columns), int32."""
    freq = F_LOW + CHANNEL_WIDTH * np.arange(n_channels)
    per_dm = DISPERSION * (1.0 / freq**2 - 1.0 / freq[-1] ** 2) / T_SAMP
    return np.rint(per_dm[:, None] * (DM_STEP * np.arange(n_dms))[None, :]).astype("<i4")


def dedisperse(data: np.ndarray, delays: np.ndarray, dms: np.ndarray, n_samples: int) -> np.ndarray:
    """output[k, s] = sum_c data[c, s + delays[c, dms[k]]], exact (int64), as float32."""
    out = np.zeros((dms.size, n_samples), np.int64)
    cols = np.arange(n_samples)
    for c in range(data.shape[0]):
        out += data[c, delays[c, dms][:, None] + cols[None, :]]
    return out.astype(np.float32)


class DedispersionRunner(KernelRunner):
    """n_dms x n_samples dedispersed series from n_channels 8-bit channels."""

    benchmark = "dedispersion"
    kernel_names = ("dedispersion_kernel",)

    def make_inputs(self, size: Mapping[str, int], seed: int) -> dict[str, np.ndarray]:
        delays = delay_table(size["n_channels"], size["n_dms"])
        width = size["n_samples"] + int(delays.max())
        rng = rng_for(seed)
        data = rng.integers(0, 256, (size["n_channels"], width), dtype=np.uint8)
        return {
            "input": data,
            "delays": delays,
            "output": np.zeros((size["n_dms"], size["n_samples"]), "<f4"),
        }

    def macros(self, config: Mapping[str, object], size: Mapping[str, int]) -> dict[str, object]:
        width = size["n_samples"] + int(delay_table(size["n_channels"], size["n_dms"]).max())
        keys = ("n_samples", "n_channels", "n_dms")
        return {**config, **{k: size[k] for k in keys}, "n_samples_in": width}

    def launches(self, config: Mapping[str, object], size: Mapping[str, int]) -> list[Launch]:
        grid, block = self.geometry(config, size)
        return [Launch("dedispersion_kernel", grid, block, ("input", "output", "delays"))]

    def output_names(self) -> list[str]:
        return ["output"]

    def reference(self, inputs: Mapping[str, np.ndarray], size: Mapping[str, int]) -> dict:
        n = size["n_dms"]
        dms = np.arange(n) if n <= FULL_LIMIT else sample_indices(n, SAMPLED, rng_for(0))
        out = dedisperse(inputs["input"], inputs["delays"], dms, size["n_samples"])
        return {"dms": dms, "output": out}

    def verify(self, outputs: Mapping[str, np.ndarray], reference: Mapping) -> CheckResult:
        got = outputs["output"][reference["dms"]]
        return compare("output", got, reference["output"], rtol=0.0, atol=0.0)

    def input_recipe(self, size: Mapping[str, int], seed: int) -> dict:
        return {
            "size": dict(size),
            "seed": seed,
            "generator": "numpy PCG64",
            "distribution": "input: Generator.integers(0, 256) uint8, n_channels rows of "
            "n_samples + max delay; delays computed (not drawn)",
            "constants": {"t_samp": T_SAMP, "f_low_mhz": F_LOW, "channel_width_mhz":
                          CHANNEL_WIDTH, "dm_step": DM_STEP, "dispersion_constant": DISPERSION},
        }

    def bytes_moved(self, size: Mapping[str, int]) -> float:
        return float(size["n_channels"] * size["n_samples"] + 4 * size["n_dms"] * size["n_samples"])
