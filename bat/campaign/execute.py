"""Executing a campaign: in this process, on a pool of local worker processes, or on Dask.

``execute_run`` runs one tuner on one target and returns a ``RunRecord``
(trace plus per-budget results): ``run_one`` runs it, ``summarise`` gives
runs their per-budget results, many at once (their traces stacked into one
frame, ``store.stack``, which the encoding reuses). Work goes out in chunks, in the order
``plan_chunks`` gives them: first each run of a slow tuner
(``TunerSpec.slow``: a model fit per step) in a chunk of its own, costliest
first; then the quick runs, target by target, in chunks that shrink as the
work left does (guided scheduling: the next chunk holds about 1/(workers x
``GUIDE``) of the estimated cost still to plan, at least 1/(workers x
``CHUNKS_PER_WORKER``) of it all), so a quick run costs no round trip of
its own and the last chunks are small enough that no worker runs long
after the others. The estimated cost (``run_cost``) is the budget; it does
not know that a quick tuner can cost 40 times another per evaluation (on
pnpoly, Optuna's TPE against random search), so the quick runs are dealt
repeat by repeat with their tuners interleaved: every chunk holds about the
same mix of tuners, and chunks of the same estimated cost cost about the
same. ``execute_chunk``
runs a chunk in a worker and encodes its runs there, together (``encode_runs``);
the driver, ``run_campaign``, only inserts the bytes into the campaign's
store (``store.RunStore``: one SQLite file, a transaction per chunk) and
counts progress, so it takes almost no CPU from the workers.

Executors: ``workers == 1`` runs in this process, storing its finished runs
together every ``FLUSH_RUNS`` runs or ``FLUSH_S`` seconds (one encoding and
one transaction for many runs: a ``kill -9`` loses at most the runs of the
last second; an exception, Ctrl-C included, stores every finished run).
Otherwise a ``multiprocessing`` pool of ``workers`` processes that live for
the whole campaign, forked from this one once it has loaded the
campaign's datasets (so they start with its modules and data in memory;
spawned where forking is not safe, ``forked.fork_is_safe``, and then each
loads a dataset the first time a run needs it and keeps it,
``load_target``); on an interruption
the pool is terminated at once (finished chunks are stored, the others run
again on the next call). With ``scheduler`` the chunks go to a Dask
distributed cluster (``Client.submit``); its worker processes keep their
datasets across tasks the same way, and the results come back to the
driver, which writes them (no shared file system needed). A live GPU
backend always runs in this process, one run at a time. Local workers die
with this process (bat.core.lifetime), a ``kill -9`` included. While the
runs run, what the process held before them is left out of the garbage
collector's passes (``_settled``).

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

import gc
import json
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable, Generator, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from bat.campaign.design import Campaign, RunSpec, spec_dict
from bat.campaign.forked import fork_is_safe
from bat.campaign.store import FILE_NAME, Encoded, RunRecord, RunStore, Stacked, encode_runs, stack
from bat.core.errors import DatasetError, MissingDependencyError
from bat.core.lifetime import die_with_parent
from bat.core.problem import Budget
from bat.core.schedule import Parallelism
from bat.run.driver import RunResult, check_target, run_tuner
from bat.run.targets import Target, TargetRequest, make_target, replay_target, with_prior

if TYPE_CHECKING:
    from bat.data.checks import DataCheck

#: estimated cost of one evaluation of a slow tuner (a model fit per step) against a quick one's
SLOW_WEIGHT = 50
#: the smallest chunk of quick runs holds 1/(workers x CHUNKS_PER_WORKER) of their estimated cost
CHUNKS_PER_WORKER = 16
#: guided scheduling: the next chunk of quick runs holds 1/(workers x GUIDE) of the quick runs' cost still to plan
GUIDE = 4
#: runs in this process are stored together, every FLUSH_RUNS runs or FLUSH_S seconds, whichever comes first
FLUSH_RUNS = 64
FLUSH_S = 1.0

_TARGETS: dict[tuple[str, str, str, str, tuple[str, ...]], Target] = {}


def load_target(benchmark: str, gpu: str, backend: str = "replay", dataset: str = "",
                prior: tuple[str, ...] = ()) -> Target:
    """The target of (benchmark, GPU), or of the dataset file chosen for it, loaded once per process.

    ``prior``: GPUs whose data of the same space the tuner gets (``TargetFacts.others``); each of their
    datasets is the one their own targets replay, so it is loaded once per process too.
    """
    key = (benchmark, gpu, backend, dataset, prior)
    if key not in _TARGETS:
        if prior:
            others = {g: ds for g in prior if (ds := load_target(benchmark, g).dataset) is not None}  # replayed
            _TARGETS[key] = with_prior(load_target(benchmark, gpu, backend, dataset), others)
        elif dataset:
            _TARGETS[key] = replay_target(benchmark, gpu, path=Path(dataset))
        elif backend == "replay":
            _TARGETS[key] = replay_target(benchmark, gpu)
        else:
            _TARGETS[key] = make_target(benchmark, backend=backend, request=TargetRequest(gpu=gpu))[0]
    return _TARGETS[key]


def data_check(benchmark: str, gpu: str, backend: str = "replay", dataset: str = "") -> DataCheck | None:
    """The data check of a target's dataset (``bat.run.driver.check_target``, which keeps it), made once per
    process: every run of a campaign on that target shares it (its dataset is loaded once too, ``load_target``)."""
    return check_target(load_target(benchmark, gpu, backend, dataset))


def execute_run(spec: RunSpec) -> RunRecord:
    """Run ``spec`` and summarise it per budget (see the module docstring)."""
    return summarise([run_one(spec)])[0]


@dataclass
class Finished:
    """A run of a campaign, run (``run_one``) but not yet summarised (``summarise``)."""

    spec: RunSpec
    target: Target
    result: RunResult
    wall_s: float
    cpu_s: float


def run_one(spec: RunSpec) -> Finished:
    """Run ``spec`` (see the module docstring)."""
    target = load_target(spec.benchmark, spec.gpu, spec.backend, spec.dataset, spec.prior)
    checked = data_check(spec.benchmark, spec.gpu, spec.backend, spec.dataset)  # None: no dataset to check
    if spec.noise != "none":  # this run's own noise draws, seeded by the run's seed
        target = replace(target, backend=target.backend.with_noise(spec.noise, spec.seed))
    start, cpu = time.perf_counter(), time.process_time()
    tuner = spec.tuner.spec if spec.isolate else spec.tuner.build()  # isolated: built in its own process
    result = run_tuner(tuner, target, budget=Budget(max_evals=spec.max_budget), seed=spec.seed,
                       data_check=checked, tuner_name=spec.tuner.label,
                       tuner_charge_s=spec.tuner_charge_s, isolate=spec.isolate,
                       parallelism=Parallelism(spec.tuner.compile_workers, spec.devices),
                       timeout_factor=spec.timeout_factor)
    return Finished(spec, target, result, time.perf_counter() - start, time.process_time() - cpu)


def summarise(runs: list[Finished], stacked: list[Stacked] | None = None) -> list[RunRecord]:
    """The records of ``runs``, each with its results per budget; their traces are read stacked (``stack``, or
    ``stacked`` where the caller has it): a frame's columns cost more than their values, once per stack."""
    if stacked is None:
        stacked = stack([run.result.trace for run in runs])
    per_budget: list[dict[str, dict[str, Any]]] = [{} for _ in runs]
    for members, whole in stacked:
        columns = _Columns(charged=whole["charged"].to_numpy(dtype=bool), ok=whole["status"].to_numpy() == "ok",
                           objective=whole["objective_ms"].to_numpy(dtype=float), params={})
        start = 0
        for i in members:
            run = runs[i]
            rows = slice(start, start + len(run.result.trace))
            start = rows.stop
            names = run.target.space.names
            if names not in columns.params:  # read once per stack and space
                columns.params[names] = [whole[p].to_numpy() for p in names]
            params = columns.params[names]
            per_budget[i] = {str(b): _budget_result(columns, rows, params, b, run) for b in run.spec.budgets}
    return [RunRecord({
        **run.result.trace_meta,
        "run_id": run.spec.run_id,
        "label": run.spec.tuner.label,
        "tuner_spec": run.spec.tuner.spec,
        "repeat": run.spec.repeat,
        "budgets": list(run.spec.budgets),
        "remeasure": run.spec.remeasure,
        "per_budget": results,
        "task_wall_s": run.wall_s,
        "task_cpu_s": run.cpu_s,
        "spec": spec_dict(run.spec),
    }, run.result.trace) for run, results in zip(runs, per_budget, strict=True)]


