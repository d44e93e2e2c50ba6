"""Performance portability matrix: how the best configuration of one GPU runs on another.

Cell (r, c) = time_c(best_c) / time_c(best_r): the relative performance on
GPU c of the configuration that is optimal on GPU r. When best_r failed on c
the cell is NaN with reason "invalid"; when c has no measurement of it
(sampled data) the reason is "missing". Neither is ever shown as 0.

With the GPUs' vendors given, the GPUs are grouped by vendor (NVIDIA, then
AMD, then unknown; the given order within a vendor) and the cells that cross
a vendor boundary are summarised per direction (tuned on NVIDIA, run on AMD
and back): their mean, their worst, and how many were empty.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from bat.core.dataset import Dataset, Status


@dataclass
class Portability:
    """The matrix (rows: tuned on, columns: run on) and the reason for every empty cell."""

    gpus: list[str]
    matrix: np.ndarray
    reasons: dict[tuple[str, str], str]
    vendors: list[str] = field(default_factory=list)  # per GPU, "" when unknown; empty when not given

    def across_vendors(self) -> dict[str, dict[str, float | int | None]]:
        """Per direction between two vendors ("NVIDIA->AMD"): mean and worst of the cells, empty cells."""
        out: dict[str, dict[str, float | int | None]] = {}
        named = sorted({v for v in self.vendors if v}, key=_vendor_rank)
        for a in named:
            for b in named:
                if a == b:
                    continue
                cells = [self.matrix[i, j] for i, va in enumerate(self.vendors) for j, vb in enumerate(self.vendors)
                         if va == a and vb == b]
                values = [float(v) for v in cells if np.isfinite(v)]
                out[f"{a}->{b}"] = {"mean": float(np.mean(values)) if values else None,
                                    "worst": min(values) if values else None,
                                    "cells": len(cells), "empty": len(cells) - len(values)}
        return out

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.matrix, index=self.gpus, columns=self.gpus)

    def to_dict(self) -> dict[str, object]:
        cells = {}
        for i, r in enumerate(self.gpus):
            for j, c in enumerate(self.gpus):
                v = self.matrix[i, j]
                cells[f"{r}->{c}"] = float(v) if np.isfinite(v) else self.reasons[(r, c)]
        return {"definition": "time_c(best_c) / time_c(best_r); rows r tuned on, columns c run on",
                "gpus": self.gpus, "cells": cells, "vendors": dict(zip(self.gpus, self.vendors, strict=False)),
                "across_vendors": self.across_vendors()}


#: order of the vendor groups in the matrix
VENDOR_ORDER = ("NVIDIA", "AMD")


def _vendor_rank(vendor: str) -> int:
    return VENDOR_ORDER.index(vendor) if vendor in VENDOR_ORDER else len(VENDOR_ORDER)


def portability_matrix(datasets: Mapping[str, Dataset], vendors: Mapping[str, str] | None = None) -> Portability:
    """The portability matrix over the GPUs of ``datasets`` (all on one space), grouped by ``vendors``."""
    gpus = sorted(datasets, key=lambda g: _vendor_rank((vendors or {}).get(g, ""))) if vendors else list(datasets)
    tables = {g: d.frame.set_index(list(d.parameters)) for g, d in datasets.items()}
    # a configuration listed twice (quarantined after its first row, bat.core.suspect) answers with its first row
    tables = {g: t[~t.index.duplicated(keep="first")] for g, t in tables.items()}
    best = {g: d.ok.nsmallest(1, "objective_ms")[list(d.parameters)].iloc[0] for g, d in datasets.items()}
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
    return Portability(gpus, matrix, reasons, [vendors.get(g, "") for g in gpus] if vendors else [])
