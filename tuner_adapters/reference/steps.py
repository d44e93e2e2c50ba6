"""Building blocks the reference strategies share: evaluating index rows,
rounding a point to the nearest valid configuration, drawing unevaluated ones.

Rounding to the nearest valid configuration is hand-written: no library
offers a nearest-neighbour query restricted to a constrained integer lattice.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np

from bat.core.problem import Problem
from bat.core.space import SearchSpace

#: spaces with at most this many valid configurations are searched exactly when rounding
EXACT_ROUNDING_LIMIT = 1 << 18
#: otherwise the nearest valid configuration is looked for among this many random valid ones
ROUNDING_SAMPLE = 4096


def row_key(row: np.ndarray) -> tuple[int, ...]:
    return tuple(int(v) for v in row)


def random_unevaluated(problem: Problem, rng: np.random.Generator, tries: int = 64) -> np.ndarray | None:
    """A uniformly drawn valid configuration not evaluated yet (None when all are)."""
    space = problem.space
    total = space.count_valid()
    if problem.stats.evaluated >= total:
        return None
    for _ in range(tries):
        for row in space.sample_valid(min(32, total), rng):
            if not problem.is_evaluated(space.config(row)):
                return row
    # almost everything is evaluated: look through the whole valid set in a random order
    for rank in rng.permutation(total):
        row = space.unrank_valid(np.array([rank]))[0]
        if not problem.is_evaluated(space.config(row)):
            return row
    return None


class NearestValid:
    """Rounds points of index space to the nearest valid configuration (Euclidean in indices).

    A point that rounds to a valid configuration is that configuration. Otherwise
    the nearest valid configuration is found exactly for spaces of up to
    ``EXACT_ROUNDING_LIMIT`` valid configurations, and among ``ROUNDING_SAMPLE``
    random valid ones (drawn once per run) for larger spaces. Ties go to the
    lowest flat id, so rounding is deterministic.
    """

    def __init__(self, space: SearchSpace, rng: np.random.Generator) -> None:
        self.space = space
        count = space.count_valid()
        if count <= EXACT_ROUNDING_LIMIT:
            self.candidates = space.from_ids(space.valid_ids())
        else:
            ranks = np.sort(rng.choice(count, size=ROUNDING_SAMPLE, replace=False))
            self.candidates = space.unrank_valid(ranks)

    def __call__(self, point: np.ndarray) -> np.ndarray:
        hi = self.space.radices - 1
        rounded = np.clip(np.rint(np.asarray(point, dtype=float)), 0, hi).astype(np.int64)
        if self.space.is_valid(rounded[None, :])[0]:
            return rounded
        dist = ((self.candidates - np.asarray(point, dtype=float)) ** 2).sum(axis=1)
        return self.candidates[int(np.argmin(dist))].copy()


def iter_product(ranges: Sequence[Sequence[int]], chunk: int = 1 << 14) -> Iterator[np.ndarray]:
    """Rows of the Cartesian product of per-parameter index lists, last parameter fastest."""
    sizes = [len(r) for r in ranges]
    total = int(np.prod(sizes, dtype=object))
    arrays = [np.asarray(r, dtype=np.int64) for r in ranges]
    strides = np.cumprod([1, *sizes[::-1]])[:-1][::-1]
    for start in range(0, total, chunk):
        flat = np.arange(start, min(start + chunk, total), dtype=np.int64)
        digits = (flat[:, None] // strides[None, :]) % np.asarray(sizes)[None, :]
        yield np.stack([a[digits[:, j]] for j, a in enumerate(arrays)], axis=1)


def evaluate_product(problem: Problem, ranges: Sequence[Sequence[int]],
                     memory: dict[tuple[int, ...], float]) -> None:
    """Evaluate every valid, not yet evaluated row of a product of index lists, in order.

    Each result's fitness goes into ``memory`` under the row's key.
    """
    space = problem.space
    for rows in iter_product(ranges):
        for row in rows[space.is_valid(rows)]:
            if problem.exhausted:
                return
            config = space.config(row)
            if not problem.is_evaluated(config):
                memory[row_key(row)] = problem.evaluate(config).fitness
