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

Usage: ``python bench/kernel_tuner_bench.py [--strategies genetic_algorithm,...] [--budget 100]
[--runs 20] [--pairs 3]``. Run it with a bytecode cache (unset PYTHONDONTWRITEBYTECODE; set
PYTHONPYCACHEPREFIX), as a normal install has one. Target: ours / peer <= 1.2.
"""

from __future__ import annotations

import argparse
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

    def run(self, strategy: str, budget: int, seed: int) -> int:
        from bat.core.problem import Budget
        from bat.registry import make_tuner
        from bat.run.driver import run_tuner

        result = run_tuner(make_tuner(f"kernel_tuner:{strategy}"), self.target, budget=Budget(max_evals=budget),
                           seed=seed)
        return int(result.trace["charged"].sum())


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
    print("| strategy | measurement | peer (Kernel Tuner simulation mode) | ours | ours / peer |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        cache = export_cache(Path(tmp))
        ours, peer = Ours(), Peer(cache)
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
