"""Replay backend: answers evaluations from a recorded dataset, without a GPU.

A configuration the dataset lacks is reported as ``missing`` (counted by the
problem like any failure, never treated as slow); a recorded failure returns
its recorded status. The cost of an evaluation is what it took when it was
recorded: compile time plus benchmark time (or the sum of the repeated
times when the benchmark time was not recorded).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from bat.dataset import RESOURCE_COLUMNS, Dataset, Status, counter_columns
from bat.problem import EvalResult


class ReplayBackend:
    """Looks configurations up in ``dataset``."""

    name = "replay"

    def __init__(self, dataset: Dataset) -> None:
        self.dataset = dataset
        frame = dataset.frame
        self._extra_cols = [c for c in (*RESOURCE_COLUMNS, *counter_columns(frame)) if c in frame.columns]
        self._status = frame["status"].to_numpy()
        self._objective = frame["objective_ms"].to_numpy(dtype=float)
        self._times = frame["times_ms"].to_list()
        self._compile = frame["compile_ms"].to_numpy(dtype=float)
        self._bench = frame["benchmark_ms"].to_numpy(dtype=float)
        self._message = frame["message"].to_list()
        self._extra = frame[self._extra_cols].to_numpy(dtype=float) if self._extra_cols else None
        self.missing = 0

    def describe(self) -> str:
        m = self.dataset.meta
        where = m.gpu_name or m.gpu
        when = f", measured {m.date}" if m.date else ""
        return f"replaying {len(self.dataset.frame)} recorded configurations of {m.benchmark} on {where}{when}"

    def lookup(self, config: Mapping[str, Any]) -> int | None:
        """Row number of ``config`` in the dataset, or None."""
        return self.dataset.row_of(config)

    def evaluate(self, config: Mapping[str, Any]) -> EvalResult:
        i = self.lookup(config)
        cfg = dict(config)
        if i is None:
            self.missing += 1
            return EvalResult(config=cfg, status=Status.MISSING, message="not in the recorded dataset")
        times = tuple(self._times[i])
        compile_ms = _num(self._compile[i])
        bench_ms = _num(self._bench[i])
        if bench_ms is None:
            bench_ms = float(sum(times))
        cost_s = ((compile_ms or 0.0) + bench_ms) / 1000.0
        status = Status(self._status[i])
        extra = {}
        if self._extra is not None:
            extra = {c: float(v) for c, v in zip(self._extra_cols, self._extra[i], strict=True) if not math.isnan(v)}
        return EvalResult(
            config=cfg,
            status=status,
            objective_ms=float(self._objective[i]) if status is Status.OK else None,
            times_ms=times,
            compile_ms=compile_ms,
            cost_s=cost_s,
            message=str(self._message[i]),
            extra=extra,
        )

    def close(self) -> None:
        """Nothing to release."""


def _num(v: float) -> float | None:
    return None if math.isnan(v) else float(v)

