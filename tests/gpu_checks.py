"""What the GPU tests require of a recording: every configuration a GPU accepts is ok.

Kept apart from the GPU tests so that a CPU test can show the requirement fails on a
recording with one incorrect or crashed configuration (it once let them pass).
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd


def failures(frame: pd.DataFrame, parameters: list[str], accepts: Callable[[dict], bool]) -> list[str]:
    """One line per recorded configuration that is not ok although a GPU accepts it."""
    out = []
    for row in frame.to_dict("records"):
        config = {p: row[p] for p in parameters}
        if row["status"] != "ok" and accepts(config):
            out.append(f"{config}: {row['status']}: {row.get('message', '')}")
    return out
