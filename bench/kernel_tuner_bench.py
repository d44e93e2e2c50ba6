"""Our Kernel Tuner adapter against Kernel Tuner's own simulation mode: same strategy, budget and cache.

Peer: ``kernel_tuner.tune_kernel(..., simulation_mode=True, cache=FILE,
strategy=S, strategy_options={"max_fevals": B})``, where FILE is the
replayed dataset exported as a Kernel Tuner cache (``bat data export --to
kernel_tuner``) and the restrictions are the space file's constraint strings
with its constants written in. Ours: ``run_tuner`` with
``kernel_tuner:S`` at budget B on the replay target of the same dataset.

Two measurements, each an A/B series run in turns (ours, peer, ours, ...):

1. whole process: a fresh interpreter runs ``--runs`` seeded runs of one
   side (imports, loading the data and every run included); wall and CPU
   seconds of the child (``os.wait4``);
2. in process: after one warm-up run of each, the seconds of single runs.

With ``--margin``, instead, the cost at the margin (issue 45), in this one
process and in CPU time (``time.process_time``), in turns: random search
(ours ``reference:random``, the peer's ``random_sample``) with budgets of
``--small`` and ``--large`` evaluations (default 500 and 8000); the cost
per evaluation is the difference of the two runs' CPU seconds over the
difference of their evaluations (what a run's fixed cost, e.g. Kernel
Tuner loading its cache, leaves out), and one run of 50 evaluations is
timed whole. Target: ours / peer <= 0.5 per evaluation, and a run of 50 at
most 5 ms of CPU.

The garbage collector, the same for both sides (``--gc``): a full
collection of this process costs 30 to 70 ms of CPU (the loaded data's
objects), 4 to 9 µs per evaluation in a difference of 7,500 evaluations,
and whether one falls in the larger run, the smaller or neither depends on
what the runs before left behind: that was the spread between the pairs, and
the drift over them, of the earlier rounds (``--gc as-is``, nothing done).
``collect`` (the default): every timed run starts from a full collection
(``gc.collect()``, not timed), so the collections a run causes are the
ones its own allocations cause; ``off``: the same, and the collector off
inside each timed run (the evaluation work alone, neither side's
collections). The full collections inside the timed runs of each side are
counted and printed.

Usage: ``python bench/kernel_tuner_bench.py [--strategies genetic_algorithm,...] [--budget 100]
[--runs 20] [--pairs 3]`` or ``python bench/kernel_tuner_bench.py --margin [--pairs 3] [--gc collect]``.
Run it with a bytecode cache (unset PYTHONDONTWRITEBYTECODE; set
PYTHONPYCACHEPREFIX), as a normal install has one. Target: ours / peer <= 1.2.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from datetime import date
from pathlib import Path

import numpy as np

BENCH, GPU = "gemm", "RTX_3090"


def export_cache(folder: Path) -> Path:
    """The replayed dataset as a Kernel Tuner cache file."""
    from bat.core.dataset import Dataset
    from bat.formats.kerneltuner import write_cache
    from bat.registry import find_dataset

    return write_cache(Dataset.load(find_dataset(BENCH, GPU).path), folder / f"{BENCH}_{GPU}.json")


class Peer:
    """Kernel Tuner's simulation mode on the exported cache."""

    def __init__(self, cache: Path) -> None:
        import json

        from bat.core.benchmark import load_benchmark

        space = load_benchmark(BENCH).space
        env = {**space.problem_size, **space.constants}
        self.restrictions = []
        for c in space.constraints:
            text = c.expr
            for name, value in env.items():
                text = re.sub(rf"\b{name}\b", str(value), text)
            self.restrictions.append(text)
        self.tune_params = {p.name: list(p.values) for p in space.parameters}
        header = json.loads(cache.read_text())
        self.kernel, self.size, self.cache = header["kernel_name"], tuple(header["problem_size"]), str(cache)

    def run(self, strategy: str, budget: int, seed: int) -> int:
        import kernel_tuner

        random.seed(seed)
        np.random.seed(seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            results, _ = kernel_tuner.tune_kernel(
                self.kernel, "__global__ void k() {}", self.size, [], self.tune_params,
                restrictions=self.restrictions, cache=self.cache, simulation_mode=True, strategy=strategy,
                strategy_options={"max_fevals": budget}, verbose=False, quiet=True)
        return len({tuple(r[k] for k in self.tune_params) for r in results})


class Ours:
    """``kernel_tuner:STRATEGY`` through run_tuner on the replay target."""

    def __init__(self) -> None:
        from bat.run.targets import replay_target

        self.target = replay_target(BENCH, GPU)

    def run(self, strategy: str, budget: int, seed: int, *, tuner: str = "") -> int:
        """Evaluations of ``kernel_tuner:strategy`` (or of ``tuner``, when named) in one run."""
        from bat.core.problem import Budget
        from bat.registry import make_tuner
        from bat.run.driver import run_tuner

        result = run_tuner(make_tuner(tuner or f"kernel_tuner:{strategy}"), self.target,
                           budget=Budget(max_evals=budget), seed=seed)
        return int(result.trace["charged"].sum())


#: full collections (generation 2) so far, and so far inside timed runs (``cpu_s``)
FULL = {"all": 0, "timed": 0}


def _count_full(phase: str, info: dict[str, int]) -> None:
    FULL["all"] += phase == "stop" and info["generation"] == 2


def cpu_s(run: Callable[[], int], expected: int, collector: str = "as-is") -> float:
    """CPU seconds of ``run()``, which must make ``expected`` evaluations, with the garbage collector as
    ``collector`` says (``--gc``; the full collection before the run is neither timed nor counted)."""
    if collector != "as-is":
        gc.collect()
    full = FULL["all"]
    if collector == "off":
        gc.disable()
    try:
        start = time.process_time()
        made = run()
        spent = time.process_time() - start
    finally:
        if collector == "off":
            gc.enable()
    FULL["timed"] += FULL["all"] - full
    if made != expected:
        raise SystemExit(f"a run made {made} evaluations, not {expected}")
    return spent


def margin(ours: Ours, peer: Peer, pairs: int, small: int, large: int, collector: str) -> None:
    """Random search at the margin, both sides in this process, in turns (see the module docstring)."""
    sides: dict[str, Callable[[int, int], int]] = {
        "ours": lambda n, seed: ours.run("", n, seed, tuner="reference:random"),
        "peer": lambda n, seed: peer.run("random_sample", n, seed)}
    per_eval: dict[str, list[float]] = {"ours": [], "peer": []}
    run50: dict[str, list[float]] = {"ours": [], "peer": []}
    full = {"ours": 0, "peer": 0}
    gc.callbacks.append(_count_full)
    for run in sides.values():  # warm-up: imports, the data check, Kernel Tuner's first cache load
        run(small, 0)
    for seed in range(1, pairs + 1):
        for side, run in sides.items():
            before = FULL["timed"]
            big = cpu_s(lambda: run(large, seed), large, collector)  # noqa: B023 (called at once)
            little = cpu_s(lambda: run(small, seed), small, collector)  # noqa: B023
            per_eval[side].append((big - little) / (large - small) * 1e6)
            run50[side].append(cpu_s(lambda: run(50, seed), 50, collector) * 1e3)  # noqa: B023
            full[side] += FULL["timed"] - before
    gc.callbacks.remove(_count_full)
    e = {k: statistics.median(v) for k, v in per_eval.items()}
    r = {k: statistics.median(v) for k, v in run50.items()}
    print(f"| random search, in process, CPU (median of {pairs}, in turns, --gc {collector}) | peer (Kernel Tuner "
          "simulation mode, random_sample) | ours (reference:random) | ours / peer |")
    print("|---|---|---|---|")
    print(f"| per evaluation at the margin ({large} minus {small} evaluations) | {e['peer']:.1f} µs "
          f"| {e['ours']:.1f} µs | {e['ours'] / e['peer']:.2f} |")
    print(f"| one run of 50 evaluations | {r['peer']:.1f} ms | {r['ours']:.2f} ms | {r['ours'] / r['peer']:.2f} |")
    print(f"all pairs, µs per evaluation: {per_eval}; ms per run of 50: {run50}")
    print(f"full collections inside the timed runs: {full}")


def child(side: str, strategy: str, budget: int, runs: int, cache: Path) -> None:
    runner = Ours() if side == "ours" else Peer(cache)
    for seed in range(runs):
        runner.run(strategy, budget, seed)


def whole_process(side: str, strategy: str, budget: int, runs: int, cache: Path) -> tuple[float, float]:
    """(wall s, CPU s) of a fresh interpreter doing ``runs`` runs of one side."""
    cmd = [sys.executable, __file__, "--child", side, "--strategies", strategy, "--budget", str(budget),
           "--runs", str(runs), "--cache", str(cache)]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{side} child failed: {cmd}")
    return wall, usage.ru_utime + usage.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--strategies", default="genetic_algorithm,random_sample,simulated_annealing,greedy_ils")
    ap.add_argument("--budget", type=int, default=100)
    ap.add_argument("--runs", type=int, default=20, help="runs per whole-process measurement")
    ap.add_argument("--pairs", type=int, default=3, help="A/B pairs per measurement")
    ap.add_argument("--margin", action="store_true", help="random search's cost at the margin and per run of 50")
    ap.add_argument("--small", type=int, default=500, help="--margin: evaluations of the smaller run")
    ap.add_argument("--large", type=int, default=8000, help="--margin: evaluations of the larger run")
    ap.add_argument("--gc", choices=("collect", "off", "as-is"), default="collect",
                    help="--margin: the garbage collector in each timed run (see the module docstring)")
    ap.add_argument("--child", choices=("ours", "peer"), help=argparse.SUPPRESS)
    ap.add_argument("--cache", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    strategies = args.strategies.split(",")
    if args.child:
        child(args.child, strategies[0], args.budget, args.runs, args.cache)
        return
    load = os.getloadavg()
    print(f"{date.today()}, {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
          f"{BENCH} on {GPU}, budget {args.budget}; load average {load[0]:.2f} at the start", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        cache = export_cache(Path(tmp))
        ours, peer = Ours(), Peer(cache)
        if args.margin:
            margin(ours, peer, args.pairs, args.small, args.large, args.gc)
            print(f"load average at the end: {os.getloadavg()[0]:.2f}")
            return
        print("| strategy | measurement | peer (Kernel Tuner simulation mode) | ours | ours / peer |")
        print("|---|---|---|---|---|")
        for strategy in strategies:
            walls: dict[str, list[float]] = {"ours": [], "peer": []}
            cpus: dict[str, list[float]] = {"ours": [], "peer": []}
            for _ in range(args.pairs):
                for side in ("ours", "peer"):
                    wall, cpu = whole_process(side, strategy, args.budget, args.runs, cache)
                    walls[side].append(wall)
                    cpus[side].append(cpu)
            w = {k: statistics.median(v) for k, v in walls.items()}
            c = {k: statistics.median(v) for k, v in cpus.items()}
            print(f"| {strategy} | whole process, {args.runs} runs, wall (median of {args.pairs}) | {w['peer']:.2f} s "
                  f"| {w['ours']:.2f} s | {w['ours'] / w['peer']:.2f} |")
            print(f"| {strategy} | whole process, {args.runs} runs, CPU | {c['peer']:.2f} s | {c['ours']:.2f} s "
                  f"| {c['ours'] / c['peer']:.2f} |", flush=True)
            ours.run(strategy, args.budget, 0)
            peer.run(strategy, args.budget, 0)
            single: dict[str, list[float]] = {"ours": [], "peer": []}
            for seed in range(1, 2 * args.pairs + 1):
                for side, runner in (("ours", ours), ("peer", peer)):
                    start = time.perf_counter()
                    runner.run(strategy, args.budget, seed)
                    single[side].append(time.perf_counter() - start)
            s = {k: statistics.median(v) for k, v in single.items()}
            print(f"| {strategy} | in process, one run (median of {2 * args.pairs}) | {s['peer'] * 1e3:.0f} ms "
                  f"| {s['ours'] * 1e3:.0f} ms | {s['ours'] / s['peer']:.2f} |", flush=True)
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
