"""What reading an isolated tuner's CPU time costs: the tree clock against the one-process clock it replaced.

The tree clock (bat.tuner_adapters.tree_clock) is read once per proposal
(``counts_waiting``); the clock it replaced read one process's threads
(``/proc/<pid>/task/*/schedstat``) and its ``stat``, twice per proposal. Both
read the same live tree in the same run: a stand-in supervisor (this
script's child, a sleeping Python) with one child of its own (the tuner's
place, a sleeping Python with ``--threads`` idle threads). Printed: the
median microseconds per reading and per proposal of each, over ``--readings``
readings, alternated in ``--rounds`` rounds.

Usage: ``python bench/tree_clock_bench.py [--readings 2000] [--rounds 7] [--threads 4]``; prints Markdown.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time

from bat.tuner_adapters.tree_clock import CpuClock

TUNER = ("import threading, time\n"
         "[threading.Thread(target=time.sleep, args=(60,), daemon=True).start() for _ in range({})]\n"
         "time.sleep(60)\n")
SUPERVISOR = "import subprocess, sys, time\nsubprocess.Popen([sys.executable, '-c', sys.argv[1]])\ntime.sleep(60)\n"


def one_process_clock(pid: int, tick: int) -> float:
    """The peer: the replaced reading (every live thread's schedstat, plus waited-for children from stat)."""
    ns = 0
    with os.scandir(f"/proc/{pid}/task") as tasks:
        for task in tasks:
            with open(f"/proc/{pid}/task/{task.name}/schedstat", "rb") as f:
                ns += int(f.read().split()[0])
    with open(f"/proc/{pid}/stat", "rb") as f:
        fields = f.read().rsplit(b")", 1)[1].split()
    return ns / 1e9 + (int(fields[13]) + int(fields[14])) / tick


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--readings", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--threads", type=int, default=4)
    args = parser.parse_args()
    root = subprocess.Popen([sys.executable, "-c", SUPERVISOR, TUNER.format(args.threads)])
    try:
        time.sleep(1.0)
        clock = CpuClock(root.pid)
        (tuner,) = clock._ours - {root.pid}
        tick = os.sysconf("SC_CLK_TCK")
        tree, peer = [], []
        for _ in range(args.rounds):
            start = time.perf_counter()
            for _ in range(args.readings):
                clock()
            tree.append((time.perf_counter() - start) / args.readings * 1e6)
            start = time.perf_counter()
            for _ in range(args.readings):
                one_process_clock(tuner, tick)
            peer.append((time.perf_counter() - start) / args.readings * 1e6)
    finally:
        root.kill()
        root.wait()
    t, p = statistics.median(tree), statistics.median(peer)
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; "
          f"tuner with {args.threads + 1} threads\n")
    print(f"| clock (median of {args.rounds} rounds of {args.readings} readings) | us per reading | "
          "readings per proposal | us per proposal |\n|---|---|---|---|")
    print(f"| tree clock (whole tree: ended threads, children, zombies) | {t:.1f} | 1 | {t:.1f} |")
    print(f"| peer: the replaced one-process clock (live threads only) | {p:.1f} | 2 | {2 * p:.1f} |")
    print(f"\nratio per proposal, tree / peer: {t / (2 * p):.2f}")


if __name__ == "__main__":
    main()
