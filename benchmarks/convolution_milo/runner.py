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

from bat.benchmarks.convolution.runner import FILTER, FULL_LIMIT, SAMPLED, ConvolutionRunner, correlate_rows
from bat.core.kernel import Launch, rng_for, sample_indices

CONSTANT_FLOATS = 33 * 33  # the kernel's __constant__ float d_filter[33*33]


class ConvolutionMiloRunner(ConvolutionRunner):
    """A 15 x 15 filter over an image_height x image_width output (the hub's kernel).

    What differs from our convolution: the filter is also passed as an argument, and ``d_filter``
    holds it in the first 225 of its 33 x 33 floats; outputs, tolerance, check and cost are the same.
    """

    benchmark = "convolution_milo"

    def make_inputs(self, size: Mapping[str, int], seed: int) -> dict[str, np.ndarray]:
        inputs = super().make_inputs(size, seed)
        constant = np.zeros(CONSTANT_FLOATS, "<f4")
        constant[: FILTER * FILTER] = inputs["d_filter"].ravel()
        return {**inputs, "filter": inputs["d_filter"], "d_filter": constant}

    def launches(self, config: Mapping[str, object], size: Mapping[str, int]) -> list[Launch]:
        grid, block = self.geometry(config, size)
        return [Launch("convolution_kernel", grid, block, ("output", "input", "filter"))]

    def reference(self, inputs: Mapping[str, np.ndarray], size: Mapping[str, int]) -> dict:
        h = size["image_height"]
        rows = np.arange(h) if h <= FULL_LIMIT else sample_indices(h, SAMPLED, rng_for(0))
        filt = inputs["d_filter"][: FILTER * FILTER].reshape(FILTER, FILTER)
        return {"rows": rows, "output": correlate_rows(inputs["input"], filt, rows)}

    def input_recipe(self, size: Mapping[str, int], seed: int) -> dict:
        recipe = super().input_recipe(size, seed)
        recipe["distribution"] += (f", in the first {FILTER * FILTER} of the {CONSTANT_FLOATS} floats of d_filter "
                                   "and as the argument filter")
        return recipe
