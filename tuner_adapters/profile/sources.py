"""Where the profile searcher's counters come from: the dataset ("exact"), a model ("predicted", "online").

A source gives the candidate configurations with their reacted ops
counters (columns in ``bottlenecks.REACTED`` order) and the same counters
for the profiled configuration. Exact counters are read from the replayed
dataset (candidates: its valid rows). Predicted counters come from a
``CounterModel`` fitted once on a recorded dataset; online counters from one
refitted on the counters this run has measured so far, whenever rows were
added. The online model is ``ready`` (steers the step) only from
``ONLINE_MIN_ROWS`` measured configurations on, and only while the median
relative error of its counters on its own held-out half is at most
``ONLINE_MAX_ERROR``; until then the step is uniform. (Without that gate it
steers by a few training rows, all of them slower than the profiled
configuration, and did worse than random search on the Coulomb data replayed
as if live: bench/RESULTS.md, "Profile tuner, online counters".)

Candidates of a model are every valid configuration when the space has
fewer than ``score_limit``, otherwise a fresh uniform sample of
``sample_size`` valid configurations each step. The thread count is never
modelled: it is the dataset's ``threads`` column or the target's launch
geometry (``TargetFacts.threads``; NaN, so no term, when neither exists).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
import pandas as pd

from bat.core.counters import METRICS
from bat.core.dataset import Dataset, Status
from bat.core.errors import TunerError
from bat.core.problem import EvalResult
from bat.core.space import SearchSpace
from bat.tuner_adapters.profile.bottlenecks import REACTED, local_overhead
from bat.tuner_adapters.profile.model import MODELLED, CounterModel

#: measured configurations before an online model steers the step
ONLINE_MIN_ROWS = 20
#: the largest median relative held-out error of an online model's counters that may steer the step
ONLINE_MAX_ERROR = 0.25
#: threads launched per configuration, from a frame of parameter values (``TargetFacts.threads``)
Threads = Callable[[pd.DataFrame], np.ndarray] | None


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


def thread_counts(threads: Threads, values: pd.DataFrame) -> np.ndarray:
    """Threads of each configuration from the launch geometry; NaN (no term) without one."""
    if threads is None:
        return np.full(len(values), np.nan)
    return np.asarray(threads(values), dtype=float)


def short_columns(frame: pd.DataFrame) -> pd.DataFrame:
    """The method's counters of a dataset frame under their short names (NaN where absent)."""
    return pd.DataFrame({s: frame[m].to_numpy(float) if m in frame.columns else np.full(len(frame), np.nan)
                         for s, m in METRICS.items()}, index=frame.index)


