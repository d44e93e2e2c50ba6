"""Rows no GPU can produce: why each is suspect, and how it is quarantined (kept, but out of every time).

A row measured ok whose time is negative, zero, NaN or infinite (its ``objective_ms`` or any of its
``times_ms``), and every repeat of a configuration already in the table, is suspect. Quarantined, it
keeps its values for the record (the reason in the ``suspect`` column and the message, the original
objective in ``suspect_objective_ms``) but has status ``missing``, so no replay, best time, analysis or
export uses it. ``bat import`` refuses suspect rows unless ``--allow-suspect`` (bat.formats.suspect);
``Dataset.load`` quarantines those a Parquet file still holds and bat.core.quarantine marks every output
drawn on it. Vectorised: a dataset of 10^6 rows is checked in well under a second.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd


def suspect_reasons(frame: pd.DataFrame, parameters: Sequence[str]) -> pd.Series:
    """Per row, why it is suspect ("" for a clean row); ``times_ms`` holds a list (or None) per row."""
    import pandas as pd

    reasons = np.full(len(frame), "", dtype=object)  # a Series only at the end: a masked set on one is slow
    ok = (frame["status"] == "ok").to_numpy()
    objective = pd.to_numeric(frame["objective_ms"], errors="coerce").to_numpy(dtype=float)
    bad = ok & ~(np.isfinite(objective) & (objective > 0))
    reasons[bad] = np.array([f"objective_ms {v} is not a positive finite time" for v in objective[bad]], dtype=object)
    times = [() if t is None else t for t in frame["times_ms"]]
    lengths = np.fromiter(map(len, times), dtype=np.int64, count=len(times))
    flat = np.fromiter(itertools.chain.from_iterable(times), dtype=float, count=int(lengths.sum()))
    rows = np.repeat(np.arange(len(times)), lengths)[~(np.isfinite(flat) & (flat > 0))]
    bad_times = ok & (np.bincount(rows, minlength=len(times)) > 0) & (reasons == "")
    reasons[bad_times] = "times_ms holds a time that is not positive and finite"
    if parameters:  # pandas refuses an empty subset; with no parameter there is no configuration to repeat
        repeated = frame.duplicated(subset=list(parameters), keep="first").to_numpy()
        reasons[repeated & (reasons == "")] = "a repeat of a configuration already in the file"
    return pd.Series(reasons, index=frame.index, dtype=object)


def quarantine_rows(frame: pd.DataFrame, reasons: pd.Series) -> pd.DataFrame:
    """A copy of ``frame`` with the rows that have a reason quarantined (see the module docstring)."""
    import pandas as pd

    flagged = (reasons != "").to_numpy()
    frame = frame.copy()
    frame["suspect"] = reasons.to_numpy() if "suspect" not in frame else np.where(flagged, reasons, frame["suspect"])
    frame["suspect_objective_ms"] = np.where(flagged, pd.to_numeric(frame["objective_ms"], errors="coerce"),
                                             frame.get("suspect_objective_ms", np.nan))
    rows = frame.index[flagged]
    frame.loc[rows, "status"] = "missing"
    frame.loc[rows, "objective_ms"] = np.nan
    frame.loc[rows, "message"] = ["quarantined: " + r for r in reasons[flagged]]
    return frame
