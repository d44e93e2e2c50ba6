"""Max speedup over median: median(time) / min(time) of one dataset.

Two definitions (METHODS.md, analysis 2), named in every result:

- ``"all"`` (default, the BAT 2.0 paper's Fig. 4): the median over every
  recorded configuration, failed ones counted as infinitely slow (numpy
  median: the mean of the two middle values);
- ``"valid"``: the median over ok configurations only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from bat.analysis.data import ok_times, times_failed_inf
from bat.core.dataset import Dataset
from bat.core.errors import DatasetError, UnknownNameError

Definition = Literal["all", "valid"]
DEFINITIONS: dict[str, str] = {
    "all": "median over every recorded configuration, failed ones counted as infinitely slow",
    "valid": "median over valid (ok) configurations only",
}


@dataclass(frozen=True)
class Speedup:
    """The speedup of the best configuration over the median one, and how it was taken."""

    value: float
    median_ms: float
    best_ms: float
    definition: str
    n_configs: int

    def to_dict(self) -> dict[str, object]:
        return {"value": self.value, "median_ms": self.median_ms, "best_ms": self.best_ms,
                "definition": self.definition, "definition_text": DEFINITIONS[self.definition],
                "n_configs": self.n_configs}


def max_speedup_over_median(dataset: Dataset, definition: Definition = "all") -> Speedup:
    """median / min of the dataset's times under ``definition`` ("all" or "valid")."""
    if definition == "all":
        times = times_failed_inf(dataset)
    elif definition == "valid":
        times = ok_times(dataset)
    else:
        raise UnknownNameError("speedup definition", definition, list(DEFINITIONS))
    best = float(np.min(times))
    if not np.isfinite(best):
        raise DatasetError(f"dataset {dataset.name} has no valid measurement")
    median = float(np.median(times))
    return Speedup(median / best, median, best, definition, len(times))