class ExactSource:
    """Counters of every candidate read from the replayed dataset."""

    mode = "exact"
    ready = True

    def __init__(self, dataset: Dataset, space: SearchSpace, threads: Threads) -> None:
        if not dataset.counters:
            raise TunerError(f"dataset {dataset.name} has no counter columns (Nsight Compute metrics); "
                             "the profile tuner needs a dataset with counters")
        frame = dataset.frame
        idx = space.encode(frame[list(space.names)])
        valid = space.is_valid(idx)
        counters = short_columns(frame)[valid]
        counts = (frame["threads"].to_numpy(float) if "threads" in frame.columns
                  else thread_counts(threads, frame[list(space.names)]))[valid]
        self.ids = space.to_ids(idx[valid])
        self.matrix = reacted_matrix(counters, counts)
        self._row = {int(i): k for k, i in enumerate(self.ids)}
        self.describe = f"exact counters from dataset {dataset.name}; scoring its {len(self.ids)} valid rows"

    def candidates(self, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        return self.ids, self.matrix

    def profiled(self, pid: int, measured: Mapping[str, float], threads: float) -> np.ndarray:
        return self.matrix[self._row[pid]] if pid in self._row else _measured_row(measured, threads)

    def observe(self, result: EvalResult) -> None:
        """Nothing to learn: every candidate's counters are known."""


class _ModelScoring:
    """Candidates scored by a counter model: the whole valid set (predicted once per model) or a sample."""

    def __init__(self, space: SearchSpace, threads: Threads, *, score_limit: int, sample_size: int) -> None:
        self.space, self.threads, self.sample_size = space, threads, sample_size
        self.whole = space.count_valid() < score_limit
        self.ids: np.ndarray | None = space.valid_ids() if self.whole else None
        self._whole_rows = space.from_ids(self.ids) if self.ids is not None else None
        self._row = {int(i): k for k, i in enumerate(self.ids)} if self.ids is not None else {}
        self.scope = (f"scoring all {len(self.ids)} valid configurations" if self.ids is not None
                      else f"scoring a uniform sample of {sample_size} valid configurations per step")

    def predict(self, model: CounterModel, rows: np.ndarray) -> np.ndarray:
        values = self.space.decode(rows)
        return reacted_matrix(model.predict(values), thread_counts(self.threads, values))

    def rows(self, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """Candidate ids and their value-index rows."""
        if self.ids is not None and self._whole_rows is not None:
            return self.ids, self._whole_rows
        rows = self.space.sample_valid(self.sample_size, rng)
        return self.space.to_ids(rows), rows


class PredictedSource(_ModelScoring):
    """Counters of candidates predicted by a counter model fitted once (whole space, or a sample per step)."""

    mode = "predicted"
    ready = True

    def __init__(self, model: CounterModel, space: SearchSpace, threads: Threads, *, score_limit: int,
                 sample_size: int) -> None:
        super().__init__(space, threads, score_limit=score_limit, sample_size=sample_size)
        self.model = model
        self.matrix = self.predict(model, self._whole_rows) if self._whole_rows is not None else None
        self.describe = (f"predicted counters (decision trees from {model.source}, seed {model.seed}; "
                         f"the profiled configuration's measured); {self.scope}")

    def candidates(self, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        if self.matrix is not None and self.ids is not None:  # the whole valid set, predicted once
            return self.ids, self.matrix
        ids, rows = self.rows(rng)
        return ids, self.predict(self.model, rows)

    def profiled(self, pid: int, measured: Mapping[str, float], threads: float) -> np.ndarray:
        # scores compare predictions of both configurations (the model's portability argument)
        if self.matrix is not None:
            return self.matrix[self._row[pid]]
        return self.predict(self.model, self.space.from_ids(np.array([pid])))[0]

    def observe(self, result: EvalResult) -> None:
        """Nothing to learn: the model was fitted before the run."""


class OnlineSource(_ModelScoring):
    """Counters predicted by a model refitted on the counters this run has measured so far.

    For a target with no recorded counters (a live GPU): every ok evaluation's counters
    (``EvalResult.extra``, which a counter-measuring backend fills) become a training row.
    """

    mode = "online"

    def __init__(self, space: SearchSpace, threads: Threads, *, seed: int, score_limit: int,
                 sample_size: int) -> None:
        super().__init__(space, threads, score_limit=score_limit, sample_size=sample_size)
        self.seed = seed
        self._rows: list[dict] = []
        self._fitted_on = 0
        self.model: CounterModel | None = None
        self.describe = (f"online counters (decision trees refitted on this run's measured counters, seed {seed}; "
                         f"uniform steps until {ONLINE_MIN_ROWS} are measured and the model's held-out median "
                         f"relative error is at most {ONLINE_MAX_ERROR:.0%}); {self.scope}")

    @property
    def ready(self) -> bool:
        if len(self._rows) < ONLINE_MIN_ROWS:
            return False
        return float(self._model().errors["relative_mae"].median()) <= ONLINE_MAX_ERROR

    def observe(self, result: EvalResult) -> None:
        """Keep an ok result's counters as a training row (a result without every modelled counter is skipped)."""
        metrics = [METRICS[c] for c in MODELLED]
        if result.ok and all(m in result.extra for m in metrics):
            self._rows.append({**result.config, "status": Status.OK.value,
                               **{m: result.extra[m] for m in metrics}})

    def _model(self) -> CounterModel:
        if self.model is None or self._fitted_on != len(self._rows):
            frame = pd.DataFrame(self._rows)
            self.model = CounterModel.fit_frame(frame, self.space, self.seed,
                                                f"{len(self._rows)} configurations measured in this run")
            self._fitted_on = len(self._rows)
        return self.model

    def candidates(self, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        ids, rows = self.rows(rng)
        if not self.ready:
            return ids, np.zeros((len(ids), 0))
        return ids, self.predict(self._model(), rows)

    def profiled(self, pid: int, measured: Mapping[str, float], threads: float) -> np.ndarray:
        return self.predict(self._model(), self.space.from_ids(np.array([pid])))[0]


class NoCounters:
    """No counters at all: candidates (all valid, or a sample per step) weigh the same.

    Only when the tuner is told to go on without counters (``without_counters="uniform"``).
    """

    mode = "none"
    ready = False

    def __init__(self, space: SearchSpace, *, score_limit: int, sample_size: int) -> None:
        self.space, self.sample_size = space, sample_size
        self.ids = space.valid_ids() if space.count_valid() < score_limit else None
        self.describe = "no counters: uniform random steps (without_counters='uniform')"

    def candidates(self, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        ids = self.ids if self.ids is not None else self.space.to_ids(self.space.sample_valid(self.sample_size, rng))
        return ids, np.zeros((len(ids), 0))

    def observe(self, result: EvalResult) -> None:
        """No counters to learn from."""


def _measured_row(measured: Mapping[str, float], threads: float) -> np.ndarray:
    frame = pd.DataFrame({k: [measured.get(k, np.nan)] for k in METRICS})
    return reacted_matrix(frame, np.array([threads]))[0]
