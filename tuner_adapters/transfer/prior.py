"""The prior of a transfer tuner: the other GPUs' measured data, aligned with the target's space.

``prior_of(problem, tuner)`` reads ``problem.facts.others`` (bat.core.facts)
and keeps, for each source GPU, the configurations that are in the target's
space and satisfy its constraints (the rest are skipped and counted), as
sorted flat ids (bat.core.space) with two views of their times on that GPU:
the log of the time over the GPU's best time, and the normalised rank (0 for
its fastest configuration, 1 for its slowest, 1 for a configuration that
failed there). A repeated configuration keeps its best time. A prior with no
usable configuration, or none at all, is a one-line TunerError.

The alignment does not depend on the seed, so it is made once per prior and
space and cached in-process, keyed by the identity of the prior's datasets
(the cache keeps them alive, so an identity is never reused while cached).

``Walk`` is the loop the three tuners share: it evaluates flat ids through
the problem, keeps what each gave, and draws unevaluated valid
configurations at random in a stream that never reads the budget (so a
tuner built on it can be budget-agnostic).
"""

from __future__ import annotations

import warnings
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from bat.core.dataset import Status
from bat.core.errors import TunerError
from bat.core.problem import Problem

if TYPE_CHECKING:
    import pandas as pd

    from bat.core.dataset import Dataset
    from bat.core.space import SearchSpace

#: priors (with their aligned data) kept in-process
CACHE_SIZE = 16
#: configurations per draw of the random stream
RANDOM_BATCH = 256


@dataclass(frozen=True)
class Prior:
    """The sources' data on the target's space: one row per configuration measured on some source."""

    #: source GPU ids, sorted (the columns of the arrays below)
    sources: tuple[str, ...]
    #: (n,) sorted flat ids of the target's space, valid there, measured on at least one source
    ids: np.ndarray
    #: (n, S) log(time / that source's best time); NaN where the source has no ok measurement
    log_time: np.ndarray
    #: (n, S) normalised rank on the source in [0, 1]; 1 where it failed there, NaN where not measured
    rank: np.ndarray
    #: rows of the prior skipped (not in the target's space, or violating its constraints)
    skipped: int
    #: what a tuner derives from this prior whatever the seed (a fitted model), kept with the cached prior
    memo: dict = field(default_factory=dict, compare=False, repr=False)

    def mean_log_time(self) -> np.ndarray:
        """(n,) mean over the sources that measured it ok (NaN when none did)."""
        with warnings.catch_warnings():  # a row no source measured ok: "mean of empty slice"
            warnings.simplefilter("ignore", RuntimeWarning)
            return np.nanmean(self.log_time, axis=1)

    def mean_rank(self) -> np.ndarray:
        """(n,) mean normalised rank over the sources that measured it."""
        return np.nanmean(self.rank, axis=1)

    def position(self, ids: np.ndarray) -> np.ndarray:
        """Row of each flat id in the prior, -1 for those it does not hold."""
        if not len(self.ids):
            return np.full(len(ids), -1, dtype=np.int64)
        at = np.minimum(np.searchsorted(self.ids, ids), len(self.ids) - 1)
        return np.where(self.ids[at] == ids, at, -1)


_CACHE: OrderedDict[tuple, tuple[tuple[Dataset, ...], Prior]] = OrderedDict()


def prior_of(problem: Problem, tuner: str) -> Prior:
    """The prior of ``problem`` aligned with its space (cached); TunerError naming ``tuner`` when there is none."""
    others = problem.facts.others
    if not others:
        raise TunerError(f"{tuner} needs a prior: measured data of other GPUs on the same space; give it with "
                         "bat run --prior all-others (or GPU ids, dataset files), or run it in bat compare --study "
                         "transfer (problem.facts.others is empty)")
    space = problem.space
    key = (space.space_hash, tuple((gpu, id(others[gpu])) for gpu in sorted(others)))
    if key in _CACHE:
        _CACHE.move_to_end(key)
        return _CACHE[key][1]
    prior = align(space, others)
    if not len(prior.ids):
        raise TunerError(f"{tuner}: none of the {prior.skipped} configurations of the prior "
                         f"({', '.join(prior.sources)}) is a valid configuration of space {space.name}")
    _CACHE[key] = (tuple(others[g] for g in sorted(others)), prior)
    while len(_CACHE) > CACHE_SIZE:
        _CACHE.popitem(last=False)
    return prior


