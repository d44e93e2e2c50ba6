"""GEMM runner: inputs, macros, launch and NumPy reference of benchmarks/gemm/kernel.cu.

Layout (column-major, as the kernel documents): ``a`` is A^T (K x M), ``b`` is B
(K x N), ``c`` is C^T (N x M), all float32; C = alpha*A*B + beta*C with
alpha = 0.75 and beta = 0.5, so ``c`` is read and written: it is reset before
every run. The reference is the full product in float64 (BLAS), at every size.
Tolerance: |got - ref| <= 2e-6 * K + 1e-4 * |ref| (float32 accumulation of K terms).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from bat.core.kernel import CheckResult, KernelRunner, Launch, compare, rng_for, scalar

ALPHA = np.float32(0.75)
BETA = np.float32(0.5)


class GemmRunner(KernelRunner):
    """C = alpha*A*B + beta*C on M x N x K single-precision matrices."""

    benchmark = "gemm"
    kernel_names = ("gemm_kernel",)

    def make_inputs(self, size: Mapping[str, int], seed: int) -> dict[str, np.ndarray]:
        rng = rng_for(seed)
        m, n, k = size["M"], size["N"], size["K"]

        def uniform(*shape: int) -> np.ndarray:
            return rng.uniform(-1.0, 1.0, shape).astype("<f4")

        return {"a": uniform(k, m), "b": uniform(k, n), "c": uniform(n, m)}

    def macros(self, config: Mapping[str, object], size: Mapping[str, int]) -> dict[str, object]:
        return {**config, "M": size["M"], "N": size["N"], "K": size["K"]}

    def launches(self, config: Mapping[str, object], size: Mapping[str, int]) -> list[Launch]:
        grid, block = self.geometry(config, size)
        args = ("a", "b", "c", scalar(ALPHA), scalar(BETA))
        return [Launch("gemm_kernel", grid, block, args)]

    def output_names(self) -> list[str]:
        return ["c"]

    def reset_names(self) -> list[str]:
        return ["c"]  # C = alpha*A*B + beta*C reads c

    def tolerance(self, name: str, size: Mapping[str, int]) -> tuple[float, float]:
        return 1e-4, 2e-6 * size["K"]

    def reference(self, inputs: Mapping[str, np.ndarray], size: Mapping[str, int]) -> dict:
        a, b, c = (inputs[k].astype(np.float64) for k in ("a", "b", "c"))
        return {"c": float(ALPHA) * (b.T @ a) + float(BETA) * c, "size": dict(size)}

    def verify(self, outputs: Mapping[str, np.ndarray], reference: Mapping) -> CheckResult:
        rtol, atol = self.tolerance("c", reference["size"])
        return compare("c", outputs["c"], reference["c"], rtol=rtol, atol=atol)

    def input_recipe(self, size: Mapping[str, int], seed: int) -> dict:
        return {
            "size": dict(size),
            "seed": seed,
            "generator": "numpy PCG64",
            "distribution": "a (K x M), b (K x N), c (N x M): float32 uniform [-1, 1), drawn "
            "in that order; alpha = 0.75, beta = 0.5",
        }

    def flops(self, size: Mapping[str, int]) -> float:
        return 2.0 * size["M"] * size["N"] * size["K"]

    def bytes_moved(self, size: Mapping[str, int]) -> float:
        m, n, k = size["M"], size["N"], size["K"]
        return 4.0 * (m * k + k * n + 2 * m * n)
