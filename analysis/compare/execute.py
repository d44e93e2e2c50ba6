"""Executing a campaign: one task per run, in this process, a local process pool or on Dask.

``execute_run`` is the task: it runs one tuner on one target and returns a
``RunRecord`` (trace plus per-budget results); it is a plain module-level
function, so a process pool or a Dask worker can import it. The driver,
``run_campaign``, skips runs already stored, submits the rest, and writes
each finished run as it arrives (on the machine that runs the driver, so a
Dask cluster needs no shared file system).

Executors: ``workers == 1`` runs in this process; otherwise a
``concurrent.futures.ProcessPoolExecutor`` (spawned processes, each loads a
dataset once and keeps it); with ``scheduler`` the runs go to a Dask
distributed cluster through ``Client.get_executor`` (the same futures
interface). A live GPU backend always runs in this process, one run at a
time. Local workers die with this process (bat.lifetime), a ``kill -9`` included.

Per budget b a run reports the best configuration among its first b charged
evaluations (with replay noise: the one with the best observed objective,
reported with its recorded objective, ``observed_ms`` keeping what the tuner
saw). With ``remeasure = m > 0`` that configuration is measured m more
times: on replay, m draws with replacement from the times recorded for it
(``times_ms`` of its dataset row), since no GPU is there to measure again;
live, m more evaluations by the backend. The re-measured time is the mean of
the m values.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from analysis.compare.campaign import Campaign, RunSpec
from analysis.compare.store import RunRecord, RunStore
from bat.driver import run_tuner
from bat.errors import MissingDependencyError
from bat.lifetime import die_with_parent
from bat.problem import Budget
from bat.targets import Target, TargetRequest, make_target, replay_target

_TARGETS: dict[tuple[str, str, str, str], Target] = {}


def load_target(benchmark: str, gpu: str, backend: str = "replay", dataset: str = "") -> Target:
    """The target of (benchmark, GPU), or of the dataset file chosen for it, loaded once per process."""
    key = (benchmark, gpu, backend, dataset)
    if key not in _TARGETS:
        if dataset:
            _TARGETS[key] = replay_target(benchmark, gpu, path=Path(dataset))
        elif backend == "replay":
            _TARGETS[key] = replay_target(benchmark, gpu)
        else:
            _TARGETS[key] = make_target(benchmark, backend=backend, request=TargetRequest(gpu=gpu))[0]
    return _TARGETS[key]


def execute_run(spec: RunSpec) -> RunRecord:
    """Run ``spec`` and summarise it per budget (see the module docstring)."""
    target = load_target(spec.benchmark, spec.gpu, spec.backend, spec.dataset)
    if spec.noise != "none":  # this run's own noise draws, seeded by the run's seed
        target = replace(target, backend=target.backend.with_noise(spec.noise, spec.seed))
    start = time.perf_counter()
    result = run_tuner(spec.tuner.build(), target, budget=Budget(max_evals=spec.max_budget),
                       seed=spec.seed, tuner_name=spec.tuner.label)
    trace = result.trace
    params = list(target.space.names)
    per_budget = {}
    for b in spec.budgets:
        per_budget[str(b)] = _budget_result(trace, params, b, target, spec, result.best_known_ms)
    meta = {
        **result.trace_meta,
        "run_id": spec.run_id,
        "label": spec.tuner.label,
        "tuner_spec": spec.tuner.spec,
        "repeat": spec.repeat,
        "budgets": list(spec.budgets),
        "remeasure": spec.remeasure,
        "per_budget": per_budget,
        "task_wall_s": time.perf_counter() - start,
        "spec": asdict(spec),
    }
    return RunRecord(meta, trace)


def _budget_result(trace: pd.DataFrame, params: list[str], budget: int, target: Target,
                   spec: RunSpec, best_known: float | None) -> dict[str, Any]:
    charged = trace[trace["charged"].astype(bool)].head(budget)
    ok = charged[charged["status"] == "ok"]
    out: dict[str, Any] = {"evaluations": len(charged), "best_ms": None, "config": None,
                           "rel_perf": 0.0, "remeasured_ms": None, "rel_perf_remeasured": None}
    if ok.empty or best_known is None:
        if spec.remeasure:
            out["rel_perf_remeasured"] = 0.0
        return out
    row = ok.loc[ok["objective_ms"].idxmin()]
    config = {p: _plain(row[p]) for p in params}
    best = float(row["objective_ms"])
    if spec.noise != "none" and target.dataset is not None:
        # the tuner chose by a noisy observation; the run is judged by the recorded objective
        out["observed_ms"] = best
        best = float(target.dataset.frame["objective_ms"].iloc[target.dataset.row_of(config)])
    out.update(best_ms=best, config=config, rel_perf=best_known / best)
    if spec.remeasure:
        rng = np.random.default_rng([spec.seed, budget])
        samples = remeasure(target, config, spec.remeasure, rng)
        out["remeasured_ms"] = samples
        mean = float(np.mean(samples)) if samples else float("nan")
        out["rel_perf_remeasured"] = best_known / mean if samples and mean > 0 else 0.0
    return out


def remeasure(target: Target, config: dict[str, Any], n: int, rng: np.random.Generator) -> list[float]:
    """``n`` more measurements of ``config`` (replay: draws from its recorded times)."""
    data = target.dataset
    if data is not None:
        i = data.row_of(config)
        times = list(data.frame["times_ms"].iloc[i]) if i is not None else []
        if not times:  # a row without repeated times: its recorded objective is all there is
            return [] if i is None else [float(data.frame["objective_ms"].iloc[i])] * n
        return rng.choice(np.asarray(times, dtype=float), size=n, replace=True).tolist()
    out = []
    for _ in range(n):
        r = target.backend.evaluate(config)
        if r.ok and r.objective_ms is not None:
            out.append(float(r.objective_ms))
    return out


@dataclass
class CampaignRun:
    """What ``run_campaign`` did: every record of the campaign and how many were reused."""

    records: list[RunRecord]
    reused: int
    executed: int
    wall_s: float


def run_campaign(
    campaign: Campaign,
    out: str | Path,
    *,
    workers: int = 1,
    scheduler: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> CampaignRun:
    """Run every run of ``campaign`` not yet stored under ``out``; return all of them."""
    store = RunStore(out)
    specs = campaign.runs()
    done = store.done_ids()
    todo = [s for s in specs if s.run_id not in done]
    total, finished = len(specs), len(specs) - len(todo)
    start = time.perf_counter()
    if progress:
        progress(finished, total)
    fresh: dict[str, RunRecord] = {}
    if todo:
        serial = campaign.backend == "live" or (workers <= 1 and scheduler is None)
        with _executor(1 if serial else workers, scheduler) as pool:
            for record in _completed(pool, todo):
                store.write(record)
                fresh[record.run_id] = record
                finished += 1
                if progress:
                    progress(finished, total)
    # runs finished now are kept in memory; only the reused ones are read back
    records = [fresh.get(s.run_id) or store.read(s.run_id) for s in specs]
    return CampaignRun(records, reused=len(specs) - len(todo), executed=len(todo),
                       wall_s=time.perf_counter() - start)


def _completed(pool: cf.Executor | None, todo: list[RunSpec]) -> Iterator[RunRecord]:
    if pool is None:
        for spec in todo:
            yield execute_run(spec)
        return
    futures = [pool.submit(execute_run, s) for s in todo]
    try:
        for fut in cf.as_completed(futures):
            yield fut.result()
    finally:
        for fut in futures:
            fut.cancel()


@contextmanager
def _executor(workers: int, scheduler: str | None) -> Iterator[cf.Executor | None]:
    if scheduler is not None:
        try:
            from distributed import Client
        except ImportError as exc:
            raise MissingDependencyError("--scheduler needs dask[distributed] (the 'scale' group)") from exc
        with Client(scheduler) as client:
            pool = client.get_executor(pure=False)
            try:
                yield pool
            finally:
                pool.shutdown(wait=False)
        return
    if workers <= 1:
        yield None
        return
    pool = cf.ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                                  initializer=die_with_parent, initargs=(os.getpid(),))  # no orphans
    try:
        yield pool
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _plain(v: Any) -> Any:
    return v.item() if isinstance(v, np.generic) else v
