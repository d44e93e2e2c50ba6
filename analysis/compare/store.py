"""Finished runs on disk, one Parquet file each, written the moment a run completes.

``<out>/runs/<run_id>.parquet`` holds the run's trace with its metadata
(spec, seed, per-budget results) under the trace metadata key; the file is
written under a unique temporary name and renamed, so an interruption never leaves
a half-written run behind. A rerun of the same campaign reads the ids of the
files present and skips those runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from bat.trace import read_trace, write_trace


@dataclass
class RunRecord:
    """A finished run: its metadata (see ``execute.execute_run``) and its trace."""

    meta: dict[str, Any]
    trace: pd.DataFrame

    @property
    def run_id(self) -> str:
        return str(self.meta["run_id"])


class RunStore:
    """The ``runs/`` folder of a campaign's output directory."""

    def __init__(self, out: str | Path) -> None:
        self.root = Path(out) / "runs"
        self.root.mkdir(parents=True, exist_ok=True)

    def path(self, run_id: str) -> Path:
        return self.root / f"{run_id}.parquet"

    def done_ids(self) -> set[str]:
        return {p.stem for p in self.root.glob("*.parquet")}

    def write(self, record: RunRecord) -> Path:
        return write_trace(record.trace, record.meta, self.path(record.run_id))  # atomic, unique temporary name

    def read(self, run_id: str) -> RunRecord:
        frame, meta = read_trace(self.path(run_id))
        return RunRecord(meta, frame)