@dataclass(frozen=True)
class _Columns:
    """What the per-budget results read of stacked traces: whether each row is charged, whether it is ``ok``,
    its objective, and the parameters' values (by the space's parameter names)."""

    charged: np.ndarray
    ok: np.ndarray
    objective: np.ndarray
    params: dict[tuple[str, ...], list[np.ndarray]]


def _budget_result(columns: _Columns, rows: slice, params: list[np.ndarray], budget: int,
                   run: Finished) -> dict[str, Any]:
    """The result at ``budget`` of the run whose trace is ``rows`` of the stacked ``columns``."""
    spec, target, best_known = run.spec, run.target, run.result.best_known_ms
    charged = np.flatnonzero(columns.charged[rows])[:budget]  # positions in the run's trace
    ok = charged[columns.ok[rows][charged]]
    out: dict[str, Any] = {"evaluations": len(charged), "best_ms": None, "config": None,
                           "rel_perf": 0.0, "remeasured_ms": None, "rel_perf_remeasured": None}
    if len(ok) == 0 or best_known is None:
        if spec.remeasure:
            out["rel_perf_remeasured"] = 0.0
        return out
    objective = columns.objective[rows]
    row = int(ok[np.nanargmin(objective[ok])])  # the first of the best, as pandas' idxmin
    config = {p: _plain(values[rows.start + row]) for p, values in zip(target.space.names, params, strict=True)}
    best = float(objective[row])
    if spec.noise != "none" and target.dataset is not None:
        # the tuner chose by a noisy observation; the run is judged by the recorded objective
        out["observed_ms"] = best
        recorded = target.dataset.row_of(config)
        assert recorded is not None  # replayed: every configuration answered is a row of the dataset
        best = float(target.dataset.frame["objective_ms"].iloc[recorded])
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


