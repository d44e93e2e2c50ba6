"""What the simulated clock costs per evaluation, against the replay before it, in the same run.

The peer is the Problem as it was before the clock (``bat/core/problem.py`` at
commit ``PEER``, loaded from git into its own module): it answered every
proposal at once and added the charge to a running sum. Against it, on the
same replayed dataset and the same sequence of distinct valid
configurations: today's Problem one at a time on one compile worker and one
device (``evaluate``), and on 8 workers with the slots kept full
(``submit``/``collect``, bat.core.batches). Runs alternate between the three,
``--repeats`` times; medians and the fastest repeat are reported, in
microseconds per evaluation, with the difference to the peer, and the
schedule by itself (jobs through ``Schedule.submit``/``next`` alone). Target:
at most 5 us per evaluation over the peer.

Usage: ``python bench/clock_bench.py [--evals 5000] [--repeats 7] [--benchmark gemm]``; prints a
Markdown table. Run it from the repository root (it reads the peer with ``git show``).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from bat.core.batches import keep_full
from bat.core.problem import Budget, Problem
from bat.core.schedule import Parallelism, Schedule
from bat.run.targets import Target, replay_target

#: the last commit before the simulated clock
PEER = "c21267a"


def peer_problem() -> type:
    """The Problem class at ``PEER``, imported from its source under another module name."""
    source = subprocess.run(["git", "show", f"{PEER}:bat/core/problem.py"], check=True, capture_output=True,
                            text=True).stdout
    path = Path(tempfile.mkdtemp()) / "problem_before_clock.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("problem_before_clock", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module.Problem


def configs(target: Target, n: int) -> list[dict]:
    space = target.space
    rows = space.sample_valid(min(n, space.count_valid()), np.random.default_rng(0))
    return [space.config(r) for r in rows]


def one_at_a_time(make: Callable[[], object], todo: list[dict]) -> float:
    problem = make()
    start = time.perf_counter()
    for c in todo:
        problem.evaluate(c)
    return time.perf_counter() - start


def batched(make: Callable[[], Problem], todo: list[dict]) -> float:
    problem = make()
    start = time.perf_counter()
    keep_full(problem, todo)
    return time.perf_counter() - start


def clock_alone(n: int, par: Parallelism) -> float:
    """The schedule by itself: ``n`` jobs through submit and next, slots kept full."""
    clock = Schedule(par)
    start = time.perf_counter()
    fed = 0
    while fed < min(par.slots, n):
        clock.submit(fed, 0.5, 0.25)
        fed += 1
    while clock.in_flight:
        clock.next()
        if fed < n:
            clock.submit(fed, 0.5, 0.25)
            fed += 1
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--evals", type=int, default=5000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--benchmark", default="gemm")
    args = parser.parse_args()
    target = replay_target(args.benchmark)
    todo = configs(target, args.evals)
    budget = Budget(max_evals=len(todo))
    before = peer_problem()

    def common() -> dict:
        return {"space": target.space, "backend": target.backend, "budget": budget, "tuner_charge_s": 0.0}

    variants = {
        "before the clock (peer), one at a time": lambda: one_at_a_time(lambda: before(**common()), todo),
        "clock, 1 worker 1 device, one at a time": lambda: one_at_a_time(lambda: Problem(**common()), todo),
        "clock, 8 workers 1 device, slots kept full": lambda: batched(
            lambda: Problem(**common(), parallelism=Parallelism(8, 1)), todo),
        "the schedule alone, 1 worker 1 device": lambda: clock_alone(len(todo), Parallelism(1, 1)),
        "the schedule alone, 8 workers 1 device": lambda: clock_alone(len(todo), Parallelism(8, 1)),
    }
    times: dict[str, list[float]] = {k: [] for k in variants}
    for _ in range(args.repeats):
        for name, go in variants.items():
            times[name].append(go() / len(todo) * 1e6)
    peer = statistics.median(times[next(iter(variants))])
    print(f"{len(todo)} evaluations of {args.benchmark} replayed, {args.repeats} alternating repeats, medians; "
          f"Python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.2f} at the end\n")
    best = min(times[next(iter(variants))])
    print("| variant | us per evaluation (median) | over the peer | fastest repeat | over the peer's fastest |")
    print("|---|---:|---:|---:|---:|")
    for name, values in times.items():
        m, b = statistics.median(values), min(values)
        print(f"| {name} | {m:.2f} | {m - peer:+.2f} | {b:.2f} | {b - best:+.2f} |")


if __name__ == "__main__":
    main()
