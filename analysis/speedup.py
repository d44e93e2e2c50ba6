"""Max speedup over median: median(time) / min(time) of one dataset.

Two definitions (METHODS.md, analysis 2), named in every result:

- ``"all"`` (default, the BAT 2.0 paper's Fig. 4): the median over every
  recorded configuration, failed ones counted as infinitely slow (numpy
  median: the mean of the two middle values);
- ``"valid"``: the median over ok configurations only.

Max speedup over the default configuration: default time / best time, the
default being the space's ``default`` (a T1 file's Default values). It is
None, with the reason, when the space names no default, the data has no row
for it (a default that violates the space's constraints is never measured)
or its row failed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

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


@dataclass(frozen=True)
class OverDefault:
    """The speedup of the best configuration over the default one, or why there is none."""

    value: float | None
    default_ms: float | None
    best_ms: float
    default: dict[str, Any] | None
    reason: str = ""  # "" when measured

    def to_dict(self) -> dict[str, object]:
        return {"value": self.value, "default_ms": self.default_ms, "best_ms": self.best_ms,
                "default": self.default, "reason": self.reason}


def speedup_over_default(dataset: Dataset, default: Mapping[str, Any] | None) -> OverDefault:
    """default time / best time of the dataset (see the module docstring)."""
    ok = ok_times(dataset)
    if not len(ok):
        raise DatasetError(f"dataset {dataset.name} has no valid measurement")
    best = float(np.min(ok))
    if not default:
        return OverDefault(None, None, best, None, "the space names no default configuration")
    params = list(dataset.parameters)
    frame = dataset.frame
    match = np.logical_and.reduce([frame[p].to_numpy() == default[p] for p in params])
    rows = frame[match]
    if rows.empty:
        return OverDefault(None, None, best, dict(default), "the data has no row for the default configuration "
                           "(one that violates the space's constraints is never measured)")
    row = rows.iloc[0]
    if row["status"] != "ok":
        return OverDefault(None, None, best, dict(default), f"the default configuration failed ({row['status']})")
    default_ms = float(row["objective_ms"])
    return OverDefault(default_ms / best, default_ms, best, dict(default))
