"""The search-space size table: cardinality, constrained, valid per GPU, reduced, reduced constrained.

"Reduced" keeps only the important parameters (``importance.reduced_parameters``):
its cardinality is the product of their value counts, and its constrained
size is the number of distinct combinations of their values among the
constrained configurations (the valid set projected onto them).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from bat.core.dataset import Dataset
from bat.core.space import SearchSpace


@dataclass
class SizeRow:
    """One benchmark's sizes."""

    benchmark: str
    cardinality: int
    constrained: int
    valid: dict[str, int]
    reduced_parameters: list[str] | None
    reduced: int | None
    reduced_constrained: int | None

    def to_dict(self) -> dict[str, object]:
        return dict(self.__dict__)


def projected_count(space: SearchSpace, keep: Sequence[str]) -> int:
    """Distinct value combinations of ``keep`` among the valid configurations of ``space``."""
    cols = [space.names.index(p) for p in keep]
    if not cols:
        return 1
    radices = space.radices[cols]
    strides = np.concatenate([np.cumprod(radices[::-1])[::-1][1:], [1]])
    seen = np.zeros(0, dtype=np.int64)
    for chunk in space.iter_valid():
        seen = np.union1d(seen, chunk[:, cols] @ strides)
    return len(seen)


def size_row(space: SearchSpace, datasets: Mapping[str, Dataset],
             reduced: Sequence[str] | None = None) -> SizeRow:
    """The size table row of one benchmark (reduced sizes only when ``reduced`` is given)."""
    valid = {g: len(d.ok) for g, d in datasets.items()}
    if reduced is None:
        return SizeRow(space.name, space.cardinality, space.count_valid(), valid, None, None, None)
    card = int(np.prod([space.radices[space.names.index(p)] for p in reduced], dtype=object))
    return SizeRow(space.name, space.cardinality, space.count_valid(), valid, list(reduced),
                   card, projected_count(space, reduced))
