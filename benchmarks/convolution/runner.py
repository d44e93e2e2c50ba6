"""Convolution runner: inputs, macros, launch and NumPy reference of benchmarks/convolution/kernel.cu.

The image is image_height x image_width outputs; the input carries the filter's
halo, (image_height + filter_height - 1) x (image_width + filter_width - 1),
uniform in [0, 1); the filter is uniform in [0, 1) scaled to sum 1 (float32,
copied to the ``d_filter`` constant-memory array). The filter size comes from
the configuration (filter_width / filter_height, fixed at 15 in the space).

Verification: the reference (float64, a sum of shifted slices) covers every
row when image_height <= 512, otherwise 128 sampled rows (always the first and
the last; PCG64(0) picks the rest), all columns. Tolerance rtol 1e-5, atol 1e-5
(float32 sum of 225 terms of an output near 0.5).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from bat.core.kernel import CheckResult, KernelRunner, Launch, compare, rng_for, sample_indices

FILTER = 15  # the space's filter_width / filter_height (one value each)
FULL_LIMIT = 512
SAMPLED = 128


def correlate_rows(image: np.ndarray, filt: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Valid cross-correlation of ``image`` with ``filt`` at the given output rows (float64)."""
    fh, fw = filt.shape
    width = image.shape[1] - fw + 1
    image = image.astype(np.float64)
    out = np.zeros((rows.size, width))
    for i in range(fh):
        for j in range(fw):
            out += float(filt[i, j]) * image[rows + i, j : j + width]
    return out


class ConvolutionRunner(KernelRunner):
    """A 2D filter over an image_height x image_width output."""

    benchmark = "convolution"
    kernel_names = ("convolution_kernel",)

    def make_inputs(self, size: Mapping[str, int], seed: int) -> dict[str, np.ndarray]:
        rng = rng_for(seed)
        h, w = size["image_height"], size["image_width"]
        image = rng.uniform(0.0, 1.0, (h + FILTER - 1, w + FILTER - 1)).astype("<f4")
        filt = rng.uniform(0.0, 1.0, (FILTER, FILTER))
        return {
            "input": image,
            "d_filter": (filt / filt.sum()).astype("<f4"),
            "output": np.zeros((h, w), "<f4"),
        }

    def macros(self, config: Mapping[str, object], size: Mapping[str, int]) -> dict[str, object]:
        return {**config, "image_width": size["image_width"],
                "image_height": size["image_height"]}

    def launches(self, config: Mapping[str, object], size: Mapping[str, int]) -> list[Launch]:
        grid, block = self.geometry(config, size)
        return [Launch("convolution_kernel", grid, block, ("output", "input"))]

    def output_names(self) -> list[str]:
        return ["output"]

    def symbol_names(self) -> list[str]:
        return ["d_filter"]

    def tolerance(self, name: str, size: Mapping[str, int]) -> tuple[float, float]:
        return 1e-5, 1e-5

    def reference(self, inputs: Mapping[str, np.ndarray], size: Mapping[str, int]) -> dict:
        h = size["image_height"]
        rows = np.arange(h) if h <= FULL_LIMIT else sample_indices(h, SAMPLED, rng_for(0))
        return {"rows": rows, "output": correlate_rows(inputs["input"], inputs["d_filter"], rows)}

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
            "divided by its sum (float64 draws, stored float32)",
        }

    def flops(self, size: Mapping[str, int]) -> float:
        return 2.0 * size["image_width"] * size["image_height"] * FILTER * FILTER
