"""Hotspot runner: inputs, macros, launches and NumPy reference of benchmarks/hotspot/kernel.cu.

One run advances the temperature grid by ``n_steps`` time steps (problem size):
ceil(n_steps / T) launches of T = temporal_tiling_factor steps each (the last
one does the remainder), ping-ponging between ``scratch`` and ``temp_out`` so
that the last launch writes ``temp_out``; the input ``temp`` is never written.

Constants follow Rodinia's hotspot formulas (chip 0.016 m x 0.016 m divided
into 512 x 512 cells, t_chip 0.0005, K_SI 100, SPEC_HEAT_SI 1.75e6,
FACTOR_CHIP 0.5, MAX_PD 3e6, PRECISION 0.001, ambient 80). The cell size of
that 512 x 512 division is kept for every grid size: dividing the same chip
into 4096 x 4096 cells gives step/Cap * Rx_1 = 2.2 and the explicit scheme
diverges, so no tolerance could check it. Inputs: temperature uniform in
[320, 340), power uniform in [0, 0.01), float32.

Verification: full reference (float64, edge-clamped neighbours) at every size;
tolerance atol 1e-3 K, rtol 1e-6 (one wrong neighbour moves a cell by about 0.1 K).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from bat.core.kernel import Arg, CheckResult, KernelRunner, Launch, compare, rng_for, scalar

CHIP = 0.016
T_CHIP = 0.0005
K_SI = 100.0
SPEC_HEAT_SI = 1.75e6
FACTOR_CHIP = 0.5
MAX_PD = 3.0e6
PRECISION = 0.001
AMB_TEMP = 80.0
RODINIA_CELLS = 512


def coefficients() -> dict[str, float]:
    """step/Cap, 1/Rx, 1/Ry, 1/Rz for the cell size of Rodinia's 512 x 512 chip."""
    cell = CHIP / RODINIA_CELLS
    cap = FACTOR_CHIP * SPEC_HEAT_SI * T_CHIP * cell * cell
    rx = cell / (2.0 * K_SI * T_CHIP * cell)
    rz = T_CHIP / (K_SI * cell * cell)
    step = PRECISION / (MAX_PD / (FACTOR_CHIP * T_CHIP * SPEC_HEAT_SI))
    return {"step_div_cap": step / cap, "rx_1": 1.0 / rx, "ry_1": 1.0 / rx, "rz_1": 1.0 / rz}


class HotspotRunner(KernelRunner):
    """n_steps explicit time steps of a grid_height x grid_width thermal grid."""

    benchmark = "hotspot"
    kernel_names = ("hotspot_kernel",)

    def make_inputs(self, size: Mapping[str, int], seed: int) -> dict[str, np.ndarray]:
        shape = (size["grid_height"], size["grid_width"])
        rng = rng_for(seed)
        temp = rng.uniform(320.0, 340.0, shape).astype("<f4")
        power = rng.uniform(0.0, 0.01, shape).astype("<f4")
        zeros = np.zeros(shape, "<f4")
        return {"temp": temp, "power": power, "scratch": zeros, "temp_out": zeros.copy()}

    def macros(self, config: Mapping[str, object], size: Mapping[str, int]) -> dict[str, object]:
        return {**config, "grid_width": size["grid_width"], "grid_height": size["grid_height"]}

    def launches(self, config: Mapping[str, Any], size: Mapping[str, int]) -> list[Launch]:
        grid, block = self.geometry(config, size)
        per_launch = int(config["temporal_tiling_factor"])
        total = int(size["n_steps"])
        count = -(-total // per_launch)
        coef = [scalar(np.float32(v)) for v in coefficients().values()]
        launches, src = [], "temp"
        for i in range(count):
            dst = "temp_out" if (count - 1 - i) % 2 == 0 else "scratch"
            steps = min(per_launch, total - i * per_launch)
            args: tuple[Arg, ...] = (src, "power", dst, scalar(np.int32(steps)), *coef,
                    scalar(np.float32(AMB_TEMP)))
            launches.append(Launch("hotspot_kernel", grid, block, args))
            src = dst
        return launches

    def output_names(self) -> list[str]:
        return ["temp_out"]

    def poison_names(self) -> list[str]:
        return ["temp_out", "scratch"]  # every launch writes its whole destination

    def tolerance(self, name: str, size: Mapping[str, int]) -> tuple[float, float]:
        return 1e-6, 1e-3

    def reference(self, inputs: Mapping[str, np.ndarray], size: Mapping[str, int]) -> dict:
        c = coefficients()
        temp = inputs["temp"].astype(np.float64)
        power = inputs["power"].astype(np.float64)
        for _ in range(size["n_steps"]):
            p = np.pad(temp, 1, mode="edge")
            vertical = p[:-2, 1:-1] + p[2:, 1:-1] - 2.0 * temp
            horizontal = p[1:-1, :-2] + p[1:-1, 2:] - 2.0 * temp
            temp = temp + c["step_div_cap"] * (
                power + vertical * c["ry_1"] + horizontal * c["rx_1"]
                + (AMB_TEMP - temp) * c["rz_1"]
            )
        return {"temp_out": temp}

    def verify(self, outputs: Mapping[str, np.ndarray], reference: Mapping) -> CheckResult:
        rtol, atol = self.tolerance("temp_out", {})
        return compare("temp_out", outputs["temp_out"], reference["temp_out"], rtol=rtol, atol=atol)

    def input_recipe(self, size: Mapping[str, int], seed: int) -> dict:
        return {
            "size": dict(size),
            "seed": seed,
            "generator": "numpy PCG64",
            "distribution": "temp uniform [320, 340), then power uniform [0, 0.01), "
            "float64 draws stored float32, row-major grid_height x grid_width",
            "constants": {**coefficients(), "amb_temp": AMB_TEMP,
                          "cell": f"chip {CHIP} m / {RODINIA_CELLS}"},
        }

    def flops(self, size: Mapping[str, int]) -> float:
        return 15.0 * size["grid_width"] * size["grid_height"] * size["n_steps"]