def execute_chunk(specs: list[RunSpec]) -> list[Encoded]:
    """Run ``specs`` one after the other in this (worker) process; return them encoded for the store."""
    return _encoded([run_one(spec) for spec in specs])


def run_cost(spec: RunSpec) -> float:
    """Estimated cost of a run, in evaluations of a quick tuner (a slow tuner's count SLOW_WEIGHT each)."""
    return spec.max_budget * (SLOW_WEIGHT if spec.tuner.slow else 1)


def plan_chunks(specs: list[RunSpec], workers: int) -> list[list[RunSpec]]:
    """Chunks of runs: each slow run alone, costliest first, then the quick runs, target by target, in guided
    chunks (see the module docstring)."""
    slow = sorted((s for s in specs if s.tuner.slow),
                  key=lambda s: (-run_cost(s), s.benchmark, s.gpu, s.tuner.label, s.repeat))
    quick = sorted((s for s in specs if not s.tuner.slow),
                   key=lambda s: (_target_of(s), s.repeat, s.tuner.label, -run_cost(s)))
    chunks = [[spec] for spec in slow]
    remaining = sum(run_cost(s) for s in quick)
    smallest = remaining / max(1, workers * CHUNKS_PER_WORKER)
    cost = limit = 0.0
    for spec in quick:
        c = run_cost(spec)
        if not chunks or chunks[-1][0].tuner.slow or cost >= limit or _target_of(chunks[-1][0]) != _target_of(spec):
            limit = max(remaining / max(1, workers * GUIDE), smallest)
            chunks.append([])
            cost = 0.0
        chunks[-1].append(spec)
        cost += c
        remaining -= c
    return chunks


