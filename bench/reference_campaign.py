"""The reference campaign: `bat compare` on the sample-size-study design, with 1 worker, 2 workers and Dask.

Campaign: ``bat compare --preset sample-size-study`` (random search, random
forest, genetic algorithm, BO with a GP (``smac:bo``) and with TPE
(``optuna``), final configurations re-measured 10 times) on the shipped
GEMM, convolution and pnpoly data (RTX 3090, replayed), at the budgets and
repeats given (see bench/RESULTS.md for why the study's 200 and 400 are not
among them).

Each mode runs in a fresh interpreter (``--child MODE``) from an empty output
folder, one after the other:

- ``1``: ``--workers 1`` (in the process), every run wrapped to record its
  wall and CPU seconds and its peak RSS (the kernel's high-water mark, reset
  before each run through ``/proc/self/clear_refs``), summed per tuner;
- ``2``: ``--workers 2``;
- ``dask``: a ``distributed.LocalCluster`` of 2 worker processes (1 thread
  each) started in the child, then ``--scheduler`` its address.

For each mode: the wall seconds of the ``bat compare`` call (runs,
statistics, report and plots; the Dask cluster's start excluded), and the
CPU seconds and peak RSS of the child's whole process tree (``os.wait4``:
the largest single process, not a sum). The scaling ratio is the 1-worker
wall over the 2-worker wall.

The code measured is whatever ``bat`` imports: to measure another checkout
(e.g. the commit before a change) put it first on ``PYTHONPATH``; the
script uses only what both versions have (``bat.cli.main``, and
``bat.campaign.execute.run_one`` or, before it, ``execute_run``).

Usage: ``python bench/reference_campaign.py [--budgets 25,50,100] [--repeats 2] [--modes 1,2,dask]``.
Run it with a bytecode cache (unset PYTHONDONTWRITEBYTECODE; set PYTHONPYCACHEPREFIX).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

BENCHMARKS = "gemm,convolution,pnpoly"


def compare_args(budgets: str, repeats: int, out: Path) -> list[str]:
    return ["compare", "--preset", "sample-size-study", "--benchmarks", BENCHMARKS, "--budgets", budgets,
            "--repeats", str(repeats), "--out", str(out)]


def _rss_peak_reset() -> bool:
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def _rss_peak_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def child(mode: str, budgets: str, repeats: int) -> None:
    import bat.campaign.execute as execute
    from bat.cli import main

    per_tuner: dict[str, dict[str, float]] = collections.defaultdict(lambda: collections.Counter())
    if mode == "1":
        # the run alone: run_one where runs are summarised at store time (issue 45), execute_run before
        name = "run_one" if hasattr(execute, "run_one") else "execute_run"
        run = getattr(execute, name)

        def measured(spec):  # the same wrapper whatever version is measured
            resettable = _rss_peak_reset()
            start, cpu = time.perf_counter(), time.process_time()
            record = run(spec)
            stats = per_tuner[spec.tuner.label]
            stats["runs"] += 1
            stats["wall_s"] += time.perf_counter() - start
            stats["cpu_s"] += time.process_time() - cpu
            if resettable:
                stats["peak_mib"] = max(stats["peak_mib"], _rss_peak_mib())
            return record

        setattr(execute, name, measured)
    with tempfile.TemporaryDirectory() as tmp:
        args = compare_args(budgets, repeats, Path(tmp) / "out")
        if mode == "dask":
            from distributed import LocalCluster

            with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
                start = time.perf_counter()
                code = main([*args, "--scheduler", cluster.scheduler_address])
                wall = time.perf_counter() - start
        else:
            start = time.perf_counter()
            code = main([*args, "--workers", mode])
            wall = time.perf_counter() - start
    print(json.dumps({"code": code, "wall_s": wall, "per_tuner": per_tuner}))


def measure(mode: str, budgets: str, repeats: int) -> dict:
    cmd = [sys.executable, __file__, "--child", mode, "--budgets", budgets, "--repeats", str(repeats)]
    load = os.getloadavg()[0]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"mode {mode} failed")
    report = json.loads(out.strip().splitlines()[-1])
    report.update(cpu_s=usage.ru_utime + usage.ru_stime, peak_mib=usage.ru_maxrss / 1024, load_before=load,
                  load_after=os.getloadavg()[0])
    return report


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budgets", default="25,50,100")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--modes", default="1,2,dask")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child, args.budgets, args.repeats)
        return
    import bat

    print(f"{date.today()}, {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}; "
          f"bat from {Path(bat.__file__).parent}; budgets {args.budgets}, repeats {args.repeats}", flush=True)
    results = {}
    for mode in args.modes.split(","):
        results[mode] = measure(mode, args.budgets, args.repeats)
        r = results[mode]
        print(f"mode {mode}: wall {r['wall_s']:.1f} s, CPU {r['cpu_s']:.1f} s, peak RSS {r['peak_mib']:.0f} MiB "
              f"(load average {r['load_before']:.2f} before, {r['load_after']:.2f} after)", flush=True)
    print("\n| mode | wall s | CPU s | peak RSS MiB (largest process) | load average before / after |")
    print("|---|---|---|---|---|")
    names = {"1": "1 worker (in process)", "2": "2 workers", "dask": "Dask LocalCluster, 2 workers"}
    for mode, r in results.items():
        print(f"| {names.get(mode, mode)} | {r['wall_s']:.1f} | {r['cpu_s']:.1f} | {r['peak_mib']:.0f} "
              f"| {r['load_before']:.2f} / {r['load_after']:.2f} |")
    if "1" in results:
        for other in ("2", "dask"):
            if other in results:
                print(f"\nscaling, 1 worker / {names[other]}: {results['1']['wall_s'] / results[other]['wall_s']:.2f}")
        print("\n| tuner (1 worker) | runs | wall s | CPU s | peak RSS MiB |")
        print("|---|---|---|---|---|")
        for label, s in sorted(results["1"]["per_tuner"].items()):
            print(f"| {label} | {s['runs']:.0f} | {s['wall_s']:.1f} | {s['cpu_s']:.1f} | {s.get('peak_mib', 0):.0f} |")


if __name__ == "__main__":
    main()
