"""Distribution of configurations: every valid time divided by the median valid time.

Centring is multiplicative (time / median), so GPUs of different speed share
one axis; values below 1 are faster than the median configuration.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bat.analysis.data import ok_times
from bat.core.dataset import Dataset

QUANTILES = (0.0, 0.01, 0.05, 0.25, 0.5, 0.75, 0.95, 0.99, 1.0)


@dataclass(frozen=True)
class Distribution:
    """Valid times of one dataset relative to their median."""

    relative: np.ndarray  # time / median, sorted ascending
    median_ms: float

    def summary(self) -> dict[str, object]:
        qs = np.quantile(self.relative, QUANTILES)
        return {"centre": "median of valid configurations", "median_ms": self.median_ms,
                "n_valid": len(self.relative),
                "quantiles_of_time_over_median": {f"{q:g}": float(v) for q, v in zip(QUANTILES, qs, strict=True)}}


def distribution(dataset: Dataset) -> Distribution:
    """Valid times of ``dataset`` divided by their median."""
    times = np.sort(ok_times(dataset))
    median = float(np.median(times))
    return Distribution(times / median, median)
