"""Which configurations of a kernel CI emulates (and the GPU tests run): a small, telling selection.

For one benchmark: the first valid configuration (id order), the fewest and the most threads
per block, the largest product of the space file's ``kernel.tiling`` parameters, and one
configuration for every combination of the values of its ``kernel.code_paths`` parameters
that the constraints allow. Extremes and combinations are looked for in a seeded uniform
sample of the valid configurations (the whole space when it is small); among equals, a
configuration that runs at least two blocks at the emulation size is preferred, then the
one with the least tiling (quickest to compile), then the fewest threads in all (quickest
to emulate), and one a GPU would not run is
passed over when an ``accept`` test is given. ``wider`` adds uniformly drawn
configurations (``bat verify --random``).
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


def ci_selection(bench: Benchmark, size: ProblemSize | None = None,
                 accept: Callable[[dict[str, Any]], bool] | None = None) -> list[Selected]:
    """The configurations CI emulates for ``bench`` (see the module docstring), without repeats.

    ``accept`` (for example: a GPU would run it, bat.backends.emulated.gate) picks, for every
    criterion, the first acceptable configuration in order of preference.
    """
    size = size or bench.size("emulation")
    space = bench.space
    candidates = [space.config(space.unrank_valid(np.array([0]))[0]), *pool(bench)]
    values = dict(size.values)
    geometry = {id(c): bench.geometry(c, values) for c in candidates}

    def threads(c: dict) -> int:
        return math.prod(geometry[id(c)][1])

    tiling = _names(bench, "tiling")

    def work(c: dict) -> float:
        return math.prod(float(c[n]) for n in tiling)

    def cost(c: dict) -> tuple[bool, float, int]:  # one block only last, then least code, fewest threads
        blocks = math.prod(geometry[id(c)][0])
        return blocks < 2, work(c), threads(c) * blocks

    chosen: list[Selected] = [Selected(candidates[0], "first valid configuration")]

    def best(score: Callable[[dict], float], why: str, among: list[dict]) -> None:
        for c in sorted(among, key=lambda c: (-score(c), cost(c))):
            if accept is None or accept(c):
                chosen.append(Selected(c, why))
                return

    best(lambda c: -threads(c), "fewest threads per block", candidates)
    best(threads, "most threads per block", candidates)
    if tiling:
        best(work, f"largest {' x '.join(tiling)}", candidates)
    paths = _names(bench, "code_paths")
    for combo in itertools.product(*(space.parameters[space.names.index(p)].values for p in paths)):
        want = dict(zip(paths, combo, strict=True))
        matching = [c for c in candidates if all(c[k] == v for k, v in want.items())]
        best(lambda c: 0.0, "code path " + ", ".join(f"{k}={v}" for k, v in want.items()), matching)
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
