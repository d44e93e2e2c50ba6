"""A CI-sized `bat compare` campaign with 1 worker, 2 workers and on Dask, side by side, and the ratios.

Campaign (about 30 s on one worker of a 2-core machine): ``bat compare``
with reference:random, reference:genetic, kernel_tuner:genetic_algorithm and
optuna on gemm, convolution and pnpoly (RTX 3090, replayed), budgets 25 and
50, 10 repeats: 150 runs, then the statistics, summary, JSON and 9 figures.

Each mode runs in a fresh interpreter (``--child MODE``) from an empty output
folder; the modes take turns, ``--rounds`` times, and the load average is
written before each. Modes: ``1`` (``--workers 1``, in the process), ``2``
(``--workers 2``) and ``dask`` (a ``distributed.LocalCluster`` of 2 worker
processes, 1 thread each, hosted in a process the child spawns, apart from
``bat compare`` as a user's cluster is, then ``--scheduler`` its address;
the cluster's start is not in the compare wall, it is in the process wall).
A cluster in the ``bat compare`` process itself would leave its scheduler's
threads running there, and the figures would be drawn in order there
instead of on forked processes (``bat.campaign.forked.fork_is_safe``):
before 2026-12-06 this bench did so.

Per mode: the wall of the ``bat compare`` call and of the whole process;
the CPU seconds of the whole process tree (``os.wait4``); and per phase of
the call (runs, analysis, outputs: ``study.run_campaign``, ``analyse``,
``write_outputs`` wrapped) its wall, the driver's CPU and its reaped
children's CPU (``RUSAGE_CHILDREN``; Dask's processes are reaped only at the
end, so on Dask the runs' CPU shows in the tree total only). CPU seconds do
not depend on the load the way wall seconds do: they say how much work each
mode does and how much of it is left on one core after the runs.

Usage: ``python bench/ci_campaign_scaling.py [--rounds 2] [--modes 1,2,dask]``.
Run it with a bytecode cache (unset PYTHONDONTWRITEBYTECODE; set PYTHONPYCACHEPREFIX).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from multiprocessing.connection import Connection
from pathlib import Path

ARGS = ["--quiet", "compare", "--tuners", "reference:random,reference:genetic,kernel_tuner:genetic_algorithm,optuna",
        "--benchmarks", "gemm,convolution,pnpoly", "--gpus", "RTX_3090", "--budgets", "25,50", "--repeats", "10"]
PHASES = ("run_campaign", "analyse", "write_outputs")


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def host_cluster(conn: Connection) -> None:
    """A ``LocalCluster`` of 2 worker processes hosted in this (spawned) process, apart from the ``bat compare``
    process as a user's cluster is: sends its address on ``conn`` and closes when told."""
    from distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        conn.send(cluster.scheduler_address)
        conn.recv()


def child(mode: str) -> None:
    import bat.analysis.compare.study as study
    from bat.cli import main

    phases: dict[str, dict[str, float]] = {}

    def timed(name: str, f):
        def call(*args, **kwargs):
            start, cpu, kids = time.perf_counter(), time.process_time(), _children_cpu()
            try:
                return f(*args, **kwargs)
            finally:
                phases[name] = {"wall_s": time.perf_counter() - start, "cpu_s": time.process_time() - cpu,
                                "children_cpu_s": _children_cpu() - kids}
        return call

    for name in PHASES:
        setattr(study, name, timed(name, getattr(study, name)))
    with tempfile.TemporaryDirectory() as tmp:
        args = [*ARGS, "--out", str(Path(tmp) / "out")]
        if mode == "dask":
            spawn = multiprocessing.get_context("spawn")
            here, there = spawn.Pipe()
            host = spawn.Process(target=host_cluster, args=(there,))
            host.start()
            address = here.recv()
            start = time.perf_counter()
            code = main([*args, "--scheduler", address])
            wall = time.perf_counter() - start
            here.send("close")
            host.join()
        else:
            start = time.perf_counter()
            code = main([*args, "--workers", mode])
            wall = time.perf_counter() - start
    print(json.dumps({"code": code, "wall_s": wall, "phases": phases}))


def measure(mode: str) -> dict:
    load = os.getloadavg()
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, __file__, "--child", mode], stdout=subprocess.PIPE, text=True)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"mode {mode} failed")
    report = json.loads(out.strip().splitlines()[-1])
    report.update(process_wall_s=time.perf_counter() - start, tree_cpu_s=usage.ru_utime + usage.ru_stime,
                  load_before=load)
    return report


NAMES = {"1": "1 worker", "2": "2 workers", "dask": "Dask, 2 workers"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--modes", default="1,2,dask")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child)
        return
    modes = args.modes.split(",")
    print(f"{datetime.now():%Y-%m-%d %H:%M}, {platform.machine()}, {os.cpu_count()} CPUs, Python "
          f"{platform.python_version()}; bat {' '.join(ARGS)}", flush=True)
    print("\n| round | mode | load 1/5 min before | compare wall s | process wall s | tree CPU s "
          "| runs: wall / driver CPU / children CPU | analysis: wall / CPU | outputs: wall / driver CPU / "
          "children CPU |\n|---|---|---|---|---|---|---|---|---|", flush=True)
    results: dict[str, list[dict]] = {m: [] for m in modes}
    for r in range(1, args.rounds + 1):
        for mode in modes:
            x = measure(mode)
            results[mode].append(x)
            p = x["phases"]
            run, ana, outs = p["run_campaign"], p["analyse"], p["write_outputs"]
            print(f"| {r} | {NAMES.get(mode, mode)} | {x['load_before'][0]:.2f} / {x['load_before'][1]:.2f} "
                  f"| {x['wall_s']:.1f} | {x['process_wall_s']:.1f} | {x['tree_cpu_s']:.1f} "
                  f"| {run['wall_s']:.1f} / {run['cpu_s']:.1f} / {run['children_cpu_s']:.1f} "
                  f"| {ana['wall_s']:.1f} / {ana['cpu_s']:.1f} "
                  f"| {outs['wall_s']:.1f} / {outs['cpu_s']:.1f} / {outs['children_cpu_s']:.1f} |", flush=True)
        if "1" in modes:
            ratios = [f"1 worker / {NAMES[m]}: {results['1'][-1]['wall_s'] / results[m][-1]['wall_s']:.2f} "
                      f"(whole process {results['1'][-1]['process_wall_s'] / results[m][-1]['process_wall_s']:.2f})"
                      for m in modes if m != "1"]
            print(f"\nround {r}: " + "; ".join(ratios) + "\n", flush=True)
    if "1" in modes and args.rounds > 1:
        for m in modes:
            if m != "1":
                each = [a["wall_s"] / b["wall_s"] for a, b in zip(results["1"], results[m], strict=True)]
                print(f"1 worker / {NAMES[m]}, compare wall: median {statistics.median(each):.2f}, "
                      f"each round {', '.join(f'{e:.2f}' for e in each)}")


if __name__ == "__main__":
    main()
