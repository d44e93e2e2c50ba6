"""Repeated times of a dataset's rows (its ``times_ms`` column), grouped by how many repeats each row has."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np


def repeat_groups(times: np.ndarray, rows: np.ndarray, minimum: int = 1) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """(rows, repeats matrix) per repeat count among ``rows`` of a ``times_ms`` column (at least ``minimum``)."""
    counts = np.fromiter((len(times[i]) for i in rows), dtype=int, count=len(rows))
    for k in np.unique(counts[counts >= minimum]):
        group = rows[counts == k]
        yield group, np.stack([np.asarray(times[i], dtype=float) for i in group])
