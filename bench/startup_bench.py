"""Whole-process start-up: `bat --help`, `bat list`, `bat space gemm`, against `import kernel_tuner` in the same run.

Each command is started as a fresh process. Warm (the default): with the
bytecode cache a normal install has (a private ``PYTHONPYCACHEPREFIX``,
filled by one warm-up run of each command; ``PYTHONDONTWRITEBYTECODE``
removed). Cold (``--cold``): every run gets a new, empty bytecode cache, so
each process compiles every module it imports, ours and the libraries'
(the first run after an install that compiled nothing). The peer of every
command is ``python -c "import kernel_tuner"`` (Kernel Tuner 1.5), and
``bat space gemm`` has a second one: the same job done with Kernel Tuner, a
script that builds GEMM's ``Searchspace`` from the same parameters and
restrictions and prints its size. Commands run in turns (all of them, then
again), so a change in the machine's load touches every command alike.
Reported per command: median and minimum wall seconds, median CPU seconds,
peak RSS (``os.wait4``), and the ratio of its median wall and CPU seconds to
those of ``import kernel_tuner``.

Usage: ``python bench/startup_bench.py [--runs 15] [--cold]``. Target (issue 45): each bat command
<= 0.20 s warm, and no slower than ``import kernel_tuner`` (ratio <= 1), warm and cold.
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


PEER = "import kernel_tuner"


def commands() -> dict[str, list[str]]:
    bat = str(Path(sys.executable).with_name("bat"))
    return {"bat --help": [bat, "--help"], "bat list": [bat, "list"], "bat space gemm": [bat, "space", "gemm"],
            PEER: [sys.executable, "-c", "import kernel_tuner"],
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


def timed_in(cmd: list[str], env: dict[str, str], cold: bool) -> tuple[float, float, float]:
    """One run of ``cmd`` with the bytecode cache of ``env``, or, ``cold``, with a new empty one."""
    if not cold:
        return timed(cmd, env)
    cache = tempfile.mkdtemp(prefix="bat-pycache-cold-")
    try:
        return timed(cmd, {**env, "PYTHONPYCACHEPREFIX": cache})
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--cold", action="store_true", help="an empty bytecode cache for every run")
    args = ap.parse_args()
    cache = tempfile.mkdtemp(prefix="bat-pycache-")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = cache
    cmds = commands()
    try:
        for cmd in cmds.values():
            timed(cmd, env)  # fills the bytecode cache (warm), or checks that each command runs (cold)
        load = os.getloadavg()[0]
        runs: dict[str, list[tuple[float, float, float]]] = {name: [] for name in cmds}
        for _ in range(args.runs):
            for name, cmd in cmds.items():
                runs[name].append(timed_in(cmd, env, args.cold))
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    print(f"{date.today()}, {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}; "
          f"{args.runs} runs of each command in turns, {'a new empty' if args.cold else 'a warm private'} bytecode "
          f"cache each run; load average {load:.2f} at the start, {os.getloadavg()[0]:.2f} at the end")
    print(f"| command | wall median s | wall min s | CPU median s | peak RSS MiB | wall / {PEER} "
          f"| CPU / {PEER} |")
    print("|---|---|---|---|---|---|---|")
    peer_wall, peer_cpu = (statistics.median(col) for col in list(zip(*runs[PEER], strict=True))[:2])
    for name, rs in runs.items():
        walls, cpus, peaks = zip(*rs, strict=True)
        print(f"| {name} | {statistics.median(walls):.3f} | {min(walls):.3f} | {statistics.median(cpus):.3f} "
              f"| {statistics.median(peaks):.0f} | {statistics.median(walls) / peer_wall:.2f} "
              f"| {statistics.median(cpus) / peer_cpu:.2f} |")


if __name__ == "__main__":
    main()
