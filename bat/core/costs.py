"""What an evaluation replayed from a dataset costs: the time it took when it was recorded.

Simulated tuning time charges every evaluation its recorded compile time,
verification time and benchmark time (all in ms in the dataset, seconds
here). Verification comes from the column ``verify_ms`` or, in data imported
from Kernel Tuner caches, ``kt_verification_time`` (ms, as the cache
records it). Where a part is missing the charge falls back, row by row:

- benchmark time missing: the sum of the repeated kernel times
  (``times_ms``), and when those are missing too, the objective itself;
- compile or verification time missing: nothing is charged for it;
- a configuration that failed to compile (status ``compile_error``) is
  charged its compile time alone: it never reached the device.

The charge is kept in its three parts, because they run on different
resources (bat.core.schedule): compile on a compile worker, verification
and measurement on the device. ``recorded_costs`` returns the per-row parts
and their sum with the counts of every fallback, so a report can say what
the simulated time is made of. The replay backend and the analyses use this
one rule.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from bat.core.dataset import Status

#: Columns holding verification time (ms), in order of preference.
VERIFY_COLUMNS = ("verify_ms", "kt_verification_time")


@dataclass(frozen=True)
class RecordedCosts:
    """Per-row charge (seconds) and how many rows had each part recorded."""

    cost_s: np.ndarray  # the sum of the three parts below
    compile_s: np.ndarray
    verify_s: np.ndarray
    measure_s: np.ndarray
    rows: int
    compile_recorded: int
    verify_recorded: int
    benchmark_recorded: int
    from_repeats: int  # benchmark time missing: sum of the repeated times charged
    from_objective: int  # benchmark time and repeats missing: the objective charged
    compile_failures: int = 0  # rows that failed to compile: charged their compile time alone

    @property
    def falls_back(self) -> bool:
        """True when some row lacks a recorded compile, verification or benchmark time."""
        return (min(self.compile_recorded, self.verify_recorded, self.benchmark_recorded) < self.rows
                or self.compile_failures > 0)

    def describe(self) -> str:
        """One sentence: what each evaluation is charged, and where that falls back."""
        n = self.rows
        parts = [f"compile time recorded for {self.compile_recorded}/{n} rows",
                 f"verification time for {self.verify_recorded}/{n}",
                 f"benchmark time for {self.benchmark_recorded}/{n}"]
        text = "each evaluation is charged its recorded compile + verification + benchmark time (" + \
            ", ".join(parts) + ")"
        if not self.falls_back:
            return text
        fallbacks = []
        if self.from_repeats:
            fallbacks.append(f"{self.from_repeats} rows without benchmark time are charged the sum of their "
                             "repeated kernel times")
        if self.from_objective:
            fallbacks.append(f"{self.from_objective} rows without benchmark time or repeats are charged their "
                             "objective alone")
        if self.compile_recorded < n or self.verify_recorded < n:
            fallbacks.append("a missing compile or verification time is charged as 0")
        if self.compile_failures:
            fallbacks.append(f"{self.compile_failures} rows that failed to compile are charged their compile "
                             "time alone")
        return text + "; falls back: " + "; ".join(fallbacks)

    def to_dict(self) -> dict[str, object]:
        return {"rows": self.rows, "compile_recorded": self.compile_recorded,
                "verify_recorded": self.verify_recorded, "benchmark_recorded": self.benchmark_recorded,
                "from_repeats": self.from_repeats, "from_objective": self.from_objective,
                "compile_failures": self.compile_failures,
                "falls_back": self.falls_back, "description": self.describe()}


def recorded_costs(frame: pd.DataFrame) -> RecordedCosts:
    """The charge of every row of a dataset frame (see the module docstring for the rule)."""
    n = len(frame)
    compile_ms = frame["compile_ms"].to_numpy(dtype=float)
    verify_col = next((c for c in VERIFY_COLUMNS if c in frame.columns), None)
    verify_ms = (pd.to_numeric(frame[verify_col], errors="coerce").to_numpy(dtype=float) if verify_col
                 else np.full(n, np.nan))
    bench_ms = frame["benchmark_ms"].to_numpy(dtype=float)
    repeats = frame["times_ms"].map(lambda t: float(sum(t)) if len(t) else np.nan).to_numpy(dtype=float)
    objective = frame["objective_ms"].to_numpy(dtype=float)
    failed = (frame["status"] == Status.COMPILE_ERROR.value).to_numpy()
    has_bench = np.isfinite(bench_ms) & ~failed
    use_repeats = ~has_bench & ~failed & np.isfinite(repeats)
    use_objective = ~has_bench & ~use_repeats & ~failed & np.isfinite(objective)
    run_ms = np.where(has_bench, bench_ms, np.where(use_repeats, repeats, np.where(use_objective, objective, 0.0)))
    compile_part, verify_part = np.nan_to_num(compile_ms), np.where(failed, 0.0, np.nan_to_num(verify_ms))
    total_ms = compile_part + verify_part + run_ms
    return RecordedCosts(total_ms / 1000.0, compile_part / 1000.0, verify_part / 1000.0, run_ms / 1000.0, n,
                         int(np.isfinite(compile_ms).sum()), int(np.isfinite(verify_ms).sum()),
                         int(has_bench.sum()), int(use_repeats.sum()), int(use_objective.sum()), int(failed.sum()))
