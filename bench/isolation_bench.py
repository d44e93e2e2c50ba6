"""What fair play costs: in-process replay per evaluation, and isolation against in-process.

1. In-process replay: a tuner that only proposes a list of configurations
   drawn beforehand (its own time is nil) runs on the replayed GEMM data
   (17956 configurations) through the Problem and the trace recorder, as
   every run does; against its peer, the replay backend's own ``evaluate``
   on the same configurations, both in CPU time (``time.process_time``, which
   the load of a shared machine moves less than wall time). Target: at most
   20 us per evaluation.
2. Isolation: ``reference:random`` with the same seed in-process and
   isolated (``isolate:reference:random``, Landlock), both making as many
   evaluations (the isolated one draws from the seed the hello reply gives it,
   so the configurations differ; the work per evaluation is the same). Pairs alternate; per pair, the
   isolated run's extra wall time at 200 evaluations (the start-up: target
   under 1 s) and the extra per evaluation between 200 and 2000 evaluations
   ((extra at 2000 - extra at 200) / 1800: target under 0.2 ms). Medians of
   ``--pairs`` pairs (default 7).

Usage: ``python bench/isolation_bench.py [--pairs 7] [--in-process]`` (``--in-process``: the first
measurement alone); prints Markdown.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bat.core.problem import Budget, Problem
from bat.core.tuner import Tuner
from bat.registry import make_tuner
from bat.run.driver import run_tuner
from bat.run.targets import replay_target
from bat.tuner_adapters.sandbox import landlock_abi


@dataclass(kw_only=True)
class Listed(Tuner):
    """Proposes ``configs`` in order (no work of its own)."""

    configs: list[dict[str, Any]] = field(default_factory=list)

    def tune(self, problem: Problem, rng: np.random.Generator) -> None:
        for config in self.configs:
            if problem.exhausted:
                return
            problem.evaluate(config)


def in_process(n: int = 5000, repeats: int = 5) -> tuple[float, float]:
    """Median µs of CPU per evaluation: through Problem and trace, and the backend alone."""
    target = replay_target("gemm", "RTX_3090")
    space = target.space
    configs = [space.config(r) for r in space.sample_valid(n, np.random.default_rng(0))]
    full, bare = [], []
    for _ in range(repeats):
        start = time.process_time()
        result = run_tuner(Listed(configs=configs), target, budget=Budget(max_evals=n), check_data=False)
        full.append((time.process_time() - start) / result.evaluated * 1e6)
        start = time.process_time()
        for c in configs:
            target.backend.evaluate(c)
        bare.append((time.process_time() - start) / n * 1e6)
    return statistics.median(full), statistics.median(bare)


def isolation(pairs: int) -> dict[str, float]:
    target = replay_target("gemm", "RTX_3090")

    def wall(isolated: bool, n: int) -> tuple[float, Any]:
        tuner = make_tuner("isolate:reference:random") if isolated else "reference:random"
        start = time.perf_counter()
        r = run_tuner(tuner, target, budget=Budget(max_evals=n), seed=11, check_data=False)
        return time.perf_counter() - start, r.trace

    starts, per_eval = [], []
    for _ in range(pairs):
        (i200, t1), (p200, t2) = wall(True, 200), wall(False, 200)
        (i2k, t3), (p2k, t4) = wall(True, 2000), wall(False, 2000)
        assert len(t1) == len(t2) and len(t3) == len(t4), "isolated and in-process runs differ in length"
        starts.append(i200 - p200)
        per_eval.append(((i2k - p2k) - (i200 - p200)) / 1800 * 1e3)
    return {"start_s": statistics.median(starts), "per_eval_ms": statistics.median(per_eval),
            "start_all": starts, "per_eval_all": per_eval}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=7)
    parser.add_argument("--in-process", action="store_true", help="the in-process replay measurement alone")
    args = parser.parse_args()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; "
          f"Landlock ABI {landlock_abi()}\n")
    full, bare = in_process()
    print("| in-process replay, GEMM RTX_3090 | us of CPU per evaluation |\n|---|---|")
    print(f"| Problem + replay + trace (5000 evaluations, median of 5) | {full:.1f} |")
    print(f"| peer: the replay backend's evaluate alone | {bare:.1f} |\n")
    if args.in_process:
        return
    iso = isolation(args.pairs)
    print(f"| isolation (reference:random, median of {args.pairs} pairs) | value | target |\n|---|---|---|")
    print(f"| extra wall time of a 200-evaluation run (start-up) | {iso['start_s']:.3f} s | < 1 s |")
    print(f"| extra per evaluation (200 to 2000 evaluations) | {iso['per_eval_ms']:.3f} ms | < 0.2 ms |")
    print(f"\npairs: start-up {[round(x, 3) for x in iso['start_all']]}, "
          f"per evaluation {[round(x, 3) for x in iso['per_eval_all']]}")


if __name__ == "__main__":
    main()