def _target_of(spec: RunSpec) -> tuple[str, str, str, str, tuple[str, ...]]:
    return spec.benchmark, spec.gpu, spec.backend, spec.dataset, spec.prior


def stored_runs(store: RunStore, specs: list[RunSpec], done: set[str]) -> dict[str, RunRecord]:
    """The runs of ``specs`` that ``store`` holds (``done``), each checked (``RunStore.read``) and stored for
    this very run (its ``spec``); DatasetError naming the store otherwise."""
    reused = store.read([s.run_id for s in specs if s.run_id in done])
    for spec in specs:
        if spec.run_id in reused and _canonical(reused[spec.run_id].meta["spec"]) != _canonical(spec_dict(spec)):
            raise DatasetError(f"{store.path}: run {spec.run_id!r} was stored for another run than this "
                               "campaign's (its 'spec' differs); use another --out or remove the file")
    return reused


def check_store(campaign: Campaign, out: str | Path) -> None:
    """Refuse a damaged store in ``out`` before anything is written there (a lock file included)."""
    if os.path.lexists(Path(out) / FILE_NAME):
        with RunStore(out) as store:
            stored_runs(store, campaign.runs(), store.done_ids())


def run_campaign(
    campaign: Campaign,
    out: str | Path,
    *,
    workers: int = 1,
    scheduler: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    alongside: Callable[[], None] | None = None,
) -> CampaignRun:
    """Run every run of ``campaign`` not yet stored under ``out``; return all of them.

    ``alongside``: work of this process to do while workers run (in a thread started once they are, and
    waited for before returning; its exceptions are dropped: it may only compute ahead what is computed
    again later). Not called when the runs are in this process.
    """
    return run_specs(campaign.runs(), out, live=campaign.backend == "live", workers=workers, scheduler=scheduler,
                     progress=progress, alongside=alongside)


def run_specs(
    specs: list[RunSpec],
    out: str | Path,
    *,
    live: bool = False,
    workers: int = 1,
    scheduler: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    alongside: Callable[[], None] | None = None,
) -> CampaignRun:
    """Run every run of ``specs`` not yet stored under ``out`` (``live``: in this process, one at a time);
    return all of them. What ``run_campaign`` does for one campaign, for runs of several (a study);
    ``alongside`` as there."""
    start = time.perf_counter()
    fresh: dict[str, RunRecord] = {}
    with _settled(), RunStore(out) as store:
        done = store.done_ids()
        reused = stored_runs(store, specs, done)  # read and checked before anything runs
        todo = [s for s in specs if s.run_id not in reused]
        total, finished = len(specs), len(specs) - len(todo)
        if progress:
            progress(finished, total)
        serial = live or (workers <= 1 and scheduler is None)
        if serial:
            batch: list[Finished] = []
            flushed = time.monotonic()
            try:
                for spec in todo:
                    batch.append(run_one(spec))
                    finished += 1
                    if live or len(batch) >= FLUSH_RUNS or time.monotonic() - flushed >= FLUSH_S:
                        ready, batch = batch, []  # a store that fails is not tried again below
                        _store(store, ready, fresh)
                        flushed = time.monotonic()
                    if progress:
                        progress(finished, total)
            finally:  # an exception, Ctrl-C included, keeps every finished run
                _store(store, batch, fresh)
        elif todo:
            chunks = plan_chunks(todo, workers)
            helper = _Alongside(alongside)
            source = _on_dask(scheduler, chunks, helper.start) if scheduler else _on_pool(workers, chunks,
                                                                                          helper.start)
            with closing(source) as results:  # an exception here stops the workers at once
                for rows in results:
                    store.write(rows)
                    fresh.update((row[0], RunRecord.decode(row)) for row in rows)
                    finished += len(rows)
                    if progress:
                        progress(finished, total)
            helper.wait()
    records = [fresh.get(s.run_id) or reused[s.run_id] for s in specs]
    return CampaignRun(records, reused=len(specs) - len(todo), executed=len(todo),
                       wall_s=time.perf_counter() - start)


