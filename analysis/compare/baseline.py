"""The gate's baseline: an earlier ``bat compare``'s results.json, read and checked before any run.

``load_baseline`` refuses, naming the file and the entry, anything the gate
could not use: a file that is not JSON, no ``observations`` list, an
observation without label, benchmark, GPU or budget (an integer >= 1), or
whose ``perf`` is not a finite number >= 0 (``null``, a string, NaN).
``check_overlap`` then requires that at least one cell (label, benchmark,
GPU, budget) of the campaign about to run is in the baseline, so a gate can
never pass having compared nothing; it returns the cells that will be gated.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pandas as pd

from bat.analysis.compare.assess import CELL
from bat.campaign.design import Campaign
from bat.core.errors import DatasetError, InputLimitError
from bat.core.limits import MAX_DATA_BYTES, loads, read_bytes


def load_baseline(path: str | Path) -> pd.DataFrame:
    """The observations of an earlier ``bat compare`` (its results.json), every one checked."""
    path = Path(path)
    try:
        data = read_bytes(path, MAX_DATA_BYTES)
    except InputLimitError as exc:  # missing, not a regular file, over a limit: its own words name the file
        raise DatasetError(f"--baseline {exc}") from None
    try:
        raw = loads(data, f"--baseline {path}", finite=False)  # NaN: per field below
    except ValueError as exc:  # malformed, or over a parsing limit of bat.core.limits
        raise DatasetError(f"--baseline {path}: not a JSON file ({exc})") from None
    obs = raw.get("observations") if isinstance(raw, dict) else None
    if not isinstance(obs, list) or not obs:
        raise DatasetError(f"--baseline {path}: not a `bat compare` results.json (no 'observations' list)")
    for i, row in enumerate(obs):
        _check_observation(row, f"--baseline {path}: observations[{i}]")
    return pd.DataFrame([{k: row[k] for k in (*CELL, "perf")} for row in obs])


def _check_observation(row: Any, where: str) -> None:
    if not isinstance(row, dict):
        raise DatasetError(f"{where}: expected an object, got {json.dumps(row)[:60]}")
    for key in ("label", "benchmark", "gpu"):
        if not isinstance(row.get(key), str) or not row[key]:
            raise DatasetError(f"{where}.{key}: expected a non-empty string, got {json.dumps(row.get(key))}")
    budget = row.get("budget")
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
        raise DatasetError(f"{where}.budget: expected an integer >= 1, got {json.dumps(budget)}")
    perf = row.get("perf")
    if isinstance(perf, bool) or not isinstance(perf, int | float) or not (math.isfinite(perf) and perf >= 0):
        raise DatasetError(f"{where}.perf: expected a finite number >= 0, got {json.dumps(perf)}")


def check_overlap(campaign: Campaign, baseline: pd.DataFrame, source: str) -> list[str]:
    """The campaign's cells that the baseline holds ("label on benchmark/gpu at budget"); none is an error."""
    have = set(baseline[CELL].itertuples(index=False, name=None))
    cells = [(t.label, bench, gpu, b) for t in campaign.tuners for bench, gpu in campaign.targets
             for b in campaign.budgets]
    common = [c for c in cells if c in have]
    if not common:
        targets = sorted(set(baseline["benchmark"] + "/" + baseline["gpu"]))
        raise DatasetError(
            f"--baseline {source}: holds no cell of this campaign, so the gate would compare nothing; "
            f"it has labels {sorted(baseline['label'].unique())}, targets {targets}, "
            f"budgets {sorted(int(b) for b in baseline['budget'].unique())}")
    return ["{} on {}/{} at {}".format(*c) for c in common]
