"""How long pytest takes to collect the suite, against the suite of an earlier commit in the same run.

``pytest --collect-only -q -p no:cacheprovider`` over ``tests/`` of this checkout and over ``tests/`` of
``--peer REV`` (the whole tree of that commit, from ``git archive``, in a temporary folder; both import
the installed ``bat``, so only the test files differ), in turns. Warm (the default): a private bytecode
cache filled by one collection of each (``PYTHONPYCACHEPREFIX``; ``PYTHONDONTWRITEBYTECODE`` removed).
Cold (``--cold``): a new empty bytecode cache for every run, so every module collection imports is
compiled, ours and the libraries' (what a machine that writes no bytecode, or a fresh install, pays).
Printed: median and minimum wall seconds, median CPU seconds (the process and its children), the ratio
of each median to the peer's, and the load average before and after.

Usage: ``python bench/collection_bench.py [--peer 2847851] [--runs 5] [--cold]``. Target (issue 46): at
most 10 s on the idle two-core machine.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def collect(folder: Path, env: dict[str, str]) -> tuple[float, float]:
    """(wall s, CPU s) of one collection of ``folder``'s tests."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                             "tests"], cwd=folder, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"collecting {folder / 'tests'} failed (exit {os.waitstatus_to_exitcode(status)})")
    return wall, usage.ru_utime + usage.ru_stime


def checkout(rev: str, into: Path) -> Path:
    """The tree of commit ``rev`` written into ``into``."""
    archive = subprocess.run(["git", "archive", "--format=tar", rev], cwd=ROOT, capture_output=True,
                             check=True).stdout
    with tempfile.TemporaryFile() as tar_file:
        tar_file.write(archive)
        tar_file.seek(0)
        with tarfile.open(fileobj=tar_file) as tar:
            tar.extractall(into, filter="data")
    return into


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--peer", default="2847851", help="the commit whose tests are the peer")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--cold", action="store_true", help="an empty bytecode cache for every run")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bat-collection-"))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
    suites = {"this checkout": ROOT, f"peer: {args.peer}": checkout(args.peer, work / "peer")}
    try:
        for folder in suites.values():
            collect(folder, env)  # fills the bytecode cache, and checks that each suite collects
        load = os.getloadavg()[0]
        runs: dict[str, list[tuple[float, float]]] = {name: [] for name in suites}
        for i in range(args.runs):
            for name, folder in suites.items():
                cache = work / f"cold-{i}-{len(runs[name])}-{name[:4]}"
                runs[name].append(collect(folder, {**env, "PYTHONPYCACHEPREFIX": str(cache)} if args.cold else env))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {platform.machine()}, {os.cpu_count()} CPUs, Python "
          f"{platform.python_version()}; {args.runs} collections of each suite in turns, "
          f"{'a new empty' if args.cold else 'a warm private'} bytecode cache each run; load average "
          f"{load:.2f} before, {os.getloadavg()[0]:.2f} after")
    print("| suite | wall median s | wall min s | CPU median s | wall / peer | CPU / peer |")
    print("|---|---|---|---|---|---|")
    peer_wall, peer_cpu = (statistics.median(col) for col in zip(*runs[f"peer: {args.peer}"], strict=True))
    for name, rs in runs.items():
        walls, cpus = zip(*rs, strict=True)
        print(f"| {name} | {statistics.median(walls):.2f} | {min(walls):.2f} | {statistics.median(cpus):.2f} "
              f"| {statistics.median(walls) / peer_wall:.2f} | {statistics.median(cpus) / peer_cpu:.2f} |")


if __name__ == "__main__":
    main()
