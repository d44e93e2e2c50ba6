"""Which configurations of a kernel CI emulates (and the GPU tests run): a small, telling selection.

For one benchmark: the first valid configuration (id order), the fewest and the most threads
per block, the largest product of the space file's ``kernel.tiling`` parameters, and one
configuration for every combination of the values of its ``kernel.code_paths`` parameters
that the constraints allow. Extremes and combinations are looked for in a seeded uniform
sample of the valid configurations (the whole space when it is small); among equals, a
configuration that runs at least two blocks at the emulation size is preferred, then the
one with the fewest threads in all (cheapest to emulate). ``wider`` adds uniformly drawn
configurations (``bat verify --random``, the slow checks).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from bat.benchmark import Benchmark, ProblemSize
from bat.errors import SpaceSpecError

POOL = 4000
SEED = 20240611


@dataclass(frozen=True)
class Selected:
    """A configuration and why it was selected."""

    config: dict[str, Any]
    why: str


def _names(bench: Benchmark, key: str) -> list[str]:
    names = list(bench.kernel.get(key, []))
    if unknown := [n for n in names if n not in bench.space.names]:
        raise SpaceSpecError(f"{bench.path}: kernel.{key}: {unknown} are not parameters")
    return names


def pool(bench: Benchmark, size: int = POOL, seed: int = SEED) -> list[dict[str, Any]]:
    """Valid configurations: all of them for a small space, else a seeded uniform sample."""
    space = bench.space
    count = space.count_valid()
    rows = space.sample_valid(min(size, count), np.random.default_rng(seed))
    return [space.config(row) for row in rows]


def ci_selection(bench: Benchmark, size: ProblemSize | None = None) -> list[Selected]:
    """The configurations CI emulates for ``bench`` (see the module docstring), without repeats."""
    size = size or bench.size("emulation")
    space = bench.space
    candidates = [space.config(space.unrank_valid(np.array([0]))[0]), *pool(bench)]

    def threads(c: dict) -> int:
        return math.prod(bench.geometry(c, dict(size.values))[1])

    def blocks(c: dict) -> int:
        return math.prod(bench.geometry(c, dict(size.values))[0])

    def cost(c: dict) -> tuple:
        return (blocks(c) < 2, threads(c) * blocks(c))

    tiling = _names(bench, "tiling")
    chosen: list[Selected] = [Selected(candidates[0], "first valid configuration")]

    def best(score: Callable[[dict], float], why: str, among: list[dict] | None = None) -> None:
        among = candidates if among is None else among
        if not among:
            return
        top = max(score(c) for c in among)
        pick = min((c for c in among if score(c) == top), key=cost)
        chosen.append(Selected(pick, why))

    best(lambda c: -threads(c), "fewest threads per block")
    best(threads, "most threads per block")
    if tiling:
        best(lambda c: math.prod(float(c[n]) for n in tiling), f"largest {' x '.join(tiling)}")
    paths = _names(bench, "code_paths")
    for combo in itertools.product(*(space.parameters[space.names.index(p)].values for p in paths)):
        want = dict(zip(paths, combo, strict=True))
        matching = [c for c in candidates if all(c[k] == v for k, v in want.items())]
        label = ", ".join(f"{k}={v}" for k, v in want.items())
        best(lambda c: 0.0, f"code path {label}", matching)
    seen, out = set(), []
    for item in chosen:
        key = tuple(item.config[n] for n in space.names)
        if key not in seen:
            seen.add(key)
            out.append(item)
    return out


def wider(bench: Benchmark, count: int, seed: int = 0) -> list[Selected]:
    """``count`` valid configurations drawn uniformly (a seeded sample)."""
    space = bench.space
    rows = space.sample_valid(min(count, space.count_valid()), np.random.default_rng(seed))
    return [Selected(space.config(row), f"uniform sample (seed {seed})") for row in rows]
