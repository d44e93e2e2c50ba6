"""Synthetic spaces for the tuner battery, and a fake in-memory backend that also serves counters.

The fake backend stands in for replay data and for a live GPU in the tuner
battery: it answers from a closed-form objective, fails a known share of
configurations, charges a fixed simulated cost, serves a full set of
synthetic performance counters with every ok result (as a live backend
profiling with ncu does), and records every configuration it is asked
about. ``synthetic_facts`` tells a tuner what a real target would: a GPU
with a core count, a launch geometry, and the backend's answers for the
whole space as a replayable dataset, so counter-driven tuners (the profile
tuner in every mode) run the battery for real.

The counters are a deterministic closed form of the configuration's values
(each metric a smooth function with its own phase): plausible magnitudes,
utilisations in 0-100, learnable by a counter model. They model no GPU.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from bat.core.counters import METRICS
from bat.core.dataset import Dataset, DatasetMeta, Status, make_frame
from bat.core.facts import TargetFacts
from bat.core.problem import Backend, EvalResult, no_noise
from bat.core.space import Constraint, Parameter, SearchSpace

#: simulated seconds each fake evaluation costs
FAKE_COST_S = 0.5
#: the fake GPU's CUDA cores (the profile tuner's parallelism bottleneck reads them)
FAKE_CORES = 512
#: utilisation metrics (0-100) among the counters; the rest are amounts
_PERCENT = ("INST_ISSUE_U", "DRAM_U", "L2_U", "TEX_U", "SHR_U", "SM_E", "WARP_NP_E")


def constrained_space() -> SearchSpace:
    """5 parameters, 2,400 configurations, of which 456 (19 %) are valid.

    Mixed value types (ints, a float, strings) and constraints that tie
    parameters together, like a real kernel's thread-block limits.
    """
    return SearchSpace(
        "battery",
        [
            Parameter("bx", (1, 2, 4, 8, 16, 32)),
            Parameter("by", (1, 2, 4, 8, 16)),
            Parameter("tile", (1, 2, 3, 4, 6, 8, 12, 16)),
            Parameter("ratio", (0.25, 0.5, 1.0, 2.0, 4.0)),
            Parameter("layout", ("row", "col")),
        ],
        [
            Constraint("bx * by <= 64 and bx * by >= 4", "threads per block"),
            Constraint("tile % by == 0", "a tile covers whole rows of the block"),
            Constraint("bx >= by", "blocks are at least as wide as tall"),
            Constraint("tile * by <= 32 and ratio * tile <= 8", "shared memory"),
        ],
    )


def tiny_space() -> SearchSpace:
    """A space with only a handful of valid configurations (6: budget larger than the space)."""
    return SearchSpace(
        "battery_tiny",
        [Parameter("a", (1, 2, 3, 4)), Parameter("b", (1, 2, 3))],
        [Constraint("a + b <= 4")],
    )


def typed_space() -> SearchSpace:
    """String-valued and single-valued parameters beside ints and floats: 108 configurations, 90 valid."""
    return SearchSpace(
        "battery_types",
        [
            Parameter("block", (32, 64, 128, 256)),
            Parameter("layout", ("row", "col", "tiled")),
            Parameter("precision", ("half", "single", "double")),
            Parameter("vector", (4,)),
            Parameter("cache", ("L1",)),
            Parameter("scale", (0.5, 1.0, 2.0)),
        ],
        [
            Constraint('layout != "tiled" or block >= 64', "a tile needs at least two warps"),
            Constraint("block * scale <= 256", "threads per block"),
        ],
    )


def _number(value: Any) -> float:
    """A positive number standing for a parameter value (strings by their characters)."""
    if isinstance(value, bool):
        return 1.0 + value
    if isinstance(value, int | float):
        return float(value) if value > 0 else 0.5
    return 1.0 + sum(map(ord, str(value))) % 7


def synthetic_counters(config: Mapping[str, Any]) -> dict[str, float]:
    """Every metric of the profile method (full Nsight Compute names) for a configuration."""
    logs = [math.log2(_number(v)) for _, v in sorted(config.items())]
    size = 1.0 + sum(abs(x) for x in logs)
    out = {}
    for j, (short, metric) in enumerate(METRICS.items()):
        tilt = sum(x * ((k + j) % 3 - 1) for k, x in enumerate(logs))  # each metric leans on other parameters
        wave = 0.5 + 0.4 * math.sin(tilt / 4.0 + j)  # in [0.1, 0.9]
        if short in _PERCENT:
            out[metric] = 100.0 * wave
        elif short == "WARP_RATIO":
            out[metric] = 32.0 * wave
        else:
            out[metric] = 1e6 * size * (0.75 + 0.25 * wave)
    return out


def synthetic_threads(values: pd.DataFrame) -> np.ndarray:
    """Threads a configuration launches: 32 times the product of its numeric values."""
    total = np.full(len(values), 32.0)
    for column in values.columns:
        total = total * values[column].map(_number).to_numpy(dtype=float)
    return total


class FakeBackend:
    """In-memory backend: a closed-form objective and counters; records every configuration it evaluates.

    It replaces replay data and a GPU in tests (no dataset needed). Configurations whose
    ``bx`` is 32 fail to compile (when the space has ``bx``): failures count
    against the budget like any evaluation. With ``counters`` (the default) every ok result
    carries the synthetic counters in ``extra``.
    """

    name = "fake"

    def __init__(self, *, counters: bool = True) -> None:
        self.counters = counters
        self.calls: list[dict[str, Any]] = []

    def describe(self) -> str:
        return "fake in-memory backend (closed-form objective and counters, for tests)"

    def evaluate(self, config: Mapping[str, Any]) -> EvalResult:
        config = dict(config)
        self.calls.append(config)
        return answer(config, counters=self.counters)

    def with_noise(self, noise: str, seed: int) -> Backend:
        return no_noise(self, noise)

    def close(self) -> None:
        """Nothing to release."""


def answer(config: dict[str, Any], *, counters: bool = True) -> EvalResult:
    """What the fake backend answers for ``config``."""
    if config.get("bx") == 32:
        return EvalResult(config=config, status=Status.COMPILE_ERROR, cost_s=FAKE_COST_S,
                          message="fake compile error")
    ms = 1.0
    for name, value in sorted(config.items()):
        x = _number(value)
        ms += (math.log2(x) - 2.0) ** 2 * (1.0 + 0.1 * len(name))
    extra = synthetic_counters(config) if counters else {}
    return EvalResult(config=config, status=Status.OK, objective_ms=ms, times_ms=(ms,), cost_s=FAKE_COST_S,
                      extra=extra)


_DATASETS: dict[str, Dataset] = {}


def synthetic_dataset(space: SearchSpace) -> Dataset:
    """The fake backend's answers for every valid configuration of ``space``, counters included."""
    if space.space_hash not in _DATASETS:
        _DATASETS[space.space_hash] = _dataset(space)
    return _DATASETS[space.space_hash]


def _dataset(space: SearchSpace) -> Dataset:
    configs = [space.config(row) for row in space.from_ids(space.valid_ids())]
    rows = []
    for config in configs:
        result = answer(dict(config))
        rows.append({**config, "status": result.status.value, "objective_ms": result.objective_ms,
                     "times_ms": list(result.times_ms), "benchmark_ms": result.cost_s * 1000.0,
                     "message": result.message, **result.extra})
    frame = make_frame(space.names, rows)
    meta = DatasetMeta(benchmark=space.name, space_hash=space.space_hash, gpu="FAKE",
                       gpu_name="fake GPU (bat.testing.synthetic)", source="closed-form, not measured")
    return Dataset(frame, meta, tuple(space.names))


def synthetic_facts(space: SearchSpace) -> TargetFacts:
    """The facts of a fake target: a GPU with ``FAKE_CORES`` cores, a launch geometry, and the closed-form
    data as another fake GPU's (``others``); its own dataset is the answer key only an oracle gets."""
    other = synthetic_dataset(space)
    other.meta.gpu = "FAKE_OTHER"
    return TargetFacts(gpu="FAKE", cuda_cores=FAKE_CORES, threads=synthetic_threads, measures_counters=True,
                       others={"FAKE_OTHER": other})
