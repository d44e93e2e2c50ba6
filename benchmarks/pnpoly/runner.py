"""Pnpoly runner: inputs, macros, launch and NumPy reference of benchmarks/pnpoly/kernel.cu.

Points are uniform in [0, 1)^2 (float32); the polygon is star-shaped around
(0.5, 0.5): n_vertices angles uniform in [0, 2 pi), sorted, radii uniform in
[0.2, 0.5) (float32 vertices, copied to the ``vertices`` constant-memory
array). The output ``bitmap`` holds 1 for a point inside (even-odd rule).

Verification: exact equality. The reference repeats the kernel's float32
arithmetic (x-intercept = (xk - xj) * (py - yj) / (yk - yj) + xj, IEEE
rounding, no contraction possible), so ties and near-edge points agree bit for
bit. It covers every point when n_points <= 200,000, otherwise 200,000
sampled points (always the first and the last; PCG64(0) picks the rest).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from bat.core.kernel import CheckResult, KernelRunner, Launch, compare, rng_for, sample_indices

SAMPLED = 200_000


def crossing_parity(points: np.ndarray, vertices: np.ndarray) -> np.ndarray:
    """Even-odd point-in-polygon in float32, the kernel's formula (1 = inside)."""
    px = points[:, 0].astype(np.float32)
    py = points[:, 1].astype(np.float32)
    inside = np.zeros(points.shape[0], dtype=bool)
    vx = vertices[:, 0].astype(np.float32)
    vy = vertices[:, 1].astype(np.float32)
    with np.errstate(divide="ignore", invalid="ignore"):
        for j in range(vertices.shape[0]):
            k = j - 1
            crosses = (vy[j] > py) != (vy[k] > py)
            xint = (vx[k] - vx[j]) * (py - vy[j]) / (vy[k] - vy[j]) + vx[j]
            inside ^= crosses & (px < xint)
    return inside.astype(np.int32)


class PnpolyRunner(KernelRunner):
    """n_points points against one n_vertices polygon."""

    benchmark = "pnpoly"
    kernel_names = ("pnpoly_kernel",)

    def make_inputs(self, size: Mapping[str, int], seed: int) -> dict[str, np.ndarray]:
        rng = rng_for(seed)
        nv = size["n_vertices"]
        angles = np.sort(rng.uniform(0.0, 2.0 * np.pi, nv))
        radii = rng.uniform(0.2, 0.5, nv)
        vertices = np.column_stack([0.5 + radii * np.cos(angles), 0.5 + radii * np.sin(angles)])
        points = rng.random((size["n_points"], 2), dtype=np.float32)
        return {
            "vertices": vertices.astype("<f4"),
            "points": points.astype("<f4"),
            "bitmap": np.zeros(size["n_points"], "<i4"),
        }

    def macros(self, config: Mapping[str, object], size: Mapping[str, int]) -> dict[str, object]:
        return {**config, "n_points": size["n_points"], "n_vertices": size["n_vertices"]}

    def launches(self, config: Mapping[str, object], size: Mapping[str, int]) -> list[Launch]:
        grid, block = self.geometry(config, size)
        return [Launch("pnpoly_kernel", grid, block, ("bitmap", "points"))]

    def output_names(self) -> list[str]:
        return ["bitmap"]

    def symbol_names(self) -> list[str]:
        return ["vertices"]

    def reference(self, inputs: Mapping[str, np.ndarray], size: Mapping[str, int]) -> dict:
        n = size["n_points"]
        rows = sample_indices(n, SAMPLED, rng_for(0))
        return {"rows": rows, "bitmap": crossing_parity(inputs["points"][rows], inputs["vertices"])}

    def verify(self, outputs: Mapping[str, np.ndarray], reference: Mapping) -> CheckResult:
        got = outputs["bitmap"][reference["rows"]]
        return compare("bitmap", got, reference["bitmap"], rtol=0.0, atol=0.0)

    def input_recipe(self, size: Mapping[str, int], seed: int) -> dict:
        return {
            "size": dict(size),
            "seed": seed,
            "generator": "numpy PCG64",
            "distribution": "polygon: n_vertices angles uniform [0, 2 pi) sorted, radii uniform "
            "[0.2, 0.5) around (0.5, 0.5) (float64, stored float32); then points: "
            "Generator.random float32 uniform [0, 1)^2",
        }

    def bytes_moved(self, size: Mapping[str, int]) -> float:
        return 12.0 * size["n_points"]
