"""Performance portability matrix: how the best configuration of one GPU runs on another.

Cell (r, c) = time_c(best_c) / time_c(best_r): the relative performance on
GPU c of the configuration that is optimal on GPU r. When best_r failed on c
the cell is NaN with reason "invalid"; when c has no measurement of it
(sampled data) the reason is "missing". Neither is ever shown as 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from bat.core.dataset import Dataset, Status


@dataclass
class Portability:
    """The matrix (rows: tuned on, columns: run on) and the reason for every empty cell."""

    gpus: list[str]
    matrix: np.ndarray
    reasons: dict[tuple[str, str], str]

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.matrix, index=self.gpus, columns=self.gpus)

    def to_dict(self) -> dict[str, object]:
        cells = {}
        for i, r in enumerate(self.gpus):
            for j, c in enumerate(self.gpus):
                v = self.matrix[i, j]
                cells[f"{r}->{c}"] = float(v) if np.isfinite(v) else self.reasons[(r, c)]
        return {"definition": "time_c(best_c) / time_c(best_r); rows r tuned on, columns c run on",
                "gpus": self.gpus, "cells": cells}


def portability_matrix(datasets: Mapping[str, Dataset]) -> Portability:
    """The portability matrix over the GPUs of ``datasets`` (all on one space)."""
    gpus = list(datasets)
    tables = {g: d.frame.set_index(list(d.parameters)) for g, d in datasets.items()}
    best = {g: d.ok.loc[d.ok["objective_ms"].idxmin(), list(d.parameters)] for g, d in datasets.items()}
    matrix = np.full((len(gpus), len(gpus)), np.nan)
    reasons: dict[tuple[str, str], str] = {}
    for i, r in enumerate(gpus):
        key = tuple(best[r]) if len(best[r]) > 1 else best[r].iloc[0]
        for j, c in enumerate(gpus):
            table = tables[c]
            if key not in table.index:
                reasons[(r, c)] = "missing"
                continue
            row = table.loc[key]
            if row["status"] != Status.OK.value:
                reasons[(r, c)] = "invalid"
                continue
            matrix[i, j] = datasets[c].best_ms / float(row["objective_ms"])
    return Portability(gpus, matrix, reasons)
