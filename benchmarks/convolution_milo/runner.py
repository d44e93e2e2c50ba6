"""convolution_milo runner: inputs, macros, launch and NumPy reference of the hub's convolution_milo.cu.

The kernel (FAIR Benchmark Hub, shipped unchanged but for ``#ifndef`` guards around its
problem size, see PROVENANCE.md) computes, for every output pixel (y, x) of an
image_height x image_width image, the sum over i < filter_height, j < filter_width of
input[(y + i) * input_width + x + j] * d_filter[i * filter_width + j], where the input
is (image_height + 14) x (image_width + 14) (input_width = image_width + 2 * (15 / 2)) and
``d_filter`` is a ``__constant__`` array of 33 x 33 floats whose first 225 hold the 15 x 15
filter row by row. Each thread sums tile_size_y x tile_size_x outputs, strided by the block;
a block stages its input tile in shared memory. The kernel's third argument (a global copy
of the filter) is unused by ``convolution_kernel`` and passed as the hub's script does.

Inputs: image uniform [0, 1), filter uniform [0, 1) divided by its sum (float64 draws,
stored float32), so outputs lie in [0, 1). Verification: the float64 reference (a sum of
shifted slices) covers every row when image_height <= 512, otherwise 128 sampled rows
(always the first and the last; PCG64(0) picks the rest), all columns; rtol 1e-5, atol
1e-5 (a float32 sum of 225 terms near 0.5).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from bat.benchmarks.convolution.runner import correlate_rows
from bat.core.kernel import CheckResult, KernelRunner, Launch, compare, rng_for, sample_indices

FILTER = 15  # the space's filter_width / filter_height (one value each)
CONSTANT_FLOATS = 33 * 33  # the kernel's __constant__ float d_filter[33*33]
FULL_LIMIT = 512
SAMPLED = 128


class ConvolutionMiloRunner(KernelRunner):
    """A 15 x 15 filter over an image_height x image_width output (the hub's kernel)."""

    benchmark = "convolution_milo"
    kernel_names = ("convolution_kernel",)

    def make_inputs(self, size: Mapping[str, int], seed: int) -> dict[str, np.ndarray]:
        rng = rng_for(seed)
        h, w = size["image_height"], size["image_width"]
        image = rng.uniform(0.0, 1.0, (h + FILTER - 1, w + FILTER - 1)).astype("<f4")
        filt = rng.uniform(0.0, 1.0, (FILTER, FILTER))
        filt = (filt / filt.sum()).astype("<f4")
        constant = np.zeros(CONSTANT_FLOATS, "<f4")
        constant[: FILTER * FILTER] = filt.ravel()
        return {
            "input": image,
            "filter": filt,
            "d_filter": constant,
            "output": np.zeros((h, w), "<f4"),
        }

    def macros(self, config: Mapping[str, object], size: Mapping[str, int]) -> dict[str, object]:
        return {**config, "image_width": size["image_width"], "image_height": size["image_height"]}

    def launches(self, config: Mapping[str, object], size: Mapping[str, int]) -> list[Launch]:
        grid, block = self.geometry(config, size)
        return [Launch("convolution_kernel", grid, block, ("output", "input", "filter"))]

    def output_names(self) -> list[str]:
        return ["output"]

    def symbol_names(self) -> list[str]:
        return ["d_filter"]

    def tolerance(self, name: str, size: Mapping[str, int]) -> tuple[float, float]:
        return 1e-5, 1e-5

    def reference(self, inputs: Mapping[str, np.ndarray], size: Mapping[str, int]) -> dict:
        h = size["image_height"]
        rows = np.arange(h) if h <= FULL_LIMIT else sample_indices(h, SAMPLED, rng_for(0))
        filt = inputs["d_filter"][: FILTER * FILTER].reshape(FILTER, FILTER)
        return {"rows": rows, "output": correlate_rows(inputs["input"], filt, rows)}

    def verify(self, outputs: Mapping[str, np.ndarray], reference: Mapping) -> CheckResult:
        got = outputs["output"][reference["rows"]]
        rtol, atol = self.tolerance("output", {})
        return compare("output", got, reference["output"], rtol=rtol, atol=atol)

    def input_recipe(self, size: Mapping[str, int], seed: int) -> dict:
        return {
            "size": dict(size),
            "seed": seed,
            "generator": "numpy PCG64",
            "distribution": f"input uniform [0, 1) of (image_height + {FILTER - 1}) x "
            f"(image_width + {FILTER - 1}), then a {FILTER} x {FILTER} filter uniform [0, 1) "
            f"divided by its sum (float64 draws, stored float32), in the first {FILTER * FILTER} "
            f"of the {CONSTANT_FLOATS} floats of d_filter",
        }

    def flops(self, size: Mapping[str, int]) -> float:
        return 2.0 * size["image_width"] * size["image_height"] * FILTER * FILTER
