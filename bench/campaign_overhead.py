"""What a campaign costs per run over the runs themselves: against a plain library loop, the transfer study against a
plain comparison, and the scaling over workers.

Runs: ``reference:random`` on pnpoly (RTX 3090, replayed), budget 50, ``--runs`` seeds (those a campaign gives
them). Peers, in this process, taking turns ``--rounds`` times, each from empty caches (targets, data checks) and
after a full garbage collection (so that neither pays for the garbage the other left):

- ``library``: the target loaded once (``replay_target``), its data checked once (``check_target``), then
  ``run_tuner(..., check_data=False)`` per run: what a notebook's loop over seeds costs;
- ``campaign``: ``run_campaign`` with one worker into an empty folder: the same runs, each checked, run,
  summarised per budget and stored.

Per peer: wall and CPU seconds per run, the tuner's own seconds per run (the traces' ``tuner_s``) and the
harness's cost per run (wall - tuner; and CPU - tuner, which the load moves less). Targets (issues 45 and 46):
the campaign's harness cost per run <= 20 ms; the campaign's wall per run <= 1.1 x the library loop's.

``transfer``: the runs of a transfer study on pnpoly (``plan_transfer``: random search named by its import
path, so that it is no floor and every run has a prior; every GPU held out, 50 evaluations, 10 repeats)
through ``run_specs``, against a plain comparison of the same runs without their prior. Target: <= 1.1 x.

``scaling`` (``--workers``, e.g. ``1,2,dask``): a campaign of five tuners (``SCALING_TUNERS``) on pnpoly, budget 50,
``--scaling-repeats`` repeats (10: 50 runs; 40: 200), with 1 worker, 2 workers and a ``distributed.LocalCluster``
(``dask``: a fresh one, whose worker processes import BAT and the tuner libraries during the timed campaign;
``dask-warm``: one that ran the same campaign before, untimed, then forgot its targets and data checks as
the driver does before each mode: a long-lived cluster, whose imports are done, as the driver's are)
of 2 worker processes (its start not timed): wall seconds and the ratio to 1 worker, with the CPU seconds of this
process, of its reaped children and of each Dask worker (read in the worker, ``Client.run``, before and after); for
a local pool also where its wall time went (``chunks``: until the first chunk started, each worker's chunks in wall
and CPU seconds, after the last chunk ended; ``_chunks_logged``). On
a loaded machine the ratios are the CPU share the scheduler gave, not the code's: the load
average is written before each measurement.

The code measured is whatever ``bat`` imports: to measure another checkout (the commit before a change) put
it first on ``PYTHONPATH`` as one tree (its ``bat/`` with its top-level ``analysis/`` and the other mapped
folders linked inside). bench/RESULTS.md has the figures.

``plan``: the scaling campaign's chunks costed in measured CPU seconds and dealt to 2 workers (``part_plan``).

Usage: ``python bench/campaign_overhead.py [--runs 100] [--rounds 3] [--parts library,transfer,scaling,plan]
[--workers 1,2,dask] [--scaling-repeats 10]``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

from bat.analysis.compare.transfer import plan_transfer
from bat.core.problem import Budget
from bat.run.driver import run_tuner
from bat.run.targets import Target, replay_target
from bat.tuner_adapters.reference.random_search import RandomSearch

try:  # the layout since issue 46; before it (to measure "before"), the engine was in bat.analysis.compare
    from bat.campaign import execute
    from bat.campaign.design import Campaign, RunSpec, TunerSpec
except ImportError:
    from bat.analysis.compare import execute
    from bat.analysis.compare.campaign import Campaign, RunSpec, TunerSpec

BUDGET = 50
TARGET = ("pnpoly", "RTX_3090")
#: the scaling campaign's tuners: two libraries' (TPE, Kernel Tuner's GA) and three of ours, as a CI campaign has
SCALING_TUNERS = ("optuna", "kernel_tuner:genetic_algorithm", "reference:genetic", "reference:random",
                  "reference:nelder_mead")


def fresh() -> None:
    """Forget every target and data check this process holds, and collect the garbage the peer before left (a
    full collection is one peer's cost only when that peer made the garbage), so each peer starts from the
    same place."""
    execute._TARGETS.clear()
    getattr(execute, "_CHECKS", {}).clear()  # where the campaign kept the checks (before the driver did)
    getattr(sys.modules.get("bat.run.driver"), "_checked", {}).clear()
    gc.collect()


def check(target: Target) -> None:
    """The data check of ``target``'s dataset, as every run made it before issue 46."""
    try:
        from bat.data.checks import check_dataset, registry_peers
    except ImportError:
        from bat.analysis.checks import check_dataset, registry_peers
    check_dataset(target.dataset, target.space, registry_peers(target.benchmark))


def library(specs: list[RunSpec]) -> float:
    """The runs as a plain library loop; returns the tuner's own seconds, summed."""
    target = replay_target(*TARGET)
    check(target)
    tuner_s = 0.0
    for spec in specs:
        result = run_tuner(spec.tuner.build(), target, budget=Budget(max_evals=BUDGET), seed=spec.seed,
                           check_data=False)
        tuner_s += float(result.trace["tuner_s"].sum())
    return tuner_s


def campaign(c: Campaign) -> float:
    with tempfile.TemporaryDirectory() as out:
        done = execute.run_campaign(c, out)
    return sum(float(r.trace["tuner_s"].sum()) for r in done.records)


def timed(work: Callable[[], float], runs: int) -> dict[str, float]:
    """Wall, CPU, tuner and harness milliseconds per run of ``work`` (which returns its tuner seconds)."""
    fresh()
    load = os.getloadavg()[0]
    start, cpu = time.perf_counter(), time.process_time()
    tuner_s = work()
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    return {"wall_ms": 1e3 * wall / runs, "cpu_ms": 1e3 * cpu / runs, "tuner_ms": 1e3 * tuner_s / runs,
            "harness_ms": 1e3 * (wall - tuner_s) / runs, "harness_cpu_ms": 1e3 * (cpu - tuner_s) / runs,
            "load": load}


def medians(rows: list[dict[str, float]]) -> dict[str, float]:
    return {k: statistics.median(r[k] for r in rows) for k in rows[0]}


def part_library(runs: int, rounds: int) -> dict[str, object]:
    c = Campaign(tuners=(TunerSpec.parse("reference:random"),), targets=(TARGET,), budgets=(BUDGET,), repeats=runs)
    specs = c.runs()
    rows: dict[str, list[dict[str, float]]] = {"library": [], "campaign": []}
    for i in range(rounds):
        order = ("library", "campaign") if i % 2 == 0 else ("campaign", "library")
        for peer in order:
            work = (lambda: library(specs)) if peer == "library" else (lambda: campaign(c))
            rows[peer].append(timed(work, len(specs)))
            print(peer, json.dumps(rows[peer][-1]), flush=True)
    lib, camp = medians(rows["library"]), medians(rows["campaign"])
    return {"runs": len(specs), "rounds": rows, "median": {"library": lib, "campaign": camp},
            "campaign_over_library": {"wall": camp["wall_ms"] / lib["wall_ms"], "cpu": camp["cpu_ms"] / lib["cpu_ms"]}}


def part_transfer(rounds: int) -> dict[str, object]:
    study = plan_transfer(tuners=[f"random={RandomSearch.__module__}:RandomSearch"], benchmarks=["pnpoly"],
                          budget=BUDGET, repeats=10, cross_vendor=False)
    with_prior = study.runs()
    plain = list({s.run_id: s for s in (replace(s, prior=()) for s in with_prior)}.values())
    assert len(plain) == len(with_prior), "every run of the study has a prior"

    def through(specs: list[RunSpec]) -> float:
        with tempfile.TemporaryDirectory() as out:
            done = execute.run_specs(specs, out)
        return sum(float(r.trace["tuner_s"].sum()) for r in done.records)

    rows: dict[str, list[dict[str, float]]] = {"transfer": [], "plain": []}
    for i in range(rounds):
        for peer in (("transfer", "plain") if i % 2 == 0 else ("plain", "transfer")):
            specs = with_prior if peer == "transfer" else plain
            rows[peer].append(timed(lambda specs=specs: through(specs), len(specs)))
            print(peer, json.dumps(rows[peer][-1]), flush=True)
    t, p = medians(rows["transfer"]), medians(rows["plain"])
    return {"runs": len(with_prior), "rounds": rows, "median": {"transfer": t, "plain": p},
            "transfer_over_plain": {"wall": t["wall_ms"] / p["wall_ms"], "cpu": t["cpu_ms"] / p["cpu_ms"]}}


def _cpu_s() -> float:
    """CPU seconds of this process (run in each Dask worker by ``Client.run``)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


@contextmanager
def _chunks_logged(log: Path) -> Iterator[Path]:
    """``execute_chunk`` wrapped while a pool runs (its workers are forked with the wrapper): each chunk appends its
    worker's pid, its start and end (``perf_counter``, one clock for every process) and its CPU seconds to ``log``."""
    real = execute.execute_chunk

    def logged(specs: list[RunSpec]) -> list[Any]:
        start, cpu = time.perf_counter(), time.process_time()
        out = real(specs)
        with log.open("a") as f:
            f.write(json.dumps([os.getpid(), start, time.perf_counter(), time.process_time() - cpu]) + "\n")
        return out

    logged.__module__, logged.__qualname__ = real.__module__, real.__qualname__  # pickled by name, as the real one
    execute.execute_chunk = logged
    try:
        yield log
    finally:
        execute.execute_chunk = real


def _chunk_times(log: Path, start: float, done: float) -> dict[str, object]:
    """Where a pool's campaign spent its wall time: until the first chunk started (loading and checking the targets,
    forking), each worker's chunks (wall and CPU seconds, first start to last end), after the last chunk ended
    (the last results stored, the pool and the store closed)."""
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    workers = {}
    for pid in sorted({r[0] for r in rows}):
        mine = [r for r in rows if r[0] == pid]
        workers[str(pid)] = {"chunks": len(mine), "from_s": min(r[1] for r in mine) - start,
                             "to_s": max(r[2] for r in mine) - start, "busy_s": sum(r[2] - r[1] for r in mine),
                             "cpu_s": sum(r[3] for r in mine)}
    return {"first_start_s": min(r[1] for r in rows) - start, "last_end_s": max(r[2] for r in rows) - start,
            "after_last_s": done - max(r[2] for r in rows), "workers": workers}


def part_scaling(modes: list[str], repeats: int) -> dict[str, object]:
    c = Campaign(tuners=tuple(TunerSpec.parse(t) for t in SCALING_TUNERS), targets=(TARGET,), budgets=(BUDGET,),
                 repeats=repeats)
    out: dict[str, dict[str, object]] = {}
    for spec in {s.tuner.label: s for s in c.runs()}.values():  # every tuner's imports done before any mode
        execute.execute_run(spec)
    for mode in modes:
        fresh()
        cluster = client = None
        if mode in ("dask", "dask-warm"):
            from distributed import Client, LocalCluster

            cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
            client = Client(cluster)
            if mode == "dask-warm":  # a long-lived cluster: one campaign before, untimed, then caches forgotten
                with tempfile.TemporaryDirectory() as folder:
                    execute.run_campaign(c, folder, scheduler=cluster.scheduler_address)
                client.run(fresh)
                fresh()
            workers_before = client.run(_cpu_s)
        load = os.getloadavg()[0]
        cpu, children = time.process_time(), resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        with tempfile.TemporaryDirectory() as folder:
            if cluster is not None:
                execute.run_campaign(c, folder, scheduler=cluster.scheduler_address)
            elif mode == "1":
                execute.run_campaign(c, folder)
            else:
                with _chunks_logged(Path(folder) / "chunks.log") as log:
                    execute.run_campaign(c, folder, workers=int(mode))
                    done = time.perf_counter()
                chunks = _chunk_times(log, start, done)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        row: dict[str, object] = {"wall_s": wall, "cpu_s": time.process_time() - cpu,
                                  "children_cpu_s": after.ru_utime + after.ru_stime - children.ru_utime
                                  - children.ru_stime, "load": load}
        if client is not None and cluster is not None:
            workers_after = client.run(_cpu_s)
            row["dask_workers_cpu_s"] = sorted(workers_after[w] - workers_before[w] for w in workers_after)
            client.close()
            cluster.close()
        if mode not in ("1", "dask", "dask-warm"):
            row["chunks"] = chunks
        out[mode] = row
        print(mode, json.dumps(row), flush=True)
    ratios = {m: out["1"]["wall_s"] / out[m]["wall_s"] for m in out if "1" in out and m != "1"}  # type: ignore[operator]
    runs = len(c.runs())
    print(f"scaling, {runs} runs: " + ", ".join(f"{m} {r:.2f}x" for m, r in ratios.items()), flush=True)
    return {"runs": runs, "modes": out, "ratio_to_1_worker": ratios}


def part_plan(repeats: int, workers: int = 2) -> dict[str, object]:
    """The scaling campaign's chunks (``plan_chunks``) costed in CPU seconds: each run's CPU measured in this
    process (every tuner run once before, so its imports are not counted), summed per chunk, and the chunks dealt
    in their order to the first free of ``workers`` (what the pool and Dask do): the busiest worker's CPU against
    an even share. Load-proof where wall ratios are not: the critical path of the runs, without start-up."""
    import heapq

    c = Campaign(tuners=tuple(TunerSpec.parse(t) for t in SCALING_TUNERS), targets=(TARGET,), budgets=(BUDGET,),
                 repeats=repeats)
    specs = c.runs()
    fresh()
    for spec in {s.tuner.label: s for s in specs}.values():
        execute.execute_run(spec)
    cost: dict[str, float] = {}
    for spec in specs:
        start = time.process_time()
        execute.execute_chunk([spec])
        cost[spec.run_id] = time.process_time() - start
    chunks = [sum(cost[s.run_id] for s in chunk) for chunk in execute.plan_chunks(specs, workers)]
    free = [(0.0, w) for w in range(workers)]
    for chunk in chunks:
        at, w = heapq.heappop(free)
        heapq.heappush(free, (at + chunk, w))
    busiest, total = max(at for at, _ in free), sum(chunks)
    row = {"runs": len(specs), "chunks": len(chunks), "cpu_s": total, "largest_chunk_s": max(chunks),
           "last_chunk_s": chunks[-1], "busiest_worker_s": busiest, "imbalance": busiest / (total / workers),
           "load": os.getloadavg()[0]}
    print("plan", json.dumps(row), flush=True)
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--parts", default="library,transfer,scaling")
    ap.add_argument("--workers", default="1,2,dask")
    ap.add_argument("--scaling-repeats", type=int, default=10)
    args = ap.parse_args()
    parts = args.parts.split(",")
    report: dict[str, object] = {
        "machine": f"{os.cpu_count()} CPUs, {platform.machine()}, Python {platform.python_version()}",
        "started": datetime.now().isoformat(timespec="seconds"), "load_before": os.getloadavg()}
    if "library" in parts:
        report["library"] = part_library(args.runs, args.rounds)
    if "transfer" in parts:
        report["transfer"] = part_transfer(args.rounds)
    if "plan" in parts:
        report["plan"] = part_plan(args.scaling_repeats)
    if "scaling" in parts:
        report["scaling"] = part_scaling(args.workers.split(","), args.scaling_repeats)
    report["load_after"] = os.getloadavg()
    print(json.dumps(report, indent=1, default=str))


if __name__ == "__main__":
    main()
