"""Curves of a leaderboard: convergence from the stored traces, fixed-target ECDFs from the stored hitting times.

Convergence: for each (tuner, target), the runs at the campaign's largest
budget; after the k-th charged evaluation, the run's relative performance is
the best known time over the best time found so far (0 before any
configuration ran). The curve is the median over runs with the interquartile
band (Q1, Q3).

ECDF: the share of (run, fixed target) pairs a tuner reached within k
evaluations, k = 1..budget, from the hitting times ``bat compare`` stored
(``methodology.hitting_times``: the fixed targets are 1.5 to 1.01 x the
optimum and the noise-aware optimum set); a pair never reached counts as
not reached at every k.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def run_curve(run: dict[str, Any], budget: int) -> np.ndarray:
    """Relative performance after 1..``budget`` charged evaluations of one stored run (held after its end)."""
    trace, best_known = run["trace"], run["meta"].get("best_known_ms")
    charged = np.cumsum(np.asarray(trace.get("charged", []), dtype=bool))
    best = np.array([np.nan if v is None else v for v in trace.get("best_so_far_ms", [])], dtype=float)
    perf = np.zeros(budget)
    if best_known is None or not len(best):
        return perf
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(np.isfinite(best) & (best > 0), best_known / best, 0.0)
    for k in range(1, budget + 1):
        rows = np.flatnonzero(charged <= k)
        perf[k - 1] = rel[rows[-1]] if len(rows) else 0.0
    return perf


def curves(runs: list[dict[str, Any]], budget: int) -> dict[str, dict[str, Any]]:
    """Per tuner label: the median and quartiles over its runs at ``budget`` (``runs``: one target's)."""
    by_label: dict[str, list[np.ndarray]] = {}
    for run in runs:
        if max(run["meta"].get("budgets") or [0]) == budget:
            by_label.setdefault(run["meta"]["label"], []).append(run_curve(run, budget))
    out = {}
    for label, rows in sorted(by_label.items()):
        stack = np.vstack(rows)
        q1, median, q3 = np.percentile(stack, [25, 50, 75], axis=0)
        out[label] = {"runs": len(rows), "median": median.round(6).tolist(), "q1": q1.round(6).tolist(),
                      "q3": q3.round(6).tolist()}
    return out


def ecdf(hits: list[dict[str, Any]], budget: int) -> dict[str, dict[str, Any]]:
    """Per tuner label: the share of its (run, fixed target) pairs in ``hits`` reached within 1..``budget``."""
    by_label: dict[str, list[float]] = {}
    for row in hits:
        by_label.setdefault(row["label"], []).append(np.inf if row.get("evaluations") is None
                                                     else float(row["evaluations"]))
    steps = np.arange(1, budget + 1)
    return {label: {"pairs": len(v), "share": (np.asarray(v)[None, :] <= steps[:, None]).mean(axis=1)
                    .round(6).tolist()} for label, v in sorted(by_label.items())}
