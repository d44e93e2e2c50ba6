"""Measurements no GPU can produce, refused at import (or quarantined on request), never warned about.

What makes a row suspect is bat.core.suspect's. ``bat import`` refuses a file
with any, naming the first and the count; with ``--allow-suspect`` the rows
stay in the dataset quarantined: status ``missing`` (so no analysis, replay
or best time uses them), the reason in the ``suspect`` column and in the
message, the original objective in ``suspect_objective_ms``, and the count in
the dataset's notes and ``extra["quarantined"]``, which every listing of the
dataset shows.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from bat.core.dataset import DatasetMeta
from bat.core.errors import DatasetError
from bat.core.suspect import quarantine_rows, suspect_reasons


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
    config = {k: v.item() if isinstance(v, np.generic) else v for k, v in config.items()}
    if not allow:
        raise DatasetError(f"{where}: row {first} {config}: {reasons.iat[first]} ({len(flagged)} suspect rows in "
                           "all); fix the file, or import with --allow-suspect to keep them quarantined")
    frame = quarantine_rows(frame, reasons)
    meta.extra = {**meta.extra, "quarantined": len(flagged)}
    note = f"{len(flagged)} suspect rows quarantined at import (--allow-suspect; column 'suspect')"
    meta.notes = f"{meta.notes}; {note}" if meta.notes else note
    return frame, len(flagged)
