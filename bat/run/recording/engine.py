"""The recording engine of ``bat record``: measure a work list of configurations into a dataset.

Pipeline: the work list (every valid configuration in id order, or a seeded
uniform sample of them) -> compile jobs -> a process pool that compiles ahead
of the device -> the executor measures each compiled configuration, in
work-list order -> one journal line per finished configuration
(bat.run.recording.journal) -> merged into a dataset at the end, or whenever the run
stops early (``partial`` then says so).

Everything here is device-neutral: the device sits behind an ``Executor``
(bat.backends.live.session.LiveSession on a GPU). Every failure of a configuration is
data: a compile error comes back from the pool as a ``CompileResult`` with
its log and is recorded without reaching the device; the executor reports
launch failures, wrong outputs and timeouts as statuses. A run stops early,
cleanly and resumably, after ``limit`` configurations, after ``max_seconds``,
or when the executor says its device can no longer be trusted (``broken``,
after a timeout or a sticky CUDA error: only a fresh process resets it).

With a ``profiler`` (bat.toolchain.profiler.CounterProfiler, ``--counters``)
each configuration measured ok is run once more, in a separate process under
ncu: its counters (columns named by metric), the metrics without a value
(named in the journal and the dataset metadata, NaN in the dataset) and the
profiled run's wall time ``profile_ms`` join the record. A profile that
fails stops the recording (resumable; that configuration is measured again).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import pandas as pd

from bat.core.dataset import CORE_COLUMNS, RESOURCE_COLUMNS, Dataset, DatasetMeta, Status, make_frame
from bat.core.errors import DatasetError
from bat.core.problem import EvalResult
from bat.core.space import SearchSpace
from bat.run.recording.journal import HEADER_FIELDS, RECORD_FIELDS, Journal
from bat.toolchain.compiling import CompileJob, Compiler, CompileResult, compile_ahead, compile_failure
from bat.toolchain.profiler import Profile, counter_provenance


# -- work list -------------------------------------------------------------------------------
@dataclass(frozen=True)
class WorkList:
    """Flat ids of the configurations to measure, in measuring order (ascending id)."""

    mode: str  # "all" or "sample"
    ids: np.ndarray
    n: int | None = None
    seed: int | None = None

    def spec(self) -> dict[str, Any]:
        """What the journal header keeps to check a resume (sample ids are kept verbatim)."""
        spec: dict[str, Any] = {"mode": self.mode, "n": self.n, "seed": self.seed}
        if self.mode == "sample":
            spec["ids"] = [int(i) for i in self.ids]
        return spec


def all_valid(space: SearchSpace) -> WorkList:
    """Every valid configuration of ``space``, in id order."""
    parts = [space.to_ids(chunk) for chunk in space.iter_valid()]
    ids = np.concatenate(parts) if parts else np.empty(0, np.int64)
    return WorkList("all", ids.astype(np.int64))


def sample_valid(space: SearchSpace, n: int, seed: int) -> WorkList:
    """``n`` valid configurations drawn uniformly without replacement with ``seed``, in id order."""
    rows = space.sample_valid(n, np.random.default_rng(seed))
    return WorkList("sample", np.sort(space.to_ids(rows)).astype(np.int64), n=n, seed=seed)


# -- what the device side provides ---------------------------------------------------------
class Executor(Protocol):
    """The device side of a recording (bat.backends.live.session.LiveSession on a GPU)."""

    broken: str | None  # set when the device can no longer be trusted in this process

    @property
    def compiler(self) -> Compiler:
        """A module-level function (a class's staticmethod): it runs in worker processes."""
        ...

    def job(self, key: int, config: Mapping[str, Any]) -> CompileJob: ...

    def measure(self, config: Mapping[str, Any], compiled: CompileResult) -> EvalResult:
        """Load, run, time and verify one compiled configuration."""
        ...


class Profiler(Protocol):
    """Counters of one configuration from a separate profiled run (bat.toolchain.profiler)."""

    metrics: tuple[str, ...]

    def profile(self, config: Mapping[str, Any]) -> Profile: ...


# -- the plan and its journal ----------------------------------------------------------------
@dataclass
class RecordPlan:
    """What one recording measures, and the provenance its dataset will carry."""

    space: SearchSpace
    work: WorkList
    size_name: str  # "published" or "small"
    meta: DatasetMeta  # partial and n_expected are filled in when merging
    device: dict[str, Any] = field(default_factory=dict)  # identity checked on resume
    counters: tuple[str, ...] = ()  # the metrics profiled after each ok configuration (--counters)

    def header(self) -> dict[str, Any]:
        return {
            **({"counters": list(self.counters)} if self.counters else {}),
            "benchmark": self.meta.benchmark,
            "space_hash": self.space.space_hash,
            "selection": self.work.spec(),
            "n_expected": len(self.work.ids),
            "size": {"name": self.size_name, "values": self.meta.problem_size},
            "device": self.device,
            "meta": asdict(self.meta),
        }


def open_journal(plan: RecordPlan, path: str | Path, *, resume: bool) -> Journal:
    """A new journal for ``plan``, or (``resume``) the existing one after checking it matches."""
    path = Path(path)
    if not (resume and path.exists()):
        return Journal.create(path, plan.header())
    journal = Journal.open(path, fields=RECORD_FIELDS, header_fields=HEADER_FIELDS)
    want, have = plan.header(), journal.header
    wrong = [key for key in ("benchmark", "space_hash", "selection", "n_expected", "size", "device", "counters")
             if _canonical(want.get(key)) != _canonical(have.get(key))]
    if wrong:
        journal.close()
        details = "; ".join(f"{k}: journal has {_short(have.get(k))}, this run {_short(want.get(k))}"
                            for k in wrong)
        raise DatasetError(f"{path}: cannot resume a different recording ({details})")
    return journal


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _short(value: Any, limit: int = 80) -> str:
    text = _canonical(value)
    return text if len(text) <= limit else text[:limit] + "..."


# -- running ---------------------------------------------------------------------------------
@dataclass
class Outcome:
    """How far a recording got in this invocation."""

    measured_now: int
    done: int
    expected: int
    stopped: str = ""  # why it stopped before the end ("" when complete)
    statuses: dict[str, int] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        return self.done >= self.expected


def run_recording(
    plan: RecordPlan,
    executor: Executor,
    journal: Journal,
    *,
    workers: int = 2,
    limit: int | None = None,
    max_seconds: float | None = None,
    on_record: Callable[[dict[str, Any]], None] | None = None,
    profiler: Profiler | None = None,
) -> Outcome:
    """Measure what the journal lacks of ``plan.work``; stop early on limit, time or a broken device.

    With ``profiler``, each configuration measured ok is profiled after its timed run.
    """
    if profiler is not None and tuple(profiler.metrics) != tuple(plan.counters):
        raise DatasetError(f"the profiler collects {len(profiler.metrics)} metrics, the plan names "
                           f"{len(plan.counters)}: build the plan with counters=profiler.metrics")
    done_ids = {int(r["id"]) for r in journal.records}
    todo = plan.work.ids[~np.isin(plan.work.ids, np.fromiter(done_ids, np.int64, len(done_ids)))]
    statuses: dict[str, int] = {}
    outcome = Outcome(0, len(done_ids), len(plan.work.ids), statuses=statuses)
    start = time.monotonic()
    jobs = (executor.job(int(key), _config(plan.space, int(key))) for key in todo)
    stream = compile_ahead(jobs, executor.compiler, workers=workers)
    try:
        while True:
            if limit is not None and outcome.measured_now >= limit:
                outcome.stopped = f"limit of {limit} configurations reached"
                break
            if max_seconds is not None and time.monotonic() - start >= max_seconds:
                outcome.stopped = f"time limit of {max_seconds / 60:g} minutes reached"
                break
            try:
                job, compiled = next(stream)
            except StopIteration:
                break
            config = _config(plan.space, job.key)
            result = (executor.measure(config, compiled) if compiled.ok
                      else compile_failure(config, compiled))
            profile = profiler.profile(config) if profiler is not None and result.ok else None
            if profile is not None:  # the timed run above stayed unprofiled
                result = replace(result, extra={**result.extra, **profile.extra()})
            record = to_record(job.key, result)
            if profile is not None:
                record["missing_counters"] = list(profile.missing)
            journal.append(record)
            outcome.measured_now += 1
            outcome.done += 1
            statuses[record["status"]] = statuses.get(record["status"], 0) + 1
            if on_record is not None:
                on_record(record)
            if executor.broken:
                outcome.stopped = f"device needs a fresh process: {executor.broken}"
                break
    finally:
        stream.close()
        journal.close()
    if outcome.complete:
        outcome.stopped = ""
    return outcome


def _config(space: SearchSpace, key: int) -> dict[str, Any]:
    row = space.from_ids(np.array([key], dtype=np.int64))[0]
    return {k: v.item() if isinstance(v, np.generic) else v for k, v in space.config(row).items()}


def to_record(key: int, result: EvalResult) -> dict[str, Any]:
    """One journal line: the flat id, the configuration and what measuring it gave."""
    compile_ms = result.compile_ms
    bench_ms = None
    if result.status is not Status.COMPILE_ERROR:
        bench_ms = result.cost_s * 1000.0 - (compile_ms or 0.0)
    return {
        "id": int(key),
        "config": dict(result.config),
        "status": result.status.value,
        "objective_ms": result.objective_ms,
        "times_ms": list(result.times_ms),
        "compile_ms": compile_ms,
        "benchmark_ms": bench_ms,
        "message": result.message,
        "extra": {k: float(v) for k, v in result.extra.items()},
    }


# -- merging ---------------------------------------------------------------------------------
def to_dataset(plan: RecordPlan, journal: Journal) -> Dataset:
    """The journal's records as a dataset in work-list order; ``partial`` when some are missing."""
    by_id: dict[int, dict[str, Any]] = {}
    for record in journal.records:
        by_id.setdefault(int(record["id"]), record)
    ids = np.array([k for k in plan.work.ids.tolist() if k in by_id], dtype=np.int64)
    values = plan.space.decode(plan.space.from_ids(ids))
    rows = []
    for i, key in enumerate(ids.tolist()):
        rec = by_id[key]
        row: dict[str, Any] = {name: values[name].iat[i] for name in plan.space.names}
        row.update({k: _nan(rec[k]) for k in ("objective_ms", "compile_ms", "benchmark_ms")})
        row.update(status=rec["status"], times_ms=rec["times_ms"], message=rec["message"])
        row.update({k: rec["extra"].get(k, math.nan) for k in RESOURCE_COLUMNS})
        row.update({k: v for k, v in rec["extra"].items() if "__" in k or k == "profile_ms"})  # counters
        rows.append(row)
    counters = [*plan.counters, "profile_ms"] if plan.counters else []
    if rows:
        frame = make_frame(plan.space.names, rows)
        for column in counters:  # a metric no configuration had is still a named (NaN) column
            if column not in frame.columns:
                frame[column] = math.nan
    else:
        frame = pd.DataFrame(columns=[*plan.space.names, *CORE_COLUMNS, *RESOURCE_COLUMNS, *counters])
    meta = DatasetMeta(**{**asdict(plan.meta), "partial": len(ids) < len(plan.work.ids),
                          "n_expected": len(plan.work.ids)})
    meta.extra = {**meta.extra, "merged": datetime.now(UTC).isoformat(timespec="seconds")}
    if plan.counters:
        profiled = [by_id[k]["missing_counters"] for k in ids.tolist() if "missing_counters" in by_id[k]]
        meta.extra["counters"], note = counter_provenance(plan.counters, profiled, len(profiled))
        meta.notes = f"{meta.notes}; {note}" if meta.notes else note
    return Dataset(frame=frame, meta=meta, parameters=tuple(plan.space.names))


def _nan(value: float | None) -> float:
    return math.nan if value is None else float(value)
