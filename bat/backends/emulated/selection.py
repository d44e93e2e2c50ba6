"""Which configurations of a kernel CI emulates (and the GPU tests run): a small, telling selection.

For one benchmark: the first valid configuration (id order), the fewest and the most threads
per block, the largest product of the space file's ``kernel.tiling`` parameters, and one
configuration for every combination of the values of its ``kernel.code_paths`` parameters
that the constraints allow. Extremes and combinations are looked for in a seeded uniform
sample of the valid configurations (the whole space when it is small), among those whose
edge size (bat.backends.emulated.edges) gives two blocks in every tiled dimension, then
among those that run at least two blocks at the emulation size itself, when there are any;
among equals, the one with the least tiling, then the fewest threads in all. Every parameter
a criterion is not about is then lowered to its smallest value that keeps the configuration
valid (and its blocks as they were): an extreme in one dimension is plain in the others, and quick to
compile (NVRTC takes a minute to unroll Dedispersion's channel loop 1,536 times, which
changes nothing on the CPU; test_kernels_compile.py compiles such extremes). One a GPU
would not run is passed over when an ``accept`` test is given. ``wider`` adds uniformly
drawn configurations (``bat verify --random``).
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from bat.backends.emulated.edges import edge_size
from bat.core.benchmark import Benchmark, ProblemSize
from bat.core.errors import SpaceSpecError
from bat.core.expressions import LAUNCH_FUNCTIONS, parse_expression

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


def _shapes(bench: Benchmark, configs: list[dict[str, Any]], values: dict[str, Any]) -> dict[tuple, tuple[int, int]]:
    """(blocks, threads per block) of each configuration (keyed by its values), the launch expressions
    evaluated over all of them at once; one whose counts are not positive integers is left out (the
    scalar ``Benchmark.geometry`` says what is wrong with it)."""
    names = bench.space.names
    if not configs or not all(bench.launch.get(key) for key in ("grid", "block")):
        return {}
    env = {**bench.problem_size, **values, **bench.constants, **{n: np.array([c[n] for c in configs]) for n in names}}
    counts = []
    for key in ("grid", "block"):
        total = np.ones(len(configs))
        for k, text in enumerate(bench.launch[key]):
            where = f"{bench.path}: launch.{key}[{k}]"
            expr = parse_expression(str(text), env, where=where, functions=LAUNCH_FUNCTIONS)
            dim = np.broadcast_to(np.asarray(expr.evaluate(env), dtype=float), total.shape)
            total = np.where((dim >= 1) & (dim == np.floor(dim)), total * dim, np.nan)
        counts.append(total)
    return {tuple(c[n] for n in names): (int(b), int(t)) for c, b, t in zip(configs, *counts, strict=True)
            if not (np.isnan(b) or np.isnan(t))}


def ci_selection(bench: Benchmark, size: ProblemSize | None = None,
                 accept: Callable[[dict[str, Any]], bool] | None = None) -> list[Selected]:
    """The configurations CI emulates for ``bench`` (see the module docstring), without repeats.

    ``accept`` (for example: a GPU would run it, bat.backends.emulated.gate) picks, for every
    criterion, the first acceptable configuration in order of preference.
    """
    space = bench.space
    values = dict((size or bench.size("emulation")).values)
    tiling, paths = _names(bench, "tiling"), _names(bench, "code_paths")
    block_text = " ".join(str(e) for e in bench.launch.get("block", []))
    shape = [n for n in space.names if re.search(rf"\b{n}\b", block_text)]

    candidates = [space.config(space.unrank_valid(np.array([0]))[0]), *pool(bench)]
    # (blocks, threads per block) of each configuration seen; the candidates' all at once
    shapes = _shapes(bench, candidates, values)

    def geometry(c: dict) -> tuple[int, int]:
        key = tuple(c[n] for n in space.names)
        if key not in shapes:
            grid, block = bench.geometry(c, values)
            shapes[key] = (math.prod(grid), math.prod(block))
        return shapes[key]

    def threads(c: dict) -> int:
        return geometry(c)[1]

    def blocks(c: dict) -> int:
        return geometry(c)[0]

    edged: dict[tuple, bool] = {}

    def at_edges(c: dict) -> bool:
        """Two blocks in every tiled dimension at the configuration's edge size."""
        key = tuple(c[n] for n in space.names)
        if key not in edged:
            edged[key] = edge_size(bench, c, size or bench.size("emulation")).two_blocks
        return edged[key]

    def work(c: dict) -> float:
        return math.prod(float(c[n]) for n in tiling)

    def valid(c: dict) -> bool:
        return bool(space.is_valid(space.index(c)[None, :])[0])

    def simplest(c: dict, keep: set[str]) -> dict:
        """``c`` with every other parameter at its smallest value that keeps it valid and multi-block."""
        for name in space.names:
            if name in keep:
                continue
            for value in sorted(space.parameters[space.names.index(name)].values):
                trial = {**c, name: value}
                if value == c[name] or (valid(trial) and (blocks(trial) >= 2 or blocks(c) < 2)
                                        and (at_edges(trial) or not at_edges(c))):
                    c = trial
                    break
        return c

    chosen: list[Selected] = [Selected(candidates[0], "first valid configuration")]

    def at_edges_first(ranked: list[dict]) -> Iterator[dict]:
        """``ranked`` with the configurations at their edges first, each group in its order: a stable sort on
        ``not at_edges``, whose edge sizes are worked out only as far as the caller reads."""
        later = []
        for c in ranked:
            if at_edges(c):
                yield c
            else:
                later.append(c)
        yield from later

    def best(score: Callable[[dict], float], why: str, among: list[dict], keep: set[str]) -> None:
        ranked = sorted(among, key=lambda c: (blocks(c) < 2, -score(c), work(c), threads(c) * blocks(c)))
        for c in (simplest(c, keep | set(paths)) for c in at_edges_first(ranked)):
            if accept is None or accept(c):
                chosen.append(Selected(c, why))
                return

    best(lambda c: -threads(c), "fewest threads per block", candidates, set(shape))
    best(threads, "most threads per block", candidates, set(shape))
    if tiling:
        best(work, f"largest {' x '.join(tiling)}", candidates, set(tiling))
    for combo in itertools.product(*(space.parameters[space.names.index(p)].values for p in paths)):
        want = dict(zip(paths, combo, strict=True))
        matching = [c for c in candidates if all(c[k] == v for k, v in want.items())]
        best(lambda c: 0.0, "code path " + ", ".join(f"{k}={v}" for k, v in want.items()), matching, set())
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
