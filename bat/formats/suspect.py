"""Measurements no GPU can produce, refused at import (or quarantined on request), never warned about.

A row measured ok whose time is negative, zero, NaN or infinite (its
``objective_ms`` or any of its ``times_ms``), and every repeat of a
configuration already in the file, is suspect. ``bat import`` refuses a file
with any, naming the first and the count; with ``--allow-suspect`` the rows
stay in the dataset quarantined: status ``missing`` (so no analysis, replay
or best time uses them), the reason in the ``suspect`` column and in the
message, the original objective in ``suspect_objective_ms``, and the count in
the dataset's notes and ``extra["quarantined"]``, which every listing of the
dataset shows.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from bat.core.dataset import DatasetMeta, Status
from bat.core.errors import DatasetError


def _bad_time(value: Any) -> bool:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return True
    return not (math.isfinite(number) and number > 0)


def suspect_reasons(frame: pd.DataFrame, parameters: Sequence[str]) -> pd.Series:
    """Per row, why it is suspect ("" for a clean row)."""
    reasons = pd.Series("", index=frame.index, dtype=object)
    ok = frame["status"] == Status.OK.value
    objective = pd.to_numeric(frame["objective_ms"], errors="coerce").to_numpy(dtype=float)
    bad = ok.to_numpy() & ~(np.isfinite(objective) & (objective > 0))
    reasons[bad] = [f"objective_ms {v} is not a positive finite time" for v in objective[bad]]
    for i, (is_ok, times) in enumerate(zip(ok, frame["times_ms"], strict=True)):
        if is_ok and not reasons.iat[i] and times is not None and any(_bad_time(t) for t in np.atleast_1d(times)):
            reasons.iat[i] = "times_ms holds a time that is not positive and finite"
    repeated = frame.duplicated(subset=list(parameters), keep="first").to_numpy()
    reasons[repeated & (reasons == "").to_numpy()] = "a repeat of a configuration already in the file"
    return reasons


def refuse_or_quarantine(frame: pd.DataFrame, parameters: Sequence[str], meta: DatasetMeta, where: str, *,
                         allow: bool) -> tuple[pd.DataFrame, int]:
    """The frame with no suspect row: DatasetError naming the first one, or with ``allow`` the rows
    quarantined (see the module docstring); the number quarantined comes back."""
    reasons = suspect_reasons(frame, parameters)
    flagged = np.flatnonzero((reasons != "").to_numpy())
    if not len(flagged):
        return frame, 0
    first = int(flagged[0])
    config = {p: frame[p].iat[first] for p in parameters}
    config = {k: v.item() if hasattr(v, "item") else v for k, v in config.items()}
    if not allow:
        raise DatasetError(f"{where}: row {first} {config}: {reasons.iat[first]} ({len(flagged)} suspect rows in "
                           "all); fix the file, or import with --allow-suspect to keep them quarantined")
    frame = frame.copy()
    frame["suspect"] = reasons.to_numpy()
    frame["suspect_objective_ms"] = np.where(reasons != "", pd.to_numeric(frame["objective_ms"], errors="coerce"),
                                             np.nan)
    rows = frame.index[flagged]
    frame.loc[rows, "status"] = Status.MISSING.value
    frame.loc[rows, "objective_ms"] = np.nan
    frame.loc[rows, "message"] = ["quarantined: " + r for r in reasons.iloc[flagged]]
    meta.extra = {**meta.extra, "quarantined": len(flagged)}
    note = f"{len(flagged)} suspect rows quarantined at import (--allow-suspect; column 'suspect')"
    meta.notes = f"{meta.notes}; {note}" if meta.notes else note
    return frame, len(flagged)
