"""Whole-process start-up: `bat --help`, `bat list`, `bat space gemm`, and Kernel Tuner's GEMM space beside it.

Each command is started as a fresh process, with the bytecode cache a
normal install has (a private ``PYTHONPYCACHEPREFIX``, filled by one warm-up
run of each command; ``PYTHONDONTWRITEBYTECODE`` removed). The peer of
``bat space gemm`` is the same job done with Kernel Tuner 1.5: a script that
builds GEMM's ``Searchspace`` from the same parameters and restrictions and
prints its size. Commands run in turns (all of them, then again), so a
change in the machine's load touches every command alike. Reported per
command: median and minimum wall seconds, median CPU seconds and peak RSS
(``os.wait4``).

Usage: ``python bench/startup_bench.py [--runs 15]``. Target: < 0.25 s for each bat command.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

KERNEL_TUNER_GEMM = """
import re, sys
from kernel_tuner.searchspace import Searchspace
from bat.core.spacefile import read_space_json
from bat.core.benchmark import benchmark_path
raw = read_space_json(benchmark_path("gemm"))
env = {**raw["problem_size"], **raw.get("constants", {})}
restrictions = []
for c in raw["constraints"]:
    text = c["expr"]
    for name, value in env.items():
        text = re.sub(rf"\\b{name}\\b", str(value), text)
    restrictions.append(text)
space = Searchspace({p["name"]: p["values"] for p in raw["parameters"]}, restrictions, 1024)
print(space.size)
"""


def commands() -> dict[str, list[str]]:
    bat = str(Path(sys.executable).with_name("bat"))
    return {"bat --help": [bat, "--help"], "bat list": [bat, "list"], "bat space gemm": [bat, "space", "gemm"],
            "Kernel Tuner: GEMM Searchspace": [sys.executable, "-c", KERNEL_TUNER_GEMM]}


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float, float]:
    """(wall s, CPU s, peak RSS MiB) of one run of ``cmd``."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{cmd} failed")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args()
    cache = tempfile.mkdtemp(prefix="bat-pycache-")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = cache
    cmds = commands()
    try:
        for cmd in cmds.values():
            timed(cmd, env)  # fills the bytecode cache
        load = os.getloadavg()[0]
        runs: dict[str, list[tuple[float, float, float]]] = {name: [] for name in cmds}
        for _ in range(args.runs):
            for name, cmd in cmds.items():
                runs[name].append(timed(cmd, env))
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    print(f"{date.today()}, {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}; "
          f"{args.runs} runs of each command in turns, private bytecode cache; load average {load:.2f} at the "
          f"start, {os.getloadavg()[0]:.2f} at the end")
    print("| command | wall median s | wall min s | CPU median s | peak RSS MiB |")
    print("|---|---|---|---|---|")
    for name, rs in runs.items():
        walls, cpus, peaks = zip(*rs, strict=True)
        print(f"| {name} | {statistics.median(walls):.3f} | {min(walls):.3f} | {statistics.median(cpus):.3f} "
              f"| {statistics.median(peaks):.0f} |")


if __name__ == "__main__":
    main()