@contextmanager
def _settled() -> Iterator[None]:
    """What this process holds before the runs (modules, targets, datasets) left out of the cyclic garbage
    collector's passes until they end (``gc.freeze``): the runs' records stay alive until the campaign ends, so
    its collections reach the oldest generation, which would otherwise walk every object of the process each
    time (about 50 ms with pandas and pyarrow loaded); a pool forked meanwhile does not touch, and so copy, the
    pages of those objects either. Nothing is lost: ``gc.unfreeze`` gives them back to the collector. A process
    that froze objects itself (``gc.get_freeze_count()``) is left as it is: unfreezing would undo its choice."""
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


class _Alongside:
    """``run_campaign``'s ``alongside`` in a thread of its own."""

    def __init__(self, work: Callable[[], None] | None) -> None:
        self.thread = None if work is None else threading.Thread(target=self._quietly, args=(work,), daemon=True,
                                                                 name="bat-alongside")

    def start(self) -> None:
        if self.thread is not None and not self.thread.is_alive():
            self.thread.start()

    def wait(self) -> None:
        if self.thread is not None and self.thread.ident is not None:
            self.thread.join()

    @staticmethod
    def _quietly(work: Callable[[], None]) -> None:
        try:
            work()
        except Exception:  # computed again where it is needed, and reported there
            return


def _encoded(runs: list[Finished]) -> list[Encoded]:
    """``runs`` summarised and encoded, their traces stacked once for both."""
    stacked = stack([run.result.trace for run in runs])
    return encode_runs(summarise(runs, stacked), stacked)


def _store(store: RunStore, runs: list[Finished], fresh: dict[str, RunRecord]) -> None:
    """Store ``runs`` (summarised and encoded together, in one transaction) and keep each in ``fresh`` as it will
    be read back (its metadata through JSON)."""
    if not runs:
        return
    rows = _encoded(runs)
    store.write(rows)
    fresh.update((row[0], RunRecord(json.loads(row[1]), run.result.trace))
                 for row, run in zip(rows, runs, strict=True))


def _init_worker(parent_pid: int) -> None:
    """Worker initializer: the worker dies with the driver, and Ctrl-C goes to the driver, which stops the pool."""
    die_with_parent(parent_pid)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _on_pool(workers: int, chunks: list[list[RunSpec]],
             started: Callable[[], None]) -> Generator[list[Encoded], None, None]:
    """Chunk results from a pool of worker processes, as they finish (``started()`` once they are started).

    The workers are forked from this process, after it has loaded the chunks' targets, so they start with
    its modules and datasets in memory; where forking is not safe (another thread running here, or no
    fork on this system) they are spawned and load what they need themselves.
    """
    safe_fork = fork_is_safe()
    if safe_fork:
        for key in dict.fromkeys(_target_of(spec) for chunk in chunks for spec in chunk):
            load_target(*key)
            data_check(*key[:4])
    pool = multiprocessing.get_context("fork" if safe_fork else "spawn").Pool(
        processes=min(workers, len(chunks)), initializer=_init_worker, initargs=(os.getpid(),))
    try:
        results = pool.imap_unordered(execute_chunk, chunks)
        started()
        yield from results
    except BaseException:
        pool.terminate()  # an interruption stops the workers now; unfinished chunks run again on resume
        raise
    else:
        pool.close()
    finally:
        pool.join()


def _on_dask(scheduler: str, chunks: list[list[RunSpec]],
             started: Callable[[], None]) -> Generator[list[Encoded], None, None]:
    """Chunk results from a Dask distributed cluster, as they finish (``started()`` once they are sent)."""
    try:
        from distributed import Client, as_completed
    except ImportError as exc:
        raise MissingDependencyError("--scheduler needs dask[distributed] (the 'scale' group)") from exc
    with Client(scheduler) as client:
        futures = client.map(execute_chunk, chunks, pure=False)  # one graph: the chunks start in this order
        started()
        try:
            for future in as_completed(futures):
                yield future.result()
        finally:
            client.cancel(futures)


def _plain(v: Any) -> Any:
    return v.item() if isinstance(v, np.generic) else v
