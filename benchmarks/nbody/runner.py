"""N-body runner: inputs, macros, launch and NumPy reference of benchmarks/nbody/kernel.cu.

Bodies are given twice, as float4 (x, y, z, m) records (``pos4``) and as four
separate arrays (``px``, ``py``, ``pz``, ``pm``), so that use_soa only changes
what the kernel reads. Positions are uniform in [-1, 1)^3, masses uniform in
[0.5, 1.5) / n_bodies (total mass about 1), velocities uniform in
[-1e-3, 1e-3) so that the acceleration term a*dt (about 1e-3) is as large as
the velocity it updates. Constants: softening 0.01 (eps2 = 1e-4 is added to
r^2), dt = 0.001, damping = 0.5.

Verification: the reference is computed in float64 for every body when
n_bodies <= 16384, otherwise for 512 sampled bodies (always the first and the
last; PCG64(0) picks the rest) against all bodies. Tolerance: velocities
rtol 1e-3, atol 1e-7 (a missing tile of 64 bodies shifts a velocity by about
2.5e-7). Positions are checked as displacements from the input, pos_out - pos4,
against the reference's v' dt (about 5e-7 per component; comparing whole
positions at 1e-6 would pass a kernel that never moves the bodies): rtol 1e-3,
atol 5.96e-8, the float32 spacing of positions in [-1, 1), twice the largest
rounding error of p + v' dt there. Masses (pos_out.w) must be copied exactly.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from bat.core.kernel import (
    CheckResult,
    KernelRunner,
    Launch,
    combine,
    compare,
    rng_for,
    sample_indices,
    scalar,
)

SOFTENING = 0.01
DT = 0.001
DAMPING = 0.5
FULL_LIMIT = 16384
SAMPLED = 512
#: float32 spacing of numbers in [0.5, 1): 2^-24
DISPLACEMENT_ATOL = 2.0**-24


class NbodyRunner(KernelRunner):
    """One all-pairs time step of n_bodies bodies."""

    benchmark = "nbody"
    kernel_names = ("nbody_kernel",)

    def make_inputs(self, size: Mapping[str, int], seed: int) -> dict[str, np.ndarray]:
        n = size["n_bodies"]
        rng = rng_for(seed)
        pos = rng.uniform(-1.0, 1.0, (n, 3))
        mass = rng.uniform(0.5, 1.5, n) / n
        vel = np.zeros((n, 4))
        vel[:, :3] = rng.uniform(-1e-3, 1e-3, (n, 3))
        pos4 = np.column_stack([pos, mass]).astype("<f4")
        return {
            "pos4": pos4,
            "px": np.ascontiguousarray(pos4[:, 0]),
            "py": np.ascontiguousarray(pos4[:, 1]),
            "pz": np.ascontiguousarray(pos4[:, 2]),
            "pm": np.ascontiguousarray(pos4[:, 3]),
            "vel": vel.astype("<f4"),
            "pos_out": np.zeros((n, 4), "<f4"),
            "vel_out": np.zeros((n, 4), "<f4"),
        }

    def macros(self, config: Mapping[str, object], size: Mapping[str, int]) -> dict[str, object]:
        return {**config, "n_bodies": size["n_bodies"]}

    def launches(self, config: Mapping[str, object], size: Mapping[str, int]) -> list[Launch]:
        grid, block = self.geometry(config, size)
        args = ("pos4", "px", "py", "pz", "pm", "vel", "pos_out", "vel_out",
                scalar(np.float32(DT)), scalar(np.float32(DAMPING)),
                scalar(np.float32(SOFTENING**2)))
        return [Launch("nbody_kernel", grid, block, args)]

    def output_names(self) -> list[str]:
        return ["pos_out", "vel_out"]

    def tolerance(self, name: str, size: Mapping[str, int]) -> tuple[float, float]:
        return (1e-3, 1e-7) if name == "vel_out" else (1e-3, DISPLACEMENT_ATOL)

    def reference(self, inputs: Mapping[str, np.ndarray], size: Mapping[str, int]) -> dict:
        n = size["n_bodies"]
        rows = np.arange(n) if n <= FULL_LIMIT else sample_indices(n, SAMPLED, rng_for(0))
        pos = inputs["pos4"].astype(np.float64)
        acc = np.empty((rows.size, 3))
        for start in range(0, rows.size, 64):
            part = rows[start : start + 64]
            d = pos[None, :, :3] - pos[part, None, :3]
            r2 = np.einsum("ijk,ijk->ij", d, d) + SOFTENING**2
            acc[start : start + 64] = np.einsum("ij,ijk->ik", pos[:, 3] * r2**-1.5, d)
        vel = (inputs["vel"][rows, :3].astype(np.float64) + acc * DT) * DAMPING
        return {
            "rows": rows,
            "vel_out": np.column_stack([vel, inputs["vel"][rows, 3]]),
            "pos_out": np.column_stack([pos[rows, :3] + vel * DT, pos[rows, 3]]),
            "pos_in": pos[rows, :3],
            "displacement": vel * DT,
        }

    def verify(self, outputs: Mapping[str, np.ndarray], reference: Mapping) -> CheckResult:
        rows = reference["rows"]
        rtol, atol = self.tolerance("vel_out", {})
        vel = compare("vel_out", outputs["vel_out"][rows], reference["vel_out"], rtol=rtol, atol=atol)
        rtol, atol = self.tolerance("pos_out", {})
        moved = outputs["pos_out"][rows, :3].astype(np.float64) - reference["pos_in"]
        displacement = compare("pos_out - pos4 (displacement)", moved, reference["displacement"],
                               rtol=rtol, atol=atol)
        mass = compare("pos_out.w (mass)", outputs["pos_out"][rows, 3], reference["pos_out"][:, 3],
                       rtol=0.0, atol=0.0)
        return combine(vel, displacement, mass)

    def input_recipe(self, size: Mapping[str, int], seed: int) -> dict:
        return {
            "size": dict(size),
            "seed": seed,
            "generator": "numpy PCG64",
            "distribution": "positions uniform [-1, 1)^3, masses uniform [0.5, 1.5) / n_bodies, "
            "velocities uniform [-1e-3, 1e-3)^3 (float64 draws in that order, stored float32)",
            "constants": {"softening": SOFTENING, "dt": DT, "damping": DAMPING},
        }

    def flops(self, size: Mapping[str, int]) -> float:
        return 20.0 * float(size["n_bodies"]) ** 2  # the usual 20 flops per interaction

    def bytes_moved(self, size: Mapping[str, int]) -> float:
        return 4.0 * 4 * 4 * size["n_bodies"]  # pos and vel in, pos and vel out
