"""Expdist runner: inputs, macros, launches and NumPy reference of benchmarks/expdist/kernel.cu.

Two kernels per run: ``expdist_kernel`` writes one partial sum per block into
``partial`` (sized for the largest grid of the space), then ``reduce_kernel``
(one block of 256 threads) adds them in a fixed order into ``cost[0]``.
Inputs: two particles, positions normal(0, 0.2) in 2D and uncertainties
uniform [0.02, 0.06) (float64), A drawn before B.

Problem size: n_points_a = n_points_b = 16,384, chosen (not measured) so the
kernel runs in about a millisecond on an H100: 2.7e8 pairs x about 35 FP64
instructions per pair (2 sub, mul + fma, 2 add, a division and exp, each
about 10 to 20 instructions in double) = 9.4e9 instructions; the H100 SXM
issues about 1.7e13 FP64 instructions/s (67 TFLOP/s FMA, 34 TFLOP/s
non-tensor), so about 0.6 ms at peak, 1 to 2 ms at a realistic 30 to 50 %.

Verification: the full double sum in NumPy (row chunks), at every size;
tolerance rtol 1e-9 (summation order only).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from bat.core.kernel import CheckResult, KernelRunner, Launch, compare, rng_for, scalar

REDUCE_THREADS = 256
MIN_BLOCK_X = 32  # smallest block_size_x * tile_size_x of the space
MAX_Y_BLOCKS = 1024  # largest n_y_blocks of the space


def expdist_cost(a: np.ndarray, sa: np.ndarray, b: np.ndarray, sb: np.ndarray) -> float:
    """sum_ij exp(-|a_i - b_j|^2 / (2 (sa_i^2 + sb_j^2))) in float64, 256 rows at a time."""
    total = 0.0
    for start in range(0, a.shape[0], 256):
        pa, va = a[start : start + 256], sa[start : start + 256] ** 2
        d2 = (pa[:, None, 0] - b[None, :, 0]) ** 2 + (pa[:, None, 1] - b[None, :, 1]) ** 2
        total += float(np.exp(-d2 / (2.0 * (va[:, None] + sb[None, :] ** 2))).sum())
    return total


class ExpdistRunner(KernelRunner):
    """The registration cost of two particles of n_points_a and n_points_b localizations."""

    benchmark = "expdist"
    kernel_names = ("expdist_kernel", "reduce_kernel")

    def make_inputs(self, size: Mapping[str, int], seed: int) -> dict[str, np.ndarray]:
        rng = rng_for(seed)
        m, n = size["n_points_a"], size["n_points_b"]
        arrays = {
            "a": rng.normal(0.0, 0.2, (m, 2)),
            "sa": rng.uniform(0.02, 0.06, m),
            "b": rng.normal(0.0, 0.2, (n, 2)),
            "sb": rng.uniform(0.02, 0.06, n),
        }
        out = {k: v.astype("<f8") for k, v in arrays.items()}
        blocks = -(-m // MIN_BLOCK_X) * max(n, MAX_Y_BLOCKS)
        out["partial"] = np.zeros(blocks, "<f8")
        out["cost"] = np.zeros(1, "<f8")
        return out

    def macros(self, config: Mapping[str, object], size: Mapping[str, int]) -> dict[str, object]:
        return {**config, "n_points_a": size["n_points_a"], "n_points_b": size["n_points_b"]}

    def launches(self, config: Mapping[str, object], size: Mapping[str, int]) -> list[Launch]:
        grid, block = self.geometry(config, size)
        count = np.int32(grid[0] * grid[1] * grid[2])
        return [
            Launch("expdist_kernel", grid, block, ("a", "sa", "b", "sb", "partial")),
            Launch("reduce_kernel", (1, 1, 1), (REDUCE_THREADS, 1, 1),
                   ("partial", "cost", scalar(count))),
        ]

    def output_names(self) -> list[str]:
        return ["cost"]

    def poison_names(self) -> list[str]:
        return ["cost", "partial"]  # the first kernel writes every partial the second one reads

    def tolerance(self, name: str, size: Mapping[str, int]) -> tuple[float, float]:
        return 1e-9, 0.0

    def reference(self, inputs: Mapping[str, np.ndarray], size: Mapping[str, int]) -> dict:
        cost = expdist_cost(inputs["a"], inputs["sa"], inputs["b"], inputs["sb"])
        return {"cost": np.array([cost])}

    def verify(self, outputs: Mapping[str, np.ndarray], reference: Mapping) -> CheckResult:
        rtol, atol = self.tolerance("cost", {})
        return compare("cost", outputs["cost"], reference["cost"], rtol=rtol, atol=atol)

    def input_recipe(self, size: Mapping[str, int], seed: int) -> dict:
        return {
            "size": dict(size),
            "seed": seed,
            "generator": "numpy PCG64",
            "distribution": "a: normal(0, 0.2) (n_points_a x 2), sa: uniform [0.02, 0.06), "
            "b: normal(0, 0.2) (n_points_b x 2), sb: uniform [0.02, 0.06); float64, that order",
        }

    def flops(self, size: Mapping[str, int]) -> float:
        return 10.0 * size["n_points_a"] * size["n_points_b"]  # excluding the exp and division
