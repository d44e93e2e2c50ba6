"""Where the profile searcher's counters come from: the dataset ("exact") or the model ("predicted").

A source gives the candidate configurations with their reacted ops
counters (columns in ``analysis.REACTED`` order) and the same counters for
the profiled configuration. Exact counters are read from the replayed
dataset (candidates: its valid rows). Predicted counters come from a
``CounterModel``; candidates are every valid configuration when the space
has fewer than ``score_limit``, otherwise a fresh uniform sample of
``sample_size`` valid configurations each step. The thread count is never
modelled: it is the dataset's ``threads`` column or the benchmark's launch
geometry (NaN, so no term, when neither exists).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from bat.benchmark import load_benchmark
from bat.counters.metrics import METRICS
from bat.dataset import Dataset
from bat.errors import BatError, TunerError
from bat.expressions import LAUNCH_FUNCTIONS, parse_expression
from bat.space import SearchSpace
from tuner_adapters.profile.bottlenecks import REACTED, local_overhead
from tuner_adapters.profile.model import CounterModel


def reacted_matrix(counters: pd.DataFrame, threads: np.ndarray) -> np.ndarray:
    """(n, k) reacted ops counters from short-named counter columns and thread counts."""
    cols = []
    for name in REACTED:
        if name == "LOC_O":
            cols.append(local_overhead(counters["LOC_ST"].to_numpy(float), counters["L2_WT"].to_numpy(float)))
        elif name == "threads":
            cols.append(np.asarray(threads, dtype=float))
        else:
            cols.append(counters[name].to_numpy(dtype=float))
    return np.asfortranarray(np.column_stack(cols))


def short_columns(frame: pd.DataFrame) -> pd.DataFrame:
    """The method's counters of a dataset frame under their short names (NaN where absent)."""
    return pd.DataFrame({s: frame[m].to_numpy(float) if m in frame.columns else np.full(len(frame), np.nan)
                         for s, m in METRICS.items()}, index=frame.index)


class Geometry:
    """Vectorised thread counts from a benchmark's launch expressions (None without them)."""

    def __init__(self, space: SearchSpace) -> None:
        self.exprs: dict[str, list[Any]] | None = None
        try:
            bench = load_benchmark(space.name)
        except BatError:
            return
        if not bench.launch:
            return
        names = {*space.names, *bench.problem_size, *bench.constants}
        self.env = {**bench.problem_size, **bench.constants}
        self.exprs = {key: [parse_expression(str(e), names, where=f"{bench.path}: launch.{key}",
                                             functions=LAUNCH_FUNCTIONS) for e in bench.launch[key]]
                      for key in ("grid", "block")}

    def threads(self, values: pd.DataFrame) -> np.ndarray:
        if self.exprs is None:
            return np.full(len(values), np.nan)
        env = {**self.env, **{c: values[c].to_numpy() for c in values.columns}}
        total = np.ones(len(values))
        for key in ("grid", "block"):
            for e in self.exprs[key]:
                total = total * np.broadcast_to(np.asarray(e.evaluate(env), dtype=float), total.shape)
        return total


class ExactSource:
    """Counters of every candidate read from the replayed dataset."""

    mode = "exact"

    def __init__(self, dataset: Dataset, space: SearchSpace) -> None:
        if not dataset.counters:
            raise TunerError(f"dataset {dataset.name} has no counter columns (Nsight Compute metrics); "
                             "the profile tuner needs a dataset with counters")
        frame = dataset.frame
        idx = space.encode(frame[list(space.names)])
        valid = space.is_valid(idx)
        counters = short_columns(frame)[valid]
        threads = (frame["threads"].to_numpy(float) if "threads" in frame.columns
                   else Geometry(space).threads(frame[list(space.names)]))[valid]
        self.ids = space.to_ids(idx[valid])
        self.matrix = reacted_matrix(counters, threads)
        self._row = {int(i): k for k, i in enumerate(self.ids)}
        self.describe = f"exact counters from dataset {dataset.name}; scoring its {len(self.ids)} valid rows"

    def candidates(self, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        return self.ids, self.matrix

    def profiled(self, pid: int, measured: Mapping[str, float], threads: float) -> np.ndarray:
        return self.matrix[self._row[pid]] if pid in self._row else _measured_row(measured, threads)


class PredictedSource:
    """Counters of candidates predicted by a counter model (whole space, or a sample per step)."""

    mode = "predicted"

    def __init__(self, model: CounterModel, space: SearchSpace, *, score_limit: int, sample_size: int) -> None:
        self.model, self.space, self.sample_size = model, space, sample_size
        self.geometry = Geometry(space)
        self.whole = space.count_valid() < score_limit
        self.ids: np.ndarray | None = None
        if self.whole:
            self.ids = space.valid_ids()
            self.matrix = self._predict(space.from_ids(self.ids))
            self._row = {int(i): k for k, i in enumerate(self.ids)}
            scope = f"scoring all {len(self.ids)} valid configurations"
        else:
            scope = f"scoring a uniform sample of {sample_size} valid configurations per step"
        self.describe = (f"predicted counters (decision trees from {model.source}, seed {model.seed}; "
                         f"the profiled configuration's measured); {scope}")

    def _predict(self, rows: np.ndarray) -> np.ndarray:
        values = self.space.decode(rows)
        return reacted_matrix(self.model.predict(values), self.geometry.threads(values))

    def candidates(self, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        if self.whole:
            assert self.ids is not None
            return self.ids, self.matrix
        rows = self.space.sample_valid(self.sample_size, rng)
        return self.space.to_ids(rows), self._predict(rows)

    def profiled(self, pid: int, measured: Mapping[str, float], threads: float) -> np.ndarray:
        # scores compare predictions of both configurations (the model's portability argument)
        if self.whole:
            return self.matrix[self._row[pid]]
        return self._predict(self.space.from_ids(np.array([pid])))[0]


class NoCounters:
    """No counters at all: candidates (all valid, or a sample per step) weigh the same.

    Only when the tuner is told to go on without counters (``without_counters="uniform"``).
    """

    mode = "none"

    def __init__(self, space: SearchSpace, *, score_limit: int, sample_size: int) -> None:
        self.space, self.sample_size = space, sample_size
        self.ids = space.valid_ids() if space.count_valid() < score_limit else None
        self.describe = "no counters: uniform random steps (without_counters='uniform')"

    def candidates(self, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        ids = self.ids if self.ids is not None else self.space.to_ids(self.space.sample_valid(self.sample_size, rng))
        return ids, np.zeros((len(ids), 0))


def _measured_row(measured: Mapping[str, float], threads: float) -> np.ndarray:
    frame = pd.DataFrame({k: [measured.get(k, np.nan)] for k in METRICS})
    return reacted_matrix(frame, np.array([threads]))[0]