def align(space: SearchSpace, others: Mapping[str, Dataset]) -> Prior:
    """Each source's data on ``space``: flat ids, log relative time and normalised rank (uncached)."""
    import pandas as pd

    sources = tuple(sorted(others))
    per_source: list[pd.DataFrame] = []
    skipped = 0
    for gpu in sources:
        frame = others[gpu].frame
        ids, keep = flat_ids(space, frame)
        skipped += int(len(frame) - keep.sum())
        ok = (frame["status"].to_numpy()[keep] == Status.OK.value)
        time = pd.to_numeric(frame["objective_ms"], errors="coerce").to_numpy(dtype=float)[keep]
        ok &= np.isfinite(time) & (time > 0)
        measured = pd.DataFrame({"id": ids, "time": np.where(ok, time, np.inf)})
        part = measured.groupby("id", sort=True)["time"].min()
        good = np.isfinite(part.to_numpy())
        best = part[good].min() if good.any() else np.nan
        rank = part[good].rank(method="average")
        n_ok = int(good.sum())
        norm = (rank - 1) / (n_ok - 1) if n_ok > 1 else rank * 0.0
        per_source.append(pd.DataFrame({
            f"t{len(per_source)}": pd.Series(np.log((part / best).to_numpy()), index=part.index).where(good),
            f"r{len(per_source)}": norm.reindex(part.index).fillna(1.0),
        }))
    joined = pd.concat(per_source, axis=1, join="outer").sort_index() if per_source else pd.DataFrame()
    n = len(sources)
    return Prior(
        sources=sources,
        ids=joined.index.to_numpy(dtype=np.int64),
        log_time=joined[[f"t{i}" for i in range(n)]].to_numpy(dtype=float) if n else np.empty((0, 0)),
        rank=joined[[f"r{i}" for i in range(n)]].to_numpy(dtype=float) if n else np.empty((0, 0)),
        skipped=skipped,
    )


def flat_ids(space: SearchSpace, frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Flat ids of the frame's rows that are valid configurations of ``space``, and the mask of those rows."""
    import pandas as pd

    rows = np.empty((len(frame), len(space.names)), dtype=np.int64)
    keep = np.ones(len(frame), dtype=bool)
    for j, p in enumerate(space.parameters):
        if p.name not in frame.columns:
            return np.empty(0, np.int64), np.zeros(len(frame), dtype=bool)
        # pandas takes any array here; its stubs name only an Index
        rows[:, j] = pd.Index(p.values).get_indexer(frame[p.name].to_numpy()) if len(frame) else 0  # type: ignore[arg-type]
        keep &= rows[:, j] >= 0
    rows = rows[keep]
    valid = space.is_valid(rows) if len(rows) else np.zeros(0, dtype=bool)
    keep[np.flatnonzero(keep)[~valid]] = False
    return rows[valid] @ space.strides, keep


def order(scores: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Positions sorted by ``scores`` (lowest first, NaN last), ties in a random order drawn from ``rng``."""
    tie = rng.permutation(len(scores))
    filled = np.where(np.isnan(scores), np.inf, scores)
    return np.lexsort((tie, filled))


class Walk:
    """The evaluations of one run, by flat id, and a random stream of unevaluated valid configurations."""

    def __init__(self, problem: Problem, rng: np.random.Generator) -> None:
        self.problem, self.space, self.rng = problem, problem.space, rng
        self.total = self.space.count_valid()
        #: flat id -> fitness (ms; infinity when the configuration failed)
        self.done: dict[int, float] = {}
        self._stream: Iterator[int] | None = None

    @property
    def finished(self) -> bool:
        return self.problem.exhausted or len(self.done) >= self.total

    def evaluate(self, fid: int) -> float:
        """Evaluate one flat id (it must be valid and not evaluated yet); its fitness."""
        config = self.space.config(self.space.from_ids(np.array([fid]))[0])
        fitness = self.problem.evaluate(config).fitness
        self.done[fid] = fitness
        return fitness

    def best(self) -> int | None:
        """The flat id of the fastest ok evaluation so far, None when none was ok."""
        fid, fitness = min(self.done.items(), key=lambda kv: (kv[1], kv[0]), default=(None, np.inf))
        return fid if np.isfinite(fitness) else None

    def random_id(self) -> int | None:
        """The next unevaluated valid configuration of the random stream (None when all are evaluated)."""
        if len(self.done) >= self.total:
            return None
        if self._stream is None:
            self._stream = self._draws()
        for fid in self._stream:
            if fid not in self.done:
                return fid
        return None  # pragma: no cover - the stream is endless

    def _draws(self) -> Iterator[int]:
        while True:
            rows = self.space.sample_valid(min(RANDOM_BATCH, self.total), self.rng)
            yield from (int(i) for i in self.space.to_ids(rows))
