"""What the simulated clock costs per evaluation, against the replay before it, in the same run.

The peer is the Problem as it was before the clock (``bat/core/problem.py`` at
commit ``PEER``, loaded from git into its own module): it answered every
proposal at once and added the charge to a running sum. Against it, on the
same replayed dataset and the same sequence of distinct valid
configurations: today's Problem one at a time on one compile worker and one
device (``evaluate``), one at a time with proposals that run ahead of their
results on 8 workers (``runs_ahead``, bat.core.ahead), and on 8 workers with
the slots kept full (``submit``/``collect``, bat.core.batches); and the
simulator by itself: the bookkeeping of answers in flight with the schedule
under it (``InFlight.add``/``take``), and the schedule alone (jobs through
``Schedule.submit``/``next``).

Robust to a loaded machine: each run is timed in CPU time of this process
(``time.process_time``: time other processes take from the CPU is not
counted), after a garbage collection; every round runs the peer and each
variant once, in an order that alternates from round to round (ABBA), so a
drift in load or clock speed falls on both; each variant's cost over the peer
is the median over the rounds of its difference to the peer of the same
round (paired), also given as a ratio. Target: at most 5 us per evaluation
over the peer.

Usage: ``python bench/clock_bench.py [--evals 5000] [--repeats 7] [--benchmark gemm]``; prints a
Markdown table. Run it from the repository root (it reads the peer with ``git show``).
"""

from __future__ import annotations

import argparse
import gc
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

from bat.core.ahead import ALWAYS, RunsAhead
from bat.core.batches import keep_full
from bat.core.flight import InFlight
from bat.core.problem import Budget, Problem
from bat.core.schedule import SEQUENTIAL, Parallelism, Schedule
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
    gc.collect()
    start = time.process_time()
    for c in todo:
        problem.evaluate(c)
    return time.process_time() - start


def batched(make: Callable[[], Problem], todo: list[dict]) -> float:
    problem = make()
    gc.collect()
    start = time.process_time()
    keep_full(problem, todo)
    return time.process_time() - start


def clock_alone(n: int, par: Parallelism) -> float:
    """The schedule by itself: ``n`` jobs through submit and next, slots kept full."""
    clock = Schedule(par)
    gc.collect()
    start = time.process_time()
    fed = 0
    while fed < min(par.slots, n):
        clock.submit(fed, 0.5, 0.25)
        fed += 1
    while clock.in_flight:
        clock.next()
        if fed < n:
            clock.submit(fed, 0.5, 0.25)
            fed += 1
    return time.process_time() - start


def flight_alone(n: int) -> float:
    """The Problem's bookkeeping of answers in flight with the schedule under it (bat.core.flight), one at a time."""
    flight: InFlight[int] = InFlight(SEQUENTIAL)
    gc.collect()
    start = time.process_time()
    for job in range(n):
        flight.add(job, job, measures=True, compile_s=0.5, device_s=0.25, total_s=0.75)
        flight.take()
    return time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--evals", type=int, default=5000)
    parser.add_argument("--repeats", type=int, default=15)
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
        "clock, 8 workers 1 device, one at a time, running ahead": lambda: one_at_a_time(
            lambda: Problem(**common(), parallelism=Parallelism(8, 1), runs_ahead=RunsAhead(first=ALWAYS)), todo),
        "clock, 8 workers 1 device, slots kept full": lambda: batched(
            lambda: Problem(**common(), parallelism=Parallelism(8, 1)), todo),
        "answers in flight and the schedule alone, one at a time": lambda: flight_alone(len(todo)),
        "the schedule alone, 1 worker 1 device": lambda: clock_alone(len(todo), Parallelism(1, 1)),
        "the schedule alone, 8 workers 1 device": lambda: clock_alone(len(todo), Parallelism(8, 1)),
    }
    times: dict[str, list[float]] = {k: [] for k in variants}
    order = list(variants)
    load_before = os.getloadavg()[0]
    for round_ in range(args.repeats):
        for name in order if round_ % 2 == 0 else order[::-1]:  # ABBA: a drift falls on every variant alike
            times[name].append(variants[name]() / len(todo) * 1e6)
    peer_name = order[0]
    peer = times[peer_name]
    print(f"{len(todo)} evaluations of {args.benchmark} replayed, {args.repeats} rounds (ABBA order), CPU time of "
          f"this process; Python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} CPUs, "
          f"load average {load_before:.2f} before and {os.getloadavg()[0]:.2f} after\n")
    print("| variant | CPU us per evaluation (median) | over the peer (median of paired differences) "
          "| ratio to the peer (median) | interquartile range of the differences |")
    print("|---|---:|---:|---:|---:|")
    for name, values in times.items():
        diffs = [v - p for v, p in zip(values, peer, strict=True)]
        ratios = [v / p for v, p in zip(values, peer, strict=True)]
        q1, _, q3 = statistics.quantiles(diffs, n=4) if len(diffs) > 1 else (diffs[0],) * 3
        print(f"| {name} | {statistics.median(values):.2f} | {statistics.median(diffs):+.2f} "
              f"| {statistics.median(ratios):.3f} | {q1:+.2f} to {q3:+.2f} |")


if __name__ == "__main__":
    main()
